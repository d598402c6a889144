"""The real corpus of ``benchmarks/data/`` spread over a year of announcement days, at any size.

Paper ``i`` of ``n`` is corpus paper ``i mod len(corpus)``; past the corpus's length its arXiv id
gets a suffix that makes it distinct (``2604.01234.1``, ``.2``, …): titles, abstracts, authors
and categories are all real. Paper ``i`` is announced ``(i * days) // n`` days before
``last_day``. Shared by bench_web.py (100,000 papers) and bench_year.py (up to all of arXiv):
one day at a time, so that millions of papers never sit in memory at once.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from typing import Iterator

from watcher.models import Paper


def distinct(base: list[Paper], i: int, day: date) -> Paper:
    """Paper ``i``: the corpus's ``i mod len(base)``-th, with a distinct id, announced on ``day``."""
    p = base[i % len(base)]
    return replace(p, arxiv_id=f"{p.arxiv_id}.{i // len(base)}" if i >= len(base) else p.arxiv_id,
                   announced=day)


def spread(base: list[Paper], n: int, last_day: date, days: int) -> Iterator[tuple[date, list[Paper]]]:
    """``(day, papers)`` for each of the ``days`` days ending on ``last_day``, oldest first: the
    papers ``i`` with ``(i * days) // n`` days before ``last_day`` (newest index first within a day)."""
    for k in range(days - 1, -1, -1):
        first = -(-k * n // days)  # the smallest i with (i * days) // n == k
        end = -(-(k + 1) * n // days)
        day = last_day - timedelta(days=k)
        yield day, [distinct(base, i, day) for i in range(end - 1, first - 1, -1)]
