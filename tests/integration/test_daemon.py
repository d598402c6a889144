"""``watcher run`` as a real process: firing, reload, stop, one instance, kill -9 and catch-up.

Digests use ``every = "1s"`` / ``"2s"`` and a file channel; papers are put in the database
beforehand (Store.upsert of the shipped sample digest), so no source and no network is needed.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from watcher import formats
from watcher.cycle.lock import write_lock
from watcher.errors import StoreError
from watcher.store import Store

REPO = Path(__file__).resolve().parent.parent.parent
SAMPLE = REPO / "watcher" / "samples" / "llm-rl-2025-04-12.txt"

CONFIG = """
[watcher]
database = "watcher.db"
timezone = "Europe/Berlin"

[profile.llm-rl]
title = "{title}"
query = '"reinforcement learning" OR RLHF OR GRPO OR RL OR reasoning OR reward'

[digest.fast]
profiles = ["llm-rl"]
every = "{every}"
channels = ["archive"]
send_empty = {send_empty}
lookback = "5000d"

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"
"""


def env_for(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    for key in ("WATCHER_CONFIG", "NOTIFY_SOCKET", "JOURNAL_STREAM"):
        env.pop(key, None)
    env.update(extra)
    return env


def watcher(*args: str) -> list[str]:
    return [sys.executable, "-m", "watcher", *args]


def write_config(folder: Path, title="LLM-RL", every="1s", send_empty=True) -> Path:
    path = folder / "config.toml"
    path.write_text(textwrap.dedent(CONFIG.format(title=title, every=every,
                                                  send_empty=str(send_empty).lower())))
    return path


# Upper bounds for what includes starting an interpreter (imports, APScheduler): generous, since
# the suite runs on shared, loaded machines; a passing test never waits for them.
START = 60.0  # a bound on waiting for a state, never a figure asserted (a loaded machine is slow)


class Daemon:
    """A ``watcher run`` subprocess with its stderr in a file."""

    def __init__(self, folder: Path, *args: str, env: dict | None = None, name="daemon"):
        self.log_path = folder / f"{name}.log"
        self.log_file = open(self.log_path, "wb")
        self.proc = subprocess.Popen(watcher("--config", str(folder / "config.toml"), *args, "run"),
                                     cwd=folder, env=env or env_for(), stdout=subprocess.DEVNULL,
                                     stderr=self.log_file)

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_log(self, text: str, timeout: float = START, count: int = 1) -> None:
        wait_for(lambda: self.log.count(text) >= count, timeout, f"{text!r} in the log:\n{self.log}")

    def signal(self, sig) -> None:
        self.proc.send_signal(sig)

    def stop(self, timeout: float = START) -> tuple[int, float]:
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout)
        return rc, time.monotonic() - start

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log_file.close()


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def daemons():
    started: list[Daemon] = []

    def start(folder: Path, *args, **kw) -> Daemon:
        d = Daemon(folder, *args, **kw)
        started.append(d)
        return d

    yield start
    for d in started:
        d.close()


def text_digests(folder: Path) -> list[Path]:
    """The text digests written so far, oldest first."""
    found = (folder / "digests").glob("*.txt") if (folder / "digests").exists() else []
    return sorted(found, key=lambda p: p.stat().st_mtime_ns)


def sample_papers():
    return formats.read(SAMPLE.read_bytes(), str(SAMPLE)).papers


def store_papers(folder: Path, papers) -> None:
    with Store.open(folder / "watcher.db") as store:
        store.upsert(papers, datetime.now(timezone.utc))


def runs_finished(folder: Path) -> int:
    """The cycles recorded as finished well in the folder's database."""
    try:
        with Store.open(folder / "watcher.db", readonly=True) as store:
            return store.db.execute("SELECT count(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    except (StoreError, sqlite3.Error):  # not made yet, or not migrated yet
        return 0


def delivered_titles(folder: Path) -> list[str]:
    titles = []
    for path in text_digests(folder):
        data = path.read_bytes()
        if b"\n\n" in data:  # a digest with papers (an empty one is only its header line)
            titles += [p.title for p in formats.read(data, str(path)).papers]
    return titles


@pytest.mark.slow  # a real daemon waited on for three firings a second apart
def test_fires_repeatedly_logs_for_journald_and_stops_on_sigterm(tmp_path, daemons):
    write_config(tmp_path)
    log_path = tmp_path / "daemon.log"
    log_path.touch()
    st = os.stat(log_path)
    d = daemons(tmp_path, env=env_for(JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
    wait_for(lambda: len(text_digests(tmp_path)) >= 3, START, "three digests")
    assert text_digests(tmp_path)[0].read_text().startswith("LLM-RL - ")
    rc, took = d.stop()
    assert rc == 0  # within START of SIGTERM, not at the next firing
    lines = d.log.splitlines()
    assert lines and all(line.startswith(("<6>", "<7>")) for line in lines), d.log  # info, no errors
    assert "<6>digest fast: has never run; running it now" in lines
    assert lines[-1] == "<6>stopped"


@pytest.mark.slow  # a real daemon waited on for four firings around two reloads
def test_sighup_reloads_and_an_invalid_config_keeps_the_old_one(tmp_path, daemons):
    config = write_config(tmp_path)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify.sock"))
    notify.settimeout(START)
    d = daemons(tmp_path, env=env_for(NOTIFY_SOCKET=str(tmp_path / "notify.sock")))
    assert notify.recv(100) == b"READY=1"
    wait_for(lambda: len(text_digests(tmp_path)) >= 1, START, "a first digest")

    write_config(tmp_path, title="Changed title")
    d.signal(signal.SIGHUP)
    assert notify.recv(100) == b"RELOADING=1" and notify.recv(100) == b"READY=1"
    d.wait_log("config reloaded")
    wait_for(lambda: any(p.read_text().startswith("Changed title - ") for p in text_digests(tmp_path)),
             START, "a digest with the new title")

    config.write_text(config.read_text() + "\n[digest.fast2]\nbogus = 1\n")
    d.signal(signal.SIGHUP)
    d.wait_log("reload failed, still running the previous config")
    assert notify.recv(100) == b"RELOADING=1" and notify.recv(100) == b"READY=1"
    assert "digest.fast2.bogus: unknown key" in d.log
    seen = len(text_digests(tmp_path))
    wait_for(lambda: len(text_digests(tmp_path)) >= seen + 2, START, "digests after the failed reload")
    assert text_digests(tmp_path)[-1].read_text().startswith("Changed title - ")
    rc, took = d.stop()
    assert rc == 0  # within START of SIGTERM, not at the next firing
    assert notify.recv(100) == b"STOPPING=1"


def test_a_second_instance_is_refused_but_once_may_run(tmp_path, daemons):
    write_config(tmp_path, every="1h")
    d = daemons(tmp_path)
    d.wait_log("watcher run: started")
    second = subprocess.run(watcher("--config", str(tmp_path / "config.toml"), "run"), cwd=tmp_path,
                            env=env_for(), capture_output=True, timeout=20)
    assert second.returncode == 2  # not 1 (a source or channel failed): nothing ran
    assert b"another watcher run is using" in second.stderr and b"pid" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    once = subprocess.run(watcher("--config", str(tmp_path / "config.toml"), "once"), cwd=tmp_path,
                          env=env_for(), capture_output=True, timeout=20)
    assert once.returncode == 0, once.stderr
    assert d.proc.poll() is None
    d.signal(signal.SIGINT)  # Ctrl-C stops it like SIGTERM
    assert d.proc.wait(60) == 0
    assert "SIGINT: stopping" in d.log


def test_kill_9_then_restart_catches_up_without_duplicates(tmp_path, daemons):
    write_config(tmp_path, every="2s", send_empty=False)
    papers = sample_papers()
    first, later = papers[:15], papers[15:]
    store_papers(tmp_path, first)
    d = daemons(tmp_path)
    # the first cycle finished and recorded (its digest file alone is written before the ledger
    # and the digest's success: a kill between them rightly leaves the digest "never run")
    wait_for(lambda: len(text_digests(tmp_path)) >= 1 and runs_finished(tmp_path) >= 1, START, "the first digest")
    killed_at = time.monotonic()
    d.proc.kill()  # SIGKILL: no cleanup at all, the lock dies with the process
    d.proc.wait()
    delivered_before = delivered_titles(tmp_path)
    assert delivered_before and set(delivered_before) <= {p.title for p in first}

    store_papers(tmp_path, later)  # new papers arrive while watcher is down
    time.sleep(max(0.0, 2.3 - (time.monotonic() - killed_at)))  # its next run passes unseen
    d2 = daemons(tmp_path, name="daemon2")
    d2.wait_log("missed its run at")
    wait_for(lambda: len(delivered_titles(tmp_path)) > len(delivered_before), START, "the catch-up digest")
    assert d2.stop()[0] == 0

    titles = delivered_titles(tmp_path)
    assert len(titles) == len(set(titles)), "a paper was delivered twice"
    assert set(titles) - set(delivered_before) <= {p.title for p in later}
    with Store.open(tmp_path / "watcher.db") as store:
        ledger = store.db.execute("SELECT count(*) FROM deliveries").fetchone()[0]
    assert ledger == len(titles)


def test_once_waits_while_another_cycle_writes(tmp_path):
    write_config(tmp_path, every="1h", send_empty=False)
    with write_lock(tmp_path / "watcher.db", "a test cycle") as lock:
        assert lock.try_acquire()
        log = tmp_path / "once.log"
        with open(log, "wb") as err:
            proc = subprocess.Popen(watcher("--config", str(tmp_path / "config.toml"), "once"),
                                    cwd=tmp_path, env=env_for(), stderr=err)
        try:
            # it says it waits, and still runs once it said so: waiting, not failing
            wait_for(lambda: b"waiting for pid" in log.read_bytes() or proc.poll() is not None, 20,
                     "'waiting for pid' in the log")
            assert proc.poll() is None, log.read_bytes()
            assert not (tmp_path / "watcher.db").exists()  # nothing written while it waits
        except BaseException:
            proc.kill()
            raise
    assert proc.wait(60) == 0, log.read_bytes()
    err = log.read_bytes()
    assert b"waiting for pid" in err and b"a test cycle" in err
    with Store.open(tmp_path / "watcher.db") as store:
        assert [r["status"] for r in store.db["runs"].rows] == ["ok"]  # it ran once the lock was free


def test_sigterm_ends_a_cycle_that_waits_for_the_database(tmp_path, daemons):
    write_config(tmp_path)
    with write_lock(tmp_path / "watcher.db", "a slow test cycle") as lock:
        assert lock.try_acquire()
        d = daemons(tmp_path)
        d.wait_log("waiting for pid")  # the catch-up cycle is blocked on the write lock
        rc, took = d.stop()
    assert rc == 0  # within START of SIGTERM, not at the next firing
    assert not text_digests(tmp_path)
