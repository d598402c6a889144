"""``kill -9`` in the middle of a cycle, then a restart: every matching paper is delivered exactly
once in the end (docs/design.md "Nothing lost, nothing twice").

The kill lands at a known step, detected from outside the process:

* **fetch** — the listing server has the request and holds it;
* **store** — the listing (20,000 papers) was served and the database's write-ahead log grows
  by more than a megabyte: the batch's transaction is being written, not committed;
* **delivery** — the Slack stand-in has the post and holds it without taking it.

Each is run for ``watcher once`` (cron) and ``watcher run`` (the daemon, which runs a digest
that never ran at once on start).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from deliverkit import REPO, Reply as HookReply

from httpserver import Reply, server  # noqa: F401  (the fixture)
from faultkit import SlackStandIn, assert_exactly_once
from watcher.formats import text as text_format
from watcher.models import Paper

pytestmark = pytest.mark.slow  # real watcher processes against faulty servers: the full suite (CI) runs it, not the inner loop

NOW = datetime.now(timezone.utc)
MARKED = [f"Quasar paper {i:02d}" for i in range(20)]  # the papers the profile selects

CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[source.lab]
type = "listing"
url = "{url}"
timeout = 20

[profile.quasar]
title = "Quasars"
query = 'ti:quasar'
max_papers = 100

[digest.daily]
profiles = ["quasar"]
every = "1h"
formats = ["json"]
channels = ["lab", "archive"]

[channel.lab]
type = "slack"
webhook_url_env = "KILL_SLACK_WEBHOOK"
timeout = 20

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"
"""


def listing(n: int) -> bytes:
    """A text digest of ``n`` papers, the MARKED ones spread among them."""
    step = max(1, n // len(MARKED))
    titles = [f"Filler paper number {i} on galaxies" for i in range(n)]
    for k, title in enumerate(MARKED):
        titles[min(n - 1, k * step)] = title
    papers = [Paper(title=t, authors=["A. Author", "B. Author"], abstract=f"Abstract {i}: " + "words " * 30,
                    published=NOW - timedelta(hours=1)) for i, t in enumerate(titles)]
    return text_format.write("Lab", NOW.date(), papers).encode()


def start(folder: Path, command: str, slack_url: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), KILL_SLACK_WEBHOOK=slack_url, WATCHER_HTTP_RETRIES="1",
               WATCHER_HTTP_BACKOFF="0.01", WATCHER_DB_TIMEOUT="5")
    env.pop("WATCHER_CONFIG", None)
    log = open(folder / f"{command}-{time.monotonic_ns()}.log", "wb")
    return subprocess.Popen([sys.executable, "-m", "watcher", "--config", str(folder / "config.toml"), command],
                            cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def archive_titles(folder: Path) -> list[str]:
    import json

    return [p["title"] for f in sorted((folder / "digests").glob("*.json"))
            for p in json.loads(f.read_text(encoding="utf-8"))] if (folder / "digests").exists() else []


def wal_size(folder: Path) -> int:
    try:
        return (folder / "watcher.db-wal").stat().st_size
    except FileNotFoundError:
        return 0


def finish(folder: Path, command: str, slack: SlackStandIn) -> None:
    """Restart after the kill and let it complete: ``once`` runs to its end, ``run`` is stopped
    with SIGTERM once both channels have the papers."""
    proc = start(folder, command, slack.url)
    try:
        if command == "once":
            assert proc.wait(60) == 0, (folder / "once.log")
        else:
            wait_until(lambda: len(archive_titles(folder)) >= len(MARKED) and len(slack.ids_titles()) >= len(MARKED),
                       120, "the restarted daemon's delivery")
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class Slack(SlackStandIn):
    def ids_titles(self) -> list[str]:
        """Titles in the accepted posts (with repeats)."""
        import re

        return [t for p in self.accepted() for b in p["blocks"] if b["type"] == "section"
                for t in re.findall(r"Quasar paper \d\d", b["text"]["text"])]


@pytest.mark.parametrize("command", ["once", "run"])
@pytest.mark.parametrize("phase", ["fetch", "store", "delivery"])
def test_kill_9_then_restart_delivers_each_paper_once(tmp_path, server, phase, command):
    body = listing(20_000 if phase == "store" else 200)
    with Slack(default=HookReply(200, "ok"), timeout=20) as slack:
        (tmp_path / "config.toml").write_text(
            CONFIG.replace("{url}", server.url("/listing.txt")).replace("{{", "{").replace("}}", "}"))
        if phase == "fetch":
            server.route("/listing.txt", Reply(body=body, fault="stall", delay=120))  # held past the kill
        else:
            server.route("/listing.txt", Reply(body=body))
        if phase == "delivery":  # held before Slack takes it (a post Slack took and whose answer
            #                      was lost to the kill would show twice: see TESTING.md)
            slack.default = HookReply(503, "never taken", hang=120)

        proc = start(tmp_path, command, slack.url)
        try:
            if phase == "fetch":
                wait_until(lambda: server.hits("/listing.txt"), 20, "the fetch")
            elif phase == "store":
                wait_until(lambda: server.hits("/listing.txt"), 20, "the fetch")
                base = wal_size(tmp_path)
                wait_until(lambda: wal_size(tmp_path) > base + (1 << 20) or proc.poll() is not None, 30,
                           "the store's transaction")
                assert proc.poll() is None, "the cycle ended before the kill: store was too fast to catch"
            else:
                wait_until(lambda: slack.requests, 30, "the Slack post")
            proc.send_signal(signal.SIGKILL)
            proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

        conn = sqlite3.connect(tmp_path / "watcher.db")
        try:
            stored = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
            ledger = conn.execute("SELECT count(*) FROM deliveries").fetchone()[0]
        finally:
            conn.close()
        if phase in ("fetch", "store"):
            assert stored == 0, "a killed batch must leave no half of itself behind"
        else:
            assert stored == len(body.split(b"\nAuthors:")) - 1
        assert ledger == 0 and slack.accepted() == [] and archive_titles(tmp_path) == []

        server.route("/listing.txt", Reply(body=body))
        slack.default = HookReply(200, "ok")
        finish(tmp_path, command, slack)
        assert_exactly_once(slack.ids_titles(), MARKED, "slack")
        assert_exactly_once(archive_titles(tmp_path), MARKED, "archive")
        once = start(tmp_path, "once", slack.url)  # and a further run sends nothing again
        assert once.wait(60) == 0
        assert_exactly_once(slack.ids_titles(), MARKED, "slack")
        assert_exactly_once(archive_titles(tmp_path), MARKED, "archive")
