"""Two writers and more on one database: the daemon, the command line and the web inbox at once.

    run_stress(folder, seconds, day, more) -> Outcome

Writes ``config.toml`` in ``folder`` (two listing sources: ``day``, a real corpus day, and a
JSON Lines file that grows with the papers of ``more`` while the run goes on; two profiles; a
digest to a file channel), fetches once, then for ``seconds`` runs side by side:

* the daemon: :meth:`watcher.cycle.daemon.Daemon.run_digests` cycles, in a thread of this process
  (its own connections), each after ten more papers were appended to the growing listing:
  fetch, store, match, deliver, record;
* the command line: ``python -m watcher rate down PAPER --profile vision`` processes, one after
  the other;
* the web inbox: its ASGI app (Starlette's test client), reading the inbox and a search and
  posting 👍 buttons for profile ``rag``.

Then it fetches once more and reads the database: every rating each actor was told was recorded
and nothing else, every paper of both listings stored once, every cycle's run ``ok``.
``tests/integration/test_two_writers.py`` runs it for a few seconds; ``bench_concurrency.py`` for longer.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CONFIG = """
[watcher]
database = "watcher.db"

[source.day]
type = "listing"
path = "day.jsonl"

[source.more]
type = "listing"
path = "more.jsonl"

[profile.rag]
query = '"retrieval-augmented" OR RAG OR "retrieval augmented" OR retrieval'

[profile.vision]
query = 'image OR images OR vision OR visual'

[digest.daily]
profiles = ["rag", "vision"]
every = "1d"
channels = ["archive"]

[channel.archive]
type = "file"
path = "digests/{digest}-{date}.{ext}"
"""


@dataclass
class Outcome:
    """What each actor did and what the database holds afterwards."""

    seconds: float = 0.0
    cycles: int = 0
    web_ratings: int = 0
    web_reads: int = 0
    cli_ratings: int = 0
    expected_ratings: set = field(default_factory=set)  # (profile, paper key, value)
    recorded_ratings: list = field(default_factory=list)
    expected_papers: set = field(default_factory=set)  # arXiv ids of both listings
    stored_ids: list = field(default_factory=list)  # the arxiv_id of every stored row
    runs: list = field(default_factory=list)  # status of every daemon cycle's run
    problems: list = field(default_factory=list)  # any answer but success, from any actor


def _lines(path: Path) -> list[bytes]:
    raw = path.read_bytes()
    raw = gzip.decompress(raw) if path.suffix == ".gz" else raw
    return [line for line in raw.split(b"\n") if line.strip()]


def _watcher(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m watcher ARGS`` in ``folder``, as a user runs it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("WATCHER_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "watcher", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)


def run_stress(folder: Path, seconds: float, day: Path, more: Path) -> Outcome:
    """Run the three actors on a database in ``folder`` for ``seconds``; see the module."""
    from watcher.config import load_config
    from watcher.cycle.daemon import Daemon
    from watcher.models import parse_arxiv_id
    from watcher.services.ratings import ratings
    from watcher.store import Store
    from watcher.web.app import create_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(CONFIG)
    (folder / "day.jsonl").write_bytes(b"\n".join(_lines(day)) + b"\n")
    pending = _lines(more)
    growing = folder / "more.jsonl"
    growing.write_bytes(b"\n".join(pending[:10]) + b"\n")
    shown = 10
    out = Outcome()
    r = _watcher(folder, "fetch")
    if r.returncode != 0:
        raise RuntimeError(f"the first fetch failed: {r.stderr}")
    config = load_config(folder / "config.toml")
    db = folder / "watcher.db"
    with Store.open(db, readonly=True) as store:
        keys = [k for (k,) in store.db.execute("SELECT key FROM papers ORDER BY key")]
    stop = threading.Event()
    lock = threading.Lock()

    def problem(text: str) -> None:
        with lock:
            out.problems.append(text)

    def told(ok: bool, rating: tuple, counter: str, failure: str) -> None:
        """An actor's rating: recorded as it was told (``counter`` counts it), or a problem."""
        if not ok:
            return problem(failure)
        with lock:
            out.expected_ratings.add(rating)
            setattr(out, counter, getattr(out, counter) + 1)

    def daemon() -> None:
        nonlocal shown
        d = Daemon(folder / "config.toml")
        d.config = config
        d.lock_retries = (0.5, 1.0, 2.0)
        while not stop.is_set():
            if shown < len(pending):
                growing.write_bytes(b"\n".join(pending[:shown + 10]) + b"\n")
                shown += 10
            d.run_digests(["daily"])
            out.cycles += 1

    def web() -> None:  # Starlette's test client calls itself "testserver": a host to allow
        app = create_app(replace(config, web=replace(config.web, hosts=(*config.web.hosts, "testserver"))), db)
        i = 0
        with TestClient(app, follow_redirects=False) as c:
            token = None
            while not stop.is_set():
                page = c.get("/") if i % 2 else c.get("/search", params={"q": "retrieval"})
                if page.status_code != 200:
                    said = re.search(r'<p class="error">(.*?)</p>', page.text, re.S)
                    problem(f"web read {page.request.url.path} {page.status_code}: "
                            f"{said.group(1) if said else page.text[:200]}")
                out.web_reads += 1
                if token is None:
                    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
                    token = found.group(1) if found else None
                key = keys[(i * 7) % len(keys)]
                r = c.post("/rate", data={"csrf": token or "", "action": "up", "profile": "rag",
                                          "paper": key})
                told(r.status_code == 303, ("rag", key, "up"), "web_ratings",
                     f"web rating {r.status_code}: {r.text[:200]}")
                i += 1

    def cli() -> None:
        i = 0
        while not stop.is_set():
            key = keys[(i * 11 + 3) % len(keys)]
            r = _watcher(folder, "rate", "down", key, "--profile", "vision")
            told(r.returncode == 0, ("vision", key, "down"), "cli_ratings",
                 f"watcher rate exit {r.returncode}: {r.stderr.strip()}")
            i += 1

    started = time.monotonic()
    actors = [threading.Thread(target=f, name=f.__name__) for f in (daemon, web, cli)]
    for t in actors:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in actors:
        t.join(180)
    out.seconds = time.monotonic() - started
    growing.write_bytes(b"\n".join(pending) + b"\n")  # whatever the daemon had not reached yet
    r = _watcher(folder, "fetch")
    if r.returncode != 0:
        problem(f"the last fetch: {r.stderr.strip()}")
    for line in _lines(day) + pending:
        ident = parse_arxiv_id(str(json.loads(line).get("id") or ""))
        if ident:
            out.expected_papers.add(ident[0])
    with Store.open(db, readonly=True) as store:
        out.recorded_ratings = [(x.profile, x.paper, x.value) for x in ratings(store)]
        out.stored_ids = [i for (i,) in store.db.execute("SELECT arxiv_id FROM papers")]
        out.runs = [s for (s,) in store.db.execute("SELECT status FROM runs WHERE kind = 'run'")]
    return out
