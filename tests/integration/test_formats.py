"""The two seed formats (docs/formats.md): byte-exact text round trip, the HF page reader, bad input."""

from __future__ import annotations

import json
from datetime import date

import pytest

from conftest import SEED_DIGEST, SEED_HF_PAGE
from helpers import run_cli
from watcher import formats
from watcher.errors import InputError
from watcher.formats import text


def test_text_digest_round_trip_is_byte_exact_through_the_cli(tmp_path):
    r = run_cli("convert", str(SEED_DIGEST), "--to", "text", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == SEED_DIGEST.read_bytes()


def test_text_digest_parses_every_field():
    listing = formats.read(SEED_DIGEST.read_bytes(), "seed")
    assert listing.format == "text"
    assert (listing.title, listing.date) == ("LLM-RL", date(2025, 4, 12))
    assert len(listing.papers) == 30
    first = listing.papers[0]
    assert first.title.startswith("VLM-R1: A Stable and Generalizable")
    assert first.authors[0] == "Haozhan Shen" and len(first.authors) == 12
    assert first.published.isoformat() == "2025-04-10T10:05:15+00:00"
    assert first.abstract.startswith("Recently DeepSeek R1") and first.abstract.endswith("VLM-R1")


def test_text_digest_with_crlf_line_endings_reads_like_lf_and_writes_lf(tmp_path):
    crlf = SEED_DIGEST.read_bytes().replace(b"\n", b"\r\n")
    assert formats.detect(crlf) == "text"
    listing = formats.read(crlf, "crlf")
    expected = formats.read(SEED_DIGEST.read_bytes(), "seed")
    assert listing.papers == expected.papers
    assert (listing.title, listing.date) == (expected.title, expected.date)
    assert not any("\r" in p.abstract or "\r" in p.title for p in listing.papers)
    path = tmp_path / "crlf.txt"
    path.write_bytes(crlf)
    r = run_cli("convert", str(path), "--to", "text", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == SEED_DIGEST.read_bytes()


EDITOR_ENDINGS = [b"\n", b"\n\n\n", b"\n  \n\t\n", b"\n\n  "]


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("ending", EDITOR_ENDINGS, ids=repr)
def test_text_digest_saved_by_an_editor_reads_and_writes_back_the_seed_bytes(tmp_path, ending, crlf):
    """docs/formats.md: a final newline or trailing blank lines (what editors add) are accepted when
    reading; writing gives the seed's bytes again, with no final newline."""
    seed = SEED_DIGEST.read_bytes()
    saved = seed + ending
    if crlf:
        saved = saved.replace(b"\n", b"\r\n")
    assert formats.detect(saved) == "text"
    listing = formats.read(saved, "saved")
    expected = formats.read(seed, "seed")
    assert listing.papers == expected.papers and listing.papers[-1].abstract == expected.papers[-1].abstract
    assert text.write(listing.title, listing.date, listing.papers).encode() == seed
    if ending == b"\n\n\n":  # and as a user does it (one run per line ending keeps the suite fast)
        path = tmp_path / "saved.txt"
        path.write_bytes(saved)
        r = run_cli("convert", str(path), "--to", "text", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout == seed


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\n\n\n"], ids=repr)
def test_header_only_text_digest_saved_by_an_editor_is_an_empty_listing(ending):
    listing = formats.read(b"LLM-RL - 2025-11-27" + ending, "empty")
    assert (listing.format, listing.title, listing.papers) == ("text", "LLM-RL", [])
    assert text.write(listing.title, listing.date, listing.papers).encode() == b"LLM-RL - 2025-11-27"


def test_text_digest_keeps_an_abstract_s_own_trailing_space():
    """Only what follows the last line break goes: the abstract itself stays byte for byte."""
    seed = SEED_DIGEST.read_bytes()
    listing = formats.read(seed + b" \n", "saved")
    assert listing.papers[-1].abstract.endswith(" ")
    assert text.write(listing.title, listing.date, listing.papers).encode() == seed + b" "


@pytest.mark.parametrize("ending", [b"", b"\n", b"\n\n"], ids=repr)
def test_text_digest_whose_last_abstract_is_empty_round_trips(ending):
    """The written form of an empty last abstract ends in a blank line; that blank line is the
    abstract, not an editor's trailing line."""
    listing = formats.read(SEED_DIGEST.read_bytes(), "seed")
    listing.papers[-1].abstract = ""
    written = text.write(listing.title, listing.date, listing.papers).encode()
    assert written.endswith(b"\n\n")
    back = formats.read(written + ending, "saved")
    assert back.papers == listing.papers
    assert text.write(back.title, back.date, back.papers).encode() == written


def test_text_writer_flattens_hard_wrapped_fields_and_keeps_format():
    listing = formats.read(SEED_DIGEST.read_bytes(), "seed")
    p = listing.papers[0]
    p.title = "A wrapped\n  title"
    out = text.write("T", date(2025, 1, 2), [p])
    assert out.startswith("T - 2025-01-02\n\nA wrapped title\n\nAuthors:Haozhan Shen, ")
    assert not out.endswith("\n")
    assert formats.read(out.encode(), "x").papers[0].title == "A wrapped title"


def test_hf_page_to_json_gives_every_entry_with_metadata(tmp_path):
    r = run_cli("convert", str(SEED_HF_PAGE), "--to", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    papers = json.loads(r.stdout)
    assert len(papers) == 57
    by_title = {p["title"]: p for p in papers}
    prorl = by_title["ProRL: Prolonged Reinforcement Learning Expands Reasoning Boundaries in Large Language Models"]
    assert prorl["author_count"] == 8 and prorl["upvotes"] == 4
    assert prorl["published"].startswith("2025-05-30")
    video = by_title["Video Reasoning without Training"]
    assert video["organization"] == "Qualcomm" and video["upvotes"] == 2
    resa = by_title["Resa: Transparent Reasoning Models via SAEs"]  # an entry without metadata lines
    assert resa["published"] is None and resa["upvotes"] is None and resa["abstract"]
    # a year-less date ("Mar 17 1") takes the page's year: 2025 is the latest year written out
    yearless = [p for p in papers if p["published"] and p["published"].startswith("2026-03-17")]
    assert len(yearless) == 1 and yearless[0]["upvotes"] == 1
    for p in papers:
        assert set(p) >= {"arxiv_id", "version", "title", "authors", "abstract", "published", "updated",
                          "categories", "primary_category", "comment", "journal_ref", "doi", "url",
                          "announce_type", "upvotes", "source"}


def test_hf_page_year_follows_date_option():
    listing = formats.read(SEED_HF_PAGE.read_bytes(), "page", today=date(2030, 1, 1))
    assert listing.date == date(2030, 4, 17)
    assert any(p.published and p.published.date() == date(2030, 3, 17) for p in listing.papers)


BAD_INPUTS = [
    (b"", "empty input"),
    (b"\x00\x01\x02binary\xff", "binary data"),
    (b"just some words\nthat are not a listing\n", "unknown format"),
    (b"LLM-RL - 2025-04-12\n\nA title\n\nAuthors:X\n\nabstract", "expected 'Authors:"),
    (b"LLM-RL - 2025-04-12\n\nA title\n\nAuthors:X\nDate:yesterday\n\nabstract", "is not 'YYYY-MM-DD HH:MM:SS'"),
    (b"LLM-RL - 2025-04-12\n\nA title\n\nAuthors:X\nDate:2025-01-01 00:00:00", "not a multiple of 3"),
    (b"LLM-RL - 2025-13-45\n\n", "is not a date"),
    (b'[{"title": 3}]', "not a paper record"),
    (b'{"title": "x"}\nnot json\n', "line 2: invalid JSON"),
]


@pytest.mark.parametrize("data, words", BAD_INPUTS, ids=[w for _, w in BAD_INPUTS])
def test_bad_input_is_one_line_error_exit_2(tmp_path, data, words):
    path = tmp_path / "input.txt"
    path.write_bytes(data)
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace("[", r"\[")):
        formats.read(data, str(path))
    r = run_cli("convert", str(path), cwd=tmp_path)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.startswith(f"watcher: {path}") and err.count("\n") == 1 and "Traceback" not in err


def test_missing_file_and_stdin(tmp_path):
    r = run_cli("convert", str(tmp_path / "nope.txt"), cwd=tmp_path)
    assert r.returncode == 2 and b"no such file" in r.stderr
    r = run_cli("convert", "-", "--to", "text", cwd=tmp_path, input=SEED_DIGEST.read_bytes())
    assert r.returncode == 0 and r.stdout == SEED_DIGEST.read_bytes()


def test_convert_merges_inputs_into_one_listing_without_duplicates(tmp_path):
    r = run_cli("convert", str(SEED_DIGEST), str(SEED_DIGEST), "--to", "json", cwd=tmp_path)
    papers = json.loads(r.stdout)
    assert len(papers) == 30
    assert all(20 <= len(p["tldr"]) <= 200 and p["tldr"] != p["abstract"] for p in papers)  # docs/channels.md
    r = run_cli("convert", str(SEED_DIGEST), "--to", "markdown", "--title", "Mine", "--date",
                "2025-05-01", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.decode().startswith("# Mine — 2025-05-01")


def test_convert_dates_the_listing_by_the_input_not_by_today(tmp_path):
    """The default --date: the listing's own (a text digest's header), else a date in the file's
    name (a corpus or API file carries none), else the newest paper's day; never the day run."""
    samples = formats.__file__.rsplit("/", 2)[0] + "/samples/"
    for name, header in [("hf-daily-2025-04-11.json", "Papers - 2025-04-11"),
                         ("corpus-2025-04-11.jsonl.gz", "Papers - 2025-04-11"),
                         ("llm-rl-2025-04-12.txt", "LLM-RL - 2025-04-12")]:
        r = run_cli("convert", samples + name, cwd=tmp_path)
        assert r.returncode == 0 and r.stdout.decode().splitlines()[0] == header, name
    corpus = run_cli("convert", samples + "corpus-2025-04-11.jsonl.gz", cwd=tmp_path).stdout.decode()
    assert "\nDate:\n" not in corpus and "Date:2025-04-11 00:00:00" in corpus  # filed under the file's day
    piped = (formats.__file__.rsplit("/", 2)[0] + "/samples/hf-daily-2025-04-11.json")
    with open(piped, "rb") as f:  # no name: the newest paper's day (Daily Papers puts each on a day)
        r = run_cli("convert", "-", cwd=tmp_path, input=f.read())
    assert r.stdout.decode().startswith("Papers - 2025-04-11")
    assert run_cli("convert", samples + "hf-daily-2025-04-11.json", "--date", "2025-05-01",
                   cwd=tmp_path).stdout.decode().startswith("Papers - 2025-05-01")


def test_convert_merges_an_id_less_listing_with_the_arxiv_entry_of_the_same_paper(tmp_path):
    corpus = tmp_path / "day.jsonl"
    corpus.write_text('{"id": "2504.07615", "categories": ["cs.CV"], "authors": ["Haozhan Shen"], '
                      '"title": "VLM-R1: A Stable and Generalizable R1-style Large\\n Vision-Language Model", '
                      '"summary": "Recently DeepSeek R1 ..."}\n')
    r = run_cli("convert", str(corpus), str(SEED_DIGEST), "--to", "json", cwd=tmp_path)
    papers = json.loads(r.stdout)
    assert len(papers) == 30
    vlm = papers[0]
    assert vlm["arxiv_id"] == "2504.07615" and vlm["categories"] == ["cs.CV"]
    assert vlm["published"] == "2025-04-10T10:05:15Z"  # the date came from the text digest


def test_gzipped_listings_are_read_and_broken_gzip_is_a_one_line_error(tmp_path):
    import gzip

    packed = tmp_path / "seed.txt.gz"
    packed.write_bytes(gzip.compress(SEED_DIGEST.read_bytes()))
    assert len(formats.read(packed.read_bytes(), "seed.gz").papers) == 30
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(b"LLM-RL - 2025-04-12")[:-6])
    r = run_cli("convert", str(broken), cwd=tmp_path)
    assert r.returncode == 2 and b"broken gzip data" in r.stderr


def test_a_json_record_of_another_layout_keeps_its_doi_url_and_journal(tmp_path):
    """A list written by hand (or by another tool) names a DOI, a link and a journal without
    watcher's own arxiv_id key: they are kept, not dropped without a word (QA)."""
    from watcher.formats import papers_json

    rec = {"title": "Kimi k1.5", "authors": ["Kimi Team"], "doi": "10.1016/J.Cell.2025.01.001",
           "url": "https://example.org/kimi", "journal": "Cell", "pmid": "40000001"}
    (paper,) = papers_json.parse(json.dumps([rec]).encode(), "mine.json").papers
    assert (paper.doi, paper.url, paper.journal, paper.pmid) == (
        "10.1016/j.cell.2025.01.001", "https://example.org/kimi", "Cell", "40000001")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps([rec]))
    out = json.loads(run_cli("convert", str(path), "--to", "json").stdout)
    assert out[0]["doi"] == "10.1016/j.cell.2025.01.001" and out[0]["journal"] == "Cell"


def test_a_feed_in_the_encoding_it_declares_is_recognised(tmp_path):
    """An RSS feed declared ISO-8859-1 (its é one byte) is found to be a journal feed, as a
    source reads it, not refused as "not UTF-8 text" (QA: only convert's detection failed)."""
    feed = ('<?xml version="1.0" encoding="ISO-8859-1"?>\n<rss version="2.0"><channel><title>Revue</title>'
            '<item><title>Étude des coléoptères</title><link>https://example.org/a1</link>'
            '<description>Une étude des coléoptères de la forêt.</description>'
            '<pubDate>Tue, 24 Nov 2026 00:00:00 GMT</pubDate></item></channel></rss>').encode("iso-8859-1")
    listing = formats.read(feed, "latin1.xml")
    assert [p.title for p in listing.papers] == ["Étude des coléoptères"]
    path = tmp_path / "latin1.xml"
    path.write_bytes(feed)
    out = run_cli("convert", str(path), "--to", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["title"] == "Étude des coléoptères"
