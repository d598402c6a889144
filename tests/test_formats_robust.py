"""Readers fail only with InputError, whatever bytes arrive (truncations, garbage, wrong types),
and what they do read is the listing that was there: each document's full parse is checked
against figures counted in the file by hand, a truncated document is refused (never read as a
shorter listing), and bytes spliced into one place cost at most the one entry they land in."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import data

from watcher.errors import InputError
from watcher.formats import arxiv_atom, arxiv_oai, arxiv_rss, hf_json

# (reader, file, its papers' ids in order): counted in the files (<entry>, <item>, <record>,
# JSON items), ids read off their <id>, <link>, <identifier> and "id" fields.
CASES = [
    (arxiv_atom, "arxivpy2016_id_list_1111.2011v2.xml", ["1111.2011"]),
    (arxiv_atom, "arxivpy2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml", ["astro-ph/0601001"]),
    (arxiv_rss, "arxiv_rss_NEW_atom_cs.LG_2026-09-25_trimmed_paper-forge.xml",
     ["2609.28553", "2402.10149", "2401.08875"]),
    (arxiv_rss, "arxiv_rss_OLD_rdf_hep-ex_2021-07-08_physbiblio.xml", ["2107.03419", "2106.00550", "2007.03939"]),
    (arxiv_oai, "oai_ListRecords_arxiv-physics-hep-th.xml", ["1412.8323", "1507.07790", "1607.01710"]),
    (hf_json, "hf_daily_papers_2025-01-13.json",
     ["2501.05874", "2501.05727", "2501.03841", "2501.06186", "2501.05707"]),
]
IDS = {name: ids for _, name, ids in CASES}


def _parse_or_input_error(reader, raw: bytes):
    """The listing read, or None when the reader refused the bytes with InputError."""
    try:
        return reader.parse(raw, "fuzz")
    except InputError:
        return None


@pytest.mark.parametrize("reader,name,ids", CASES)
def test_the_whole_document_is_read(reader, name, ids):
    papers = reader.parse(data(name), name).papers
    assert [p.arxiv_id for p in papers] == ids
    assert all(p.title and p.authors for p in papers)


@pytest.mark.parametrize("reader,name,ids", CASES)
def test_every_truncation_point(reader, name, ids):
    raw = data(name)
    for cut in range(0, len(raw), max(1, len(raw) // 150)):
        got = _parse_or_input_error(reader, raw[:cut])
        assert got is None, f"{name} cut at byte {cut} of {len(raw)} was read as {len(got.papers)} papers"


@pytest.mark.parametrize("reader,name,ids", CASES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(max_size=200), pos=st.floats(0, 1))
def test_random_bytes_spliced_in(reader, name, ids, junk, pos):
    raw = data(name)
    at = int(len(raw) * pos)
    got = _parse_or_input_error(reader, raw[:at] + junk + raw[at:])
    if got is not None:  # the junk landed in at most one entry: every other one is read as it was
        kept = [p.arxiv_id for p in got.papers if p.arxiv_id in ids]
        assert len(kept) >= len(ids) - 1 and kept == [i for i in ids if i in kept], (kept, ids)
        assert len(got.papers) <= len(ids) + 1


@pytest.mark.parametrize("doc, read", [
    (b'{"a": 1}', None), (b"[1, 2]", None), (b'[{"paper": 5}]', None), (b'[{"paper": {"title": 3}}]', None),
    # wrongly typed optional fields are dropped, the paper is kept
    (b'[{"paper": {"title": "T", "authors": "x", "ai_keywords": "k", "upvotes": "9"}}]', [("T", [], None, [])]),
    (b"null", None), (b'"text"', None), (b"\xff\xfe", None)])
def test_hf_wrong_types(doc, read):
    got = _parse_or_input_error(hf_json, doc)
    assert (got and [(p.title, p.authors, p.upvotes, p.ai_keywords) for p in got.papers]) == read
