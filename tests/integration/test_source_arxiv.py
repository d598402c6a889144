"""The arxiv source against a real local server: paging, incremental fetch, faults, errors."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from arxivserver import PagedFeed
from helpers import context, data, fast_client
from httpserver import Reply, server  # noqa: F401

from watcher.sources import source_config
from watcher.errors import SourceError
from watcher.formats import arxiv_atom
from watcher.sources import arxiv as arxiv_module
from watcher.sources import make_source

PAGE = "arxivpy2026_q_testing_s0_m100_cfe7536492ca.xml"
NOW = datetime(2026, 4, 13, 12, 0, tzinfo=timezone.utc)
ALL = arxiv_atom.parse(data(PAGE), "t").papers


def source(server, client=None, *, page_size=30, since=None, first_fetch=timedelta(days=365 * 30),
           timeout=10.0):
    cfg = source_config(name="arxiv-ml", type="arxiv", url=server.url("/api/query"), query="all:testing",
                       page_size=page_size, timeout=timeout, first_fetch=first_fetch)
    return make_source(cfg, context(client or fast_client(), NOW, since))


def test_full_fetch_pages_through_total(server):
    feed = PagedFeed(data(PAGE))
    server.route("/api/query", feed.reply)
    result = source(server).fetch({})
    assert sorted(p.key for p in result.papers) == sorted(p.key for p in ALL)
    assert all(p.source == "arxiv-ml" for p in result.papers)
    hits = server.hits("/api/query")
    assert [int(r.query["start"]) for r in hits] == [0, 30, 60, 90]
    q = hits[0].query
    assert (q["sortBy"], q["sortOrder"], q["max_results"]) == ("submittedDate", "descending", "30")
    assert q["search_query"].startswith("(all:testing) AND submittedDate:[")
    newest = max(p.published for p in ALL)
    assert result.state["newest"] == newest.isoformat().replace("+00:00", "Z")


def test_first_fetch_reaches_back_only_first_fetch(server):
    server.route("/api/query", PagedFeed(data(PAGE)).reply)
    since = NOW - timedelta(days=400)
    result = source(server, first_fetch=timedelta(days=400)).fetch({})
    expected = {p.key for p in ALL if p.published >= since}
    assert {p.key for p in result.papers} == expected and expected
    assert len(server.hits("/api/query")) == 1  # the first page already reaches older papers


def test_incremental_from_newest_stored_with_overlap(server):
    server.route("/api/query", PagedFeed(data(PAGE)).reply)
    newest = datetime(2024, 6, 1, tzinfo=timezone.utc)
    result = source(server).fetch({"newest": "2024-06-01T00:00:00Z"})
    since = newest - arxiv_module.OVERLAP
    assert {p.key for p in result.papers} == {p.key for p in ALL if p.published >= since}
    assert f"submittedDate:[{since:%Y%m%d%H%M} TO" in server.hits("/api/query")[0].query["search_query"]
    assert result.state["newest"] > "2024-06-01"


def late_entry(raw: bytes, ident: str, published: datetime) -> bytes:
    """The feed ``raw`` with one more entry: a copy of its first entry under a new id, submitted
    at ``published`` (a paper announced days after its submission)."""
    first = raw.index(b"<entry>")
    entry = raw[first:raw.index(b"</entry>", first) + len(b"</entry>")]
    stamp = published.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    late = re.sub(rb"\d{4}\.\d{5}v1", ident.encode() + b"v1", entry)
    late = re.sub(rb"<title>[^<]*</title>", b"<title>A paper held in moderation</title>", late)
    late = re.sub(rb"<(published|updated)>[^<]+<", rb"<\1>" + stamp + b"<", late)
    return raw[:first] + late + b"\n" + raw[first:]


@pytest.mark.parametrize("days_late", [5, 9])
def test_a_paper_announced_days_after_submission_still_arrives(server, days_late):
    raw = data(PAGE)
    server.route("/api/query", PagedFeed(raw).reply)
    first = source(server).fetch({})
    newest = max(p.published for p in first.papers)
    # a week on: one paper submitted days before the newest is announced only now (moderation,
    # a holiday backlog), alongside nothing newer
    late = newest - timedelta(days=days_late)
    server.route("/api/query", PagedFeed(late_entry(raw, "2604.99999", late)).reply)
    again = source(server).fetch(first.state)
    assert "2604.99999" in {p.key for p in again.papers}
    assert again.state["newest"] == first.state["newest"]


def test_nothing_new_keeps_state(server):
    server.route("/api/query", PagedFeed(data(PAGE)).reply)
    state = {"newest": "2030-01-01T00:00:00Z"}
    result = source(server).fetch(state)
    assert result.papers == [] and result.state == state


def test_backfill_since_overrides_state(server):
    server.route("/api/query", PagedFeed(data(PAGE)).reply)
    since = datetime(2025, 1, 1, tzinfo=timezone.utc)
    result = source(server, since=since).fetch({"newest": "2026-04-01T00:00:00Z"})
    assert {p.key for p in result.papers} == {p.key for p in ALL if p.published >= since}


def test_faults_between_pages_lose_and_duplicate_nothing(server):
    feed = PagedFeed(data(PAGE))
    script = {30: [Reply(status=503)] * 3, 60: [Reply(status=429, headers={"Retry-After": "2"})],
              90: [Reply(fault="reset"), Reply(fault="truncate", body=feed.page(90, 30))]}

    def reply(request):
        pending = script.get(int(request.query["start"]))
        return pending.pop(0) if pending else feed.reply(request)

    server.route("/api/query", reply)
    client = fast_client()
    result = source(server, client).fetch({})
    keys = [p.key for p in result.papers]
    assert len(keys) == len(set(keys)) == 100
    assert 2.0 in client.sleep  # Retry-After honoured
    assert len(server.hits("/api/query")) == 4 + 3 + 1 + 2


def test_error_feed_is_a_source_error_naming_the_query(server):
    server.route("/api/query", Reply(status=400, body=data("arxivpy2026_id_abc_s0_m100_b79c8dcf6bc3.xml")))
    with pytest.raises(SourceError, match=r"incorrect id format for abc.*check the query .*all:testing"):
        source(server).fetch({})


def test_error_feed_with_status_200_too(server):
    server.route("/api/query", Reply(body=data("arxivpy2026_id_abc_s0_m100_b79c8dcf6bc3.xml")))
    with pytest.raises(SourceError, match="arXiv API error"):
        source(server).fetch({})


def test_html_error_page(server):
    server.route("/api/query", Reply(body=b"<!DOCTYPE html><html><body><h1>Rate exceeded</h1></body></html>",
                                     headers={"Content-Type": "text/html"}))
    with pytest.raises(SourceError, match="HTML page where an arXiv API Atom feed was expected"):
        source(server).fetch({})


def test_persistent_truncation_is_a_source_error(server):
    server.route("/api/query", Reply(fault="truncate", body=data(PAGE)))
    with pytest.raises(SourceError, match="connection broken"):
        source(server).fetch({})


def test_timeout_is_a_source_error(server):
    server.route("/api/query", Reply(fault="stall", delay=5))  # answered within the client's 10 s
    with pytest.raises(SourceError, match="timed out"):  # so only the source's timeout times it out
        source(server, fast_client(retries=1), timeout=0.3).fetch({})


def test_empty_page_short_of_total_fails_rather_than_skips(server):
    feed = PagedFeed(data(PAGE))
    empty = feed.head.replace(b"<opensearch:totalResults>214881", b"<opensearch:totalResults>100") + feed.tail
    server.route("/api/query", lambda r: Reply(body=empty) if int(r.query["start"]) == 30 else feed.reply(r))
    with pytest.raises(SourceError, match="kept returning empty pages at start=30"):
        source(server).fetch({})
    assert len(server.hits("/api/query")) == 1 + arxiv_module.EMPTY_PAGE_TRIES


def test_30000_result_cap(server, monkeypatch):
    monkeypatch.setattr(arxiv_module, "MAX_START", 50)
    server.route("/api/query", PagedFeed(data(PAGE)).reply)
    result = source(server).fetch({})
    assert len(result.papers) == 50
    assert [int(r.query["start"]) for r in server.hits("/api/query")] == [0, 30]
    assert server.hits("/api/query")[1].query["max_results"] == "20"


def test_server_ignoring_start_does_not_loop(server):
    server.route("/api/query", Reply(body=data(PAGE)))  # always the same page, total 214881
    result = source(server, page_size=100).fetch({})
    assert len(result.papers) == 100
    assert len(server.hits("/api/query")) == 2
