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
from datetime import datetime, timedelta, timezone
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import corpus_records  # noqa: E402
from watcher.formats import arxiv_atom  # noqa: E402

HEAD = """<?xml version='1.0' encoding='UTF-8'?>
<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" \
xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">
  <id>https://arxiv.org/api/bench</id>
  <title>arXiv Query: search_query=bench&amp;start=0&amp;max_results={n}</title>
  <updated>2026-04-12T22:09:26Z</updated>
  <opensearch:itemsPerPage>{n}</opensearch:itemsPerPage>
  <opensearch:totalResults>{total}</opensearch:totalResults>
  <opensearch:startIndex>{start}</opensearch:startIndex>
"""


def load_records(limit: int | None = None) -> list[dict]:
    """Real paper records (id, title, authors, summary, categories, comment) from the corpus
    shipped in ``benchmarks/data/`` (duplicate lines kept: they are part of the real input)."""
    return corpus_records()[:limit]


def entry_xml(rec: dict, arxiv_id: str, when: datetime) -> str:
    """One ``<entry>`` in the 2026 layout."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    cats = rec.get("categories") or ["cs.LG"]
    parts = [
        f"  <entry>\n    <id>http://arxiv.org/abs/{arxiv_id}v1</id>\n",
        f"    <title>{escape(' '.join(rec['title'].split()))}</title>\n",
        f"    <updated>{stamp}</updated>\n",
        f'    <link href="https://arxiv.org/abs/{arxiv_id}v1" rel="alternate" type="text/html"/>\n',
        f'    <link href="https://arxiv.org/pdf/{arxiv_id}v1" rel="related" type="application/pdf" title="pdf"/>\n',
        f"    <summary>{escape(' '.join((rec.get('summary') or '').split()))}</summary>\n",
    ]
    parts += [f'    <category term={quoteattr(c)} scheme="http://arxiv.org/schemas/atom"/>\n' for c in cats]
    parts.append(f"    <published>{stamp}</published>\n")
    if rec.get("comment"):
        parts.append(f"    <arxiv:comment>{escape(rec['comment'])}</arxiv:comment>\n")
    parts.append(f"    <arxiv:primary_category term={quoteattr(cats[0])}/>\n")
    parts += [f"    <author>\n      <name>{escape(a)}</name>\n    </author>\n"
              for a in rec.get("authors") or []]
    parts.append("  </entry>\n")
    return "".join(parts)


def build_atom(records: list[dict], n: int, start: int = 0, total: int | None = None) -> bytes:
    """An API response of ``n`` entries, newest first, ids 2604.00001... unique per index."""
    when = datetime(2026, 4, 10, 18, 0, tzinfo=timezone.utc)
    out = [HEAD.format(n=n, total=total if total is not None else n, start=start)]
    for i in range(n):
        rec = records[i % len(records)]
        idx = start + i
        out.append(entry_xml(rec, f"26{idx // 90000 + 4:02d}.{idx % 90000 + 1:05d}",
                             when - timedelta(seconds=30 * idx)))
    out.append("</feed>\n")
    return "".join(out).encode("utf-8")


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
