"""An e-mail over ``max_bytes`` records only what it showed (docs/email.md): ``watcher once`` with 700
recent papers against a real aiosmtpd server; the ledger's rows are exactly the papers present in
the messages the server accepted, every message under the budget."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

from deliverkit import MailServer, ledger
from helpers import run_cli_text

CONFIG = """
[watcher]
database = "watcher.db"

[source.feed]
type = "listing"
path = "papers.jsonl"

[profile.rl]
title = "RL"
query = '"reinforcement learning"'
max_papers = {max_papers}

[digest.daily]
profiles = ["rl"]
schedule = "0 9 * * *"
channels = ["mail"]

[channel.mail]
type = "email"
host = "127.0.0.1"
port = {port}
security = "none"
from = "watcher@example.org"
to = ["me@example.org"]
timeout = 5
{budget}
"""

ABS = re.compile(r"https://arxiv\.org/abs/(2601\.\d{5})")


def write_setup(tmp_path, port: int, max_papers: int, max_bytes: int | None = None, n: int = 700):
    """700 distinct papers submitted in the last day, each matching the profile."""
    now = datetime.now(timezone.utc)
    lines = []
    for i in range(n):
        lines.append(json.dumps({
            "arxiv_id": f"2601.{10000 + i:05d}", "version": 1,
            "title": f"Reinforcement learning study {i:03d} of policy gradients on task {i:03d}",
            "authors": [f"Author {i} One", f"Author {i} Two"],
            "abstract": (f"Paper {i:03d}. We study reinforcement learning for language models. "
                         + "The method improves sample efficiency and stability. " * 15),
            "published": (now - timedelta(hours=1, minutes=i)).isoformat(),
            "categories": ["cs.LG"], "primary_category": "cs.LG"}))
    (tmp_path / "papers.jsonl").write_text("\n".join(lines) + "\n")
    budget = f"max_bytes = {max_bytes}" if max_bytes else ""
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(max_papers=max_papers, port=port, budget=budget))
    return config


def shown(received) -> list[str]:
    """The papers each accepted message shows in BOTH parts: the text part by title (a full
    entry) or link (a listed title), the HTML part by link; every paper once in all messages."""
    out = []
    for got in received:
        text, html = (p.get_content() for p in got.message.get_payload())
        in_html = ABS.findall(html)
        for ident in dict.fromkeys(in_html):
            i = int(ident[5:]) - 10000
            assert f"Reinforcement learning study {i:03d} " in text or ident in text, ident
            out.append(ident)
        assert "… and" not in text and "more paper" not in html
    assert len(out) == len(set(out)), "a paper shown twice"
    return sorted(out)


def once(config):
    return run_cli_text("--config", str(config), "once", cwd=config.parent)


def test_small_budget_sends_every_recorded_paper(tmp_path):
    with MailServer() as smtp:
        config = write_setup(tmp_path, smtp.port, max_papers=30, max_bytes=10_000)
        r = once(config)
        assert r.returncode == 0, r.stderr
        assert len(smtp.received) >= 2  # 30 papers' titles do not fit in 10,000 bytes
        assert all(len(got.data) < 10_000 for got in smtp.received)
        subjects = [str(got.message["Subject"]) for got in smtp.received]
        assert all(f"(part {i} of {len(subjects)})" in s for i, s in enumerate(subjects, 1))
        recorded = ledger(tmp_path)
        assert len(recorded) == 30 and shown(smtp.received) == recorded
        # the best papers are the ones in full: part 1 opens with them (QA: part 1 was all
        # titles while the last part showed lower-ranked papers in full)
        order, full = [], []
        for got in smtp.received:
            text = got.message.get_payload()[0].get_content()
            for ident in dict.fromkeys(ABS.findall(got.message.get_payload()[1].get_content())):
                order.append(ident)
                if f"Paper {int(ident[5:]) - 10000:03d}. We study" in text:  # its abstract: in full
                    full.append(ident)
        assert full and full == order[:len(full)], (full, order)
        again = once(config)
        assert again.returncode == 0 and len(smtp.received) == len(subjects)


def test_a_thousand_papers_default_budget_sends_all_700(tmp_path):
    with MailServer() as smtp:
        config = write_setup(tmp_path, smtp.port, max_papers=1000)
        r = once(config)
        assert r.returncode == 0, r.stderr
        assert all(len(got.data) < 100_000 for got in smtp.received)
        recorded = ledger(tmp_path)
        assert len(recorded) == 700 and shown(smtp.received) == recorded


def test_a_refused_later_part_records_only_the_parts_accepted(tmp_path):
    with MailServer(refuse_data={2}) as smtp:
        config = write_setup(tmp_path, smtp.port, max_papers=30, max_bytes=10_000)
        r = once(config)
        assert r.returncode == 1
        assert "451" in r.stderr and "part 1 was sent and recorded" in r.stderr
        assert len(smtp.received) == 1
        first = ledger(tmp_path)
        assert 0 < len(first) < 30 and shown(smtp.received) == first
        retry = once(config)  # the refused part's papers come again; part 1's never do
        assert retry.returncode == 0, retry.stderr
        assert ledger(tmp_path) == shown(smtp.received)
        first_pick = [f"2601.{10000 + i}" for i in range(30)]  # the 30 newest
        assert set(first_pick) <= set(ledger(tmp_path))
        assert len(ledger(tmp_path)) == len(first) + 30  # the retry is a digest of 30 again


def test_max_bytes_above_100_kb_is_a_config_error(tmp_path):
    config = write_setup(tmp_path, 2525, max_papers=30, max_bytes=200_000, n=1)
    r = run_cli_text("--config", str(config), "check", cwd=tmp_path)
    assert r.returncode == 2
    assert "channel.mail.max_bytes: must be between 10000 and 100000, got 200000" in r.stderr


def test_the_channel_holds_100_kb_whatever_max_bytes_says():
    from dataclasses import replace

    from deliverkit import sample_digest

    from watcher.deliver import channel_config
    from watcher.deliver import DeliveryContext, make_channel
    from watcher.present.render import render

    cfg = channel_config(name="mail", type="email", host="127.0.0.1", port=1, security="none",
                        sender="w@example.org", to=("me@example.org",), max_bytes=10**7)
    digest = sample_digest(30, updated=0)
    for m in digest.matches:
        m.paper.abstract = (m.paper.abstract + " ") * 6
    channel = make_channel(replace(cfg), DeliveryContext())
    messages = channel.messages(digest, {f: render(digest, f) for f in ("text", "html")})
    assert all(len(data) < 100_000 for data, _ in messages)
    assert [p for _, papers in messages for p in papers] == digest.papers


def sample_mail(folder, secret: str | None) -> bytes:
    """The sample digest (``watcher once --sample``, the shipped config) as one e-mail through a
    real SMTP server, with rating links when ``secret`` is given."""
    from conftest import REPO
    from helpers import mailed_links_config

    LINKS_CONFIG = mailed_links_config("{port}")

    folder.mkdir()
    config = (REPO / "config.toml").read_text().replace('channels = ["archive"]', 'channels = ["mail"]')
    mail_and_web = LINKS_CONFIG[LINKS_CONFIG.index("[channel.mail]"):]  # the links test's mail and [web]
    with MailServer() as server:
        (folder / "config.toml").write_text(config + "\n" + mail_and_web.replace("{port}", str(server.port)))
        out = run_cli_text("once", "--sample", cwd=folder, env={"WATCHER_TEST_SECRET": secret or ""})
        assert out.returncode == (0 if secret else 1), out.stderr  # 1: delivered without its links
    [mail] = server.received
    return mail.data


def test_the_sample_mail_with_links_shows_all_thirty_and_links_cost_at_most_a_tenth(tmp_path):
    plain = sample_mail(tmp_path / "plain", None)
    linked = sample_mail(tmp_path / "linked", "a secret for the links")
    assert b"/r/" not in plain and b"/r/" in linked
    for data in (plain, linked):
        assert b"More papers" not in data  # all 30 in full
        assert data.count(b"TL;DR: ") == 30
    share = (len(linked) - len(plain)) / len(linked)
    print(f"sample e-mail: {len(plain)} bytes without links, {len(linked)} with; links {share:.1%}")
    assert share <= 0.10, share
