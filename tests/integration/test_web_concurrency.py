"""The web inbox's execution model: every view runs in a worker thread (``pages.threaded``), so
a slow page holds up no other request; the caches shared by those threads are bounded and
locked; the rating buttons of a page decide which profiles their papers belong to in one batch
through the percolator; the ledger is indexed by paper."""

from __future__ import annotations

import sqlite3
import sys
import threading
import warnings
from pathlib import Path

import httpx
import pytest

from deliverkit import free_port
from webkit import app_for, live_server, sample_setup

from watcher.config import load_config
from watcher.store import Store
from watcher.web.state import Bounded

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "benchmarks"))


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("webconcurrency"))


def test_healthz_is_answered_while_the_slowest_pages_are_still_running(sample, monkeypatch):
    """A search and a profile page are held inside their views (after doing their real work)
    until /healthz has been answered: it is, so they cannot be holding up the event loop."""
    from watcher.web import profiles, search

    config, db = sample
    entered = {"search": threading.Event(), "profile": threading.Event()}
    release = threading.Event()

    def held(name, real):
        def view(*args):
            out = real(*args)
            entered[name].set()
            release.wait(60)  # at most: a view on the event loop would hold /healthz this long
            return out
        return view

    monkeypatch.setattr(search, "_search", held("search", search._search))
    monkeypatch.setattr(profiles, "_selected_per_day", held("profile", profiles._selected_per_day))
    results: dict[str, httpx.Response] = {}

    def fetch(name, url):
        results[name] = httpx.get(url, timeout=30)

    with live_server(config, db) as base:
        slow = [threading.Thread(target=fetch, args=("search", f"{base}/search?q=au:Levine&cat=astro-ph.EP")),
                threading.Thread(target=fetch, args=("profile", f"{base}/profiles/llm-rl?preview=GRPO"))]
        for t in slow:
            t.start()
        try:
            assert all(e.wait(60) for e in entered.values())
            health = httpx.get(f"{base}/healthz", timeout=30)
            pending = [t.is_alive() for t in slow]
        finally:
            release.set()
            for t in slow:
                t.join(90)
    assert health.status_code == 200 and health.text == "ok"
    assert pending == [True, True]  # answered before either slow page was
    assert results["search"].status_code == 200 and results["profile"].status_code == 200


def test_the_bounded_cache_keeps_at_most_its_size_from_many_threads_at_once():
    cache = Bounded(8)
    errors = []

    def work(n):
        try:
            for i in range(2000):
                cache.put((n, i % 13), i)
                cache.get((n, (i * 7) % 13))
                assert len(cache) <= 8
        except Exception as e:  # noqa: BLE001 - any error in a thread fails the test
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors and len(cache) == 8
    cache.put("a", 1)
    assert cache.get("a") == 1  # the newest stays
    for i in range(8):
        cache.get("a")  # used again and again: never the least recently used
        cache.put(("x", i), i)
    assert cache.get("a") == 1 and cache.get(("x", 0)) is None


def test_the_web_state_has_no_shared_unlocked_cache(sample):
    web = app_for(*sample).state.web
    assert not hasattr(web, "cache")
    assert isinstance(web.inbox_pages, Bounded) and isinstance(web.charts, Bounded)


def test_a_pages_buttons_find_their_profiles_in_one_batch_through_the_percolator(sample, tmp_path,
                                                                                  monkeypatch):
    """With many profiles, the search page's buttons: one percolator batch for all its papers
    (not one score per paper and profile), and the same profiles as one paper at a time."""
    from watcher.matching import percolate
    from watcher.matching.compile import compile_profile
    from watcher.services.ratings import owners, owners_of

    config, db = sample
    extra = "".join(f'\n[profile.p{i}]\nquery = "{w}"\n' for i, w in enumerate(
        ["diffusion", "ti:survey", "reasoning", "au:Levine", "vision", "GRPO OR RLHF", "robot*", "agent"]))
    (tmp_path / "config.toml").write_text(config.path.read_text() + extra)
    many = load_config(tmp_path / "config.toml")
    batches = []
    real = percolate.Percolator.match
    monkeypatch.setattr(percolate.Percolator, "match",
                        lambda self, batch: batches.append(len(batch)) or real(self, batch))
    with TestClient(app_for(many, db)) as c:
        r = c.get("/search", params={"q": "learning"})
    assert r.status_code == 200
    assert len(batches) == 1 and batches[0] > 1, batches
    with Store.open(db, readonly=True) as store:
        papers = [store.get(k) for (k,) in store.db.execute("SELECT key FROM papers ORDER BY key LIMIT 60")]
        compiled = {n: compile_profile(many, n, store) for n in many.profiles}
        batches.clear()
        found = owners_of(many, store, papers, compiled.get)
        assert len(batches) == 1
        one_by_one = {}  # the rule, one paper and one profile at a time
        for p in papers:  # each delivery: the profiles its messages recorded, else its digest's
            mine = set()
            for d, ch in store.db.execute("SELECT digest, channel FROM deliveries WHERE paper = ?", [p.key]):
                shown = {n for (n,) in store.db.execute(
                    "SELECT mp.profile FROM message_papers mp JOIN messages m ON m.id = mp.message "
                    "WHERE mp.paper = ? AND m.digest = ? AND m.channel = ?", [p.key, d, ch]) if n in many.profiles}
                mine |= shown or set(many.digests[d].profiles)
            one_by_one[p.key] = sorted(mine) or sorted(n for n in many.profiles if compiled[n].score(p) is not None)
        single = owners(many, store, papers[0], compiled.get)
    assert found == one_by_one and single == found[papers[0].key]
    assert any(len(v) > 1 for v in found.values()) and any(v == [] for v in found.values())


def test_the_ledger_is_indexed_by_paper(sample):
    """The profiles delivered papers were shown under (owners_of's one query) are found
    through indexes: the ledger and the messages' papers by paper, the messages by id."""
    from watcher.store import DELIVERED_UNDER

    _, db = sample
    conn = sqlite3.connect(db)
    try:
        plan = [r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + DELIVERED_UNDER.format("?, ?"), ["a", "b"])]
    finally:
        conn.close()
    assert not [step for step in plan if step.startswith("SCAN")], plan
    joined = " ".join(plan)
    assert "deliveries_paper" in joined and "message_papers_paper" in joined, plan
    assert "SEARCH m USING INTEGER PRIMARY KEY" in joined, plan


def test_watcher_serve_hands_the_interpreter_lock_on_every_millisecond(sample, monkeypatch):
    """Pages compute in worker threads: `watcher serve` shortens the interpreter's switch
    interval so that the event loop and /healthz wait at most about 1 ms per hand-over
    (bench_concurrency.py measures what it buys)."""
    from types import SimpleNamespace

    from watcher.web import serve as serving

    config, db = sample
    seen = {}

    class Server:
        config = SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(web=SimpleNamespace())))

        def run(self, sockets):
            seen["switch"] = sys.getswitchinterval()
            for sock in sockets:
                sock.close()

    monkeypatch.setattr(serving, "server", lambda *args: Server())
    monkeypatch.setattr(serving, "signal", SimpleNamespace(SIGHUP=1, signal=lambda *args: None))
    port = free_port()
    before = sys.getswitchinterval()
    try:
        assert serving.serve(config, listen=f"127.0.0.1:{port}", echo=lambda *args: None) == 0
    finally:
        sys.setswitchinterval(before)
    assert seen["switch"] == serving.SWITCH_INTERVAL <= 0.001 < before


def test_healthz_is_answered_while_every_page_thread_is_busy(sample, monkeypatch):
    """As many searches as there are page threads are held inside their views: /healthz, which
    has threads of its own, is still answered before any of them."""
    from watcher.web import app, search

    config, db = sample
    entered = threading.Semaphore(0)
    release = threading.Event()

    def held(*args):
        entered.release()
        release.wait(60)
        return search_real(*args)

    search_real = search._search
    monkeypatch.setattr(search, "_search", held)
    results: list[httpx.Response] = []

    with live_server(config, db) as base:
        slow = [threading.Thread(target=lambda: results.append(httpx.get(f"{base}/search?q=GRPO", timeout=30)))
                for _ in range(app.THREADS)]
        for t in slow:
            t.start()
        try:
            assert all(entered.acquire(timeout=60) for _ in slow)  # every page thread is taken
            health = httpx.get(f"{base}/healthz", timeout=30)
            pending = sum(t.is_alive() for t in slow)
        finally:
            release.set()
            for t in slow:
                t.join(90)
    assert health.status_code == 200 and health.text == "ok"
    assert pending == app.THREADS
    assert [r.status_code for r in results] == [200] * app.THREADS
