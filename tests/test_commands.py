"""status, digest, explain and test-deliver against a database filled from the seed digest."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from conftest import MINIMAL_CONFIG, SEED_DIGEST, run_watcher
from watcher import formats
from watcher.store import Store


@pytest.fixture
def filled(write_config, tmp_path):
    """A config and a database holding the seed digest's 30 papers, stored 'now'."""
    cfg = write_config(MINIMAL_CONFIG)
    papers = formats.read(SEED_DIGEST.read_bytes(), "seed").papers
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert(papers, datetime.now(timezone.utc))
    return cfg


@pytest.mark.parametrize("args", [
    ["status"],
    ["explain", "2504.07615", "--profile", "llm-rl"],
    ["digest", "daily", "--dry-run"],
    ["digest", "daily", "--dry-run", "--to", "html"],
], ids=" ".join)
def test_reading_commands_before_any_run_say_how_to_start_and_create_nothing(write_config, tmp_path, args):
    cfg = write_config(MINIMAL_CONFIG)
    r = run_watcher("--config", str(cfg), *args, cwd=tmp_path)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "no database yet (run 'watcher fetch' or 'watcher once' first)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_digest_since_delivers_once_and_status_shows_it(filled, tmp_path):
    r = run_watcher("--config", str(filled), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    written = list((tmp_path / "digests").iterdir())
    assert len(written) == 1
    listing = formats.read(written[0].read_bytes(), "written")
    assert listing.title == "LLM-RL" and len(listing.papers) >= 20
    again = run_watcher("--config", str(filled), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert again.returncode == 0
    assert len(list((tmp_path / "digests").iterdir())) == 1  # nothing twice
    status = run_watcher("--config", str(filled), "status", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    out = status.stdout.decode()
    assert "30 papers stored" in out
    assert "daily: last run" in out and "next " in out
    assert "-> archive: last delivery" in out and f"({len(listing.papers)} papers)" in out


def test_status_shows_every_time_in_the_config_time_zone(write_config, tmp_path):
    from watcher.config import load_config
    from watcher.status import status_text

    cfg = load_config(write_config(MINIMAL_CONFIG.replace('timezone = "UTC"', 'timezone = "Asia/Kolkata"')
                                   + '[source.api]\ntype = "arxiv"\nquery = "cat:cs.LG"\n'
                                   + '[source.rss]\ntype = "arxiv-rss"\ncategories = ["cs.LG"]\n'))
    t0 = datetime(2025, 4, 10, 12, 0, tzinfo=timezone.utc)
    with Store.open(cfg.settings.database) as store:
        store.source_ok("rss", {}, {"new": 1, "updated": 0, "unchanged": 0}, t0)
        store.source_failed("api", "HTTP 503", t0 + timedelta(hours=1))
        store.source_failed("api", "HTTP 503", t0 + timedelta(hours=2))
        store.digest_ran("daily", t0, True)
        store.delivery_failed("daily", "archive", "disk full", t0 + timedelta(hours=3))
    out = status_text(cfg, t0 + timedelta(hours=4))
    stamps = re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)?", out)
    assert len(stamps) >= 5, out
    assert all(s.endswith("+05:30") for s in stamps), out
    assert "rss: last fetch 2025-04-10T17:30:00+05:30" in out
    # the store keeps the latest failure of a streak, so status says so rather than "since"
    assert "FAILING (2 in a row), last failed at 2025-04-10T19:30:00+05:30: HTTP 503" in out
    assert "FAILED at 2025-04-10T20:30:00+05:30: disk full" in out


def test_digest_dry_run_prints_the_chosen_format(filled, tmp_path):
    r = run_watcher("--config", str(filled), "digest", "daily", "--since", "2025-04-01", "--dry-run",
                    "--to", "markdown", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "# LLM-RL — ".encode() in r.stdout
    assert not (tmp_path / "digests").exists()


def test_explain_gives_score_and_reasons(filled, tmp_path):
    r = run_watcher("--config", str(filled), "explain", "VLM-R1: A Stable and Generalizable R1-style "
                    "Large Vision-Language Model", "--profile", "llm-rl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "profile llm-rl: score" in out and "(selected)" in out
    assert "reinforcement learning" in out
    missing = run_watcher("--config", str(filled), "explain", "2501.99999", "--profile", "llm-rl", cwd=tmp_path)
    assert missing.returncode == 2 and b"no such paper" in missing.stderr


def test_test_deliver_sends_three_papers_through_a_file_channel(write_config, tmp_path):
    cfg = write_config(MINIMAL_CONFIG)
    r = run_watcher("--config", str(cfg), "test-deliver", "archive", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [written] = list((tmp_path / "digests").iterdir())
    listing = formats.read(written.read_bytes(), "test")
    assert len(listing.papers) == 3
    assert not (tmp_path / "watcher.db").exists()  # nothing recorded
