"""The work beside the pages (a profile's counting, what its ratings changed, a draft's
preview: watcher.web.state.WebState.beside) runs one job at a time and waits for the pages
being served: through the ASGI app, a search page held in flight sees no job start until it is
answered, and the jobs of a profile page never overlap (each job observed at its own entry
and exit, never timed against the machine)."""

from __future__ import annotations

import threading
import time
import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, csrf_of, database_copy, sample_setup

import watcher.web.search as search_module
from watcher.web.state import WebState

PAPER = "2504.07615"  # VLM-R1, delivered by the sample digest (profile llm-rl)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("beside"))


def test_the_work_beside_the_pages_waits_for_a_page_being_served_and_runs_one_job_at_a_time(
        sample, tmp_path, monkeypatch):
    config, db = sample
    db = database_copy(db, tmp_path)
    monkeypatch.setenv("WATCHER_WEB_DEADLINE", "6")
    jobs: list[tuple[float, str, object]] = []  # (when, "in" / "out", the job's key)
    real_beside = WebState.beside

    def beside(self, key, work):
        def observed():
            jobs.append((time.monotonic(), "in", key))
            try:
                work()
            finally:
                jobs.append((time.monotonic(), "out", key))
        return real_beside(self, key, observed)

    monkeypatch.setattr(WebState, "beside", beside)
    entered, release = threading.Event(), threading.Event()
    real_search = search_module.run_search

    def held_search(*args, **kw):  # a search page in flight until the test lets it answer
        entered.set()
        release.wait(30)
        return real_search(*args, **kw)

    monkeypatch.setattr(search_module, "run_search", held_search)
    answers = []
    with TestClient(app_for(config, db)) as client:
        token = csrf_of(client.get("/"))
        assert client.post("/rate", data={"csrf": token, "action": "up", "profile": "llm-rl", "paper": PAPER,
                                          "next": "/"}, follow_redirects=False).status_code == 303
        searching = threading.Thread(target=lambda: answers.append(client.get("/search", params={"q": "agent"})))
        searching.start()
        assert entered.wait(30)
        # the rating outdated the record and what the ratings changed: two jobs beside the page
        page = client.get("/profiles/llm-rl", params={"preview": "GRPO", "days": "30"})
        assert page.status_code == 200
        started = [key for _, what, key in jobs if what == "in"]
        released = time.monotonic()
        release.set()
        searching.join(30)
        for _ in range(3):  # a job may start the next
            for thread in list(client.app.state.web.background.values()):
                thread.join(30)
        again = client.get("/profiles/llm-rl.json").json()
    assert answers and answers[0].status_code in (200, 503)
    assert started == [], f"jobs ran while a search page was being served: {started}"
    assert len({key for _, _, key in jobs}) >= 2 and all(when >= released for when, _, _ in jobs), jobs
    running = 0
    for _, what, key in sorted(jobs, key=lambda j: j[0]):
        running += 1 if what == "in" else -1
        assert running <= 1, f"two jobs at once: {jobs}"
    assert again["match_now"]["outdated"] == [] and not again["rating_changes_pending"]


def test_a_search_page_fits_no_learner_on_its_request(tmp_path, monkeypatch):
    """The rating buttons of a search find the profiles of its papers with the kept matchers, else
    the profiles without their ratings, the learner's fit started beside the pages: the first
    search after ``serve`` started fitted every rated profile on its request (seconds each at
    300,000 papers: 503)."""
    import watcher.matching.compile as compile_module

    config, db = sample_setup(tmp_path / "two")
    toml = tmp_path / "two" / "config.toml"
    toml.write_text(toml.read_text() + '\n[profile.agents]\nquery = "agent"\n')
    from watcher.config import load_config

    config = load_config(toml)
    db = database_copy(db, tmp_path)
    with TestClient(app_for(config, db)) as client:
        token = csrf_of(client.get("/"))
        assert client.post("/rate", data={"csrf": token, "action": "up", "profile": "llm-rl", "paper": PAPER,
                                          "next": "/"}, follow_redirects=False).status_code == 303
    fits, matcher_class = [], compile_module.ProfileMatcher

    def fitted(*args, **kw):  # who fits a profile's learner from its ratings
        if kw.get("feedback") is not None:
            fits.append(threading.current_thread().name)
        return matcher_class(*args, **kw)

    monkeypatch.setattr(compile_module, "ProfileMatcher", fitted)
    monkeypatch.setattr(compile_module, "_fits", compile_module._Fits())  # a new process: no fit kept
    with TestClient(app_for(config, db)) as client:  # a new server: nothing compiled yet
        page = client.get("/search", params={"q": "reinforcement learning"})
        assert page.status_code == 200 and "llm-rl" in page.text
        for thread in list(client.app.state.web.background.values()):
            thread.join(30)
    assert fits and all(name.startswith("watcher-") for name in fits), fits  # fitted beside, not on the request


def test_a_learners_fit_beside_the_pages_gives_them_its_turns(sample, tmp_path, monkeypatch):
    """A fit is seconds of Python at 2,000 ratings: beside the pages it shared the interpreter
    with them step for step (a page of 0.1 s took 0.3-0.5 s, and a preview's first request
    2.1 s, a 503, while fits ran at 300,000 papers). It now takes its turns between its small
    steps (each paper prepared, each step of its regression): once a page is being served it
    goes no further until the page is answered, then finishes."""
    import watcher.matching.index as index

    from watcher.services.ratings import apply_rating
    from watcher.store import Store

    config, db = sample
    db = database_copy(db, tmp_path)
    with Store.open(db) as store:
        keys = [r[0] for r in store.db.execute("SELECT paper FROM message_papers ORDER BY message, position")]
        for i, key in enumerate(keys[:16]):
            apply_rating(store, "up" if i % 2 else "down", "llm-rl", key, "cli", profiles=config.profiles)
    started, go = threading.Event(), threading.Event()
    steps: list[str] = []  # the papers the fit prepared, in turn
    real_prepare = index.prepare_doc

    def prepare_doc(*args):
        if threading.current_thread().name.startswith("watcher-"):
            steps.append("step")
            if not started.is_set():
                started.set()
                go.wait(30)
        return real_prepare(*args)

    monkeypatch.setattr(index, "prepare_doc", prepare_doc)
    entered, release = threading.Event(), threading.Event()
    real_search = search_module.run_search

    def held_search(*args, **kw):
        entered.set()
        release.wait(30)
        return real_search(*args, **kw)

    monkeypatch.setattr(search_module, "run_search", held_search)
    app = app_for(config, db)
    with TestClient(app) as client:
        web = app.state.web
        fit = web.background.get(("fit", "llm-rl")) or web.fitted_beside("llm-rl")  # started with the server
        assert started.wait(30)  # the fit is under way, in its first step
        searching = threading.Thread(target=lambda: client.get("/search", params={"q": "agent"}))
        searching.start()
        assert entered.wait(30)  # a page is being served
        go.set()
        fit.join(1.0)  # time it would have to go on, were it let
        during = len(steps)
        release.set()
        searching.join(30)
        fit.join(60)
        with Store.open(db, readonly=True) as store:
            assert web.compiled("llm-rl", store) is not None
    assert during <= 2, f"the fit went on while a page was being served: {during} steps"
    assert len(steps) > during + 10 and not fit.is_alive()
