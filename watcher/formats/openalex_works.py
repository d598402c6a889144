"""OpenAlex ``/works`` answers as a listing, for ``watcher convert`` and detection: a page of a
works list (page-based ``meta`` with ``page``, or cursor ``meta`` with ``next_cursor``;
compact or pretty-printed) or a single work (``/works/W…``). The reading itself is
:mod:`watcher.formats.openalex`'s, the one the ``openalex`` source uses."""

from __future__ import annotations

import re
from datetime import date

from . import Listing
from .openalex import parse_page, work_to_paper

_WORK_ID = re.compile(r'"id"\s*:\s*"https://openalex\.org/W\d+"')
_RESULTS = re.compile(r'"results"\s*:\s*\[')


def sniff(head: str) -> bool:
    """A JSON object holding ``results`` (a works page) or itself a work, with an OpenAlex
    work id (``"id": "https://openalex.org/W…"``) in the first 64 KiB."""
    stripped = head.lstrip()
    if not stripped.startswith("{") or not _WORK_ID.search(stripped):
        return False
    return bool(_RESULTS.search(stripped)) or '"authorships"' in stripped or '"abstract_inverted_index"' in stripped


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """A works page as its papers (a work with no id or no title skipped with a warning); a
    single work as a listing of one."""
    from . import load_json, page_listing

    if _RESULTS.search(data[:65536].decode("utf-8", "replace")):
        return page_listing(parse_page(data, origin), origin)
    return Listing(papers=[work_to_paper(load_json(data, origin), origin)])
