"""The daemon's parts in process: catch-up decisions, the holiday notice, masked secrets, status,
and the deploy units (``systemd-analyze verify``)."""

from __future__ import annotations

import io
import logging
import re
import shutil
import subprocess
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from watcher.config import load_config
from watcher.cycle.lock import daemon_lock
from watcher.util.logs import configure
from watcher.cycle.pipeline import Cycle, Deliver, run_once
from watcher.util.schedule import Due, due_digests
from watcher.cycle.status import status_text
from watcher.store import Store

REPO = Path(__file__).resolve().parent.parent.parent
UTC = timezone.utc
NY = ZoneInfo("America/New_York")

CONFIG = """
[watcher]
database = "watcher.db"
timezone = "Europe/Berlin"

[profile.p]
query = "GRPO"

[digest.nightly]
profiles = ["p"]
schedule = "30 21 * * *"
channels = ["archive"]

[digest.arxiv]
profiles = ["p"]
schedule = "arxiv"
channels = ["archive"]
formats = ["markdown"]
send_empty = {send_empty}

[digest.often]
profiles = ["p"]
every = "6h"
channels = ["archive"]

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"

[channel.hook]
type = "webhook"
url_env = "WATCHER_TEST_HOOK"
"""


def config_in(folder: Path, send_empty=True):
    path = folder / "config.toml"
    path.write_text(textwrap.dedent(CONFIG.format(send_empty=str(send_empty).lower())))
    return load_config(path)


def test_catch_ups_use_the_last_successful_run(tmp_path):
    config = config_in(tmp_path)
    now = datetime(2025, 4, 16, 8, 0, tzinfo=UTC)  # Wednesday morning
    last = {
        "nightly": datetime(2025, 4, 14, 19, 31, tzinfo=UTC),  # Monday 21:31 Berlin: missed Tuesday
        "arxiv": datetime(2025, 4, 16, 0, 31, tzinfo=UTC),  # after Tuesday 20:30 New York: on time
        "often": None,  # never ran
    }
    assert due_digests(config, last, now) == [
        Due("nightly", datetime(2025, 4, 15, 19, 30, tzinfo=UTC)),
        Due("often", None),
    ]
    assert due_digests(config, last, now, only={"arxiv"}) == []
    assert due_digests(config, {}, now, only=["arxiv"]) == [Due("arxiv", None)]  # never ran


def test_arxiv_digest_on_a_holiday_says_so(tmp_path):
    config = config_in(tmp_path, send_empty=True)
    thanksgiving = datetime(2025, 11, 27, 20, 30, tzinfo=NY)
    report = run_once(config, Cycle(now=thanksgiving), None, Deliver(digests=["arxiv"]))
    assert report.ok
    body = (tmp_path / "digests" / "arxiv-2025-11-28.md").read_text()
    assert "no arXiv announcement on Thu 27 Nov 2025 (holiday: Thanksgiving)." in body


def test_arxiv_digest_on_a_holiday_logs_it_when_not_sending(tmp_path, caplog):
    config = config_in(tmp_path, send_empty=False)
    caplog.set_level(logging.INFO, logger="watcher")
    run_once(config, Cycle(now=datetime(2025, 11, 27, 20, 30, tzinfo=NY)), None, Deliver(digests=["arxiv"]))
    assert "digest arxiv -> archive: no arXiv announcement on Thu 27 Nov 2025 (holiday: Thanksgiving); " \
           "nothing sent" in caplog.text
    assert not (tmp_path / "digests").exists()


def test_secret_values_are_masked_in_every_log_line(tmp_path, monkeypatch):
    monkeypatch.setenv("WATCHER_TEST_HOOK", "https://hooks.example.org/T000/very-secret-token")
    out = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure("info", stream=out, config=config_in(tmp_path))
        logging.getLogger("watcher").error("POST %s failed", "https://hooks.example.org/T000/very-secret-token")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    assert out.getvalue() == "watcher: ERROR: POST *** failed\n"


def test_status_shows_the_daemon_next_fire_and_missed_runs(tmp_path):
    config = config_in(tmp_path)
    now = datetime(2025, 4, 16, 8, 0, tzinfo=UTC)
    with Store.open(config.settings.database) as store:
        store.digest_ran("nightly", datetime(2025, 4, 14, 19, 31, tzinfo=UTC), True)
        store.digest_ran("often", datetime(2025, 4, 16, 7, 0, tzinfo=UTC), True)
    text = status_text(config, now)
    assert "daemon: not running" in text
    assert "  often: last run 2025-04-16T09:00:00+02:00 (ok); next 2025-04-16T15:00:00+02:00 [every 6h]" in text
    assert "missed its run at 2025-04-15T21:30:00+02:00" in text
    with daemon_lock(config.settings.database) as lock:
        assert lock.try_acquire()
        text = status_text(config, now)
    assert "daemon: running, pid" in text and "next now (overdue)" in text



def test_status_reads_the_digests_in_as_many_queries_for_twelve_as_for_one(tmp_path):
    """Each digest's last run, last issue, channels and the runs' record are read for all the
    digests at once (docs/performance.md, "watcher status"): no query per digest or channel."""
    now = datetime(2025, 4, 16, 8, 0, tzinfo=UTC)
    statements = {}
    for n in (1, 12):
        folder = tmp_path / str(n)
        folder.mkdir()
        digests = "".join(f'[digest.d{i}]\nprofiles = ["p"]\nschedule = "30 21 * * *"\n'
                          f'channels = ["archive", "copy"]\n\n' for i in range(n))
        (folder / "config.toml").write_text(
            '[watcher]\ndatabase = "watcher.db"\n\n[profile.p]\nquery = "GRPO"\n\n' + digests
            + '[channel.archive]\ntype = "file"\npath = "a/{digest}-{date}.{ext}"\n\n'
            + '[channel.copy]\ntype = "file"\npath = "b/{digest}-{date}.{ext}"\n')
        config = load_config(folder / "config.toml")
        with Store.open(config.settings.database) as store:
            ran = datetime(2025, 4, 15, 19, 31, tzinfo=UTC)
            run = store.start_run("once", ran)
            store.finish_run(run, "ok", {"channels": [
                {"digest": name, "channel": "archive", "empty": "nothing new"} for name in config.digests]}, ran)
            for name in config.digests:
                store.digest_ran(name, ran, True)
                store.delivery_failed(name, "copy", "disk full", ran)
            said = []
            store.db.conn.set_trace_callback(said.append)
            text = status_text(config, now, store)
            store.db.conn.set_trace_callback(None)
        assert text.count("FAILED at 2025-04-15T") == n and text.count("last run 2025-04-15T") == n
        statements[n] = len(said)
    assert statements[12] == statements[1], statements

# --- deploy/ ---------------------------------------------------------------------------------

UNITS = ["watcher.service", "watcher-once.service", "watcher.timer"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze is not installed (apt-get install systemd)")
def test_units_pass_systemd_analyze_verify(tmp_path):
    # verify wants ExecStart's program to exist: point the units at a stand-in executable
    fake = tmp_path / "bin" / "watcher"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    for name in UNITS:
        text = (REPO / "deploy" / name).read_text()
        assert "/usr/local/bin/watcher" in text or name.endswith(".timer")
        (tmp_path / name).write_text(text.replace("/usr/local/bin/watcher", str(fake)))
    proc = subprocess.run(["systemd-analyze", "verify", *[str(tmp_path / n) for n in UNITS]],
                          capture_output=True, text=True, timeout=60)
    problems = [line for line in (proc.stdout + proc.stderr).splitlines()
                if str(tmp_path) in line or "watcher" in line]
    assert proc.returncode == 0 and not problems, proc.stdout + proc.stderr


def test_units_run_the_documented_commands():
    service = (REPO / "deploy" / "watcher.service").read_text()
    assert "ExecStart=/usr/local/bin/watcher --config /etc/watcher/config.toml run" in service
    assert "ExecReload=/bin/kill -HUP $MAINPID" in service
    for setting in ("Restart=on-failure", "RestartPreventExitStatus=2", "DynamicUser=yes", "StateDirectory=watcher",
                    "EnvironmentFile=-/etc/watcher/secrets.env", "NoNewPrivileges=yes",
                    "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes"):
        assert setting in service.splitlines(), setting
    once = (REPO / "deploy" / "watcher-once.service").read_text()
    assert "once --due" in once
    assert "watcher once --due" in (REPO / "deploy" / "crontab.example").read_text()


def test_once_due_runs_only_the_digests_due_by_their_last_run(tmp_path):
    """``once --due`` asks schedule.due_digests with each digest's last run (any run counts)."""
    from helpers import run_cli

    config = config_in(tmp_path)
    now = datetime.now(UTC)
    with Store.open(config.settings.database) as store:
        store.digest_ran("often", now - timedelta(hours=1), False, "it failed")  # 6h: not due again
        store.digest_ran("nightly", now - timedelta(days=2), True)  # 21:30 passed since
    r = run_cli("--config", str(tmp_path / "config.toml"), "once", "--due", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    shown = sorted(set(re.findall(rb"digest (\w+)", r.stderr)))
    assert shown == [b"arxiv", b"nightly"], r.stderr  # arxiv never ran
