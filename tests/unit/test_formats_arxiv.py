"""Parser tests: recorded arXiv API / RSS / OAI-PMH inputs beside their expected results."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from helpers import data

from watcher import formats
from watcher.errors import InputError
from watcher.formats import arxiv_atom, arxiv_oai, arxiv_rss

UTC = timezone.utc

# file -> (entries, totalResults, startIndex, itemsPerPage)
ATOM_COUNTS = {
    "arxivpy2016_au_del_maestro.xml": (10, 31, 0, 10),
    "arxivpy2016_id_list_1111.2011v2.xml": (1, 1, 0, 10),
    "arxivpy2026_id_0000.0000_s0_m100_8b51d9633a68.xml": (0, 0, 0, 100),
    "arxivpy2026_id_0808.05394_1707.08567_s0_m100_42e5aa0ec3af.xml": (1, 1, 0, 100),
    "arxivpy2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml": (1, 1, 0, 100),
    "arxivpy2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml": (1, 1, 0, 100),
    "arxivpy2026_q_testing_s0_m100_cfe7536492ca.xml": (100, 214881, 0, 100),
    "arxivpy2026_q_testing_s5_m10_c0e94a259d4a.xml": (10, 214881, 5, 10),
    "researchhub_2025-09-11_cat_cs.AI_max2_trimmed.xml": (2, 141182, 0, 2),
}


@pytest.mark.parametrize("name", sorted(ATOM_COUNTS))
def test_atom_counts_and_detection(name):
    raw = data(name)
    assert formats.detect(raw) == "arxiv-atom"
    listing = formats.read(raw, name)
    assert (len(listing.papers), listing.total, listing.start, listing.page_size) == ATOM_COUNTS[name]
    for p in listing.papers:
        assert p.arxiv_id and p.version and p.title and p.abstract and p.authors
        assert p.published.tzinfo is not None and p.primary_category in p.categories
        assert "\n" not in p.title and "  " not in p.abstract


def test_atom_2026_layout_testing_page():
    papers = arxiv_atom.parse(data("arxivpy2026_q_testing_s0_m100_cfe7536492ca.xml"), "t").papers
    assert len({p.key for p in papers}) == 100
    assert sum(p.version > 1 for p in papers) == 36
    assert sum(p.comment is not None for p in papers) == 97
    assert sum(p.journal_ref is not None for p in papers) == 18
    assert sum(p.doi is not None for p in papers) == 32
    first = papers[0]
    assert (first.arxiv_id, first.version) == ("2202.12139", 1)
    assert first.published == datetime(2022, 2, 24, 15, 5, 19, tzinfo=UTC)
    assert first.categories == ["cs.SE", "cs.LG"] and first.primary_category == "cs.SE"
    assert first.doi == "10.1109/icstw55395.2022.00035"  # DOIs are case-insensitive: kept lower-cased (docs/design.md)
    assert first.title.startswith("Testing Deep Learning Models: A First Co")


def test_atom_old_style_id_with_all_fields():
    (p,) = arxiv_atom.parse(data("arxivpy2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml"), "t").papers
    assert (p.arxiv_id, p.version, p.key) == ("astro-ph/0601001", 1, "astro-ph/0601001")
    assert p.authors == ["Andrew Gould", "Susan Dorsher", "B. Scott Gaudi", "Andrzej Udalski"]
    assert p.journal_ref == "ActaAstron.56:1-50,2006"
    assert p.comment.startswith("62 pages including 16 figures")
    assert p.primary_category == "astro-ph" and p.doi is None
    assert p.abstract.startswith("We derive the frequencies of hot Jupiters")
    assert "V_max<17.5" in p.abstract  # entities decoded


def test_atom_classic_layout_versions_and_wrapping():
    (p,) = arxiv_atom.parse(data("arxivpy2016_id_list_1111.2011v2.xml"), "t").papers
    assert (p.arxiv_id, p.version) == ("1111.2011", 2)
    assert p.title == ("Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large "
                       "Connectivity Limit")
    assert p.published == datetime(2011, 11, 8, 18, 48, 36, tzinfo=UTC)
    assert p.updated == datetime(2012, 4, 2, 12, 38, 54, tzinfo=UTC)
    assert p.doi == "10.1103/physrevb.85.115117"  # lower-cased (docs/design.md)
    assert p.journal_ref == "Phys. Rev. B 85, 115117 (2012)"
    assert p.comment == "8 pages, 3 figures. Published version"
    assert p.primary_category == "cond-mat.str-el"
    assert p.categories == ["cond-mat.str-el", "cond-mat.stat-mech"]
    maestro = arxiv_atom.parse(data("arxivpy2016_au_del_maestro.xml"), "t").papers
    assert sum(p.version > 1 for p in maestro) == 4
    assert all(p.doi and p.journal_ref and p.comment for p in maestro)


def test_atom_error_feed_is_an_error_not_a_paper():
    with pytest.raises(arxiv_atom.ArxivApiError, match="incorrect id format for abc"):
        formats.read(data("arxivpy2026_id_abc_s0_m100_b79c8dcf6bc3.xml"), "abc.xml")
    assert issubclass(arxiv_atom.ArxivApiError, InputError)


def test_atom_html_page_truncation_and_dtd():
    with pytest.raises(InputError, match="HTML page"):
        arxiv_atom.parse(b"<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", "x")
    raw = data("arxivpy2016_au_del_maestro.xml")
    with pytest.raises(InputError, match="not well-formed XML where an arXiv API Atom feed was "
                                         "expected .*truncated"):
        arxiv_atom.parse(raw[: len(raw) // 2], "x")
    bomb = (b'<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY a "aaaaaaaaaa">'
            b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><feed xmlns="http://www.w3.org/2005/Atom">'
            b"<entry><title>&b;</title></entry></feed>")
    with pytest.raises(InputError, match="DOCTYPE"):
        arxiv_atom.parse(bomb, "x")
    xxe = (b'<?xml version="1.0"?><!-- c --><!DOCTYPE feed [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
           b'<feed xmlns="http://www.w3.org/2005/Atom"><title>&x;</title></feed>')
    with pytest.raises(InputError, match="DOCTYPE"):
        arxiv_atom.parse(xxe, "x")
    with pytest.raises(InputError, match="not an arXiv API Atom feed"):
        arxiv_atom.parse(data("oai_ListRecords_arxiv-physics-hep-ex.xml"), "x")


# --- RSS ---------------------------------------------------------------------------------

RSS2 = "arxiv_rss_NEW_rss2_cs.LG+cs.AI+cs.CL+stat.ML_2026-09-24_trimmed_laya-reader.xml"
RSS_ATOM = "arxiv_rss_NEW_atom_cs.LG_2026-09-25_trimmed_paper-forge.xml"
RDF_2018 = "arxiv_rss_OLD_rdf_hep-ex_2018-05-23_physbiblio.xml"
RDF_2021 = "arxiv_rss_OLD_rdf_hep-ex_2021-07-08_physbiblio.xml"


def _summary(papers):
    return [(p.arxiv_id, p.version, p.announce_type, p.announced) for p in papers]


def test_rss2_2024_format():
    listing = formats.read(data(RSS2), RSS2)
    assert listing.format == "arxiv-rss" and listing.date == date(2026, 9, 24)
    day = date(2026, 9, 24)
    assert _summary(listing.papers) == [
        ("2609.26811", 1, "new", day), ("2609.26820", 1, "new", day),
        ("2205.06398", 2, "cross", day), ("2009.13987", 3, "replace", day)]
    cross = listing.papers[2]
    assert cross.doi == "10.1093/bioinformatics/btac431"
    assert cross.authors == ["Pritam Dey", "Zhengwu Zhang", "David B. Dunson"]
    assert cross.categories == ["stat.ME", "stat.AP", "stat.ML"]
    assert cross.abstract.startswith("It has become routine in neuroscience")
    assert "Announce Type" not in cross.abstract and cross.published is None


def test_rss_atom_2024_format():
    listing = formats.read(data(RSS_ATOM), RSS_ATOM)
    day = date(2026, 9, 25)
    assert _summary(listing.papers) == [
        ("2609.28553", 1, "new", day), ("2402.10149", 3, "cross", day),
        ("2401.08875", 3, "replace", day)]
    first = listing.papers[0]
    assert first.journal_ref.startswith("2026 International Conference on Multimedia")
    assert first.doi == "10.1109/mapr72750.2026.11685822" and len(first.authors) == 6


def test_rss_old_rdf_format():
    listing = formats.read(data(RDF_2018), RDF_2018)
    day = date(2018, 5, 23)  # dc:date 2018-05-23T20:30:00-05:00, the feed's own day
    assert _summary(listing.papers) == [
        ("1805.08875", 1, "new", day), ("1805.09166", 1, "cross", day),
        ("1805.06430", 2, "replace", day)]
    first, _, updated = listing.papers
    assert first.title == "Measurement of Transverse Single Spin Asymmetries"
    assert first.authors == ["Christopher Dilks"] and first.categories == ["hep-ex"]
    assert first.abstract.startswith("In 2015 the first collisions") and "<p>" not in first.abstract
    assert "2.6<\\eta<4" in first.abstract
    assert updated.primary_category == "nucl-th" and len(updated.authors) == 6
    lhcb = formats.read(data(RDF_2021), RDF_2021).papers[0]
    assert lhcb.authors == ["LHCb collaboration", "R. Aaij"]  # "et al. (909 ...)" dropped


def test_rss_empty_weekend_feed_is_not_an_error():
    raw = data(RSS2)
    head, _, _ = raw.partition(b"<item>")
    empty = head + b"</channel>\n</rss>\n"
    listing = arxiv_rss.parse(empty, "weekend")
    assert listing.papers == [] and listing.date == date(2026, 9, 24)


def test_rss_html_and_garbage_are_errors():
    with pytest.raises(InputError, match="HTML page"):
        arxiv_rss.parse(b"<html><head><title>503</title></head><body>busy</body></html>", "x")
    with pytest.raises(InputError):
        arxiv_rss.parse(b"this is not a feed", "x")


# --- OAI-PMH -----------------------------------------------------------------------------

def test_oai_list_records():
    listing = formats.read(data("oai_ListRecords_arxiv-physics-hep-ex.xml"), "hep-ex")
    assert listing.format == "arxiv-oai" and listing.next_token is None
    assert [p.arxiv_id for p in listing.papers] == ["1706.05371", "1706.09418", "1707.00874"]
    first = listing.papers[0]
    assert first.published == datetime(2017, 6, 16, tzinfo=UTC)
    assert first.updated == datetime(2017, 12, 12, tzinfo=UTC)
    assert first.authors[:2] == ["Tyler Anderson", "Jacob Cutter"] and len(first.authors) == 13
    assert first.title == ("Evaluation of Silicon Photomultipliers for use as Photosensors in "
                           "Liquid Xenon Detectors")
    assert first.categories == ["physics.ins-det", "hep-ex"]
    assert first.primary_category == "physics.ins-det" and first.comment == "10 pages, 9 figures"
    second = listing.papers[1]
    assert second.doi == "10.1140/epjc/s10052-017-5414-4"
    assert second.journal_ref == "Eur. Phys. J. C (2017) 77:856"
    th = arxiv_oai.parse(data("oai_ListRecords_arxiv-physics-hep-th.xml"), "hep-th").papers
    assert [p.arxiv_id for p in th] == ["1412.8323", "1507.07790", "1607.01710"]


def with_token(raw: bytes, token: str, size: int = 6) -> bytes:
    """A recorded page with a resumptionToken added (as a server adds it to a long list)."""
    tag = f'<resumptionToken cursor="0" completeListSize="{size}">{token}</resumptionToken>'
    return raw.replace(b"</ListRecords>", tag.encode() + b"\n</ListRecords>")


def test_oai_resumption_token_and_errors():
    listing = arxiv_oai.parse(with_token(data("oai_ListRecords_arxiv-physics-hep-ex.xml"), "tok|1"), "x")
    assert listing.next_token == "tok|1" and listing.total == 6
    error = (b'<?xml version="1.0" encoding="UTF-8"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
             b'<responseDate>2025-01-02T00:00:00Z</responseDate><request>x</request>'
             b'<error code="%s">%s</error></OAI-PMH>')
    assert arxiv_oai.parse(error % (b"noRecordsMatch", b"none"), "x").papers == []
    with pytest.raises(arxiv_oai.OaiError, match="badArgument: bad set") as info:
        arxiv_oai.parse(error % (b"badArgument", b"bad set"), "x")
    assert info.value.code == "badArgument"
    deleted = data("oai_ListRecords_arxiv-physics-hep-ex.xml").replace(
        b"<header>", b'<header status="deleted">', 1)
    assert len(arxiv_oai.parse(deleted, "x").papers) == 2


def test_rss_cut_off_feed_is_an_error_not_a_short_feed():
    raw = data(RSS2)
    cut = raw[: raw.index(b"<item>", raw.index(b"<item>") + 1) + 200]  # mid second item
    with pytest.raises(InputError, match="not well-formed"):
        arxiv_rss.parse(cut, "x")
