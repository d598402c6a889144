"""The identity rules of SPEC §6, as pure functions: how two listings of one paper merge.

A paper is one paper across sources and versions: its arXiv id without version when known,
else its normalised-title fingerprint (:attr:`watcher.models.Paper.key`). A listing without an id
is the paper of the same title only where nothing contradicts it (:func:`contradicts`: other
authors, a date far apart): common titles ("A Survey of Large Language Models", "Technical
Report") belong to many papers. :func:`merge` says what the stored paper becomes after another
listing of it; :func:`merge_batch` applies the rules within one batch, so that the store sees
each paper once. No I/O.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime, timedelta

from .models import Paper, surnames

_PAPER_FIELDS = [f.name for f in fields(Paper)]
DATE_SLACK = timedelta(days=30)  # first-version dates of one paper in two listings: the same
# submission, give or take a day (time zones, date-only listings); papers further apart differ


def contradicts(a: Paper, b: Paper) -> bool:
    """Whether two listings of one title cannot be the same paper: both name authors and no
    surname is common to them, or both give a first-version date and those lie more than
    DATE_SLACK apart. Missing values contradict nothing."""
    if a.arxiv_id and b.arxiv_id:
        return a.arxiv_id != b.arxiv_id
    if a.authors and b.authors:
        mine, theirs = surnames(a.authors), surnames(b.authors)
        if mine and theirs and not mine & theirs:
            return True
    if a.published and b.published and abs(a.published - b.published) > DATE_SLACK:
        return True
    return False


def merge(old: Paper, new: Paper) -> Paper:
    """The stored paper after seeing ``new``: a newer or equal version's text wins, known values
    are never replaced by unknown ones, the first-version date stays, upvotes refresh."""
    merged = Paper(**{n: getattr(old, n) for n in _PAPER_FIELDS})
    newer = (new.version or 0) >= (old.version or 0)
    for name in _PAPER_FIELDS:
        value = getattr(new, name)
        if value is None or value == [] or value == "":
            continue
        if name == "published":
            old_pub = old.published
            vague = old_pub is not None and old_pub.time() == datetime.min.time() and (
                old_pub.date() == value.date())
            if old_pub is None or vague:
                merged.published = value
        elif name == "version":
            merged.version = max(value, old.version or 0)
        elif name == "announced":
            merged.announced = max(value, old.announced) if old.announced else value
        elif name in ("source", "announce_type", "url"):
            if getattr(old, name) is None:
                setattr(merged, name, value)
        elif name in ("title", "abstract", "authors", "updated") and not newer:
            if not getattr(old, name):
                setattr(merged, name, value)
        elif name == "arxiv_id":
            merged.arxiv_id = value
        else:
            setattr(merged, name, value)
    return merged


def merge_batch(papers: list[Paper]) -> list[Paper]:
    """Each paper of ``papers`` once, by the store's identity rules, merged in order with
    :func:`merge`; the first occurrence's place is kept. A paper with an arXiv id matches the
    same id, or an id-less listing of the same title that nothing contradicts; an id-less
    listing matches the first paper of the same title that nothing contradicts. Two different
    ids never merge, whatever their titles."""
    out: list[Paper] = []
    by_key: dict[str, int] = {}
    by_title: dict[str, list[int]] = {}  # title -> the papers of that title, first seen first
    for p in papers:
        fp = p.fingerprint
        i = by_key.get(p.key)
        if i is None:
            i = next((j for j in by_title.get(fp, ())
                      if not (p.arxiv_id and out[j].arxiv_id) and not contradicts(out[j], p)), None)
        if i is None:
            i = len(out)
            out.append(p)
            by_title.setdefault(fp, []).append(i)
        else:
            out[i] = merge(out[i], p)
        by_key[out[i].key] = i
    return out
