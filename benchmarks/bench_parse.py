"""Benchmark: arXiv API Atom parsing (and parse + store) in entries per second, on one core.

Builds 2,000- and 20,000-entry API responses in the 2026 layout from real papers (the corpus
shipped in ``benchmarks/data/``, repeated with fresh ids as needed) and prints::

    parse_atom_per_s N=2000 VALUE entries/s
    parse_atom_per_s N=20000 VALUE entries/s
    feedparser_per_s N=2000 VALUE entries/s          (for comparison)
    ingest_atom_per_s N=20000 VALUE entries/s        (parse + Store.upsert into a fresh SQLite)

Run: ``python benchmarks/bench_parse.py`` (target: parse+store >= 5,000 entries/s).
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import corpus_records  # noqa: E402
from inputs import build_atom  # noqa: E402
from watcher.formats import arxiv_atom  # noqa: E402

def load_records(limit: int | None = None) -> list[dict]:
    """Real paper records (id, title, authors, summary, categories, comment) from the corpus
    shipped in ``benchmarks/data/`` (duplicate lines kept: they are part of the real input)."""
    return corpus_records()[:limit]


def rate(fn, n: int, repeat: int = 3) -> float:
    """Best of ``repeat`` runs, as items per second."""
    best = min(_timed(fn) for _ in range(repeat))
    return n / best


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    """Print the figures."""
    records = load_records()
    for n in (2000, 20000):
        doc = build_atom(records, n)
        assert len(arxiv_atom.parse(doc, "bench").papers) == n
        print(f"parse_atom_per_s N={n} {rate(lambda: arxiv_atom.parse(doc, 'bench'), n):.0f} entries/s"
              f"  ({len(doc) / 1e6:.1f} MB)")
    try:
        import feedparser
    except ImportError:
        feedparser = None
    if feedparser:
        doc = build_atom(records, 2000)
        print(f"feedparser_per_s N=2000 {rate(lambda: feedparser.parse(doc), 2000, 1):.0f} entries/s")
    try:
        from watcher.store import Store
    except ImportError:
        return
    doc = build_atom(records, 20000)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db")
        now = datetime.now(timezone.utc)
        t0 = time.perf_counter()
        counts = store.upsert(arxiv_atom.parse(doc, "bench").papers, now)
        elapsed = time.perf_counter() - t0
        store.close()
    print(f"ingest_atom_per_s N=20000 {20000 / elapsed:.0f} entries/s  ({len(counts.new)} new)")


if __name__ == "__main__":
    main()
