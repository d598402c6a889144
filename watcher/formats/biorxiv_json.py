"""bioRxiv / medRxiv details API JSON (``api.biorxiv.org/details/{server}/{from}/{to}/{cursor}``).

One page of the interval::

    {"messages": [{"status": "ok", "interval": "2026-03-01:2026-03-03", "cursor": 0,
                   "count": 100, "count_new_papers": "61", "total": "212"}],
     "collection": [{"doi": "10.1101/2026.03.01.612345", "title": …, "authors": "Okafor, M.;
                     Lindqvist, J." (read as "M. Okafor", "J. Lindqvist"), "author_corresponding": …, "author_corresponding_institution": …,
                     "date": "2026-03-02", "version": "1", "type": "new results",
                     "license": "cc_by", "category": "neuroscience", "jatsxml": …,
                     "abstract": …, "published": "NA", "server": "bioRxiv"}, …]}

Each record is one version of one preprint (``date`` is that version's posting day): version 1
gives the first-version date, a later one the latest version's. ``published`` is the journal
version's DOI once bioRxiv has linked it ("NA" before): it joins the paper's DOIs, so that the
journal article is the same work (docs/design.md), and becomes the DOI to cite. ``total`` and
``cursor`` say where the page sits (numbers, or numbers as text: the API writes both). A
``status`` of "no posts found" is an empty interval; any other status, or anything that is not
such JSON, is an InputError. A record without DOI or title is skipped with a warning. The
abstract's conversion markers and glued headings are read as what they stand for
(:mod:`watcher.formats.highwire`).
"""

from __future__ import annotations

from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper, clean_text, normalize_doi
from . import Listing, load_json, read_entries
from .highwire import abstract_text

SERVERS = {"biorxiv": "bioRxiv", "medrxiv": "medRxiv"}
EMPTY_STATUS = "no posts found"


def sniff(head: str) -> bool:
    """A JSON object with the API's ``messages`` and ``collection``."""
    stripped = head.lstrip()
    return stripped.startswith("{") and '"messages"' in stripped[:600] and '"collection"' in stripped


def _int(value) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _day(value) -> date | None:
    try:
        return date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        return None


def _authors(raw: object) -> list[str]:
    """``"Okafor, M. N.; Lindqvist, J."`` -> ``["M. N. Okafor", "J. Lindqvist"]`` (given names
    first, as every other listing writes them, so that a list of them stays readable)."""
    if not isinstance(raw, str):
        return []
    out = []
    for name in raw.split(";"):
        last, comma, given = name.partition(",")
        name = f"{given} {last}" if comma and given.strip() else last
        if name.strip():
            out.append(" ".join(name.split()))
    return out


def record_to_paper(item: object, where: str) -> Paper:
    """One record of the collection as a Paper; InputError when it is not a preprint."""
    if not isinstance(item, dict):
        raise InputError(f"{where}: not an object")
    doi = normalize_doi(item.get("doi") if isinstance(item.get("doi"), str) else None)
    title = item.get("title")
    if not doi or not isinstance(title, str) or not clean_text(title).strip():
        raise InputError(f"{where}: record has no DOI or no title")
    version = _int(item.get("version"))
    posted = _day(item.get("date"))
    when = datetime(posted.year, posted.month, posted.day, tzinfo=timezone.utc) if posted else None
    published = normalize_doi(item.get("published")) if isinstance(item.get("published"), str) else None
    server = SERVERS.get(str(item.get("server") or "").strip().lower(), "bioRxiv")
    category = " ".join(str(item.get("category") or "").split()).lower() or None
    return Paper(
        title=" ".join(title.split()),
        version=version,
        authors=_authors(item.get("authors")),
        abstract=abstract_text(str(item.get("abstract") or "")),
        published=when if version in (None, 1) else None,
        updated=when,
        categories=[category] if category else [],
        primary_category=category,
        doi=published or doi,
        dois=[doi, published] if published else [doi],
        url=f"https://www.{server.lower()}.org/content/{doi}v{version or 1}",
        announced=posted,
        venues=[server],
        source=server.lower(),
    )


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse one page of the details API; InputError for invalid JSON, an error status or
    a page where no record is a preprint."""
    doc = load_json(data, origin)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise InputError(f"{origin}: expected the bioRxiv API's JSON (messages and collection)")
    message = doc["messages"][0] if doc["messages"] and isinstance(doc["messages"][0], dict) else {}
    status = str(message.get("status", "")).strip()
    collection = doc.get("collection")
    if status.lower() == EMPTY_STATUS:
        return Listing(total=0, start=_int(message.get("cursor")) or 0)
    if status.lower() != "ok" or not isinstance(collection, list):
        raise InputError(f"{origin}: the bioRxiv API answered {status or 'no status'!r}")
    listing = Listing(total=_int(message.get("total")), start=_int(message.get("cursor")),
                      page_size=_int(message.get("count")))
    return read_entries(listing, origin, enumerate(collection, start=1),
                        lambda numbered: record_to_paper(numbered[1], f"record {numbered[0]}"))
