"""The ``feed`` channel: Atom files read back with feedparser, as a feed reader would."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone

import feedparser
import pytest
from deliverkit import HtmlCollector, sample_digest
from test_injection import hostile_digest

from helpers import run_cli
from watcher.config import load_config
from watcher.deliver import channel_config
from watcher.deliver import DeliveryContext, make_channel
from watcher.deliver.feed import entry_id, read_feed
from watcher.errors import ConfigError, DeliveryError
from watcher.models import Paper
from watcher.present.tldr import tldr_of

NOW = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)


def feed_channel(tmp_path, path="feeds/{digest}.atom", max_entries=200):
    cfg = channel_config(name="feed", type="feed", path=path, max_entries=max_entries)
    return make_channel(cfg, DeliveryContext(base_dir=tmp_path))


def read(tmp_path, name="daily"):
    parsed = feedparser.parse((tmp_path / "feeds" / f"{name}.atom").read_bytes())
    assert not parsed.bozo, parsed.bozo_exception
    return parsed


def test_one_entry_per_paper_with_tldr_reasons_and_links(tmp_path):
    digest = sample_digest(4, updated=0)
    digest.matches[1].tldr = "A model's sentence."
    feed_channel(tmp_path).send(digest, {}, now=NOW)
    parsed = read(tmp_path)
    assert parsed.version == "atom10"
    assert parsed.feed.title == "LLM-RL" and parsed.feed.id == "urn:watcher:feed:daily"
    assert [e.id for e in parsed.entries] == [f"https://arxiv.org/abs/{p.arxiv_id}" for p in digest.papers]
    for entry, m in zip(parsed.entries, digest.matches):
        assert entry.title == m.paper.title
        assert entry.summary == tldr_of(m)
        assert entry.link == m.paper.abs_url
        assert "TL;DR:" in entry.content[0].value and "Why:" in entry.content[0].value
        assert m.reasons[0] in entry.content[0].value
        assert entry.published_parsed[:3] == m.paper.published.timetuple()[:3]
        assert [t.term for t in entry.tags] == m.paper.categories
        assert entry.authors[0].name == m.paper.authors[0]
    assert parsed.entries[1].summary == "A model's sentence."


def test_later_digests_merge_newest_first_without_repeats_and_keep_max_entries(tmp_path):
    first, second = sample_digest(3, updated=0), sample_digest(6, updated=0)
    second.matches = second.matches[3:]
    channel = feed_channel(tmp_path, max_entries=5)
    channel.send(first, {}, now=NOW)
    channel.send(second, {}, now=NOW.replace(day=13))
    ids = [e.id for e in read(tmp_path).entries]
    assert ids == [entry_id(p) for p in second.papers + first.papers[:2]]  # 3 new + the newest 2
    channel.send(second, {}, now=NOW.replace(day=14))  # the same papers again: no second entry
    assert [e.id for e in read(tmp_path).entries] == ids
    # a paper without an arXiv id keeps one id too
    no_id = sample_digest(1, updated=0)
    no_id.matches[0].paper = replace(no_id.matches[0].paper, arxiv_id=None, url=None)
    channel.send(no_id, {}, now=NOW)
    channel.send(no_id, {}, now=NOW)
    entries = read(tmp_path).entries
    assert entries[0].id.startswith("urn:watcher:paper:") and entries[1].id == ids[0]


def test_hostile_papers_stay_text_in_the_feed(tmp_path):
    digest = hostile_digest()
    feed_channel(tmp_path).send(digest, {}, now=NOW)
    raw = (tmp_path / "feeds" / "daily.atom").read_text(encoding="utf-8")
    parsed = read(tmp_path)
    assert len(parsed.entries) == len(digest.matches)
    assert parsed.entries[0].title.startswith("<script>alert(1)</script>")  # the text, as text
    import xml.etree.ElementTree as ET
    root = ET.fromstring(raw.encode())
    atom = "{http://www.w3.org/2005/Atom}"
    for entry, m in zip(root.findall(atom + "entry"), digest.matches):
        html = entry.find(atom + "content").text
        parser = HtmlCollector()
        parser.feed(html)
        assert set(parser.tags) <= {"p", "b", "a"}, parser.tags
        for name, value in parser.attrs:
            assert name == "href" and value.startswith("https://arxiv.org/"), (name, value)
        assert len(entry.findall(atom + "author")) <= 21
        assert "\r" not in entry.find(atom + "title").text and "\n" not in entry.find(atom + "title").text
    assert "JINJA-RAN{%" in raw or "JINJA-RAN" not in raw.replace("%}JINJA-RAN{%", "")
    for control in ("\x00", "\x1b", "\u202e"):
        assert control not in raw


def test_a_path_that_cannot_be_written_or_a_foreign_file_fails_the_channel(tmp_path):
    (tmp_path / "blocker").write_text("a file, not a folder")
    with pytest.raises(DeliveryError, match=r"channel feed: cannot write .*blocker"):
        feed_channel(tmp_path, path="blocker/{digest}.atom").send(sample_digest(2), {}, now=NOW)
    foreign = tmp_path / "feeds" / "daily.atom"
    foreign.parent.mkdir()
    foreign.write_text("<rss><channel/></rss>")
    with pytest.raises(DeliveryError, match="not an Atom feed.*move the file away"):
        feed_channel(tmp_path).send(sample_digest(2), {}, now=NOW)
    assert foreign.read_text() == "<rss><channel/></rss>"  # nothing lost


def test_feed_path_templates_are_checked(write_config):
    base = """
[profile.p]
query = "x"
[digest.d]
profiles = ["p"]
every = "1h"
channels = ["feed"]
[channel.feed]
type = "feed"
"""
    with pytest.raises(ConfigError, match=r"channel.feed.path.*\{date\}.*known fields: \{digest\}"):
        load_config(write_config(base + 'path = "feeds/{digest}-{date}.atom"\n'))
    with pytest.raises(ConfigError, match="channel.feed.max_entries: must be at least 1"):
        load_config(write_config(base + 'path = "f.atom"\nmax_entries = 0\n'))
    cfg = load_config(write_config(base + 'path = "feeds/{digest}.atom"\nmax_entries = 3\n'))
    assert cfg.channels["feed"].options.max_entries == 3
    assert read_feed(cfg, "d") is None and read_feed(cfg, "nope") is None


CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[profile.llm-rl]
title = "LLM-RL"
query = '"reinforcement learning" OR RLHF OR GRPO'
max_papers = 5

[digest.daily]
profiles = ["llm-rl"]
schedule = "30 21 * * sun-thu"
formats = ["json"]
channels = ["feed", "broken", "archive"]

[channel.feed]
type = "feed"
path = "feeds/{digest}.atom"

[channel.broken]
type = "feed"
path = "blocker/{digest}.atom"

[channel.archive]
type = "file"
path = "out/{digest}.{ext}"
"""


def test_once_sample_writes_the_feed_and_a_broken_feed_fails_only_itself(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    (tmp_path / "blocker").write_text("a file")
    result = run_cli("--config", str(tmp_path / "config.toml"), "once", "--sample")
    assert result.returncode == 1
    assert b"channel broken" in result.stderr and b"cannot write" in result.stderr
    parsed = read(tmp_path)
    papers = json.loads((tmp_path / "out" / "daily.json").read_text())
    assert [e.id for e in parsed.entries] == [entry_id(Paper.from_json(p)) for p in papers]
    assert [e.summary for e in parsed.entries] == [p["tldr"] for p in papers]
    cfg = load_config(tmp_path / "config.toml")
    assert read_feed(cfg, "daily") == (tmp_path / "feeds" / "daily.atom").read_bytes()
    again = run_cli("--config", str(tmp_path / "config.toml"), "once", "--sample")
    assert b"channel broken" in again.stderr  # the broken one retries; the feed has no repeats
    assert [e.id for e in read(tmp_path).entries] == [e.id for e in parsed.entries]


def test_a_dry_run_shows_a_feed_channels_digest_in_markdown_and_writes_nothing(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG.replace('channels = ["feed", "broken", "archive"]',
                                                         'channels = ["feed"]'))
    result = run_cli("--config", str(tmp_path / "config.toml"), "once", "--sample", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert b"format markdown (dry run, not sent; channels: feed)" in result.stderr
    assert result.stdout.startswith(b"# LLM-RL") and result.stdout.count(b"**TL;DR:** ") == 5
    assert not (tmp_path / "feeds").exists()


def test_feed_links_itself_and_the_inbox_and_dates_every_entry(tmp_path):
    """A reader shows the feed's home and a date for papers known only from a listing (no
    submission time), and each entry carries the rating links when the digest has them."""
    from datetime import date

    from watcher.present.links import Links

    digest = sample_digest(3, updated=0)
    listing_only = replace(digest.matches[2].paper, published=None, announced=date(2025, 4, 11))
    digest.matches[2] = replace(digest.matches[2], paper=listing_only)
    digest.links = Links("https://papers.example.org", "s3cret")
    cfg = channel_config(name="feed", type="feed", path="feeds/{digest}.atom", max_entries=200)
    make_channel(cfg, DeliveryContext(base_dir=tmp_path, web_url="https://papers.example.org")
                 ).send(digest, {}, now=NOW)
    parsed = read(tmp_path)
    links = {link.rel: link.href for link in parsed.feed.links}
    assert links == {"self": "https://papers.example.org/feeds/daily.atom",
                     "alternate": "https://papers.example.org/digests?digest=daily"}
    assert [e.published_parsed[:3] for e in parsed.entries] == [
        digest.matches[0].paper.published.timetuple()[:3], digest.matches[1].paper.published.timetuple()[:3],
        (2025, 4, 11)]
    for entry, m in zip(parsed.entries, digest.matches):
        urls = digest.links.paper(m)
        content = entry.content[0].value
        assert all(urls[a] in content for a in ("up", "down", "save", "web")), content
        assert entry.summary == tldr_of(m)
    # a feed file nobody serves still says where it is
    feed_channel(tmp_path, path="local/{digest}.atom").send(sample_digest(1, updated=0), {}, now=NOW)
    data = (tmp_path / "local" / "daily.atom").read_text()
    assert [link.rel for link in feedparser.parse(data).feed.links] == ["self"]
    href = (tmp_path / "local" / "daily.atom").resolve().as_uri()
    assert f'<link rel="self" type="application/atom+xml" href="{href}" />' in data


def test_the_feeds_updated_is_the_cycles_clock(tmp_path):
    """`once --sample` runs on the sample's clock (its last day, 23:59 in the config's zone):
    the feed says it was updated then, as the ledger does, not at the wall clock's time."""
    (tmp_path / "config.toml").write_text(CONFIG.replace('channels = ["feed", "broken", "archive"]',
                                                         'channels = ["feed"]'))
    result = run_cli("--config", str(tmp_path / "config.toml"), "once", "--sample")
    assert result.returncode == 0, result.stderr
    parsed = read(tmp_path)
    cfg = load_config(tmp_path / "config.toml")
    from watcher.cycle.pipeline import sample_config, sample_now
    from watcher.store import Store

    with Store.open(sample_config(cfg).settings.database) as store:
        sent = store.db.execute("SELECT max(delivered_at) FROM deliveries").fetchone()[0]
    now = sample_now(cfg)
    assert sent == now.isoformat(timespec="seconds")
    assert datetime(*parsed.feed.updated_parsed[:6], tzinfo=timezone.utc) == now
