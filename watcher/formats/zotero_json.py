"""Zotero item lists: the Zotero Web API's JSON answers (``GET /users/{id}/items``: an array of
``{"key", "version", "library", "links", "meta", "data": {"itemType", "title", …}}``), or an
array of the items' ``data`` alone (what Zotero's translators and exports write). Notes and
attachments are no papers: they are skipped with a warning. Each item is read by
:func:`watcher.zotero.item_paper`, the reading the Zotero sync uses."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

from ..errors import InputError
from . import Listing, load_json, read_entries

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
    from ..zotero import item_paper

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
