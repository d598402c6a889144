"""Readers and writers of listing formats, detected from content (docs/formats.md).

Each reader module has ``sniff(head: str) -> bool`` (does this text look like mine?) and
``parse(data: bytes, origin: str, today: date | None) -> Listing``. ``READERS`` lists them in
the order :func:`detect` tries them: the most specific first. Parsing never touches the network;
sources fetch bytes and hand them here.
"""

from __future__ import annotations

import importlib
import re
import zlib
from dataclasses import dataclass, field
from datetime import date

from ..errors import InputError, TooManyValues
from ..models import Paper, clean_text

# name -> module; order matters for detection.
READERS: dict[str, str] = {
    "pubmed-xml": "watcher.formats.pubmed_xml",
    "biorxiv-json": "watcher.formats.biorxiv_json",
    "journal-feed": "watcher.formats.journal_feed",
    "arxiv-oai": "watcher.formats.arxiv_oai",
    "arxiv-atom": "watcher.formats.arxiv_atom",
    "arxiv-rss": "watcher.formats.arxiv_rss",
    "hf-json": "watcher.formats.hf_json",
    "openalex": "watcher.formats.openalex_works",
    "crossref": "watcher.formats.crossref",
    "zotero": "watcher.formats.zotero_json",
    "text": "watcher.formats.text",
    "papers-json": "watcher.formats.papers_json",
    "hf-page": "watcher.formats.hf_page",
}


@dataclass
class Listing:
    """Papers read from one input, with the listing's own title and date when it has them.

    Paged formats also say where this page sits: ``total``/``start``/``page_size`` (arXiv API
    OpenSearch counters) and ``next_token`` (an OAI-PMH resumptionToken; None on the last page).
    """

    papers: list[Paper] = field(default_factory=list)
    format: str = ""
    title: str | None = None
    date: date | None = None
    total: int | None = None
    start: int | None = None
    page_size: int | None = None
    next_token: str | None = None
    skipped: list[str] = field(default_factory=list)  # entries that are no paper (no id / title)


_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


def file_dated(listing: Listing, origin: str) -> date | None:
    """The day a listing files its papers under: its own date, else a date in its file's name
    (``corpus-2025-04-11.jsonl.gz``: the API answers and corpus files carry none); each paper
    without an announcement day gets it. None when neither says."""
    day = listing.date
    if day is None and (m := _DATE_IN_NAME.search(origin.replace("\\", "/").rsplit("/", 1)[-1])):
        try:
            day = date.fromisoformat(m.group(1))
        except ValueError:
            day = None
    for p in listing.papers:
        p.announced = p.announced or day
    return day


def skip_entry(listing: "Listing", origin: str, problem: Exception) -> None:
    """Leave out one entry of a feed that is not a paper (no arXiv id, no title), with a warning:
    one broken entry must not fail the whole feed forever, and so hold back every other paper."""
    import logging

    listing.skipped.append(str(problem))
    logging.getLogger("watcher").warning("%s: skipped an entry that is not a paper: %s", origin, problem)


def read_entries(listing: "Listing", origin: str, entries, to_paper) -> "Listing":
    """``listing`` with ``to_paper(entry)`` of each of ``entries`` appended: an entry that is not
    a paper (InputError) is skipped with a warning (:func:`skip_entry`), a feed of nothing but
    such entries is refused (:func:`no_paper_at_all`)."""
    for entry in entries:
        try:
            listing.papers.append(to_paper(entry))
        except InputError as e:
            skip_entry(listing, origin, e)
    return no_paper_at_all(listing, origin)


def no_paper_at_all(listing: "Listing", origin: str) -> "Listing":
    """``listing``, unless every entry was skipped: then the feed is wrong, not one entry
    (InputError with the first entry's problem)."""
    if listing.skipped and not listing.papers:
        raise InputError(f"{origin}: {listing.skipped[0]} (and every other entry too)")
    return listing


def page_listing(page, origin: str) -> "Listing":
    """One page of a cursor-paged works API (OpenAlex, Crossref: ``papers``, ``count``,
    ``next_cursor``, ``skipped``) as a listing (:func:`no_paper_at_all`)."""
    return no_paper_at_all(Listing(papers=page.papers, total=page.count, next_token=page.next_cursor,
                                   skipped=page.skipped), origin)


_XML_ENCODING = re.compile(rb"""\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")


def _head(data: bytes, origin: str) -> str:
    if not data.strip():
        raise InputError(f"{origin}: empty input")
    if b"\x00" in data[:8192]:
        raise InputError(f"{origin}: binary data, not a listing")
    try:
        return data[:65536].decode("utf-8")
    except UnicodeDecodeError as e:
        declared = _XML_ENCODING.match(data[:512])  # XML in the encoding it declares (ISO-8859-1):
        if declared:                                 # its reader decodes it so; sniffing needs only the head
            try:
                return data[:65536].decode(declared.group(1).decode("ascii"), errors="replace")
            except LookupError:
                pass
        if e.start < 65536 - 4:
            raise InputError(f"{origin}: not UTF-8 text (byte {e.start})") from e
        return data[: e.start].decode("utf-8")


def detect(data: bytes, origin: str = "input") -> str:
    """The name of the format of ``data``; InputError when it is empty, binary or unknown."""
    head = _head(data, origin).lstrip("\ufeff")
    for name, module in READERS.items():
        if importlib.import_module(module).sniff(head):
            return name
    raise InputError(
        f"{origin}: unknown format (expected a text digest, an HF Daily Papers page, arXiv "
        "Atom/RSS/OAI-PMH XML, Hugging Face / watcher / bioRxiv / OpenAlex / Zotero JSON, PubMed "
        "XML or a journal's RSS/Atom feed)"
    )


MAX_UNPACKED = 64 * 1024 * 1024  # what a gzip listing may unpack to (the wire's own limit)


def gunzip(data: bytes, origin: str, limit: int = MAX_UNPACKED) -> bytes:
    """``data`` decompressed when it is gzip (a ``.gz`` file or body), else unchanged. The
    output is bounded, not only the input: a megabyte of gzip can unpack to gigabytes, so
    decompression stops (InputError) as soon as it would give more than ``limit`` bytes."""
    if data[:2] != b"\x1f\x8b":
        return data
    out, size, fed = [], 0, False
    unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)  # one gzip member at a time
    view = memoryview(data)
    try:
        for start in range(0, len(data), 1 << 16):  # 64 KiB of input at a time ...
            piece = view[start:start + (1 << 16)]
            while piece:
                if not fed and not bytes(piece).strip(b"\0"):
                    break  # padding after the last member
                fed = True
                out.append(unpack.decompress(piece, 1 << 20))  # ... giving at most 1 MiB a call
                size += len(out[-1])
                if size > limit:
                    raise InputError(f"{origin}: gzip data unpacks to more than {limit:,} bytes "
                                     "(the limit of a listing); not read")
                piece = unpack.unconsumed_tail
                if unpack.eof:  # another member may follow
                    piece, fed = unpack.unused_data, False
                    unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
    except zlib.error as e:
        raise InputError(f"{origin}: broken gzip data ({e})") from e
    if fed:
        raise InputError(f"{origin}: broken gzip data (it ends before its last block)")
    return b"".join(out)


def read(data: bytes, origin: str = "input", *, today: date | None = None,
         format: str | None = None) -> Listing:
    """Detect the format of ``data`` (gzip is unpacked first, unless a format is given) and
    parse it into a :class:`Listing`."""
    if format is None:
        data = gunzip(data, origin)
    name = format or detect(data, origin)
    listing = importlib.import_module(READERS[name]).parse(data, origin, today)
    listing.format = name
    return listing


def decode_text(data: bytes, origin: str) -> str:
    """``data`` as UTF-8 text without control characters (tab and line breaks stay), or an
    InputError naming the input."""
    _head(data, origin)
    try:
        return clean_text(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise InputError(f"{origin}: not UTF-8 text (byte {e.start})") from e


MAX_JSON_CONTAINERS = 1_000_000  # objects and arrays one JSON listing may hold (~100 a paper)
MAX_JSON_VALUES = 8_000_000  # values (commas) one JSON listing may hold


def bound_json(text: str, origin: str, max_containers: int = MAX_JSON_CONTAINERS) -> None:
    """TooManyValues when ``text`` would parse into more objects, arrays (``max_containers``)
    or values than a listing holds: a few megabytes of ``[{},{},…]`` parse into gigabytes of
    Python objects, so the parse is bounded by what it would make, not only by the bytes read.
    Counted over the whole text, strings included (a comma in an abstract counts: only an
    overestimate)."""
    containers = text.count("{") + text.count("[")
    if containers > max_containers or text.count(",") > MAX_JSON_VALUES:
        raise TooManyValues(f"{origin}: JSON with more than {max_containers:,} objects and arrays "
                            f"or {MAX_JSON_VALUES:,} values; too large a listing, not read")


def load_json(data: bytes, origin: str, max_containers: int = MAX_JSON_CONTAINERS):
    """``data`` as a JSON document (UTF-8, control characters dropped), or an InputError
    naming the input: an API's answer cut off or replaced by an error page; TooManyValues past
    ``max_containers`` objects and arrays (:func:`bound_json`)."""
    import json

    text = decode_text(data, origin)
    bound_json(text, origin, max_containers)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # RecursionError: [[[[… nested past the stack
        raise InputError(f"{origin}: invalid JSON ({e}); the response may be truncated or an "
                         "error page") from e
