"""Zotero item lists: the Zotero Web API's JSON answers (``GET /users/{id}/items``: an array of
``{"key", "version", "library", "links", "meta", "data": {"itemType", "title", …}}``), or an
array of the items' ``data`` alone (what Zotero's translators and exports write). Notes and
attachments are no papers: they are skipped with a warning. Each item is read by
:func:`item_paper`, the reading the Zotero sync (:mod:`watcher.zotero.sync`) uses too."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

from ..errors import BadItem, InputError
from ..models import Paper, normalize_doi, parse_arxiv_id
from . import Listing, load_json, read_entries

SKIPPED_TYPES = ("note", "attachment", "annotation")
_ARXIV_TEXT = re.compile(r"arxiv[:\s./]*(?:abs/)?(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?", re.I)
_PMID_TEXT = re.compile(r"^\s*PMID:\s*(\d+)\s*$", re.I | re.M)


def _text(data: dict, field: str, where: str = "") -> str:
    """The text of ``data[field]`` ("" when absent or null); BadItem when it is not text."""
    value = data.get(field)
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # a number where Zotero writes its text (a year, a report number)
    if not isinstance(value, str):
        raise BadItem(f"{where}{field} is a JSON {_json_kind(value)}, not text")
    return value


def _json_kind(value) -> str:
    return {dict: "object", list: "array", bool: "boolean"}.get(type(value), type(value).__name__)


def item_paper(item: dict) -> Paper | None:
    """A Zotero item (an API answer's ``{"key", "version", "data": {...}}``, or its ``data``)
    as a paper: title, abstract, authors, date, DOI, PMID and the arXiv id wherever Zotero
    keeps it (``archiveID`` ``arXiv:…``, ``extra``, an arXiv URL or DOI). None for notes,
    attachments and items without a title; BadItem for an item whose fields are not what
    Zotero writes (said by the field)."""
    data = item.get("data", item) if isinstance(item, dict) else None
    if not isinstance(data, dict):
        raise BadItem(f"the item is a JSON {_json_kind(data)}, not an object")
    if data.get("itemType") in SKIPPED_TYPES:
        return None
    title = " ".join(_text(data, "title").split())
    if not title:
        return None
    arxiv_id = None
    doi = normalize_doi(_text(data, "DOI")) if data.get("DOI") else None
    extra, url = _text(data, "extra"), _text(data, "url")
    for text in (_text(data, "archiveID"), extra, url, doi, _text(data, "number")):
        m = _ARXIV_TEXT.search(text or "")
        if m and (found := parse_arxiv_id(m.group(1))):
            arxiv_id = found[0]
            break
    if doi and doi.startswith("10.48550/arxiv."):  # arXiv's own DOI names the preprint, not a journal
        doi = None
    pmid = _PMID_TEXT.search(extra)
    authors = []
    creators = data.get("creators") or []
    if not isinstance(creators, list):
        raise BadItem(f"creators is a JSON {_json_kind(creators)}, not an array")
    for i, c in enumerate(creators):
        if not isinstance(c, dict):
            raise BadItem(f"creators[{i}] is a JSON {_json_kind(c)}, not an object")
    for i, c in [(i, c) for i, c in enumerate(creators) if c.get("creatorType") == "author"] \
            or list(enumerate(creators)):
        where = f"creators[{i}]."
        name = _text(c, "name", where) or " ".join(filter(None, (_text(c, "firstName", where),
                                                               _text(c, "lastName", where))))
        if name.strip():
            authors.append(" ".join(name.split()))
    return Paper(title=title, arxiv_id=arxiv_id, authors=authors,
                 abstract=" ".join(_text(data, "abstractNote").split()), doi=doi,
                 pmid=pmid.group(1) if pmid else None, url=url or None,
                 journal=_text(data, "publicationTitle") or None, source="zotero")


_ITEM_TYPE = re.compile(r'"itemType"\s*:\s*"')


def sniff(head: str) -> bool:
    """A JSON array whose first object is a Zotero item (or holds one as ``data``)."""
    stripped = head.lstrip()
    return stripped.startswith("[") and stripped[1:].lstrip().startswith("{") and bool(
        _ITEM_TYPE.search(stripped[:8000]))


# the Web API's ``meta.parsedDate`` is "YYYY-MM-DD", "YYYY-MM" or "YYYY" (an item dated "2002"
# or "March 1995"); a year alone is dated its 1 January, as PubMed's year-only dates are
_PARTIAL = re.compile(r"\s*(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?!\d)")


def _day(item: dict, data: dict) -> datetime | None:
    meta = item.get("meta") if isinstance(item.get("meta"), dict) else {}
    for value in (meta.get("parsedDate"), data.get("date")):
        m = _PARTIAL.match(str(value or ""))
        if not m:
            continue
        try:
            day = date(int(m[1]), max(1, int(m[2] or 1)), max(1, int(m[3] or 1)))
        except ValueError:
            continue
        return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return None


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    items = load_json(data, origin)
    if not isinstance(items, list):
        raise InputError(f"{origin}: expected a JSON array of Zotero items")

    def to_paper(numbered):
        n, item = numbered
        paper = item_paper(item) if isinstance(item, dict) else None
        if paper is None:
            kind = (item.get("data", item) if isinstance(item, dict) else {}) or {}
            what = kind.get("itemType") if isinstance(kind, dict) else None
            raise InputError(f"item {n}: a Zotero {what or 'entry'} without a title, not a paper"
                             if what not in ("note", "attachment") else f"item {n}: a Zotero {what}, not a paper")
        body = item.get("data", item)
        paper.published = paper.published or _day(item, body if isinstance(body, dict) else {})
        return paper

    return read_entries(Listing(), origin, enumerate(items, start=1), to_paper)
