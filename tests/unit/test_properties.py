"""Property-based tests (hypothesis) of the readers and the query parser.

* Whatever bytes arrive, the text digest reader, the HF page reader, the JSON / JSON Lines
  reader and the HF API reader end in papers of the right types or in InputError; the query
  parser ends in a Query or in QuerySyntaxError with a position inside the query. Never another
  exception.
* Round trips: text write -> read -> write is the identity; a paper written as ``--to json``
  and read back is the same paper.

Inputs are built from the formats' own line fragments mixed with arbitrary text, so the
generators reach deep into the parsers rather than failing at the first byte.
"""

from __future__ import annotations

import json
import os
from dataclasses import fields
from datetime import date, datetime, timezone

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from watcher import formats
from watcher.errors import InputError, QuerySyntaxError
from watcher.formats import hf_json, hf_page, papers_json, text
from watcher.models import Digest, Match, Paper
from watcher.matching.query import Query, parse_query
from watcher.present.render import render
from watcher.store import Store

# 200 examples each keeps the default run fast; WATCHER_PROPERTY_EXAMPLES=5000 searches harder.
FAST = settings(max_examples=int(os.environ.get("WATCHER_PROPERTY_EXAMPLES", "200")), deadline=None,
                suppress_health_check=list(HealthCheck))

# --- what "ends in papers" means: every field has its declared type -----------------------

_STR = {"title", "arxiv_id", "abstract", "primary_category", "comment", "journal_ref", "doi", "url",
        "announce_type", "source", "organization", "github_repo"}
_INT = {"version", "upvotes", "author_count"}
_LIST = {"authors", "categories", "ai_keywords"}


def assert_well_typed(paper: Paper) -> None:
    """A paper any later stage (store, matcher, templates) can take."""
    assert isinstance(paper.title, str) and paper.title.strip()
    for f in fields(Paper):
        value = getattr(paper, f.name)
        if f.name in _STR:
            assert value is None or isinstance(value, str), (f.name, value)
        elif f.name in _INT:
            assert value is None or (isinstance(value, int) and not isinstance(value, bool)), (f.name, value)
        elif f.name in _LIST:
            assert isinstance(value, list) and all(isinstance(v, str) for v in value), (f.name, value)
        elif f.name in ("published", "updated"):
            assert value is None or (isinstance(value, datetime) and value.tzinfo is not None), (f.name, value)
        elif f.name == "announced":
            assert value is None or isinstance(value, date), (f.name, value)


def read_or_input_error(reader, data: bytes, **kw) -> list[Paper]:
    """``reader(data)``'s papers (checked), or [] when it raised InputError."""
    try:
        listing = reader(data, **kw)
    except InputError as e:
        assert str(e), "an InputError says what is wrong"
        return []
    for paper in listing.papers:
        assert_well_typed(paper)
    return listing.papers


def encode(lines: list[str]) -> bytes:
    return "\n".join(lines).encode("utf-8", "surrogatepass")


any_bytes = st.binary(max_size=400)

# --- text digest ------------------------------------------------------------------------------

TEXT_LINES = st.sampled_from([
    "LLM-RL - 2025-04-12", "X - 2025-02-30", "\ufeffT - 2025-01-01", "T - 99999-01-01", "", "", "",
    "Authors:A, B", "Authors:", "Authors:, ,", "Date:2025-04-10 10:05:15", "Date:", "Date:2025-13-40 99:99:99",
    "Date:2025-04-10 10:05:15.5", "Date: 2025-04-10 10:05:15", "Date:0001-01-01 00:00:00", "A title",
    "An abstract.", "\r", " ", "\x00", "\u2028", "Daily Papers", "·", "{\"title\": 1}",
]) | st.text(max_size=20)


@FAST
@given(st.lists(TEXT_LINES, max_size=24))
@example(["T - 2025-01-01", "", "Title", "", "Authors:A", "Date:", "", "abstract"])
def test_text_reader_gives_papers_or_input_error(lines):
    data = encode(lines)
    read_or_input_error(lambda d: text.parse(d, "fuzz"), data)
    read_or_input_error(lambda d: formats.read(d, "fuzz"), data)


@FAST
@given(any_bytes)
def test_any_bytes_give_papers_or_input_error(data):
    for name in formats.READERS:
        read_or_input_error(lambda d: formats.read(d, "fuzz", format=name), data)
    read_or_input_error(lambda d: formats.read(d, "fuzz"), data)


# --- HF Daily Papers page ---------------------------------------------------------------------

HF_LINES = st.sampled_from([
    "Daily Papers", "byAK and the research community", "Apr 17", "", "", "·", "  • 8 authors", "  • 0 authors",
    "May 30, 2025 4", "Feb 30, 2025", "Feb 29", "Feb 29, 2023", "Mar 17 1", "Jan 0", "Dec 99, 2025",
    "Jan 1, 0000", "Jan 1, 9999 99999999999999999999", "qualcomm Qualcomm", "A title", "An abstract.",
    "Subscribe", "\u00b7", " \u2022 1 author",
]) | st.text(max_size=15)


@FAST
@given(st.lists(HF_LINES, max_size=24), st.none() | st.dates())
def test_hf_page_reader_gives_papers_or_input_error(lines, today):
    data = encode(lines)
    read_or_input_error(lambda d: hf_page.parse(d, "fuzz", today), data)
    read_or_input_error(lambda d: formats.read(d, "fuzz", today=today), data)


# --- JSON and JSON Lines ----------------------------------------------------------------------

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
    | st.sampled_from(["2025-04-10T10:05:15Z", "2025-04-10", "2504.07615v2", "not a date", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
RECORD_KEYS = st.sampled_from([
    "title", "id", "abs", "authors", "summary", "abstract", "published", "paper_publishedAt", "categories",
    "comment", "upvotes", "ai_keywords", "githubRepo", "file_date", "arxiv_id", "announce_type", "version",
    "updated", "announced", "author_count", "doi", "url", "paper", "publishedAt", "organization", "data"])
record = st.dictionaries(RECORD_KEYS, json_value, max_size=10).map(
    lambda d: {**d, "title": d.get("title") if len(d) % 3 else "A title"})


@pytest.mark.slow  # 200 generated documents through each of the JSON readers
@FAST
@given(st.lists(record | json_value, max_size=4), st.sampled_from(["array", "lines", "hf", "hf-data"]))
@example([{"title": "T", "authors": [{}]}], "array")
@example([{"title": "T", "arxiv_id": "x", "published": []}], "array")
@example([{"title": "T", "title2": "\u2028"}], "lines")
@example([{"title": "T", "upvotes": 2**63, "id": "2504.07615v99999999999999999999"}], "array")  # crashed the store
def test_json_readers_give_papers_or_input_error(records, layout):
    if layout == "lines":
        data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records)
    elif layout == "hf":
        data = json.dumps([{"paper": r} if isinstance(r, dict) else r for r in records])
    elif layout == "hf-data":
        data = json.dumps({"data": records})
    else:
        data = json.dumps(records, ensure_ascii=False)
    raw = data.encode("utf-8", "surrogatepass")
    papers = read_or_input_error(lambda d: papers_json.parse(d, "fuzz"), raw)
    papers += read_or_input_error(lambda d: hf_json.parse(d, "fuzz"), raw)
    papers += read_or_input_error(lambda d: formats.read(d, "fuzz"), raw)
    if papers:  # and whatever was read, the store and every format take it
        with Store.open(None) as store:
            store.upsert(papers, datetime(2025, 4, 12, tzinfo=timezone.utc))
        digest = Digest("d", "T", date(2025, 4, 12), [Match(p, 1.0, ["r"], "p") for p in papers[:5]])
        for fmt in ("text", "html", "slack", "json"):
            render(digest, fmt)


def test_json_nested_past_the_stack_is_an_input_error():
    for data in (b"[" * 100_000, b'[{"title": "x", "a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]",
                 b'[{"paper": ' + b"[" * 100_000):
        assert read_or_input_error(lambda d: formats.read(d, "deep"), data) == []


def test_json_lines_keep_a_line_separator_inside_a_string():
    line = json.dumps({"title": "A\u2028B", "summary": "x\x85y"}, ensure_ascii=False)
    [paper] = formats.read((line + "\n" + line.replace("A", "C")).encode(), "x").papers[:1]
    assert paper.title == "A B" and paper.abstract == "xy"  # a line separator is white space


# --- the query parser -------------------------------------------------------------------------

QUERY_TOKENS = st.sampled_from([
    "(", ")", '"', "AND", "OR", "NOT", "ANDNOT", "ti:", "au:", "cat:", "abs:", "all:", "x:", "word", "reinforc*",
    "*", "a*", "cs.*", "levine_s", "_", ":", "\\'e", "$", "and", " ", "Ab*c", '"rl"', "au:_", "cat:*", "TI:",
]) | st.text(max_size=6)


@FAST
@given(st.lists(QUERY_TOKENS, max_size=14), st.sampled_from(["", " "]))
def test_query_parser_gives_a_query_or_a_positioned_error(tokens, sep):
    text_ = sep.join(tokens)
    try:
        q = parse_query(text_)
    except QuerySyntaxError as e:
        assert 0 <= e.position <= len(text_), (e.position, text_)
        shown, caret = e.caret().split("\n")
        assert caret == " " * (len(caret) - 1) + "^" and len(caret) <= len(shown) + 1
        assert shown.strip("…").replace(" ", "") in "".join(text_.split()), (shown, text_)
        return
    assert isinstance(q, Query) and q.positive_terms() is not None


# --- round trips ------------------------------------------------------------------------------

line_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
printable = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=40)  # fields not cleaned
titles = line_text.filter(lambda s: Paper(title=s).title.strip())
stamps = st.none() | st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31),
                                  timezones=st.just(timezone.utc))
papers = st.builds(lambda t, a, ab, pub: Paper(title=t, authors=a, abstract=ab, published=pub),
                   titles, st.lists(line_text, max_size=4), line_text, stamps)
headers = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 :()-]{0,30}[A-Za-z0-9)]", fullmatch=True)


@FAST
@given(headers, st.dates(), st.lists(papers, max_size=4))
@example("T", date(604, 1, 1), [Paper(title="Old", published=datetime(604, 12, 27, 20, 53, 20, tzinfo=timezone.utc))])
@example("T", date(2025, 1, 1), [Paper(title="\x00NUL\x85", abstract="a\x00b", authors=["\x1b[31mX"])])
@example("T", date(2025, 1, 1), [Paper(title="<rss version='2.0'>", abstract='{"paper": <feed opensearch')])
def test_text_write_read_write_is_identity(header, day, listed):
    first = text.write(header, day, listed)
    listing = formats.read(first.encode("utf-8"), "round-trip")
    assert listing.format == "text" and (listing.title, listing.date) == (header, day)
    assert len(listing.papers) == len(listed)
    assert text.write(listing.title, listing.date, listing.papers) == first
    for before, after in zip(listed, listing.papers):
        assert after.title == text.one_line(before.title)
        assert after.abstract == text.one_line(before.abstract)
        if before.published:
            assert after.published == before.published.replace(microsecond=0)


json_papers = st.builds(
    Paper, title=titles, arxiv_id=st.none() | st.from_regex(r"2[0-9]{3}\.[0-9]{5}", fullmatch=True),
    version=st.none() | st.integers(1, 20), authors=st.lists(line_text, max_size=3), abstract=line_text,
    published=stamps, categories=st.lists(st.sampled_from(["cs.CL", "cs.LG", "stat.ML"]), max_size=2),
    upvotes=st.none() | st.integers(0, 10_000), announce_type=st.sampled_from([None, "new", "cross"]),
    doi=st.none() | printable, comment=st.none() | printable)


@FAST
@given(st.lists(json_papers, min_size=1, max_size=4))
@example([Paper(title="0", abstract="<OAI-PMH")])   # was detected as OAI-PMH XML
@example([Paper(title="0", comment="paper")])       # was detected as the HF API's JSON
def test_json_write_read_is_identity(listed):
    digest = Digest("d", "T", date(2025, 1, 1), [Match(p, 1.0, ["why"], "p") for p in listed])
    back = formats.read(render(digest, "json").encode("utf-8"), "json").papers
    assert [p.to_json() for p in back] == [p.to_json() for p in listed]
