"""BibTeX export of real arXiv papers: a year for every paper (listing-only ones too), sane keys,
LaTeX decoded (pylatexenc) and encoded anew so that no field can run TeX, names split by
bibtexparser's own parser; compiled with pdflatex + bibtex."""

from __future__ import annotations

import gzip
import re
from datetime import date

import bibtexparser
import pytest

from conftest import DATA
from test_ratings import compiles
from watcher import formats
from watcher.present.bibtex import paper_year, plain_text, read, write
from watcher.models import Paper

# real captures with LaTeX in titles and abstracts: arXiv API, OAI-PMH, old RSS, a listing day
LATEX_SOURCES = ["arxivpy2026_q_testing_s0_m100_cfe7536492ca.xml.gz", "oai_ListRecords_arxiv-physics-hep-ex.xml",
                 "oai_ListRecords_arxiv-physics-hep-th.xml", "arxivpy2026_id_astro-ph_0601001_s0_m100_3150dca9dc76.xml",
                 "arxivpy2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml", "arxivpy2016_au_del_maestro.xml",
                 "arxiv_rss_OLD_rdf_hep-ex_2021-07-08_physbiblio.xml", "corpus-2025-04-09.jsonl.gz"]

# what issue reports found in saved.bib: titles that would run TeX if kept verbatim
HOSTILE = ["Reading $\\input{/etc/hostname}$ in a title", "Caret ^^5cinput{/etc/passwd} notation",
           "Shell \\immediate\\write18{touch pwned} escape", "Catcodes \\catcode`\\^=7 \\def\\x{1}",
           "Unbalanced } braces { and \\} in a title",
           "Open \\openin5=/etc/passwd \\read5 to \\x and \\csname input\\endcsname{/etc/hostname}"]


def read_data(name: str) -> list[Paper]:
    data = (DATA / name).read_bytes()
    if name.endswith(".gz"):
        data = gzip.decompress(data)
    return formats.read(data, name).papers


def latex_papers() -> list[Paper]:
    papers = [p for name in LATEX_SOURCES for p in read_data(name)
              if re.search(r"[\\$^~]", p.title + (p.abstract or ""))]
    assert len(papers) >= 40, len(papers)
    return papers


def test_real_arxiv_latex_is_decoded_and_the_file_compiles(tmp_path, caplog):
    papers = latex_papers()
    bib = write(papers)
    assert not caplog.records  # characters LaTeX lacks are marked in the file, not logged
    library = bibtexparser.parse_string(bib)
    assert not library.failed_blocks and len(library.entries) == len(papers)
    assert all(e.get("year") for e in library.entries)
    back = read(bib.encode(), "saved.bib")
    for paper, again in zip(papers, back):
        assert "\\" not in again.title and "$" not in again.title.replace("$5", ""), again.title
        assert again.title == plain_text(paper.title), (paper.title, again.title)
    compiles(bib, tmp_path, len(papers))
    text = (tmp_path / "doc.bbl").read_text()
    assert "\\input" not in text and "\\write18" not in text and "^^" not in text


@pytest.mark.parametrize("latex, text", [
    ("Pok\\'emon Red", "Pokémon Red"), ("\\textbf{RL} for all", "RL for all"), ("50\\% of", "50% of"),
    ("$\\alpha$-divergence", "α-divergence"), ("R&D at 100% of $5", "R&D at 100% of $5"),
    ("a~b", "a b"),
])
def test_latex_is_decoded(latex, text):
    assert plain_text(latex) == text
    assert read(write([Paper(title=latex, arxiv_id="2504.07615")]).encode(), "x")[0].title == text


def test_nothing_that_runs_tex_survives(tmp_path):
    papers = [Paper(title=t, arxiv_id=f"2504.1000{i}", authors=["Ann \\input{/etc/hostname} Lee"],
                    abstract=t + " and $x^2$") for i, t in enumerate(HOSTILE)]
    bib = write(papers)
    for field in ("\\input", "\\write", "^^", "\\catcode", "\\def", "\\openin", "\\read", "\\csname"):
        assert field not in bib, field
    compiles(bib, tmp_path, len(papers))
    assert not (tmp_path / "pwned").exists()


def test_names_and_keys():
    papers = [Paper(title="Pok\\'emon Trainers Learn", arxiv_id="2504.07615",
                    authors=["Martin Luther King Jr.", "Ludwig van Beethoven", "Jürgen Schmidhuber"]),
              Paper(title="The Perception of Things", arxiv_id="2504.07616", authors=["Yu, Lin"]),
              Paper(title="The Perception of Things", arxiv_id="2504.07617", authors=["Lin Yu"])]
    entries = bibtexparser.parse_string(write(papers)).entries
    assert entries[0]["author"] == "King, Jr., Martin Luther and van Beethoven, Ludwig and Schmidhuber, J{\\\"u}rgen"
    assert [e.key for e in entries] == ["king2025pokemon", "yu2025perception", "yu2025perceptiona"]
    back = read(write(papers).encode(), "x")
    assert back[0].authors == ["Martin Luther King Jr.", "Ludwig van Beethoven", "Jürgen Schmidhuber"]


def test_a_group_author_is_one_braced_name_not_a_person():
    """arXiv lists groups as authors ("Kimi Team", "LG AI Research"): BibTeX would read "Kimi
    Team" as Team, Kimi; braced, it keeps the name whole, in the file, the key and read back."""
    papers = [Paper(title="Kimi k1.5: Scaling Reinforcement Learning with LLMs", arxiv_id="2501.12599",
                    authors=["Kimi Team", "Angang Du"]),
              Paper(title="EXAONE Deep", arxiv_id="2503.12524", authors=["LG AI Research", "Kyunghoon Bae"])]
    text = write(papers)
    entries = bibtexparser.parse_string(text).entries
    assert entries[0]["author"] == "{Kimi Team} and Du, Angang"
    assert entries[1]["author"] == "{LG AI Research} and Bae, Kyunghoon"
    assert [e.key for e in entries] == ["kimiteam2025kimi", "lgairesearch2025exaone"]
    assert [p.authors for p in read(text.encode(), "x")] == [["Kimi Team", "Angang Du"],
                                                               ["LG AI Research", "Kyunghoon Bae"]]


def test_papers_known_only_from_listings_have_a_year():
    rss = read_data("arxiv_rss_NEW_atom_cs.LG_2026-09-25_trimmed_paper-forge.xml")
    assert rss and all(p.published is None for p in rss)  # the new RSS gives no submission date
    years = [e["year"] for e in bibtexparser.parse_string(write(rss)).entries]
    assert years and all(re.fullmatch(r"20\d\d", y) for y in years), years
    assert paper_year(Paper(title="x", arxiv_id="2504.07615")) == 2025
    assert paper_year(Paper(title="x", arxiv_id="hep-th/9901001")) == 1999
    assert paper_year(Paper(title="x", arxiv_id="math.GT/0309136")) == 2003
    assert paper_year(Paper(title="x", announced=date(2026, 1, 2))) == 2026
    assert paper_year(Paper(title="x")) is None


def test_unparsable_blocks_are_said_once_by_watcher_with_their_line(caplog):
    """A .bib with a broken entry: bibtexparser logged its own multi-line warning (``Parsing
    of `@article` block (line 0) aborted …``) beside watcher's one line; now watcher alone says
    it, naming the first such block's line, and keeps the entries it could read."""
    import logging

    from watcher.errors import InputError

    caplog.set_level(logging.DEBUG)
    with pytest.raises(InputError) as info:
        read(b"@article{x, title={Unclosed\n", "mine.bib")
    assert str(info.value) == ("mine.bib: no BibTeX entry with a title; "
                               "1 block not readable as BibTeX (the first at line 1)")
    partial = b"@article{a, title={Good one}}\n@article{b, title={Bad\n\n@misc{c, title={Fine too}}\n"
    assert [p.title for p in read(partial, "mine.bib")] == ["Good one", "Fine too"]
    said = [(r.name, r.getMessage()) for r in caplog.records]
    assert said == [("watcher", "mine.bib: 1 block not readable as BibTeX (the first at line 2), skipped")], said
