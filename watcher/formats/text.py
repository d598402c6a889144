"""The plain-text digest format of ``seeds/llm-rl-2025-04-12.txt`` (read and written).

::

    {profile title} - {YYYY-MM-DD}

    {title}

    Authors:{name}, {name}, ...
    Date:{YYYY-MM-DD HH:MM:SS}

    {abstract, one line}

``Date:`` is the first version's submission time, else the day the paper was announced at
00:00:00 (:attr:`Paper.entry_date`). Papers are separated by one blank line, newest first; no newline after the last abstract.
Reading and writing back gives the same bytes. Reading is lenient where editors are: a digest
saved with CRLF line endings (an editor on Windows) is read as if its line endings were LF, and
a final newline or trailing blank lines (every editor adds one) are ignored; writing always
gives LF and no final newline.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper
from . import Listing, decode_text

HEADER_RE = re.compile(r"^(?P<title>.*\S) - (?P<date>\d{4}-\d{2}-\d{2})$")
DATE_FMT = "%Y-%m-%d %H:%M:%S"


# what editors append after the last abstract: line breaks, and lines of blanks between them
_TRAILING_BLANK_LINES = re.compile(r"(?:\n[ \t]*)+\Z")


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n") if "\r" in text else text


def sniff(head: str) -> bool:
    """A header line ``Title - YYYY-MM-DD`` followed by a blank line (LF or CRLF)."""
    first, _, rest = _lf(head).partition("\n")
    return bool(HEADER_RE.match(first)) and (rest == "" or rest.startswith("\n"))


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse a text digest; InputError naming the line on any deviation from the format."""
    text = _lf(decode_text(data, origin))
    kept = _TRAILING_BLANK_LINES.sub("", text)
    tail_breaks = text.count("\n", len(kept))
    text = kept
    header, sep, body = text.partition("\n\n")
    m = HEADER_RE.match(header)
    if not m or "\n" in header:
        raise InputError(f"{origin}: line 1: expected a header 'Title - YYYY-MM-DD' then a blank line")
    try:
        listing_date = date.fromisoformat(m["date"])
    except ValueError:
        raise InputError(f"{origin}: line 1: {m['date']!r} is not a date") from None
    listing = Listing(title=m["title"], date=listing_date)
    if not body:
        return listing
    blocks = body.split("\n\n")
    if len(blocks) % 3 == 2 and tail_breaks >= 2:  # the last abstract is empty: "Date:…\n\n"
        blocks.append("")
    line = 3
    if len(blocks) % 3:
        raise InputError(f"{origin}: expected entries of title, Authors:/Date: lines and abstract "
                         f"separated by blank lines; found {len(blocks)} blocks, not a multiple of 3")
    for i in range(0, len(blocks), 3):
        title, meta, abstract = blocks[i:i + 3]
        listing.papers.append(_entry(title, meta, abstract, origin, line))
        line += title.count("\n") + meta.count("\n") + abstract.count("\n") + 6
    return listing


def _entry(title: str, meta: str, abstract: str, origin: str, line: int) -> Paper:
    if not title.strip() or "\n" in title:
        raise InputError(f"{origin}: line {line}: expected a one-line title")
    lines = meta.split("\n")
    if len(lines) != 2 or not lines[0].startswith("Authors:") or not lines[1].startswith("Date:"):
        raise InputError(f"{origin}: line {line + 2}: expected 'Authors:…' and 'Date:…' lines")
    if "\n" in abstract:
        raise InputError(f"{origin}: line {line + 5}: expected a one-line abstract")
    authors = lines[0][len("Authors:"):]
    stamp = lines[1][len("Date:"):]
    published = None
    if stamp:
        try:
            published = datetime.strptime(stamp, DATE_FMT).replace(tzinfo=timezone.utc)
        except ValueError:
            raise InputError(f"{origin}: line {line + 3}: {stamp!r} is not 'YYYY-MM-DD HH:MM:SS'") from None
    return Paper(
        title=title,
        authors=authors.split(", ") if authors else [],
        published=published,
        abstract=abstract,
        source="text",
    )


def write(title: str, day: date, papers: list[Paper]) -> str:
    """Render ``papers`` (already in digest order) as a text digest."""
    parts = [f"{title} - {day.isoformat()}"]
    for p in papers:
        stamp = utc_stamp(p.entry_date)
        parts.append(f"{one_line(p.title)}\n\nAuthors:{', '.join(one_line(a) for a in p.authors)}"
                     f"\nDate:{stamp}\n\n{one_line(p.abstract)}")
    return "\n\n".join(parts)


def utc_stamp(dt: datetime | None) -> str:
    """``YYYY-MM-DD HH:MM:SS`` in UTC with a four-digit year (``strftime("%Y")`` writes ``604``
    for the year 604 on glibc, which the reader rightly refuses), or "" for no date."""
    if dt is None:
        return ""
    return dt.astimezone(timezone.utc).isoformat(sep=" ", timespec="seconds")[:19]


def one_line(text: str) -> str:
    """Collapse line breaks (arXiv hard-wraps, CRLF) and the spaces around them to one space;
    text already on one line is kept byte for byte, except blanks alone, which are nothing (a
    last abstract of blanks would read back as an editor's trailing blank line)."""
    if "\n" not in text and "\r" not in text and text.strip():
        return text
    return " ".join(text.split())
