"""The crossref source against a local stand-in of Crossref's works API serving real Crossref
works (tests/data/crossref/SOURCES.md): the filters it asks (ISSN, DOI prefix, index and
created dates), cursor paging until an empty page, the polite pool's mailto (a parameter and in
the User-Agent), the JATS abstract read as text, the bounds of a run, the config's checks, and
`watcher once` making the same DOI from OpenAlex and Crossref one paper."""

from __future__ import annotations

import base64
import json
import sqlite3
from datetime import date, datetime, timezone

import pytest
from click.testing import CliRunner

from helpers import context, data, fast_client
from httpserver import Reply, server  # noqa: F401
from openalexserver import OpenalexApi
from watcher.cli import cli
from watcher.config import load_config
from watcher.errors import ConfigError, SourceError
from watcher.formats import crossref as reader
from watcher.formats import detect
from watcher.sources import crossref, make_source, source_config

JSON = {"Content-Type": "application/json"}
PAGE = "crossref/works_cursor_nsf_2018_trimmed.json"
SALMON = "crossref/work_raq.12953_jats_abstract.json"
PEERJ = "crossref/work_peerj.4375_constructed.json"
NOW = datetime(2024, 8, 2, 12, 0, tzinfo=timezone.utc)


def items() -> list[dict]:
    """The real works (two of a 2018 page, the 2024 Wiley review) and the constructed PeerJ one."""
    page = json.loads(data(PAGE))["message"]["items"]
    return page + [json.loads(data(SALMON)), json.loads(data(PEERJ))]


def _day(value: dict) -> str:
    y, m, d = (value["date-parts"][0] + [1, 1])[:3]
    return date(y, m, d).isoformat()


class CrossrefApi:
    """``/works?filter=…&rows=…&cursor=…`` as Crossref documents it (api.crossref.org/swagger-ui):
    filters of one name OR-ed, of different names AND-ed (``issn:``, ``prefix:`` the owner
    prefix, ``from-index-date:`` on ``indexed``, ``from-created-date:`` on ``created``), an
    unknown filter a 400; ``cursor=*`` starts, ``message.next-cursor`` continues and is still
    given on the empty page that ends the list."""

    def __init__(self, works: list[dict]):
        self.works = works
        self.requests: list = []

    def __call__(self, request) -> Reply:
        q = request.query
        self.requests.append(request)
        wanted: dict[str, list[str]] = {}
        for part in filter(None, q.get("filter", "").split(",")):
            name, _, value = part.partition(":")
            wanted.setdefault(name, []).append(value)
        keep = {"issn": lambda w, vs: bool(set(w.get("ISSN") or ()) & set(vs)),
                "prefix": lambda w, vs: w.get("prefix") in vs,
                "from-index-date": lambda w, vs: _day(w["indexed"]) >= vs[0],
                "from-created-date": lambda w, vs: _day(w["created"]) >= vs[0]}
        if set(wanted) - set(keep):
            return Reply(status=400, headers=JSON, body=b'{"status":"failed","message-type":"validation-failure",'
                                                      b'"message":[{"type":"filter-not-available"}]}')
        found = [w for w in self.works if all(keep[n](w, vs) for n, vs in wanted.items())]
        rows, cursor = int(q.get("rows", 20)), q.get("cursor", "*")
        start = 0 if cursor == "*" else int(base64.b64decode(cursor))
        message = {"facets": {}, "next-cursor": base64.b64encode(str(start + rows).encode()).decode(),
                   "total-results": len(found), "items": found[start:start + rows], "items-per-page": rows,
                   "query": {"start-index": 0, "search-terms": None}}
        body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0", "message": message}
        return Reply(headers=JSON, body=json.dumps(body, ensure_ascii=False).encode())


def source(server, since=None, **kw):
    cfg = source_config(name="journals", type="crossref", url=server.url("/cr"), timeout=5.0, **kw)
    return make_source(cfg, context(fast_client(), NOW, since))


def test_a_real_page_is_read_with_its_cursor_and_a_jats_abstract_as_text():
    raw = data(PAGE)
    assert detect(raw) == "crossref"
    page = reader.parse_page(raw, "page")
    assert page.count == 38191 and page.next_cursor.startswith("AoJ9wPbg4eIC") and page.items == 2
    agu, ieee = page.papers
    assert agu.key == "doi:10.1002/2013ja019427" and agu.journal == "Journal of Geophysical Research: Space Physics"
    assert agu.authors == ["J. Berchem", "R. Richard", "P. Escoubet", "S. Wing", "F. Pitout"]
    # no "published" in a 2018 answer: the earliest of published-online (2014-03-01) and -print (2014-03)
    assert agu.published == datetime(2014, 3, 1, tzinfo=timezone.utc) and agu.announced == date(2014, 2, 6)
    assert ieee.published == datetime(2014, 8, 1, tzinfo=timezone.utc)  # a month alone: its first day
    assert ieee.url == "https://doi.org/10.1109/lcomm.2014.2334320" and ieee.abstract == ""
    salmon = reader.work_to_paper(json.loads(data(SALMON)), "work")
    assert salmon.abstract.startswith("In 2017, a new regulatory management system, the traffic light")
    assert salmon.abstract.endswith("concerning lice‐induced mortality thresholds.")
    assert "jats" not in salmon.abstract and "Abstract" not in salmon.abstract
    assert salmon.authors == ["Solveig van Nes", "Albert Kjartan Dagbjartarson Imsland", "Simon R. M. Jones"]
    assert salmon.published == datetime(2024, 7, 30, tzinfo=timezone.utc)
    assert reader.abstract_text("<jats:p>H<jats:sub>2</jats:sub>O and <jats:italic>E. coli</jats:italic></jats:p>") \
        == "H2O and E. coli"


def test_the_source_asks_its_filters_pages_by_cursor_and_joins_the_polite_pool(server):
    api = CrossrefApi(items())
    server.route("/cr/works", api)
    src = source(server, since=datetime(2014, 1, 1, tzinfo=timezone.utc),
                 issn=("2169-9380", "1089-7798", "1753-5123"), mailto="me@example.org", rows=1)
    result = src.fetch({})
    assert [p.doi for p in result.papers] == ["10.1002/2013ja019427", "10.1109/lcomm.2014.2334320",
                                              "10.1111/raq.12953"]
    assert all(p.sources == ["journals"] for p in result.papers)
    first = api.requests[0]
    assert first.query["filter"] == ("issn:2169-9380,issn:1089-7798,issn:1753-5123,"
                                     "from-index-date:2014-01-01,from-created-date:2013-12-02")
    assert first.query["rows"] == "1" and first.query["mailto"] == "me@example.org"
    assert first.headers["user-agent"].endswith("(mailto:me@example.org)")
    # three pages of one work, then the empty page that ends the list
    assert [r.query["cursor"] for r in api.requests] == ["*", "MQ==", "Mg==", "Mw=="]
    assert result.state["last_day"] == "2024-08-02"


def test_the_window_leaves_out_old_works_indexed_again_and_prefixes_are_asked_apart(server):
    api = CrossrefApi(items())
    server.route("/cr/works", api)
    # the first run reaches back first_fetch (3 days): the 2024 review, indexed 2024-08-01; the
    # 2014 works indexed again since would be asked out by from-created-date
    found = source(server, issn=("1753-5123", "2169-9380"), doi_prefix=("10.1109",)).fetch({})
    assert [p.doi for p in found.papers] == ["10.1111/raq.12953"]
    assert list(dict.fromkeys(r.query["filter"] for r in api.requests)) == [
        "issn:1753-5123,issn:2169-9380,from-index-date:2024-07-30,from-created-date:2024-06-30",
        "prefix:10.1109,from-index-date:2024-07-30,from-created-date:2024-06-30"]
    assert len(api.requests) == 3  # a list ends on an empty page (the prefix's first is)
    # the next run starts from the last day fetched less two days
    api.requests.clear()
    source(server, issn=("1753-5123",)).fetch({"last_day": "2024-08-02"})
    assert api.requests[0].query["filter"].endswith("from-index-date:2024-07-31,from-created-date:2024-07-01")


@pytest.mark.slow  # 100 pages read to the page cap
def test_a_server_that_pages_forever_stops_at_the_bound_in_one_line(server):
    work = json.loads(data(SALMON))
    calls = []

    def forever(request):
        calls.append(request)
        body = {"status": "ok", "message-type": "work-list", "message": {
            "next-cursor": f"c{len(calls)}", "total-results": 10**6, "items": [work]}}
        return Reply(headers=JSON, body=json.dumps(body).encode())

    server.route("/cr/works", forever)
    with pytest.raises(SourceError) as e:
        source(server, issn=("1753-5123",)).fetch({})
    assert str(e.value) == ("source journals: Crossref was still paging after 100 pages (100 works); "
                            "not kept, the next run tries again")
    assert len(calls) == crossref.MAX_PAGES


def test_a_page_of_more_works_than_asked_or_an_error_document_fails_the_run(server):
    many = {"status": "ok", "message-type": "work-list",
            "message": {"next-cursor": "x", "items": [json.loads(data(SALMON))] * 3}}
    server.route("/cr/works", Reply(headers=JSON, body=json.dumps(many).encode()))
    with pytest.raises(SourceError, match="a page of 3 works, more than the 2 asked"):
        source(server, issn=("1753-5123",), rows=2).fetch({})
    server.route("/cr/works", Reply(headers=JSON, body=b'{"status":"failed","message-type":"validation-failure",'
                                                       b'"message":[{"type":"filter-not-available"}]}'))
    with pytest.raises(SourceError, match="expected a Crossref works list"):
        source(server, issn=("1753-5123",)).fetch({})


@pytest.mark.parametrize("keys, key, words", [
    ('issn = ["0002-7864"]', "issn", "'0002-7864' is not an ISSN such as 0002-7863"),
    ('doi_prefix = ["10.10"]', "doi_prefix", "'10.10' is not a DOI prefix such as 10.1021"),
    ('mailto = "me@example.org"', "issn", "a crossref source follows something"),
    ('issn = ["0002-7863"]\nrows = 5000', "rows", "must be between 1 and 1000"),
    ('issn = ["0002-7863"]\nmailto = "nobody"', "mailto", "is not an e-mail address"),
    ('issn = ["0002-7863"]\nissns = ["x"]', "issns", "unknown key; did you mean issn?"),
])
def test_bad_keys_are_named(write_config, keys, key, words):
    with pytest.raises(ConfigError) as e:
        load_config(write_config(f'[source.j]\ntype = "crossref"\n{keys}\n'))
    assert f"source.j.{key}" in str(e.value) and words in str(e.value)


def test_a_good_table_loads_with_issns_in_one_spelling(write_config):
    config = load_config(write_config('[source.j]\ntype = "crossref"\nissn = ["1550235x", "1520-5126", "1520-5126"]\n'
                                      'doi_prefix = ["https://doi.org/10.1021"]\n'))
    opts = config.sources["j"].options
    assert opts.issn == ("1550-235X", "1520-5126") and opts.doi_prefix == ("10.1021",) and opts.rows == 100


CONFIG = """
[watcher]
database = "watcher.db"

[source.citations]
type = "openalex"
url = "{base}/oa"
authors = ["https://orcid.org/0000-0003-1613-5981"]
first_fetch = "3650d"
timeout = 2

[source.journals]
type = "crossref"
url = "{base}/cr"
issn = ["2167-8359", "1753-5123"]
mailto = "me@example.org"
first_fetch = "3650d"
timeout = 2

[profile.p]
query = 'salmon OR "state of OA"'

[digest.d]
profiles = ["p"]
every = "1d"
lookback = "3650d"
formats = ["json"]
channels = ["archive"]

[channel.archive]
type = "file"
path = "out/{{digest}}-{{date}}.{{ext}}"
"""


def test_once_makes_the_same_doi_from_openalex_and_crossref_one_paper(tmp_path, server, monkeypatch):
    """The real OpenAlex work W2741809807 (10.7717/peerj.4375) and Crossref's record of the same
    DOI (spelt in upper case): one paper, one card, both sources."""
    (tmp_path / "config.toml").write_text(CONFIG.format(base=server.base))
    OpenalexApi([json.loads(data("openalex/work_W2741809807_state_of_oa.json"))]).mount(server)
    server.route("/cr/works", CrossrefApi(items()))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["--config", str(tmp_path / "config.toml"), "once"])
    assert result.exit_code == 0, result.output
    [out] = (tmp_path / "out").glob("*.json")
    titles = sorted(p["title"][:20] for p in json.loads(out.read_text()))
    assert titles == ["Salmon lice biology,", "The state of OA: a l"]
    with sqlite3.connect(tmp_path / "watcher.db") as conn:
        rows = conn.execute("SELECT key, sources FROM papers WHERE key LIKE 'doi:10.7717/%'").fetchall()
    assert len(rows) == 1 and rows[0][0] == "doi:10.7717/peerj.4375"
    assert sorted(json.loads(rows[0][1])) == ["citations", "journals"]
