"""The ``apprise`` channel, sending through apprise itself to local stand-ins of its services
(its json:// sink, ntfy, Mattermost, Gotify) on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest
from deliverkit import HookServer, HtmlCollector, Reply, sample_digest
from test_injection import SLACK_CONTROLS, hostile_digest

from conftest import REPO, run_watcher
from helpers import run_cli
from watcher.deliver import channel_config
from watcher.deliver import DeliveryContext, make_channel
from watcher.deliver.apprise_channel import messages, pack
from watcher.errors import DeliveryError
from watcher.util.text import shorten
from watcher.present.tldr import tldr_of

apprise = pytest.importorskip("apprise")
ENV = "WATCHER_TEST_APPRISE_URLS"


def channel():
    return make_channel(channel_config(name="phone", type="apprise", urls_env=ENV), DeliveryContext())


def body_of(request) -> str:
    data = request["json"]
    return data.get("message") or data.get("text") or ""


@pytest.mark.slow  # 27 papers through four apprise services, each in many messages apprise sends in turn
def test_every_paper_reaches_every_service_within_its_limits(monkeypatch):
    digest = sample_digest(25, updated=2)
    with HookServer(path="/") as sink, HookServer(path="/") as ntfy, HookServer(path="/") as mm, \
            HookServer(path="/") as gotify:
        # apprise's own 4 s timeouts (cto, rto) ran out once on a loaded two-core machine:
        # these servers answer at once, so a longer wait only keeps load from failing the test
        slow_ok = "cto=30&rto=30"
        urls = [f"json://127.0.0.1:{sink.httpd.server_address[1]}/hook?{slow_ok}",
                f"ntfy://127.0.0.1:{ntfy.httpd.server_address[1]}/watcher-topic?{slow_ok}",
                f"mmost://127.0.0.1:{mm.httpd.server_address[1]}/mattermosttoken?{slow_ok}",
                f"gotify://127.0.0.1:{gotify.httpd.server_address[1]}/gotifytoken?{slow_ok}"]
        monkeypatch.setenv(ENV, " ".join(urls[:2]) + ",\n" + " ".join(urls[2:]))
        channel().send(digest, {})
        limits = {"json": 32768, "ntfy": 7800, "mmost": 4000, "gotify": 32768}
        for server, (service, limit) in zip((sink, ntfy, mm, gotify), limits.items()):
            bodies = [body_of(r) for r in server.requests]
            assert bodies, service
            assert all(len(b) <= limit for b in bodies), (service, [len(b) for b in bodies])
            text = "\n".join(bodies)
            for m in digest.matches:  # every paper, whole, with its TL;DR
                assert shorten(m.paper.title, 300) in text, (service, m.paper.title)
                assert tldr_of(m) in text
            for m in digest.updated:
                assert shorten(m.paper.title, 200) in text
        assert len(mm.requests) > 1  # 25 papers do not fit Mattermost's 4,000 characters
        titles = [r["json"]["title"] for r in ntfy.requests]
        assert titles[0].startswith("LLM-RL — 2025-04-12: 25 new papers")
        parts = [body_of(r) for r in mm.requests]
        assert all(p.startswith("LLM-RL — 2025-04-12: 25 new papers (part ") for p in parts)


def in_each_markup(monkeypatch, digest) -> tuple[str, str, str]:
    """``digest`` sent through apprise's json:// sink as text, HTML and Markdown."""
    with HookServer(path="/") as sink:
        port = sink.httpd.server_address[1]
        monkeypatch.setenv(ENV, f"json://127.0.0.1:{port}/t json://127.0.0.1:{port}/h?format=html "
                                f"json://127.0.0.1:{port}/m?format=markdown")
        channel().send(digest, {})
        by_path = {}
        for r in sink.requests:
            by_path.setdefault(r["path"].split("?")[0], []).append(r["json"]["message"])
    return tuple("\n".join(by_path[p]) for p in ("/t", "/h", "/m"))


def test_markup_follows_the_service_and_hostile_fields_stay_inert(monkeypatch):
    digest = hostile_digest()
    text, html, markdown = in_each_markup(monkeypatch, digest)
    for out in (text, html, markdown):
        for control in SLACK_CONTROLS:
            assert control not in out, control
        assert not re.search(r"(?<![\w&])@(channel|here|everyone)\b", out)
        assert "\x00" not in out and "\u202e" not in out
        assert "JINJA-RAN" in out  # shown as typed, never run
    assert "<script>alert(1)</script>" in text and "**[" not in text
    parser = HtmlCollector()
    parser.feed(html)
    assert set(parser.tags) <= {"b", "a", "br", "i"}, set(parser.tags)
    for name, value in parser.attrs:
        assert name == "href" and value.startswith("https://arxiv.org/abs/"), (name, value)
    assert "<script>alert(1)</script>" in "".join(parser.text)
    assert "<script" not in markdown and "**[" in markdown
    assert not re.search(r"(?<!\\)\]\((?!https?://)", markdown)


def test_one_failing_url_fails_the_channel_the_others_still_get_it(monkeypatch):
    with HookServer(path="/") as good, HookServer(path="/", default=Reply(500, "boom")) as bad:
        secret_path = "/SECRET-TOPIC-4242"
        monkeypatch.setenv(ENV, f"json://127.0.0.1:{good.httpd.server_address[1]}/ok "
                                f"json://127.0.0.1:{bad.httpd.server_address[1]}{secret_path}")
        with pytest.raises(DeliveryError) as e:
            channel().send(sample_digest(3), {})
        message = str(e.value)
        assert "channel phone: URL 2 of 2 (json://…)" in message
        assert "the other 1 URL got it and will get it again on the next run" in message
        assert "SECRET-TOPIC" not in message and str(bad.httpd.server_address[1]) not in message
        assert len(good.requests) == 1 and len(bad.requests) == 1


def test_pack_keeps_blocks_whole_and_messages_within_the_limit():
    assert pack(["aaa", "bbb", "ccc"], 8, "\n\n") == ["aaa\n\nbbb", "ccc"]
    assert pack(["a" * 20, "b"], 8, "\n\n") == ["a" * 20, "b"]  # too long alone: apprise splits
    for fmt in ("text", "markdown", "html"):
        parts = messages(sample_digest(30, updated=0), fmt, 2000, 0)
        assert len(parts) > 3 and all(len(b) + len(t) + 4 <= 2000 for t, b in parts)


CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[profile.llm-rl]
title = "LLM-RL"
query = '"reinforcement learning" OR RLHF OR GRPO'
max_papers = 5

[digest.daily]
profiles = ["llm-rl"]
schedule = "30 21 * * sun-thu"
channels = ["phone"]

[channel.phone]
type = "apprise"
urls_env = "WATCHER_TEST_APPRISE_URLS"
"""


def test_check_refuses_unknown_services_and_malformed_urls_masked(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    cfg = str(tmp_path / "config.toml")
    ok = run_cli("--config", cfg, "check", env={ENV: "json://127.0.0.1:9/x ntfy://host/topic"})
    assert ok.returncode == 0, ok.stderr
    bad = run_cli("--config", cfg, "check",
                  env={ENV: "json://127.0.0.1:9/x nosuchservice://tok3n-s3cret/x tgram://tok3n-s3cret"})
    assert bad.returncode == 2
    err = bad.stderr.decode()
    assert "channel.phone.urls_env: URL 2 of 3 (nosuchservice://…) names an unknown service" in err
    assert "channel.phone.urls_env: URL 3 of 3 (tgram://…) is malformed" in err
    assert "tok3n" not in err + bad.stdout.decode() and "Traceback" not in err
    unset = run_cli("--config", cfg, "check")
    assert unset.returncode == 2 and b"environment variable WATCHER_TEST_APPRISE_URLS is not set" in unset.stderr


def test_check_says_when_apprise_is_not_installed(tmp_path):
    shim = tmp_path / "shim" / "apprise"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('No module named apprise')\n")
    (tmp_path / "config.toml").write_text(CONFIG)
    result = run_watcher("--config", str(tmp_path / "config.toml"), "check",  # a process: the shim hides apprise
                         env={ENV: "json://127.0.0.1:9/x", "PYTHONPATH": f"{shim.parent}:{REPO}"})
    assert result.returncode == 2
    assert b"channel.phone.type: apprise is not installed; install it beside watcher with: " \
           b"pip install 'apprise>=1.9'" in result.stderr


def test_once_sample_delivers_through_apprise_once(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    with HookServer(path="/") as sink:
        env = {ENV: f"json://127.0.0.1:{sink.httpd.server_address[1]}/watcher"}
        first = run_cli("--config", str(tmp_path / "config.toml"), "once", "--sample", env=env)
        assert first.returncode == 0, first.stderr
        assert len(sink.requests) == 1 and sink.requests[0]["json"]["title"].endswith("5 new papers")
        assert sink.requests[0]["json"]["message"].count("TL;DR: ") == 5
        second = run_cli("--config", str(tmp_path / "config.toml"), "once", "--sample", env=env)
        assert second.returncode == 0 and len(sink.requests) == 1  # the ledger: nothing twice
    assert json.dumps(env[ENV]).strip('"') not in (first.stderr + second.stderr).decode()


def test_log_lines_never_show_an_apprise_url_or_the_summarizers_key(tmp_path, monkeypatch):
    import logging

    from watcher.util import logs
    from watcher.config import load_config

    (tmp_path / "config.toml").write_text(CONFIG + """
[summarizer]
type = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key_env = "WATCHER_TEST_LLM_KEY"
""")
    monkeypatch.setenv(ENV, "tgram://123456:SECRETBOT/42, ntfy://ntfy.sh/my-secret-topic")
    monkeypatch.setenv("WATCHER_TEST_LLM_KEY", "sk-very-secret")
    secrets = logs.SecretFilter(logs.secret_values(load_config(tmp_path / "config.toml")))
    for text in ("posting to ntfy://ntfy.sh/my-secret-topic failed", "key sk-very-secret"):
        record = logging.LogRecord("x", logging.INFO, __file__, 1, text, None, None)
        secrets.filter(record)
        assert "secret" not in record.getMessage(), record.getMessage()


def test_config_wants_urls_env_as_a_variable_name(write_config):
    from watcher.config import load_config
    from watcher.errors import ConfigError

    base = CONFIG.replace('urls_env = "WATCHER_TEST_APPRISE_URLS"\n', "")
    with pytest.raises(ConfigError, match="channel.phone.urls_env: required key is missing"):
        load_config(write_config(base))
    with pytest.raises(ConfigError, match="channel.phone.urls_env: must name an environment variable"):
        load_config(write_config(base + 'urls_env = "tgram://x/y"\n'))


def test_rating_links_reach_every_markup(monkeypatch):
    """A chat or push reader can rate a paper only through the links the message carries."""
    from watcher.present.links import Links

    digest = sample_digest(3, updated=0)
    digest.links = Links("https://papers.example.org", "s3cret")
    text, html, markdown = in_each_markup(monkeypatch, digest)
    for m in digest.matches:
        urls = digest.links.paper(m)
        assert tldr_of(m) in text
        for action, label in (("up", "More like this"), ("down", "Less like this"), ("save", "Save")):
            assert f"{label}: {urls[action]}" in text
            assert f'<a href="{urls[action]}">{label}</a>' in html
            assert f"[{label}]({urls[action]})" in markdown
