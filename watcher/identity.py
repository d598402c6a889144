"""The identity rules of SPEC §6, as pure functions: how two listings of one paper merge.

A paper is one paper across sources and versions: its arXiv id without version when known,
else its DOI, else its PMID, else its normalised-title fingerprint
(:attr:`watcher.models.Paper.key`). Two listings sharing any DOI or PMID
(:meth:`~watcher.models.Paper.identifiers`) are one work (SPEC §8): a bioRxiv preprint whose
``published`` DOI is a journal article's, an arXiv entry whose ``arxiv:doi`` is, the PubMed
record of either. A listing without an id
is the paper of the same title only where nothing contradicts it (:func:`contradicts`: other
authors, a date far apart): common titles ("A Survey of Large Language Models", "Technical
Report") belong to many papers. :func:`merge` says what the stored paper becomes after another
listing of it; :func:`merge_batch` applies the rules within one batch, so that the store sees
each paper once. No I/O.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime, timedelta

from .models import Paper, is_preprint_doi, surnames

_PAPER_FIELDS = [f.name for f in fields(Paper)]
DATE_SLACK = timedelta(days=30)  # first-version dates of one paper in two listings: the same
# submission, give or take a day (time zones, date-only listings); papers further apart differ


def contradicts(a: Paper, b: Paper) -> bool:
    """Whether two listings of one title cannot be the same paper: both carry identifiers of
    one kind (arXiv ids, DOIs, PMIDs) and none in common, both name authors and no surname is
    common to them, or both give a first-version date and those lie more than DATE_SLACK
    apart. A preprint and a journal article (:func:`preprint_and_article`) of one title and
    common authors are one work whatever the months between them. Missing values contradict
    nothing."""
    if a.arxiv_id and b.arxiv_id:
        return a.arxiv_id != b.arxiv_id
    if set(a.identifiers()) & set(b.identifiers()):
        return False
    linked = preprint_and_article(a, b)
    if not linked and ((a.dois and b.dois) or (a.pmid and b.pmid)):
        return True
    if a.authors and b.authors:
        mine, theirs = surnames(a.authors), surnames(b.authors)
        if mine and theirs and not mine & theirs:
            return True
    if not linked and a.published and b.published and abs(a.published - b.published) > DATE_SLACK:
        return True
    return False


def other_arxiv_ids(a: str | None, b: str | None) -> bool:
    """Whether two listings carry two different arXiv ids: two papers, whatever DOI they
    share (companion papers, a DOI copied by mistake)."""
    return bool(a and b and a != b)


def preprint_and_article(a: Paper, b: Paper) -> bool:
    """Whether one listing is a preprint (an arXiv id or a preprint server's DOI, no journal
    DOI) and the other a journal article (a journal DOI, no arXiv id), both naming authors:
    the journal version of a preprint, which the same title and authors may tie to it before
    any listing links their DOIs."""
    def preprint(p: Paper) -> bool:
        return p.journal_doi is None and bool(p.arxiv_id or p.dois)

    def article(p: Paper) -> bool:
        return p.journal_doi is not None and not p.arxiv_id

    return bool(a.authors and b.authors) and (
        (preprint(a) and article(b)) or (preprint(b) and article(a)))


_UNION = ("dois", "venues", "sources", "cites", "followed")  # every value either listing knows, first seen first
_FIRST = ("source", "announce_type", "url", "pmid", "pmcid", "journal")  # the first known stays


def merge(old: Paper, new: Paper) -> Paper:
    """The stored paper after seeing ``new``: a newer or equal version's text wins, known values
    are never replaced by unknown ones, the first-version date stays, upvotes refresh; the
    DOIs, venues and sources of both are kept, and the DOI to cite is the journal version's
    once one is known."""
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
        elif name in _FIRST:
            if getattr(old, name) is None:
                setattr(merged, name, value)
        elif name in _UNION:
            setattr(merged, name, list(dict.fromkeys([*getattr(old, name), *value])))
        elif name == "doi":
            merged.doi = old.doi if old.doi and not is_preprint_doi(old.doi) else value
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
    :func:`merge`; the first occurrence's place is kept. A paper matches the same key or any
    DOI or PMID in common, else a listing of the same title that nothing contradicts (an
    id-less one for a paper with an arXiv id). Two different arXiv ids never merge, whatever
    their titles, nor do two DOIs that nothing links."""
    out: list[Paper] = []
    by_key: dict[str, int] = {}
    by_title: dict[str, list[int]] = {}  # title -> the papers of that title, first seen first
    for p in papers:
        fp = p.fingerprint
        i = next((by_key[k] for k in (p.key, *p.identifiers()) if k in by_key
                  and not other_arxiv_ids(out[by_key[k]].arxiv_id, p.arxiv_id)), None)
        if i is None:
            i = next((j for j in by_title.get(fp, ())
                      if not (p.arxiv_id and out[j].arxiv_id) and not contradicts(out[j], p)), None)
        if i is None:
            i = len(out)
            out.append(p)
            by_title.setdefault(fp, []).append(i)
        else:
            out[i] = merge(out[i], p)
        for k in (out[i].key, *out[i].identifiers()):
            by_key.setdefault(k, i)
        by_key[out[i].key] = i
    return out
