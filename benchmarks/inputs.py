"""Benchmark inputs built from the real corpus (``benchmarks/data/``): arXiv API Atom documents,
Hugging Face Daily Papers JSON, and paper lists of any size.

Sizes beyond the corpus (8,751 lines) repeat it with synthetic, distinct arXiv ids: entry ``i``
gets ``26MM.NNNNN`` counted from 2604.00001, 90,000 per month, so 100,000 entries stay valid
new-style ids. Titles, abstracts, authors, categories and comments are the corpus's own.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from xml.sax.saxutils import escape, quoteattr

from watcher.models import Paper

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
NEWEST = datetime(2026, 4, 10, 18, 0, tzinfo=timezone.utc)


def synthetic_id(index: int) -> str:
    """The distinct arXiv id of entry ``index`` (2604.00001, 2604.00002, ...)."""
    return f"26{index // 90000 + 4:02d}.{index % 90000 + 1:05d}"


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
    """An API response of ``n`` entries, newest first, ids unique per index (see module doc)."""
    out = [HEAD.format(n=n, total=total if total is not None else n, start=start)]
    for i in range(n):
        rec = records[i % len(records)]
        idx = start + i
        out.append(entry_xml(rec, synthetic_id(idx), NEWEST - timedelta(seconds=30 * idx)))
    out.append("</feed>\n")
    return "".join(out).encode("utf-8")


def build_hf_json(records: list[dict], n: int, start: int = 0) -> bytes:
    """A Hugging Face ``/api/daily_papers`` response of ``n`` items in the 2025-09 field set
    (``paper.{id, authors[{name, hidden}], publishedAt, submittedOnDailyAt, title, summary,
    upvotes, ai_keywords, githubRepo}``), for the same ids as :func:`build_atom` with the same
    ``start``. Upvotes (``index % 97``) are synthetic; the corpus has none."""
    items = []
    for i in range(n):
        rec = records[i % len(records)]
        idx = start + i
        when = (NEWEST - timedelta(seconds=30 * idx)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        paper = {
            "id": synthetic_id(idx),
            "authors": [{"_id": f"{idx:08x}{k:04x}", "name": a, "hidden": False}
                        for k, a in enumerate(rec.get("authors") or [])],
            "publishedAt": when, "submittedOnDailyAt": when,
            "title": rec["title"], "summary": rec.get("summary") or "",
            "upvotes": idx % 97, "ai_keywords": [], "githubRepo": None,
        }
        items.append({"paper": paper, "publishedAt": when, "title": rec["title"],
                      "numComments": 0})
    return json.dumps(items, ensure_ascii=False, indent=2).encode("utf-8")


def distinct_papers(base: list[Paper], n: int) -> list[Paper]:
    """``n`` papers: ``base`` repeated, each repetition with ids made distinct (``.1``, ``.2``)."""
    return [replace(p, arxiv_id=f"{p.arxiv_id}.{i // len(base)}" if i >= len(base) else p.arxiv_id)
            for i, p in enumerate(base * (n // len(base) + 1))][:n]
