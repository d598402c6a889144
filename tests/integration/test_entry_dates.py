"""Every entry of a text digest carries a date (docs/formats.md): the first version's submission time
when a source gave it, else the day the paper was announced, 00:00:00 UTC."""

from __future__ import annotations

import gzip
import json
import sqlite3
from datetime import date, datetime, timezone

from conftest import DATA, SEED_HF_PAGE
from helpers import run_cli
from helpers import data
from httpserver import Reply, server  # noqa: F401
from test_formats_arxiv import RSS2

from watcher import formats
from watcher.formats import text
from watcher.models import Paper

HF_DAY = "2025-04-10"


def test_entry_date_is_the_submission_else_the_announcement_day():
    submitted = datetime(2025, 4, 10, 10, 5, 15, tzinfo=timezone.utc)
    both = Paper(title="A", published=submitted, announced=date(2025, 4, 11))
    listed = Paper(title="B", announced=date(2025, 4, 11))
    assert both.entry_date == submitted
    assert listed.entry_date == datetime(2025, 4, 11, tzinfo=timezone.utc)
    assert Paper(title="C").entry_date is None
    out = text.write("T", date(2025, 4, 12), [both, listed])
    assert "\nDate:2025-04-10 10:05:15\n" in out and "\nDate:2025-04-11 00:00:00\n" in out
    back = formats.read(out.encode(), "written").papers
    assert [p.published for p in back] == [submitted, datetime(2025, 4, 11, tzinfo=timezone.utc)]


def test_hf_page_entry_without_metadata_carries_the_page_day(tmp_path):
    r = run_cli("convert", str(SEED_HF_PAGE), "--date", "2025-04-17", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert b"\nDate:\n" not in r.stdout
    papers = {p.title: p for p in formats.read(r.stdout, "out").papers}
    resa = papers["Resa: Transparent Reasoning Models via SAEs"]  # no metadata lines on the page
    assert resa.published == datetime(2025, 4, 17, tzinfo=timezone.utc)
    prorl = papers["ProRL: Prolonged Reinforcement Learning Expands Reasoning Boundaries in Large Language Models"]
    assert prorl.published == datetime(2025, 5, 30, tzinfo=timezone.utc)  # its own date wins


CONFIG = """
[watcher]
database = "watcher.db"

[source.rss]
type = "arxiv-rss"
categories = ["cs.LG"]
url = "{rss}"

[source.hf]
type = "hf-daily"
url = "{hf}"
first_fetch = "1d"

[profile.all]
query = "NOT ti:zzzqqqzzz"
max_papers = 1000

[digest.all]
profiles = ["all"]
every = "1d"
channels = ["out"]

[channel.out]
type = "stdout"
"""


def test_papers_known_only_from_rss_or_hugging_face_are_dated_in_the_digest(server, tmp_path):
    """arXiv RSS gives no submission time (its announcement day is written); a Hugging Face
    paper carries its Hugging Face date (``publishedAt``), else its Daily Papers day."""
    items = json.loads(data(f"hf_daily_papers_{HF_DAY}.json"))
    del items[0]["paper"]["publishedAt"]  # an HF item with no date of the paper's own
    undated_title = " ".join(items[0]["paper"]["title"].split())
    server.route("/rss", Reply(body=data(RSS2)))
    server.route("/hf/daily_papers", lambda req: Reply(body=json.dumps(items).encode()))
    (tmp_path / "config.toml").write_text(CONFIG.format(rss=server.url("/rss"), hf=server.url("/hf")))
    assert run_cli("fetch", cwd=tmp_path).returncode == 0
    r = run_cli("digest", "all", "--since", "2000-01-01", "--dry-run", "--to", "text", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout.rstrip(b"\n")
    assert b"\nDate:\n" not in out
    papers = {p.title: p for p in formats.read(out, "digest").papers}
    rss_day = datetime(2026, 9, 24, tzinfo=timezone.utc)
    rss_titles = [p.title for p in formats.read(data(RSS2), "rss").papers
                  if p.announce_type != "replace"]  # a replacement of an unknown paper is no news
    assert len(papers) == len(rss_titles) + len(items) == 3 + 8
    assert all(papers[t].published == rss_day for t in rss_titles)
    hf_days = {r.query["date"] for r in server.hits("/hf/daily_papers")}
    undated = papers[undated_title].published
    assert undated.time() == datetime.min.time() and undated.date().isoformat() in hf_days
    dated = " ".join(items[1]["paper"]["title"].split())
    assert papers[dated].published == datetime.fromisoformat(items[1]["paper"]["publishedAt"].replace("Z", "+00:00"))
    shown = [p.published for p in formats.read(out, "digest").papers]
    assert shown == sorted(shown, reverse=True)  # newest first by the date each entry shows


LISTING_CONFIG = CONFIG.split("[source.rss]")[0] + """
[source.crawl]
type = "listing"
path = "crawl.jsonl"
""" + "[profile.all]" + CONFIG.split("[profile.all]")[1]


def test_paper_of_an_undated_listing_carries_the_day_it_was_filed(tmp_path):
    """A crawl of arXiv's daily listing in JSON Lines names no date at all: its papers are
    filed under the day watcher stored them, and their entries carry that day."""
    lines = gzip.decompress((DATA / "corpus-2025-04-09.jsonl.gz").read_bytes()).splitlines()[:3]
    (tmp_path / "crawl.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "config.toml").write_text(LISTING_CONFIG)
    r = run_cli("fetch", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_cli("digest", "all", "--since", "2000-01-01", "--dry-run", "--to", "text", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    papers = formats.read(r.stdout.rstrip(b"\n"), "digest").papers
    with sqlite3.connect(tmp_path / "watcher.db") as conn:
        days = {d for (d,) in conn.execute("SELECT day FROM papers")}
    assert len(papers) == 3 and len(days) == 1
    filed = datetime.combine(date.fromisoformat(days.pop()), datetime.min.time(), timezone.utc)
    assert [p.published for p in papers] == [filed] * 3
