"""The slack and webhook channels against a real local HTTP server: payloads, retries (429 with
Retry-After, 5xx), refusals with the server's reason, hangs, splitting, and the URL kept secret."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import pytest
from deliverkit import HookServer, Reply, free_port, injection_digest, sample_digest

from watcher.deliver import channel_config
from watcher.deliver import DeliveryContext, httppost, make_channel
from watcher.deliver.slack import MAX_BLOCKS, MAX_SECTION, split_messages
from watcher.errors import DeliveryError
from watcher.present.render import render


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch):
    monkeypatch.setattr(httppost, "BACKOFF", (0.0, 0.0, 0.0))


def slack(monkeypatch, url: str, **kw):
    monkeypatch.setenv("TEST_SLACK_WEBHOOK", url)
    cfg = channel_config(**{"name": "lab", "type": "slack", "webhook_url_env": "TEST_SLACK_WEBHOOK", "timeout": 2.0, **kw})
    return make_channel(cfg, DeliveryContext(user_agent="watcher-test"))


def webhook(url: str | None = None, **kw):
    cfg = channel_config(**{"name": "hook", "type": "webhook", "url": url, "timeout": 2.0, **kw})
    return make_channel(cfg, DeliveryContext(user_agent="watcher-test"))


def send(ch, digest):
    ch.send(digest, {f: render(digest, f) for f in ch.formats()})


# --- slack -------------------------------------------------------------------------------------

def test_slack_posts_the_block_kit_message(monkeypatch):
    digest = sample_digest(4, updated=1)
    with HookServer() as server:
        send(slack(monkeypatch, server.url), digest)
    assert len(server.requests) == 1
    req = server.requests[0]
    assert req["path"] == server.path and req["headers"]["User-Agent"] == "watcher-test"
    assert req["json"] == json.loads(render(digest, "slack"))


def test_slack_429_honours_retry_after(monkeypatch):
    with HookServer([Reply(429, "rate_limited", {"Retry-After": "1"})]) as server:
        send(slack(monkeypatch, server.url), sample_digest(2))
    first, second = server.requests
    assert second["json"] == first["json"]
    assert second["time"] - first["time"] >= 0.9


def test_slack_5xx_is_retried(monkeypatch):
    with HookServer([Reply(500, "oops"), Reply(503, "busy")]) as server:
        send(slack(monkeypatch, server.url), sample_digest(2))
    assert len(server.requests) == 3


def test_slack_gives_up_after_repeated_5xx(monkeypatch):
    with HookServer(default=Reply(500, "internal_error")) as server:
        with pytest.raises(DeliveryError, match="failed 4 times, last HTTP 500: internal_error"):
            send(slack(monkeypatch, server.url), sample_digest(2))
    assert len(server.requests) == httppost.ATTEMPTS


def test_slack_400_keeps_slacks_reason_and_hides_the_url(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="httpx")  # watcher shows httpx's lines only at debug
    with HookServer([Reply(400, "invalid_blocks")]) as server:
        with pytest.raises(DeliveryError, match="HTTP 400: invalid_blocks") as e:
            send(slack(monkeypatch, server.url), sample_digest(2))
    assert len(server.requests) == 1  # a 4xx is not retried
    assert "SECRETTOKEN" not in str(e.value) and str(server.httpd.server_address[1]) not in str(e.value)
    assert "SECRETTOKEN" not in caplog.text
    assert "***" in caplog.text  # httpx logged the request, masked


def test_slack_hang_times_out_without_retry(monkeypatch):
    with HookServer([Reply(hang=3)]) as server:
        with pytest.raises(DeliveryError, match="timed out waiting for an answer"):
            send(slack(monkeypatch, server.url, timeout=0.5), sample_digest(1))
    assert len(server.requests) == 1


def test_slack_nothing_listening(monkeypatch):
    url = f"http://127.0.0.1:{free_port()}/services/SECRETTOKEN"
    with pytest.raises(DeliveryError, match="cannot connect") as e:
        send(slack(monkeypatch, url), sample_digest(1))
    assert "SECRETTOKEN" not in str(e.value)


def test_slack_missing_variable_is_named(monkeypatch):
    ch = slack(monkeypatch, "x")
    monkeypatch.delenv("TEST_SLACK_WEBHOOK")
    with pytest.raises(DeliveryError, match="TEST_SLACK_WEBHOOK"):
        send(ch, sample_digest(1))


def test_slack_splits_a_long_digest_in_order(monkeypatch):
    digest = sample_digest(30, updated=0)
    digest.matches *= 3  # 90 papers: more than 50 blocks
    with HookServer() as server:
        send(slack(monkeypatch, server.url), digest)
    messages = server.payloads
    n = len(messages)
    assert n >= 2 and all(len(m["blocks"]) <= MAX_BLOCKS for m in messages)
    assert f"(part 2 of {n})" in messages[1]["text"]
    assert f"continued, part 2 of {n}" in messages[1]["blocks"][0]["elements"][0]["text"]
    whole = json.loads(render(digest, "slack"))["blocks"]
    sent = [b for m in messages for b in m["blocks"] if b["type"] != "context" or "continued" not in json.dumps(b)]
    assert sent == whole  # every block once, in order


def test_a_failing_later_part_fails_the_digest_and_says_so(monkeypatch):
    """Part 2 refused: the papers part 1 showed are the ones to record (the next run posts the
    rest, not part 1 again: QA saw it posted twice)."""
    from watcher.errors import PartialDelivery

    digest = sample_digest(30, updated=0)
    digest.matches = [replace(m, paper=replace(m.paper, title=m.paper.title + " " + "x" * 900, arxiv_id=f"2504.{9000 + k}"))
                      for k, m in enumerate(digest.matches * 2)]  # 60 papers of over 1,000 characters: 2+ parts
    with HookServer([Reply(200), Reply(400, "invalid_blocks")]) as server:
        with pytest.raises(PartialDelivery, match=r"part 2 of \d.*invalid_blocks; part 1 was posted and "
                                                  r"recorded, the next run posts the rest") as e:
            send(slack(monkeypatch, server.url), digest)
    first = server.payloads[0]["blocks"]
    shown = [b["block_id"].removeprefix("paper:") for b in first if b.get("block_id", "").startswith("paper:")]
    assert shown and [p.key for p in e.value.delivered] == shown  # exactly part 1's papers, in order
    assert len(shown) < len(digest.matches)


def test_long_sections_are_split_at_3000_characters():
    text = "\n".join(f"line {i} " + "word " * 60 for i in range(40))
    block = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
    one_line = {"type": "section", "text": {"type": "mrkdwn", "text": "<https://x.org|a b c> " * 400}}
    messages = split_messages({"text": "t", "blocks": [block, one_line]})
    sections = [b["text"]["text"] for m in messages for b in m["blocks"]]
    assert all(len(s) <= MAX_SECTION for s in sections)
    assert "\n".join(sections[: len(sections) - 3]).replace("\n", "") in text.replace("\n", "")
    assert all(s.count("<") == s.count(">") for s in sections)  # no link cut in half


def test_a_split_digest_is_shared_about_equally_between_its_messages():
    """Thirty papers over Slack's 30,000 characters take two messages, about half each, not
    29 and 1 (nor more messages than needed); order kept, every limit held."""
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": f"paper {i} " + "x" * 1100}}
              for i in range(30)]
    messages = split_messages({"text": "t", "blocks": blocks})
    assert len(messages) == 2
    papers = [[b for b in m["blocks"] if b["type"] == "section"] for m in messages]
    assert [len(p) for p in papers] == [15, 15]
    assert [b for p in papers for b in p] == blocks
    assert all(len(json.dumps(m["blocks"])) <= 30000 and len(m["blocks"]) <= MAX_BLOCKS for m in messages)
    many = split_messages({"text": "t", "blocks": [{"type": "divider"}] * 120})  # blocks, not characters
    assert [len(m["blocks"]) for m in many] == [40, 41, 41]  # 40 each, the later with "continued"


def test_slack_injection_is_inert_on_the_wire(monkeypatch):
    with HookServer() as server:
        send(slack(monkeypatch, server.url), injection_digest())
    wire = json.dumps(server.payloads)
    assert "<!channel>" not in wire and "<@U123>" not in wire and "49" not in wire


def test_a_broken_slack_template_is_a_delivery_error(monkeypatch):
    with pytest.raises(DeliveryError, match="Block Kit JSON"):
        slack(monkeypatch, "http://127.0.0.1:1/x").send(sample_digest(1), {"slack": "not json"})


# --- webhook -----------------------------------------------------------------------------------

def test_webhook_posts_the_digest_as_json():
    digest = sample_digest(3, updated=1)
    with HookServer(default=Reply(204, "")) as server:
        send(webhook(server.url), digest)
    body = server.payloads[0]
    assert body["digest"] == "daily" and body["date"] == "2025-04-12" and body["count"] == 3
    assert [p["arxiv_id"] for p in body["papers"]] == ["2504.07600", "2504.07601", "2504.07602"]
    assert body["papers"][0]["reasons"] and body["updated"][0]["arxiv_id"] == "2504.07603"


def test_webhook_url_from_env_and_retry(monkeypatch):
    with HookServer([Reply(502, "bad gateway")]) as server:
        monkeypatch.setenv("TEST_HOOK_URL", server.url)
        send(webhook(url=None, url_env="TEST_HOOK_URL"), sample_digest(1))
    assert len(server.requests) == 2


def test_webhook_refusal_and_long_retry_after():
    with HookServer([Reply(422, "unprocessable"), Reply(429, "", {"Retry-After": "3600"})]) as server:
        with pytest.raises(DeliveryError, match="HTTP 422: unprocessable"):
            send(webhook(server.url), sample_digest(1))
        with pytest.raises(DeliveryError, match="wait 3600s"):
            send(webhook(server.url), sample_digest(1))


def test_a_refused_later_slack_part_records_the_papers_posted_and_the_next_run_posts_the_rest(tmp_path):
    """``watcher once`` with 60 papers (two Slack messages): the webhook refuses part 2. The
    papers part 1 showed are recorded, and the next run posts only the rest; no paper is posted
    twice (QA: part 1 was posted again with the whole digest)."""
    import re as _re

    from deliverkit import ledger
    from helpers import run_cli_text
    from test_email_budget import write_setup

    config = write_setup(tmp_path, 1, max_papers=60, n=60)
    text = config.read_text().replace('channels = ["mail"]', 'channels = ["lab"]')
    text = text[:text.index("[channel.mail]")] + '[channel.lab]\ntype = "slack"\nwebhook_url_env = "TEST_SLACK_PARTS"\ntimeout = 5\n'
    config.write_text(text)

    def posted(payloads) -> list[str]:
        return [b["block_id"].removeprefix("paper:") for p in payloads for b in p["blocks"]
                if b.get("block_id", "").startswith("paper:")]

    with HookServer([Reply(200), Reply(400, "invalid_blocks")]) as hook:
        env = {"TEST_SLACK_PARTS": hook.url}
        first = run_cli_text("--config", str(config), "once", cwd=tmp_path, env=env)
        assert first.returncode == 1 and "part 1 was posted and recorded" in first.stderr, first.stderr
        part1 = posted(hook.payloads[:1])
        assert 0 < len(part1) < 60 and ledger(tmp_path) == sorted(part1)
        hook.default = Reply(200, "ok")
        again = run_cli_text("--config", str(config), "once", cwd=tmp_path, env=env)
        assert again.returncode == 0, again.stderr
        every = part1 + posted(hook.payloads[2:])
        assert len(every) == len(set(every)) == 60  # each paper posted once, all of them
        assert ledger(tmp_path) == sorted(every)
        assert all(_re.fullmatch(r"2601\.\d{5}", k) for k in every)
