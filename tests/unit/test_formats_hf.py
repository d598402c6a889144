"""Parser tests: Hugging Face /api/daily_papers responses of every field-set generation."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone

import pytest

from helpers import data

from watcher import formats
from watcher.errors import InputError
from watcher.formats import hf_json

# file -> (items, papers with a GitHub repo, papers with AI keywords, papers with organisation)
COUNTS = {
    "hf_daily_papers_2024-05-27.json": (13, 0, 0, 0),
    "hf_daily_papers_2025-01-13.json": (5, 0, 0, 0),
    "hf_daily_papers_2025-04-10.json": (8, None, 0, 0),
    "hf_daily_papers_2025-09-15.json": (12, None, 11, 0),  # one item has ai_keywords: null
    "hf_daily_papers_2026-08-21.json": (17, 12, 16, 17),
}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_every_generation(name):
    raw = data(name)
    listing = formats.read(raw, name)
    assert listing.format == "hf-json"
    items, repos, keywords, orgs = COUNTS[name]
    papers = listing.papers
    assert len(papers) == items == len({p.key for p in papers})
    if repos is not None:
        assert sum(bool(p.github_repo) for p in papers) == repos
    assert sum(bool(p.ai_keywords) for p in papers) == keywords
    assert sum(bool(p.organization) for p in papers) == orgs
    source = json.loads(raw)
    for p, item in zip(papers, source):
        assert p.arxiv_id == item["paper"]["id"] and p.upvotes == item["paper"]["upvotes"]
        assert p.title and "\n" not in p.title and p.abstract and p.authors
        assert p.published.tzinfo is not None and p.announced is not None
        assert p.url == f"https://huggingface.co/papers/{p.arxiv_id}"


def test_2026_fields():
    first = hf_json.parse(data("hf_daily_papers_2026-08-21.json"), "x").papers[0]
    assert first.arxiv_id == "2608.19880" and first.upvotes == 163
    assert first.organization == "Google"
    assert first.github_repo == "https://github.com/google-research/envharness"
    assert first.ai_keywords[:2] == ["LLM agents", "Environment Harness"]
    assert first.announced == date(2026, 8, 21)
    assert first.published == datetime(2026, 8, 20, tzinfo=timezone.utc)


def test_2024_title_wraps_are_joined():
    first = hf_json.parse(data("hf_daily_papers_2024-05-27.json"), "x").papers[0]
    assert first.title == "ConvLLaVA: Hierarchical Backbones as Visual Encoder for Large Multimodal Models"
    assert first.authors[:2] == ["Chunjiang Ge", "Sijie Cheng"] and first.author_count == 9


def test_empty_day_wrapper_and_errors():
    assert hf_json.parse(b"[]", "x").papers == []
    wrapped = b'{"status": "ok", "date": "2025-01-10", "count": 1, "data": ' + \
        json.dumps(json.loads(data("hf_daily_papers_2025-01-13.json"))[:1]).encode() + b"}"
    assert formats.detect(wrapped) == "hf-json"
    assert len(hf_json.parse(wrapped, "x").papers) == 1
    with pytest.raises(InputError, match="invalid JSON"):
        hf_json.parse(data("hf_daily_papers_2025-01-13.json")[:500], "x")
    with pytest.raises(InputError, match="error object: Rate limited"):
        hf_json.parse(b'{"error": "Rate limited"}', "x")
    with pytest.raises(InputError, match="item 1: item has no title"):
        hf_json.parse(b'[{"paper": {"id": "2501.00001"}}]', "x")
    with pytest.raises(InputError, match=r"x: item 1: item has no title \(and every other entry too\)"):
        hf_json.parse(b'[{"paper": {"id": "2501.00001"}}, {"foo": 1}, 3]', "x")


def test_one_malformed_item_is_skipped_with_a_warning(caplog):
    items = json.loads(data("hf_daily_papers_2025-01-13.json"))
    good = len(items)
    items[1:1] = [{"foo": 1}, 7, {"paper": {"id": "2501.00001", "title": "  "}}]
    with caplog.at_level("WARNING", logger="watcher"):
        listing = hf_json.parse(json.dumps(items).encode(), "day.json")
    assert len(listing.papers) == good
    assert listing.skipped == ['item 2: no "paper" object (not a Daily Papers item)',
                               "item 3: not an object", "item 4: item has no title"]
    assert "day.json: skipped an entry that is not a paper: item 4: item has no title" in caplog.text
