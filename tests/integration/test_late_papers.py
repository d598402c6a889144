"""A late-announced paper arrives (issue: the ``arxiv`` source never fetched one): ``watcher
once`` against the local paged arXiv server delivers the papers, then a paper submitted days
before the newest one seen is announced, and the next ``once`` delivers it."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from arxivserver import PagedFeed
from helpers import run_cli
from helpers import data
from httpserver import server  # noqa: F401
from test_source_arxiv import ALL, PAGE, late_entry

CONFIG = """
[watcher]
database = "watcher.db"

[source.ax]
type = "arxiv"
query = "all:testing"
url = "{url}"
first_fetch = "3650d"
timeout = 5

[profile.p]
query = "testing OR moderation"
max_papers = 200

[digest.d]
profiles = ["p"]
every = "1d"
lookback = "3650d"
channels = ["archive"]

[channel.archive]
type = "file"
path = "out/{{digest}}-{{date}}.{{ext}}"
"""


def delivered(tmp_path) -> set[str]:
    with sqlite3.connect(tmp_path / "watcher.db") as conn:
        return {r[0] for r in conn.execute("SELECT paper FROM deliveries")}


def test_a_paper_announced_a_week_late_is_delivered_by_the_next_run(tmp_path, server):
    raw = data(PAGE)
    server.route("/api/query", PagedFeed(raw).reply)
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(url=server.url("/api/query")))
    first = run_cli("--config", str(config), "once", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = delivered(tmp_path)
    assert before and "2604.99999" not in before

    late = max(p.published for p in ALL) - timedelta(days=8)
    server.route("/api/query", PagedFeed(late_entry(raw, "2604.99999", late)).reply)
    second = run_cli("--config", str(config), "once", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert delivered(tmp_path) - before == {"2604.99999"}
    [newest] = [f.read_text() for f in (tmp_path / "out").iterdir() if f.stem.endswith("-2")]
    assert "A paper held in moderation" in newest and newest.count("\nAuthors:") == 1
