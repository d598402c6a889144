"""OpenAlex works JSON (``api.openalex.org/works``), and the identifiers of followed works and
authors (docs/openalex.md). Pure: no I/O.

One page of a works list, as the API pages it by cursor::

    {"meta": {"count": 8695857, "db_response_time_ms": 28, "page": null, "per_page": 100,
              "next_cursor": "IlsxNjA5MzcyODAwMDAwLCAnaHR0cHM6Ly9vcGVuYWxleC5vcmcvVzI0ODg0OTk3NjQnXSI="},
     "results": [{"id": "https://openalex.org/W2741809807", "doi": "https://doi.org/10.7717/peerj.4375",
                  "title": …, "publication_date": "2018-02-13", "created_date": "2017-08-08",
                  "ids": {"openalex": …, "doi": …, "pmid": "https://pubmed.ncbi.nlm.nih.gov/29456894"},
                  "authorships": [{"author": {"id": "https://openalex.org/A1969205032",
                                              "display_name": "Heather A. Piwowar",
                                              "orcid": "https://orcid.org/0000-0003-1613-5981"}}, …],
                  "primary_location": {"source": {"display_name": "PeerJ", "type": "journal"},
                                       "landing_page_url": …},   # "host_venue" before 2023
                  "locations": [{"landing_page_url": "https://arxiv.org/abs/…"}, …],
                  "referenced_works": ["https://openalex.org/W1560783210", …],
                  "abstract_inverted_index": {"Despite": [0], "growing": [1], …} or null}, …]}

``next_cursor`` is null on the last page. A work is one paper: its DOI, PMID and arXiv id (the
arXiv DOI ``10.48550/arXiv.X``, else an arxiv.org location) join it to the paper watcher already
holds (docs/design.md). The abstract is rebuilt from the inverted index (word -> positions), bounded
by :data:`MAX_ABSTRACT_WORDS`.

A followed work is kept as one key, whatever spelling the config used (:func:`work_ref`): an
OpenAlex id ``W2741809807``, a DOI ``10.7717/peerj.4375`` (lower case), ``arxiv:2106.09685``
(also for the arXiv DOI) or ``pmid:29456894``; a followed author as an ORCID
``0000-0002-1825-0097`` or an OpenAlex id ``A1969205032`` (:func:`author_ref`). A paper records
what it cites and who of the followed wrote it as ``key|title`` and ``key|name`` entries
(:func:`entry`), so that each card can say "cites your <title>" without asking anyone again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper, clean_text, normalize_doi, parse_arxiv_id
from . import load_json, skip_entry

MAX_ABSTRACT_WORDS = 20_000  # positions of one inverted index; a longer one is cut there
ARXIV_DOI = "10.48550/arxiv."

_WORK_ID = re.compile(r"^(?:https?://(?:api\.)?openalex\.org/(?:works/)?|openalex:)?(W\d+)$", re.I)
_AUTHOR_ID = re.compile(r"^(?:https?://(?:api\.)?openalex\.org/(?:authors/)?|openalex:)?(A\d+)$", re.I)
_ORCID = re.compile(r"^(?:https?://orcid\.org/|orcid:)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$", re.I)
_WHOLE_DOI = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?10\.\d{4,9}/\S+$", re.I)
_PMID = re.compile(r"^(?:pmid:|https?://pubmed\.ncbi\.nlm\.nih\.gov/)(\d+)/?$", re.I)


# --- identifiers ------------------------------------------------------------------------------

def work_ref(text: str) -> str | None:
    """The key of a followed work (see the module docstring), or None when ``text`` names none.

    >>> work_ref("https://doi.org/10.48550/arXiv.2106.09685"), work_ref("openalex:w123")
    ('arxiv:2106.09685', 'W123')
    """
    text = clean_text(str(text)).strip()
    if m := _WORK_ID.match(text):
        return m.group(1).upper()
    if m := _PMID.match(text):
        return "pmid:" + m.group(1)
    doi = normalize_doi(text) if _WHOLE_DOI.match(text) else None  # not "10.1/a b": a DOI in words
    if doi:
        if doi.startswith(ARXIV_DOI):
            found = parse_arxiv_id(doi[len(ARXIV_DOI):])
            return f"arxiv:{found[0]}" if found else None
        return doi
    if text.lower().startswith("arxiv:") or "arxiv.org/" in text.lower() or re.fullmatch(
            r"\d{4}\.\d{4,5}(v\d+)?", text):
        found = parse_arxiv_id(text)
        return f"arxiv:{found[0]}" if found else None
    return None


def author_ref(text: str) -> str | None:
    """The key of a followed author: an ORCID (``0000-0002-1825-0097``) or an OpenAlex author
    id (``A1969205032``); None when ``text`` is neither."""
    text = clean_text(str(text)).strip()
    if m := _ORCID.match(text):
        orcid = m.group(1).upper()
        return orcid if orcid[-1] == orcid_check_digit(orcid) else None  # a typo names someone else
    if m := _AUTHOR_ID.match(text):
        return m.group(1).upper()
    return None


def orcid_check_digit(orcid: str) -> str:
    """The last character an ORCID's first 15 digits call for (ISO 7064 MOD 11-2, as
    orcid.org documents it).

    >>> orcid_check_digit("0000-0002-1825-0097"), orcid_check_digit("0000-0002-1694-233X")
    ('7', 'X')
    """
    total = 0
    for digit in orcid.replace("-", "")[:15]:
        total = (total + int(digit)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def api_path(ref: str) -> str:
    """How ``/works/{…}`` names the followed work ``ref`` (a :func:`work_ref` key)."""
    if ref.startswith("arxiv:"):
        return "doi:10.48550/arXiv." + ref[len("arxiv:"):]
    if ref.startswith("pmid:") or ref[:1] == "W":
        return ref
    return "doi:" + ref


def author_filters(refs) -> list[str]:
    """The works filters that select the works of the followed authors ``refs``: one for the
    ORCIDs, one for the OpenAlex ids (values joined by ``|``, OpenAlex's OR)."""
    orcids = [r for r in refs if r[:1] != "A"]
    ids = [r for r in refs if r[:1] == "A"]
    out = []
    if orcids:
        out.append("author.orcid:" + "|".join(f"https://orcid.org/{r}" for r in orcids))
    if ids:
        out.append("author.id:" + "|".join(ids))
    return out


def entry(key: str, label: str) -> str:
    """A paper's record of one followed work it cites (or followed author who wrote it)."""
    return f"{key}|{' '.join(str(label).split())}"


def entries(values) -> list[tuple[str, str]]:
    """``(key, title or name)`` of each of a paper's :func:`entry` values, each key once."""
    out: dict[str, str] = {}
    for value in values or ():
        key, _, label = str(value).partition("|")
        out.setdefault(key, label or key)
    return list(out.items())


def matches_ref(key: str, wanted: str) -> bool:
    """Whether the entry key ``key`` is what a ``cites:``/``by:`` term asks for: ``*`` any,
    ``prefix*`` one starting so, else the same key."""
    if wanted == "*":
        return True
    if wanted.endswith("*"):
        return key.startswith(wanted[:-1])
    return key == wanted


# --- works ------------------------------------------------------------------------------------

def rebuild_abstract(index: object) -> str:
    """The abstract from an ``abstract_inverted_index`` (word -> positions); "" when there is
    none. Positions past MAX_ABSTRACT_WORDS, and malformed ones, are left out."""
    if not isinstance(index, dict):
        return ""
    words: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list):
            continue
        for pos in positions:
            if isinstance(pos, int) and not isinstance(pos, bool) and 0 <= pos < MAX_ABSTRACT_WORDS:
                words.setdefault(pos, str(word))
            if len(words) >= MAX_ABSTRACT_WORDS:
                break
    return " ".join(words[k] for k in sorted(words))


def _day(value: object) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def _short(url: object) -> str | None:
    """``W123`` / ``A123`` from ``https://openalex.org/W123``."""
    if not isinstance(url, str) or not url:
        return None
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return tail.upper() if re.fullmatch(r"[WAwa]\d+", tail) else None


def _locations(work: dict) -> list[dict]:
    found = [work.get("primary_location"), *(work.get("locations") or []), work.get("best_oa_location")]
    return [loc for loc in found if isinstance(loc, dict)]


def _arxiv_id(work: dict, dois: list[str]) -> str | None:
    for doi in dois:
        if doi.startswith(ARXIV_DOI) and (found := parse_arxiv_id(doi[len(ARXIV_DOI):])):
            return found[0]
    for loc in _locations(work):
        for key in ("landing_page_url", "pdf_url"):
            url = loc.get(key)
            if isinstance(url, str) and re.match(r"https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/", url):
                if found := parse_arxiv_id(url.removesuffix(".pdf")):
                    return found[0]
    return None


def _journal(work: dict) -> str | None:
    primary = work.get("primary_location")
    source = primary.get("source") if isinstance(primary, dict) else None
    if isinstance(source, dict) and source.get("type") == "journal" and source.get("display_name"):
        return " ".join(str(source["display_name"]).split())
    venue = work.get("host_venue")  # the work object before 2023
    if isinstance(venue, dict) and venue.get("display_name") and venue.get("type") in ("journal", "publisher"):
        return " ".join(str(venue["display_name"]).split())
    return None


def authorship_keys(authorship: dict) -> list[str]:
    """The :func:`author_ref` keys an authorship carries (its ORCID and its OpenAlex id)."""
    author = authorship.get("author") if isinstance(authorship, dict) else None
    if not isinstance(author, dict):
        return []
    return [k for k in (author_ref(author.get("orcid") or ""), _short(author.get("id"))) if k]


@dataclass
class Follow:
    """What a source follows: ``works`` maps each followed work's OpenAlex id to its entry
    (key and title, :func:`entry`); ``authors`` the followed authors' keys."""

    works: dict[str, str] = field(default_factory=dict)
    authors: frozenset[str] = frozenset()


def work_to_paper(work: object, where: str, follow: Follow | None = None) -> Paper:
    """One work as a Paper, with the followed works it cites and the followed authors who wrote
    it; InputError when it is no paper (no id or no title)."""
    if not isinstance(work, dict):
        raise InputError(f"{where}: not an object")
    wid = _short(work.get("id"))
    title = work.get("title") or work.get("display_name")
    if not wid or not isinstance(title, str) or not clean_text(title).strip():
        raise InputError(f"{where}: work has no OpenAlex id or no title")
    ids = work.get("ids") if isinstance(work.get("ids"), dict) else {}
    dois = [d for d in (normalize_doi(v) for v in (work.get("doi"), ids.get("doi")) if isinstance(v, str)) if d]
    pmid = _PMID.match(str(ids.get("pmid") or ""))
    authors, followed = [], []
    follow = follow or Follow()
    for a in work.get("authorships") or ():
        author = a.get("author") if isinstance(a, dict) else None
        name = author.get("display_name") if isinstance(author, dict) else None
        if isinstance(name, str) and name.strip():
            authors.append(" ".join(name.split()))
            for key in authorship_keys(a):
                if key in follow.authors:
                    followed.append(entry(key, name))
    cites = [follow.works[w] for w in (_short(r) for r in work.get("referenced_works") or ())
             if w in follow.works]
    published = _day(work.get("publication_date"))
    created = _day(work.get("created_date"))
    primary = work.get("primary_location") if isinstance(work.get("primary_location"), dict) else {}
    journal = _journal(work)
    return Paper(
        title=" ".join(title.split()),
        arxiv_id=_arxiv_id(work, dois),
        authors=authors,
        abstract=" ".join(rebuild_abstract(work.get("abstract_inverted_index")).split()),
        published=datetime(published.year, published.month, published.day, tzinfo=timezone.utc)
        if published else None,
        doi=dois[0] if dois else None,
        dois=dois,
        pmid=pmid.group(1) if pmid else None,
        journal=journal,
        venues=[journal] if journal else [],
        url=primary.get("landing_page_url") or (f"https://doi.org/{dois[0]}" if dois else f"https://openalex.org/{wid}"),
        announced=created,
        source="openalex",
        cites=list(dict.fromkeys(cites)),
        followed=list(dict.fromkeys(followed)),
    )


@dataclass
class Page:
    """One page of a works list: its papers, the total the API counts, the next cursor."""

    papers: list[Paper] = field(default_factory=list)
    refs: list[tuple[str, str]] = field(default_factory=list)  # each paper's work key and title
    count: int | None = None
    next_cursor: str | None = None
    skipped: list[str] = field(default_factory=list)


def parse_page(data: bytes, origin: str, follow: Follow | None = None,
               max_results: int | None = None) -> Page:
    """One page of ``/works``; InputError when it is not such a page (an error document, HTML,
    a cut-off answer), or holds more than ``max_results`` works (the ``per-page`` asked: a
    server ignoring it is refused before its works are read)."""
    doc = load_json(data, origin)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        problem = doc.get("message") or doc.get("error") if isinstance(doc, dict) else None
        raise InputError(f"{origin}: expected OpenAlex works JSON (meta and results)"
                         + (f"; the API said {str(problem)[:200]!r}" if problem else ""))
    if max_results is not None and len(doc["results"]) > max_results:
        raise InputError(f"{origin}: a page of {len(doc['results']):,} works, more than the "
                         f"{max_results} asked; not read")
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
    count = meta.get("count")
    cursor = meta.get("next_cursor")
    page = Page(count=count if isinstance(count, int) else None,
                next_cursor=cursor if isinstance(cursor, str) and cursor else None)
    for n, work in enumerate(doc["results"], start=1):
        try:
            paper = work_to_paper(work, f"result {n}", follow)
        except InputError as e:
            skip_entry(page, origin, e)
            continue
        page.papers.append(paper)
        page.refs.append((work_ref(paper.doi or "") or _short(work.get("id")), paper.title))
    return page


def parse_work(data: bytes, origin: str) -> tuple[str, str]:
    """A single work (``/works/{id}``): its OpenAlex id and its title."""
    doc = load_json(data, origin)
    wid = _short(doc.get("id")) if isinstance(doc, dict) else None
    title = (doc.get("title") or doc.get("display_name")) if isinstance(doc, dict) else None
    if not wid:
        raise InputError(f"{origin}: expected an OpenAlex work (with an id)")
    return wid, " ".join(str(title or wid).split())
