"""Readers fail only with InputError, whatever bytes arrive (truncations, garbage, wrong types)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import data

from watcher.errors import InputError
from watcher.formats import arxiv_atom, arxiv_oai, arxiv_rss, hf_json

CASES = [
    (arxiv_atom, "arxivpy2016_id_list_1111.2011v2.xml"),
    (arxiv_atom, "arxivpy2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml"),
    (arxiv_rss, "arxiv_rss_NEW_atom_cs.LG_2026-09-25_trimmed_paper-forge.xml"),
    (arxiv_rss, "arxiv_rss_OLD_rdf_hep-ex_2021-07-08_physbiblio.xml"),
    (arxiv_oai, "oai_ListRecords_arxiv-physics-hep-th.xml"),
    (hf_json, "hf_daily_papers_2025-01-13.json"),
]


def _parse_or_input_error(reader, raw: bytes) -> None:
    try:
        reader.parse(raw, "fuzz")
    except InputError:
        pass


@pytest.mark.parametrize("reader,name", CASES)
def test_every_truncation_point(reader, name):
    raw = data(name)
    for cut in range(0, len(raw), max(1, len(raw) // 150)):
        _parse_or_input_error(reader, raw[:cut])


@pytest.mark.parametrize("reader,name", CASES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(max_size=200), pos=st.floats(0, 1))
def test_random_bytes_spliced_in(reader, name, junk, pos):
    raw = data(name)
    at = int(len(raw) * pos)
    _parse_or_input_error(reader, raw[:at] + junk + raw[at:])


@pytest.mark.parametrize("doc", [b'{"a": 1}', b"[1, 2]", b'[{"paper": 5}]', b'[{"paper": {"title": 3}}]',
                                 b'[{"paper": {"title": "T", "authors": "x", "ai_keywords": "k", "upvotes": "9"}}]',
                                 b"null", b'"text"', b"\xff\xfe"])
def test_hf_wrong_types(doc):
    _parse_or_input_error(hf_json, doc)
