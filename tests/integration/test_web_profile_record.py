"""The profile page's "match now" reads what the cycle recorded (the ``selections`` table,
watcher.cycle.selections), never the papers of its 30 days: after `once`, the page's counts
per day are the record's and what the matcher selects; after a rating from the web the page
answers at once with the record, says it predates the rating, and shows the new counts once
they are counted beside it (through the ASGI app; papers counted, never timed)."""

from __future__ import annotations

import re
import threading
import warnings
from dataclasses import replace

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, csrf_of, database_copy, sample_setup, text

import watcher.cycle.selections as selections
import watcher.store.papers as papers_module
from watcher.matching.compile import compile_profile
from watcher.matching.index import prepare
from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once, sample_config, sample_now
from watcher.store import Store

PAPER = "2504.07615"  # VLM-R1, delivered by the sample digest (profile llm-rl)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("record"))


def selected_per_day(config, db, name: str) -> dict[str, int]:
    """What profile ``name``'s matcher selects of each filing day of the chart, every paper scored."""
    with Store.open(db, readonly=True) as store:
        start, end = store.recent_days(selections.CHART_DAYS)
        matcher = compile_profile(config, name, store)
        out = {}
        for day in store.day_signatures(start, end):
            papers = store.papers_between(day, day)
            out[day.isoformat()] = len(matcher.score_batch(prepare(papers)))
        return out


def recorded_per_day(db, name: str) -> dict[str, int]:
    with Store.open(db, readonly=True) as store:
        start, end = store.recent_days(selections.CHART_DAYS)
        return {d.isoformat(): len(r.papers) for d, r in store.selections(name, start, end).items()}


@pytest.fixture
def on_the_request(monkeypatch):
    """The papers read (built from rows) and the windows of papers asked for by the request's
    own threads, not by the work beside the pages (threads named ``watcher-...``)."""
    seen = {"papers": 0, "windows": 0}
    real_row, real_window = papers_module.row_to_paper, Store.window_papers

    def mine() -> bool:
        return not threading.current_thread().name.startswith("watcher-")

    def row(r):
        if mine():
            seen["papers"] += 1
        return real_row(r)

    def window(self, *args, **kw):
        if mine():
            seen["windows"] += 1
        return real_window(self, *args, **kw)

    monkeypatch.setattr(papers_module, "row_to_paper", row)
    monkeypatch.setattr(Store, "window_papers", window)
    return seen


def test_after_once_the_page_shows_the_record_which_is_what_the_matcher_selects(sample, on_the_request, monkeypatch):
    config, db = sample
    counted, real = [], selections.judged_by_day
    monkeypatch.setattr(selections, "judged_by_day", lambda *a, **kw: (counted.append(a), real(*a, **kw))[1])
    recorded = recorded_per_day(db, "llm-rl")
    assert recorded and sum(recorded.values()) > 0
    assert recorded == selected_per_day(config, db, "llm-rl")
    with TestClient(app_for(config, db)) as client:  # a new app: nothing kept in memory
        page = client.get("/profiles/llm-rl.json").json()
        html = client.get("/profiles/llm-rl")
    assert {d: n for d, n in page["match_now"]["per_day"].items() if n} == {d: n for d, n in recorded.items() if n}
    assert page["match_now"]["outdated"] == page["match_now"]["counting"] == []
    assert html.status_code == 200 and "predate" not in text(html)
    assert on_the_request["windows"] == 0  # no day's papers read by the request
    assert counted == []  # nor beside it: the run's record is what decides the profile now


def test_a_page_of_a_profile_that_sees_every_paper_reads_its_record_not_the_papers(sample, tmp_path, on_the_request):
    """A liked paper makes the profile score every paper (similarity reaches any): the page read
    and scored every paper of its 30 days on each visit to a new server (at 300,000 papers,
    30,000: past the deadline). After a run has recorded it, the page reads the record."""
    config, db = sample
    db = database_copy(db, tmp_path)
    with Store.open(db) as store:
        stored = store.count_papers()
    with TestClient(app_for(config, db)) as client:
        token = csrf_of(client.get("/"))
        assert client.post("/rate", data={"csrf": token, "action": "up", "profile": "llm-rl",
                                          "paper": PAPER, "next": "/"}, follow_redirects=False).status_code == 303
    cfg = sample_config(config)
    cfg = replace(cfg, settings=replace(cfg.settings, database=db))
    run_once(cfg, Cycle(now=sample_now(config)), Fetch(), Deliver())  # the run records the rated profile
    with Store.open(db, readonly=True) as store:
        assert compile_profile(config, "llm-rl", store).sees_every_paper()
    assert recorded_per_day(db, "llm-rl") == selected_per_day(config, db, "llm-rl")
    on_the_request.update(papers=0, windows=0)
    with TestClient(app_for(config, db)) as client:
        page = client.get("/profiles/llm-rl")
    assert page.status_code == 200 and "predate" not in text(page)
    assert on_the_request["windows"] == 0 and on_the_request["papers"] < 10 < stored, (on_the_request, stored)


def test_a_web_rating_shows_the_record_said_to_predate_it_then_the_new_counts(sample, tmp_path, monkeypatch):
    config, db = sample
    db = database_copy(db, tmp_path)
    monkeypatch.setenv("WATCHER_WEB_DEADLINE", "2")  # the page waits half of it for the counting
    before = recorded_per_day(db, "llm-rl")
    held, real = threading.Event(), selections.judged_by_day

    def judged_by_day(store, judges, todo, pause=None):  # the counting beside the page waits until the test lets it
        held.wait(30)
        yield from real(store, judges, todo, pause)

    monkeypatch.setattr(selections, "judged_by_day", judged_by_day)
    import watcher.matching.compile as compile_module

    fits, matcher_class = [], compile_module.ProfileMatcher

    def fitted(*args, **kw):  # who fits the profile's learner anew (seconds at 2,000 ratings)
        fits.append(threading.current_thread().name)
        return matcher_class(*args, **kw)

    monkeypatch.setattr(compile_module, "ProfileMatcher", fitted)
    with TestClient(app_for(config, db)) as client:
        token = csrf_of(client.get("/"))
        assert client.post("/rate", data={"csrf": token, "action": "down", "profile": "llm-rl",
                                          "paper": PAPER, "next": "/"}, follow_redirects=False).status_code == 303
        fits.clear()
        page = client.get("/profiles/llm-rl")
        assert page.status_code == 200
        assert fits and all(name.startswith("watcher-") for name in fits), fits  # fitted beside, not on the request
        assert re.search(r"The matches of \d+ days predate this profile's newest ratings or edit", text(page))
        twin = client.get("/profiles/llm-rl.json").json()["match_now"]
        assert twin["per_day"] == {d: before.get(d, 0) for d in twin["per_day"]} and twin["outdated"]
        held.set()
        for thread in list(client.app.state.web.background.values()):
            thread.join(30)
        after = client.get("/profiles/llm-rl.json").json()["match_now"]
        html = client.get("/profiles/llm-rl")
    expected = selected_per_day(config, db, "llm-rl")
    assert after["outdated"] == [] and "predate" not in text(html)
    assert {d: n for d, n in after["per_day"].items() if n} == {d: n for d, n in expected.items() if n}
    assert expected != before  # the rating (a dislike of a paper it selected) changed what it selects
    assert recorded_per_day(db, "llm-rl") == expected  # and the page's counting was recorded


def test_a_draft_preview_of_a_rated_profile_shows_the_days_counted_and_counts_the_rest_beside(
        sample, tmp_path, monkeypatch, on_the_request):
    """A liked paper makes a draft score every paper of the preview's days: the request scores
    none of them; it shows what the counting beside it finished and says how many days are
    still being counted; once done, the preview is what the draft selects of every paper."""
    config, db = sample
    db = database_copy(db, tmp_path)
    monkeypatch.setenv("WATCHER_WEB_DEADLINE", "2")
    import watcher.web.profiles as profiles

    held, real = threading.Event(), profiles.by_day

    def by_day(store, matcher, todo, pause=None):
        for day, matches in real(store, matcher, todo, pause):
            yield day, matches
            held.wait(30)  # the first day counted, the others when the test lets them

    monkeypatch.setattr(profiles, "by_day", by_day)
    waited, real_wait = [], profiles.wait_beside
    monkeypatch.setattr(profiles, "wait_beside", lambda st, thread: (waited.append(thread), real_wait(st, thread))[1])
    draft = "GRPO OR ti:agent"
    with TestClient(app_for(config, db)) as client:
        token = csrf_of(client.get("/"))
        assert client.post("/rate", data={"csrf": token, "action": "up", "profile": "llm-rl", "paper": PAPER,
                                          "next": "/"}, follow_redirects=False).status_code == 303
        on_the_request.update(papers=0, windows=0)
        page = client.get("/profiles/llm-rl", params={"preview": draft, "days": "30"})
        assert page.status_code == 200
        assert re.search(r"\d+ days of the 3 \(\d+ papers\) are still being counted", text(page)), text(page)
        assert on_the_request["windows"] == 0  # the request scored no paper itself
        [counting] = [t for key, t in client.app.state.web.background.items() if key[:3] == ("preview", "llm-rl", draft)]
        assert counting in waited  # the request that started the counting waited for it, within its patience
        waited.clear()
        again = client.get("/profiles/llm-rl", params={"preview": draft, "days": "30"})  # a reload meanwhile
        assert re.search(r"\d+ days? of the 3 \(\d+ papers\) (is|are) still being counted", text(again)), text(again)
        assert counting not in waited  # answered at once, with the days counted so far
        held.set()
        for thread in list(client.app.state.web.background.values()):
            thread.join(30)
        done = client.get("/profiles/llm-rl.json", params={"preview": draft, "days": "30"}).json()["preview"]
    with Store.open(db, readonly=True) as store:
        start, end = store.recent_days(30)
        matcher = compile_profile(config, "llm-rl", store, query=draft)
        assert matcher.sees_every_paper()
        every = store.papers_between(start, end)
        expected = len(matcher.score_batch(prepare(every)))
    assert done["days_counted"] == done["days"] == 3
    assert done["count"] == expected and done["stored"] == len(every)


def test_a_papers_rating_buttons_read_the_record_and_compile_no_recorded_profile(sample, tmp_path):
    """Which profiles a paper belongs to (the rating buttons of a search, a paper page, the
    reading list) is read from the runs' record of its filing day: no profile the record covers
    is compiled for it (at 300,000 papers a new server's first paper page spent 2 s compiling
    ten profiles for its buttons: 503), and the profiles found are those its matcher selects; a
    profile no run recorded that day is still judged now."""
    from watcher.config import load_config
    from watcher.services.ratings import owners_of

    config, db = sample
    (tmp_path / "config.toml").write_text(config.path.read_text() + '\n[profile.agents]\nquery = "agent OR agents"\n')
    two = load_config(tmp_path / "config.toml")
    copy = database_copy(db, tmp_path)
    with Store.open(copy) as store:
        start, end = store.recent_days(selections.CHART_DAYS)
        papers = [store.get(k) for (k,) in store.db.execute(
            "SELECT key FROM papers WHERE day >= ? AND day <= ? AND key NOT IN (SELECT paper FROM deliveries) "
            "ORDER BY key", [start.isoformat(), end.isoformat()])]
        live = {n: compile_profile(two, n, store) for n in two.profiles}
        one_by_one = {p.key: sorted(n for n in two.profiles if live[n].score(p) is not None) for p in papers}
        found = [n for v in one_by_one.values() for n in v]
        assert len(papers) > 10 and set(found) == set(two.profiles) and any(v == [] for v in one_by_one.values())
        asked: list[str] = []
        before = owners_of(two, store, papers, lambda n: asked.append(n) or live[n])
        assert before == one_by_one and "agents" in asked  # no record of "agents" yet: judged now
        selections.record_cycle(two, store, sample_now(two), every_day=True)
        asked.clear()
        assert owners_of(two, store, papers, lambda n: asked.append(n) or live[n]) == one_by_one
        assert asked == []  # every profile's record covers the papers' days


def test_what_the_ratings_changed_is_recorded_by_the_run_and_read_by_the_page(sample, tmp_path, on_the_request):
    """A run records, with each day's matches, what the profile's ratings changed there: the
    same changes ``watcher explain --profile`` works out over the 30 days (with and without the
    ratings), in the same order on the page, and what their self-check found. The page reads
    them from the record: no window of papers read and no paper scored on its request, and no
    learner fitted for it (at 300,000 papers, scoring 30 days twice kept every rated profile's
    page past a second, warm, and the fit for the check took a second, cold)."""
    from test_learn_sample import DISLIKES, LIKES

    from watcher.matching.compile import what_ratings_changed
    from watcher.services.ratings import apply_rating

    from watcher.config import load_config

    config, db = sample
    db = database_copy(db, tmp_path)
    path = tmp_path / "config.toml"  # with a profile of ratings alone: no query, so they change what it selects
    path.write_text(config.path.read_text() + '\n[profile.learner]\ntitle = "RL, as rated"\n')
    config = load_config(path)
    config = replace(config, settings=replace(config.settings, database=db))
    with Store.open(db) as store:
        for value, keys in (("up", LIKES), ("down", DISLIKES)):
            for key in keys:
                apply_rating(store, value, "learner", key, "cli", profiles=config.profiles)
    cfg = sample_config(config)
    cfg = replace(cfg, settings=replace(cfg.settings, database=db))
    run_once(cfg, Cycle(now=sample_now(config)), Fetch(), Deliver())
    with Store.open(db, readonly=True) as store:
        _, _, live = what_ratings_changed(config, "learner", store)
        recorded = [c for r in store.selections("learner", *store.recent_days(selections.CHART_DAYS)).values()
                    for c in r.changes]
        checked = compile_profile(config, "learner", store).feedback.checked()
    assert live and sorted((c.key, c.added, c.rating) for c in recorded) == sorted(
        (c.match.paper.key, c.added, c.rating) for c in live)
    on_the_request.update(papers=0, windows=0)
    app = app_for(config, db)
    with TestClient(app) as client:
        app.state.web.query_timeout = 1.0
        with app.state.web.background_turn:  # no work beside the pages: no learner fitted for this page
            twin = client.get("/profiles/learner.json").json()
    assert checked and twin["ratings_checked"] == checked  # the ratings' check, as the run recorded it
    assert twin["rating_changes_pending"] is False
    assert [(p["key"], p["added"], p["rating"]) for p in twin["rating_changes"]] == [
        (c.match.paper.key, c.added, c.rating) for c in live]
    assert on_the_request["windows"] == 0
    assert on_the_request["papers"] <= len(live) + len(LIKES) + len(DISLIKES) + 10, on_the_request


def test_a_profile_page_lists_its_newest_ratings_and_says_where_the_rest_are(sample, tmp_path, on_the_request):
    """Every rating listed, each with its buttons, made the page of a profile with 2,000 ratings
    a megabyte, and reading every rated paper a tenth of a second: the page and its twin list
    the newest 100 (the chart and its counts are of all of them) and say where all are; only
    the papers listed are read."""
    from datetime import timedelta

    from watcher.services.ratings import apply_rating

    config, db = sample
    db = database_copy(db, tmp_path)
    with Store.open(db) as store:
        keys = [r[0] for r in store.db.execute("SELECT key FROM papers ORDER BY key LIMIT 130")]
        when = sample_now(config) - timedelta(days=1)
        for i, key in enumerate(keys):
            apply_rating(store, "up" if i % 2 else "down", "llm-rl", key, "cli", profiles=config.profiles,
                         now=when + timedelta(minutes=i))
    on_the_request.update(papers=0, windows=0)
    with TestClient(app_for(config, db)) as client:
        html = client.get("/profiles/llm-rl")
        read = on_the_request["papers"]
        twin = client.get("/profiles/llm-rl.json").json()
    page = text(html)
    assert "65 rated up and 65 rated down" in page
    assert "The newest 100 of 130 ratings; all of them: watcher ratings --profile llm-rl" in page
    listed = re.findall(r'<li id="p-([^"]+)"><span class="value', html.text.split('<ul class="rated">')[1].split("</ul>")[0])
    assert listed == keys[30:][::-1]  # newest first
    assert twin["ratings_total"] == 130 and [r["key"] for r in twin["ratings"]] == keys[30:]
    assert read <= 110, read  # the listed papers (100), not every rated one (130)
