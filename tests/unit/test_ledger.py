"""The ledger and the window, driven in-process with a fixed clock: nothing lost, nothing twice."""

from __future__ import annotations

import io
from datetime import date, datetime, timedelta, timezone

from conftest import MINIMAL_CONFIG, SEED_DIGEST
from watcher import formats
from watcher.config import load_config
from watcher.cycle.pipeline import Cycle, Deliver, run_once
from watcher.store import Store

T0 = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)


def stored_config(write_config, tmp_path):
    cfg = load_config(write_config(MINIMAL_CONFIG))
    papers = formats.read(SEED_DIGEST.read_bytes(), "seed").papers
    for p in papers:
        p.announced = date(2025, 4, 12)
    with Store.open(cfg.settings.database) as store:
        store.upsert(papers, T0)
    return cfg


def delivered(cfg):
    with Store.open(cfg.settings.database) as store:
        return sorted(r["paper"] for r in store.db["deliveries"].rows)


def cycle(now):
    return Cycle(now=now)


def digests():
    return Deliver(stdout=io.StringIO())


def test_a_first_run_that_fails_keeps_its_window_for_a_late_retry(write_config, tmp_path):
    cfg = stored_config(write_config, tmp_path)
    (tmp_path / "digests").write_text("blocks the folder")
    report = run_once(cfg, cycle(T0), None, digests())
    assert not report.ok and delivered(cfg) == []
    (tmp_path / "digests").unlink()
    # ten days later, far past the 3-day lookback: the papers of the first window still arrive
    report = run_once(cfg, cycle(T0 + timedelta(days=10)), None, digests())
    assert report.ok
    assert len(delivered(cfg)) == report.channels[0].papers > 0


def test_after_a_success_only_papers_stored_since_are_candidates(write_config, tmp_path):
    cfg = stored_config(write_config, tmp_path)
    first = run_once(cfg, cycle(T0), None, digests())
    n = len(delivered(cfg))
    assert first.ok and n == first.channels[0].papers > 0
    # the same papers seen again later (another source, a new version) are not delivered again
    papers = formats.read(SEED_DIGEST.read_bytes(), "seed").papers
    for p in papers:
        p.upvotes = 5
    with Store.open(cfg.settings.database) as store:
        store.upsert(papers, T0 + timedelta(hours=1))
    again = run_once(cfg, cycle(T0 + timedelta(days=1)), None, digests())
    assert again.ok and again.channels[0].papers == 0
    assert len(delivered(cfg)) == n


def test_papers_stored_during_a_long_outage_are_caught_up(write_config, tmp_path):
    cfg = stored_config(write_config, tmp_path)
    run_once(cfg, cycle(T0), None, digests())
    before = set(delivered(cfg))
    late = formats.read(SEED_DIGEST.read_bytes(), "seed").papers[0]
    late.title = "Reinforcement learning for language models after a week of downtime"
    late.announced = date(2025, 4, 15)
    with Store.open(cfg.settings.database) as store:
        store.upsert([late], T0 + timedelta(days=9))
    report = run_once(cfg, cycle(T0 + timedelta(days=9, hours=1)), None, digests())
    assert report.channels[0].papers == 1
    assert set(delivered(cfg)) - before == {late.key}


def test_a_paper_stored_late_with_an_old_date_is_still_delivered(write_config, tmp_path):
    """A paper announced long after submission (a holiday, moderation, an outage) arrives."""
    cfg = stored_config(write_config, tmp_path)
    run_once(cfg, cycle(T0), None, digests())
    before = set(delivered(cfg))
    late = formats.read(SEED_DIGEST.read_bytes(), "seed").papers[0]
    late.title = "Reinforcement learning for language models, held in moderation for weeks"
    late.announced = None
    late.published = T0 - timedelta(days=20)
    with Store.open(cfg.settings.database) as store:
        store.upsert([late], T0 + timedelta(days=1))
    report = run_once(cfg, cycle(T0 + timedelta(days=1, hours=1)), None, digests())
    assert report.channels[0].papers == 1
    assert set(delivered(cfg)) - before == {late.key}


def test_backfilled_papers_are_history_not_news(write_config, tmp_path):
    cfg = stored_config(write_config, tmp_path)
    run_once(cfg, cycle(T0), None, digests())
    old = formats.read(SEED_DIGEST.read_bytes(), "seed").papers[0]
    old.title = "Reinforcement learning from the archive"
    old.published = datetime(2024, 1, 5, tzinfo=timezone.utc)
    with Store.open(cfg.settings.database) as store:
        store.upsert([old], T0 + timedelta(days=1), backfill=True)
        assert store.find(old.title) is not None
    report = run_once(cfg, cycle(T0 + timedelta(days=1, hours=1)), None, digests())
    assert report.channels[0].papers == 0
