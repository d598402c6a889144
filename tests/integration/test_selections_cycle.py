"""What a cycle's record of each profile's selections costs follows the cycle's papers, never
the chart's window (watcher.cycle.selections.record_cycle): after `watcher state restore` (whose state
file leaves the record out) a cycle scores the papers of the days it stored papers under, not
the 30 days of every profile; a day recorded before scores only the papers added to it since;
and the record it leaves is what scoring every paper of each day gives (papers scored are
counted through the matcher's own score_batch, never timed)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from webkit import database_copy, sample_setup

import watcher.matching.match as match_module
import watcher.cycle.selections as selections
from watcher.matching.compile import compile_profile
from watcher.matching.index import prepare
from watcher.store import Store

DAYS = 8  # days of papers stored before the sample's, each a copy of the sample's papers


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("cycle"))


@pytest.fixture
def scored(monkeypatch):
    """The papers each call of a matcher's score_batch was given, summed."""
    seen = {"papers": 0}
    real = match_module.ProfileMatcher.score_batch

    def score_batch(self, batch, within=None):
        seen["papers"] += len(batch.docs)
        return real(self, batch, within)

    monkeypatch.setattr(match_module.ProfileMatcher, "score_batch", score_batch)
    return seen


def copies(papers, day, tag: int):
    """``papers`` again as other papers filed on ``day`` (their own arXiv ids)."""
    return [replace(p, arxiv_id=f"2301.{tag:02d}{i:03d}", version=1, doi=None, dois=[], pmid=None, url=None,
                    announced=day, published=None, title=f"{p.title} (copy {tag})")
            for i, p in enumerate(papers)]


def full_recount(config, store) -> dict[str, dict]:
    """What each profile selects of each day recorded, every paper of the day scored."""
    start, end = store.recent_days(selections.CHART_DAYS)
    out = {}
    for name in config.profiles:
        matcher = compile_profile(config, name, store)
        out[name] = {day: sorted(m.paper.key for m in matcher.score_batch(prepare(store.papers_between(day, day))).values())
                     for day in store.selections(name, start, end)}
    return out


def recorded(config, store) -> dict[str, dict]:
    start, end = store.recent_days(selections.CHART_DAYS)
    return {name: {day: sorted(r.papers) for day, r in store.selections(name, start, end).items()}
            for name in config.profiles}


def test_a_cycle_after_a_restore_scores_its_new_papers_not_the_window_and_records_what_a_recount_gives(
        sample, tmp_path, scored):
    config, db = sample
    db = database_copy(db, tmp_path)
    with Store.open(db) as store:
        start, end = store.recent_days(3)
        base = store.papers_between(start, end)
        stamp_old = min(sig[2] for sig in store.day_signatures(start, end).values())
        from datetime import datetime
        old = datetime.fromisoformat(stamp_old)
        for k in range(DAYS):  # the earlier days of a year of use
            store.upsert(copies(base, start - timedelta(days=k + 1), k), old)
        store.forget_selections([])  # what `watcher state restore` leaves: no record at all
        stored = store.count_papers()
        assert len(store.day_signatures(*store.recent_days(selections.CHART_DAYS))) >= DAYS + 3

        # the first cycle after the restore stores a new day's papers, then records
        now = old + timedelta(days=2)
        new = copies(base, end + timedelta(days=1), 90)
        store.upsert(new, now)
        scored["papers"] = 0
        counted = selections.record_cycle(config, store, now)
        profiles = len(config.profiles)
        assert scored["papers"] <= len(new) * profiles < stored, (scored, len(new), stored)
        assert set(counted.values()) == {1}  # the new day only: the others are left to the page
        assert recorded(config, store) == full_recount(config, store)
        assert all(len(days) == 1 for days in recorded(config, store).values())

        # the next cycle adds papers to the day recorded: only those are scored
        later = now + timedelta(hours=6)
        more = copies(base[:5], end + timedelta(days=1), 91)
        revised = [replace(new[0], version=2, abstract=new[0].abstract + " GRPO reinforcement learning agent")]
        store.upsert(more + revised, later)
        scored["papers"] = 0
        again = selections.record_cycle(config, store, later)
        assert set(again.values()) == {1}, again
        assert scored["papers"] <= (len(more) + len(revised)) * profiles, scored
        assert recorded(config, store) == full_recount(config, store)

        # the page brings the other days up to date the same way: the whole record equals a recount
        for name in config.profiles:
            selections.bring_up_to_date(store, name, selections.judge(config, name, store), *store.recent_days(
                selections.CHART_DAYS), lambda rows, name=name: store.record_selections(name, rows, later))
        assert all(len(days) >= DAYS + 4 for days in recorded(config, store).values())
        assert recorded(config, store) == full_recount(config, store)
