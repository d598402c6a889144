"""The arxiv-rss, arxiv-oai, hf-daily and listing sources against a real local server."""

from __future__ import annotations

import gzip
import json
from datetime import date, datetime, timedelta, timezone

import pytest

from helpers import context, data, fast_client
from httpserver import Reply, server  # noqa: F401
from test_formats_arxiv import RSS2, with_token

from watcher.sources import source_config
from watcher.errors import SourceError
from watcher.sources import make_source
from watcher.store import Store

NOW = datetime(2025, 4, 14, 12, 0, tzinfo=timezone.utc)


def make(server, type_, path="/", now=NOW, since=None, client=None, **kw):
    cfg = source_config(name=f"my-{type_}", type=type_, url=server.url(path) if server else None,
                       timeout=10.0, **kw)
    return make_source(cfg, context(client or fast_client(), now, since))


# --- arxiv-rss -----------------------------------------------------------------------------

def test_rss_default_url_joins_categories():
    src = make(None, "arxiv-rss", categories=("cs.CL", "cs.LG"))
    assert src.url == "https://rss.arxiv.org/rss/cs.CL+cs.LG"


def test_rss_fetch_then_not_modified(server):
    def reply(req):
        if req.headers.get("if-none-match") == '"d1"':
            return Reply(status=304)
        return Reply(body=data(RSS2), headers={"ETag": '"d1"', "Last-Modified": "Thu, 24 Sep 2026 08:58:05 GMT"})

    server.route("/rss/cs.LG+cs.AI", reply)
    src = make(server, "arxiv-rss", "/rss/cs.LG+cs.AI", categories=("cs.LG", "cs.AI"))
    first = src.fetch({})
    assert [p.announce_type for p in first.papers] == ["new", "new", "cross", "replace"]
    assert all(p.source == "my-arxiv-rss" and p.announced == date(2026, 9, 24) for p in first.papers)
    assert first.state == {"etag": '"d1"', "last_modified": "Thu, 24 Sep 2026 08:58:05 GMT",
                           "feed_day": "2026-09-24"}
    second = src.fetch(first.state)
    assert second.not_modified and second.papers == [] and second.state == first.state


def test_rss_replacement_of_unknown_paper_is_stored_not_new(server, tmp_path):
    server.route("/rss", Reply(body=data(RSS2)))
    result = make(server, "arxiv-rss", "/rss", categories=("cs.LG",)).fetch({})
    with Store.open(tmp_path / "w.db") as store:
        counts = store.upsert(result.papers, NOW)
        assert len(counts.new) == 4
        replaced = store.get("2009.13987")
        assert replaced.announce_type == "replace" and replaced.version == 3
        row = next(store.db["papers"].rows_where("key = ?", ["2009.13987"]))
        assert row["listed_as_new"] == 0


def test_rss_empty_weekend_feed(server):
    head = data(RSS2).partition(b"<item>")[0]
    server.route("/rss", Reply(body=head + b"</channel></rss>"))
    result = make(server, "arxiv-rss", "/rss", categories=("cs.LG",)).fetch({})
    assert result.papers == [] and not result.not_modified


def test_rss_html_and_truncated_feed_are_source_errors(server):
    server.route("/rss", Reply(body=b"<html><body>Service Unavailable</body></html>"))
    with pytest.raises(SourceError, match="HTML page"):
        make(server, "arxiv-rss", "/rss", categories=("cs.LG",)).fetch({})
    server.route("/rss", Reply(fault="truncate", body=data(RSS2)))
    with pytest.raises(SourceError, match="connection broken"):
        make(server, "arxiv-rss", "/rss", categories=("cs.LG",)).fetch({})


# --- arxiv-oai -----------------------------------------------------------------------------

def test_oai_backfill_follows_resumption_token(server):
    page1 = with_token(data("oai_ListRecords_arxiv-physics-hep-ex.xml"), "tok|100")
    page2 = data("oai_ListRecords_arxiv-physics-hep-th.xml")
    busy = [Reply(status=503, headers={"Retry-After": "1"})]

    def reply(req):
        if "resumptionToken" in req.query:
            return busy.pop() if busy else Reply(body=page2)
        return Reply(body=page1)

    server.route("/oai", reply)
    client = fast_client()
    since = datetime(2025, 1, 1, tzinfo=timezone.utc)
    result = make(server, "arxiv-oai", "/oai", since=since, client=client, set="physics:hep-ex").fetch({})
    assert len(result.papers) == 6 and client.sleep == [1.0]
    first, *rest = server.hits("/oai")
    assert first.query == {"verb": "ListRecords", "metadataPrefix": "arXiv", "from": "2025-01-01",
                           "set": "physics:hep-ex"}
    assert all(r.query == {"verb": "ListRecords", "resumptionToken": "tok|100"} for r in rest)
    assert result.state == {"harvested": "2025-04-14"}


def test_oai_incremental_from_state_and_first_fetch(server):
    server.route("/oai", Reply(body=data("oai_ListRecords_arxiv-physics-hep-th.xml")))
    make(server, "arxiv-oai", "/oai").fetch({"harvested": "2025-04-10"})
    make(server, "arxiv-oai", "/oai", first_fetch=timedelta(days=7)).fetch({})
    assert [r.query["from"] for r in server.hits("/oai")] == ["2025-04-09", "2025-04-07"]


def test_oai_errors(server):
    error = (b'<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
             b'<error code="%s">%s</error></OAI-PMH>')
    server.route("/oai", Reply(body=error % (b"noRecordsMatch", b"empty")))
    assert make(server, "arxiv-oai", "/oai").fetch({}).papers == []
    server.route("/oai", Reply(status=400, body=error % (b"badArgument", b"unknown set")))
    with pytest.raises(SourceError, match="badArgument: unknown set"):
        make(server, "arxiv-oai", "/oai", set="nope").fetch({})
    server.route("/oai", Reply(body=b"<html><body>proxy error</body></html>"))
    with pytest.raises(SourceError, match="HTML page"):
        make(server, "arxiv-oai", "/oai").fetch({})


# --- hf-daily ------------------------------------------------------------------------------

HF_DAY = "2025-04-10"


def hf_server(server, overrides=None):
    days = {HF_DAY: data(f"hf_daily_papers_{HF_DAY}.json")} | (overrides or {})
    server.route("/api/daily_papers", lambda req: Reply(body=days.get(req.query["date"], b"[]")))


def test_hf_catches_up_missed_days(server):
    hf_server(server)
    result = make(server, "hf-daily", "/api/daily_papers").fetch({"last_day": "2025-04-11"})
    asked = [r.query["date"] for r in server.hits("/api/daily_papers")]
    assert asked == ["2025-04-10", "2025-04-11", "2025-04-12", "2025-04-13", "2025-04-14"]
    assert len(result.papers) == 8 and result.state == {"last_day": "2025-04-14"}
    assert all(p.announced == date(2025, 4, 10) and p.source == "my-hf-daily" for p in result.papers)


def test_hf_first_run_bounded_by_first_fetch(server):
    hf_server(server)
    make(server, "hf-daily", "/api/daily_papers", first_fetch=timedelta(days=2)).fetch({})
    asked = [r.query["date"] for r in server.hits("/api/daily_papers")]
    assert asked == ["2025-04-12", "2025-04-13", "2025-04-14"]


def test_hf_invalid_json_fails_the_run(server):
    hf_server(server, {"2025-04-13": b'[{"paper": {"id": "2504.0'})
    with pytest.raises(SourceError, match="2025-04-13.*invalid JSON"):
        make(server, "hf-daily", "/api/daily_papers").fetch({"last_day": "2025-04-12"})


def test_hf_merges_with_arxiv_and_refreshes_upvotes(server, tmp_path):
    from watcher.models import Paper

    arxiv_paper = Paper(title="DDT: Decoupled Diffusion Transformer", arxiv_id="2504.05741", version=2,
                        categories=["cs.CV"], source="arxiv-ml",
                        published=datetime(2025, 4, 8, 7, 17, 45, tzinfo=timezone.utc))
    with Store.open(tmp_path / "w.db") as store:
        store.upsert([arxiv_paper], NOW)
        hf_server(server)
        result = make(server, "hf-daily", "/api/daily_papers").fetch({"last_day": "2025-04-10"})
        counts = store.upsert(result.papers, NOW)
        assert "2504.05741" in counts.updated and len(counts.new) == 7
        merged = store.get("2504.05741")
        assert (merged.upvotes, merged.version, merged.categories) == (27, 2, ["cs.CV"])
        assert merged.github_repo == "https://github.com/MCG-NJU/DDT"
        items = json.loads(data(f"hf_daily_papers_{HF_DAY}.json"))
        items[0]["paper"]["upvotes"] = 99
        hf_server(server, {HF_DAY: json.dumps(items).encode()})
        later = make(server, "hf-daily", "/api/daily_papers", now=NOW + timedelta(days=1))
        counts = store.upsert(later.fetch({"last_day": "2025-04-11"}).papers, NOW)
        assert counts.updated == ["2504.05741"] and store.get("2504.05741").upvotes == 99


# --- listing -------------------------------------------------------------------------------

DIGEST = "llm-rl-2025-04-12.txt"


def test_listing_from_path_and_file_url(tmp_path):
    path = tmp_path / DIGEST
    path.write_bytes(data(DIGEST))
    for kw in ({"path": path}, {"url": path.as_uri()}):
        cfg = source_config(name="lab", type="listing", **kw)
        result = make_source(cfg, context(fast_client(), NOW)).fetch({})
        assert len(result.papers) == 30
        assert all(p.source == "lab" and p.announced == date(2025, 4, 12) for p in result.papers)


def test_listing_gzipped_file(tmp_path):
    path = tmp_path / "digest.txt.gz"
    path.write_bytes(gzip.compress(data(DIGEST)))
    cfg = source_config(name="lab", type="listing", path=path)
    assert len(make_source(cfg, context(fast_client(), NOW)).fetch({}).papers) == 30


def test_listing_over_http_conditional(server):
    def reply(req):
        if req.headers.get("if-modified-since") == "Sat, 12 Apr 2025 21:30:00 GMT":
            return Reply(status=304)
        return Reply(body=data(DIGEST), headers={"Last-Modified": "Sat, 12 Apr 2025 21:30:00 GMT"})

    server.route("/digest.txt", reply)
    src = make(server, "listing", "/digest.txt")
    first = src.fetch({})
    assert len(first.papers) == 30 and first.state == {"last_modified": "Sat, 12 Apr 2025 21:30:00 GMT"}
    assert src.fetch(first.state).not_modified


def test_fetch_says_not_modified_when_the_server_answers_304(server, tmp_path):  # noqa: F811
    """The second `watcher fetch` of an unchanged listing: "not modified", not "0 new, 0 updated,
    0 unchanged" (nothing was read, so nothing was unchanged either)."""
    from helpers import run_cli

    def reply(req):
        if req.headers.get("if-modified-since") == "Sat, 12 Apr 2025 21:30:00 GMT":
            return Reply(status=304)
        return Reply(body=data(DIGEST), headers={"Last-Modified": "Sat, 12 Apr 2025 21:30:00 GMT"})

    server.route("/digest.txt", reply)
    (tmp_path / "config.toml").write_text(f'[watcher]\ndatabase = "w.db"\n\n[source.lab]\ntype = "listing"\n'
                                          f'url = "{server.url("/digest.txt")}"\n')
    first = run_cli("fetch", cwd=tmp_path)
    assert first.returncode == 0 and first.stdout == b"lab: 30 new, 0 updated, 0 unchanged\n"
    second = run_cli("--log-level", "info", "fetch", cwd=tmp_path)
    assert second.returncode == 0 and second.stdout == b"lab: not modified since the last fetch\n"
    assert "source lab: not modified since the last fetch" in second.stderr.decode()


def test_listing_errors_are_source_errors(server, tmp_path):
    server.route("/digest.txt", Reply(body=b"<html><body>Moved</body></html>"))
    with pytest.raises(SourceError, match="unknown format"):
        make(server, "listing", "/digest.txt").fetch({})
    with pytest.raises(SourceError, match="404 Not Found"):
        make(server, "listing", "/missing.txt").fetch({})
    cfg = source_config(name="lab", type="listing", path=tmp_path / "nope.txt")
    with pytest.raises(SourceError, match="cannot read"):
        make_source(cfg, context(fast_client(), NOW)).fetch({})
