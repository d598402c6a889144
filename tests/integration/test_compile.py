"""One way to compile a profile (watcher/matching/compile.py): the web's matchers follow every change of
what they are made of (examples stored later, ratings changed within one second, example
files), and the query preview of the unchanged query counts what the profile selects now."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import replace
from datetime import date, datetime, timezone

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, database_copy, sample_setup, text

from watcher.matching.compile import changes, compile_profile
from watcher.matching.index import prepare
from watcher.models import Paper
from watcher.services.ratings import apply_rating
from watcher.store import Store

PAPER = "2504.07615"  # VLM-R1, delivered by the sample digest (profile llm-rl)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("compile"))


@pytest.fixture
def site(sample, tmp_path):
    config, db = sample
    copy = database_copy(db, tmp_path)
    return config, copy


def delivered(store) -> list[str]:
    """The keys of the sample digest's papers, in order."""
    return [r[0] for r in store.db.execute("SELECT paper FROM message_papers ORDER BY message, position")]


def why(client, key: str) -> str:
    return text(client.get(f"/papers/{key}")).split("Why, per profile")[1]


def test_an_example_stored_after_the_first_page_view_is_used(site):
    config, db = site
    prof = config.profiles["llm-rl"]
    config = replace(config, profiles={"llm-rl": replace(prof, examples=("2504.99999",))})
    with Store.open(db) as store:
        original = store.get(PAPER)
    twin = replace(original, arxiv_id="2504.99999", version=1)
    with TestClient(app_for(config, db)) as c:
        assert "similar to 2504.99999" not in why(c, PAPER)  # compiled without the example
        with Store.open(db) as store:
            store.upsert([twin], datetime(2025, 4, 12, 22, tzinfo=timezone.utc))
            expected = compile_profile(config, "llm-rl", store).explain(store.get(PAPER))
        page = why(c, PAPER)
    assert "similar to 2504.99999" in page
    assert f"{expected.score:.2f}" in page  # the score the digest would give, not a stale one


def test_a_like_cleared_and_another_given_in_the_same_second_is_seen(site):
    """Count, latest time and number of likes are the same before and after: a key made of
    them (as the web's used to be) kept the old matcher, naming a like that was taken back."""
    config, db = site
    when = datetime(2025, 4, 13, 9, 0, 0, tzinfo=timezone.utc)
    with Store.open(db) as store:
        other = delivered(store)[1]
        apply_rating(store, "up", "llm-rl", PAPER, "cli", profiles=config.profiles, now=when)
    with TestClient(app_for(config, db)) as c:
        assert f"like {PAPER} (you liked)" in why(c, PAPER)
        with Store.open(db) as store:
            before = changes(store)
            apply_rating(store, "clear", "llm-rl", PAPER, "cli", profiles=config.profiles, now=when)
            apply_rating(store, "up", "llm-rl", other, "cli", profiles=config.profiles, now=when)
            assert changes(store)[1] == before[1] + 2
        assert f"like {PAPER} (you liked)" not in why(c, PAPER)


def test_the_preview_of_the_unchanged_query_is_the_current_count_with_ratings(site):
    """(Issue 34: three likes made at once no longer add papers beyond the query, so three
    delivered papers are rated down instead: a paper rated down is out by its own rating.)"""
    config, db = site
    with Store.open(db) as store:
        for key in delivered(store)[:3]:
            apply_rating(store, "down", "llm-rl", key, "cli", profiles=config.profiles)
    query = config.profiles["llm-rl"].query
    with TestClient(app_for(config, db)) as c:
        r = c.get("/profiles/llm-rl", params={"preview": query, "days": "30"})
    assert r.status_code == 200
    m = re.search(r"\((\d+) stored papers\) the draft matches (\d+) ; the current query matches (\d+)", text(r))
    assert m, text(r)[:2000]
    stored, draft, current = map(int, m.groups())
    assert draft == current
    with Store.open(db) as store:  # and both are what the profile, with its ratings, selects
        rows = list(store.db.query("SELECT * FROM papers WHERE day >= date((SELECT max(day) FROM papers), "
                                   "'-29 days')"))
        from watcher.store import row_to_paper

        papers = [row_to_paper(r) for r in rows]
        assert len(papers) == stored
        with_ratings = compile_profile(config, "llm-rl", store)
        without = compile_profile(config, "llm-rl")
    batch = prepare(papers)
    assert len(with_ratings.score_batch(batch)) == current
    assert len(without.score_batch(batch)) != current  # the ratings make a difference here


def test_an_example_file_removed_after_start_is_a_clear_page(site, tmp_path):
    config, db = site
    listing = tmp_path / "liked.json"
    with Store.open(db) as store:
        listing.write_text(json.dumps([{"title": store.get(PAPER).title, "abstract": "GRPO for LLMs"}]))
    prof = replace(config.profiles["llm-rl"], examples=("liked.json",), base_dir=tmp_path)
    config = replace(config, profiles={"llm-rl": prof})
    with TestClient(app_for(config, db), raise_server_exceptions=False) as c:
        assert c.get(f"/papers/{PAPER}").status_code == 200
        listing.unlink()
        r = c.get(f"/papers/{PAPER}")
    assert r.status_code == 500
    assert "example file" in text(r) and "liked.json" in text(r)
    assert "Internal Server Error" not in r.text


def test_the_change_counters_move_on_every_write_to_papers_and_ratings(tmp_path):
    with Store.open(tmp_path / "w.db") as store:
        start = changes(store)
        now = datetime(2025, 4, 12, tzinfo=timezone.utc)
        store.upsert([Paper(title="A paper", arxiv_id="2504.00001", version=1, announced=date(2025, 4, 12))], now)
        after = changes(store)
        assert after[0] > start[0] and after[1] == start[1]
        apply_rating(store, "up", "p", "2504.00001", "cli", profiles=["p"], now=now)
        apply_rating(store, "clear", "p", "2504.00001", "cli", profiles=["p"], now=now)
        assert changes(store)[1] == after[1] + 2


def test_a_cycle_that_only_stored_papers_reuses_the_fit_and_a_rating_refits(site):
    """The learner's fit depends on the profile, its examples and its ratings only: a cycle
    after new papers were stored (a papers write) takes the fitted matcher the last cycle
    left, counted in fits, not in time; a new rating is a new fit; the web's page takes the
    same matcher object as the cycle."""
    import io

    from watcher.matching.compile import _fits
    from watcher.cycle.pipeline import Cycle, Deliver, DryRun, run_once

    config, db = site
    config = replace(config, settings=replace(config.settings, database=db))
    when = datetime(2025, 4, 13, 9, 0, 0, tzinfo=timezone.utc)
    with Store.open(db) as store:
        keys = delivered(store)
        for i, key in enumerate(keys[:8]):
            apply_rating(store, "up" if i % 3 else "down", "llm-rl", key, "cli", profiles=config.profiles, now=when)

    def cycle() -> None:
        out = io.StringIO()
        report = run_once(config, Cycle(now=when), None,
                          Deliver(digests=["daily"], since_day=date(2025, 4, 1),
                                  dry_run=DryRun(stdout=out, stderr=io.StringIO())))
        assert report.ok and out.getvalue()

    def fits() -> int:
        return _fits.fitted["llm-rl"]

    cycle()
    before = fits()
    with Store.open(db) as store:
        first = compile_profile(config, "llm-rl", store)
        assert first.feedback  # the ratings are learned from
        paper = store.get(PAPER)
        new = [replace(paper, arxiv_id=f"2504.9{i:04d}", title=f"{paper.title} ({i})") for i in range(3)]
        store.upsert(new, when)  # what a cycle's fetch stores
        assert fits() == before
    cycle()
    assert fits() == before  # the cycle after new papers reused the fit
    with TestClient(app_for(config, db)) as c:
        assert c.get(f"/papers/{PAPER}").status_code == 200
    assert fits() == before  # and so did the web
    with Store.open(db) as store:
        assert compile_profile(config, "llm-rl", store) is first
        apply_rating(store, "down", "llm-rl", keys[9], "cli", profiles=config.profiles, now=when)
    cycle()
    assert fits() == before + 1  # a rating: fitted again, once
    with Store.open(db) as store:
        assert compile_profile(config, "llm-rl", store) is not first
    assert fits() == before + 1


def test_a_new_process_takes_the_ratings_check_a_run_recorded_for_the_same_ratings(site, monkeypatch):
    """The self-check of a profile's ratings (each later piece of ratings judged by the learner
    fitted on the pieces before it) is most of a fit's seconds at 2,000 ratings, and every new
    process (``watcher once`` in a scheduled job, ``serve`` started) ran it again. A run
    records what it decided with the fingerprint of the profile, examples and ratings it was
    decided from; a compilation in a new process with the same ones takes it instead of
    checking again, and decides the same (the same estimates and sentences, the same papers
    selected); a new rating is checked again."""
    import watcher.matching.compile as compile_module
    from watcher.cycle.selections import judge, record_check
    from watcher.matching.learn import Feedback

    config, db = site
    with Store.open(db) as store:
        keys = delivered(store)
        for i, key in enumerate(keys[:16]):  # enough of each for the model (its cut is decided too)
            apply_rating(store, "up" if i % 2 else "down", "llm-rl", key, "cli", profiles=config.profiles)
    checks, real = [], Feedback._self_check
    monkeypatch.setattr(Feedback, "_self_check", lambda self, *a: (checks.append(1), real(self, *a))[1])

    def compiled(store):
        monkeypatch.setattr(compile_module, "_fits", compile_module._Fits())  # a new process: no fit kept
        checks.clear()
        return compile_profile(config, "llm-rl", store)

    with Store.open(db) as store:
        papers = store.papers_between(*store.recent_days(30))
        checked = compiled(store)
        assert checks == [1] and checked.feedback.estimates and checked.feedback.model is not None  # no record yet
        record_check(store, "llm-rl", judge(config, "llm-rl", store, checked))  # what a run records
        taken = compiled(store)
        assert checks == []  # taken from the record
        assert taken.feedback.estimates == checked.feedback.estimates
        assert taken.feedback.checked() == checked.feedback.checked()
        assert (taken.feedback.remove, taken.feedback.model.cut) == (checked.feedback.remove, checked.feedback.model.cut)
        assert taken.selects(papers) == checked.selects(papers) and any(checked.selects(papers))
        apply_rating(store, "down", "llm-rl", keys[16], "cli", profiles=config.profiles)
        compiled(store)
        assert checks == [1]  # other ratings: the record is not theirs
