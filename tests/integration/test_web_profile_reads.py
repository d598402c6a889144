"""The profile page reads what it shows, never every stored paper: its chart's "match now" reads
what the run recorded, and a draft's preview reads only the papers the query's words find in
the full-text index (through the ASGI app; counted in papers built from rows, never timed)."""

from __future__ import annotations

import re
import sqlite3
import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, sample_setup, text

import watcher.store.papers as papers_module


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("reads"))


@pytest.fixture
def reads(monkeypatch):
    """How many papers the store builds from rows (every read of a paper goes through it)."""
    count = [0]
    real = papers_module.row_to_paper

    def counted(row):
        count[0] += 1
        return real(row)

    monkeypatch.setattr(papers_module, "row_to_paper", counted)
    return count


def test_a_first_visit_to_a_profile_page_reads_its_matches_not_every_paper(sample, reads):
    config, db = sample
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
    with TestClient(app_for(config, db)) as client:  # a new app: nothing kept from before
        r = client.get("/profiles/llm-rl")
        assert r.status_code == 200
        matched = int(re.search(r"(\d+) papers filed from \S+ to \S+ match the profile now", text(r)).group(1))
        first = reads[0]
        # the run recorded what it selects per day: the page reads the record, not the papers
        # (the sample's papers are all within the chart's 30 days: a scan read every one)
        assert 0 <= first < matched < stored, (matched, first, stored)
        preview = client.get("/profiles/llm-rl", params={"preview": "GRPO", "days": "30"})
        assert preview.status_code == 200
        found = int(re.search(r"the draft matches (\d+) ;", text(preview)).group(1))
        assert 0 < found and reads[0] - first < stored / 10, (found, reads[0] - first, stored)


def test_the_narrowed_chart_and_preview_select_what_the_matcher_selects_of_every_paper(sample):
    """The same counts as the profile's matcher over every stored paper of the window."""
    from watcher.matching.compile import compile_profile
    from watcher.matching.index import prepare
    from watcher.store import Store

    config, db = sample
    with Store.open(db, readonly=True) as store:
        start, end = store.recent_days(30)
        every = store.papers_between(start, end)
        batch = prepare(every)
        now = len(compile_profile(config, "llm-rl", store).score_batch(batch))
        draft = len(compile_profile(config, "llm-rl", store, query="GRPO OR ti:agent").score_batch(batch))
    with TestClient(app_for(config, db)) as client:
        page = client.get("/profiles/llm-rl.json", params={"preview": "GRPO OR ti:agent", "days": "30"}).json()
    assert page["match_now"]["total"] == now and page["preview"]["count"] == draft
    assert page["preview"]["stored"] == len(every)


def test_the_work_beside_the_pages_runs_one_at_a_time(sample):
    """What ratings changed is worked out beside the pages, one thread per profile: profile
    pages visited in a row left one running per profile, each reading its papers at once
    (at 300,000 papers the server's memory grew by 200 MB). They now take turns; each is still
    done, in the order asked."""
    import threading

    from watcher.web.state import WebState

    config, db = sample
    st = WebState(config, db)
    release, done = threading.Event(), []
    first = st.beside(("rating changes", "a"), lambda: (release.wait(30), done.append("a")))
    second = st.beside(("rating changes", "b"), lambda: done.append("b"))
    assert st.beside(("rating changes", "a"), lambda: done.append("again")) is first  # one per key
    second.join(0.5)
    assert second.is_alive() and done == []  # waits for its turn
    release.set()
    first.join(30), second.join(30)
    assert done == ["a", "b"]
