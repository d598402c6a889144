"""Short paper links (``h.…``) resolved by the ``short`` column's index against the scan that
hashed every key, with 100,000 papers without an arXiv id.

    PYTHONPATH=. python benchmarks/bench_short.py [--papers 100000] [--lookups 20000]

1. Builds a database at the schema before ``m011_short_keys``: the real corpus of
   ``benchmarks/data/`` without arXiv ids, as journal and PubMed items (a third each keyed by a
   synthetic DOI, a PMID and the title), with distinct titles up to ``--papers``, written as
   the store writes rows (the full-text index filled by its triggers).
2. Times the scan the store ran before (every key of a paper without an arXiv id hashed with
   ``short_key`` until one matches), on a few keys.
3. Opens the database with ``Store.open`` (the migration fills ``short`` and builds the
   index) and times that.
4. Times ``Store.get_short`` on ``--lookups`` random short keys, checking every answer.

Prints ``name value unit`` lines: ``short_scan_per_s`` (before), ``short_lookups_per_s`` (now)
and ``short_migration_s``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import sqlite_utils  # noqa: E402

from corpus import read_corpus  # noqa: E402
from watcher import store as store_module  # noqa: E402
from watcher.models import short_key  # noqa: E402
from watcher.store import Store  # noqa: E402

STAMP = "2026-01-01T00:00:00.000000+00:00"


def build(path: Path, n: int) -> list[str]:
    """A database of ``n`` papers without an arXiv id at the schema before m011; their keys."""
    db = sqlite_utils.Database(path)
    store_module.migrations.apply(db, stop_before="m011_short_keys")
    columns = {c.name for c in db["papers"].columns}
    base = read_corpus()
    keys, conn = [], db.conn
    with db.atomic():
        for i in range(n):
            p = base[i % len(base)]
            doi = f"10.5555/bench.{i}" if i % 3 == 0 else None  # a third each doi:, pmid:, title:
            p = replace(p, arxiv_id=None, version=None, title=f"{p.title} ({i})", doi=doi,
                        dois=[doi] if doi else [], pmid=str(30_000_000 + i) if i % 3 == 1 else None)
            row = {k: v for k, v in store_module._paper_row(p).items() if k in columns}
            row.update(first_seen=STAMP, last_changed=STAMP, day=row["day"] or STAMP[:10])
            conn.execute(f"INSERT INTO papers ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                         list(row.values()))
            keys.append(row["key"])
    db.close()
    return keys


def old_scan(store: Store, key: str):
    """The lookup before m011: hash every key of a paper without an arXiv id."""
    for (full,) in store.db.execute("SELECT key FROM papers WHERE arxiv_id IS NULL"):
        if short_key(full) == key:
            return store.get(full)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--lookups", type=int, default=20_000)
    args = parser.parse_args(argv)
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "short.db"
        started = time.perf_counter()
        keys = build(path, args.papers)
        print(f"# built {len(keys):,} papers without an arXiv id in {time.perf_counter() - started:.1f} s")
        scanned = rng.sample(keys, min(5, len(keys)))
        with Store.open(path, readonly=True) as old:
            started = time.perf_counter()
            for key in scanned:
                assert old_scan(old, short_key(key)).key == key
            scan = time.perf_counter() - started
        started = time.perf_counter()
        with Store.open(path) as s:
            migration = time.perf_counter() - started
            asked = [rng.choice(keys) for _ in range(args.lookups)]
            started = time.perf_counter()
            for key in asked:
                assert s.get_short(short_key(key)).key == key
            lookups = time.perf_counter() - started
    print(f"short_scan_per_s {len(scanned) / scan:.2f} lookups/s  (the scan before, "
          f"{scan / len(scanned) * 1000:.0f} ms each)")
    print(f"short_lookups_per_s {len(asked) / lookups:.0f} lookups/s  (Store.get_short, "
          f"{lookups / len(asked) * 1e6:.0f} µs each)")
    print(f"short_migration_s {migration:.2f} s  (m011 filling and indexing {len(keys):,} papers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
