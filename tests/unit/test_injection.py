"""Hostile paper fields through every output format and channel (docs/security-limits.md).

One digest carries, paper by paper: HTML and script in titles and abstracts, Slack control
sequences (``<!channel>``, ``<!here>``, ``<@U123>``, ``<https://x|y>``), CRLF and header lines
in titles and author names, Jinja syntax, right-to-left override characters, NUL and ESC bytes, a
10,000-character title and abstract, and 5,000 authors. ``test_render.py`` /
``test_email.py`` cover one combined injection title per format; this file adds the rest and
checks the limits on what actually goes out (the e-mail bytes, every Slack message after
splitting) and, end to end, ``watcher once`` on papers stored with these fields.
"""

from __future__ import annotations

import email
import email.policy
import json
import re
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone

import pytest
from deliverkit import HtmlCollector, HookServer, MailServer, sample_digest

from helpers import run_cli
from watcher.deliver import channel_config
from watcher.deliver import DeliveryContext, make_channel
from watcher.deliver.slack import MAX_BLOCKS, MAX_HEADER, MAX_SECTION, split_messages
from watcher.models import MAX_AUTHORS, Digest, Match, Paper
from watcher.present.render import TEMPLATE_NAMES, render
from watcher.store import Store

SLACK_CONTROLS = ("<!channel>", "<!here>", "<!everyone>", "<@U123>", "<#C123>", "<https://x|y>",
                  "<https://evil.example|click>")
RLO, LRI, PDF = "\u202e", "\u2066", "\u202c"

ATTACKS = [
    # (title, abstract, authors)
    ("<script>alert(1)</script><img src=x onerror=alert(2)> reinforcement learning",
     "<iframe src=javascript:alert(3)></iframe><a href=\"javascript:alert(4)\">x</a> & more",
     ["<b onmouseover=alert(5)>Mallory</b>"]),
    ("Slack <!channel> <!here> <!everyone> @channel @here <@U123> <#C123> <https://x|y>",
     "Click <https://evil.example|click> or <!subteam^S123> *bold* _it_ ~strike~ `code` > quote",
     ["<@U999>", "Eve <!here>"]),
    ("Header\r\nBcc: victim@evil.example\r\nSubject: pwned\r\n\r\nbody",
     "Line one\r\nTo: x@evil.example\nFrom: y@evil.example\r\n.\r\nafter a lone dot",
     ["Eve\r\nBcc: x@evil.example", "Trudy\nX-Injected: 1"]),
    ("Jinja {{ 7*7 }} {% if true %}JINJA-RAN{% endif %} {{ ''.__class__.__mro__ }}",
     "{{ config }} {%- raw %}{{ x }}{% endraw %} {# comment #} ${7*7} #{7*7}",
     ["{{ 6*6 }}"]),
    (f"Safe {RLO}txt.exe{PDF} and {LRI}isolate title",
     f"abstract with {RLO}override{PDF} inside", [f"{RLO}Reversed Name"]),
    ("NUL\x00 and ESC\x1b[31m red \x07 bell title", "abstract\x00with\x00nuls\x1b[0m", ["Nul\x00l Author"]),
    ("T" * 10_000, "A" * 10_000, ["Long Author"]),
    ("A paper with five thousand authors", "reinforcement learning at scale",
     [f"Author{i} <@U{i}>" for i in range(5_000)]),
]


def hostile_papers() -> list[Paper]:
    base = sample_digest(len(ATTACKS), updated=0).matches
    return [replace(m.paper, title=t, abstract=a, authors=au, arxiv_id=f"2504.{7700 + i:05d}")
            for i, (m, (t, a, au)) in enumerate(zip(base, ATTACKS))]


def hostile_digest() -> Digest:
    matches = [Match(p, 2.0 - i / 10, ["<@U42> reason <!channel>", "ti: \"x\""], "llm-rl")
               for i, p in enumerate(hostile_papers())]
    return Digest("daily", "LLM-RL <!channel>", date(2025, 4, 12), matches,
                  updated=[Match(replace(matches[0].paper, version=3), 1.0, [], "llm-rl")])


TEMPLATE_TAGS = {"html", "head", "meta", "title", "body", "div", "table", "tr", "td", "a", "b", "span"}


def assert_common(out: str) -> None:
    """What no format may contain, whatever its markup."""
    # Jinja in a field stays text: JINJA-RAN only ever inside its own {% if %} … {% endif %}
    assert out.count("JINJA-RAN") == out.count("%}JINJA-RAN{%"), "a field was run as a template"
    assert re.search(r"\{\{ 7\\?\*7 \}\}", out), "{{ 7*7 }} is not shown as typed"
    assert "\x00" not in out and "\x1b" not in out and "\x07" not in out
    assert RLO not in out and LRI not in out and PDF not in out
    assert not re.search(r"^(Bcc|To|From|Subject|X-Injected):", out, re.M | re.I)


@pytest.mark.parametrize("fmt", list(TEMPLATE_NAMES))
def test_every_format_keeps_hostile_fields_inert(fmt):
    digest = hostile_digest()
    out = render(digest, fmt)
    assert_common(out)
    if fmt == "html":
        parser = HtmlCollector()
        parser.feed(out)
        assert set(parser.tags) <= TEMPLATE_TAGS, set(parser.tags) - TEMPLATE_TAGS
        assert parser.tags.count("b") == len(digest.matches)  # only each paper's "Why:"
        for name, value in parser.attrs:
            assert not name.startswith("on"), name
            assert not (value or "").lower().lstrip().startswith(("javascript", "data:")), value
        assert "<script>alert(1)</script>" in "".join(parser.text)  # shown as text
    elif fmt == "slack":
        payload = json.loads(out)
        header = payload["blocks"][0]
        assert header["type"] == "header" and header["text"]["type"] == "plain_text"  # never parsed
        wire = json.dumps(payload["blocks"][1:] + [payload["text"]], ensure_ascii=False)
        for control in SLACK_CONTROLS:
            assert control not in wire, control
        assert not re.search(r"(?<![\w&])@(channel|here|everyone)\b", wire)
    elif fmt == "markdown":
        assert "<script" not in out and "<img" not in out and "<iframe" not in out
        assert not re.search(r"(?<!\\)\]\((?!https?://)", out)  # no link to anything but http(s)
    elif fmt == "json":
        papers = json.loads(out)
        assert [p["title"] for p in papers] == [p.title for p in digest.papers]
        assert len(papers[-1]["authors"]) == MAX_AUTHORS < 5_000  # data kept as data, to a paper's bound
    elif fmt == "text":
        # the seed format: one title line, one Authors: line, one Date: line, one abstract line
        body = out.split("\n\n", 1)[1]
        blocks = body.split("\n\n")
        assert len(blocks) == 3 * len(digest.matches)
        for i in range(0, len(blocks), 3):
            assert "\n" not in blocks[i] and "\n" not in blocks[i + 2]
            assert blocks[i + 1].startswith("Authors:") and "\nDate:" in blocks[i + 1]


@pytest.mark.parametrize("fmt", ["html", "markdown", "slack"])
def test_a_hostile_tldr_from_a_model_stays_inert(fmt):
    """A model's TL;DR is untrusted text too: each paper's is its own hostile title."""
    digest = hostile_digest()
    for m in digest.matches:
        m.tldr = m.paper.title
    out = render(digest, fmt)
    assert_common(out)
    if fmt == "html":
        parser = HtmlCollector()
        parser.feed(out)
        assert set(parser.tags) <= TEMPLATE_TAGS, set(parser.tags) - TEMPLATE_TAGS
        assert not any(name.startswith("on") for name, _ in parser.attrs)
    elif fmt == "slack":
        wire = json.dumps(json.loads(out)["blocks"][1:], ensure_ascii=False)
        assert not any(control in wire for control in SLACK_CONTROLS)
    else:
        assert "<script" not in out and "<img" not in out


def test_slack_messages_stay_within_limits_and_keep_links_whole():
    digest = hostile_digest()
    digest.matches *= 8  # 64 papers: several messages
    messages = split_messages(json.loads(render(digest, "slack")))
    assert len(messages) >= 2
    for message in messages:
        assert len(message["blocks"]) <= MAX_BLOCKS
        assert len(json.dumps(message["blocks"], ensure_ascii=False)) <= 40_000
        for block in message["blocks"]:
            if block["type"] == "header":
                assert len(block["text"]["text"]) <= MAX_HEADER
            if block["type"] == "section":
                section = block["text"]["text"]
                assert len(section) <= MAX_SECTION
                assert section.count("<") == section.count(">"), "a link was cut in two"
    # each paper is one section: a 10,000-character title is shortened, not split
    first = json.loads(render(hostile_digest(), "slack"))["blocks"]
    sections = [b for b in first if b["type"] == "section"]
    assert len(sections) == len(ATTACKS) + 1  # papers, then "Updated"
    assert all(len(s["text"]["text"]) <= MAX_SECTION for s in sections)


def test_email_of_hostile_digest_is_small_has_a_text_part_and_only_its_own_headers():
    digest = hostile_digest()
    cfg = channel_config(name="me", type="email", host="127.0.0.1", port=25, security="none",
                        sender="watcher <bot@example.org>", to=("me@example.org",), timeout=5.0)
    channel = make_channel(cfg, DeliveryContext(formats=("text",)))
    data = channel.fit(digest, {f: render(digest, f) for f in ("text", "html")})
    assert len(data) < 100_000
    msg = email.message_from_bytes(data, policy=email.policy.default)
    assert sorted(msg.keys()) == sorted(["Subject", "From", "To", "Date", "Message-ID", "Auto-Submitted",
                                         "X-Mailer", "List-Id", "List-Unsubscribe", "Content-Type",
                                         "MIME-Version"])
    assert re.fullmatch(r"watcher digest [A-Za-z0-9-]+ <[A-Za-z0-9.-]+>", msg["List-Id"]), msg["List-Id"]
    assert "\n" not in str(msg["Subject"]) and [a.addr_spec for a in msg["To"].addresses] == ["me@example.org"]
    text_part, html_part = msg.get_payload()
    assert text_part.get_content_type() == "text/plain" and html_part.get_content_type() == "text/html"
    for part in (text_part, html_part):
        assert set(part.keys()) <= {"Content-Transfer-Encoding", "Content-Type", "MIME-Version"}
        assert_common(part.get_content())
    assert max(len(line) for line in data.split(b"\r\n")) <= 998


# --- end to end: papers stored with hostile fields, delivered by `watcher once` --------------

E2E_CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[profile.llm-rl]
title = "LLM-RL"
query = 'paper OR reinforcement OR Slack OR Header OR Jinja OR Safe OR NUL OR TTTT*'
max_papers = 40

[digest.daily]
profiles = ["llm-rl"]
schedule = "30 21 * * *"
formats = ["text", "html", "markdown", "json"]
channels = ["me", "lab", "archive"]

[channel.me]
type = "email"
host = "127.0.0.1"
port = {port}
security = "none"
from = "watcher <watcher@example.org>"
to = ["me@example.org"]
timeout = 5

[channel.lab]
type = "slack"
webhook_url_env = "TEST_INJECTION_SLACK"
timeout = 5

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"
"""


def test_watcher_once_delivers_hostile_papers_inertly_everywhere(tmp_path):
    now = datetime.now(timezone.utc)
    papers = [replace(p, announced=now.date(), published=now - timedelta(hours=1)) for p in hostile_papers()]
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert(papers, now - timedelta(minutes=1))
    with MailServer() as smtp, HookServer() as hook:
        config = tmp_path / "config.toml"
        config.write_text(E2E_CONFIG.replace("{port}", str(smtp.port)).replace("{{", "{").replace("}}", "}"))
        r = run_cli("--config", str(config), "once", cwd=tmp_path, env={"TEST_INJECTION_SLACK": hook.url})
        assert r.returncode == 0, r.stderr
        assert b"Traceback" not in r.stderr
        assert len(smtp.received) == 1 and smtp.received[0].rcpt_tos == ["me@example.org"]
        raw = smtp.received[0].data
        assert len(raw) < 100_000
        msg = smtp.received[0].message
        assert msg["Bcc"] is None and msg["X-Injected"] is None and msg["To"].addresses[0].addr_spec == "me@example.org"
        assert msg.get_payload()[0].get_content_type() == "text/plain"
        wire = json.dumps(hook.payloads, ensure_ascii=False)
        for control in SLACK_CONTROLS:
            assert control not in wire
        for message in hook.payloads:
            assert len(message["blocks"]) <= MAX_BLOCKS
            assert all(len(b["text"]["text"]) <= MAX_SECTION for b in message["blocks"] if b["type"] == "section")
        files = {p.suffix: p.read_text(encoding="utf-8") for p in (tmp_path / "digests").iterdir()}
        assert set(files) == {".txt", ".html", ".md", ".json"}
        for body in files.values():
            assert_common(body)
        assert len(json.loads(files[".json"])) == len(ATTACKS)
