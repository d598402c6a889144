"""A journal's (or a preprint server's) table of contents: RSS 0.9x, RSS 1.0 (RDF), RSS 2.0 or
Atom, read with feedparser, whatever namespace (if any) its PRISM metadata uses — Nature,
Wiley, Elsevier, Oxford Academic, Taylor & Francis, Cambridge, Pensoft, the Microbiology
Society, Ingenta, OJS journals, PubMed search RSS, bioRxiv / medRxiv subject RSS …

What publishers write differently is declared in :mod:`watcher.formats.journal_rules`; here it
is applied to every item:

- **title**: inline markup is joined without a space (``S<sub>N</sub>2`` is "SN2"), a BOM and
  runs of white space are dropped.
- **authors**: one ``dc:creator`` / ``author`` per person, each "Last, First" turned round
  when all are written so; one string of several names split ("A, B and C",
  "Brandão S, Saeedi H, Brandt A." -> "S Brandão", …; "et al." marks the list cut short); else
  the ``Authors:`` / ``Author(s):`` of a citation line.
- **journal**: the item's ``prism:publicationName`` (unless it is the item's own title, as
  Taylor & Francis write it), ``dc:source`` or ``prism:publicationTitle``, else the channel's
  ``prism:publicationName``, else the channel title without its decorations; a search feed's
  channel title (PubMed) names no journal. A preprint server's feed gives a venue, no journal.
- **abstract**: the content or description without HTML, citation boilerplate or an "Abstract"
  heading; none when only boilerplate or the title again is left.
- **identifiers**: the DOI from ``prism:doi``, ``dc:identifier``, a citation line's ``DOI:``,
  or the item's link or id; the PMID of a PubMed item (``guid`` ``pubmed:…``); a bioRxiv item's
  version (``…v2``) and subject.
- **date**: ``prism:publicationDate``, ``dc:date``, ``pubDate`` or ``updated``.

Each paper records how its title, authors, journal and abstract were read (``origins``:
"feed:list", "feed:split", "feed:channel" …), which the merge policy of
:mod:`watcher.identity` weighs against other listings of the work. An item without a title is
skipped with a warning; an empty feed is an empty listing; what is not a well-formed feed (a
cut-off answer, an HTML error page) is an InputError, so that a broken feed never passes for a
short one.
"""

from __future__ import annotations

import html
import re
from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper, is_preprint_doi, normalize_doi, parse_iso
from . import Listing, read_entries
from .arxiv_rss import ROOTS, local_date
from .journal_rules import (ABSTRACT_PREFIXES, AUTHOR_LIST, BOILERPLATE, CHANNEL_TITLES,
                            SEARCH_CHANNELS)
from .xmlsafe import is_xml, parse_feed

EXPECTED = "an RSS or Atom table of contents"
# What only arXiv's own feeds carry (its namespace, its hosts): every other feed is a journal's.
_ARXIV_MARKERS = ("arxiv.org/schemas", "rss.arxiv.org", "export.arxiv.org", "arxiv.org/api",
                  "<link>http://arxiv.org", "<link>https://arxiv.org",
                  'rdf:about="http://arxiv.org', 'rdf:about="https://arxiv.org')
_FEED_ROOTS = ("<rss", "<rdf:RDF", "<feed", "<RDF")
# inline markup joins its text to the next (S<sub>N</sub>2); any other tag separates words
_INLINE = re.compile(r"</?(?:a|abbr|b|big|cite|code|em|font|i|inf|mml:[\w.-]+|math|small|span|"
                     r"strong|sub|sup|sc|tt|u|var)\b[^>]*>", re.I)
_TAG_RE = re.compile(r"<[^>]+>")
_SPACE_BEFORE_STOP = re.compile(r"\s+(?=[.,;:](?:\s|$))")
_VERSION = re.compile(r"v(\d{1,6})(?:[?#/]|$)")
_PMID = re.compile(r"^(?:pubmed|pmid):\s*(\d+)$|pubmed\.ncbi\.nlm\.nih\.gov/(\d+)", re.I)
_SUBJECT = re.compile(r"Subject Collection:\s*(?P<subject>.+)$|[?&]subject=(?P<query>[\w-]+)", re.I)


def sniff(head: str) -> bool:
    """Any RSS or Atom feed that is not one of arXiv's (the arXiv readers take those)."""
    return (is_xml(head) and any(root in head for root in _FEED_ROOTS)
            and not any(marker in head for marker in _ARXIV_MARKERS))


def text(raw: str) -> str:
    """Markup as one line of text: inline tags joined, others a space, entities decoded, a BOM
    dropped, no space before a full stop or comma that markup put there."""
    joined = _TAG_RE.sub(" ", _INLINE.sub("", raw))
    line = " ".join(html.unescape(joined).replace("\ufeff", "").split())
    return _SPACE_BEFORE_STOP.sub("", line)


def _first(entry, *keys) -> str:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


def _doi(entry, found: str | None) -> str | None:
    for key in ("prism_doi", "dc_identifier"):
        if doi := normalize_doi(entry.get(key) if isinstance(entry.get(key), str) else None):
            return doi
    if found:
        return normalize_doi(found)
    for key in ("id", "link"):
        value = entry.get(key)
        if isinstance(value, str) and (doi := normalize_doi(re.split(r"[?#]", value, maxsplit=1)[0])):
            return doi  # a link's query is no part of a DOI
    return None


def _pmid(entry) -> str | None:
    for key in ("id", "dc_identifier", "link"):
        value = entry.get(key)
        if isinstance(value, str) and (m := _PMID.search(value.strip())):
            return m.group(1) or m.group(2)
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


_WRITTEN_DAY = re.compile(r"^(?:(?P<day>\d{1,2})\s+)?(?P<month>[A-Za-z]{3})[a-z]*\s+(?P<year>\d{4})$")


def _written_day(text: str | None) -> datetime | None:
    """"16 December 2021", or "February 2022" (its first day, as PubMed's month-only dates),
    as a date; None when ``text`` is no such date."""
    from .hf_page import MONTHS

    m = _WRITTEN_DAY.match((text or "").strip())
    month = MONTHS.get(m["month"].title()) if m else None
    try:
        return datetime(int(m["year"]), month, int(m["day"] or 1), tzinfo=timezone.utc) if month else None
    except ValueError:  # 31 February
        return None


def split_authors(names: list[str]) -> tuple[list[str], str]:
    """The authors an item names and how they were written: ``list`` (one name per element),
    ``split`` (one string of several names) or ``truncated`` ("et al."). "Last, First" names
    are turned round when every element is written so (or the only one is "Word, Word"); a
    list of "Surname Initials" becomes "Initials Surname", given names first as everywhere."""
    names = [" ".join(n.split()).strip(" ,;") for n in names if n and n.strip(" ,;")]
    inverted = AUTHOR_LIST["inverted"]
    if len(names) > 1:
        if all(inverted.match(n) for n in names):
            names = [_turn(inverted.match(n)) for n in names]
        return names, "list"
    if not names:
        return [], "list"
    one = names[0]
    if (m := inverted.match(one)) and " " not in m["surname"].strip() and " " not in m["given"].strip():
        return [_turn(m)], "list"  # "Inoda, Toshio"
    if AUTHOR_LIST["inverted_pairs"].match(one):  # "Kukla, D., Crampton, A."
        return [_turn(m) for m in AUTHOR_LIST["pair"].finditer(one)], "split"
    cut = AUTHOR_LIST["truncated"].search(one)
    if cut:
        one = one[:cut.start()]
    parts = [p.strip() for p in AUTHOR_LIST["separators"].split(one) if p.strip(" ,;.")]
    initials = AUTHOR_LIST["surname_initials"]
    if parts and (len(parts) > 1 or cut) and all(initials.match(p) for p in parts):
        parts = [f"{m['initials']} {m['surname']}" for m in map(initials.match, parts)]
    kind = "truncated" if cut else "split" if len(parts) > 1 else "list"
    return parts, kind


def _turn(m: re.Match) -> str:
    return f"{m['given'].strip()} {m['surname'].strip()}"


def _cleaned(raw: str, title: str) -> tuple[str, dict]:
    """The abstract in one content or description (empty when it holds none) and what its
    citation boilerplate said (``authors``, ``doi``)."""
    line = text(raw)
    said: dict = {}
    for _, pattern in BOILERPLATE:
        if m := pattern.match(line):
            said = {k: v for k, v in m.groupdict().items() if v and k != "abstract"}
            line = m.groupdict().get("abstract") or ""
            break
    line = ABSTRACT_PREFIXES.sub("", line).strip()
    if not line.strip(" .,;"):
        line = ""
    if line.casefold().rstrip(". ") == title.casefold().rstrip(". "):
        line = ""  # Nature's research items: the title again
    return line, said


def _abstract(entry, title: str) -> tuple[str, dict]:
    raws = [c.get("value", "") for c in entry.get("content") or []] + [entry.get("summary") or ""]
    abstract, said = "", {}
    for raw in raws:
        found, told = _cleaned(raw, title)
        said = {**told, **said}
        if found and not abstract:
            abstract = found
    return abstract, said


def channel_journal(feed) -> tuple[str | None, str | None, str]:
    """The journal a feed's channel names, how (``named``: PRISM metadata, ``channel``: its
    title without decorations) and the publisher rule that read it (for ``origins``)."""
    title = " ".join(str(feed.get("title") or "").replace("\ufeff", "").split())
    where = " ".join(str(feed.get(k) or "") for k in ("link", "generator", "id"))
    if any(p.search(where) for _, p in SEARCH_CHANNELS):
        return None, None, "search"
    named = " ".join(str(feed.get("prism_publicationname") or "").split())
    if named:
        return named, "named", ""
    for _rule, pattern in CHANNEL_TITLES:
        if m := pattern.match(title):
            return m["name"].strip(), "channel", ""
    return title or None, "channel", ""


def entry_to_paper(entry, channel: tuple[str | None, str | None, str], subject: str | None = None,
                   position: int | None = None) -> Paper:
    """One feedparser entry (the ``position``-th of its feed) as a Paper (InputError when it
    has no title)."""
    title = text(entry.get("title") or "")
    if not title:
        named = entry.get("link") or entry.get("id")
        raise InputError(" ".join(filter(None, ("item", position and str(position), named and f"({named})",
                                                "has no title"))))
    abstract, said = _abstract(entry, title)
    names = [a.get("name", "") for a in entry.get("authors") or [] if isinstance(a, dict)]
    if not any(n and n.strip() for n in names) and entry.get("author"):
        names = [entry["author"]]
    if not any(n and n.strip() for n in names) and said.get("authors"):
        names = [said["authors"]]
    authors, author_kind = split_authors(names)
    own = _first(entry, "prism_publicationname")
    journal, journal_kind = None, None
    if own and own.casefold() != title.casefold():  # Taylor & Francis: the item's title
        journal, journal_kind = own, "named"
    elif item_named := _first(entry, "dc_source", "prism_publicationtitle"):
        journal, journal_kind = item_named, "named"
    elif channel[0]:
        journal, journal_kind = channel[0], channel[1]
    when = _when(entry) or _written_day(said.get("published"))
    doi = _doi(entry, said.get("doi"))
    preprint = doi is not None and is_preprint_doi(doi)  # ChemRxiv's, OSF's, bioRxiv's feed
    link = entry.get("link") or None
    version = None
    if preprint and link and (m := _VERSION.search(link)):
        version = int(m.group(1))
    origins = {"title": "feed"}
    if authors:
        origins["authors"] = f"feed:{author_kind}"
    if journal:
        origins["journal"] = f"feed:{journal_kind}"
    if abstract:
        origins["abstract"] = "feed:truncated" if abstract.endswith(("...", "…")) else "feed:full"
    return Paper(
        title=title,
        authors=authors,
        abstract=abstract,
        published=when if version in (None, 1) else None,
        updated=when if version else None,
        version=version,
        categories=[subject] if preprint and subject else [],
        primary_category=subject if preprint and subject else None,
        doi=doi,
        pmid=_pmid(entry),
        url=link,
        journal=None if preprint else journal,
        venues=[journal] if journal else [],
        announced=when.date() if when else None,
        source="feed",
        origins=origins,
    )


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse a table of contents; InputError when ``data`` is not a well-formed feed."""
    parsed = parse_feed(data, origin, EXPECTED, ROOTS)
    feed = parsed.feed
    channel = channel_journal(feed)
    subject = None
    for value in (feed.get("title"), feed.get("link")):
        if isinstance(value, str) and (m := _SUBJECT.search(value)):
            subject = " ".join((m["subject"] or m["query"] or "").replace("_", " ").split()).lower() or None
            break
    listing = Listing(title=feed.get("title"), date=local_date(feed.get("updated") or feed.get("published")))
    return read_entries(listing, origin, enumerate(parsed.entries, 1),
                        lambda item: entry_to_paper(item[1], channel, subject, item[0]))
