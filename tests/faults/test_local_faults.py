"""Local faults: the database locked by another writer, read-only, or damaged. watcher waits a
bounded time ($WATCHER_DB_TIMEOUT, 2 s here), then stops with a one-line message saying what is
wrong (exit 1, no traceback), delivers nothing it could not record, changes nothing it should
not, and the next run after the fault clears delivers every paper exactly once."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

import pytest

from faultkit import assert_exactly_once, assert_no_secret, assert_no_traceback, setup

pytestmark = pytest.mark.slow  # real watcher processes against faulty servers: the full suite (CI) runs it, not the inner loop

HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()  # held until the test kills it: watcher can only end by giving up
"""
LOCKED = re.compile(r"the database is locked by another program \(waited (\d+)s\); try again once it has finished")


def hold_lock(db) -> subprocess.Popen:
    """Another process holding BEGIN EXCLUSIVE on ``db`` until it is killed."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def assert_gave_up_after_the_busy_timeout(r, waited: float) -> None:
    """Exit 1 with the lock's message, after waiting at least the busy timeout (2 s), and the
    wait it names is the one it measured (at least the timeout, at most what the test saw: a
    loaded machine may wait longer, so no upper figure is asserted)."""
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    said = LOCKED.search(r.stderr)
    assert said, r.stderr
    assert waited >= 2 and 2 <= int(said.group(1)) <= waited + 0.5, (said.group(0), waited)


def test_database_locked_by_another_writer(tmp_path):
    s = setup(tmp_path, channels=("archive",))
    holder = hold_lock(s.db)
    try:
        started = time.monotonic()
        r = s.watcher("once")
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert_no_traceback(r)
    assert_gave_up_after_the_busy_timeout(r, waited)
    assert not (tmp_path / "digests").exists()  # nothing went out that could not be recorded
    ok = s.watcher("once")
    assert ok.returncode == 0, ok.stderr
    assert s.watcher("once").returncode == 0
    assert_exactly_once(s.archive_ids(), s.ids, "archive")
    assert_no_secret(s)


LAB_SOURCE = """
[source.lab]
type = "listing"
path = "lab.txt"
"""


def test_status_and_fetch_with_a_locked_database(tmp_path):
    s = setup(tmp_path, channels=("archive",), sources=LAB_SOURCE)
    (tmp_path / "lab.txt").write_text("Lab - 2025-04-12\n\nA lab paper\n\nAuthors:A. Author\n"
                                      "Date:2025-04-12 10:00:00\n\nIts abstract.")
    holder = hold_lock(s.db)
    try:
        assert "30 papers stored" in s.status()  # readers are not blocked (WAL)
        started = time.monotonic()
        r = s.watcher("fetch")
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert_no_traceback(r)
    assert_gave_up_after_the_busy_timeout(r, waited)
    assert "30 papers stored" in s.status()  # the lab paper was not half-stored
    ok = s.watcher("fetch")
    assert ok.returncode == 0 and ok.stdout == "lab: 1 new, 0 updated, 0 unchanged\n", ok.stdout + ok.stderr
    assert "31 papers stored" in s.status()


def _drop_root_powers():
    """A command prefix that runs watcher as root without CAP_DAC_OVERRIDE, so file modes
    apply to it as to any user (the tests run as root, for whom chmod alone changes nothing)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0:
        return []
    if not setpriv:
        pytest.skip("running as root and setpriv (util-linux) is missing: cannot make a file read-only for watcher")
    probe = subprocess.run([setpriv, "--bounding-set=-dac_override,-dac_read_search", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot drop CAP_DAC_OVERRIDE here ({probe.stderr.decode().strip()}): root ignores file modes")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def test_read_only_database(tmp_path):
    prefix = _drop_root_powers()
    s = setup(tmp_path, channels=("archive",))
    (tmp_path / "digests").mkdir()
    before = s.db.read_bytes()
    os.chmod(s.db, 0o444)
    env = dict(os.environ, PYTHONPATH=str(tmp_path.parent), **s.env)
    from deliverkit import REPO

    env["PYTHONPATH"] = str(REPO)
    try:
        r = subprocess.run([*prefix, sys.executable, "-m", "watcher", "--config", str(s.config),
                            "--log-level", "debug", "once"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=60)
        s.outputs.append(r)
        assert r.returncode == 1, r.stderr
        assert_no_traceback(r)
        assert "the database is read-only for this user; check the permissions of the file and of its folder" in r.stderr
        assert s.db.read_bytes() == before
        assert list((tmp_path / "digests").iterdir()) == []  # nothing sent that could not be recorded
        st = subprocess.run([*prefix, sys.executable, "-m", "watcher", "--config", str(s.config), "status"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert st.returncode == 0 and "30 papers stored" in st.stdout, st.stderr  # reading still works
    finally:
        os.chmod(s.db, 0o644)
    ok = s.watcher("once")
    assert ok.returncode == 0, ok.stderr
    assert_exactly_once(s.archive_ids(), s.ids, "archive")
    assert_no_secret(s)


def test_garbage_database_file_is_refused_and_left_alone(tmp_path):
    s = setup(tmp_path, channels=("archive",), seed=False)
    junk = os.urandom(64 * 1024)
    s.db.write_bytes(junk)
    for args in (("once",), ("status",), ("fetch",), ("digest", "daily"), ("explain", "x", "--profile", "all")):
        r = s.watcher(*args)
        assert r.returncode == 1, (args, r.stderr)
        assert_no_traceback(r)
        assert "the file is damaged or not a watcher database" in r.stderr and "nothing was changed" in r.stderr, r.stderr
    assert s.db.read_bytes() == junk
    assert not (tmp_path / "digests").exists()


def test_damaged_pages_stop_the_run_with_a_clear_message(tmp_path):
    s = setup(tmp_path, channels=("archive",))
    conn = sqlite3.connect(s.db)  # fold the WAL in, then break pages in the middle of the file
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = s.db.stat().st_size
    with open(s.db, "r+b") as f:
        f.seek(size // 2)
        f.write(b"\xde\xad\xbe\xef" * ((size // 2 - 4096) // 4))
    damaged = s.db.read_bytes()
    r = s.watcher("once")
    assert r.returncode == 1
    assert_no_traceback(r)
    assert "the file is damaged or not a watcher database (database disk image is malformed" in r.stderr, r.stderr
    assert "nothing was changed" in r.stderr
    assert s.db.read_bytes() == damaged  # checked before the first write: not one byte changed
    assert not (tmp_path / "digests").exists()
    st = s.watcher("status")
    assert_no_traceback(st)
    assert st.returncode == 1 and "damaged" in st.stderr
    assert_no_secret(s)
