"""Safe, streaming XML for the arXiv readers.

Listings are untrusted. The arXiv formats never need a document type declaration, so a
document that has one is refused before parsing: without a DTD there is nothing to expand
(no "billion laughs") and no external entity to fetch. What is left is parsed by the C
accelerated ElementTree pull parser, fed in chunks, and each record is handed out and cleared
as soon as it ends, so memory stays bounded by one record (and parsing runs at C speed:
see ``benchmarks/bench_parse.py``).
"""

from __future__ import annotations

import gc
import re
from contextlib import contextmanager
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from ..errors import InputError

CHUNK = 1 << 18  # bytes fed to the parser at a time: what one batch of its events may hold
_NAME = re.compile(rb"[A-Za-z_][\w.:-]*")
# Bounds on what a document parses into, not only on its bytes: no listing nests elements
# deeper than a few dozen, and the pull parser drops every element outside a record as soon as
# it ends (15 million empty elements beside the records took 1.4 GB); feedparser builds the
# whole document, so a feed may hold at most MAX_FEED_TAGS tags (real journal feeds: a few
# thousand; 2 million nested elements took 846 MB and 24 s).
MAX_DEPTH = 100
MAX_FEED_TAGS = 500_000


def check_prolog(data: bytes, origin: str) -> str:
    """The root element's name as written (``feed``, ``rdf:RDF``); InputError unless ``data``
    is UTF-8/ASCII-family XML without a DOCTYPE before its root."""
    if b"\x00" in data[:256]:  # UTF-16/32 XML (a byte-order mark or "<" in two or four bytes), else binary
        wide = data[:4].lstrip(b"\x00")[:2] in (b"\xff\xfe", b"\xfe\xff", b"<\x00", b"<")
        raise InputError(f"{origin}: XML in UTF-16/32 is not accepted" if wide
                         else f"{origin}: not XML: binary data (an image, an archive or a broken download?)")
    i = 0
    while True:
        j = data.find(b"<", i)
        if j < 0:
            raise InputError(f"{origin}: no XML element found")
        if data.startswith(b"<?", j):
            end, skip = data.find(b"?>", j), 2
        elif data.startswith(b"<!--", j):
            end, skip = data.find(b"-->", j), 3
        elif data.startswith(b"<!", j):
            raise InputError(f"{origin}: XML with a DOCTYPE/DTD is refused (entity expansion "
                             "and external entities are not allowed)")
        else:
            m = _NAME.match(data, j + 1)
            return m.group().decode("ascii", "replace") if m else ""
        if end < 0:
            raise InputError(f"{origin}: XML prolog is not closed")
        i = end + skip


def is_xml(head: str) -> bool:
    """True when the text starts like markup (``<``, after a BOM and white space): the XML
    readers' sniffs look for their root names only in such text, so that a text digest or a
    JSON listing quoting ``<rss`` or ``<OAI-PMH`` in an abstract is not taken for XML."""
    return head.lstrip("\ufeff \t\r\n").startswith("<")


def looks_like_html(data: bytes) -> bool:
    """True when ``data`` starts like an HTML page (a proxy or server error page)."""
    head = data[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def not_xml_error(data: bytes, origin: str, expected: str, err: Exception | None = None) -> InputError:
    """The InputError for content that is not the expected XML, saying what it looks like."""
    if looks_like_html(data):
        return InputError(f"{origin}: got an HTML page where {expected} was expected "
                          "(an error page from the server or a proxy?)")
    if not data.strip():
        return InputError(f"{origin}: empty response where {expected} was expected")
    detail = f" ({err})" if err else ""
    return InputError(f"{origin}: not well-formed XML where {expected} was expected{detail}; the "
                      "response may be truncated or not what the url should serve")


def _split(tag: str) -> tuple[str, str]:
    """``{ns}name`` as (ns, name); a tag without a namespace has ns ""."""
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return ns, name
    return "", tag


def _described(tag: str) -> str:
    ns, name = _split(tag)
    return f"<{name}> in namespace {ns!r}" if ns else f"<{name}> without a namespace"


def check_root(data: bytes, origin: str, expected: str, roots: tuple[str, ...]) -> None:
    """InputError unless the root element of ``data`` is one of ``roots`` (namespaced tags,
    ``{http://www.w3.org/2005/Atom}feed``; ``rss`` for no namespace). Checking the namespace
    and not only the name matters: the readers look for their entries by namespaced tag, so a
    document whose namespace URI is damaged (one byte spliced in) would otherwise read as a
    listing of zero papers. DTDs, HTML pages and empty input are refused first."""
    if looks_like_html(data) or not data.strip():
        raise not_xml_error(data, origin, expected)
    if b"\x00" in data[:256]:
        check_prolog(data, origin)  # XML in UTF-16/32, or binary data: it says which
    if not data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<"):  # a format named wrongly (--from)
        what = "JSON" if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[") else "text"
        raise InputError(f"{origin}: {what}, not XML, where {expected} was expected")
    written = check_prolog(data, origin)
    parser = ET.XMLPullParser(events=("start",))
    try:
        for pos in range(0, len(data), 4096):
            parser.feed(data[pos:pos + 4096])
            for _, elem in parser.read_events():
                if elem.tag in roots:
                    return
                want = " or ".join(_described(r) for r in roots)
                raise InputError(f"{origin}: XML root is {_described(elem.tag)}, not {expected} "
                                 f"({want})")
        parser.close()
    except (ET.ParseError, LookupError) as e:  # LookupError: an unknown encoding= in the prolog
        raise not_xml_error(data, origin, expected, e) from e
    raise InputError(f"{origin}: XML document <{written}> has no root element where {expected} "
                     "was expected")


def iter_ends(data: bytes, origin: str, expected: str, roots: tuple[str, ...],
              tags: set[str]) -> Iterator[ET.Element]:
    """Yield each element whose (namespaced) tag is in ``tags`` when it ends, and clear it once
    the consumer is done with it. InputError for a DTD, an HTML page, a root element not in
    ``roots`` (namespaced tags: see :func:`check_root`) or malformed / truncated XML."""
    check_root(data, origin, expected, roots)
    parser = ET.XMLPullParser(events=("start", "end"))
    open_ = []  # the elements started and not ended
    inside = 0  # how many of them are ``tags`` (records)

    def events():
        nonlocal inside
        for event, elem in parser.read_events():
            if event == "start":
                open_.append(elem)
                inside += elem.tag in tags
                if len(open_) > MAX_DEPTH:
                    raise InputError(f"{origin}: XML nested more than {MAX_DEPTH} elements deep; "
                                     f"not {expected}")
                continue
            open_.pop()
            if elem.tag in tags:
                inside -= 1
                yield elem
                elem.clear()

    def prune():
        """Drop the ended children of the open elements outside every record: nothing reads
        them again (records were handed out already)."""
        for i, elem in enumerate(open_):
            if elem.tag in tags:
                break
            if i + 1 < len(open_) and len(elem) and elem[-1] is open_[i + 1]:
                del elem[:-1]
            else:
                del elem[:]

    try:
        for pos in range(0, len(data), CHUNK):
            parser.feed(data[pos:pos + CHUNK])
            yield from events()
            prune()
        parser.close()
        yield from events()
    except (ET.ParseError, LookupError) as e:  # LookupError: an unknown encoding= in the prolog
        raise not_xml_error(data, origin, expected, e) from e


def text(elem: ET.Element | None) -> str:
    """The element's text with runs of whitespace collapsed (arXiv hard-wraps lines)."""
    if elem is None or elem.text is None:
        return ""
    return " ".join(elem.text.split())


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building many acyclic objects (a 20,000-entry
    page parses about 3x faster); reference counting still frees everything as usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_ENTITY = re.compile(rb"&(?:(#[0-9]+|#x[0-9a-fA-F]+)|([A-Za-z][A-Za-z0-9]*));|&")
_XML_ENTITIES = {b"amp", b"lt", b"gt", b"quot", b"apos"}


def _entity(m: re.Match) -> bytes:
    """An entity reference XML knows, kept; one of HTML's (``&nbsp;``) as the character's
    number; a bare ``&`` (or an unknown name) as ``&amp;`` (the text shows what was written)."""
    from html.entities import name2codepoint

    if m.group(1) or (m.group(2) and m.group(2) in _XML_ENTITIES):
        return m.group()
    code = name2codepoint.get(m.group(2).decode("ascii")) if m.group(2) else None
    return b"&#%d;" % code if code else b"&amp;" + m.group()[1:]


def repair(data: bytes) -> bytes:
    """What real feeds get wrong that a reader can set right without guessing (the PHP and
    OJS feeds of small journals): white space before the XML declaration, HTML's named
    entities (``&nbsp;``, ``&eacute;``), a bare ``&``; CDATA sections are left as they are.
    A feed cut off or broken otherwise stays broken."""
    body = data.removeprefix(b"\xef\xbb\xbf")
    if body.lstrip(b" \t\r\n").startswith(b"<?xml"):
        data = body.lstrip(b" \t\r\n")
    out, i = [], 0
    while True:  # outside each CDATA section (found with find: linear, whatever the input)
        start = data.find(b"<![CDATA[", i)
        if start < 0:
            out.append(_ENTITY.sub(_entity, data[i:]))
            return b"".join(out)
        end = data.find(b"]]>", start)
        end = len(data) if end < 0 else end + 3
        out += [_ENTITY.sub(_entity, data[i:start]), data[start:end]]
        i = end


def parse_feed(data: bytes, origin: str, expected: str, roots: tuple[str, ...]):
    """``data`` read by feedparser (RSS 1.0/2.0, Atom) once :func:`check_root` has seen one of
    ``roots``, or an InputError saying what it is instead: no feed at all, or a feed that is not
    well-formed (a cut-off feed must not pass for a short one). A feed that is not well-formed
    only by the flaws :func:`repair` sets right is read repaired."""
    try:
        return _parse_feed(data, origin, expected, roots)
    except InputError as first:
        fixed = repair(data)
        if fixed == data:
            raise
        try:
            return _parse_feed(fixed, origin, expected, roots)
        except InputError:
            raise first from None


def _parse_feed(data: bytes, origin: str, expected: str, roots: tuple[str, ...]):
    import xml.sax

    import feedparser

    check_root(data, origin, expected, roots)
    if data.count(b"<") > MAX_FEED_TAGS:  # every tag starts with one
        raise InputError(f"{origin}: more than {MAX_FEED_TAGS:,} tags; far more than any feed, "
                         f"not read as {expected}")
    try:
        parsed = feedparser.parse(data)
    except Exception as e:  # a third-party parser on untrusted bytes: any crash means "not a feed"
        raise not_xml_error(data, origin, expected, e) from e
    problem = parsed.get("bozo_exception")
    if not parsed.get("version") or isinstance(problem, xml.sax.SAXParseException) or (
            parsed.get("bozo") and not parsed.entries):
        raise not_xml_error(data, origin, expected, problem)
    return parsed
