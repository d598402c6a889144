"""The JSON twins of the reading pages (datasette's convention, docs/web.md): the same path ending
in ``.json`` answers the same facts as data, under the same login rules; every list carries
each paper's ``id`` (arXiv id, else DOI, else watcher's key) and ``title``."""

from __future__ import annotations

import re
import warnings
from dataclasses import replace
from datetime import datetime, timezone
from urllib.parse import unquote

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, database_copy, sample_setup

from watcher.store import Store

PAPER = "2504.07615"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("webjson"))


@pytest.fixture(scope="module")
def client(sample):
    config, db = sample
    with TestClient(app_for(config, db)) as c:
        yield c


def card_keys(html: str) -> list[str]:
    return [unquote(k) for k in re.findall(r'<article class="paper[^"]*" id="p-([^"]+)"', html)]


def ids_and_titles(papers) -> None:
    assert papers and all(p["id"] and p["title"] and p["key"] for p in papers)


def test_search_json_is_the_search_pages_papers(client):
    page = client.get("/search", params={"q": "GRPO"})
    data = client.get("/search.json", params={"q": "GRPO"}).json()
    assert [p["key"] for p in data["papers"]] == card_keys(page.text)
    ids_and_titles(data["papers"])
    assert data["papers"][0]["id"] == data["papers"][0]["key"]  # an arXiv paper: its id
    bad = client.get("/search.json", params={"q": "GRPO AND ("})
    assert bad.status_code == 400 and bad.json()["error"]


def test_the_digest_twins_read_the_recorded_messages(client):
    archive = client.get("/digests.json").json()
    (issue,) = archive["issues"]
    assert issue["digest"] == "daily" and issue["day"] == "2025-04-12"
    assert [(m["channel"], m["papers"]) for m in issue["messages"]] == [("archive", 30)]
    whole = client.get("/digests/daily/2025-04-12.json").json()
    (message,) = whole["messages"]
    html = client.get("/digests/daily/2025-04-12/archive")
    assert [p["key"] for p in message["papers"]] == card_keys(html.text)
    ids_and_titles(message["papers"])
    first = message["papers"][0]
    assert first["profile"] == "llm-rl" and first["score"] > 0 and first["reasons"] and first["tldr"]
    assert first["shown"] == "full"
    one = client.get("/digests/daily/2025-04-12/archive.json").json()
    assert one["messages"] == whole["messages"]
    assert client.get(message["url"] + ".json").json()["messages"] == whole["messages"]
    missing = client.get("/digests/daily/2025-04-12/nowhere.json")
    assert missing.status_code == 404 and "nowhere" in missing.json()["error"]


def test_the_paper_and_profile_twins(client):
    paper = client.get(f"/papers/{PAPER}.json").json()
    assert paper["id"] == PAPER and paper["title"].startswith("VLM-R1")
    assert paper["deliveries"][0]["url"] == "/digests/daily/2025-04-12/archive"
    (llm_rl,) = [p for p in paper["profiles"] if p["profile"] == "llm-rl"]
    assert llm_rl["selected"] and llm_rl["reasons"]
    ids_and_titles(paper["similar"])
    assert client.get(f"/papers/{PAPER}v1.json", follow_redirects=False).headers["location"] == f"/papers/{PAPER}.json"
    assert client.get("/papers/nothing-here.json").status_code == 404
    profile = client.get("/profiles/llm-rl.json").json()
    assert profile["delivered"]["total"] == 30 and profile["delivered"]["per_day"] == {"2025-04-12": 30}
    assert profile["match_now"]["total"] >= 30 and profile["delivered_not_selected_now"] == []
    query = client.get("/profiles/llm-rl.json").json()["query"]
    preview = client.get("/profiles/llm-rl.json", params={"preview": query, "days": "30"}).json()["preview"]
    assert preview["count"] == preview["current"] > 0
    week = client.get("/profiles/llm-rl.json", params={"preview": query, "days": "7"}).json()["preview"]
    assert week["count"] == week["current"] <= preview["current"]
    ids_and_titles(preview["papers"])


def test_the_twins_need_the_login_the_pages_need(sample):
    config, db = sample
    with TestClient(app_for(config, db, password="a long enough password"), follow_redirects=False) as c:
        for path in ["/search.json?q=GRPO", "/digests.json", "/digests/daily/2025-04-12.json",
                     f"/papers/{PAPER}.json", "/profiles/llm-rl.json", "/index.json", "/saved.json",
                     "/status.json"]:
            r = c.get(path)
            assert r.status_code in (302, 303, 401), path
            assert PAPER not in r.text, path


def test_a_paper_with_an_absurd_version_is_one_bounded_page(sample, tmp_path):
    config, db = sample
    copy = database_copy(db, tmp_path)
    with Store.open(copy) as store:
        absurd = replace(store.get(PAPER), version=2_000_000)
        store.upsert([absurd], datetime(2025, 4, 13, tzinfo=timezone.utc))
        assert store.get(PAPER).version == 2_000_000
    with TestClient(app_for(config, copy)) as c:
        r = c.get(f"/papers/{PAPER}")
    assert r.status_code == 200 and len(r.content) < 100_000
    assert "v2000000" in r.text and "v1</a>" in r.text and "…" in r.text


def test_every_id_the_twins_give_opens_the_papers_page(sample, tmp_path):
    """The ``id`` (and ``key``) of every paper in a twin works as /papers/{id} and its .json:
    an arXiv id, a bare DOI with its slashes, doi:, pmid:, watcher's title: key — the ways
    `watcher explain` takes a paper."""
    config, db = sample
    copy = database_copy(db, tmp_path)
    with Store.open(copy) as store:
        untitled = next(store.db.query("SELECT key FROM papers WHERE key LIKE 'title:%' LIMIT 1"))["key"]
        pubmed = replace(store.get(untitled), pmid="40212345", title="A PubMed-only listing of a paper")
        store.upsert([pubmed], datetime(2025, 4, 13, tzinfo=timezone.utc))
        assert store.get("pmid:40212345") is not None
    with TestClient(app_for(config, copy)) as c:
        papers = c.get("/search.json", params={"q": "", "page": "1"}).json()["papers"]
        for page in range(2, 40):
            more = c.get("/search.json", params={"q": "", "page": str(page)}).json()
            papers += more["papers"]
            if not more["more"]:
                break
        ids = {p["id"]: p["key"] for p in papers}
        kinds = {"arxiv": [i for i in ids if re.fullmatch(r"\d{4}\.\d{4,5}", i)],
                 "doi": [i for i in ids if i.startswith("10.") and "/" in i],
                 "pmid": [i for i in ids if i.startswith("pmid:")],
                 "title": [i for i in ids if i.startswith("title:")]}
        assert all(kinds.values()), {k: len(v) for k, v in kinds.items()}
        # a DOI whose paper is keyed by another (its preprint's) DOI, and the doi: and doi.org forms
        doi = next(i for i in kinds["doi"] if ids[i] != "doi:" + i)
        tried = [*(v[0] for v in kinds.values()), doi, "doi:" + doi, "https://doi.org/" + doi.upper(),
                 ids[doi]]
        for ident in tried:
            key = ids.get(ident) or ids[doi]
            r = c.get("/papers/" + ident + ".json")
            assert r.status_code == 200 and r.json()["key"] == key, (ident, r.status_code)
            page = c.get("/papers/" + ident)
            assert page.status_code == 200 and "Not Found" not in page.text, ident
        assert c.get("/papers/10.1038/no-such-paper").status_code == 404
        assert c.get("/papers/pmid:1.json").status_code == 404


def test_the_inbox_saved_list_and_status_have_twins(client, sample, tmp_path):
    """`/index.json`, `/saved.json`, `/status.json`: the same facts as their pages."""
    inbox = client.get("/index.json").json()
    (issue,) = inbox["issues"]
    assert issue["digest"] == "daily" and issue["title"] == "LLM-RL"
    assert [p["key"] for p in issue["messages"][0]["papers"]] == card_keys(client.get("/").text)
    ids_and_titles(issue["messages"][0]["papers"])
    assert issue["profiles"] == [{"name": "llm-rl", "title": "LLM-RL", "papers": 30,
                                  "url": "/profiles/llm-rl"}] and inbox["never"] == []
    status = client.get("/status.json").json()
    assert status["lines"][0].startswith("database ") and status["config"].endswith("config.toml")
    assert any("last issue 2025-04-12, per profile: LLM-RL 30" in line for line in status["lines"])
    config, db = sample
    copy = database_copy(db, tmp_path)
    with Store.open(copy) as store:
        store.db.execute("INSERT INTO saved VALUES (?, '2025-04-13T08:00:00', 'web')", [PAPER])
    with TestClient(app_for(config, copy)) as c:
        saved = c.get("/saved.json").json()["papers"]
        assert [(p["id"], p["saved_at"]) for p in saved] == [(PAPER, "2025-04-13T08:00:00")]
        assert card_keys(c.get("/saved").text) == [PAPER]
        ids_and_titles(saved)


def test_search_says_how_many_papers_it_found(client):
    """The count: exact when every match was seen (or, with no query, counted by SQLite);
    "more than" when only a lower bound is known."""
    few = client.get("/search.json", params={"q": "GRPO"}).json()
    assert few["more"] is False and few["count"] == len(few["papers"]) == 4
    assert "4 papers · papers 1–4 · page 1" in client.get("/search", params={"q": "GRPO"}).text
    many = client.get("/search.json", params={"q": "reasoning"}).json()  # checked page by page
    assert many["more"] is True and many["count"] is None and many["count_at_least"] == 25
    assert "More than 25 papers · papers 1–25 · page 1" in client.get("/search", params={"q": "reasoning"}).text
    every = client.get("/search.json", params={"q": ""}).json()
    assert every["more"] is True and every["count"] == 351  # the sample's papers, counted
    assert "351 papers · papers 1–25 · page 1" in client.get("/search", params={"q": ""}).text
    second = client.get("/search.json", params={"q": "", "page": 2}).json()
    assert second["count"] == 351


@pytest.mark.parametrize("path", ["/", "/saved", "/status", "/digests", "/digests/daily/2025-04-12",
                                  "/digests/daily/2025-04-12/archive", f"/papers/{PAPER}", "/search?q=GRPO&page=1",
                                  "/profiles/llm-rl"])
def test_each_reading_page_advertises_its_twin(client, path):
    """A page names its JSON twin in a ``Link`` header (rel="alternate", type JSON) and in a
    link of the page, and that address answers the twin."""
    r = client.get(path)
    assert r.status_code == 200
    twin = re.fullmatch(r'<([^>]+)>; rel="alternate"; type="application/json"', r.headers["link"]).group(1)
    base, _, query = path.partition("?")
    assert twin == (base + "index.json" if base.endswith("/") else base + ".json") + (f"?{query}" if query else "")
    assert f'<a href="{twin.replace("&", "&amp;")}" type="application/json">' in r.text
    answer = client.get(twin)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")


def test_a_page_without_a_twin_advertises_none(client):
    r = client.get("/r/not-a-token")  # a rating link's page: nothing to read as JSON
    assert r.status_code in (400, 403, 404, 410) and "text/html" in r.headers["content-type"]
    assert "link" not in r.headers and "application/json" not in r.text


def test_a_kept_inbox_is_answered_as_it_was_first_answered(client):
    """The inbox is kept between requests while nothing changes (PageMemo): the second answer
    of `/index.json` is JSON again and the second `/` still names its twin."""
    for _ in range(2):
        twin = client.get("/index.json")
        assert twin.headers["content-type"].startswith("application/json") and twin.json()["issues"]
        page = client.get("/")
        assert page.headers["content-type"].startswith("text/html")
        assert page.headers["link"] == '</index.json>; rel="alternate"; type="application/json"'
