"""The identity rules of docs/design.md, as pure functions: how two listings of one paper merge.

A paper is one paper across sources and versions: its arXiv id without version when known,
else its DOI, else its PMID, else its normalised-title fingerprint
(:attr:`watcher.models.Paper.key`). Two listings sharing any DOI or PMID
(:meth:`~watcher.models.Paper.identifiers`) are one work (docs/design.md): a bioRxiv preprint whose
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

from .models import Paper, better_spelt, is_preprint_doi, surnames

_PAPER_FIELDS = [f.name for f in fields(Paper)]
DATE_SLACK = timedelta(days=30)  # first-version dates of one paper in two listings: the same
# submission, give or take a day (time zones, date-only listings); papers further apart differ


def contradicts(a: Paper, b: Paper) -> bool:
    """Whether two listings of one title cannot be the same paper: both carry identifiers of
    one kind (arXiv ids, DOIs, PMIDs) and none in common, both name authors and no surname is
    common to them, or both give a first-version date and those lie more than DATE_SLACK
    apart, unless both link the same page (:func:`same_page`). A preprint and a journal article
    (:func:`preprint_and_article`) of one title and common authors are one work whatever the
    months between them. Missing values contradict
    nothing."""
    if a.arxiv_id and b.arxiv_id:
        return a.arxiv_id != b.arxiv_id
    if set(a.identifiers()) & set(b.identifiers()):
        return False
    if same_page(a.url, b.url):  # one article page at its publisher, whatever date it gives now
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


def same_page(a: str | None, b: str | None) -> bool:
    """Whether two listings link the same page (``http``/``https`` and a trailing ``/`` aside):
    a journal's feed gives an article the date it was put online, then its issue's (QA: a
    ScienceDirect article stored and delivered twice). Only listings of one title are asked,
    so a feed that links every item to one page joins nothing else."""
    def page(url: str) -> str:
        return url.strip().split("://", 1)[-1].rstrip("/").lower()

    return bool(a and b and page(a) == page(b))


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
_FIRST = ("source", "announce_type", "url", "pmid", "pmcid")  # the first known stays
_POLICY_FIELDS = ("title", "abstract", "authors", "journal")  # the better value wins, any order

# How good a field's value is by how its listing read it (Paper.origins "reader:kind"): a list
# of names beats one string split (which beats one cut short, "et al."), a journal named in
# metadata beats a feed's title, a whole abstract beats one cut short ("..."). A field without
# an origin was read from structured metadata (arXiv, bioRxiv, Hugging Face, a stored paper).
QUALITY = {
    "authors": {"list": 3, "split": 2, "truncated": 1},
    "journal": {"named": 3, "channel": 2},
    "abstract": {"full": 2, "truncated": 1},
    "title": {},
}
KIND_WORDS = {
    "list": "one name per entry", "split": "one string split into names",
    "truncated": "cut short", "named": "named in its metadata",
    "channel": "the feed's title without decorations", "full": "whole",
}


def _quality(paper: Paper, name: str) -> int:
    value = getattr(paper, name)
    if not value:
        return 0
    if name == "title":
        return 1 if str(value).endswith(("...", "\u2026")) else 2  # a title cut short is not true
    kind = paper.origins.get(name, "").partition(":")[2]
    return QUALITY[name].get(kind, max(QUALITY[name].values()))


def _rank(paper: Paper, name: str) -> tuple:
    """The order of two listings' values of one field: quality, then the longer (of two lists
    of names, the longer list, then the fuller names: "Maria N. Okafor" over "M. N. Okafor"),
    then (for two equal values spelt differently, "Nature neuroscience" / "Nature Neuroscience")
    the one with more capitals, then the value itself, so that no order of listings changes
    the choice."""
    value = getattr(paper, name)
    text = " | ".join(value) if isinstance(value, list) else str(value or "")
    size = (len(value), len(text)) if isinstance(value, list) else (len(text.rstrip(". ")), 0)
    # a full stop at the end of a title is no part of it ("… in CA1." is "… in CA1")
    return (_quality(paper, name), size, sum(c.isupper() for c in text), -len(text), text)


def better(old: Paper, new: Paper, name: str) -> Paper:
    """The listing whose value of field ``name`` (title, abstract, authors, journal) is the
    better one (:data:`QUALITY`, then :func:`_rank`); of a journal's name spelt two ways (one
    name, other capitals), the better spelling is taken whatever else differs."""
    a, b = getattr(old, name), getattr(new, name)
    if name == "journal" and a and b and a != b and a.casefold() == b.casefold():
        return old if better_spelt(a, b) == a else new
    return old if _rank(old, name) >= _rank(new, name) else new


def merge(old: Paper, new: Paper) -> Paper:
    """The stored paper after seeing ``new``: a newer arXiv / bioRxiv version's title, abstract
    and authors win; else each of title, abstract, authors and journal is the better of the two
    (:func:`better`: a list of authors over one string, the journal's own name over a feed's
    decorated title, a real abstract over none, the longest true title), whatever the order
    the listings came in, and ``origins`` says where each came from. Known values are never
    replaced by unknown ones, the first-version date stays, upvotes refresh; the DOIs, venues
    and sources of both are kept, and the DOI to cite is the journal version's once one is
    known."""
    merged = Paper(**{n: getattr(old, n) for n in _PAPER_FIELDS})
    merged.origins = dict(old.origins)
    versions = old.version is not None and new.version is not None and old.version != new.version
    for name in _PAPER_FIELDS:
        value = getattr(new, name)
        if name == "origins" or value is None or value == [] or value == "":
            continue
        if name in _POLICY_FIELDS:
            # a newer preprint version's title, abstract and authors replace an older one's,
            # never a journal record's (one with an origin: the version of record)
            if versions and name != "journal" and name not in old.origins and name not in new.origins:
                winner = new if (new.version or 0) > (old.version or 0) else old  # both set
            elif not getattr(old, name):
                winner = new
            else:
                winner = better(old, new, name)
            setattr(merged, name, getattr(winner, name))
            if name in winner.origins:
                merged.origins[name] = winner.origins[name]
            else:
                merged.origins.pop(name, None)
        elif name == "published":
            old_pub = old.published
            vague = old_pub is not None and old_pub.time() == datetime.min.time() and (
                old_pub.date() == value.date())
            if old_pub is None or vague:
                merged.published = value
            elif value < old_pub and not old.key.startswith("title:"):  # (a title key holds the day)
                merged.published = value  # an earlier version seen later: the preprint of an article
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
        elif name == "updated" and (new.version or 0) < (old.version or 0):
            if not old.updated:
                merged.updated = value
        elif name == "arxiv_id":
            merged.arxiv_id = value
        else:
            setattr(merged, name, value)
    return merged


def describe_origins(paper: Paper) -> str:
    """Where a stored paper's title, authors, journal and abstract came from, in one line
    (``watcher explain``): "authors: pubmed (one name per entry); journal: feed (…)"."""
    parts = []
    for name in ("title", "authors", "journal", "abstract"):
        origin = paper.origins.get(name)
        if origin and getattr(paper, name):
            reader, _, kind = origin.partition(":")
            parts.append(f"{name}: {reader}" + (f" ({KIND_WORDS.get(kind, kind)})" if kind else ""))
    return "; ".join(parts)


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
