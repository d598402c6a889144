"""The openalex source (docs/openalex.md) against a local stand-in of the OpenAlex API
(tests/servers/openalexserver.py) serving a real work (W2741809807, "The state of OA") and a few
constructed ones (tests/data/openalex/SOURCES.md): cursor paging, from_created_date and the
reach back, 429, a work without abstract, a work citing two followed works (one card, both
reasons), followed authors, the same work announced on arXiv as one paper, and a second run
delivering nothing again."""

from __future__ import annotations

import json
import socket
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from deliverkit import ledger
from helpers import context, data, fast_client
from httpserver import Reply, server  # noqa: F401
from openalexserver import OpenalexApi
from watcher.cli import cli
from watcher.config import Profile, load_config
from watcher.sources import source_config
from watcher.errors import QuerySyntaxError, SourceError
from watcher.formats import openalex
from watcher.matching.match import ProfileMatcher
from watcher.matching.query import parse_query
from watcher.sources import make_source

NOW = datetime(2017, 8, 10, 12, 0, tzinfo=timezone.utc)
STATE_OF_OA = "work_W2741809807_state_of_oa.json"
ONE, TWO = "Followed work one (constructed title)", "Followed work two (constructed title)"
PIWOWAR = "0000-0003-1613-5981"


def real_work() -> dict:
    return json.loads(data(f"openalex/{STATE_OF_OA}"))


def constructed() -> dict:
    return json.loads(data("openalex/works_constructed.json"))


def stand_in(server, *, arxiv_preprint: bool = True, page_size: int = 1, indexed: str | None = None) -> OpenalexApi:
    """The stand-in serving the real work and the constructed ones (without the arXiv preprint
    "0" unless ``arxiv_preprint``; with it created on the day ``indexed``, when given)."""
    made = constructed()
    works = [real_work()] + [w for w in made["works"] if arxiv_preprint or "arxiv" not in (w["doi"] or "")]
    for work in works:
        if indexed and "arxiv" in (work["doi"] or ""):
            work["created_date"] = indexed
    api = OpenalexApi(works, single=made["followed"], page_size=page_size)
    api.mount(server)
    return api


def source(server, now=NOW, client=None, **kw):
    cfg = source_config(name="citations", type="openalex", url=server.url("/oa"), timeout=1.0,
                       first_fetch=timedelta(days=3), mailto="me@example.org", **kw)
    return make_source(cfg, context(client or fast_client(), now))


# --- the format: identifiers, abstracts, works ---------------------------------------------------

def test_identifiers_of_followed_works_and_authors_have_one_spelling():
    assert openalex.work_ref("https://doi.org/10.1038/S41586-021-03819-2") == "10.1038/s41586-021-03819-2"
    for arxiv in ("arxiv:2106.09685", "arXiv:2106.09685v2", "2106.09685", "https://arxiv.org/abs/2106.09685",
                  "10.48550/arXiv.2106.09685"):
        assert openalex.work_ref(arxiv) == "arxiv:2106.09685", arxiv
    assert openalex.work_ref("https://openalex.org/W2741809807") == openalex.work_ref("w2741809807") == "W2741809807"
    assert openalex.work_ref("pmid:29456894") == "pmid:29456894"
    assert openalex.work_ref("the state of OA") is None
    for words in ("10.5555/not a doi", "my paper 10.1038/abc", "see doi:10.1038/abc"):  # not cut to a DOI
        assert openalex.work_ref(words) is None, words
    assert openalex.author_ref("https://orcid.org/0000-0002-1694-233x") == "0000-0002-1694-233X"
    assert openalex.author_ref("0000-0002-1825-0097") == "0000-0002-1825-0097"
    for typo in ("0000-0002-1825-0079", "0000-0002-1825-009X", "0000-0003-1613-5918"):  # check digit wrong
        assert openalex.author_ref(typo) is None, typo
    assert openalex.author_ref("A5023888391") == "A5023888391" and openalex.author_ref("Jason Priem") is None
    assert openalex.api_path("arxiv:2106.09685") == "doi:10.48550/arXiv.2106.09685"
    assert openalex.api_path("10.7717/peerj.4375") == "doi:10.7717/peerj.4375"


def test_a_real_work_becomes_one_paper_with_its_abstract_ids_and_what_it_cites():
    follow = openalex.Follow(works={"W2016860460": openalex.entry("10.5555/followed-one", ONE),
                                    "W2029057325": openalex.entry("W2029057325", TWO)},
                             authors=frozenset({PIWOWAR}))
    paper = openalex.work_to_paper(real_work(), "W2741809807", follow)
    assert paper.title.startswith("The state of OA: a large-scale analysis")
    assert paper.doi == "10.7717/peerj.4375" and paper.pmid == "29456894" and paper.arxiv_id is None
    assert paper.key == "doi:10.7717/peerj.4375" and paper.journal == "PeerJ"
    assert paper.url == "https://doi.org/10.7717/peerj.4375"  # no landing page in the answer: the DOI's
    assert paper.abstract.startswith("Despite growing interest in Open Access (OA) to scholarly literature,")
    assert paper.abstract.endswith("as a way to inform OA policy and practice.")
    assert len(paper.abstract.split()) == 258  # every position of the inverted index, once
    assert paper.authors[0] == "Heather A. Piwowar" and len(paper.authors) == 9
    assert paper.published.date().isoformat() == "2018-02-13" and paper.announced.isoformat() == "2017-08-08"
    assert openalex.entries(paper.cites) == [("10.5555/followed-one", ONE), ("W2029057325", TWO)]
    assert openalex.entries(paper.followed) == [(PIWOWAR, "Heather A. Piwowar")]


def test_a_work_without_abstract_and_an_arxiv_preprint():
    no_abstract, preprint = constructed()["works"][1], constructed()["works"][0]
    paper = openalex.work_to_paper(no_abstract, "w")
    assert paper.abstract == "" and paper.pmid == "99999901" and paper.journal == "Journal of Examples"
    paper = openalex.work_to_paper(preprint, "w")
    assert paper.arxiv_id == "2104.12255" and paper.key == "2104.12255"  # the arXiv paper's key
    assert paper.journal is None  # a repository is no journal
    assert openalex.rebuild_abstract({"b": [1], "a": [0], "bad": ["x", -1, True]}) == "a b"


# --- the source against the stand-in -------------------------------------------------------------

def test_cursor_paging_from_created_date_and_followed_works_resolved_once(server):
    api = stand_in(server)
    src = source(server, cites=("10.5555/followed-one", "W2029057325"))
    result = src.fetch({})
    assert api.resolved == ["doi:10.5555/followed-one", "W2029057325"]  # each followed work asked once
    assert [r["cursor"] for r in api.requests] == ["*", "MQ==", "Mg=="]  # page size 1, three matches
    first = api.requests[0]
    assert first["filter"] == "cites:W2016860460|W2029057325,from_created_date:2017-08-07"
    assert first["mailto"] == "me@example.org" and first["per-page"] == "200"
    titles = [p.title for p in result.papers]
    assert titles == [real_work()["title"], "0", "A journal article without an abstract (constructed)"]
    state_of_oa = result.papers[0]
    assert openalex.entries(state_of_oa.cites) == [("10.5555/followed-one", ONE), ("W2029057325", TWO)]
    assert state_of_oa.sources == ["citations"]
    assert result.state["works"] == {"10.5555/followed-one": ["W2016860460", ONE],
                                     "W2029057325": ["W2029057325", TWO]}
    assert result.state["last_day"] == "2017-08-10"
    # the next run, two days on: nothing resolved again; it reaches back three days for works
    # OpenAlex indexed late
    api.requests.clear()
    src = source(server, now=NOW + timedelta(days=2), cites=("10.5555/followed-one", "W2029057325"))
    again = src.fetch(result.state)
    assert api.resolved == ["doi:10.5555/followed-one", "W2029057325"]
    assert api.requests[0]["filter"].endswith("from_created_date:2017-08-07")
    assert len(again.papers) == 3
    # years later, only what OpenAlex created since the last run (less the reach back) comes
    later = source(server, now=datetime(2021, 4, 25, tzinfo=timezone.utc),
                   cites=("10.5555/followed-one", "W2029057325")).fetch({**result.state, "last_day": "2021-04-24"})
    assert [p.title for p in later.papers] == ["0"]


def test_followed_authors_and_a_429_honoured(server):
    api = stand_in(server, page_size=5)
    api.throttle(1)
    client = fast_client()
    result = source(server, client=client, authors=(PIWOWAR,)).fetch({})
    assert client.sleep[0] >= 1.0  # Retry-After honoured through the shared client's policy
    assert api.requests[-1]["filter"] == f"author.orcid:https://orcid.org/{PIWOWAR},from_created_date:2017-08-07"
    [paper] = result.papers
    assert openalex.entries(paper.followed) == [(PIWOWAR, "Heather A. Piwowar")] and paper.cites == []
    # the same person followed by her OpenAlex id (the real author answer's)
    author = json.loads(data("openalex/author_A1969205032_piwowar.json"))
    key = openalex.author_ref(author["id"])
    [paper] = source(server, authors=(key,)).fetch({}).papers
    assert api.requests[-1]["filter"].startswith("author.id:A1969205032,")
    assert openalex.entries(paper.followed) == [("A1969205032", author["display_name"])]


def test_a_refused_created_date_falls_back_to_the_publication_date_and_the_key_is_sent(server, monkeypatch):
    api = stand_in(server, page_size=5)
    api.created_refused = True
    monkeypatch.setenv("OPENALEX_KEY", "s3cret-key")
    result = source(server, cites=("W2029057325",), api_key_env="OPENALEX_KEY").fetch({})
    assert [r["filter"] for r in api.requests] == ["cites:W2029057325,from_created_date:2017-08-07",
                                                   "cites:W2029057325,from_publication_date:2017-08-07"]
    assert all(r["api_key"] == "s3cret-key" for r in api.requests)
    # published before the reach back, the article indexed on 2017-08-09 is missed: the caveat
    assert [p.title[:20] for p in result.papers] == ["The state of OA: a l"]
    assert result.state["date_filter"] == "from_publication_date"  # asked so from then on
    api.requests.clear()
    source(server, cites=("W2029057325",)).fetch(result.state)
    assert [r["filter"] for r in api.requests] == ["cites:W2029057325,from_publication_date:2017-08-07"]


def test_a_followed_work_openalex_does_not_know_yet_is_asked_again_by_the_next_run(server, caplog):
    api = stand_in(server, page_size=5)
    result = source(server, cites=("10.5555/unknown", "W2029057325")).fetch({})
    assert "OpenAlex knows no work 10.5555/unknown (cites) yet" in caplog.text
    assert [p.title[:20] for p in result.papers] == ["The state of OA: a l", "A journal article wi"]
    assert list(result.state["works"]) == ["W2029057325"]
    source(server, cites=("10.5555/unknown", "W2029057325")).fetch(result.state)
    assert api.resolved == ["doi:10.5555/unknown", "W2029057325", "doi:10.5555/unknown"]


def test_refusals_and_broken_answers_fail_the_run_with_a_clear_error(server):
    stand_in(server)
    server.route("/oa/works", Reply(status=400, body=b'{"error":"Invalid query parameters error."}'))
    with pytest.raises(SourceError, match=r"HTTP 400"):
        source(server, cites=("W2029057325",)).fetch({})
    server.route("/oa/works", Reply(body=b'{"meta": {"count": 3}, "resu'))
    with pytest.raises(SourceError, match=r"invalid JSON.*source 'citations'"):
        source(server, cites=("W2029057325",)).fetch({})
    api = stand_in(server)
    api.throttle(10)  # 429 past every retry: a rate limit, said so, not "the server may be down"
    with pytest.raises(SourceError) as refused:
        source(server, authors=(PIWOWAR,)).fetch({})
    assert str(refused.value).endswith("HTTP 429 Too Many Requests (4 tries); OpenAlex's rate limit, or the "
                                       "day's budget, is spent; the next run asks again (mailto joins its "
                                       "polite pool; a key, api_key_env, has a budget of its own)")
    assert "\n" not in str(refused.value) and "overloaded" not in str(refused.value)


# --- the query language and the reasons ----------------------------------------------------------

def test_cites_and_by_in_the_query_language_give_the_reasons():
    follow = openalex.Follow(works={"W2016860460": openalex.entry("10.5555/followed-one", ONE),
                                    "W2029057325": openalex.entry("W2029057325", TWO)},
                             authors=frozenset({PIWOWAR}))
    papers = [openalex.work_to_paper(w, "w", follow) for w in [real_work(), *constructed()["works"]]]

    def reasons(query):
        matcher = ProfileMatcher(Profile(name="p", title="p", query=query))
        return {m.paper.title[:20]: m.reasons for m in map(matcher.score, papers) if m}

    both = reasons("cites:*")
    assert both["The state of OA: a l"] == [f"cites your {ONE}", f"cites your {TWO}"]  # one card, both
    assert both["A journal article wi"] == [f"cites your {TWO}"] and both["0"] == [f"cites your {ONE}"]
    assert list(reasons('cites:"10.5555/FOLLOWED-ONE"')) == ["The state of OA: a l", "0"]
    assert reasons("orcid:0000-0003-1613-5981") == reasons(f"by:{PIWOWAR}") == {
        "The state of OA: a l": ["by Heather A. Piwowar, whom you follow"]}
    assert list(reasons("cites:W2029057325 AND access")) == ["The state of OA: a l"]  # with a query
    assert reasons("cites:w20*") == {"The state of OA: a l": [f"cites your {TWO}"],
                                     "A journal article wi": [f"cites your {TWO}"]}  # a key's start
    for bad in ("cites:nothing", "by:Jason"):
        with pytest.raises(QuerySyntaxError):
            parse_query(bad)


# --- end to end: a digest, one paper per work, nothing twice -------------------------------------

CONFIG = """
[watcher]
database = "watcher.db"

[source.ax]
type = "arxiv"
query = "cat:cs.CR"
url = "{base}/api/query"
first_fetch = "3650d"
timeout = 2

[source.citations]
type = "openalex"
url = "{base}/oa"
cites = ["10.5555/followed-one", "W2029057325"]
authors = ["https://orcid.org/0000-0003-1613-5981"]
mailto = "me@example.org"
first_fetch = "3650d"
timeout = 2

[profile.cited]
query = "cites:*"

[profile.people]
query = "by:*"

[profile.crypto]
query = "cat:cs.CR"

[digest.d]
profiles = ["cited", "people", "crypto"]
every = "1d"
lookback = "3650d"
formats = ["json", "markdown"]
channels = ["archive"]

[channel.archive]
type = "file"
path = "out/{{digest}}-{{date}}-{{ext}}.{{ext}}"
"""
FAST = {"WATCHER_HTTP_RETRIES": "1", "WATCHER_HTTP_BACKOFF": "0.01", "WATCHER_HTTP_MAX_BACKOFF": "0.05"}


def run(tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    for k, v in FAST.items():
        monkeypatch.setenv(k, v)
    return CliRunner().invoke(cli, ["--config", str(tmp_path / "config.toml"), *args])


def test_a_digest_of_new_citations_and_new_works_one_paper_per_work_nothing_twice(tmp_path, server, monkeypatch):
    (tmp_path / "config.toml").write_text(CONFIG.format(base=server.base))
    server.route("/api/query", Reply(body=data("arxivpy2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml"),
                                     headers={"Content-Type": "application/atom+xml"}))
    # run 1: arXiv announces "0"; OpenAlex has not indexed its preprint yet
    stand_in(server, arxiv_preprint=False)
    first = run(tmp_path, monkeypatch, "once")
    assert first.exit_code == 0, first.output
    [json_out] = (tmp_path / "out").glob("*.json")
    cards = {p["title"][:20]: p for p in json.loads(json_out.read_text())}
    assert set(cards) == {"The state of OA: a l", "A journal article wi", "0"}
    oa = cards["The state of OA: a l"]
    assert oa["reasons"] == [f"cites your {ONE}", f"cites your {TWO}",  # one card, both reasons
                             "people: by Heather A. Piwowar, whom you follow"]
    assert cards["A journal article wi"]["abstract"] == ""
    assert cards["0"]["reasons"] == ["cat: cs.CR"]
    markdown = next((tmp_path / "out").glob("*.md")).read_text()
    assert f"cites your {ONE}" in markdown
    # run 2: OpenAlex now lists the arXiv preprint "0" as citing a followed work: the same
    # paper, already delivered, so nothing is delivered again
    stand_in(server, arxiv_preprint=True, indexed=datetime.now(timezone.utc).date().isoformat())
    for f in (tmp_path / "out").iterdir():
        f.unlink()
    second = run(tmp_path, monkeypatch, "once")
    assert second.exit_code == 0, second.output
    assert all(json.loads(f.read_text()) == [] for f in (tmp_path / "out").glob("*.json"))
    with sqlite3.connect(tmp_path / "watcher.db") as conn:
        rows = conn.execute("SELECT key, sources, cites FROM papers WHERE title = '0'").fetchall()
    assert len(rows) == 1 and rows[0][0] == "2104.12255"
    assert json.loads(rows[0][1]) == ["ax", "citations"]
    assert json.loads(rows[0][2]) == [f"10.5555/followed-one|{ONE}"]
    assert ledger(tmp_path).count("2104.12255") == 1
    explained = run(tmp_path, monkeypatch, "explain", "2104.12255", "--profile", "cited")
    assert explained.exit_code == 0 and f"cites your {ONE}" in explained.output, explained.output
    # the web inbox searches with the same language: cites: and by: find what the source recorded
    import warnings

    from webkit import app_for
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    with TestClient(app_for(load_config(tmp_path / "config.toml"), tmp_path / "watcher.db")) as client:
        found = client.get("/search.json", params={"q": "cites:W2029057325"}).json()
        assert sorted(p["title"][:20] for p in found["papers"]) == ["A journal article wi", "The state of OA: a l"]
        found = client.get("/search.json", params={"q": f"by:{PIWOWAR}"}).json()
        assert [p["title"][:20] for p in found["papers"]] == ["The state of OA: a l"]


# --- watcher init: "alert me when my papers are cited" in one command ---------------------------

def test_init_seeds_cites_from_dois_and_an_orcid(tmp_path, server, monkeypatch):
    api = stand_in(server)
    result = CliRunner().invoke(cli, ["init", str(tmp_path), "--cite", "https://doi.org/10.5555/FOLLOWED-ONE",
                                      "--orcid", f"https://orcid.org/{PIWOWAR}", "--mailto", "me@example.org",
                                      "--openalex-url", server.url("/oa")])
    assert result.exit_code == 0, result.output
    assert "following 2 works for new citations" in result.output
    assert "next: cd " in result.output and "watcher once (the citations digest)" in result.output
    assert "--sample" not in result.output  # the sample has no citations
    assert api.requests[0]["filter"] == f"author.orcid:https://orcid.org/{PIWOWAR}"  # listed once
    config = load_config(tmp_path / "config.toml")
    cited = config.sources["citations"]
    assert cited.type == "openalex" and cited.options.cites == ("10.5555/followed-one", "10.7717/peerj.4375")
    assert cited.options.mailto == "me@example.org"
    assert cited.url == server.url("/oa")  # the API the works were listed from is asked every run
    assert config.profiles["cited"].query == "cites:*"
    assert config.digests["citations"].channels == config.digests["daily"].channels
    assert config.digests["citations"].formats == config.digests["daily"].formats == ("text", "html")
    assert "# The state of OA: a large-scale analysis" in (tmp_path / "config.toml").read_text()
    bad = CliRunner().invoke(cli, ["init", str(tmp_path / "x"), "--cite", "my best paper"])
    assert bad.exit_code == 2 and "--cite 'my best paper': not a DOI" in bad.output and "pmid:29456894" in bad.output
    for k, v in FAST.items():
        monkeypatch.setenv(k, v)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # a port nobody listens on
    down = CliRunner().invoke(cli, ["init", str(tmp_path / "x"), "--orcid", PIWOWAR, "--openalex-url",
                                    f"http://127.0.0.1:{closed.getsockname()[1]}"])
    closed.close()
    assert down.exit_code == 1 and down.output.count("\n") == 1, down.output  # the network, not usage
    assert "listing the works failed: GET http://127.0.0.1:" in down.output
    assert down.output.rstrip().endswith("check the network connection and --openalex-url"), down.output
    typo = CliRunner().invoke(cli, ["init", str(tmp_path / "x"), "--orcid", "0000-0003-1613-5918"])
    assert typo.exit_code == 2 and "not an ORCID such as 0000-0002-1825-0097 (whose last character checks" in typo.output
    assert not (tmp_path / "x" / "config.toml").exists() and not api.requests[1:]  # nothing asked
    alone = CliRunner().invoke(cli, ["init", str(tmp_path / "x"), "--openalex-url", server.url("/oa")])
    assert alone.exit_code == 2 and "--mailto and --openalex-url go with --cite or --orcid" in alone.output
    assert not (tmp_path / "x" / "config.toml").exists()


def test_check_takes_an_openalex_source_and_says_when_its_optional_key_is_unset(tmp_path, monkeypatch):
    (tmp_path / "config.toml").write_text(CONFIG.format(base="http://127.0.0.1:9").replace(
        'mailto = "me@example.org"', 'mailto = "me@example.org"\napi_key_env = "OPENALEX_TEST_KEY"'))
    monkeypatch.delenv("OPENALEX_TEST_KEY", raising=False)
    checked = run(tmp_path, monkeypatch, "check")
    assert checked.exit_code == 0, checked.output
    assert "OPENALEX_TEST_KEY is not set: OpenAlex is asked without a key" in checked.output
    (tmp_path / "config.toml").write_text(CONFIG.format(base="http://x").replace(
        '"W2029057325"]', '"my favourite paper"]'))
    bad = run(tmp_path, monkeypatch, "check")
    assert bad.exit_code == 2 and "source.citations.cites: 'my favourite paper' is not a DOI" in bad.output


def test_check_says_when_a_profile_names_a_work_or_author_no_source_follows(tmp_path, monkeypatch):
    config = CONFIG.format(base="http://127.0.0.1:9")
    (tmp_path / "config.toml").write_text(config)
    assert "follows" not in run(tmp_path, monkeypatch, "check").output  # cites:* and by:* are followed
    (tmp_path / "config.toml").write_text(config.replace(
        'query = "cites:*"', 'query = "cites:W2029057325 OR cites:https://doi.org/10.1038/S41586-021-03819-2 '
                             'OR cites:10.5555/* OR cites:10.1038/*"\nexclude = "by:0000-0002-1825-0097"'))
    checked = run(tmp_path, monkeypatch, "check")
    assert checked.exit_code == 0, checked.output
    lines = [line for line in checked.output.splitlines() if "no openalex source follows" in line]
    assert [line.removeprefix(str(tmp_path) + "/") for line in lines] == [
        "config.toml: profile.cited.query: cites:10.1038/s41586-021-03819-2 names a work no openalex source "
        "follows, so it matches nothing (add it to a source's cites)",
        "config.toml: profile.cited.query: cites:10.1038/* names a work no openalex source follows, so it "
        "matches nothing (add it to a source's cites)",
        "config.toml: profile.cited.exclude: by:0000-0002-1825-0097 names an author no openalex source "
        "follows, so it matches nothing (add it to a source's authors)"]
    (tmp_path / "config.toml").write_text(config.split("[source.citations]")[0] + "[profile.cited]"
                                          + config.split("[profile.cited]")[1])  # no openalex source
    lines = [line for line in run(tmp_path, monkeypatch, "check").output.splitlines() if "follows" in line]
    assert [line.split(": ")[1] for line in lines] == ["profile.cited.query", "profile.people.query"]


def test_the_api_key_is_masked_where_a_failure_is_stored(tmp_path, server, monkeypatch):
    api = stand_in(server)
    server.route("/api/query", Reply(body=data("arxivpy2026_id_2104.12255v1_s0_m100_6ae69987ffe1.xml")))
    server.route("/oa/works", Reply(status=403, body=b'{"error":"Forbidden","message":"bad key"}'))
    (tmp_path / "config.toml").write_text(CONFIG.format(base=server.base).replace(
        'mailto = "me@example.org"', 'mailto = "me@example.org"\napi_key_env = "OPENALEX_TEST_KEY"'))
    monkeypatch.setenv("OPENALEX_TEST_KEY", "oa-key-5ecret")
    failed = run(tmp_path, monkeypatch, "once")
    assert failed.exit_code == 1 and "source citations failed" in failed.output
    assert api.resolved and server.requests[-1].query["api_key"] == "oa-key-5ecret"  # sent ...
    with sqlite3.connect(tmp_path / "watcher.db") as conn:
        [(error,)] = conn.execute("SELECT last_error FROM sources WHERE name = 'citations'").fetchall()
    assert "HTTP 403" in error and "oa-key-5ecret" not in error  # ... and masked where stored
    assert "oa-key-5ecret" not in failed.output
