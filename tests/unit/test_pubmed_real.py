"""Real PubMed efetch answers (``PubmedArticleSet``), as NCBI served them to other projects
(tests/data/pubmed/real/, provenance in its SOURCES.md), read to the papers written beside each
(``*.expected.json``, written by reading the document): the title without PubMed's closing
full stop, its inline markup read as words ("SnO2 thin films", "at the TERT gene", MathML as a
formula), a title only in the original language or a translated one in brackets, every author
(a collective name too), the journal, DOI, PMID, the first date (a quarterly's season as its
month) and the abstract with its section labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watcher import formats

DATA = Path(__file__).parent.parent / "data" / "pubmed" / "real"
DOCUMENTS = sorted(DATA.glob("*.xml"))


def test_twelve_real_documents_are_kept():
    assert len(DOCUMENTS) == 12


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.stem)
def test_a_real_efetch_answer_reads_to_its_papers(path):
    listing = formats.read(path.read_bytes(), path.name)
    assert listing.format == "pubmed-xml"
    want = json.loads(path.with_name(path.stem + ".expected.json").read_text("utf-8"))
    assert [p.pmid for p in listing.papers] == [w["pmid"] for w in want]
    for paper, w in zip(listing.papers, want):
        assert paper.title == w["title"]
        assert paper.authors == w["authors"], paper.pmid
        assert paper.journal == w["journal"], paper.pmid
        assert paper.doi == w["doi"], paper.pmid
        assert (paper.published.date().isoformat() if paper.published else None) == w["date"], paper.pmid
        assert paper.abstract.startswith(w["abstract_start"]), paper.abstract[:200]
        assert paper.abstract.endswith(w["abstract_end"]), paper.abstract[-200:]
        for part in w["abstract_contains"]:
            assert part in paper.abstract, (part, paper.pmid)
        assert "  " not in paper.abstract and "<" not in paper.title


def test_brackets_of_a_translated_title_go_but_not_a_title_s_own_and_a_title_in_no_language_stays():
    """Hand-written cases beside the real ones: "[18F]FDG … [11C]…" keeps its brackets; a record
    whose only title is PubMed's placeholder (a real Japanese record of metapub's has this, with
    no VernacularTitle) is still read, under the placeholder, not skipped."""
    def record(pmid, title):
        return (f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><Journal><Title>J</Title>"
                f"</Journal><ArticleTitle>{title}</ArticleTitle></Article></MedlineCitation></PubmedArticle>")
    doc = ("<PubmedArticleSet>" + record(1, "[18F]FDG uptake in tumours with [11C]methionine.")
           + record(2, "[Not Available].") + "</PubmedArticleSet>").encode()
    papers = formats.read(doc, "efetch").papers
    assert [p.title for p in papers] == ["[18F]FDG uptake in tumours with [11C]methionine", "[Not Available]"]
