"""The identity rules of SPEC §6, as pure functions: how two listings of one paper merge.

A paper is one paper across sources and versions: its arXiv id without version when known,
else its normalised-title fingerprint (:attr:`watcher.models.Paper.key`). :func:`merge` says
what the stored paper becomes after another listing of it; :func:`merge_batch` applies the
rules within one batch, so that the store sees each paper once. No I/O.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime

from .models import Paper

_PAPER_FIELDS = [f.name for f in fields(Paper)]


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
    same id, or an id-less listing of the same title; an id-less listing matches any paper of
    the same title. Two different ids never merge, whatever their titles."""
    out: list[Paper] = []
    by_key: dict[str, int] = {}
    first_by_title: dict[str, int] = {}  # title -> the first paper of that title
    idless_by_title: dict[str, int] = {}  # title -> the first id-less paper of that title
    for p in papers:
        fp = p.fingerprint
        i = by_key.get(p.key)
        if i is None:
            i = idless_by_title.get(fp) if p.arxiv_id else first_by_title.get(fp)
        if i is None:
            i = len(out)
            out.append(p)
            first_by_title.setdefault(fp, i)
            if not p.arxiv_id:
                idless_by_title.setdefault(fp, i)
        else:
            out[i] = merge(out[i], p)
            if out[i].arxiv_id and idless_by_title.get(fp) == i:
                del idless_by_title[fp]  # it has an id now: another id must not merge into it
        by_key[out[i].key] = i
    return out
