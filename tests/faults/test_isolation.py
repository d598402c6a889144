"""Isolation against the unforeseen: a bug planted in one reader, one digest's matching and one
digest's rendering, beside a healthy source and a healthy digest (docs/design.md).

The faults are planted in a real ``watcher`` process (``python -c PLANT ARGS``): the Hugging
Face JSON reader raises ``KeyError`` (or an ``sqlite3.IntegrityError``, an odd merge's error) for
every input, the matcher of profile ``broken`` raises ``ZeroDivisionError``, and rendering the
digest ``badrender`` raises ``TypeError``. Everything else is watcher as shipped, reading two
listing files. Each failure must stay with its source or digest: logged as an error (its
traceback in the log, not on the terminal), stored for ``watcher status``, counted (exit 1, the
run recorded ``failed``), while the healthy source is stored and the healthy digest delivered.
The same for ``watcher fetch`` and the daemon; a bug outside any cycle (planted in ``watcher
status``) is one line on the terminal too.
"""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from faultkit import assert_no_traceback

from watcher import formats
from watcher.util.logs import configure

import pytest

pytestmark = pytest.mark.slow  # real watcher processes against faulty servers: the full suite (CI) runs it, not the inner loop

REPO = Path(__file__).resolve().parent.parent.parent
DATA = REPO / "tests" / "data"

PLANT = """
import os, sqlite3, sys
import watcher.formats.hf_json as hf_json
import watcher.matching.match as match
import watcher.cycle.pipeline as pipeline

def broken_reader(data, origin, today=None):
    if os.environ.get("PLANTED") == "integrity":
        raise sqlite3.IntegrityError("UNIQUE constraint failed: papers.key")
    return {}["paper"]  # a reader meeting an input nobody foresaw

hf_json.parse = broken_reader

_init = match.ProfileMatcher.__init__

def planted_init(self, profile, *args, **kw):
    if profile.name == "broken":
        raise ZeroDivisionError("planted in the matcher of profile broken")
    _init(self, profile, *args, **kw)

match.ProfileMatcher.__init__ = planted_init

_render = pipeline.render

def planted_render(digest, fmt, *args, **kw):
    if digest.name == "badrender":
        raise TypeError("planted in the rendering of digest badrender")
    return _render(digest, fmt, *args, **kw)

pipeline.render = planted_render

if os.environ.get("PLANTED") == "status":
    import watcher.cycle.status

    def broken_status(config, now):
        raise RuntimeError("planted in watcher status")

    watcher.cycle.status.status_text = broken_status

from watcher.cli import main
main()
"""

CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[source.hf]
type = "listing"
path = "hf.json"

[source.lab]
type = "listing"
path = "lab.txt"

[profile.rl]
title = "RL"
query = '"reinforcement learning" OR RL OR reward'
max_papers = 100

[profile.broken]
query = "model"

[digest.bad]
profiles = ["broken"]
schedule = "30 21 * * *"
lookback = "5000d"
channels = ["archive"]

[digest.badrender]
profiles = ["rl"]
schedule = "30 21 * * *"
lookback = "5000d"
channels = ["archive"]

[digest.good]
profiles = ["rl"]
schedule = "30 21 * * *"
lookback = "5000d"
channels = ["archive"]

[channel.archive]
type = "file"
path = "digests/{digest}-{date}.{ext}"
"""


def setup(folder: Path) -> Path:
    (folder / "config.toml").write_text(textwrap.dedent(CONFIG))
    shutil.copy(DATA / "hf_daily_papers_2025-01-13.json", folder / "hf.json")
    shutil.copy(DATA / "llm-rl-2025-04-12.txt", folder / "lab.txt")
    return folder / "config.toml"


def watcher(folder: Path, *args: str, planted: str | None = "keyerror") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("WATCHER_CONFIG", None)
    env["PLANTED"] = planted or ""
    cmd = [sys.executable, "-c", PLANT] if planted else [sys.executable, "-m", "watcher"]
    return subprocess.run([*cmd, "--config", str(folder / "config.toml"), *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=60)


def last_run(folder: Path) -> tuple[str, str, dict]:
    with sqlite3.connect(folder / "watcher.db") as conn:
        kind, status, detail = conn.execute("SELECT kind, status, detail FROM runs ORDER BY id DESC").fetchone()
    return kind, status, json.loads(detail)


def lab_titles() -> set[str]:
    return {p.title for p in formats.read((DATA / "llm-rl-2025-04-12.txt").read_bytes(), "lab").papers}


def test_a_failing_reader_a_failing_matcher_and_a_failing_renderer_each_fail_alone(tmp_path):
    setup(tmp_path)
    r = watcher(tmp_path, "once")
    assert r.returncode == 1, r.stderr
    assert_no_traceback(r)
    err = r.stderr
    assert "watcher: ERROR: source hf failed: internal error: KeyError: 'paper' (a bug in watcher: " \
           "--log-level debug shows its traceback)" in err, err
    assert "digest bad failed: internal error: ZeroDivisionError: planted in the matcher" in err, err
    assert "digest badrender -> channel archive failed: internal error: TypeError: planted in the " \
           "rendering" in err, err

    # the healthy source was fetched after the failing one, and its digest went out
    delivered = tmp_path / "digests" / f"good-{_today()}.txt"
    papers = formats.read(delivered.read_bytes(), "good").papers
    assert papers and {p.title for p in papers} <= lab_titles()
    assert sorted(p.name for p in (tmp_path / "digests").iterdir()) == [delivered.name]

    kind, status, detail = last_run(tmp_path)
    assert (kind, status) == ("once", "failed")
    by_name = {s["name"]: s for s in detail["sources"]}
    assert by_name["hf"]["error"] == "internal error: KeyError: 'paper'"
    assert by_name["lab"]["error"] is None and by_name["lab"]["new"] == 30
    assert detail["digests"] == {"bad": "internal error: ZeroDivisionError: planted in the matcher of profile broken"}

    st = watcher(tmp_path, "status", planted=None)
    assert st.returncode == 0, st.stderr
    assert "FAILING (1 in a row)" in st.stdout and ": internal error: KeyError: 'paper'" in st.stdout
    assert "last run failed: internal error: ZeroDivisionError: planted in the matcher" in st.stdout
    assert "FAILED at" in st.stdout and "internal error: TypeError: planted in the rendering" in st.stdout

    # --log-level debug: the traceback is in the log, one line per record
    debug = watcher(tmp_path, "--log-level", "debug", "once")
    assert debug.returncode == 1
    line = next(x for x in debug.stderr.splitlines() if "source hf failed" in x)
    assert "Traceback (most recent call last): | " in line and "in broken_reader" in line


def test_fetch_is_recorded_and_isolates_a_database_error_of_one_source(tmp_path):
    setup(tmp_path)
    r = watcher(tmp_path, "fetch", planted="integrity")
    assert r.returncode == 1, r.stderr
    assert_no_traceback(r)
    assert "hf: failed, nothing fetched (its error is on stderr)" in r.stdout
    assert "source hf failed: internal error: IntegrityError: UNIQUE constraint failed: papers.key" in r.stderr
    assert "lab: 30 new, 0 updated, 0 unchanged" in r.stdout
    kind, status, detail = last_run(tmp_path)
    assert (kind, status) == ("fetch", "failed")
    assert [s["name"] for s in detail["sources"]] == ["hf", "lab"]

    ok = watcher(tmp_path, "fetch", "--source", "lab", planted=None)
    assert ok.returncode == 0 and ok.stdout == "lab: 0 new, 0 updated, 30 unchanged\n", ok.stdout + ok.stderr
    assert last_run(tmp_path)[:2] == ("fetch", "ok")


def test_the_daemon_isolates_too_and_logs_the_traceback(tmp_path):
    setup(tmp_path)
    log = tmp_path / "daemon.log"
    env = dict(os.environ, PYTHONPATH=str(REPO), PLANTED="keyerror")
    for key in ("WATCHER_CONFIG", "NOTIFY_SOCKET", "JOURNAL_STREAM"):
        env.pop(key, None)
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", PLANT, "--config", str(tmp_path / "config.toml"), "run"],
                                cwd=tmp_path, env=env, stderr=err, stdout=subprocess.DEVNULL)
    try:  # every digest never ran: the daemon runs them all at start
        deadline = time.monotonic() + 20
        while "cycle done" not in log.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "cycle done" in text and "failed: hf, bad, badrender->archive" in text, text
    line = next(x for x in text.splitlines() if "source hf failed" in x)
    assert "ERROR: source hf failed: internal error: KeyError: 'paper' | Traceback (most recent call last):" in line
    assert "in broken_reader" in line
    assert (tmp_path / "digests" / f"good-{_today()}.txt").exists()
    assert last_run(tmp_path)[:2] == ("run", "failed")


def test_an_unexpected_error_outside_a_cycle_is_one_line_too(tmp_path):
    setup(tmp_path)
    assert watcher(tmp_path, "fetch", "--source", "lab", planted=None).returncode == 0
    r = watcher(tmp_path, "status", planted="status")
    assert r.returncode == 1
    assert r.stderr == ("watcher: ERROR: internal error: RuntimeError: planted in watcher status (a bug in "
                        "watcher: --log-level debug shows its traceback)\n")


def test_the_daemon_log_keeps_the_traceback_and_masks_secrets_in_it(monkeypatch, tmp_path):
    monkeypatch.setenv("WATCHER_TEST_HOOK", "https://hooks.example.org/T000/very-secret-token")
    config = tmp_path / "config.toml"
    config.write_text(textwrap.dedent("""
        [profile.p]
        query = "x"
        [channel.hook]
        type = "webhook"
        url_env = "WATCHER_TEST_HOOK"
        """))
    from watcher.config import load_config

    outs = {}
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        for daemon in (True, False):
            outs[daemon] = io.StringIO()
            configure("info", daemon=daemon, stream=outs[daemon], config=load_config(config))
            try:
                raise KeyError("https://hooks.example.org/T000/very-secret-token")
            except KeyError as e:
                logging.getLogger("watcher").error("source s failed: internal error", exc_info=e)
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    daemon_log, terminal = outs[True].getvalue(), outs[False].getvalue()
    assert daemon_log.count("\n") == 1 and "Traceback (most recent call last): | " in daemon_log
    assert "KeyError: '***'" in daemon_log and "very-secret-token" not in daemon_log
    assert terminal == ("watcher: ERROR: source s failed: internal error (a bug in watcher: --log-level debug "
                        "shows its traceback)\n")


def _today() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).date().isoformat()


def test_a_cycle_cut_short_is_recorded_failed(tmp_path, monkeypatch):
    """The runs row judges the whole cycle, not only the reports gathered before it ended."""
    import watcher.cycle.pipeline as pipeline
    from watcher.config import load_config

    setup(tmp_path)
    config = load_config(tmp_path / "config.toml")

    def interrupted(*args, **kw):
        raise KeyboardInterrupt  # Ctrl-C while the healthy digest renders

    monkeypatch.setattr(pipeline, "render", interrupted)
    from datetime import datetime, timezone

    try:
        pipeline.run_once(config, pipeline.Cycle(now=datetime.now(timezone.utc)), pipeline.Fetch(sources=["lab"]),
                          pipeline.Deliver(digests=["good"]))
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was swallowed")
    kind, status, detail = last_run(tmp_path)
    assert (kind, status) == ("once", "failed") and detail["error"] == "KeyboardInterrupt"
    assert [s["name"] for s in detail["sources"]] == ["lab"] and detail["sources"][0]["error"] is None
