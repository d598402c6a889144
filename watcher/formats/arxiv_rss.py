"""arXiv RSS and Atom feeds (``rss.arxiv.org``), both generations, read with feedparser.

* The 2024 format (RSS 2.0 at ``/rss/CATS``, Atom at ``/atom/CATS``): each item has
  ``arxiv:announce_type`` (new, cross, replace, replace-cross), a description
  ``arXiv:ID vN Announce Type: TYPE \\nAbstract: ...``, ``dc:creator`` with comma-separated names,
  optional ``arxiv:DOI`` / ``arxiv:journal_reference``, and the announcement day as pubDate.
* The old RDF / RSS 1.0 format (``export.arxiv.org/rss``, before 2024): titles end in
  ``(arXiv:ID vN [cat] CROSS LISTED|UPDATED)``, creators are HTML links, abstracts HTML.

``announced`` is the item's (else the channel's) date as written in its own time zone, and
``published`` stays unknown: a feed gives announcement days, not submission times. An empty feed
(weekends, holidays) is a normal, empty listing; something that is not a feed is an InputError.
"""

from __future__ import annotations

import email.utils
import html
import re
from datetime import date, datetime

from ..errors import InputError
from ..models import Paper, parse_arxiv_id
from . import Listing, read_entries
from .xmlsafe import is_xml, parse_feed

# RSS 2.0 (no namespace), RDF / RSS 1.0, Atom
ROOTS = ("rss", "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}RDF", "{http://www.w3.org/2005/Atom}feed")
ANNOUNCE_TYPES = ("new", "cross", "replace", "replace-cross")
_DESC_RE = re.compile(r"^\s*arXiv:\S+\s+Announce Type:\s*(?P<type>[\w-]+)\s*(?:Abstract:\s*)?", re.S)
_OLD_TITLE_RE = re.compile(
    r"^(?P<title>.*?)\.?\s*\(arXiv:(?P<id>\S+?)\s*\[(?P<cat>[^\]]+)\]\s*(?P<flag>CROSS LISTED|UPDATED)?\)\s*$",
    re.S)
_ANCHOR_RE = re.compile(r"<a\b[^>]*>(.*?)</a>", re.S | re.I)
_TAG_RE = re.compile(r"<[^>]+>")
_NOT_AUTHORS = re.compile(r"^(et al\.?|\(?\d+ additional authors? not shown\)?)$", re.I)


def sniff(head: str) -> bool:
    """RSS 2.0, RDF, or an Atom feed from rss.arxiv.org (the API's Atom is arxiv_atom's)."""
    return is_xml(head) and ("<rss" in head or "<rdf:RDF" in head
            or ("<feed" in head and ("rss.arxiv.org" in head or "announce_type" in head)))


def _strip_html(text: str) -> str:
    return " ".join(html.unescape(_TAG_RE.sub(" ", text)).split())


def _authors(raw: str) -> list[str]:
    anchors = _ANCHOR_RE.findall(raw)
    names = anchors if anchors else _strip_html(raw).split(",")
    out = []
    for name in names:
        name = _strip_html(name).strip(" ,;:")
        if name and not _NOT_AUTHORS.match(name):
            out.append(name)
    return out


def local_date(raw: str | None) -> date | None:
    """The calendar date of an RFC 822 or ISO 8601 timestamp, in its own time zone."""
    if not raw:
        return None
    raw = raw.strip()
    try:
        return datetime.fromisoformat(raw).date()
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(raw).date()
    except (TypeError, ValueError, IndexError):
        return None


def entry_to_paper(entry, feed_day: date | None) -> Paper:
    """One feedparser entry as a Paper (InputError when it carries no arXiv id)."""
    title = " ".join((entry.get("title") or "").split())
    summary = entry.get("summary") or ""
    announce = (entry.get("arxiv_announce_type") or "").strip().lower() or None
    ident = parse_arxiv_id(entry.get("id")) or parse_arxiv_id(entry.get("link"))
    categories = [t["term"] for t in entry.get("tags") or [] if t.get("term")]
    m = _DESC_RE.match(summary)
    if m:  # 2024 format
        announce = announce or m.group("type").lower()
        abstract = " ".join(summary[m.end():].split())
    else:
        abstract = _strip_html(summary)
    old = _OLD_TITLE_RE.match(title)
    if old:  # RDF: "Title. (arXiv:1805.06430v2 [nucl-th] UPDATED)"
        title = old.group("title").strip()
        ident = parse_arxiv_id(old.group("id")) or ident
        categories = categories or [old.group("cat").strip()]
        flag = old.group("flag")
        announce = announce or {"CROSS LISTED": "cross", "UPDATED": "replace"}.get(flag, "new")
    if ident is None or not title:
        raise InputError(f"item {entry.get('id') or entry.get('link') or title!r} has no arXiv id")
    day = local_date(entry.get("published") or entry.get("updated")) or feed_day
    return Paper(
        title=title,
        arxiv_id=ident[0],
        version=ident[1],
        authors=_authors(entry.get("author") or ""),
        abstract=abstract,
        categories=categories,
        primary_category=categories[0] if categories else None,
        journal_ref=(entry.get("arxiv_journal_reference") or "").strip() or None,
        doi=(entry.get("arxiv_doi") or "").strip() or None,
        url=f"https://arxiv.org/abs/{ident[0]}",
        announce_type=announce,
        announced=day,
        source="arxiv-rss",
    )


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse an arXiv RSS/Atom/RDF feed; InputError when ``data`` is not a feed."""
    parsed = parse_feed(data, origin, "an arXiv RSS/Atom feed", ROOTS)
    feed = parsed.feed
    feed_day = local_date(feed.get("published") or feed.get("updated"))
    listing = Listing(title=feed.get("title"), date=feed_day)
    return read_entries(listing, origin, parsed.entries, lambda entry: entry_to_paper(entry, feed_day))
