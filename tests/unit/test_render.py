"""Rendering: golden files for every format, the seed's byte-exact text, escaping, overrides."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
import os
import re

import pytest
from markupsafe import escape
from deliverkit import HtmlCollector, GOLDEN, SEED_DIGEST, injection_digest, sample_digest, seed_papers

from watcher.errors import RenderError
from watcher.models import Digest, Match
from watcher.present.render import (ABSTRACT_CHARS, EXTENSIONS, TEMPLATE_NAMES, authors, md, mrkdwn, render,
                            safe_url, shorten)
from watcher.present.tldr import extractive_tldr

FORMATS = list(TEMPLATE_NAMES)


def golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME, or write it when WATCHER_REGEN_GOLDEN=1."""
    path = GOLDEN / name
    if os.environ.get("WATCHER_REGEN_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return
    assert path.exists(), f"{path} missing: run with WATCHER_REGEN_GOLDEN=1"
    with open(path, encoding="utf-8", newline="") as f:
        assert text == f.read(), f"{name} differs from its golden file (WATCHER_REGEN_GOLDEN=1 to accept)"


@pytest.mark.parametrize("fmt", FORMATS)
def test_golden(fmt):
    golden(f"digest.{EXTENSIONS[fmt]}", render(sample_digest(4, updated=2), fmt))


@pytest.mark.parametrize("fmt", ["email", "markdown", "html", "slack"])
def test_golden_over_budget(fmt):
    """The e-mail's shortened form: 2 papers in full, 3 as titles, the rest counted."""
    golden(f"digest-overflow.{EXTENSIONS[fmt]}", render(sample_digest(8, updated=0), fmt,
                                                        full_limit=2, list_limit=3))


@pytest.mark.parametrize("fmt", ["markdown", "html", "slack", "json", "email"])
def test_golden_with_rating_links(fmt):
    """[web] base_url and secret set: per paper up / down / save (json: links), and the
    digest's "view in browser"."""
    from watcher.present.links import Links

    digest = sample_digest(2, updated=1)
    digest.links = Links("https://papers.example.org", "golden-secret", issued=digest.date)
    golden(f"digest-links.{EXTENSIONS[fmt]}", render(digest, fmt))


@pytest.mark.parametrize("fmt", FORMATS)
def test_golden_empty(fmt):
    d = Digest(name="daily", title="LLM-RL", date=sample_digest().date,
               empty_reason="nothing matched your profiles")
    golden(f"digest-empty.{EXTENSIONS[fmt]}", render(d, fmt))


def test_empty_text_digest_is_its_header_and_reads_back():
    """docs/formats.md: the text format is read and written, so an empty digest (send_empty) is just the
    header line; the reason is for the log and the rich formats."""
    from watcher import formats
    from watcher.formats import text as text_format

    d = Digest(name="daily", title="LLM-RL", date=sample_digest().date,
               empty_reason="no arXiv announcement on Thu 27 Nov 2025 (holiday: Thanksgiving)")
    out = render(d, "text")
    assert out == "LLM-RL - 2025-04-12"
    listing = formats.read(out.encode(), "empty")
    assert (listing.title, listing.date, listing.papers) == ("LLM-RL", d.date, [])
    assert text_format.write(listing.title, listing.date, listing.papers) == out
    for fmt in ("markdown", "html", "slack"):
        assert "Thanksgiving" in render(d, fmt), fmt


def test_text_is_the_seed_byte_for_byte():
    data = SEED_DIGEST.read_bytes()
    papers = seed_papers()
    d = Digest(name="x", title="LLM-RL", date=sample_digest().date,
               matches=[Match(p, 1.0, [], "p") for p in papers])
    assert render(d, "text").encode("utf-8") == data


def test_rich_formats_show_every_field():
    d = sample_digest(2, updated=1)
    p = d.matches[0].paper
    for fmt in ("markdown", "html", "slack"):
        out = render(d, fmt)
        for needle in (p.abs_url, p.pdf_url, "2025-04-10", "cs.LG", "17", "reinforcement learning",
                       "et al.", d.updated[0].paper.abs_url):
            assert needle in out, (fmt, needle)
    assert "updated" in render(d, "markdown").lower()


def test_rich_formats_show_the_tldr_and_shorten_the_abstract_text_keeps_it_whole():
    d = sample_digest(1, updated=0)
    paper = d.matches[0].paper
    tldr = extractive_tldr(paper.abstract)
    assert tldr and tldr != paper.abstract
    assert paper.abstract in render(d, "text")
    html = render(d, "html")
    assert str(escape(tldr)) in html and str(escape(paper.abstract)) not in html
    assert str(escape(shorten(paper.abstract, ABSTRACT_CHARS))) in html
    markdown = render(d, "markdown")
    assert "**TL;DR:** " + md(tldr) in markdown and md(paper.abstract) not in markdown
    section = json.loads(render(d, "slack"))["blocks"][2]["text"]["text"]
    assert "*TL;DR:* " + mrkdwn(tldr) in section
    assert paper.abstract not in section and "…" in section and len(section) < 1000
    assert json.loads(render(d, "json"))[0]["tldr"] == tldr
    d.matches[0].tldr = "A model's own sentence <b>."  # the pipeline's TL;DR wins, escaped
    assert "A model&#39;s own sentence &lt;b&gt;." in render(d, "html")
    assert json.loads(render(d, "json"))[0]["tldr"] == "A model's own sentence <b>."


def test_a_paper_without_an_abstract_has_no_tldr_line_in_any_format():
    """A journal feed that lists titles only: the TL;DR would be the title again, right under
    it; every format leaves the line out and shows the title once."""
    from watcher.deliver.apprise_channel import paper_block
    from watcher.deliver.feed import build_entry

    d = sample_digest(2, updated=0)
    title = "Chiral Phonons in a Twisted Bilayer"
    d.matches[0] = Match(replace(d.matches[0].paper, title=title, abstract=""), 2.0, ["ti: phonon"], "llm-rl")
    for fmt in ("html", "markdown", "slack", "email"):
        out = render(d, fmt)
        assert out.count(title) == (2 if fmt == "html" else 1), fmt  # not again as its TL;DR (html: the preheader too)
        assert fmt == "html" or out.count("TL;DR") == 1, fmt  # the other paper's (html has no label)
    assert json.loads(render(d, "json"))[0]["tldr"] == ""
    for fmt in ("text", "markdown", "html"):
        block = paper_block(d.matches[0], fmt)
        assert title in block and "TL;DR" not in block, fmt
        assert "TL;DR" in paper_block(d.matches[1], fmt), fmt
    entry = build_entry(d.matches[0], datetime(2025, 4, 12, tzinfo=timezone.utc))
    assert not [e for e in entry if e.tag.endswith("summary")]
    assert [e for e in build_entry(d.matches[1], datetime(2025, 4, 12, tzinfo=timezone.utc))
            if e.tag.endswith("summary")]


def test_authors_shortened():
    assert authors(["A", "B"], 2) == "A, B"
    assert authors(["A", "B", "C"], 2) == "A, B et al."


@pytest.mark.parametrize("fmt", FORMATS)
def test_injection_is_inert(fmt):
    out = render(injection_digest(), fmt)
    assert "49" not in out and "jinja" not in out.replace("{% if true %}jinja{% endif %}", "")
    assert "{{ 7*7 }}" in out or "{{ 7\\*7 }}" in out
    assert not re.search(r"<javascript|href=\"?javascript", out)
    if fmt == "html":
        parser = HtmlCollector()
        parser.feed(out)
        assert "script" not in parser.tags and "img" not in parser.tags and "b" in parser.tags
        assert "<script>alert(1)</script>" in "".join(parser.text)  # shown as text
        assert not any(v and v.startswith("javascript") for _, v in parser.attrs)
        assert parser.tags.count("b") == 2  # only the template's own "Why:" of each paper
    if fmt == "slack":
        blocks = json.loads(out)["blocks"]
        texts = json.dumps(blocks)
        assert "<!channel>" not in texts and "<@U123>" not in texts and "<@U999>" not in texts
        assert "<https://evil.example" not in texts
        assert "&lt;!channel&gt;" in texts
    if fmt == "markdown":
        assert "<script>" not in out and "<img" not in out
        assert not re.search(r"(?<!\\)\]\(javascript", out) and "\\](javascript" in out
    if fmt in ("text", "markdown", "html", "slack"):
        assert not re.search(r"^Bcc:", out, re.M), "a CRLF in a title started a new line"


def test_markdown_and_mrkdwn_escaping():
    assert md("*a* [b](c) <x> # d") == "\\*a\\* \\[b\\](c) &lt;x&gt; # d"
    assert md("# heading") == "\\# heading"
    assert mrkdwn("<!here> @channel & <@U1>") == "&lt;!here&gt; @\u200bchannel &amp; &lt;@U1&gt;"
    assert safe_url("javascript:alert(1)") == "" and safe_url("https://a.b/c_(d)") == "https://a.b/c_%28d%29"


def test_user_template_overrides_one_format(tmp_path):
    (tmp_path / "digest.md").write_text("custom {{ digest.title }} {{ matches | length }}")
    d = sample_digest(2)
    assert render(d, "markdown", tmp_path) == "custom LLM-RL 2"
    assert render(d, "html", tmp_path) == render(d, "html")  # the others stay shipped


def test_user_html_template_autoescapes(tmp_path):
    (tmp_path / "digest.html").write_text("{% for m in matches %}<p>{{ m.paper.title }}</p>{% endfor %}")
    assert "&lt;script&gt;" in render(injection_digest(), "html", tmp_path)


def test_broken_user_template_is_a_render_error(tmp_path):
    (tmp_path / "digest.txt").write_text("{% for %}")
    with pytest.raises(RenderError, match="digest.txt: line 1"):
        render(sample_digest(), "text", tmp_path)
    (tmp_path / "digest.md").write_text("{{ nosuchthing }}")
    with pytest.raises(RenderError, match="nosuchthing"):
        render(sample_digest(), "markdown", tmp_path)


def test_slack_format_is_valid_block_kit_shape():
    msg = json.loads(render(sample_digest(30, updated=0), "slack"))
    assert msg["blocks"][0]["type"] == "header" and msg["text"]
    assert all(b["type"] in ("header", "context", "section") for b in msg["blocks"])
    assert len(msg["blocks"]) == 32


def test_json_format_is_the_paper_array():
    data = json.loads(render(sample_digest(3), "json"))
    assert [p["arxiv_id"] for p in data] == ["2504.07600", "2504.07601", "2504.07602"]
    assert {"score", "reasons", "profile", "title", "published", "upvotes"} <= set(data[0])


def test_check_renders_every_template(tmp_path):
    from helpers import run_cli_text

    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "digest.slack.json").write_text('{"blocks": [ {{ digest.title }} ]}')
    (tmp_path / "tpl" / "digest.md").write_text("{{ digest.nosuch }}")
    (tmp_path / "config.toml").write_text(
        '[watcher]\ntemplates_dir = "tpl"\n[profile.p]\nquery = "rl"\n'
        '[digest.d]\nprofiles = ["p"]\nchannels = ["f"]\nevery = "1d"\n'
        '[channel.f]\ntype = "file"\npath = "out/{digest}.{ext}"\n')
    r = run_cli_text("--config", str(tmp_path / "config.toml"), "check", cwd=tmp_path)
    assert r.returncode == 2
    assert "digest.slack.json: output is not valid slack JSON" in r.stderr
    assert "template digest.md:" in r.stderr and "nosuch" in r.stderr
    (tmp_path / "tpl" / "digest.slack.json").unlink()
    (tmp_path / "tpl" / "digest.md").unlink()
    r = run_cli_text("--config", str(tmp_path / "config.toml"), "check", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_every_card_shows_one_labelled_date():
    """The one date a card shows says what it is: the day a listing announced the paper, else
    the first version's submission; never an unlabelled date, never two."""
    from dataclasses import replace
    from datetime import date

    from watcher.deliver.apprise_channel import paper_block

    digest = sample_digest(2, updated=0)
    listed = replace(digest.matches[1].paper, published=None, announced=date(2025, 4, 11))
    digest.matches[1] = replace(digest.matches[1], paper=listed)
    submitted = f"submitted {digest.matches[0].paper.published.date().isoformat()}"
    for fmt in ("html", "markdown", "slack"):
        out = render(digest, fmt)
        assert out.count(submitted) == 1 and out.count("announced 2025-04-11") == 1, fmt
    blocks = [paper_block(m, "text") for m in digest.matches]
    assert submitted in blocks[0] and "announced 2025-04-11" in blocks[1]


def test_markdown_names_a_journal_papers_venue_and_links_its_doi_as_the_html_does():
    """A journal article (the shipped Nature Machine Intelligence sample): the Markdown digest
    names its journal and links its DOI, as the HTML digest does."""
    from pathlib import Path

    from watcher import formats

    path = Path(formats.__file__).parent.parent / "samples" / "nature-machine-intelligence-2025-04-11.xml"
    paper = formats.read(path.read_bytes(), path.name).papers[0]
    assert paper.doi and not paper.pdf_url
    d = Digest(name="daily", title="Journals", date=paper.day, matches=[Match(paper, 1.0, [], "p")])
    markdown, html = render(d, "markdown"), render(d, "html")
    for out in (markdown, html):
        assert "Nature Machine Intelligence" in out and f"doi:{paper.doi}" in out
    assert f"[doi:{md(paper.doi)}](https://doi.org/{paper.doi})" in markdown
