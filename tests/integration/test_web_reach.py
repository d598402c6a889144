"""The web inbox meets the digests' reach (docs/web.md): the TL;DR on every page that lists papers,
``/feeds/{digest}.atom`` read with feedparser, and the "view in browser" link of a delivered
e-mail resolving to that issue's page with the same papers and the same TL;DRs.

One ``watcher once --sample`` (a subprocess, as a user runs it) delivers to a real SMTP server
(aiosmtpd) and a feed channel, in a time zone far behind UTC (the sample's "today" ends at
23:59 there, on the next day in UTC), with ``base_url`` under a path prefix; the pages are driven
through the ASGI app.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import replace
from datetime import datetime, timezone
from html import unescape
from urllib.parse import urlsplit

import feedparser
import pytest

with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its test client; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from deliverkit import HookServer, MailServer
from helpers import run_cli_text
from test_injection import hostile_digest
from webkit import app_for, markup_problems

from watcher.config import load_config
from watcher.deliver import DeliveryContext, make_channel
from watcher.services.ratings import apply_rating
from watcher.store import Store
from watcher.present.tldr import extractive_tldr
from watcher.web.feeds import feed_key

BASE = "https://papers.example.org/watcher"
CONFIG = """
[watcher]
database = "watcher.db"
timezone = "Pacific/Pago_Pago"

[web]
base_url = "{base}"
secret_env = "TEST_REACH_SECRET"

[profile.llm-rl]
title = "LLM-RL"
query = '"reinforcement learning" OR RLHF OR GRPO'
max_papers = 40

[profile.other]
query = "diffusion"

[profile.none]
query = "xyzzyplugh"

[digest.daily]
profiles = ["llm-rl"]
schedule = "30 21 * * sun-thu"
formats = ["html", "text"]
channels = ["me", "lab", "feed"]
lookback = "3d"

[digest.nofeed]
profiles = ["other"]
schedule = "30 21 * * sun-thu"
formats = ["text"]
channels = ["files"]
lookback = "3d"

[digest.later]
profiles = ["none"]
schedule = "30 21 * * sun-thu"
formats = ["text"]
channels = ["feed2"]
lookback = "3d"
send_empty = false

[channel.me]
type = "email"
host = "127.0.0.1"
port = {port}
security = "none"
from = "watcher <watcher@example.org>"
to = ["me@example.org"]
timeout = 5
max_bytes = 80000  # below what the 38 papers take in full: the size limit lists some as titles only

[channel.lab]
type = "slack"
webhook_url_env = "TEST_REACH_SLACK"
timeout = 5

[channel.feed]
type = "feed"
path = "feeds/{{digest}}.atom"

[channel.feed2]
type = "feed"
path = "never/{{digest}}.atom"

[channel.files]
type = "file"
path = "out/{{digest}}-{{date}}.{{ext}}"
"""
ENV = {"TEST_REACH_SECRET": "a-test-secret-of-some-length"}


@pytest.fixture(scope="module")
def delivered(tmp_path_factory):
    """(config, sample database, the delivered e-mail's HTML, the Slack payloads) after one
    `watcher once --sample`."""
    folder = tmp_path_factory.mktemp("reach")
    with MailServer() as smtp, HookServer() as hook:
        path = folder / "config.toml"
        path.write_text(CONFIG.replace("{port}", str(smtp.port)).replace("{base}", BASE)
                        .replace("{{", "{").replace("}}", "}"))
        r = run_cli_text("--config", str(path), "once", "--sample", cwd=folder,
                         env=dict(ENV, TEST_REACH_SLACK=hook.url))
        assert r.returncode == 0, r.stderr
        assert len(smtp.received) == 1
        html = smtp.received[0].message.get_payload()[1].get_content()
        slack = hook.payloads
    # the 'later' digest had no paper to send: its feed file was never written
    assert not (folder / "never").exists()
    return load_config(path), folder / "watcher-sample.db", html, slack


@pytest.fixture
def client(delivered):
    config, db, *_ = delivered
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        yield c


def card_keys(html: str) -> list[str]:
    return re.findall(r'<article class="paper[^"]*" id="p-([^"]+)"', html)


def card_titles(html: str) -> list[str]:
    return [unescape(t) for t in re.findall(r'<article class="paper[^"]*"[^>]*>\s*<h3><a [^>]*>(.*?)</a></h3>', html)]


def card_tldrs(html: str) -> list[str]:
    return [unescape(t) for t in re.findall(r'<p class="tldr"><strong>TL;DR:</strong> (.*?)</p>', html)]


def mailed(html: str) -> tuple[str, list[str], list[str]]:
    """The e-mail's "View in browser" link, its papers' titles (in order, with those the size
    limit left as titles only) and the TL;DRs of those shown in full."""
    link = unescape(re.search(r'<a href="([^"]+)"[^>]*>View in browser</a>', html).group(1))
    ids = [unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(
        r'<div style="font-size:17px;line-height:23px;font-weight:bold;color:#111827;">(.*?)</div>', html, re.S)]
    ids += [unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(
        r'<div style="font-size:14px;line-height:20px;padding:4px 0;">(.*?)</div>', html)]
    tldrs = [unescape(t) for t in re.findall(
        r'<div style="font-size:15px;line-height:22px;color:#111827;padding-top:10px;">(.*?)</div>', html, re.S)]
    return link, ids, tldrs


# --- view in browser --------------------------------------------------------------------------

def test_the_mails_view_in_browser_link_opens_that_issue_with_the_same_papers(delivered, client):
    config, db, html, slack = delivered
    link, ids, tldrs = mailed(html)
    assert len(ids) > 30 and 20 < len(tldrs) < len(ids)
    # the issue is dated in the configured time zone (UTC-11): the sample's last day, although
    # the delivery happened on the next day in UTC
    with Store.open(db) as store:
        (issue,) = store.issues("daily")
    assert issue.day == "2025-04-12" and issue.first_delivered.date().isoformat() == "2025-04-13"
    assert link == f"{BASE}/digests/daily/2025-04-12/me"  # exactly this message: the e-mail channel's
    parts = urlsplit(link)
    assert parts.path.startswith(urlsplit(BASE).path + "/")  # the proxy strips the prefix
    page = client.get(parts.path[len(urlsplit(BASE).path):])
    assert page.status_code == 200
    assert card_titles(page.text) == ids
    assert card_tldrs(page.text)[:len(tldrs)] == tldrs  # the same TL;DRs as the e-mail
    # and the links on that page keep the prefix, so they work behind the proxy too
    assert 'href="/watcher/papers/' in page.text
    # the size limit's cut is said: the papers listed as titles only
    assert f"{len(ids) - len(tldrs)} of them listed as titles only (size limit)" in unescape(page.text)
    # Slack's message links to its own message, which showed every paper in full
    texts = [e["text"] for p in slack for b in p["blocks"] if b["type"] == "context"
             for e in b["elements"]]
    assert any(f"<{BASE}/digests/daily/2025-04-12/lab|View in browser>" in t for t in texts)
    lab = client.get("/digests/daily/2025-04-12/lab")
    assert card_titles(lab.text) == ids and "titles only" not in lab.text


# --- TL;DR on the pages -----------------------------------------------------------------------

def test_every_list_of_papers_shows_the_tldr_and_a_shortened_abstract(delivered, client):
    config, db, *_ = delivered
    with Store.open(db) as store:
        (issue_row,) = store.issues("daily")
        papers = {m.paper.key: m.paper for m in store.issue("daily", issue_row.day).messages[0].matches}
    for path in ["/?view=full", "/digests/daily/2025-04-12?view=full", "/search?q=GRPO"]:
        r = client.get(path)
        assert r.status_code == 200, path
        keys, shown = card_keys(r.text), card_tldrs(r.text)
        assert keys and len(shown) == len(keys), path
        for key, tldr in zip(keys, shown):
            p = papers.get(key)
            if p is not None:
                assert tldr == extractive_tldr(p.abstract), (path, key)
        abstracts = [unescape(a) for a in re.findall(r'<p class="abstract">(.*?)</p>', r.text)]
        assert abstracts and max(len(a) for a in abstracts) <= 241, path  # shortened, with "…"
    for path in ["/", "/digests/daily/2025-04-12"]:  # the compact view: the whole abstract on demand
        r = client.get(path)
        keys, shown = card_keys(r.text), card_tldrs(r.text)
        assert keys and len(shown) == len(keys), path
        for key, tldr in zip(keys, shown):
            if key in papers:
                assert tldr == extractive_tldr(papers[key].abstract), (path, key)
        on_demand = [unescape(a) for a in re.findall(
            r'<details class="abstract"><summary>Abstract</summary>(?:(?!</details>).)*?<p>(.*?)</p>\s*</details>',
            r.text, re.S)]
        assert set(on_demand) >= {p.abstract for p in papers.values() if p.abstract}, path  # "/": all digests
    key = next(iter(papers))
    r = client.get(f"/papers/{key}")
    assert card_tldrs(r.text) == [extractive_tldr(papers[key].abstract)]
    full = unescape(re.search(r'<p class="abstract full">(.*?)</p>', r.text, re.S).group(1))
    assert full == papers[key].abstract  # the whole abstract on the paper's own page


def test_a_cached_model_tldr_is_shown_instead_of_the_extractive_one(tmp_path, delivered):
    config, db, *_ = delivered
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    with Store.open(copy) as store:
        (issue_row,) = store.issues("daily")
        first = store.issue("daily", issue_row.day).messages[0].matches[0].paper
        store.tldr_remember([(first.key, "A model says <script>alert(1)</script> in one line.")],
                            "test-model", datetime(2025, 4, 12, tzinfo=timezone.utc))
        apply_rating(store, "save", None, first.key, "cli", profiles=config.profiles)
    with TestClient(app_for(config, copy)) as c:
        for path in [f"/papers/{first.key}", "/saved"]:  # the reading list too, not its extractive one
            r = c.get(path)
            assert card_tldrs(r.text)[0] == "A model says <script>alert(1)</script> in one line.", path
            assert "<script>" not in r.text and not markup_problems(r.text), path
        for path in ["/", "/digests/daily/2025-04-12"]:  # the messages show the TL;DR they were sent with
            r = c.get(path)
            assert card_tldrs(r.text)[0] == extractive_tldr(first.abstract), path
        # the profile's query preview lists it too
        r = c.get("/profiles/llm-rl", params={"preview": first.title, "days": "30"})
        assert "A model says <script>alert(1)</script> in one line." in card_tldrs(r.text)
        assert "<script>" not in r.text and not markup_problems(r.text)


# --- the feed ---------------------------------------------------------------------------------

def test_the_feed_is_served_as_atom_and_read_by_feedparser(delivered, client):
    config, db, html, slack = delivered
    _, ids, tldrs = mailed(html)
    r = client.get("/feeds/daily.atom")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/atom+xml; charset=utf-8"
    parsed = feedparser.parse(r.content)
    assert not parsed.bozo, parsed.bozo_exception
    assert parsed.version == "atom10" and parsed.feed.title == "LLM-RL"
    assert [e.title for e in parsed.entries] == ids
    assert [e.summary for e in parsed.entries][:len(tldrs)] == tldrs
    assert client.head("/feeds/daily.atom").status_code == 200


@pytest.mark.parametrize("path, why", [
    ("/feeds/weekly.atom", "no digest named 'weekly'"),      # unknown digest
    ("/feeds/nofeed.atom", "has no feed: add a channel"),    # no feed channel
    ("/feeds/later.atom", "has no feed yet"),                # a feed channel, no file yet
])
def test_no_feed_is_a_404_page(client, path, why):
    r = client.get(path)
    assert r.status_code == 404 and "text/html" in r.headers["content-type"]
    assert why in unescape(r.text)


def test_the_digest_pages_link_the_feed_only_when_it_exists(client):
    alternate = '<link rel="alternate" type="application/atom+xml"'
    for path in ["/", "/digests/daily/2025-04-12", "/digests?digest=daily"]:
        r = client.get(path)
        assert alternate in r.text and 'href="/watcher/feeds/daily.atom"' in r.text, path
        assert ">Atom feed</a>" in r.text, path
    for name in ["nofeed", "later"]:  # no feed channel; a feed channel that wrote nothing yet
        r = client.get(f"/digests?digest={name}")
        assert r.status_code == 200 and alternate not in r.text and "Atom feed" not in r.text, name


def test_with_a_password_the_feed_opens_with_its_private_link_only(delivered):
    config, db, *_ = delivered
    # the session cookie is Secure and bound to base_url's path: serve at the root here
    config = replace(config, web=replace(config.web, base_url="https://testserver"))
    app = app_for(config, db, password="pw", secret="feed-secret")
    with TestClient(app, base_url="https://testserver", follow_redirects=False) as c:
        assert c.get("/feeds/daily.atom").status_code == 403
        assert c.get("/feeds/daily.atom?key=" + "0" * 32).status_code == 403
        assert c.get("/feeds/daily.atom?key=" + feed_key("feed-secret", "nofeed")).status_code == 403
        assert c.get("/feeds/weekly.atom").status_code == 403  # says nothing about digests
        # the logged-in reader sees the private link on the digest's page ...
        c.post("/login", data={"password": "pw", "csrf": _csrf(c)})
        page = c.get("/digests/daily/2025-04-12").text
        link = unescape(re.search(r'<a class="feed" href="([^"]+)"', page).group(1))
        assert link == "/feeds/daily.atom?key=" + feed_key("feed-secret", "daily")
    with TestClient(app, follow_redirects=False) as reader:  # ... and a feed reader, no session
        r = reader.get(link)
        assert r.status_code == 200 and not feedparser.parse(r.content).bozo
    with TestClient(app_for(config, db, password="pw", secret="rotated")) as reader:
        assert reader.get(link, follow_redirects=False).status_code == 403


def _csrf(c) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', c.get("/login").text).group(1)


def test_hostile_papers_stay_text_in_the_served_feed(tmp_path, delivered):
    config, db, *_ = delivered
    digest = hostile_digest()
    channel = make_channel(config.channels["feed"], DeliveryContext(base_dir=tmp_path))
    channel.send(digest, {}, now=datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc))
    moved = replace(config, path=tmp_path / "config.toml")  # the feed path resolves beside it
    with TestClient(app_for(moved, db)) as c:
        r = c.get("/feeds/daily.atom")
    assert r.status_code == 200
    assert b"<script" not in r.content.replace(b"&lt;script", b"")
    parsed = feedparser.parse(r.content)
    assert not parsed.bozo, parsed.bozo_exception
    titles = [e.title for e in parsed.entries]
    assert len(titles) == len(digest.matches)
    marked_up = [m.paper.title for m in digest.matches if "<" in m.paper.title]
    assert marked_up and all(t in titles for t in marked_up)  # tags in a title: text, as typed
    for entry in parsed.entries:
        assert "<script" not in entry.content[0].value and "onerror" not in entry.content[0].value


def test_an_unreadable_feed_file_is_a_503_page_and_a_log_line(tmp_path, delivered, caplog):
    config, db, *_ = delivered
    (tmp_path / "feeds" / "daily.atom").mkdir(parents=True)  # not a file: reading it fails
    moved = replace(config, path=tmp_path / "config.toml")
    with TestClient(app_for(moved, db)) as c:
        r = c.get("/feeds/daily.atom")
        assert r.status_code == 503 and "cannot be read" in unescape(r.text)
        assert c.get("/healthz").status_code == 200  # the server keeps answering
    assert any("feed of daily" in rec.getMessage() for rec in caplog.records)
