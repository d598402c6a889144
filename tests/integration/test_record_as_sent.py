"""The record as sent (docs/record.md): a message keeps each paper as it was sent. ``watcher once``
delivers version 1 of a paper from the local arXiv stand-in, the stand-in then lists version 2
under a new title and the next ``once`` stores it; the first message's "View in browser" page,
its JSON twin and the static site still show version 1's title with the TL;DR it carried, and
say the paper was updated since; ``watcher explain`` shows that delivery record beside the
score computed now. A message recorded before messages kept their papers shows the
paper as stored now, and says so."""

from __future__ import annotations

import json
import re
import sqlite3
import warnings
from pathlib import Path

from click.testing import CliRunner

from arxivserver import PagedFeed
from helpers import data
from httpserver import server  # noqa: F401
from test_late_papers import CONFIG as LATE_CONFIG
from webkit import app_for, text
from watcher.cli import cli
from watcher.config import load_config
from watcher.cli.site import build_site, file_for

with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its test client; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

PAGE = "arxivpy2026_q_testing_s0_m100_cfe7536492ca.xml"
KEY = "2604.03438"  # the newest paper of the listing: the next run asks for it again
V1_TITLE = "Android Instrumentation Testing in Continuous Integration: Practices, Patterns, and Performance"
V2_TITLE = "Bananas: a wholly revised title"

# the late-papers test's config (an arxiv source at the stand-in, digest d to a file channel),
# with a profile that selects the one paper
CONFIG = LATE_CONFIG.replace('query = "testing OR moderation"\nmax_papers = 200',
                             "query = 'ti:\"android instrumentation testing\"'")
assert CONFIG != LATE_CONFIG


def revised(raw: bytes) -> bytes:
    """The listing ``raw`` with paper KEY at version 2, retitled and updated a year later."""
    start = raw.index(f"<id>http://arxiv.org/abs/{KEY}v1</id>".encode())
    end = raw.index(b"</entry>", start)
    entry = raw[start:end].replace(f"{KEY}v1".encode(), f"{KEY}v2".encode())
    entry = re.sub(rb"<title>[^<]*</title>", f"<title>{V2_TITLE}</title>".encode(), entry)
    entry = re.sub(rb"<updated>[^<]+<", b"<updated>2026-05-01T10:00:00Z<", entry)
    return raw[:start] + entry + raw[end:]


def once(config: Path) -> None:
    result = CliRunner().invoke(cli, ["--config", str(config), "once"], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def first_delivery(tmp_path, server) -> Path:
    """``watcher once`` in ``tmp_path`` against the stand-in serving the listing: it delivers
    version 1 of KEY. Returns the config file (its database is watcher.db beside it)."""
    server.route("/api/query", PagedFeed(data(PAGE)).reply)
    config_file = tmp_path / "config.toml"
    config_file.write_text(CONFIG.format(url=server.url("/api/query")))
    once(config_file)
    return config_file


def test_a_message_shows_the_version_it_sent_and_says_the_paper_changed_since(tmp_path, server):
    config_file = first_delivery(tmp_path, server)
    db = tmp_path / "watcher.db"
    with sqlite3.connect(db) as conn:
        (day, tldr), = conn.execute("SELECT m.day, mp.tldr FROM message_papers mp JOIN messages m "
                                    "ON m.id = mp.message WHERE mp.paper = ?", [KEY]).fetchall()
    assert tldr  # the TL;DR the message carried

    server.route("/api/query", PagedFeed(revised(data(PAGE))).reply)
    once(config_file)
    with sqlite3.connect(db) as conn:  # the store holds version 2 now
        assert conn.execute("SELECT version, title FROM papers WHERE key = ?", [KEY]).fetchone() == (2, V2_TITLE)

    config = load_config(config_file)
    with TestClient(app_for(config, db), follow_redirects=False) as client:
        page = client.get(f"/digests/d/{day}/archive")  # the message's "View in browser"
        assert page.status_code == 200
        shown = text(page)
        assert V1_TITLE in shown and tldr in shown
        assert "Updated since this message: now version 2 (sent: version 1); now titled" in shown
        assert V2_TITLE in shown  # named in the note only
        assert shown.index(V1_TITLE) < shown.index("Updated since") < shown.index(V2_TITLE)

        twin = client.get(f"/digests/d/{day}/archive.json").json()
        (paper,) = [p for m in twin["messages"] for p in m["papers"] if p["key"] == KEY]
        assert paper["title"] == V1_TITLE and paper["version"] == 1 and paper["tldr"] == tldr
        assert paper["as_sent"] is True
        assert paper["updated_since"] == {"version": 2, "title": V2_TITLE}

        now = client.get(f"/papers/{KEY}")  # the paper's own page: as stored now
        assert V2_TITLE in text(now)

    with sqlite3.connect(db) as conn:
        score, reasons = conn.execute("SELECT score, reasons FROM message_papers WHERE paper = ? "
                                      "AND kind = 'new'", [KEY]).fetchone()
    said = CliRunner().invoke(cli, ["--config", str(config_file), "explain", KEY], catch_exceptions=False)
    assert said.exit_code == 0, said.output
    lines = said.output.splitlines()
    assert any(line.startswith("profile p: score ") and line.endswith("computed now with the profile and its "
                                                                       "ratings as they are") for line in lines)
    record = lines[lines.index("delivered (as recorded when sent):") + 1:]
    assert f"digest d of {day} via archive: version 1, profile p, score {score:.2f}" in record[0]
    assert record[1:1 + len(json.loads(reasons))] == [f"    - {r}" for r in json.loads(reasons)]

    site = tmp_path / "site"
    build_site(config, site, db)
    static = (site / file_for(f"/digests/d/{day}/archive", True)).read_text()
    static_text = " ".join(re.sub(r"<[^>]+>", " ", static).split())
    assert V1_TITLE in static_text and "Updated since this message" in static_text
    index = json.loads((site / "search-index.json").read_text())
    (entry,) = [e for e in index if e["title"] in (V1_TITLE, V2_TITLE)]
    assert entry["title"] == V2_TITLE  # the search finds papers as stored now


def test_a_message_recorded_before_snapshots_shows_the_paper_as_stored_now(tmp_path, server):
    config_file = first_delivery(tmp_path, server)
    db = tmp_path / "watcher.db"
    with sqlite3.connect(db) as conn:  # as a database migrated from before m012 holds it
        conn.execute("UPDATE message_papers SET paper_sent = NULL")
        (day,) = conn.execute("SELECT day FROM messages").fetchone()
    config = load_config(config_file)
    with TestClient(app_for(config, db), follow_redirects=False) as client:
        shown = text(client.get(f"/digests/d/{day}/archive"))
        assert V1_TITLE in shown and "Shown as stored now" in shown and "Updated since" not in shown
        twin = client.get(f"/digests/d/{day}/archive.json").json()
        (paper,) = twin["messages"][0]["papers"]
        assert paper["as_sent"] is False and paper["updated_since"] is None


def test_pages_and_the_site_index_show_the_tldr_the_message_carried(tmp_path):
    """The TL;DR a message recorded is the one the paper's page, the search and the static
    site's search index show: read from the record, not computed again (here it is a model's,
    which the extractive rule would never produce)."""
    from datetime import date, datetime, timezone

    from watcher.models import Digest, Match, Paper
    from watcher.store import Store

    recorded = "A model said this, and the message carried it."
    paper = Paper(title="Quokka policies for LLM agents", arxiv_id="2504.00001", version=1,
                  authors=["A. Quokka"], abstract="We propose quokka policies. They work well.",
                  published=datetime(2025, 4, 10, tzinfo=timezone.utc), categories=["cs.LG"])
    now = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)
    config_file = tmp_path / "config.toml"
    config_file.write_text(CONFIG.format(url="http://127.0.0.1:9/none"))
    db = tmp_path / "watcher.db"
    with Store.open(db) as store:
        store.upsert([paper], now)
        digest = Digest("d", "D", date(2025, 4, 12), [Match(paper, 2.0, ["quokka"], "p", recorded)])
        store.record_delivery("d", "archive", digest.papers, now, issue=digest)
    config = load_config(config_file)
    with TestClient(app_for(config, db), follow_redirects=False) as client:
        for path in ("/papers/2504.00001", "/search?q=quokka", "/"):
            assert recorded in text(client.get(path)), path
        assert client.get("/search.json?q=quokka").json()["papers"][0]["tldr"] == recorded
    site = tmp_path / "site"
    build_site(config, site, db)
    (entry,) = json.loads((site / "search-index.json").read_text())
    assert entry["tldr"] == recorded
