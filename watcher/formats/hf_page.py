"""The text of a Hugging Face Daily Papers page, as ``seeds/hf-daily-papers-page.txt``.

Blocks are separated by blank lines. After the page chrome (``Daily Papers``, ``byAK and the
research community``, the page date ``Apr 17``) each entry is a title block, an abstract block
and optionally a metadata block::

      • 8 authors            <- or an organisation line: "qualcomm Qualcomm"
    ·
    May 30, 2025 4           <- date (Mon D, YYYY; or Mon D in the page's year), upvotes

Every entry is ``announced`` on the page's own date (``Apr 17``: the day these papers went on
Daily Papers), so an entry without a metadata block still has a date in a text digest.
The page's year is the year of ``today`` when given (``watcher convert --date``), else one more
than the latest year written out on the page (the site writes the year only for other years),
else the current year.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper
from ..util.text import shorten
from . import Listing, decode_text

MONTHS = {m: i for i, m in enumerate(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), start=1)}
DATE_RE = re.compile(r"^(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2})(?:, (?P<year>\d{4}))?(?: (?P<up>\d{1,9}))?$")
AUTHORS_RE = re.compile(r"^\s*•\s*(?P<n>\d{1,9}) authors?$")
CHROME = {"new", "Get trending papers in your email inbox!", "Subscribe", "Daily Papers",
          "byAK and the research community", "Trending Papers"}


def sniff(head: str) -> bool:
    """The page chrome, or entries whose metadata blocks carry a lone ``·`` line."""
    lines = [line.strip() for line in head.splitlines()]
    return "Daily Papers" in lines[:12] or (lines.count("·") >= 1 and any(
        AUTHORS_RE.match(line) or DATE_RE.match(line) for line in lines))


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    blocks, current, start = [], [], 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line)
        elif current:
            blocks.append((start, current))
            current = []
    if current:
        blocks.append((start, current))
    return blocks


def _is_meta(lines: list[str]) -> bool:
    """A metadata block: it has the lone ``·`` line, or starts with the author count, or ends
    with the date line (so a block whose ``·`` is damaged is refused as metadata, not read as
    the next title, which would shift every entry after it)."""
    return ("·" in (line.strip() for line in lines) or bool(AUTHORS_RE.match(lines[0]))
            or bool(DATE_RE.match(lines[-1].strip())))


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse the page; InputError when no entry can be read."""
    text = decode_text(data, origin)
    blocks = _blocks(text)
    listing = Listing(title="Daily Papers")
    page_day, start = None, 0
    for k, (_, lines) in enumerate(blocks[:len(CHROME) + 4]):
        if len(lines) != 1:
            break
        m = DATE_RE.match(lines[0].strip())
        if m and not m["up"]:  # the page's date: the one-line blocks before it are chrome, even
            page_day, start = m, k + 1  # one with a typo, which is no paper
            break
    while start < len(blocks) and len(blocks[start][1]) == 1 and blocks[start][1][0].strip() in CHROME:
        start += 1
    del blocks[:start]
    years = [int(m["year"]) for m in (DATE_RE.match(l.strip()) for _, b in blocks for l in b) if m and m["year"]]
    year = today.year if today else (max(years) + 1 if years else datetime.now(timezone.utc).year)
    if page_day:
        listing.date = _date(page_day, year, origin, 0)
    entries = []
    i = 0
    while i < len(blocks):
        line_no, title = blocks[i]
        if _is_meta(title):
            raise InputError(f"{origin}: line {line_no}: metadata without a title and abstract before it")
        if i + 1 >= len(blocks) or _is_meta(blocks[i + 1][1]):
            raise InputError(f"{origin}: line {line_no}: title without an abstract")
        abstract = blocks[i + 1][1]
        paper = Paper(title=" ".join(" ".join(title).split()),
                      abstract=" ".join(" ".join(abstract).split()), source="hf-page")
        i += 2
        if i < len(blocks) and _is_meta(blocks[i][1]):
            _meta(paper, blocks[i], year, origin)
            i += 1
        entries.append(paper)
    if not entries:
        raise InputError(f"{origin}: no paper entries found on the page")
    for paper in entries:  # the page is the Daily Papers of its day: when each went on it
        paper.announced = listing.date
    listing.papers = entries
    return listing


def _date(m: re.Match, year: int, origin: str, line_no: int) -> date:
    try:
        return date(int(m["year"] or year), MONTHS[m["mon"]], int(m["day"]))
    except (KeyError, ValueError):
        raise InputError(f"{origin}: line {line_no}: {m.group(0)!r} is not a date") from None


def _meta(paper: Paper, block: tuple[int, list[str]], year: int, origin: str) -> None:
    start, lines = block
    for offset, raw in enumerate(lines):
        line = raw.strip()
        if line == "·":
            continue
        if m := AUTHORS_RE.match(raw):
            paper.author_count = int(m["n"])
        elif m := DATE_RE.match(line):
            day = _date(m, year, origin, start + offset)
            paper.published = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
            paper.upvotes = int(m["up"]) if m["up"] else None
        elif offset == 0:
            slug, _, name = line.partition(" ")
            paper.organization = name.strip() or slug
        else:
            raise InputError(f"{origin}: line {start + offset}: unexpected metadata line {shorten(line, 80)!r}")
