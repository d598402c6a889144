"""Hand-checked renderings of one small digest, written here by hand, not generated.

The golden files in tests/golden/ are watcher's own output (``WATCHER_REGEN_GOLDEN=1`` rewrites
them), so a rendering regression accepted in a hurry rewrites them too. The expectations below
were read line by line against docs/formats.md (text, JSON) and the README's description of each
format, and are only ever changed by hand: one new paper (two authors, two categories,
upvotes, two reasons) and one revised paper.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from html.parser import HTMLParser

import pytest

from watcher.models import Digest, Match, Paper
from watcher.present.render import render


def small_digest() -> Digest:
    new = Paper(title="Ratio: RL for LLMs", authors=["Ada Lovelace", "Alan Turing"], abstract="We study RL.",
                arxiv_id="2504.07600", version=2,
                published=datetime(2025, 4, 10, 10, 5, 15, tzinfo=timezone.utc),
                categories=["cs.LG", "cs.CL"], primary_category="cs.LG", upvotes=17, source="arxiv")
    revised = Paper(title="Old paper, new version", authors=["Grace Hopper"], abstract="Revised.",
                    arxiv_id="2504.07601", version=3,
                    published=datetime(2025, 4, 1, 8, 0, 0, tzinfo=timezone.utc), source="arxiv")
    return Digest(name="daily", title="LLM-RL", date=date(2025, 4, 12),
                  matches=[Match(new, 3.0, ['all: "reinforcement learning"', "category cs.LG"], "llm-rl")],
                  updated=[Match(revised, 1.5, ["all: RL"], "llm-rl")])


# docs/formats.md: header with the digest date, blank line, title, blank line, Authors:/Date: (UTC),
# blank line, the abstract; no newline at the end. Revised papers have no place in this format.
TEXT = ("LLM-RL - 2025-04-12\n"
        "\n"
        "Ratio: RL for LLMs\n"
        "\n"
        "Authors:Ada Lovelace, Alan Turing\n"
        "Date:2025-04-10 10:05:15\n"
        "\n"
        "We study RL.")

MARKDOWN = """\
# LLM-RL — 2025-04-12

1 new paper, 1 updated.

## [Ratio: RL for LLMs](https://arxiv.org/abs/2504.07600)

Ada Lovelace, Alan Turing · submitted 2025-04-10 · cs.LG, cs.CL · ▲ 17

*Why:* all: "reinforcement learning"; category cs.LG

**TL;DR:** We study RL.

[Abstract](https://arxiv.org/abs/2504.07600) · [PDF](https://arxiv.org/pdf/2504.07600)

## Updated

New versions of papers you have already seen:

- [Old paper, new version](https://arxiv.org/abs/2504.07601) (v3)
"""

# docs/formats.md (--to json): every field named there, unknown values null, plus score and reasons;
# docs/channels.md: the TL;DR (a one-sentence abstract is its own TL;DR, and no excerpt repeats it).
JSON = [{
    "title": "Ratio: RL for LLMs", "arxiv_id": "2504.07600", "version": 2,
    "authors": ["Ada Lovelace", "Alan Turing"], "abstract": "We study RL.",
    "published": "2025-04-10T10:05:15Z", "updated": None, "categories": ["cs.LG", "cs.CL"],
    "primary_category": "cs.LG", "comment": None, "journal_ref": None, "doi": None, "url": None,
    "announce_type": None, "upvotes": 17, "source": "arxiv", "announced": None, "author_count": None,
    "organization": None, "github_repo": None, "ai_keywords": [], "dois": [], "pmid": None,
    "pmcid": None, "journal": None, "venues": [], "sources": ["arxiv"], "cites": [], "followed": [], "venue": "arXiv", "score": 3.0,
    "reasons": ['all: "reinforcement learning"', "category cs.LG"], "profile": "llm-rl",
    "tldr": "We study RL.",
}]

SLACK = {
    "text": "LLM-RL — 2025-04-12: 1 new paper",
    "blocks": [
        {"type": "header", "text": {"type": "plain_text", "text": "LLM-RL — 2025-04-12", "emoji": False}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "1 new paper · 1 updated · digest daily"}]},
        {"type": "section", "block_id": "paper:2504.07600", "text": {"type": "mrkdwn", "text": (
            "*<https://arxiv.org/abs/2504.07600|Ratio: RL for LLMs>*\n"
            "Ada Lovelace, Alan Turing\n"
            "submitted 2025-04-10 · cs.LG, cs.CL · :arrow_up_small: 17\n"
            '_Why:_ all: "reinforcement learning"; category cs.LG\n'
            "*TL;DR:* We study RL.\n"
            "<https://arxiv.org/pdf/2504.07600|PDF>")}},
        {"type": "section", "text": {"type": "mrkdwn", "text": (
            "*Updated* (new versions of papers you have already seen)\n"
            "• <https://arxiv.org/abs/2504.07601|Old paper, new version> (v3)")}},
    ],
}

# The HTML e-mail: what a reader sees, in order (styles may change, the content may not),
# and where each link goes.
HTML_TEXT = ["LLM-RL — 2025-04-12",  # <title>
             "1 new paper: Ratio: RL for LLMs",  # the inbox preview line (hidden)
             "LLM-RL", "2025-04-12 · 1 new paper · 1 updated",  # the header
             "Ratio: RL for LLMs", "Ada Lovelace, Alan Turing", "submitted 2025-04-10 · cs.LG, cs.CL · ▲ 17 upvotes",
             "Why:", 'all: "reinforcement learning"; category cs.LG', "We study RL.", "PDF",  # the title links to the abstract page
             "Updated", "New versions of papers you have already seen.", "Old paper, new version", "(v3)",
             "Sent by watcher · digest daily"]
HTML_LINKS = [("https://arxiv.org/abs/2504.07600", "Ratio: RL for LLMs"),
              ("https://arxiv.org/pdf/2504.07600", "PDF"), ("https://arxiv.org/abs/2504.07601", "Old paper, new version")]


class _Visible(HTMLParser):
    """The text a reader sees (inside <body> and the <title>), and each link with its text."""

    def __init__(self):
        super().__init__()
        self.texts: list[str] = []
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "script"):
            self._skip += 1
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self._skip -= 1
        if tag == "a":
            self._href = None

    def handle_data(self, data):
        text = " ".join(data.split())
        if text and not self._skip:
            self.texts.append(text)
            if self._href:
                self.links.append((self._href, text))


@pytest.mark.parametrize("fmt, expected", [("text", TEXT), ("markdown", MARKDOWN)])
def test_text_formats_by_hand(fmt, expected):
    assert render(small_digest(), fmt) == expected


def test_json_by_hand():
    assert json.loads(render(small_digest(), "json")) == JSON


def test_slack_by_hand():
    assert json.loads(render(small_digest(), "slack")) == SLACK


def test_html_by_hand():
    seen = _Visible()
    seen.feed(render(small_digest(), "html"))
    assert [t for t in seen.texts if t.strip()] == HTML_TEXT
    assert seen.links == HTML_LINKS
