"""The biorxiv, pubmed and feed sources against local stand-ins of bioRxiv's details API, NCBI
E-utilities and a journal's RSS feed (tests/servers/bioserver.py): paging, reaching back, versions,
rate, conditional GET, 429 with Retry-After, malformed answers."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from bioserver import BiorxivApi, PubmedApi
from helpers import context, data, fast_client
from httpserver import Reply, server  # noqa: F401
from watcher.sources import source_config
from watcher.errors import SourceError
from watcher.sources import make_source
from watcher.sources import biorxiv as biorxiv_module
from watcher.sources import pubmed as pubmed_module
from watcher.store import Store

NOW = datetime(2026, 11, 23, 20, 0, tzinfo=timezone.utc)
DAY1 = "biorxiv_details_2026-11-20_2026-11-23.json"
LATER = "biorxiv_details_2026-11-20_2026-11-26.json"
MED = "medrxiv_details_2026-11-20_2026-11-23.json"
ESEARCH = "pubmed_esearch_2026-11-20_2026-11-26.json"
EFETCH = "pubmed_efetch_2026-11-20_2026-11-26.xml"
NATURE = "nature_neuroscience_rss1_2026-11-25.xml"
PLATEAU = "doi:10.1101/2026.11.20.689412"


def bio(stand_in, now=NOW, **kw):
    cfg = source_config(name="bio", type="biorxiv", url=stand_in.url("/api"), timeout=10.0,
                       server=kw.pop("server", "biorxiv"), **kw)
    return make_source(cfg, context(fast_client(), now))


def pubmed(server, now=NOW, **kw):
    cfg = source_config(name="pm", type="pubmed", url=server.url("/eutils/"), timeout=10.0,
                       term="(dendritic plateau[tiab]) OR H5N1[tiab] OR base editing[tiab]", **kw)
    return make_source(cfg, context(fast_client(), now))


def serve_pubmed(stand_in) -> PubmedApi:
    """E-utilities over the fixtures at /eutils/."""
    api = PubmedApi(data(ESEARCH), data(EFETCH))
    stand_in.route("/eutils/esearch.fcgi", api.esearch)
    stand_in.route("/eutils/efetch.fcgi", api.efetch)
    return api


def feed(server, now=NOW, **kw):
    cfg = source_config(name="natneuro", type="feed", url=server.url("/neuro.rss"), timeout=10.0,
                       **{"first_fetch": None, **kw})
    return make_source(cfg, context(fast_client(), now))


# --- biorxiv ---------------------------------------------------------------------------------

def test_biorxiv_pages_by_cursor_and_reaches_back_for_late_postings(server):
    api = BiorxivApi(data(DAY1), page_size=2)
    server.route("/api/details/*", api.reply)
    first = bio(server, first_fetch=timedelta(days=3)).fetch({})
    assert [r.path.rsplit("/", 1)[1] for r in server.requests] == ["0", "2"]
    assert api.intervals[0] == ("biorxiv", "2026-11-20", "2026-11-23", None)
    assert len(first.papers) == 4 and first.state["last_day"] == "2026-11-23"
    plateau = next(p for p in first.papers if p.key == PLATEAU)
    assert plateau.venues == ["bioRxiv"] and plateau.categories == ["neuroscience"]
    assert plateau.authors[:2] == ["M. N. Okafor", "J. Lindqvist"] and plateau.sources == ["bio"]
    assert plateau.url == "https://www.biorxiv.org/content/10.1101/2026.11.20.689412v1"
    # three days later: the run reaches back OVERLAP before the last day fetched
    later = BiorxivApi(data(LATER), page_size=4)
    server.route("/api/details/*", later.reply)
    second = bio(server, now=NOW + timedelta(days=3)).fetch(first.state)
    start = date(2026, 11, 23) - biorxiv_module.OVERLAP
    assert later.intervals[0][1:3] == (start.isoformat(), "2026-11-26")
    with Store.open(None) as s:
        s.upsert(first.papers, NOW)
        counts = s.upsert(second.papers, NOW + timedelta(days=3))
        assert counts.new == ["doi:10.1101/2026.11.17.688731"]  # the late posting
        assert counts.updated == [PLATEAU]  # v2, published: one paper
        p = s.get(PLATEAU)
        assert p.version == 2 and p.doi == "10.1038/s41593-026-02114-7"
        assert p.publication == "published as doi:10.1038/s41593-026-02114-7"


def test_biorxiv_asks_per_category_and_medrxiv_by_its_server(server):
    api = BiorxivApi(data(DAY1), page_size=10)
    server.route("/api/details/*", api.reply)
    result = bio(server, categories=("neuroscience", "cell biology")).fetch({"last_day": "2026-11-23"})
    assert [(i[0], i[3]) for i in api.intervals] == [("biorxiv", "neuroscience"),
                                                     ("biorxiv", "cell_biology")]
    assert {p.categories[0] for p in result.papers} == {"neuroscience"}
    med = BiorxivApi(data(MED))
    server.route("/api/details/*", med.reply)
    papers = bio(server, server="medrxiv").fetch({}).papers
    assert med.intervals[0][0] == "medrxiv"
    assert {p.venues[0] for p in papers} == {"medRxiv"}
    linked = next(p for p in papers if p.version == 1 and len(p.dois) == 2)
    assert linked.dois[1] == "10.1016/s1473-3099(26)00412-9"


def test_biorxiv_honours_429_retry_after_and_fails_alone_on_malformed_json(server):
    api = BiorxivApi(data(DAY1), page_size=2)
    server.route("/api/details/*", Reply(status=429, headers={"Retry-After": "1"}), api.reply)
    client = fast_client()
    cfg = source_config(name="bio", type="biorxiv", url=server.url("/api"), server="biorxiv", timeout=10.0)
    assert len(make_source(cfg, context(client, NOW)).fetch({}).papers) == 4
    assert client.sleep[0] >= 1.0  # the Retry-After was honoured
    page = api.reply(type("R", (), {"path": "/api/details/biorxiv/a/b/0", "query": {}})()).body
    server.route("/api/details/*", Reply(body=page[: len(page) // 2]))  # cut off mid-record
    with pytest.raises(SourceError, match=r"/details/biorxiv/.*invalid JSON.*source 'bio'"):
        bio(server).fetch({})


# --- pubmed ----------------------------------------------------------------------------------

def test_pubmed_searches_with_history_then_fetches_in_batches_at_the_allowed_rate(server, monkeypatch):
    api = serve_pubmed(server)
    monkeypatch.setattr(pubmed_module, "BATCH", 2)
    result = pubmed(server, first_fetch=timedelta(days=3)).fetch({})
    search, *fetches = server.requests
    assert search.query["usehistory"] == "y" and search.query["datetype"] == "edat"
    assert (search.query["mindate"], search.query["maxdate"]) == ("2026/11/20", "2026/11/23")
    assert "api_key" not in search.query
    assert [(f.query["retstart"], f.query["retmax"]) for f in fetches] == [("0", "2"), ("2", "2")]
    assert all(f.query["WebEnv"] == api.webenv for f in fetches)
    gaps = [b.at - a.at for a, b in zip(server.requests, server.requests[1:])]
    assert min(gaps) >= 1 / 3 - 0.02  # three requests a second without a key
    assert result.state["last_day"] == "2026-11-23"
    by_pmid = {p.pmid: p for p in result.papers}
    plateau = by_pmid["41302217"]
    assert plateau.doi == "10.1038/s41593-026-02114-7" and plateau.journal == "Nature Neuroscience"
    assert plateau.title == "Dendritic plateau potentials gate place-field formation in hippocampal CA1"
    assert plateau.authors[0] == "Maria N Okafor" and plateau.announced == date(2026, 11, 25)
    lancet = by_pmid["41298804"]
    assert lancet.abstract.startswith("BACKGROUND: Human infections") and "METHODS: We followed" in lancet.abstract
    assert lancet.authors[-1] == "H5N1 Dairy Household Study Group"
    assert lancet.doi == "10.1016/s1473-3099(26)00412-9"
    editing = by_pmid["41295530"]
    assert editing.pmcid == "PMC12651187" and editing.authors == ["Ingrid Haugen", "Ren Tanaka"]
    assert "PCSK9" in editing.title and editing.key == "doi:10.1038/s41467-026-65521-8"


def test_pubmed_sends_the_api_key_and_goes_faster_with_it(server, monkeypatch):
    serve_pubmed(server)
    monkeypatch.setenv("TEST_NCBI_KEY", "k3y")
    source = pubmed(server, api_key_env="TEST_NCBI_KEY")
    assert source.interval_s == pytest.approx(0.1)
    source.fetch({"last_day": "2026-11-22"})
    assert all(r.query["api_key"] == "k3y" for r in server.requests)
    assert server.requests[0].query["mindate"] == "2026/11/20"  # the last day less OVERLAP


def test_pubmed_errors_name_the_url_and_fail_the_source(server):
    api = PubmedApi(data(ESEARCH), data(EFETCH))
    server.route("/eutils/esearch.fcgi", Reply(body=b'{"error":"API rate limit exceeded","count":"0"}'))
    with pytest.raises(SourceError, match=r"esearch.fcgi.*API rate limit exceeded"):
        pubmed(server).fetch({})
    server.route("/eutils/esearch.fcgi", api.esearch)
    body = api.efetch(type("R", (), {"query": {"WebEnv": api.webenv, "query_key": "1"}})()).body
    server.route("/eutils/efetch.fcgi", Reply(body=body[:-200]))  # truncated XML
    with pytest.raises(SourceError, match=r"efetch.fcgi.*not well-formed XML"):
        pubmed(server).fetch({})
    server.route("/eutils/efetch.fcgi", Reply(body=b"<html><body>Bad Gateway</body></html>"))
    with pytest.raises(SourceError, match=r"efetch.fcgi.*HTML page"):
        pubmed(server).fetch({})


# --- feed ------------------------------------------------------------------------------------

def test_a_journal_feed_gives_doi_journal_abstract_and_is_fetched_conditionally(server):
    def reply(request):
        if request.headers.get("if-none-match") == '"toc-48"':
            return Reply(status=304, headers={"ETag": '"toc-48"'})
        return Reply(body=data(NATURE), headers={"ETag": '"toc-48"', "Content-Type": "application/rdf+xml"})

    server.route("/neuro.rss", reply)
    first = feed(server).fetch({})
    assert [p.doi for p in first.papers] == ["10.1038/s41593-026-02114-7", "10.1038/s41593-026-02120-9",
                                             "10.1038/s41593-026-02098-4"]
    p = first.papers[0]
    assert p.journal == "Nature Neuroscience" and p.venues == ["Nature Neuroscience"]
    assert p.abstract.startswith("Two-photon imaging of CA1 dendrites")  # citation line dropped
    assert p.authors[-1] == "Katie C. Bittner" and p.announced == date(2026, 11, 25)
    assert p.url == "https://www.nature.com/articles/s41593-026-02114-7"
    assert first.papers[2].abstract == ""  # the publisher gave no abstract
    again = feed(server).fetch(first.state)
    assert again.not_modified and again.papers == []
    server.route("/neuro.rss", Reply(body=data(NATURE)[:-400]))  # cut off mid-item
    with pytest.raises(SourceError, match=r"neuro.rss.*not well-formed"):
        feed(server).fetch({})


def test_a_feeds_first_fetch_takes_only_items_within_first_fetch_and_later_fetches_take_all(server):
    server.route("/neuro.rss", Reply(body=data(NATURE)))  # items of 11-25, 11-24 and 11-21; no ETag
    now = datetime(2026, 11, 26, 8, 0, tzinfo=timezone.utc)
    first = feed(server, now, first_fetch=timedelta(days=2)).fetch({})
    assert [p.announced for p in first.papers] == [date(2026, 11, 25), date(2026, 11, 24)]
    later = feed(server, now, first_fetch=timedelta(days=2)).fetch(first.state)
    assert len(later.papers) == 3  # after the first fetch the store tells new from seen
    assert len(feed(server, now).fetch({}).papers) == 3  # no first_fetch: every item, first time too


def test_a_feed_item_without_prism_takes_its_doi_from_dc_identifier_or_the_link():
    from watcher.formats import journal_feed

    rss = b"""<?xml version="1.0"?><rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
    <channel><title>PNAS: Latest articles</title>
    <item><title>One</title><link>https://www.pnas.org/doi/10.1073/pnas.2611234123?af=R</link>
      <description>An abstract.</description><dc:creator>A. Author</dc:creator></item>
    <item><title>Two</title><link>https://example.org/a</link>
      <dc:identifier>doi:10.1103/PhysRevLett.136.010401</dc:identifier></item>
    </channel></rss>"""
    one, two = journal_feed.parse(rss, "pnas").papers
    assert one.doi == "10.1073/pnas.2611234123" and one.journal == "PNAS"  # ": Latest articles" is no part of it
    assert one.abstract == "An abstract." and one.authors == ["A. Author"]
    assert two.doi == "10.1103/physrevlett.136.010401"


# --- config ----------------------------------------------------------------------------------

SOURCES = """
[source.bio]
type = "biorxiv"
server = "biorxiv"
categories = ["neuroscience", "Cell_Biology"]
[source.pubmed]
type = "pubmed"
term = '(CRISPR[tiab]) AND (base editing[tiab])'
api_key_env = "NCBI_API_KEY"
[source.nature]
type = "feed"
url = "https://www.nature.com/nature.rss"
[profile.neuro]
categories = ["neuroscience", "cs.LG"]
query = "plateau"
"""


def test_the_sources_of_spec_8_load_and_bad_ones_are_named(write_config):
    from watcher.config import load_config
    from watcher.errors import ConfigError

    config = load_config(write_config(SOURCES))
    assert config.sources["bio"].options.categories == ("neuroscience", "cell biology")
    assert config.sources["pubmed"].options.term.startswith("(CRISPR") and config.sources["nature"].type == "feed"
    assert config.secret_vars()["source.pubmed.api_key_env"] == "NCBI_API_KEY"
    assert config.profiles["neuro"].categories == ("neuroscience", "cs.LG")
    local = load_config(write_config(SOURCES.replace("https://www.nature.com/nature.rss",
                                                     "file:///srv/toc/nature.rss")))
    assert local.sources["nature"].url == "file:///srv/toc/nature.rss"
    assert config.sources["nature"].first_fetch is None and config.sources["bio"].first_fetch == timedelta(days=3)
    for typ in ("bio", "pubmed", "nature"):  # docs/configuration.md: every source keeps url, timeout and first_fetch
        kept = load_config(write_config(SOURCES.replace(f"[source.{typ}]\n", f'[source.{typ}]\nfirst_fetch = "7d"\ntimeout = 12\n')))
        assert kept.sources[typ].first_fetch == timedelta(days=7) and kept.sources[typ].timeout == 12
    for change, key, words in [
        (('"neuroscience", "Cell_Biology"', '"neurosciense"'), "source.bio.categories", "not a biorxiv subject"),
        (('server = "biorxiv"', 'server = "chemrxiv"'), "source.bio.server", "not one of biorxiv, medrxiv"),
        (("term = '(CRISPR[tiab]) AND (base editing[tiab])'", 'term = " "'), "source.pubmed.term", "must not be empty"),
        (('url = "https://www.nature.com/nature.rss"', ""), "source.nature.url", "needs the url"),
        (('url = "https://www.nature.com/nature.rss"', 'url = "nature.rss"'), "source.nature.url", "not an http(s) URL"),
        (('api_key_env = "NCBI_API_KEY"', 'api_key_env = "abc-123 secret"'), "source.pubmed.api_key_env", "environment variable"),
    ]:
        with pytest.raises(ConfigError) as e:
            load_config(write_config(SOURCES.replace(*change)))
        assert key in str(e.value) and words in str(e.value), (change, str(e.value))


def test_an_empty_page_short_of_the_total_fails_instead_of_leaving_papers_out(server):
    api = BiorxivApi(data(DAY1), page_size=2)

    def short(request):  # the second page claims the total but holds nothing
        reply = api.reply(request)
        if request.path.endswith("/2"):
            return Reply(body=b'{"messages":[{"status":"ok","cursor":2,"count":0,"total":"4"}],'
                              b'"collection":[]}')
        return reply

    server.route("/api/details/*", short)
    with pytest.raises(SourceError, match=r"no record at cursor 2 of 4"):
        bio(server).fetch({})
    serve_pubmed(server)
    server.route("/eutils/efetch.fcgi", Reply(body=b"<?xml version='1.0'?>\n<PubmedArticleSet>\n</PubmedArticleSet>\n"))
    with pytest.raises(SourceError, match=r"efetch returned no record at 0 of 3"):
        pubmed(server).fetch({})


def test_the_ncbi_key_reaches_ncbi_but_never_the_log(tmp_path, server):
    from helpers import run_cli

    serve_pubmed(server)
    (tmp_path / "config.toml").write_text(f"""
[watcher]
database = "watcher.db"
[source.pm]
type = "pubmed"
term = "H5N1[tiab]"
url = "{server.url('/eutils/')}"
api_key_env = "TEST_NCBI_KEY"
""")
    r = run_cli("--log-level", "debug", "--config", str(tmp_path / "config.toml"), "fetch",
                cwd=tmp_path, env={"TEST_NCBI_KEY": "ncbi-5ecret-key-0123"})
    assert r.returncode == 0, r.stderr
    assert [q.query["api_key"] for q in server.requests] == ["ncbi-5ecret-key-0123"] * 2
    assert b"efetch.fcgi" in r.stderr and b"ncbi-5ecret-key-0123" not in r.stderr + r.stdout


def test_an_atom_feed_of_a_preprint_server_gives_preprints_not_journal_articles():
    from watcher.formats import journal_feed

    atom = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>ChemRxiv: Catalysis</title><id>urn:chemrxiv:catalysis</id><updated>2026-11-24T08:00:00Z</updated>
  <entry>
    <title>Photoredox C-H amination with an earth-abundant copper catalyst</title>
    <id>https://doi.org/10.26434/chemrxiv-2026-x7k2q</id>
    <link href="https://doi.org/10.26434/chemrxiv-2026-x7k2q"/>
    <updated>2026-11-24T07:12:00Z</updated><published>2026-11-23T15:40:00Z</published>
    <author><name>Yuki Tanabe</name></author><author><name>Lena Vogt</name></author>
    <summary type="html">&lt;p&gt;We report a copper photocatalyst for C-H amination.&lt;/p&gt;</summary>
  </entry>
</feed>"""
    [p] = journal_feed.parse(atom, "chemrxiv").papers
    assert p.doi == "10.26434/chemrxiv-2026-x7k2q" and p.journal is None and p.publication is None
    assert p.venues == ["ChemRxiv: Catalysis"] and p.authors == ["Yuki Tanabe", "Lena Vogt"]
    assert p.abstract == "We report a copper photocatalyst for C-H amination."
    assert p.published.isoformat() == "2026-11-23T15:40:00+00:00"


def test_biorxiv_reaches_back_as_far_as_the_arxiv_source():
    """A posting that reaches the details API a week late is still asked for: the bioRxiv
    source reaches back as far as the arXiv source does (two weeks), not three days."""
    from watcher.sources import arxiv as arxiv_module

    assert biorxiv_module.OVERLAP == arxiv_module.OVERLAP == timedelta(days=14)


def test_both_doi_prefixes_of_biorxiv_and_medrxiv_are_preprints_not_journal_articles():
    """bioRxiv and medRxiv register DOIs under 10.1101/ and, since 2025, 10.64898/ (the list is
    data: watcher/data/preprint_doi_prefixes.txt); a preprint under either is no journal article."""
    from watcher.models import PREPRINT_DOI_PREFIXES, Paper, is_preprint_doi

    assert {"10.1101/", "10.64898/"} <= set(PREPRINT_DOI_PREFIXES)
    for doi in ("10.1101/2026.03.01.612345", "10.64898/2026.04.03.716344"):
        assert is_preprint_doi(doi)
        preprint = Paper(title="A preprint", doi=doi, authors=["A. Author"])
        assert preprint.journal_doi is None and preprint.publication is None
    assert not is_preprint_doi("10.1038/s41593-026-02114-7")
