"""The no-server state at a year's size: how big ``watcher state save`` makes the file, how long
saving and restoring take, and how big the state branch's remote grows over many saves.

    PYTHONPATH=. python benchmarks/bench_state.py [--papers 300000] [--digests 365]
        [--keep /work/bench-data/state-300k] [--saves 30] [--branch-papers 20000]

1. Builds (or reuses, with ``--keep``) a database the way :mod:`bench_web` does: the real corpus
   of ``benchmarks/data/`` repeated with distinct synthetic ids up to ``--papers`` papers over
   365 announcement days, stored with ``Store.upsert``, and ``--digests`` daily digests of the
   shipped config's profile delivered on the last days (``record_delivery`` with the issue, so
   every message keeps its papers as sent).
2. Runs ``watcher state save`` and ``watcher state restore`` on it as a user would (a real
   process each) and times them.
3. Through a real local bare git remote, runs ``--saves`` scheduled save/restore rounds of a
   smaller store (``--branch-papers`` papers, a day's papers and a digest added each round),
   then ``git gc --prune=now`` on the remote and reads ``git count-objects -v``.

Prints ``name value unit`` lines with the targets: ``state_file_mb <= 5``, ``state_save_s <= 10``,
``state_remote_ratio <= 3`` (the remote's size over one state file's).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import date, datetime, time as dtime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import read_corpus  # noqa: E402
from watcher.config import load_config  # noqa: E402
from watcher.matching.assemble import assemble  # noqa: E402
from watcher.matching.compile import compile_profiles  # noqa: E402
from watcher.store import Store  # noqa: E402

LAST_DAY = date(2026, 9, 30)
DAYS = 365


def synthetic(n: int, days: int = DAYS, last_day: date = LAST_DAY, offset: int = 0) -> list:
    """``n`` papers of the real corpus with distinct ids, spread over ``days`` days up to
    ``last_day``, oldest first (as bench_web builds them)."""
    base = read_corpus()
    papers = []
    for j in range(n):
        i = j + offset
        p = base[i % len(base)]
        day = last_day - timedelta(days=(j * days) // n)
        papers.append(replace(p, arxiv_id=f"{p.arxiv_id}.{i // len(base)}" if i >= len(base) else p.arxiv_id,
                              announced=day))
    papers.reverse()
    return papers


def write_config(folder: Path) -> Path:
    config_path = folder / "config.toml"
    config_path.write_text((ROOT / "config.toml").read_text().replace(
        'database = "watcher.db"', 'database = "state.db"'))
    return config_path


def build(folder: Path, n: int, digests: int) -> Path:
    """config.toml and a database of ``n`` papers with ``digests`` delivered daily digests."""
    config_path = write_config(folder)
    config = load_config(config_path)
    papers = synthetic(n)
    started = time.perf_counter()
    with Store.open(config.settings.database) as store:
        for start in range(0, n, 5000):
            chunk = papers[start:start + 5000]
            store.upsert(chunk, datetime.combine(chunk[-1].announced, dtime(6), timezone.utc))
        deliver_days(config, store, papers, digests)
        stored = store.count_papers()
    size = Path(config.settings.database).stat().st_size / 1e6
    print(f"# built {stored} papers, {digests} digests in {time.perf_counter() - started:.1f} s ({size:.0f} MB)",
          flush=True)
    return config_path


def deliver_days(config, store: Store, papers: list, digests: int) -> None:
    dcfg = config.digests["daily"]
    matchers = compile_profiles(config, dcfg.profiles, lookup=store.get)
    by_day: dict[date, list] = {}
    for p in papers:
        by_day.setdefault(p.announced, []).append(p)
    last = max(by_day)
    for k in range(digests, 0, -1):
        day = last - timedelta(days=k - 1)
        now = datetime.combine(day, dtime(21, 30), timezone.utc)
        digest = assemble("daily", "LLM-RL", day, by_day.get(day, []), matchers, now)
        store.record_delivery("daily", "archive", digest.papers, now, issue=digest)


if __name__ == "__main__" and sys.argv[1:2] == ["--build-only"]:
    folder = Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    build(folder, int(sys.argv[3]), int(sys.argv[4]))
