"""The attacks on `watcher serve` of a security review, each refused (docs/web.md, "Security"):
another site's name (DNS rebinding), forms posted from another site, oversized uploads,
login guessing, sessions replayed after logout, and slow searches."""

from __future__ import annotations

import asyncio
import time
import re
import warnings
from dataclasses import replace
from html import unescape

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, sample_setup

from watcher.web.guard import MAX_BODY


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("websec"))


def csrf_of(response) -> str:
    return unescape(re.search(r'name="csrf" value="([^"]+)"', response.text).group(1))


# --- the Host header (DNS rebinding) --------------------------------------------------------

def test_a_request_for_another_sites_name_gets_400_and_nothing_is_recorded(sample):
    config, db = sample
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        home = c.get("/")
        assert home.status_code == 200
        token = csrf_of(home)
        evil = {"host": "rebind.attacker.example:8080"}
        assert c.get("/", headers=evil).status_code == 400
        assert c.get("/search?q=GRPO", headers=evil).status_code == 400
        r = c.post("/rate", headers=evil, data={"csrf": token, "action": "save", "paper": "2504.07615"})
        assert r.status_code == 400
        assert "2504.07615" not in c.get("/saved").text
        for name in ("127.0.0.1:8080", "localhost:8080", "[::1]:8080", "localhost"):
            assert c.get("/healthz", headers={"host": name}).status_code == 200, name


def test_the_listen_address_base_urls_host_and_the_configured_hosts_are_answered(sample):
    config, db = sample
    web = replace(config.web, host="192.168.1.5", base_url="https://papers.example.org/w",
                  secret_env="X", hosts=("inbox.lan",))
    with TestClient(app_for(replace(config, web=web), db, secret="s")) as c:
        for name in ("192.168.1.5:8080", "papers.example.org", "inbox.lan", "INBOX.lan:80"):
            assert c.get("/healthz", headers={"host": name}).status_code == 200, name
        assert c.get("/healthz", headers={"host": "other.lan"}).status_code == 400


def test_the_config_refuses_a_hosts_entry_that_is_not_a_name(tmp_path):
    from watcher.config import load_config
    from watcher.errors import ConfigError

    path = tmp_path / "c.toml"
    path.write_text('[web]\nhosts = ["inbox.lan:8080/x"]\n')
    with pytest.raises(ConfigError, match="web.hosts"):
        load_config(path)


# --- forms posted from another site ---------------------------------------------------------

def test_a_form_posted_from_another_origin_is_refused_even_with_the_csrf_token(sample):
    config, db = sample
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        token = csrf_of(c.get("/"))
        form = {"csrf": token, "action": "save", "paper": "2504.07615", "next": "/"}
        for headers in ({"origin": "http://attacker.example"}, {"origin": "null"},
                        {"referer": "http://attacker.example/page"}):
            r = c.post("/rate", headers=headers, data=form)
            assert r.status_code == 403, headers
            assert "another site" in r.text
        assert "2504.07615" not in c.get("/saved").text
        same = c.post("/rate", headers={"origin": "http://testserver"}, data=form)
        assert same.status_code == 303
        assert "2504.07615" in c.get("/saved").text
        form["action"] = "unsave"
        assert c.post("/rate", headers={"referer": "http://testserver/search?q=x"}, data=form).status_code == 303


# --- request bodies -------------------------------------------------------------------------

def _asgi(app, method: str, path: str, headers: list[tuple[bytes, bytes]], chunks):
    """Send one request straight to the ASGI app; returns (status, chunks the app read)."""
    read = []
    sent = {}
    source = iter(chunks)

    async def receive():
        chunk = next(source, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        read.append(len(chunk))
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message):
        if message["type"] == "http.response.start":
            sent["status"] = message["status"]

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
             "root_path": "", "headers": [(b"host", b"127.0.0.1:8080"), *headers],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8080)}
    asyncio.run(app(scope, receive, send))
    return sent["status"], read


def test_a_50_mb_upload_to_login_is_refused_at_once_without_reading_it(sample):
    config, db = sample
    app = app_for(config, db, password="a long enough password")
    endless = (b"x" * (1 << 20) for _ in range(50))
    status, read = _asgi(app, "POST", "/login", [
        (b"content-type", b"multipart/form-data; boundary=b"),
        (b"content-length", str(50 << 20).encode())], endless)
    assert status == 413
    assert read == []  # not one byte of it was read


def test_a_body_without_a_length_is_cut_off_past_the_cap(sample):
    config, db = sample
    app = app_for(config, db, password="a long enough password")
    endless = (b"password=" + b"x" * 8192 for _ in range(10_000))
    status, read = _asgi(app, "POST", "/login",
                         [(b"content-type", b"application/x-www-form-urlencoded")], endless)
    assert status == 413
    assert sum(read) <= MAX_BODY + 8192 + 9


def test_a_file_in_a_form_is_refused(sample):
    config, db = sample
    with TestClient(app_for(config, db, password="a long enough password"), follow_redirects=False) as c:
        token = csrf_of(c.get("/login"))
        r = c.post("/login", data={"csrf": token, "password": "x"}, files={"upload": ("a.txt", b"hello")})
        assert r.status_code == 400


# --- sessions -------------------------------------------------------------------------------

PASSWORD = "a long enough password"


def _login(c, password: str = PASSWORD):
    token = csrf_of(c.get("/login"))
    return c.post("/login", data={"csrf": token, "password": password})


@pytest.fixture
def writable(sample, tmp_path, monkeypatch):
    """(config, a writable copy of the sample database, a client maker with a password)."""
    from webkit import database_copy

    monkeypatch.setenv("WATCHER_LOGIN_DELAY", "0.01")
    config, db = sample
    db = database_copy(db, tmp_path)
    return lambda password=PASSWORD: TestClient(app_for(config, db, password=password, secret="s"),
                                                follow_redirects=False)


def test_a_cookie_replayed_after_logout_is_refused(writable):
    with writable() as c:
        assert _login(c).status_code == 303
        stolen = c.cookies["watcher_session"]
        home = c.get("/saved")
        assert home.status_code == 200
        token = csrf_of(home)
        assert c.post("/logout", data={"csrf": token}).status_code == 303
        c.cookies.clear()
        c.cookies.set("watcher_session", stolen)  # the cookie as it was before the logout
        assert c.get("/saved").status_code == 303  # to the login page
        r = c.post("/rate", data={"csrf": token, "action": "save", "paper": "2504.07615"})
        assert r.status_code == 403
        assert _login(c).status_code == 303  # a new login works
        assert c.get("/saved").status_code == 200


def test_a_new_password_ends_the_sessions_made_with_the_old_one(writable):
    with writable() as c:
        assert _login(c).status_code == 303
        cookie = c.cookies["watcher_session"]
    with writable() as c:
        c.cookies.set("watcher_session", cookie)
        assert c.get("/saved").status_code == 200  # a restart with the same password keeps it
    with writable("another long password") as c:
        c.cookies.set("watcher_session", cookie)
        assert c.get("/saved").status_code == 303


# --- login guessing -------------------------------------------------------------------------

def _guesses(base: str, waves: int, every: float, size: int = 20, rotate: bool = True):
    """``waves`` bursts of ``size`` parallel wrong passwords, each from another claimed
    address (X-Forwarded-For); returns (seconds after the start, status) of every answer."""
    import httpx

    async def attack():
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            login = await client.get("/login")
            token = csrf_of(login)
            started = time.monotonic()
            answers = []

            async def guess(n):
                headers = {"x-forwarded-for": f"10.0.{n // 250}.{n % 250 + 1}"} if rotate else {}
                r = await client.post("/login", data={"csrf": token, "password": f"guess {n}"},
                                      headers=headers)
                answers.append((time.monotonic() - started, r.status_code))

            tasks = []
            for wave in range(waves):
                tasks += [asyncio.create_task(guess(wave * size + i)) for i in range(size)]
                await asyncio.sleep(every)
            await asyncio.gather(*tasks)
            return answers

    return asyncio.run(attack())





@pytest.mark.slow  # waits out the login's deliberate delays, 30 of them
def test_parallel_guesses_from_rotated_addresses_get_at_most_5_checks_in_30_base_delays(sample, monkeypatch):
    """With [web].proxy the client is what X-Forwarded-For says, so an attacker can claim a
    new address per guess; the checks are still one at a time with a doubling wait, counted
    before it: 5 checks take at least 15 base delays, the 6th comes after 31 (base 1 s in
    use: at most 5 checks in 30 s)."""
    from webkit import live_server

    base_delay = 0.02
    monkeypatch.setenv("WATCHER_LOGIN_DELAY", str(base_delay))
    config, db = sample
    config = replace(config, web=replace(config.web, proxy=True))
    with live_server(config, db, password=PASSWORD) as base:
        answers = _guesses(base, waves=8, every=30 * base_delay / 8)
    window = 30 * base_delay
    checked = [t for t, status in answers if status == 401 and t <= window]
    assert len(checked) <= 5, sorted(answers)  # a loaded machine checks fewer, never more
    assert any(status == 401 for _, status in answers), sorted(answers)  # passwords are checked
    assert sum(status == 429 for _, status in answers) >= 15  # refused at once, nothing checked
    assert {status for _, status in answers} <= {401, 429}


@pytest.mark.slow  # waits out the login's deliberate delays
def test_without_proxy_a_forwarded_for_header_does_not_make_another_client(sample, monkeypatch):
    from webkit import live_server

    monkeypatch.setenv("WATCHER_LOGIN_DELAY", "1.0")
    config, db = sample
    for proxy, expected in ((False, [401, 429]), (True, [401, 401])):
        with live_server(replace(config, web=replace(config.web, proxy=proxy)), db, password=PASSWORD) as base:
            _guesses(base, waves=1, every=0, size=1)  # one failure: the next check waits 1 s
            answers = _guesses(base, waves=1, every=0, size=2)
        assert sorted(s for _, s in answers) == expected, proxy


def test_serve_and_check_refuse_a_short_password(tmp_path):
    import shutil

    from conftest import REPO
    from helpers import run_cli

    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    cfg = tmp_path / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[web]\npassword_env = "WATCHER_TEST_PW"\n')
    r = run_cli("serve", cwd=tmp_path, env={"WATCHER_TEST_PW": "short pw"})
    assert r.returncode == 2 and b"shorter than 12 characters" in r.stderr and b"short pw" not in r.stderr
    r = run_cli("check", cwd=tmp_path, env={"WATCHER_TEST_PW": "short pw"})
    assert r.returncode != 0 and b"shorter than 12 characters" in r.stdout + r.stderr


# --- slow statements and searches -----------------------------------------------------------

def test_a_statement_past_the_deadline_ends_with_a_503_page_and_the_server_answers_on(sample, monkeypatch):
    from watcher.web import pages

    monkeypatch.setattr(pages, "PROGRESS_STEPS", 100)  # the sample's scan is ~8,000 steps
    config, db = sample
    app = app_for(config, db)
    with TestClient(app) as c:
        app.state.web.query_timeout = 0.0  # every statement is past it after its first steps
        r = c.get("/search", params={"cat": "astro-ph.EP"})  # no query: a scan of every paper (none has it)
        assert r.status_code == 503
        assert "took longer than 0 s" in r.text and "narrower search" in r.text
        r = c.get("/profiles/llm-rl")  # another page: advice of its own, not a narrower search (QA)
        assert r.status_code == 503 and "narrower search" not in r.text
        assert "watcher explain --profile llm-rl" in r.text
        app.state.web.query_timeout = 60.0  # the same scan, given time (any loaded machine)
        assert c.get("/search", params={"cat": "astro-ph.EP"}).status_code == 200
        assert c.get("/healthz").status_code == 200


def _request(app, gone=None):
    from starlette.requests import Request

    scope = {"type": "http", "method": "GET", "path": "/search", "query_string": b"", "headers": [],
             "app": app, "server": ("127.0.0.1", 8080), "scheme": "http", "root_path": ""}
    if gone is not None:
        scope["watcher.gone"] = gone
    return Request(scope)


ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def test_a_statement_stops_when_its_client_leaves_or_the_server_stops(sample):
    """The web's connections stop a statement the moment its page's client disconnects or the
    server is asked to stop (the progress handler), long before the deadline."""
    import threading

    from watcher.web.pages import TooSlow, reading

    config, db = sample
    app = app_for(config, db)
    app.state.web.query_timeout = 60.0
    for which, why in (("gone", "the browser left"), ("stopping", "the server is stopping")):
        gone, outcome = threading.Event(), {}
        event = gone if which == "gone" else app.state.web.stopping

        def run():
            try:
                with reading(_request(app, gone)) as store:
                    store.db.execute(ENDLESS).fetchone()
            except TooSlow as e:
                outcome["detail"] = e.detail

        thread = threading.Thread(target=run)
        thread.start()
        time.sleep(0.2)
        assert thread.is_alive()  # still counting
        event.set()
        thread.join(60)  # the statement is endless: only the stop ends it
        assert not thread.is_alive() and why in outcome["detail"]


def test_sigterm_tells_the_app_to_stop_its_statements(sample):
    import signal

    from webkit import live_server  # noqa: F401  (the server of serve, as live_server builds it)
    from watcher.web.serve import Plan, bind, server

    config, db = sample
    web = replace(config.web, host="127.0.0.1", port=0)
    sock = bind(web)
    try:
        srv = server(config, Plan(web, db, None, None), sock)
        assert not srv.config.app.state.web.stopping.is_set()
        srv.handle_exit(signal.SIGTERM, None)
        assert srv.config.app.state.web.stopping.is_set() and srv.should_exit
    finally:
        sock.close()


def test_a_long_phrase_or_many_terms_are_refused_with_a_clear_message(sample):
    config, db = sample
    with TestClient(app_for(config, db)) as c:
        r = c.get("/search", params={"q": '"' + "a" * 1990 + '"'})
        assert r.status_code == 400 and "at most 200 characters" in r.text
        r = c.get("/search", params={"q": " ".join(["a"] * 1000), "order": "relevance"})
        assert r.status_code == 400 and "at most 32 words" in r.text
        ok = c.get("/search", params={"q": " ".join(["learning"] * 32), "order": "relevance"})
        assert ok.status_code == 200


def test_best_match_first_ranks_only_the_newest_candidates(sample, monkeypatch):
    from watcher.services import search
    from watcher.store import Store

    config, db = sample
    with Store.open(db) as store:
        query = search.parse_search("learning")
        newest = search.run_search(store, query, search.Filters(), limit=1000)
        assert len(newest.papers) > 10
        monkeypatch.setattr(search, "RANKED", 10)
        best = search.run_search(store, query, search.Filters(), limit=1000, order="relevance")
        assert sorted(p.key for p in best.papers) == sorted(p.key for p in newest.papers[:10])
        checked = search.run_search(store, search.parse_search("learning NOT GRPO"), search.Filters(),
                                    limit=1000, order="relevance")
        assert 0 < len(checked.papers) <= 10


# --- direction overrides --------------------------------------------------------------------

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_direction_overrides_are_stripped_from_comment_journal_ref_and_doi(sample, tmp_path):
    from datetime import date, datetime, timezone

    from webkit import database_copy

    from watcher.models import Paper
    from watcher.store import Store

    config, db = sample
    db = database_copy(db, tmp_path)
    paper = Paper(title="Bidi paper", arxiv_id="2504.99998", version=1, abstract="An abstract.",
                  comment="12 pages, \u202etxt.exe\u202c accepted", journal_ref="J. \u2067Evil\u2069 1 (2025)",
                  doi="10.1234/ab\u202ecd", announced=date(2025, 4, 12))
    assert paper.comment == "12 pages, txt.exe accepted" and paper.journal_ref == "J. Evil 1 (2025)"
    assert paper.doi == "10.1234/abcd"
    with Store.open(db) as store:
        store.upsert([paper], datetime(2025, 4, 12, 22, tzinfo=timezone.utc))
        stored = store.get("2504.99998")
    assert not any(c in (stored.comment + stored.journal_ref + stored.doi) for c in BIDI)
    with TestClient(app_for(config, db)) as c:
        page = c.get("/papers/2504.99998").text
    assert "txt.exe" in page and not any(c in page for c in BIDI)


# --- the profile page's chart and preview ---------------------------------------------------

def unrecorded(db, tmp_path):
    """A writable copy of ``db`` whose record of what each profile selects per day is gone
    (as before a first run of this version): the profile page counts its days beside itself."""
    from webkit import database_copy

    from watcher.store import Store

    tmp_path.mkdir(parents=True, exist_ok=True)
    db = database_copy(db, tmp_path)
    with Store.open(db) as store:
        store.forget_selections([])
    return db


def test_the_chart_and_preview_read_bounded_chunks_and_say_what_one_batch_would(sample, tmp_path, monkeypatch):
    """The profile page's days are counted a chunk at a time (Store.window_papers, STEP papers
    for the chart's and the preview's days; never all of them at once); what it says is what
    scoring the whole window at once said."""
    from watcher.cycle import selections
    from watcher.store import Store

    config, db = sample
    pages = {}
    read = []  # (the chunk asked for, the papers the chunk held), for every chunk read
    real = Store.window_papers

    def spy(self, start, end, chunk, narrow=None):
        for rows in real(self, start, end, chunk, narrow):
            read.append((chunk, len(rows)))
            yield rows

    monkeypatch.setattr(Store, "window_papers", spy)
    for size in (100_000, 7):
        monkeypatch.setattr(selections, "STEP", size)
        read.clear()
        with TestClient(app_for(config, unrecorded(db, tmp_path / str(size)))) as c:
            pages[size] = [c.get("/profiles/llm-rl.json").json(),
                           c.get("/profiles/llm-rl.json", params={"preview": "GRPO OR agent", "days": "30"}).json()]
        assert read and all(chunk == size and held <= size for chunk, held in read), read
    assert max(held for _, held in read) == 7 and len(read) > 2  # the 7-paper reads were cut, several times
    whole, chunked = pages[100_000], pages[7]
    assert whole[0]["match_now"] == chunked[0]["match_now"] and whole[0]["match_now"]["total"] > 0
    assert whole[1]["preview"] == chunked[1]["preview"] and whole[1]["preview"]["count"] > 0


def counting_days(monkeypatch, counted: list, windows: list | None = None):
    """Spies on the counting of the profile page's days: every day
    :func:`watcher.cycle.selections.judged_by_day` counts for its chart (beside the page or in a
    run), or :func:`~watcher.cycle.selections.counted_again` counts from its record and the papers
    added since, goes into ``counted``; every window of papers read (Store.window_papers) into
    ``windows`` as ``(start, end)``, and the papers a day's record had not seen
    (Store.changed_papers) as ``("changed", day, how many)``."""
    from watcher.cycle import selections
    from watcher.store import Store

    real, read, again, added = selections.judged_by_day, Store.window_papers, selections.counted_again, Store.changed_papers

    def spy(store, judges, todo, pause=None):
        for day, matches in real(store, judges, todo, pause):
            counted.append(day)
            yield day, matches

    def counted_again(store, day, *rest):
        counted.append(day)
        return again(store, day, *rest)

    def window_papers(self, start, end, *rest):
        windows.append((start, end))
        return read(self, start, end, *rest)

    def changed_papers(self, day, *rest):
        for chunk in added(self, day, *rest):
            windows.append(("changed", day, len(chunk)))
            yield chunk

    monkeypatch.setattr(selections, "judged_by_day", spy)
    monkeypatch.setattr(selections, "counted_again", counted_again)
    if windows is not None:
        monkeypatch.setattr(Store, "window_papers", window_papers)
        monkeypatch.setattr(Store, "changed_papers", changed_papers)


def test_the_chart_is_counted_once_per_day_and_again_only_for_a_day_that_changed(sample, tmp_path, monkeypatch):
    """A day's count is recorded once: a reload, and a new server, read it; a day whose papers
    changed since is counted again, alone, from its record and the papers added to it."""
    from datetime import date, datetime, timezone

    from watcher.models import Paper
    from watcher.store import Store

    config, db = sample
    db = unrecorded(db, tmp_path)
    counted, windows = [], []
    counting_days(monkeypatch, counted, windows)
    with TestClient(app_for(config, db)) as c:
        first = c.get("/profiles/llm-rl.json").json()["match_now"]["total"]
        days = len(counted)
        assert days > 1 and len(set(counted)) == days  # each day counted once
        assert c.get("/profiles/llm-rl.json").json()["match_now"]["total"] == first
    with TestClient(app_for(config, db)) as c:  # recorded: a new server reads the record too
        assert c.get("/profiles/llm-rl.json").json()["match_now"]["total"] == first
        assert len(counted) == days and len(windows) == 1  # nothing counted or read again
        with Store.open(db) as store:
            store.upsert([Paper(title="GRPO for LLM agents", arxiv_id="2504.99997", version=1,
                                abstract="Reinforcement learning with GRPO for a large language model.",
                                announced=date(2025, 4, 10))], datetime(2025, 4, 12, 22, tzinfo=timezone.utc))
        assert c.get("/profiles/llm-rl.json").json()["match_now"]["total"] == first + 1
        assert counted[days:] == [date(2025, 4, 10)]  # only the day that changed
        assert windows[1:] == [("changed", date(2025, 4, 10), 1)]  # and only the paper added read
        from watcher.services.ratings import apply_rating

        with Store.open(db) as store:  # a rating changes the matcher: every day counted again
            apply_rating(store, "up", "llm-rl", "2504.99997", "web", profiles=config.profiles)
        c.get("/profiles/llm-rl.json")
        assert sorted(counted[days + 1:]) == sorted(counted[:days])


def test_a_rating_counts_the_chart_again_for_a_profile_without_examples(sample, tmp_path, monkeypatch):
    """The profile learns from a rating of a stored paper: its chart's days, as the run recorded
    them, are counted again (and what the ratings changed with them, in the same reading)."""
    from webkit import database_copy

    from watcher.cycle.selections import CHART_DAYS
    from watcher.services.ratings import apply_rating
    from watcher.store import Store

    config, db = sample
    assert not config.profiles["llm-rl"].examples
    db = database_copy(db, tmp_path)
    counted = []
    counting_days(monkeypatch, counted)
    with Store.open(db) as store:
        recorded = sorted(store.selections("llm-rl", *store.recent_days(CHART_DAYS)))
    with TestClient(app_for(config, db)) as c:
        c.get("/profiles/llm-rl.json")
        assert counted == [] and len(recorded) > 1  # the run's record
        with Store.open(db) as store:
            key = store.db.execute("SELECT key FROM papers ORDER BY key LIMIT 1").fetchone()[0]
            apply_rating(store, "up", "llm-rl", key, "web", profiles=config.profiles)
        c.get("/profiles/llm-rl.json")
        assert sorted(counted) == recorded


def test_one_chart_computation_at_a_time_per_profile(sample, tmp_path, monkeypatch):
    """Parallel requests for one profile page count its days once: the others wait for it
    and read what it recorded."""
    import threading

    from watcher.cycle import selections

    config, db = sample
    db = unrecorded(db, tmp_path)
    running, most, counted = [0], [0], []
    lock = threading.Lock()
    real = selections.judged_by_day

    def slow(store, judges, todo, pause=None):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            for day, matches in real(store, judges, todo, pause):
                time.sleep(0.01)  # time for another request to start counting, were it let
                with lock:
                    counted.append(day)
                yield day, matches
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(selections, "judged_by_day", slow)
    with TestClient(app_for(config, db)) as c:
        threads = [threading.Thread(target=c.get, args=("/profiles/llm-rl",)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert most[0] == 1
        assert counted and len(counted) == len(set(counted))  # each day counted once
