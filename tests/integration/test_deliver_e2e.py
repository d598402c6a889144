"""End to end: ``watcher once --sample`` (a subprocess, as cron would run it) delivering to a real
SMTP server, a local Slack stand-in and files; the ledger keeps every paper to once per channel,
and a failing Slack neither stops the e-mail nor loses Slack's papers."""

from __future__ import annotations

import re

from deliverkit import HookServer, MailServer, Reply
from helpers import run_cli_text

CONFIG = """
[watcher]
database = "watcher.db"
timezone = "Europe/Berlin"

[profile.llm-rl]
title = "LLM-RL"
query = '"reinforcement learning" OR RLHF OR GRPO'
max_papers = 40

[digest.daily]
profiles = ["llm-rl"]
schedule = "30 21 * * sun-thu"
formats = ["text", "html", "markdown"]
channels = ["me", "lab", "archive"]
lookback = "3d"

[channel.me]
type = "email"
host = "127.0.0.1"
port = {smtp_port}
security = "none"
from = "watcher <watcher@example.org>"
to = ["me@example.org", "lab@example.org"]
timeout = 5

[channel.lab]
type = "slack"
webhook_url_env = "TEST_E2E_SLACK"
timeout = 5

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"
"""

ABS = re.compile(r"https://arxiv\.org/abs/([\w./-]+?)[|\"]")


def setup(tmp_path, smtp, hook):
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.replace("{smtp_port}", str(smtp.port)).replace("{{", "{").replace("}}", "}"))
    return path, {"TEST_E2E_SLACK": hook.url}


def once(path, env, *opts):
    return run_cli_text("--config", str(path), *opts, "once", "--sample", cwd=path.parent, env=env)


def mailed_ids(smtp) -> set[str]:
    html = smtp.received[-1].message.get_payload()[1].get_content()
    return set(ABS.findall(html))


def slack_ids(payloads) -> set[str]:
    return {m for p in payloads for b in p["blocks"] if b["type"] == "section"
            for m in ABS.findall(b["text"]["text"] + '"')}


def test_once_delivers_everywhere_then_nothing_twice(tmp_path):
    with MailServer() as smtp, HookServer() as hook:
        path, env = setup(tmp_path, smtp, hook)
        first = once(path, env)
        assert first.returncode == 0, first.stderr
        assert len(smtp.received) == 1 and smtp.received[0].rcpt_tos == ["me@example.org", "lab@example.org"]
        subject = str(smtp.received[0].message["Subject"])
        n = int(re.search(r"(\d+) new papers", subject).group(1))
        assert n > 5
        assert hook.payloads and f"{n} new papers" in hook.payloads[0]["text"]
        assert slack_ids(hook.payloads) == mailed_ids(smtp)
        files = sorted(p.name for p in (tmp_path / "digests").iterdir())
        assert files == ["daily-2025-04-12.html", "daily-2025-04-12.md", "daily-2025-04-12.txt"]
        text = (tmp_path / "digests" / "daily-2025-04-12.txt").read_text()
        assert text.startswith("LLM-RL - 2025-04-12\n\n") and text.count("\nAuthors:") == n

        posts = len(hook.requests)
        second = once(path, env)
        assert second.returncode == 0, second.stderr
        assert len(smtp.received) == 1 and len(hook.requests) == posts
        assert len(list((tmp_path / "digests").iterdir())) == 3


def test_slack_failing_does_not_stop_email_and_loses_nothing(tmp_path):
    with MailServer() as smtp, HookServer(default=Reply(500, "internal_error", {"Retry-After": "0"})) as hook:
        path, env = setup(tmp_path, smtp, hook)
        failed = once(path, env, "--log-level", "debug")  # httpx logs every request URL
        assert failed.returncode == 1
        assert "channel lab failed" in failed.stderr and "HTTP 500: internal_error" in failed.stderr
        assert "SECRETTOKEN" not in failed.stderr + failed.stdout
        assert "HTTP Request: POST ***" in failed.stderr
        assert len(smtp.received) == 1  # e-mail went out regardless
        mailed = mailed_ids(smtp)
        n = re.search(r"(\d+) new papers", str(smtp.received[0].message["Subject"])).group(1)
        attempts = len(hook.requests)

        hook.default = Reply(200, "ok")
        retried = once(path, env)
        assert retried.returncode == 0, retried.stderr
        assert len(smtp.received) == 1  # nothing new for e-mail
        assert slack_ids(hook.payloads[attempts:]) == mailed  # Slack gets exactly what it missed
        assert f"{n} new papers" in hook.payloads[attempts]["text"]  # part 1 of the whole digest, or all of it

        posts = len(hook.requests)
        third = once(path, env)
        assert third.returncode == 0 and len(hook.requests) == posts and len(smtp.received) == 1


def test_test_deliver_every_channel_type(tmp_path):
    with MailServer() as smtp, HookServer() as hook:
        path, env = setup(tmp_path, smtp, hook)
        for name in ("me", "lab", "archive"):
            r = run_cli_text("--config", str(path), "test-deliver", name, cwd=tmp_path, env=env)
            assert r.returncode == 0, r.stderr
        assert "3 new papers" in str(smtp.received[0].message["Subject"])
        assert "2504.07615" in str(hook.payloads[0])
        assert (tmp_path / "digests").is_dir()
        r = run_cli_text("--config", str(path), "test-deliver", "lab", cwd=tmp_path,
                         env={"TEST_E2E_SLACK": ""})
        assert r.returncode == 1 and "TEST_E2E_SLACK" in r.stderr
