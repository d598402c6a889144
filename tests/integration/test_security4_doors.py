"""Security, fourth round: the newer doors held to the standard of the older ones. Every paged
client (Zotero, OpenAlex) bounded by pages, items, bytes and time; the redirect guard checks
the address actually connected to; the apprise channel has the webhook's deadline and
redirect rule; Zotero's write-back is exactly once for every title; a slow Zotero never holds
a web page; one mistyped Zotero item never fails the sync. Real local servers throughout."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from helpers import QuietHTTPServer, fast_client
from httpserver import Reply, server  # noqa: F401
from test_security3 import DripServer, outside_address
from test_zotero import NOW, READS, SAVES, make_config, papers, save, store, translator_item  # noqa: F401
from zoteroserver import zotero  # noqa: F401

from watcher.zotero import client as zotero_mod
from watcher.zotero import sync as zotsync
from watcher.errors import DeliveryError, SourceError

ITEMS = f"/users/1/collections/{READS}/items/top"


def stand_in(tmp_path, monkeypatch, server, pages):  # noqa: F811
    """A hostile Zotero on ``server``: the versions answer names one item (AAAA2345), and
    ``pages(request)`` answers each page of items; the profile's config."""
    from types import SimpleNamespace

    def items(request):
        if request.query.get("format") == "versions":
            return Reply(body=b'{"AAAA2345": 1}', headers={"Last-Modified-Version": "1"})
        return pages(request)

    server.route(ITEMS, items)
    monkeypatch.setenv("ZOTERO_TEST_KEY", "read-key-0123")
    return make_config(tmp_path, SimpleNamespace(user=1, url=server.base), extra="")


def next_link(server, request) -> dict:  # noqa: F811
    start = int(request.query.get("start", 0)) + 100
    return {"Link": f'<{server.url(ITEMS)}?format=json&since=0&limit=100&start={start}>; rel="next"',
            "Last-Modified-Version": "1"}


# --- 3. a Link: rel="next" loop of empty pages ends ---------------------------------------------

def test_a_zotero_next_link_loop_of_empty_pages_ends_at_the_page_cap(tmp_path, store, server, monkeypatch):  # noqa: F811
    guard = 500  # before the fix the loop never ended: the stand-in stops it here
    monkeypatch.setattr(zotero_mod, "MAX_PAGES", 40, raising=False)  # 250 in use

    def empty(request):
        asked = len(server.hits(ITEMS))
        return Reply(body=b"[]", headers=next_link(server, request) if asked < guard else {})

    config = stand_in(tmp_path, monkeypatch, server, empty)
    [error] = zotsync.sync(config, store, NOW).values()
    assert len(server.hits(ITEMS)) <= 41, len(server.hits(ITEMS))  # the versions answer and 40 pages
    assert error and "still paging after 40 pages (0 items)" in error and "\n" not in error, error
    assert "FAILING" in "\n".join(zotsync.status_lines(config, store))  # said, and nothing kept


def test_zotero_paging_ends_at_its_total_deadline(tmp_path, store, server, monkeypatch):  # noqa: F811
    """Pages that each come in time, but never end: the read has READ_TIMEOUTS x timeout."""
    monkeypatch.setattr(zotero_mod, "READ_TIMEOUTS", 0.2)  # 5 s timeout: a read of 1 s
    config = stand_in(tmp_path, monkeypatch, server,
                      lambda request: Reply(body=b"[]", delay=0.05, headers=next_link(server, request)))
    started = time.monotonic()
    [error] = zotsync.sync(config, store, NOW).values()
    assert "still paging after 1 s" in error, error
    assert time.monotonic() - started < 20 and len(server.hits(ITEMS)) < zotero_mod.MAX_PAGES


# --- 4. memory across pages ---------------------------------------------------------------------

def big_item(i: int, size: int) -> dict:
    return {"key": "AAAA2345", "version": 1, "data": {"key": "AAAA2345", "itemType": "preprint",
                                                      "title": f"Paper {i}", "abstractNote": "x" * size}}


def test_zotero_pages_of_huge_items_end_at_the_byte_cap(tmp_path, store, server, monkeypatch):  # noqa: F811
    monkeypatch.setattr(zotero_mod, "MAX_READ_BYTES", 8 << 20)  # 8 MB here; 256 MB in use
    page = json.dumps([big_item(i, 300_000) for i in range(10)]).encode()  # 3 MB a page
    guard = 60  # 180 MB before the fix; the stand-in stops there

    def huge(request):
        more = len(server.hits(ITEMS)) < guard
        return Reply(body=page, headers=next_link(server, request) if more else {"Last-Modified-Version": "1"})

    config = stand_in(tmp_path, monkeypatch, server, huge)
    [error] = zotsync.sync(config, store, NOW).values()
    assert error and "still paging after 8,388,608 bytes" in error, error
    assert len(server.hits(ITEMS)) <= 6  # the versions answer, then 4 pages of 3 MB: cut there


def test_one_zotero_page_of_300000_items_is_refused_before_it_is_parsed(tmp_path, store, server, monkeypatch):  # noqa: F811
    many = b"[" + b",".join(b'{"key":"A","data":{}}' for _ in range(300_000)) + b"]"  # 6 MB
    config = stand_in(tmp_path, monkeypatch, server, lambda request: Reply(body=many))
    [error] = zotsync.sync(config, store, NOW).values()
    assert error and "more than 100,000 objects and arrays" in error, error
    # a page of more items than asked is refused too, however small each is
    config = stand_in(tmp_path, monkeypatch, server,
                      lambda request: Reply(body=json.dumps([{"key": f"K{i}"} for i in range(150)]).encode()))
    [error] = zotsync.sync(config, store, NOW).values()
    assert error and "a page of 150 items, more than the 100 asked" in error, error


def openalex_config(tmp_path, server, name="oa"):  # noqa: F811
    from watcher.config import load_config

    (tmp_path / "config.toml").write_text(f"""
[watcher]
database = "watcher.db"
[source.{name}]
type = "openalex"
url = "{server.url('/oa')}"
search = "graph neural networks"
first_fetch = "3d"
""")
    return load_config(tmp_path / "config.toml")


def fetch_openalex(config, name="oa"):
    from datetime import datetime, timezone

    from helpers import context
    from watcher.sources import make_source

    ctx = context(fast_client(), now=datetime(2026, 4, 13, tzinfo=timezone.utc))
    return make_source(config.sources[name], ctx).fetch({})


def work(i: int, abstract_words: int = 0) -> dict:
    return {"id": f"https://openalex.org/W{1000 + i}", "title": f"Work {i} on graphs",
            "publication_date": "2026-04-12", "created_date": "2026-04-12", "type": "article",
            "abstract_inverted_index": {f"w{j}": [j] for j in range(abstract_words)} or None}


def test_openalex_ignoring_per_page_is_refused_and_a_run_is_bounded_in_works_and_bytes(tmp_path, server, monkeypatch):  # noqa: F811
    from watcher.sources import openalex

    # a page of 5,000 works where 200 were asked
    page = json.dumps({"meta": {"count": 5000, "next_cursor": "more"},
                       "results": [work(i) for i in range(5000)]}).encode()
    server.route("/oa/works", Reply(body=page, headers={"Content-Type": "application/json"}))
    with pytest.raises(SourceError, match="a page of 5,000 works, more than the 200 asked"):
        fetch_openalex(openalex_config(tmp_path, server))
    assert len(server.hits("/oa/works")) == 1
    # pages of 200 that never end: cut at the works cap (here 1,000), in one line
    monkeypatch.setattr(openalex, "MAX_WORKS", 1000)
    server.requests.clear()
    page = json.dumps({"meta": {"count": 10**6, "next_cursor": "more"},
                       "results": [work(i) for i in range(200)]}).encode()
    server.route("/oa/works", Reply(body=page, headers={"Content-Type": "application/json"}))
    with pytest.raises(SourceError, match="more than 1,000 works in one read"):
        fetch_openalex(openalex_config(tmp_path, server))
    assert len(server.hits("/oa/works")) == 6
    # big pages: cut at the bytes cap (here 4 MB)
    monkeypatch.setattr(openalex, "MAX_RUN_BYTES", 4 << 20)
    server.requests.clear()
    page = json.dumps({"meta": {"count": 10**6, "next_cursor": "more"},
                       "results": [work(i, 3000) for i in range(50)]}).encode()  # ~2 MB a page
    server.route("/oa/works", Reply(body=page, headers={"Content-Type": "application/json"}))
    with pytest.raises(SourceError, match="still paging after 4,194,304 bytes"):
        fetch_openalex(openalex_config(tmp_path, server))
    assert len(server.hits("/oa/works")) <= 3


def test_an_openalex_run_that_fails_its_bounds_leaves_the_cycle_going(tmp_path, server):  # noqa: F811
    """The bound is one source's failure: the other sources still deliver."""
    from datetime import datetime, timezone

    from conftest import run_watcher

    today = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    page = json.dumps({"meta": {"count": 5000, "next_cursor": "more"},
                       "results": [work(i) for i in range(5000)]}).encode()
    server.route("/oa/works", Reply(body=page, headers={"Content-Type": "application/json"}))
    server.route("/feed.json", Reply(body=json.dumps([{"title": "A graph neural network paper",
                                                       "arxiv_id": "2604.00001",
                                                       "published": today}]).encode()))
    openalex_config(tmp_path, server)
    (tmp_path / "config.toml").write_text((tmp_path / "config.toml").read_text() + f"""
[source.list]
type = "listing"
url = "{server.url('/feed.json')}"
[profile.graphs]
query = "graph"
[digest.daily]
profiles = ["graphs"]
channels = ["out"]
schedule = "0 0 * * *"
[channel.out]
type = "file"
path = "out/{{digest}}.{{ext}}"
""")
    r = run_watcher("once", cwd=tmp_path, env={"WATCHER_HTTP_RETRIES": "0"})
    err = r.stderr.decode()
    assert "more than the 200 asked" in err and "Traceback" not in err, err
    assert "A graph neural network paper" in "".join(p.read_text() for p in (tmp_path / "out").glob("*")), (err, r.stdout)


# --- 5. the redirect guard --------------------------------------------------------------------

def test_shared_link_local_reserved_and_metadata_addresses_are_not_public():
    from watcher.util.http import _reach

    for inner in ("100.64.0.1", "100.100.100.200", "169.254.169.254", "192.0.0.192", "0.0.0.1",
                  "240.0.0.1", "198.18.0.1", "fd00:ec2::254", "fe80::1", "::ffff:100.100.100.200",
                  "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "224.0.0.1"):
        assert _reach(inner) >= 1, inner
    assert _reach("::ffff:127.0.0.1") == _reach("64:ff9b::7f00:1") == 2
    assert _reach("93.184.216.34") == _reach("2606:4700::1111") == 0


def test_a_name_that_resolves_public_when_checked_and_loopback_when_connected_is_not_followed(monkeypatch):
    """DNS rebinding: the guard's lookup says public, the connection's lookup says loopback.
    The address the connection actually reached is checked before the request is sent."""
    outside = outside_address()
    if outside is None:
        pytest.skip("this machine has no address but loopback")
    from http.server import BaseHTTPRequestHandler

    seen = []

    class Handler(BaseHTTPRequestHandler):  # on every address: its loopback one is the target
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append(self.path)
            port = self.server.server_address[1]
            where = {"/feed": f"http://rebound.test:{port}/admin"}.get(self.path)
            self.send_response(302 if where else 200)
            if where:
                self.send_header("Location", where)
            self.send_header("Content-Length", "0" if where else "8")
            self.end_headers()
            if not where:
                self.wfile.write(b"internal")

    wide = QuietHTTPServer(("0.0.0.0", 0), Handler)
    port = wide.server_address[1]
    threading.Thread(target=wide.serve_forever, args=(0.02,), daemon=True).start()
    real = socket.getaddrinfo
    looked = []

    def rebinding(host, *args, **kw):  # the first answer public, every later one loopback
        if host != "rebound.test":
            return real(host, *args, **kw)
        looked.append(host)
        address = "93.184.216.34" if len(looked) == 1 else "127.0.0.1"
        return real(address, *args, **kw)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    try:
        client = fast_client()
        with pytest.raises(SourceError, match=r"reached 127\.0\.0\.1.*loopback.*not followed"):
            client.get(f"http://{outside}:{port}/feed")
        assert len(looked) >= 2 and seen == ["/feed"]  # the inner service got no request
    finally:
        wide.shutdown()
        wide.server_close()


# --- 6. the apprise channel ---------------------------------------------------------------------

def apprise_channel(monkeypatch, url, timeout=30.0):
    pytest.importorskip("apprise")
    from watcher.deliver import channel_config
    from watcher.deliver import DeliveryContext, make_channel

    monkeypatch.setenv("T_APPRISE", url)
    return make_channel(channel_config(name="phone", type="apprise", urls_env="T_APPRISE", timeout=timeout),
                        DeliveryContext())


@pytest.mark.parametrize("where", ["headers", "body"])
def test_an_apprise_service_dripping_its_answer_fails_after_about_its_timeout(monkeypatch, where):
    from deliverkit import sample_digest

    drip = DripServer(where, every=0.3, total=200)  # 60 s to the end
    try:
        channel = apprise_channel(monkeypatch, f"json://127.0.0.1:{drip.port}/hook", timeout=1.0)
        started = time.monotonic()
        with pytest.raises(DeliveryError, match=r"URL 1 of 1 \(json://…\): no answer within 1 s"):
            channel.send(sample_digest(2), {})
        took = time.monotonic() - started
    finally:
        drip.close()
    assert took < 30 and drip.sent < 100, (took, drip.sent)  # not the drip's 60 s


def test_an_apprise_service_redirecting_is_not_followed(server, monkeypatch):  # noqa: F811
    from deliverkit import sample_digest

    server.route("/hook", Reply(status=307, headers={"Location": server.url("/inner")}))
    server.route("/inner", Reply(body=b"{}"))
    channel = apprise_channel(monkeypatch, f"json://127.0.0.1:{server.httpd.server_address[1]}/hook")
    with pytest.raises(DeliveryError, match=r"URL 1 of 1 \(json://…\): .*redirect.*not followed"):
        channel.send(sample_digest(2), {})
    assert len(server.hits("/hook")) == 1 and server.hits("/inner") == []  # the digest posted once


# --- 7. Zotero's write-back: exactly once, whatever the title ---------------------------------

def test_a_latex_title_is_saved_to_zotero_once_after_a_lost_answer(tmp_path, zotero, store, monkeypatch):  # noqa: F811
    from watcher.models import Paper

    monkeypatch.setenv("ZOTERO_TEST_KEY", "write-key-4567")
    config = make_config(tmp_path, zotero)
    paper = Paper(title=r"$\alpha$-Divergence Bounds for $k$-Means Clustering", doi="10.5555/alpha.k",
                  authors=["Ada Lovelace"], abstract="Bounds.", source="test")
    store.upsert([paper], NOW)
    save(store, config, paper.key)
    zotero.lose_answer = 1  # Zotero makes the item, the answer never arrives
    zotsync.push(config, store, NOW)
    for _ in range(3):  # the next cycles
        zotsync.push(config, store, NOW)
    [item] = zotero.in_collection(SAVES)
    assert item["title"] == "α-Divergence Bounds for k-Means Clustering"
    assert len([m for m, _, _ in zotero.requests if m == "POST"]) <= 2
    assert "1 added to Zotero, 0 queued" in "\n".join(zotsync.status_lines(config, store))


# --- 9. one mistyped Zotero item --------------------------------------------------------------

def test_one_mistyped_zotero_item_is_skipped_and_counted_the_sync_goes_on(tmp_path, zotero, store, papers, monkeypatch):  # noqa: F811
    from watcher.cycle.status import status_text

    monkeypatch.setenv("ZOTERO_TEST_KEY", "read-key-0123")
    zotero.add(translator_item(papers["1306.4664"]), [READS])
    bad = zotero.add({"itemType": "preprint", "title": "A mistyped item", "creators": [{"name": ["x"]}]}, [READS])
    zotero.add({"itemType": "preprint", "title": ["not", "text"]}, [READS])
    config = make_config(tmp_path, zotero, extra="")
    assert list(zotsync.sync(config, store, NOW).values()) == [None]
    assert [p.arxiv_id for p in zotsync.examples(store, config.profiles["mine"])] == ["1306.4664"]
    text = status_text(config, NOW, store)
    [line] = [x for x in text.splitlines() if f"collection {READS}" in x]
    assert "last sync never" not in line and "(1 items)" in line and "FAILING" not in line, line
    assert "2 items skipped, not readable as papers" in line, line
    assert f"item {bad}: creators[0].name is a JSON array, not text" in line or "title is a JSON array" in line


# --- 8. a slow Zotero never holds a web page -------------------------------------------------------

def test_web_saves_with_a_stalled_zotero_are_queued_and_the_pages_answer_at_once(tmp_path, zotero, store, monkeypatch):  # noqa: F811
    from dataclasses import replace as dc_replace

    from starlette.testclient import TestClient
    from webkit import app_for

    from watcher.present.links import make_token

    monkeypatch.setenv("ZOTERO_TEST_KEY", "write-key-4567")
    monkeypatch.setenv("T_LINK_SECRET", "a secret only the server knows")
    config = make_config(tmp_path, zotero)
    config = dc_replace(config, web=dc_replace(config.web, base_url="http://testserver", secret_env="T_LINK_SECRET"))
    zotero.collections.add(SAVES)
    zotero.stall = threading.Event()  # Zotero hangs: every answer waits until the test lets it go
    link = "/r/" + make_token("a secret only the server knows", "save", "mine", "2306.07400")
    app = app_for(config, tmp_path / "watcher.db")
    try:
        with TestClient(app, follow_redirects=False) as web:
            started = time.monotonic()
            for _ in range(3):  # three POSTs of one Save link
                r = web.post(link, data={"action": "save"})
                assert r.status_code == 200 and "Zotero: queued" in r.text, r.text
            status = web.get("/status")
            took = time.monotonic() - started
            assert status.status_code == 200 and "saves: 0 added to Zotero, 1 queued" in status.text, status.text
            assert not zotero.stall.is_set() and zotero.items == {}  # Zotero has answered nothing yet
            assert took < 20, took  # the stall holds for 60 s: the pages never waited on it
            zotero.stall.set()
            for _ in range(200):  # the background worker adds it once Zotero answers
                if not zotsync.pushing(tmp_path / "watcher.db") and zotero.in_collection(SAVES):
                    break
                time.sleep(0.05)
            assert "saves: 1 added to Zotero, 0 queued" in web.get("/status").text
    finally:
        zotero.stall.set()
    assert len(zotero.in_collection(SAVES)) == 1
    assert len([m for m, _, _ in zotero.requests if m == "POST"]) == 1


# --- 4. the other paged sources: PubMed, bioRxiv, arXiv's OAI-PMH -------------------------------

def test_pubmed_claiming_a_billion_records_is_refused_before_any_fetch(server):  # noqa: F811
    from test_sources_bio import pubmed, serve_pubmed

    serve_pubmed(server)
    server.route("/eutils/esearch.fcgi", Reply(body=json.dumps({"esearchresult": {
        "count": "1000000000", "retmax": "0", "retstart": "0", "querykey": "1", "webenv": "MCID_1",
        "idlist": []}}).encode()))
    with pytest.raises(SourceError, match="PubMed found 1,000,000,000 records, more than the 30,000 one run reads"):
        pubmed(server).fetch({})
    assert server.hits("/eutils/efetch.fcgi") == []


def test_biorxiv_pages_without_end_stop_at_the_records_bound(server, monkeypatch):  # noqa: F811
    from test_sources_bio import DAY1, bio

    from helpers import data
    from watcher.sources import biorxiv

    page = json.loads(data(DAY1))
    page["messages"][0]["total"] = "1000000000"  # every cursor answers the same four records
    server.route("/api/details/*", Reply(body=json.dumps(page).encode()))
    monkeypatch.setattr(biorxiv, "MAX_RECORDS", 40, raising=False)  # 100,000 in use
    with pytest.raises(SourceError, match="bioRxiv API sent more than 40 records in one read"):
        bio(server).fetch({})
    assert len(server.requests) == 11


def test_an_oai_harvest_without_end_stops_at_the_records_bound(server, monkeypatch):  # noqa: F811
    from test_sources_feeds import make, with_token

    from helpers import data
    from watcher.sources import arxiv_oai

    page = with_token(data("oai_ListRecords_arxiv-physics-hep-ex.xml"), "tok|100")  # always more
    server.route("/oai", Reply(body=page))
    monkeypatch.setattr(arxiv_oai, "MAX_RECORDS", 20, raising=False)  # 500,000 in use
    monkeypatch.setattr(arxiv_oai, "MAX_PAGES", 60)  # the bound before: 10,000 pages
    with pytest.raises(SourceError, match="more than 20 records in one read"):
        make(server, "arxiv-oai", "/oai").fetch({})
    assert len(server.hits("/oai")) < 10
