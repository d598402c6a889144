"""Crossref REST API answers (api.crossref.org, ``/works``): a page of a works list
(``"message-type": "work-list"``: ``message.items``, ``message.total-results`` and, under cursor
paging, ``message.next-cursor``) or one work (``"message-type": "work"``). Both the ``crossref``
source and ``watcher convert`` read them here. Pure: no I/O.

Each work is a Paper whose identity is its DOI (lower case, as every reader writes it), so the
same article from a journal's feed, PubMed, OpenAlex or Crossref is one paper. Its title is
``title[0]``; its authors ``given family`` (or a group's ``name``); its abstract the JATS of
``abstract`` read as one line of text (the markup a journal's feed holds is read the same way,
:func:`watcher.formats.journal_feed.text`; a leading "Abstract" heading dropped); its date
``published`` (the earliest of print and online), else the earliest of ``published-online``,
``published-print`` and ``issued``, from ``date-parts`` (a month alone is its first day); its
journal ``container-title[0]``; its link ``https://doi.org/DOI``; ``announced`` the day Crossref
registered the DOI (``created``). A work with no DOI or no title is skipped with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper, clean_text, normalize_doi
from . import Listing, load_json, page_listing, skip_entry

_LIST = re.compile(r'"message-type"\s*:\s*"work-list"')
_WORK = re.compile(r'"message-type"\s*:\s*"work"')
# JATS inline markup, joined to the words around it (H<jats:sub>2</jats:sub>O is H2O)
_JATS_INLINE = re.compile(r"</?jats:(?:italic|bold|sub|sup|sc|monospace|underline|roman|"
                          r"inline-formula|styled-content)\b[^>]*>", re.I)


def sniff(head: str) -> bool:
    """A JSON object whose ``message-type`` is ``work-list`` or ``work`` (Crossref's envelope)."""
    stripped = head.lstrip()
    return stripped.startswith("{") and bool(_LIST.search(stripped) or _WORK.search(stripped))


def abstract_text(jats: object) -> str:
    """A JATS abstract (``<jats:title>Abstract</jats:title><jats:p>…</jats:p>``) as one line of
    text; "" when there is none."""
    from .journal_feed import text
    from .journal_rules import ABSTRACT_PREFIXES

    if not isinstance(jats, str) or not jats.strip():
        return ""
    return ABSTRACT_PREFIXES.sub("", text(_JATS_INLINE.sub("", jats))).strip()


def day_of(value: object) -> date | None:
    """A Crossref date (``{"date-parts": [[2024, 7, 30]]}``, month or day possibly left out)
    as a day; None when it holds no year."""
    parts = value.get("date-parts") if isinstance(value, dict) else None
    first = parts[0] if isinstance(parts, list) and parts and isinstance(parts[0], list) else []
    numbers = [p for p in first[:3] if isinstance(p, int) and not isinstance(p, bool)]
    if not numbers or len(numbers) != len(first[:3]):
        return None
    year, month, day = (numbers + [1, 1])[:3]
    try:
        return date(year, month, day)
    except ValueError:
        return None


def published_day(work: dict) -> date | None:
    """``published``, else the earliest of ``published-online``, ``published-print``, ``issued``."""
    if found := day_of(work.get("published")):
        return found
    days = [d for d in (day_of(work.get(k)) for k in ("published-online", "published-print", "issued")) if d]
    return min(days) if days else None


def _first(value: object) -> str:
    """The first string of a Crossref list field (``title``, ``container-title``), one line."""
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, str) and clean_text(item).strip():
            return " ".join(item.split())
    return ""


def _author(person: object) -> str:
    if not isinstance(person, dict):
        return ""
    name = " ".join(str(p) for p in (person.get("given"), person.get("family")) if isinstance(p, str) and p.strip())
    return " ".join((name or str(person.get("name") or "")).split())


def work_to_paper(work: object, where: str) -> Paper:
    """One Crossref work as a Paper; InputError when it is no paper (no DOI or no title)."""
    if not isinstance(work, dict):
        raise InputError(f"{where}: not an object")
    doi = normalize_doi(work.get("DOI")) if isinstance(work.get("DOI"), str) else None
    title = _first(work.get("title"))
    if not doi or not title:
        raise InputError(f"{where}: work has no DOI or no title")
    published = published_day(work)
    journal = _first(work.get("container-title")) or None
    return Paper(
        title=title,
        authors=[a for a in map(_author, work.get("author") or ()) if a],
        abstract=abstract_text(work.get("abstract")),
        published=datetime(published.year, published.month, published.day, tzinfo=timezone.utc)
        if published else None,
        doi=doi,
        dois=[doi],
        journal=journal,
        venues=[journal] if journal else [],
        url=f"https://doi.org/{doi}",
        announced=day_of(work.get("created")),
        source="crossref",
    )


@dataclass
class Page:
    """One page of a works list: its papers, the total Crossref counts, the next cursor."""

    papers: list[Paper] = field(default_factory=list)
    count: int | None = None
    next_cursor: str | None = None
    skipped: list[str] = field(default_factory=list)
    items: int = 0  # works on the page, papers and skipped together


def parse_page(data: bytes, origin: str, max_results: int | None = None) -> Page:
    """One page of ``/works``; InputError when it is not such a page (an error document, HTML,
    a cut-off answer), or holds more than ``max_results`` works (the ``rows`` asked: a server
    ignoring it is refused before its works are read)."""
    doc = load_json(data, origin)
    message = doc.get("message") if isinstance(doc, dict) else None
    if not (isinstance(message, dict) and isinstance(message.get("items"), list)):
        said = message if isinstance(message, (str, list)) else doc.get("status") if isinstance(doc, dict) else None
        raise InputError(f"{origin}: expected a Crossref works list (message.items)"
                         + (f"; the API said {str(said)[:200]!r}" if said else ""))
    items = message["items"]
    if max_results is not None and len(items) > max_results:
        raise InputError(f"{origin}: a page of {len(items):,} works, more than the {max_results} "
                         "asked; not read")
    count, cursor = message.get("total-results"), message.get("next-cursor")
    page = Page(count=count if isinstance(count, int) and not isinstance(count, bool) else None,
                next_cursor=cursor if isinstance(cursor, str) and cursor else None, items=len(items))
    for n, work in enumerate(items, start=1):
        try:
            page.papers.append(work_to_paper(work, f"item {n}"))
        except InputError as e:
            skip_entry(page, origin, e)
    return page


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """A works page as its papers; a single work as a listing of one."""
    if _LIST.search(data[:65536].decode("utf-8", "replace")):
        return page_listing(parse_page(data, origin), origin)
    doc = load_json(data, origin)
    return Listing(papers=[work_to_paper(doc.get("message") if isinstance(doc, dict) else None, origin)])
