"""Real tables of contents, as publishers served them (tests/data/journals/, provenance in its
SOURCES.md), read to the papers written beside each (``*.expected.json``, written by reading the
document): titles without invented spaces, every author, the journal's own name, the abstract
without citation boilerplate (or none), DOI, PMID and date. ``heldout/`` holds real documents
of the same publishers that the rules were not written from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from watcher import formats
from watcher.cli import cli

DATA = Path(__file__).parent.parent / "data" / "journals"
DOCUMENTS = sorted(DATA.glob("*.xml")) + sorted((DATA / "heldout").glob("*.xml"))


def _id(path: Path) -> str:
    return f"heldout/{path.stem}" if path.parent.name == "heldout" else path.stem


def expected(path: Path) -> list[dict]:
    return json.loads(path.with_name(path.name.replace(".xml", ".expected.json")).read_text("utf-8"))


@pytest.mark.parametrize("path", DOCUMENTS, ids=_id)
def test_a_real_table_of_contents_reads_to_its_papers(path):
    listing = formats.read(path.read_bytes(), path.name)
    assert listing.format == "journal-feed"
    want = expected(path)
    assert [p.title for p in listing.papers] == [w["title"] for w in want]
    for paper, w in zip(listing.papers, want):
        assert paper.authors == w["authors"], paper.title
        assert paper.journal == w["journal"], paper.title
        assert paper.doi == w["doi"], paper.title
        assert paper.pmid == w["pmid"], paper.title
        assert (paper.published.date().isoformat() if paper.published else None) == w["date"], paper.title
        for name in ("venue", "version", "categories"):  # a preprint server's items
            if name in w:
                assert getattr(paper, name) == w[name], (name, paper.title)
        if w["abstract_start"]:
            assert paper.abstract.startswith(w["abstract_start"]), paper.abstract[:200]
            assert paper.abstract.endswith(w["abstract_end"]), paper.abstract[-200:]
        else:
            assert paper.abstract == "", paper.abstract


def test_convert_reads_every_real_table_of_contents_and_names_the_format_when_asked(tmp_path):
    """``watcher convert`` takes every document (no refusal, no warnings of items without an
    arXiv id); ``--from journal-feed`` reads one as a table of contents whatever detection says."""
    docs = [str(p) for p in sorted(DATA.glob("*.xml"))]
    result = CliRunner().invoke(cli, ["convert", *docs, "--to", "json"])
    assert result.exit_code == 0, result.output
    papers = json.loads(result.stdout)
    assert len(papers) == sum(len(expected(Path(d))) for d in docs)
    named = CliRunner().invoke(cli, ["convert", "--from", "journal-feed", docs[0], "--to", "json"])
    assert named.exit_code == 0, named.output
    assert [p["title"] for p in json.loads(named.stdout)] == [w["title"] for w in expected(Path(docs[0]))]
    for other, what in (("openalex/work_W2741809807_state_of_oa.json", "JSON"), ("llm-rl-2025-04-12.txt", "text")):
        named = CliRunner().invoke(cli, ["convert", "--from", "journal-feed", str(DATA.parent / other)])
        assert named.exit_code == 2 and named.output.count("\n") == 1, named.output
        assert named.output.endswith(f"{other}: {what}, not XML, where an RSS or Atom table of contents "
                                     "was expected\n"), named.output  # not "no XML element found"
    wrong = CliRunner().invoke(cli, ["convert", "--from", "pubmed-xml", docs[0]])
    assert wrong.exit_code != 0 and "Traceback" not in wrong.output
    assert "PubMed" in wrong.output or "pubmed" in wrong.output.lower()


def test_an_item_without_a_title_is_left_out_with_a_warning_naming_it_and_the_rest_is_read(tmp_path):
    """A real Wiley table of contents whose first item lost its title (every element that
    could give one): the other item is read, the broken one is named by its place and link."""
    import re

    real = (DATA / "wiley_taxon_2021-11-24_trimmed.xml").read_text("utf-8")
    start, end = real.index("<item"), real.index("</item>")
    item = re.sub(r"<((?:dc:|prism:)?title)\b[^>]*>.*?</\1>", "", real[start:end], flags=re.S)
    (tmp_path / "toc.xml").write_text(real[:start] + item + real[end:], "utf-8")
    link = re.search(r"<link>(.*?)</link>", item).group(1).strip()
    for args in ([], ["--from", "journal-feed"]):
        result = CliRunner().invoke(cli, ["convert", *args, str(tmp_path / "toc.xml"), "--to", "json"])
        assert result.exit_code == 0, result.output
        assert [p["title"] for p in json.loads(result.stdout)] == [w["title"] for w in expected(
            DATA / "wiley_taxon_2021-11-24_trimmed.xml")][1:]
        assert result.stderr.strip() == (f"watcher: WARNING: {tmp_path / 'toc.xml'}: skipped an entry that is not a paper: "
                                         f"item 1 ({link}) has no title"), result.stderr


def test_a_sciencedirect_citation_line_gives_the_date_an_article_in_press_its_day():
    """ScienceDirect's items have no date element, only "Publication date: February 2022" (the
    real document above: the month's first day, as PubMed's month-only dates) or, for an
    article in press, "Available online 16 December 2021" in the citation line."""
    from watcher.formats import journal_feed

    real = (DATA / "sciencedirect_molecular-phylogenetics-and-evolution_2021-12-21_trimmed.xml").read_text("utf-8")
    in_press = real.replace("Publication date: February 2022", "Publication date: Available online 16 December 2021", 1)
    papers = journal_feed.parse(in_press.encode(), "sd.xml").papers
    assert [p.published.date().isoformat() for p in papers] == ["2021-12-16"] + ["2022-02-01"] * 3
    assert papers[0].authors == ["David R. Bickel"] and papers[0].abstract == ""


def test_markup_in_titles_joins_letters_and_a_title_repeated_as_abstract_is_none():
    """Hand-written items (the real documents above have <em> only): sub- and superscripts
    are no word breaks, a BOM is no letter, and Nature's research items, whose description
    is the citation line and the title again, have no abstract."""
    from watcher.formats import journal_feed

    rss = """<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>
    <title>Nature Chemistry - nature.com science feeds</title>
    <item><title><![CDATA[\ufeffAn S<sub>N</sub>2 route to LaCl<sub>3</sub>-based electrolytes]]></title>
      <link>https://www.nature.com/articles/s41557-026-01234-5</link>
      <description><![CDATA[<p>Nature Chemistry, Published online: 20 November 2026;
        <a href="https://www.nature.com/articles/s41557-026-01234-5">doi:10.1038/s41557-026-01234-5</a></p>
        An SN2 route to LaCl3-based electrolytes]]></description></item>
    <item><title><![CDATA[Superconductivity in La<sub>4</sub>Ni<sub>3</sub>O<sub>10&#8722;<i>&#948;</i></sub>]]></title>
      <link>https://www.nature.com/articles/s41586-026-05678-9</link></item>
    </channel></rss>""".encode()
    one, two = journal_feed.parse(rss, "nature").papers
    assert one.title == "An SN2 route to LaCl3-based electrolytes" and one.abstract == ""
    assert two.title == "Superconductivity in La4Ni3O10\u2212\u03b4"
    assert one.journal == "Nature Chemistry" and one.doi == "10.1038/s41557-026-01234-5"


@pytest.mark.parametrize("name", ["microbiology-society_ijsem_2021-12-21_trimmed.xml",
                                  "sciencedirect_molecular-phylogenetics-and-evolution_2021-12-21_trimmed.xml",
                                  "oup_zoological-journal-linnean-society_2021-12-21_trimmed.xml"])
def test_a_real_feed_with_the_flaws_of_small_publishers_reads_to_the_same_papers(name):
    """Blank lines before the XML declaration, HTML's &nbsp; and a bare & (what PHP and OJS
    feeds of small journals write) are set right, outside CDATA, and the feed reads to the same
    papers; cut off, it is still refused (QA: each flaw refused the whole feed)."""
    data = (DATA / name).read_bytes()
    at = data.index(b"<channel") + data[data.index(b"<channel"):].index(b">") + 1
    flawed = b"\n\n" + data[:at] + b"<copyright>Society&nbsp;for Microbiology & Co. &copy; 2021</copyright>" + data[at:]
    want = formats.read(data, name).papers
    got = formats.read(flawed, name).papers
    assert [(p.title, p.authors, p.doi, p.abstract) for p in got] == [(p.title, p.authors, p.doi, p.abstract) for p in want]
    with pytest.raises(formats.InputError, match="not well-formed XML"):
        formats.read(flawed[: len(flawed) * 2 // 3], name)
