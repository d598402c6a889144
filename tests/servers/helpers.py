"""Test helpers: recorded inputs from ``tests/data``, a fast HTTP client, the command line in
process (``run_cli``), folders built once per test process, and the stand-in servers' base."""

from __future__ import annotations

import gzip
import socket
import subprocess
import threading
from datetime import datetime, timezone
from http.server import ThreadingHTTPServer
from pathlib import Path

from watcher.util.http import HttpClient
from watcher.sources.base import SourceContext

DATA = Path(__file__).resolve().parent.parent / "data"
UA = "watcher-test (mailto:test@example.org)"


def data(name: str) -> bytes:
    """The bytes of a recorded input (``.gz`` copies are decompressed)."""
    path = DATA / name
    if not path.exists():
        path = DATA / (name + ".gz")
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


class Sleeps(list):
    """A ``sleep`` that records the delays asked for and sleeps only a token amount."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def fast_client(**kw) -> HttpClient:
    """An HttpClient with tiny delays: retries and Retry-After are recorded, not slept. Its
    timeout is generous (a loaded machine's local server may be slow to answer); the tests of
    timeouts give a short one and a server that stalls far longer."""
    options = dict(timeout=10.0, min_interval=0.0, retries=3, backoff=0.001, max_backoff=0.01,
                   retry_after_cap=120, sleep=Sleeps())
    options.update(kw)
    return HttpClient(UA, **options)


def context(client: HttpClient, now: datetime | None = None, since: datetime | None = None):
    """A SourceContext with this client and a fixed clock."""
    now = now or datetime(2026, 4, 13, 12, 0, tzinfo=timezone.utc)
    return SourceContext(now=now, http=client, user_agent=UA, since=since)


def mailed_links_config(smtp_port: int | str, base_url: str = "https://papers.example.org") -> str:
    """A config of one RAG profile over the listing ``day.jsonl.gz``, digested daily to an e-mail
    channel at 127.0.0.1:``smtp_port`` with rating links to ``base_url`` (secret: WATCHER_TEST_SECRET)."""
    return f"""
[watcher]
database = "watcher.db"

[source.day]
type = "listing"
path = "day.jsonl.gz"

[profile.mine]
query = '"retrieval-augmented" OR RAG OR "retrieval augmented"'

[digest.daily]
profiles = ["mine"]
every = "1d"
channels = ["mail"]

[channel.mail]
type = "email"
host = "127.0.0.1"
port = {smtp_port}
security = "none"
from = "watcher <bot@example.org>"
to = ["me@example.org"]

[web]
base_url = "{base_url}"
secret_env = "WATCHER_TEST_SECRET"
"""


# --- the command line, in process ----------------------------------------------------------

def _as_a_new_process() -> None:
    """Forget what watcher keeps for the life of its process, as a new ``python -m watcher``
    starts without it: the shared HTTP client (it read the ``$WATCHER_HTTP_*`` knobs when it was
    made, and keeps each host's rate limit), the secrets remembered for masking (a secret
    another test made known must not hide a leak here), and the summarizer's paused endpoints.
    Memoised pure functions (templates, stems, TL;DRs) are left: they give the same answers."""
    from watcher.util import http
    from watcher import masking
    from watcher.present import summarize

    with http._shared_lock:
        http._shared.clear()
    masking._SECRETS.clear()
    masking._FORMS = (0, [])
    summarize._PAUSED.clear()


# Loggers whose level a command sets (watcher.util.logs.configure, serve): put back after each call,
# so one in-process command cannot change what the next test logs.
_LOGGERS = ("", "watcher", "watcher.progress", "apscheduler", "httpx", "httpcore")


def run_cli(*args: str, cwd=None, env: dict | None = None, input: bytes | str | None = None,
            text: bool = False) -> "subprocess.CompletedProcess":
    """``watcher ARGS`` run in this process through click's CliRunner, answered as
    :func:`conftest.run_watcher` answers for a real ``python -m watcher``: a CompletedProcess
    with the exit code and the bytes (``text``: str) of stdout and stderr, ``$WATCHER_CONFIG``
    unset, ``env`` added to the environment and ``cwd`` the working folder for the call.

    What only a process has is kept as a process would show it: an exception that escapes the
    command is its traceback on stderr and exit 1 (so "no traceback" checks keep their
    strength), and the logging the command configured is put back afterwards. Use the real
    process (``run_watcher``) for signals, locks held across processes, ``kill -9``, the daemon,
    a closed stdout, a terminal, and the installed entry point."""
    import logging
    import os
    import subprocess
    import traceback

    from click.testing import CliRunner

    from watcher.cli import cli

    _as_a_new_process()
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stderr apart
    saved = {name: (logging.getLogger(name).level, list(logging.getLogger(name).handlers)) for name in _LOGGERS}
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = runner.invoke(cli, [str(a) for a in args], input=input, prog_name="watcher",
                               env={"WATCHER_CONFIG": None, **(env or {})}, catch_exceptions=True)
    finally:
        os.chdir(here)
        for name, (level, handlers) in saved.items():
            logger = logging.getLogger(name)
            logger.setLevel(level)
            logger.handlers[:] = handlers
    stdout, stderr, code = result.stdout_bytes, result.stderr_bytes, result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception)).encode()  # as Python's own exit
        code = 1
    if text:
        return subprocess.CompletedProcess(["watcher", *args], code, stdout.decode(errors="replace"),
                                           stderr.decode(errors="replace"))
    return subprocess.CompletedProcess(["watcher", *args], code, stdout, stderr)


def run_cli_text(*args: str, **kw) -> "subprocess.CompletedProcess":
    """:func:`run_cli` answering text, as :func:`deliverkit.run_watcher` does."""
    return run_cli(*args, text=True, **kw)


# --- folders built once per test process ----------------------------------------------------

_BUILT: dict = {}


def built_once(key: str, build) -> "Path":
    """A folder that ``build(folder)`` filled, built once per test process (each xdist worker
    has its own) under a temporary folder removed at exit; :func:`copy_folder` gives each test
    its own copy. For what many tests start from and none may change (the sample's database,
    a fetched corpus day): building it costs a watcher run, a copy a few milliseconds."""
    if key not in _BUILT:
        import atexit
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix=f"watcher-{key}-"))
        atexit.register(shutil.rmtree, folder, True)
        build(folder)
        _BUILT[key] = folder
    return _BUILT[key]


def copy_folder(src: "Path", dst: "Path") -> "Path":
    """Copy the folder ``src`` into ``dst``: files as they are, SQLite databases (``*.db``)
    through SQLite's backup (a consistent copy, its write-ahead log included), lock files left out."""
    import shutil
    import sqlite3

    dst.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.db", "*.db-*", "*.lock"))
    for db in src.rglob("*.db"):
        source, target = sqlite3.connect(db), sqlite3.connect(dst / db.relative_to(src))
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
    return dst


# --- local HTTP stand-ins -------------------------------------------------------------------

class QuietHTTPServer(ThreadingHTTPServer):
    """The stand-in servers' ThreadingHTTPServer: a client that hangs up first (a timeout, a
    cut-off read, the end of a test) is no error of the server's; anything else is printed on
    the real stderr (never on a stderr an in-process command is being captured on)."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys
        import traceback

        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        print(f"stand-in server: error with {client_address}:", file=sys.__stderr__)
        traceback.print_exc(file=sys.__stderr__)


class RawServer:
    """A plain TCP server on 127.0.0.1 for protocol misbehaviour no HTTP library writes (a
    server dripping bytes, an SMTP server quoting AUTH): each connection is handed to
    ``answer(conn)`` in a thread of its own; a context manager, or call ``close()``."""

    def __init__(self, host: str = "127.0.0.1"):
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
