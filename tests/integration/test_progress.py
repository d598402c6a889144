"""Long work shows progress (docs/deployment.md): a bar with counts and time left when stderr is a
terminal, a log line at most every ``interval`` seconds otherwise, never anything on stdout."""

from __future__ import annotations

import pytest

import fcntl
import io
import logging
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from functools import partial

from arxivserver import PagedFeed
from conftest import REPO, SEED_DIGEST
from helpers import run_cli
from helpers import context, data, fast_client
from httpserver import Reply, server  # noqa: F401
from test_formats_arxiv import with_token

from watcher.util import progress
from watcher.sources import source_config
from watcher.cli.convert import convert_inputs
from watcher.sources import make_source

PAGE = "arxivpy2026_q_testing_s0_m100_cfe7536492ca.xml"  # 100 real arXiv API entries


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def progress_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "watcher.progress" and r.levelno == logging.INFO]


# --- not a terminal: rate-limited log lines ---------------------------------------------------

def test_log_lines_come_at_most_once_per_interval_with_counts_and_time_left(caplog, capsys):
    clock = Clock()
    caplog.set_level(logging.INFO, logger="watcher")
    work = progress.start("source oai", total=100, unit="papers", stream=io.StringIO(),
                          interval=30, clock=clock)
    assert isinstance(work, progress.LogProgress)
    with work:
        for _ in range(100):  # one paper a second for 100 s
            clock.now += 1
            work.advance()
    assert progress_lines(caplog) == [
        "source oai: 30 of 100 papers (30%), about 1 min left",
        "source oai: 60 of 100 papers (60%), about 40 s left",
        "source oai: 90 of 100 papers (90%), about 10 s left",
        "source oai: done, 100 papers in 2 min",
    ]
    assert capsys.readouterr().out == ""


def test_quick_work_logs_nothing_and_an_unknown_total_says_so_far(caplog):
    clock = Clock()
    caplog.set_level(logging.INFO, logger="watcher")
    with progress.start("convert", total=3, unit="inputs", stream=io.StringIO(), clock=clock) as work:
        for _ in range(3):
            clock.now += 5
            work.advance()
    assert progress_lines(caplog) == []  # 15 s of work: under the 30 s interval
    with progress.start("source api", unit="papers", stream=io.StringIO(), interval=10, clock=clock) as work:
        clock.now += 12
        work.advance(2000)
    assert progress_lines(caplog) == ["source api: 2,000 papers so far", "source api: done, 2,000 papers in 12 s"]


def test_work_that_fails_says_stopped_not_done(caplog):
    clock = Clock()
    caplog.set_level(logging.INFO, logger="watcher")
    try:
        with progress.start("source api", total=10, unit="papers", stream=io.StringIO(), clock=clock) as work:
            clock.now += 40
            work.advance(4)
            raise RuntimeError("page 2 failed")
    except RuntimeError:
        pass
    assert progress_lines(caplog) == ["source api: 4 of 10 papers (40%), about 1 min left",
                                      "source api: stopped, 4 papers in 40 s"]


def logged_progress(caplog):
    """A progress factory that logs at every step (interval 0): what a source reports."""
    caplog.set_level(logging.INFO, logger="watcher")
    return partial(progress.start, stream=io.StringIO(), interval=0)


def test_arxiv_source_reports_papers_of_total_results(server, caplog):
    server.route("/api/query", PagedFeed(data(PAGE)).reply)
    cfg = source_config(name="api", type="arxiv", url=server.url("/api/query"), query="all:testing",
                       page_size=40, timeout=10.0, first_fetch=timedelta(days=365 * 30))
    ctx = replace(context(fast_client()), progress=logged_progress(caplog))
    assert len(make_source(cfg, ctx).fetch({}).papers) == 100
    lines = progress_lines(caplog)
    assert lines[:3] == ["source api: 40 of 100 papers (40%), about 0 s left",
                         "source api: 80 of 100 papers (80%), about 0 s left",
                         "source api: 100 of 100 papers (100%)"]
    assert lines[3].startswith("source api: done, 100 papers in ")


def test_oai_source_reports_records_of_complete_list_size(server, caplog):
    page1 = with_token(data("oai_ListRecords_arxiv-physics-hep-ex.xml"), "tok|1")
    page2 = data("oai_ListRecords_arxiv-physics-hep-th.xml")
    server.route("/oai", lambda req: Reply(body=page2 if "resumptionToken" in req.query else page1))
    cfg = source_config(name="oai", type="arxiv-oai", url=server.url("/oai"), timeout=10.0)
    since = datetime(2025, 1, 1, tzinfo=timezone.utc)
    ctx = replace(context(fast_client(), since=since), progress=logged_progress(caplog))
    assert len(make_source(cfg, ctx).fetch({}).papers) == 6
    counts = [re.match(r"source oai: (\d+) of 6 papers", line) for line in progress_lines(caplog)[:2]]
    assert all(counts) and int(counts[0][1]) < int(counts[1][1]) == 6


def test_hf_daily_source_reports_days(server, caplog):
    server.route("/hf/daily_papers", Reply(body=data("hf_daily_papers_2025-04-10.json")))
    cfg = source_config(name="hf", type="hf-daily", url=server.url("/hf"), timeout=10.0)
    since = datetime(2025, 4, 10, tzinfo=timezone.utc)
    now = datetime(2025, 4, 14, 12, tzinfo=timezone.utc)
    ctx = replace(context(fast_client(), now=now, since=since), progress=logged_progress(caplog))
    make_source(cfg, ctx).fetch({})
    lines = progress_lines(caplog)
    assert [line.split(" (")[0] for line in lines[:5]] == [f"source hf: {n} of 5 days" for n in range(1, 6)]


def test_convert_reports_inputs_and_returns_the_same_data(tmp_path, caplog):
    seed = SEED_DIGEST.read_bytes().decode()
    paths = [str(SEED_DIGEST)] * 3
    shown = convert_inputs(paths, progress=logged_progress(caplog))
    assert [line.split(" (")[0] for line in progress_lines(caplog)[:3]] == [
        f"convert: {n} of 3 inputs" for n in (1, 2, 3)]
    assert shown == convert_inputs(paths, progress=progress.silent) == seed


# --- a terminal: a bar on stderr; stdout stays data ---------------------------------------------

def run_on_terminal(*args: str, cwd, columns: int = 100) -> tuple[bytes, bytes, int]:
    """Run ``watcher ARGS`` with stderr on a pseudo-terminal (``columns`` wide; 0: a terminal
    that reports no size) and stdout on a pipe; return (stdout, what the terminal showed, exit
    status)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30 if columns else 0, columns, 0, 0))
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("WATCHER_CONFIG", None)
    proc = subprocess.Popen([sys.executable, "-m", "watcher", *args], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown = bytearray()

    def drain():
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's last writer has gone
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=60)
    reader.join(10)
    os.close(master)
    return out, bytes(shown), proc.returncode


FETCH_CONFIG = """
[watcher]
database = "watcher.db"

[source.api]
type = "arxiv"
query = "all:testing"
url = "{url}"
page_size = 10

[profile.p]
query = "testing"

[digest.d]
profiles = ["p"]
every = "1d"
channels = ["out"]

[channel.out]
type = "stdout"
"""

BAR_COUNT = re.compile(rb"source api:\s+\d+%\|[^|]*\| *(\d+)/100 \[\d\d:\d\d<\d\d:\d\d")


def test_backfill_on_a_terminal_shows_a_bar_with_counts_and_time_left(server, tmp_path):
    feed = PagedFeed(data(PAGE))
    server.route("/api/query", lambda req: replace(feed.reply(req), delay=0.15))  # 10 pages, >= 1.5 s
    for folder in ("tty", "pipe"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "config.toml").write_text(FETCH_CONFIG.format(url=server.url("/api/query")))
    out, shown, status = run_on_terminal("fetch", "--since", "2000-01-01", cwd=tmp_path / "tty")
    assert status == 0, shown
    counts = [int(n) for n in BAR_COUNT.findall(shown)]
    assert counts and counts == sorted(counts) and all(n % 10 == 0 for n in counts)  # pages of 10
    assert b"\r" in shown  # drawn in place, erased when done
    piped = run_cli("--log-level", "info", "fetch", "--since", "2000-01-01", cwd=tmp_path / "pipe")
    assert out == piped.stdout == b"api: 100 new, 0 updated, 0 unchanged\n"
    assert b"\r" not in piped.stderr and b"%|" not in piped.stderr  # no bar off a terminal


@pytest.mark.slow  # a large convert in a real pseudo-terminal (the backfill's bar on one stays in the inner loop)
def test_large_convert_on_a_terminal_shows_a_bar_and_stdout_stays_the_data(server, tmp_path):
    seed = SEED_DIGEST.read_bytes()
    server.route("/seed.txt", Reply(body=seed, delay=0.35))
    urls = [server.url("/seed.txt")] * 4  # >= 1.4 s of reading: past the bar's 1 s delay
    out, shown, status = run_on_terminal("convert", *urls, cwd=tmp_path)
    assert status == 0, shown
    assert out == seed  # byte for byte the data, nothing of the bar
    assert re.search(rb"convert:\s+\d+%\|[^|]*\| *[1-4]/4 \[\d\d:\d\d<\d\d:\d\d", shown), shown
    as_json, shown, _ = run_on_terminal("convert", *urls, "--to", "json", cwd=tmp_path, columns=0)
    assert re.search(rb"convert:\s+\d+%\|[^|]*\| *[1-4]/4 ", shown), shown  # a bar without a size too
    assert as_json == run_cli("convert", str(SEED_DIGEST), "--to", "json", cwd=tmp_path).stdout


# --- where the log lines go ----------------------------------------------------------------

def test_progress_lines_reach_the_journal_at_the_default_level_and_error_hides_them(tmp_path, monkeypatch):
    """Under systemd the line carries the info priority <6>; a timer unit or cron job at the
    default level (warning) still logs progress; --log-level error hides it."""
    from watcher.util.logs import configure

    root = logging.getLogger()
    saved = root.handlers[:], root.level
    journal = open(tmp_path / "journal", "w")
    st = os.fstat(journal.fileno())
    monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
    clock = Clock()
    try:
        for level in ("warning", "error"):
            configure(level, stream=journal)
            with progress.start("source oai", total=4, unit="papers", stream=journal, interval=30,
                                clock=clock) as work:
                clock.now += 31
                work.advance()
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("watcher.progress").setLevel(logging.NOTSET)
        journal.close()
    assert (tmp_path / "journal").read_text() == (
        "<6>source oai: 1 of 4 papers (25%), about 2 min left\n<6>source oai: done, 1 papers in 31 s\n")
