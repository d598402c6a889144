"""One presentation layer: every card (e-mail, Markdown, Slack, web, apprise, Atom) is drawn by
a template with the shared filters, so a user's ``templates_dir`` reaches apprise and Atom
entries too; titles are LaTeX-decoded in every card (``Pok\\'emon``, ``$\\alpha$``); and no
module of watcher/ draws a card in Python."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from deliverkit import HookServer, sample_digest

from conftest import REPO
from watcher.deliver import channel_config
from watcher.deliver import DeliveryContext, make_channel
from watcher.deliver.apprise_channel import messages
from watcher.deliver.feed import merge_feed
from watcher.present.render import render

LATEX_TITLE = r"Pok\'emon agents learn $\alpha$-policies with \textbf{RL}"
DECODED = "Pokémon agents learn α-policies with RL"


def latex_digest():
    digest = sample_digest(2, updated=1)
    first = digest.matches[0]
    return replace(digest, matches=[replace(first, paper=replace(first.paper, title=LATEX_TITLE)),
                                    *digest.matches[1:]])


@pytest.mark.parametrize("fmt", ["html", "markdown", "slack", "json", "email"])
def test_titles_are_latex_decoded_in_the_digest_formats(fmt):
    out = render(latex_digest(), fmt)
    if fmt == "json":
        out = json.dumps(json.loads(out), ensure_ascii=False)  # json keeps the title as listed
        assert LATEX_TITLE.replace("\\", "\\\\") in out
        return
    assert DECODED in out and "\\'emon" not in out and "$\\alpha$" not in out


def test_the_seed_text_format_stays_as_it_is():
    assert LATEX_TITLE in render(latex_digest(), "text")


@pytest.mark.parametrize("fmt", ["html", "markdown", "text"])
def test_titles_are_latex_decoded_in_apprise_messages(fmt):
    body = "\n".join(b for _, b in messages(latex_digest(), fmt, 30000, 0))
    assert DECODED in body and "\\'emon" not in body


def test_titles_are_latex_decoded_in_atom_entries():
    from datetime import datetime, timezone

    feed = merge_feed(latex_digest(), [], datetime(2025, 4, 12, tzinfo=timezone.utc), 10)
    assert f"<title type=\"text\">{DECODED}</title>" in feed


def test_a_users_templates_dir_reaches_apprise_and_atom(tmp_path, monkeypatch):
    """Templates of the same name in ``templates_dir`` replace the shipped ones, for the apprise
    channel (sent through apprise's json:// to a local endpoint) and the feed channel."""
    pytest.importorskip("apprise")
    mine = tmp_path / "templates"
    mine.mkdir()
    (mine / "apprise.txt").write_text(
        "{% macro paper(m, links) %}MINE {{ m.paper.title|title_text|chat }}{% endmacro %}\n"
        "{% macro updated(digest, limit) %}MINE UPDATED{% endmacro %}\n"
        "{% macro empty(digest) %}MINE EMPTY{% endmacro %}\n")
    (mine / "feed_entry.html").write_text(
        "{% macro content(m, links) %}<p>MINE {{ m.paper.title|title_text }}</p>{% endmacro %}\n")
    digest = latex_digest()
    ctx = DeliveryContext(base_dir=tmp_path, templates_dir=mine)
    make_channel(channel_config(name="feed", type="feed", path="feeds/{digest}.atom", max_entries=10),
                 ctx).send(digest, {})
    atom = (tmp_path / "feeds" / f"{digest.name}.atom").read_text()
    assert f"&lt;p&gt;MINE {DECODED}&lt;/p&gt;" in atom
    with HookServer(path="/") as sink:
        monkeypatch.setenv("WATCHER_TEST_APPRISE_URLS",
                           f"json://127.0.0.1:{sink.httpd.server_address[1]}/hook?format=text&cto=30&rto=30")
        make_channel(channel_config(name="phone", type="apprise", urls_env="WATCHER_TEST_APPRISE_URLS"),
                     ctx).send(digest, {})
        body = "\n".join(r["json"]["message"] for r in sink.requests)
    assert f"MINE {DECODED}" in body and "MINE UPDATED" in body and "TL;DR" not in body


# --- no card drawn in Python -------------------------------------------------------------------

# A card is markup around a paper's fields: an HTML tag or Markdown emphasis or link written in
# Python next to a paper's title, TL;DR or reasons. The templates draw them; a file that must
# hold such markup for another reason is named here, with why (none does today).
NOT_CARDS: dict[str, str] = {}
MARKUP = re.compile(r"<(?:b|i|p|a|br|li|ul|h\d|div|span|strong|em|article)\b[^>]*>|\*\*[^*]|\]\(")
PAPER_FIELDS = re.compile(r"\.(?:title|tldr|reasons|abstract|authors)\b|tldr_of\(")


def card_builders(path: Path) -> list[str]:
    """The string literals of ``path`` that hold markup in a function that also reads a paper's
    fields: ``function: literal`` for each."""
    text = path.read_text()
    tree, lines = ast.parse(text), text.splitlines(keepends=True)
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        source = "".join(lines[fn.lineno - 1:fn.end_lineno])  # its lines (the file split once, not per function)
        if not PAPER_FIELDS.search(source):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and MARKUP.search(node.value):
                found.append(f"{fn.name}: {node.value[:60]!r}")
    return found


def test_no_module_draws_a_card_in_python():
    offenders = {}
    for path in sorted((REPO / "watcher").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel in NOT_CARDS:
            continue
        found = card_builders(path)
        if found:
            offenders[rel] = found
    assert offenders == {}, "cards belong in templates/: " + json.dumps(offenders, indent=1)


def test_the_card_check_finds_a_card_drawn_in_python(tmp_path):
    """The check above is not blind: the apprise block as it was drawn before (an f-string of
    HTML around the title) is found."""
    drawn = tmp_path / "drawn.py"
    drawn.write_text("def paper_block(m):\n"
                     "    title = m.paper.title\n"
                     "    return f'<b><a href=\"{m.url}\">{title}</a></b>'\n")
    assert card_builders(drawn)


def test_check_names_a_broken_apprise_or_feed_template(tmp_path):
    from watcher.cli.check import check_templates

    fine = tmp_path / "fine"
    fine.mkdir()
    assert check_templates(str(fine)) == []
    mine = tmp_path / "templates"
    mine.mkdir()
    (mine / "apprise.md").write_text("{% macro paper(m, links) %}{{ m.paper.nope.deeper }}{% endmacro %}\n"
                                     "{% macro updated(digest, limit) %}{% endmacro %}\n"
                                     "{% macro empty(digest) %}{% endmacro %}\n")
    (mine / "feed_entry.html").write_text("{% macro content(m, links) %}{% if %}{% endmacro %}\n")
    problems = check_templates(str(mine))
    assert len(problems) == 2
    assert problems[0].startswith("template apprise.md: paper: ") and "nope" in problems[0]
    assert problems[1].startswith("template ") and "feed_entry.html" in problems[1] and "line 1" in problems[1]
