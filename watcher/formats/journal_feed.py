"""A journal's (or a preprint server's) table of contents: RSS 1.0 (RDF), RSS 2.0 or Atom, read
with feedparser (Nature, Science, Cell, PNAS, APS, ACS, Elsevier, ChemRxiv, OSF preprints …).

Each item is a paper: its DOI from ``prism:doi``, else ``dc:identifier`` (``doi:10.…``), else
the item's link or id when it holds one (``https://doi.org/10.…``); the journal from
``prism:publicationName``, else the feed's title (a preprint server's, when the DOI is a
preprint DOI: ChemRxiv, OSF — then the venue, not a journal); the abstract from the description or
content where the publisher gives one (HTML stripped; a description that only repeats the
citation line is left out, as is the citation line before an abstract); the authors from ``dc:creator`` / ``author``; the date from
``prism:publicationDate``, ``dc:date``, ``pubDate`` or ``updated``. An item without a title
is skipped with a warning; an empty feed is an empty listing; what is not a well-formed feed
(a cut-off answer, an HTML error page) is an InputError, so that a broken feed never passes
for a short one.
"""

from __future__ import annotations

import html
import re
from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper, is_preprint_doi, normalize_doi, parse_iso
from . import Listing, read_entries
from .arxiv_rss import ROOTS, local_date
from .xmlsafe import is_xml, parse_feed

_TAG_RE = re.compile(r"<[^>]+>")
# the citation line publishers put before the abstract ("Nature Neuroscience, Published online:
# 25 November 2026; doi:10.1038/…")
_CITATION = re.compile(r"^[^.]{0,160}?doi:\s*10\.\d{4,9}/\S+\s*", re.I)
EXPECTED = "an RSS or Atom table of contents"


def sniff(head: str) -> bool:
    """A feed that carries PRISM metadata (journals' tables of contents) and is not arXiv's."""
    return (is_xml(head) and ("<rss" in head or "<rdf:RDF" in head or "<feed" in head)
            and "prismstandard.org" in head and "arxiv.org" not in head)


def _strip_html(text: str) -> str:
    return " ".join(html.unescape(_TAG_RE.sub(" ", text)).split())


def _doi(entry) -> str | None:
    for key in ("prism_doi", "dc_identifier", "id", "link"):
        value = entry.get(key)
        if isinstance(value, str) and key in ("id", "link"):
            value = re.split(r"[?#]", value, maxsplit=1)[0]  # a link's query is no part of a DOI
        if isinstance(value, str) and (doi := normalize_doi(value)):
            return doi
    return None


def _when(entry) -> datetime | None:
    for key in ("prism_publicationdate", "dc_date", "published", "updated"):
        raw = entry.get(key)
        if not isinstance(raw, str) or not raw.strip():
            continue
        when = parse_iso(raw.strip())
        if when is None and (day := local_date(raw)):
            when = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
        if when is not None:
            return when
    return None


def _abstract(entry) -> str:
    for raw in [c.get("value", "") for c in entry.get("content") or []] + [entry.get("summary") or ""]:
        text = _CITATION.sub("", _strip_html(raw), count=1)
        if text:
            return text
    return ""


def entry_to_paper(entry, journal: str | None) -> Paper:
    """One feedparser entry as a Paper (InputError when it has no title)."""
    title = _strip_html(entry.get("title") or "")
    if not title:
        raise InputError(f"item {entry.get('id') or entry.get('link') or '?'} has no title")
    names = [a.get("name", "") for a in entry.get("authors") or [] if isinstance(a, dict)]
    if not any(names) and entry.get("author"):
        names = [entry["author"]]
    authors = [" ".join(n.split()) for raw in names for n in re.split(r"\s*;\s*", raw or "") if n.strip()]
    venue = " ".join(str(entry.get("prism_publicationname") or journal or "").split()) or None
    when = _when(entry)
    doi = _doi(entry)
    preprint = doi is not None and is_preprint_doi(doi)  # ChemRxiv's, OSF's feed: a server
    return Paper(
        title=title,
        authors=authors,
        abstract=_abstract(entry),
        published=when,
        doi=doi,
        url=entry.get("link") or None,
        journal=None if preprint else venue,
        venues=[venue] if venue else [],
        announced=when.date() if when else None,
        source="feed",
    )


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse a table of contents; InputError when ``data`` is not a well-formed feed."""
    parsed = parse_feed(data, origin, EXPECTED, ROOTS)
    feed = parsed.feed
    journal = " ".join(str(feed.get("prism_publicationname") or feed.get("title") or "").split()) or None
    listing = Listing(title=feed.get("title"), date=local_date(feed.get("updated") or feed.get("published")))
    return read_entries(listing, origin, parsed.entries, lambda entry: entry_to_paper(entry, journal))
