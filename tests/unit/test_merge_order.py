"""One work from PubMed efetch and from its journal's feed, in either order, is one paper with
the better value of each field (docs/sources-journals.md): PubMed's list of authors over the feed's one string,
the journal's own name (its capitals, no channel decoration), a whole abstract; ``explain``
says where each field came from. The pair is built from two real documents of
``tests/data/journals`` (PubMed's search RSS and IJSEM's feed; see its SOURCES.md)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import MINIMAL_CONFIG
from watcher import formats
from watcher.cli import cli
from watcher.identity import merge, merge_batch
from watcher.models import Paper
from watcher.store import Store

PAIR = Path(__file__).parent.parent / "data" / "journals" / "pair"
REAL = Path(__file__).parent.parent / "data" / "journals"
NOW = datetime(2021, 12, 21, 12, tzinfo=timezone.utc)
AUTHORS = ["Inhyup Kim", "Geeta Chhetri", "Jiyoun Kim", "Minchung Kang", "Yoonseop So",
           "Byungjo Lee", "Wonhee Jang", "Taegun Seo"]
JOURNAL = "International Journal of Systematic and Evolutionary Microbiology"


def listings():
    pubmed = formats.read((PAIR / "pubmed_efetch_34928203_constructed.xml").read_bytes(), "efetch")
    feed = formats.read((PAIR / "ijsem_most-recent_005176_constructed.xml").read_bytes(), "ijsem")
    assert (pubmed.format, feed.format) == ("pubmed-xml", "journal-feed")
    return pubmed.papers[0], feed.papers[0]


@pytest.mark.parametrize("order", ["pubmed-then-feed", "feed-then-pubmed"])
def test_pubmed_and_the_journals_feed_in_either_order_are_one_paper_with_the_better_fields(tmp_path, order):
    pubmed, feed = listings()
    first, second = (pubmed, feed) if order == "pubmed-then-feed" else (feed, pubmed)
    with Store.open(tmp_path / "w.db") as store:
        new = store.upsert([first], NOW).new
        assert store.upsert([second], NOW).updated == new
        assert store.count_papers() == 1
        paper = store.get(new[0])
    assert paper.authors == AUTHORS and paper.origins["authors"] == "pubmed:list"
    assert paper.journal == JOURNAL and paper.venue == JOURNAL
    assert paper.pmid == "34928203" and paper.doi == "10.1099/ijsem.0.005176"
    assert paper.abstract.startswith("Two bacterial strains, designated MJB4T and SJ7T, were isolated")
    assert paper.title == ("Nocardioides donggukensis sp. nov. and Hyunsoonleella aquatilis sp. nov., "
                           "isolated from Jeongbang Waterfall on Jeju Island")
    assert sorted(paper.sources) == ["feed", "pubmed"]


def test_explain_says_where_each_field_came_from(tmp_path, write_config):
    config = write_config(MINIMAL_CONFIG)
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert(list(listings()), NOW)
    result = CliRunner().invoke(cli, ["--config", str(config), "explain", "10.1099/ijsem.0.005176"])
    assert result.exit_code == 0, result.output
    line = next(l for l in result.output.splitlines() if l.startswith("read from:"))
    assert "authors: pubmed (one name per entry)" in line
    # both name the journal alike (PubMed's NLM title capitalised): the metadata's name wins
    assert "journal: pubmed (named in its metadata)" in line


def test_a_complete_author_list_and_the_longer_abstract_win_over_a_cut_short_one_in_any_order():
    """The real Oxford Academic item names three authors "et al."; a listing of the same DOI
    with the whole list (as PubMed gives it) wins whichever comes first, and merging is the
    same both ways for every field the policy decides."""
    oup = formats.read((REAL / "oup_zoological-journal-linnean-society_2021-12-21_trimmed.xml")
                       .read_bytes(), "oup").papers[1]
    assert oup.origins["authors"] == "feed:truncated"
    whole = Paper(title=oup.title + ".", doi=oup.doi, source="pubmed", journal="Zoological journal of the Linnean Society",
                  authors=["H Kise", "J Montenegro", "M Santos", "A Fourth", "B Fifth"],
                  origins={"authors": "pubmed:list", "journal": "pubmed:named"})
    for a, b in ((oup, whole), (whole, oup)):
        merged = merge(a, b)
        assert merged.authors == whole.authors
        assert merged.journal == "Zoological Journal of the Linnean Society"
        assert merged.abstract == oup.abstract and merged.title == oup.title
    assert [merge(oup, whole).__getattribute__(f) for f in ("title", "authors", "journal", "abstract")] == \
        [merge(whole, oup).__getattribute__(f) for f in ("title", "authors", "journal", "abstract")]
    assert len(merge_batch([oup, whole])) == 1


DATA = Path(__file__).parent.parent / "data"
PREPRINT_AND_ARTICLE = ["biorxiv_details_2026-11-20_2026-11-23.json",  # v1, 2026-11-21
                        "biorxiv_details_2026-11-21_2026-11-25_v2.json",  # v2
                        "nature_neuroscience_rss1_2026-11-25.xml",  # the article, full names
                        "pubmed_efetch_2026-11-20_2026-11-26.xml"]  # the article again, "Nature neuroscience"


@pytest.mark.parametrize("order", list(__import__("itertools").permutations(range(4))))
def test_a_preprint_and_its_journal_article_are_one_paper_whatever_the_fetch_order(tmp_path, order):
    """bioRxiv v1 and v2 (initials), the journal's feed and PubMed (full names), fetched in any
    of the 24 orders, one listing a run: the journal's full names (a newer preprint version does
    not replace the version of record's), the first version's date (the preprint's, not the
    article's later one: "first" never after "latest"), and the venues preprint first."""
    papers = []
    for name in PREPRINT_AND_ARTICLE:
        found = [p for p in formats.read((DATA / name).read_bytes(), name).papers
                 if p.title.startswith("Dendritic plateau potentials")]
        assert len(found) == 1, name
        papers += found
    with Store.open(tmp_path / "w.db") as store:
        for i in order:
            store.upsert([papers[i]], NOW)
        paper = store.find("10.1038/s41593-026-02114-7")
        assert store.db.execute("SELECT count(*) FROM papers").fetchone()[0] == 1
    assert paper.authors[:2] == ["Maria N. Okafor", "Jonas Lindqvist"]
    assert paper.published == datetime(2026, 11, 21, tzinfo=timezone.utc) <= paper.updated
    assert paper.appeared_in == ["bioRxiv", "Nature Neuroscience"]
    assert paper.version == 2 and paper.doi == "10.1038/s41593-026-02114-7"
