"""A digest's ``order``: the sort keys of its papers, by name (pure; config checks a digest's
``order`` against :data:`ORDERS` without loading the matcher)."""

from __future__ import annotations

from datetime import datetime, timezone

from ..models import Match

_EPOCH = datetime.min


def newest_first(m: Match) -> tuple:
    """Sort key for digest order ``date``: newest first by the date an entry shows (the first
    version's submission, else the announcement day), then the best match (papers of one
    listing day share their date), then title."""
    p = m.paper
    when = p.entry_date
    stamp = when.astimezone(timezone.utc).replace(tzinfo=None) if when else _EPOCH
    return (-(stamp - _EPOCH).total_seconds(), -m.score, p.title)


def best_first(m: Match) -> tuple:
    """Sort key for digest order ``score``: the best match first, then newest first."""
    return (-m.score, *newest_first(m))


ORDERS = {"date": newest_first, "score": best_first}  # a digest's ``order``
