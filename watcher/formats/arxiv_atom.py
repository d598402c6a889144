"""arXiv API Atom (``export.arxiv.org/api/query``), classic and 2026 layouts.

Both layouts carry the same elements in the same namespaces; they differ in element order,
where namespaces are declared, and in whitespace (the classic layout hard-wraps titles and
abstracts). Entries are parsed as a stream (see :mod:`.xmlsafe`). The API reports errors as
a feed with one entry titled ``Error`` whose id is under ``https://arxiv.org/api/errors``: that
is raised as :class:`ArxivApiError`, never returned as a paper. The OpenSearch counters are
kept on the listing: ``total`` (totalResults), ``start`` (startIndex) and ``page_size``
(itemsPerPage).
"""

from __future__ import annotations

from datetime import date, datetime

from ..errors import ArxivApiError, InputError
from ..models import Paper, parse_arxiv_id
from . import Listing, no_paper_at_all, skip_entry
from .xmlsafe import gc_paused, is_xml, iter_ends

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"

_ENTRY = ATOM + "entry"
_TOTAL, _START, _PER_PAGE = (OPENSEARCH + n for n in ("totalResults", "startIndex", "itemsPerPage"))
_TAGS = {_ENTRY, _TOTAL, _START, _PER_PAGE}
_ID, _TITLE, _SUMMARY, _PUBLISHED, _UPDATED = (
    ATOM + n for n in ("id", "title", "summary", "published", "updated"))
_AUTHOR, _NAME, _CATEGORY, _LINK = (ATOM + n for n in ("author", "name", "category", "link"))
_COMMENT, _JOURNAL, _DOI, _PRIMARY = (
    ARXIV + n for n in ("comment", "journal_ref", "doi", "primary_category"))


def sniff(head: str) -> bool:
    """An Atom feed from the arXiv API (OpenSearch counters or an api/query link)."""
    return is_xml(head) and "<feed" in head and ("opensearch" in head or "arxiv.org/api" in head)


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        return None


def _clean(value: str | None) -> str:
    return " ".join(value.split()) if value else ""


def _int(value: str | None) -> int | None:
    try:
        return int(value.strip()) if value else None
    except ValueError:
        return None


def _doi_from_link(href: str | None) -> str | None:
    if not href or "doi.org/" not in href:
        return None
    return href.split("doi.org/", 1)[1] or None


def entry_to_paper(entry) -> Paper:
    """One ``<entry>`` element as a Paper (InputError when it has no usable id or title)."""
    fields: dict = {"authors": [], "categories": []}
    for child in entry:
        tag = child.tag
        if tag == _AUTHOR:
            name = child.findtext(_NAME)
            if name:
                fields["authors"].append(_clean(name))
        elif tag == _CATEGORY:
            term = child.get("term")
            if term:
                fields["categories"].append(term)
        elif tag == _LINK:
            if child.get("title") == "doi":
                fields["doi_link"] = child.get("href") or ""
        elif tag == _PRIMARY:
            fields["primary"] = child.get("term")
        else:
            fields[tag] = child.text
    raw_id = fields.get(_ID) or ""
    ident = parse_arxiv_id(raw_id)
    title = _clean(fields.get(_TITLE))
    if "/api/errors" in raw_id or (title == "Error" and ident is None):
        raise ArxivApiError(f"arXiv API error: {_clean(fields.get(_SUMMARY)) or raw_id}")
    if ident is None or not title:
        raise InputError(f"entry {raw_id or '(no id)'} has no arXiv id or no title")
    categories = fields["categories"]
    return Paper(
        title=title,
        arxiv_id=ident[0],
        version=ident[1],
        authors=fields["authors"],
        abstract=_clean(fields.get(_SUMMARY)),
        published=_time(fields.get(_PUBLISHED)),
        updated=_time(fields.get(_UPDATED)),
        categories=categories,
        primary_category=fields.get("primary") or (categories[0] if categories else None),
        comment=_clean(fields.get(_COMMENT)) or None,
        journal_ref=_clean(fields.get(_JOURNAL)) or None,
        doi=_clean(fields.get(_DOI)) or _doi_from_link(fields.get("doi_link")),
        url=f"https://arxiv.org/abs/{ident[0]}",
        author_count=len(fields["authors"]),
        source="arxiv",
    )


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse an API response; ArxivApiError for the error feed, InputError for anything that
    is not an arXiv API Atom feed (HTML error pages, truncated XML)."""
    with gc_paused():
        return _parse(data, origin)


def _parse(data: bytes, origin: str) -> Listing:
    listing = Listing()
    papers = listing.papers
    for elem in iter_ends(data, origin, "an arXiv API Atom feed", (ATOM + "feed",), _TAGS):
        tag = elem.tag
        if tag == _ENTRY:
            try:
                papers.append(entry_to_paper(elem))
            except ArxivApiError as e:
                raise type(e)(f"{origin}: {e}") from e
            except InputError as e:
                skip_entry(listing, origin, e)
        elif tag == _TOTAL:
            listing.total = _int(elem.text)
        elif tag == _START:
            listing.start = _int(elem.text)
        elif tag == _PER_PAGE:
            listing.page_size = _int(elem.text)
    return no_paper_at_all(listing, origin)
