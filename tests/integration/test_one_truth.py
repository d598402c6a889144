"""One truth (docs/web.md): every page that shows what was delivered reads what the pipeline recorded
per message. A digest goes out through one channel; the reader rates a few papers; a second
channel is added and gets its first message, different from the first one. Each message's
"View in browser" link opens a page listing exactly that message's papers in its order, and the
profile page says why fewer papers match now than were delivered.

Run as a user runs it: `watcher once --sample` and `watcher rate` as subprocesses, the pages
through the ASGI app over the same database."""

from __future__ import annotations

import re
import shutil
import warnings
from urllib.parse import urlsplit

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from conftest import REPO
from helpers import run_cli
from test_web_reach import card_titles, mailed
from webkit import app_for, text

from watcher.config import load_config
from watcher.store import Store

BASE = "http://inbox.example.org"
ENV = {"TRUTH_SECRET": "a secret for the links of this test"}
SECOND = """
[channel.second]
type = "file"
path = "second/{digest}-{date}.{ext}"
"""


@pytest.fixture(scope="module")
def two_channels(tmp_path_factory):
    """(config, database, {channel: the HTML file it wrote}) after: one delivery through
    ``archive``; three dislikes and a like; ``second`` added and delivered to."""
    folder = tmp_path_factory.mktemp("truth")
    config = (REPO / "config.toml").read_text()
    config = config.replace("[watcher]\n", f'[web]\nbase_url = "{BASE}"\nsecret_env = "TRUTH_SECRET"\n\n[watcher]\n', 1)
    (folder / "config.toml").write_text(config)
    r = run_cli("once", "--sample", cwd=folder, env=ENV)
    assert r.returncode == 0, r.stderr
    (first,) = (folder / "digests").glob("*.html")
    db = folder / "watcher-sample.db"
    with Store.open(db) as store:
        sent = [m.paper.key for m in store.issue("daily", "2025-04-12").messages[0].matches]
    for key in sent[:3]:
        r = run_cli("rate", "down", key, "--profile", "llm-rl", "--sample", cwd=folder)
        assert r.returncode == 0, r.stderr
    r = run_cli("rate", "up", sent[5], "--profile", "llm-rl", "--sample", cwd=folder)
    assert r.returncode == 0, r.stderr
    config = config.replace('channels = ["archive"]', 'channels = ["archive", "second"]') + SECOND
    (folder / "config.toml").write_text(config)
    r = run_cli("once", "--sample", cwd=folder, env=ENV)
    assert r.returncode == 0, r.stderr
    (second,) = (folder / "second").glob("*.html")
    return load_config(folder / "config.toml"), db, {"archive": first, "second": second}


def test_each_messages_view_in_browser_page_lists_exactly_its_papers_in_its_order(two_channels):
    config, db, files = two_channels
    shown = {}
    with TestClient(app_for(config, db)) as c:
        for channel, path in files.items():
            link, titles, _ = mailed(path.read_text())
            assert link == f"{BASE}/digests/daily/2025-04-12/{channel}"
            page = c.get(urlsplit(link).path)
            assert page.status_code == 200
            assert card_titles(page.text) == titles, channel
            shown[channel] = titles
        # the two messages differ (the ratings came between them), so the test tells them apart
        assert shown["archive"] != shown["second"]
        assert set(shown["archive"]) & set(shown["second"])
        # the issue's page shows both messages, each as it was sent, and says so
        issue = c.get("/digests/daily/2025-04-12")
        assert "2 messages" in text(issue)
        assert card_titles(issue.text) == shown["archive"] + shown["second"]
        # the archive names each message with its own count
        assert (f"archive : {len(shown['archive'])} papers, second : {len(shown['second'])} papers"
                in text(c.get("/digests")))


def test_the_profile_page_says_why_fewer_match_now_than_were_delivered(two_channels):
    config, db, files = two_channels
    with TestClient(app_for(config, db)) as c:
        page = text(c.get("/profiles/llm-rl"))
        data = c.get("/profiles/llm-rl.json").json()
    disliked = {r["key"] for r in data["ratings"] if r["value"] == "down"}
    assert len(disliked) == 3 and all(r["id"] and r["title"] for r in data["ratings"])
    gone = {p["key"] for p in data["delivered_not_selected_now"]}
    assert disliked <= gone and all(p["id"] and p["title"] for p in data["delivered_not_selected_now"])
    assert data["match_now"]["total"] == (data["delivered"]["total"] - len(gone)
                                          + data["selected_now_not_delivered"])
    m = re.search(r"(\d+) papers? filed from \S+ to \S+ match(?:es)? the profile now and (\d+) (?:was|were) delivered", page)
    now, delivered = int(m.group(1)), int(m.group(2))
    gone = re.search(r"(\d+) of the delivered papers would not be selected now", page)
    assert gone, page  # the three dislikes
    assert int(gone.group(1)) >= 3
    missing = re.search(r"(\d+) of the papers that match now (?:was|were) not delivered", page)
    assert now == delivered - int(gone.group(1)) + (int(missing.group(1)) if missing else 0)


def test_a_database_of_the_old_schema_keeps_its_deliveries_readable(two_channels, tmp_path):
    """Deliveries recorded before messages were (issue_papers only) become messages of their
    channel on migration, with their papers in order."""
    import sqlite3

    config, db, files = two_channels
    old = tmp_path / "old.db"
    shutil.copy(db, old)
    conn = sqlite3.connect(old)
    with conn:  # what the store recorded before messages were: the issue's papers, each once
        conn.execute("DELETE FROM issue_papers")
        conn.execute("""INSERT OR IGNORE INTO issue_papers (digest, day, paper, position, kind, version,
                                                            score, profile, reasons)
                        SELECT m.digest, m.day, mp.paper, row_number() OVER (ORDER BY m.id, mp.position),
                               mp.kind, mp.version, mp.score, mp.profile, mp.reasons
                        FROM message_papers mp JOIN messages m ON m.id = mp.message""")
        # from before m008, so from before m012 too (which adds a column to message_papers)
        conn.execute("DELETE FROM _sqlite_migrations WHERE name IN ('m008_messages', 'm012_papers_as_sent')")
        conn.execute("DROP TABLE message_papers")
        conn.execute("DROP TABLE messages")
    conn.close()
    with Store.open(old) as store:
        issue = store.issue("daily", "2025-04-12")
        got = {m.channel: [p.paper.key for p in m.matches] for m in issue.messages}
    with Store.open(db) as store:
        recorded = {m.channel: [p.paper.key for p in m.matches]
                    for m in store.issue("daily", "2025-04-12").messages}
    assert got["archive"] == recorded["archive"]  # the first channel: exactly its message
    assert sorted(got["second"]) == sorted(recorded["second"])  # the later one: its papers


LATER = """
[watcher]
database = "later.db"
timezone = "UTC"

[web]
base_url = "http://inbox.example.org"
secret_env = "TRUTH_SECRET"

[source.feed]
type = "listing"
path = "papers.jsonl"

[profile.rl]
title = "RL"
query = "GRPO"

[digest.daily]
profiles = ["rl"]
schedule = "0 9 * * *"
channels = ["archive"]
formats = ["html"]
lookback = "2d"

[channel.archive]
type = "file"
path = "out/{digest}-{date}.{ext}"
"""


def test_a_channels_second_message_of_a_day_has_its_own_page(tmp_path, monkeypatch):
    """Two runs on one day send two messages through one channel: the second links to
    ``…/archive/2``, and each page lists only its own message's papers."""
    import json
    from datetime import datetime, timezone

    from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once

    monkeypatch.setenv("TRUTH_SECRET", ENV["TRUTH_SECRET"])

    def listing(n: int) -> None:
        (tmp_path / "papers.jsonl").write_text("".join(json.dumps({
            "arxiv_id": f"2601.{10000 + i:05d}", "version": 1, "title": f"GRPO study number {i}",
            "abstract": "We train with GRPO.", "authors": ["A. Author"], "announced": "2026-01-05",
            "categories": ["cs.LG"]}) + "\n" for i in range(n)))

    (tmp_path / "config.toml").write_text(LATER)
    config = load_config(tmp_path / "config.toml")
    sent, seen = [], set()  # the file each run wrote (a second one that day gets "-2")
    for n, hour in ((2, 9), (5, 15)):
        listing(n)
        report = run_once(config, Cycle(now=datetime(2026, 1, 5, hour, tzinfo=timezone.utc)), Fetch(), Deliver())
        assert report.ok
        (new,) = set((tmp_path / "out").glob("*.html")) - seen
        seen.add(new)
        sent.append(new.read_text())
    with TestClient(app_for(config, config.settings.database)) as c:
        for html, number, count in zip(sent, (1, 2), (2, 3)):
            link, titles, _ = mailed(html)
            assert link == f"{BASE}/digests/daily/2026-01-05/archive" + ("/2" if number > 1 else "")
            assert len(titles) == count and card_titles(c.get(urlsplit(link).path).text) == titles
        both = c.get("/digests/daily/2026-01-05.json").json()["messages"]
        assert [(m["number"], len(m["papers"])) for m in both] == [(1, 2), (2, 3)]
