"""Two writers, one database (SQLite in WAL mode): every write transaction starts ``BEGIN
IMMEDIATE`` (:meth:`watcher.store.Store.writing`), so a writer that finds another one's lock
waits for it (the busy timeout) instead of failing at once; the message of a lock that outlasted
the wait says how long it really waited; the daemon tries a cycle the lock stopped again
within the same firing. Real processes: another process stores a fetch and holds its write
transaction for 2 s while a web rating (through the ASGI app) or ``watcher rate`` comes in;
``watcher once`` runs beside a loop of ratings."""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
import warnings

import pytest

from conftest import DATA, REPO, run_watcher
from test_ratings import RAG_ONLY, folder  # noqa: F401 (fixture: a corpus day fetched, profiles rag and vision)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, csrf_of, database_copy, sample_setup

from watcher.errors import DatabaseLocked
from watcher.services.ratings import apply_rating, ratings
from watcher.store import Store, database_error, error_kind

HOLD_SECONDS = 2.0

# Another process storing a fetch: the papers of a listing upserted in one write transaction
# that it holds open for a while (a big fetch), then commits.
STORE_A_FETCH = """
import sys, time
from datetime import datetime, timezone
from watcher import formats
from watcher.store import Store
db, listing, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
papers = formats.read(open(listing, "rb").read(), listing).papers
with Store.open(db) as store:
    with store.writing():
        counts = store.upsert(papers, datetime.now(timezone.utc))
        print("locked", len(counts.new), flush=True)
        if seconds >= 0:
            time.sleep(seconds)
        else:  # held until the test says (a line on stdin): the test decides, not the clock
            sys.stdin.readline()
    print("committed", time.time(), flush=True)
"""


def store_a_fetch(db, listing=DATA / "arxivpy2026_q_testing_s0_m100_cfe7536492ca.xml.gz",
                  seconds: float | None = HOLD_SECONDS):
    """Start the other process; returns (process, number of new papers) once it holds the lock.
    ``seconds`` None: it holds the lock until :func:`committed_at` releases it."""
    proc = subprocess.Popen([sys.executable, "-c", STORE_A_FETCH, str(db), str(listing),
                             str(-1 if seconds is None else seconds)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    word, count = proc.stdout.readline().split()
    assert word == "locked"
    return proc, int(count)


def release(proc) -> None:
    """Let a process started with ``seconds=None`` commit (harmless for the others)."""
    try:
        proc.stdin.write("commit\n")
        proc.stdin.close()
    except (BrokenPipeError, ValueError):
        pass


def committed_at(proc) -> float:
    """When the other process committed (its clock, which is this machine's); releases it first."""
    release(proc)
    word, when = proc.stdout.readline().split()
    assert word == "committed" and proc.wait(30) == 0
    return float(when)


def papers_in(db) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM papers").fetchone()[0]


# --- the web: a rating while another process stores a fetch -----------------------------------

PAPER = "2504.07615"  # VLM-R1, delivered by the sample digest (profile llm-rl)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("twowriters"))


def test_a_web_rating_waits_for_a_fetch_being_stored_and_both_are_recorded(sample, tmp_path):
    config, db = sample
    db = database_copy(db, tmp_path)
    before = papers_in(db)
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        token = csrf_of(c.get("/"))
        proc, count = store_a_fetch(db)
        r = c.post("/rate", data={"csrf": token, "action": "up", "profile": "llm-rl", "paper": PAPER})
        answered = time.time()
    assert r.status_code == 303, r.text
    assert answered >= committed_at(proc)  # it waited for the other writer, then wrote
    with Store.open(db, readonly=True) as store:
        assert [(x.paper, x.value) for x in ratings(store)] == [(PAPER, "up")]
    assert count > 0 and papers_in(db) == before + count


def test_a_rating_that_outwaits_its_timeout_is_a_503_that_says_how_long_it_waited(sample, tmp_path):
    config, db = sample
    db = database_copy(db, tmp_path)
    app = app_for(config, db)
    app.state.web.write_timeout = 0.5
    with TestClient(app, follow_redirects=False) as c:
        token = csrf_of(c.get("/"))
        proc, _ = store_a_fetch(db, seconds=None)  # held until the rating has been answered
        started = time.monotonic()
        r = c.post("/rate", data={"csrf": token, "action": "up", "profile": "llm-rl", "paper": PAPER})
        waited = time.monotonic() - started
        committed_at(proc)
    said = re.search(r"locked by another program \(waited ([\d.]+)s\)", r.text)
    assert r.status_code == 503 and said, r.text
    # the wait was real: at least the timeout, and what it names is what it measured (shown
    # rounded: 0.5 as "0.5", 1.4 as "1"; a loaded machine may wait longer than the timeout)
    assert waited >= 0.5 and 0.5 <= float(said.group(1)) <= waited + 0.5
    with Store.open(db, readonly=True) as store:
        assert ratings(store) == []


# --- the command line ------------------------------------------------------------------------

def test_watcher_rate_waits_for_another_process_that_holds_the_write_lock(folder):
    db = folder / "watcher.db"
    proc, count = store_a_fetch(db)
    r = run_watcher("rate", "up", RAG_ONLY, cwd=folder)
    finished = time.time()
    assert r.returncode == 0, r.stderr
    assert finished >= committed_at(proc)
    with Store.open(db, readonly=True) as store:
        assert [(x.profile, x.paper) for x in ratings(store)] == [("rag", RAG_ONLY)]


def test_watcher_once_beside_a_loop_of_ratings_records_every_one(folder):
    db = folder / "watcher.db"
    with Store.open(db, readonly=True) as store:
        keys = [r["key"] for r in store.db.query("SELECT key FROM papers ORDER BY key")]
    done: list[str] = []
    failed: list[Exception] = []
    stop = threading.Event()

    def rate_in_a_loop():  # another writer: one connection per rating, as the web's are
        try:
            for key in keys:
                with Store.open(db) as store:
                    apply_rating(store, "up", "rag", key, "web", profiles=["rag", "vision"])
                done.append(key)
                if stop.is_set() and len(done) >= 20:
                    return
        except Exception as e:  # noqa: BLE001 - a refused rating fails the test below
            failed.append(e)

    rater = threading.Thread(target=rate_in_a_loop)
    rater.start()
    try:
        r = run_watcher("once", cwd=folder)
    finally:
        stop.set()
        rater.join(60)
    assert r.returncode == 0, r.stderr
    assert failed == [] and done  # the loop ran beside the cycle, never refused
    with Store.open(db, readonly=True) as store:
        got = [x.paper for x in ratings(store)]
        runs = [row["status"] for row in store.db.query("SELECT status FROM runs WHERE kind = 'once'")]
    assert sorted(got) == sorted(done) and len(set(got)) == len(got)
    assert runs == ["ok"]


# --- errors are classified by SQLite's result code ------------------------------------------

def test_sqlite_errors_are_told_apart_by_their_result_code_not_their_text(tmp_path):
    db = tmp_path / "w.db"
    Store.open(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        other = sqlite3.connect(db, timeout=0, isolation_level=None)
        with pytest.raises(sqlite3.OperationalError) as busy:
            other.execute("BEGIN IMMEDIATE")
        other.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert error_kind(busy.value) == "locked"
    assert isinstance(database_error(db, busy.value), DatabaseLocked)
    assert "(waited" not in str(database_error(db, busy.value))  # no wait claimed unmeasured
    assert "(waited 3s)" in str(database_error(db, busy.value, waited=2.6))
    worded = sqlite3.OperationalError("database is locked")  # the words, without the code
    assert error_kind(worded) == "other" and not isinstance(database_error(db, worded), DatabaseLocked)
    (tmp_path / "junk.db").write_bytes(b"not a database at all, " * 100)
    with pytest.raises(sqlite3.DatabaseError) as junk:
        sqlite3.connect(tmp_path / "junk.db").execute("SELECT * FROM sqlite_master")
    assert error_kind(junk.value) == "damaged"


# --- the daemon tries a cycle the lock stopped again, within the same firing ------------------

def test_the_daemon_retries_a_cycle_the_lock_stopped_within_the_same_firing(folder, monkeypatch, caplog):
    from watcher.config import load_config
    from watcher.cycle.daemon import Daemon

    monkeypatch.setenv("WATCHER_DB_TIMEOUT", "0.3")
    db = folder / "watcher.db"
    daemon = Daemon(folder / "config.toml")
    daemon.config = load_config(folder / "config.toml")
    daemon.lock_retries = (0.5,)  # one retry, after the other process has committed
    proc, _ = store_a_fetch(db, seconds=None)  # held until the daemon says it will try again

    class ReleaseOnRetry(logging.Handler):
        def emit(self, record):
            if "trying again" in record.getMessage():
                committed_at(proc)  # the other process commits before the retry

    releaser = ReleaseOnRetry()
    logging.getLogger("watcher").addHandler(releaser)
    try:
        with caplog.at_level("INFO", logger="watcher"):
            daemon.run_digests(["daily"])
    finally:
        logging.getLogger("watcher").removeHandler(releaser)
        release(proc)
        proc.wait(30)
    messages = [r.getMessage() for r in caplog.records]
    assert any("locked by another program" in m and "trying again in 0.5s (retry 1 of 1)" in m
               for m in messages), messages
    assert any(m.startswith("cycle done") for m in messages), messages
    with Store.open(db, readonly=True) as store:
        runs = [row["status"] for row in store.db.query("SELECT status FROM runs WHERE kind = 'run'")]
        sent = store.db.execute("SELECT count(*) FROM deliveries").fetchone()[0]
    assert runs[-1] == "ok" and sent > 0


def test_a_locked_sample_database_is_named_as_the_one_used(sample):
    """`watcher rate` on the sample database (the only one there) that another program keeps
    locked: the message names the sample database, not the configured one it did not use."""
    config, db = sample
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        r = run_watcher("rate", "up", PAPER, "--profile", "llm-rl", cwd=db.parent,
                        env={"WATCHER_DB_TIMEOUT": "0.5"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = r.stderr.decode()
    assert r.returncode == 1 and "Traceback" not in err, err
    assert re.search(rf"{re.escape(db.name)}: the database is locked by another program \(waited [\d.]+s\)", err), err
    assert str(config.settings.database.name) + ":" not in err


# --- everyone at once ---------------------------------------------------------------------------

@pytest.mark.slow  # the stress benchmark for a few seconds
def test_the_daemon_the_cli_and_the_web_at_once_record_every_rating_and_paper_once(tmp_path):
    """A few seconds of the three writers side by side (benchmarks/stress.py; the benchmark
    bench_concurrency.py runs it for longer): no actor is ever refused, and afterwards the
    database holds exactly the ratings each was told were recorded and every paper once."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from stress import run_stress

    seconds = float(os.environ.get("WATCHER_STRESS_SECONDS", "4"))
    out = run_stress(tmp_path / "stress", seconds, DATA / "corpus-2025-04-09.jsonl.gz",
                     DATA / "corpus-2025-04-10.jsonl.gz")
    assert out.problems == []
    assert out.cycles >= 1 and out.web_ratings >= 1 and out.cli_ratings >= 1 and out.web_reads >= 1
    assert sorted(out.recorded_ratings) == sorted(out.expected_ratings)
    assert len(out.stored_ids) == len(set(out.stored_ids)) and set(out.stored_ids) == out.expected_papers
    assert out.runs and set(out.runs) == {"ok"}
