"""One paper per work (docs/design.md "Identity") end to end: `watcher once` against local stand-ins of the arXiv API, bioRxiv and
medRxiv's details API, a journal's RSS feed and NCBI E-utilities delivers one digest with papers
from all five; a bioRxiv preprint, its v2, its PubMed record and its journal version are one
paper (delivered once, then updates); an arXiv paper whose arxiv:doi a journal lists is one
paper; each source's faults fail only that source, with nothing of it stored."""

from __future__ import annotations

import json
import re
import sqlite3
import warnings


from bioserver import BiorxivApi, PubmedApi
from helpers import run_cli
from deliverkit import ledger
from helpers import data
from httpserver import Reply, server  # noqa: F401
from watcher.config import load_config

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

PLATEAU = "doi:10.1101/2026.11.20.689412"
H5N1 = "doi:10.1101/2026.11.19.26354810"
FAST = {"WATCHER_HTTP_RETRIES": "1", "WATCHER_HTTP_BACKOFF": "0.01", "WATCHER_HTTP_MAX_BACKOFF": "0.05",
        "WATCHER_HTTP_RETRY_AFTER_CAP": "5", "WATCHER_DB_TIMEOUT": "5"}

CONFIG = """
[watcher]
database = "watcher.db"

[source.ax]
type = "arxiv"
query = "cat:q-bio.NC"
url = "{base}/api/query"
first_fetch = "3650d"
timeout = 2

[source.bio]
type = "biorxiv"
url = "{base}/bio"
categories = ["neuroscience", "bioinformatics", "immunology", "genomics"]
timeout = 2

[source.med]
type = "biorxiv"
server = "medrxiv"
url = "{base}/bio"
timeout = 2

[source.natneuro]
type = "feed"
url = "{base}/neuro.rss"
timeout = 2

[source.pm]
type = "pubmed"
term = '(dendritic plateau[tiab]) OR H5N1[tiab] OR (base editing[tiab])'
url = "{base}/eutils/"
timeout = 2

[profile.neuro]
query = 'jr:"Nature Neuroscience" OR cat:neuroscience OR cat:q-bio.NC'

[profile.everything]
query = "doi:10.* OR jr:arxiv"
max_papers = 200

[digest.d]
profiles = ["neuro", "everything"]
every = "1d"
lookback = "3650d"
send_empty = true
formats = ["html", "json", "markdown"]
channels = ["archive"]

[channel.archive]
type = "file"
path = "out/{{digest}}-{{date}}.{{ext}}"
"""


def without_item(rss: bytes, doi: bytes) -> bytes:
    """The feed without the item of ``doi``."""
    return re.sub(rb"<item rdf:about=\"[^\"]*" + re.escape(doi.split(b"/")[1]) + rb"\">.*?</item>\s*",
                  b"", rss, flags=re.S)


def serve(server, *, bio: str, feed: bytes, pmids: set[str] | None):
    server.route("/api/query", Reply(body=data("arxiv_api_q-bio.NC_2026-11-25_constructed.xml"),
                                     headers={"Content-Type": "application/atom+xml"}))
    server.route("/bio/details/biorxiv/*", BiorxivApi(data(bio), page_size=2).reply)
    server.route("/bio/details/medrxiv/*", BiorxivApi(data("medrxiv_details_2026-11-20_2026-11-23.json")).reply)
    server.route("/neuro.rss", Reply(body=feed, headers={"Content-Type": "application/rdf+xml"}))
    pubmed = PubmedApi(data("pubmed_esearch_2026-11-20_2026-11-26.json"),
                       data("pubmed_efetch_2026-11-20_2026-11-26.xml"), pmids)
    server.route("/eutils/esearch.fcgi", pubmed.esearch)
    server.route("/eutils/efetch.fcgi", pubmed.efetch)


def once(tmp_path):
    r = run_cli("--config", str(tmp_path / "config.toml"), "once", cwd=tmp_path, env=FAST)
    return r


def newest(tmp_path, ext: str) -> str:
    files = sorted((tmp_path / "out").glob(f"*.{ext}"), key=lambda f: f.stat().st_mtime_ns)
    return files[-1].read_text()


def test_five_sources_one_digest_and_one_paper_per_work(tmp_path, server):
    (tmp_path / "config.toml").write_text(CONFIG.format(base=server.base))
    nature = data("nature_neuroscience_rss1_2026-11-25.xml")
    # run 1: the preprint's v1; the journal and PubMed do not list it yet
    serve(server, bio="biorxiv_details_2026-11-20_2026-11-23.json",
          feed=without_item(nature, b"10.1038/s41593-026-02114-7"), pmids={"41298804", "41295530"})
    first = once(tmp_path)
    assert first.returncode == 0, first.stderr
    papers = {p["title"]: p for p in json.loads(newest(tmp_path, "json"))}
    by_source = {s for p in papers.values() for s in p["sources"]}
    assert by_source == {"ax", "bio", "med", "natneuro", "pm"}  # five sources, one digest
    assert len(papers) == 10
    fm = papers["A foundation model of mouse visual cortex predicts responses to natural movies"]
    assert fm["arxiv_id"] == "2611.18342" and fm["sources"] == ["ax", "natneuro"]  # arxiv:doi = the item's
    assert fm["venue"] == "Nature Neuroscience" and fm["doi"] == "10.1038/s41593-026-02120-9"
    flu = next(p for p in papers.values() if p["title"].startswith("Household transmission"))
    assert flu["sources"] == ["med", "pm"] and flu["pmid"] == "41298804"  # medRxiv's published DOI
    assert flu["doi"] == "10.1016/s1473-3099(26)00412-9" and flu["venue"] == "The Lancet. Infectious Diseases"
    plateau = papers["Dendritic plateau potentials gate place-field formation in hippocampal CA1"]
    assert plateau["venue"] == "bioRxiv" and plateau["doi"] == "10.1101/2026.11.20.689412"
    assert "jr: Nature Neuroscience" in fm["reasons"]
    html = newest(tmp_path, "html")
    assert "via ax, natneuro" in html and "doi:10.1038/s41593-026-02120-9" in html
    assert "The Lancet. Infectious Diseases" in html and "via med, pm" in html
    assert ledger(tmp_path).count(PLATEAU) == 1

    # run 2: version 2 of the preprint is an update, not a new paper
    serve(server, bio="biorxiv_details_2026-11-21_2026-11-25_v2.json",
          feed=without_item(nature, b"10.1038/s41593-026-02114-7"), pmids={"41298804", "41295530"})
    second = once(tmp_path)
    assert second.returncode == 0, second.stderr
    assert json.loads(newest(tmp_path, "json")) == []  # nothing new
    md = newest(tmp_path, "md")
    assert "Dendritic plateau potentials gate place-field formation in hippocampal CA1](" in md and "(v2)" in md

    # run 3: bioRxiv links the journal DOI, the journal's feed and PubMed list the article, and
    # a posting of an earlier day arrives late
    serve(server, bio="biorxiv_details_2026-11-20_2026-11-26.json", feed=nature, pmids=None)
    third = once(tmp_path)
    assert third.returncode == 0, third.stderr
    new = json.loads(newest(tmp_path, "json"))
    assert [p["title"] for p in new] == ["Single-nucleus atlas of the ageing human retina"]
    html = newest(tmp_path, "html")
    updated = html.split(">Updated<", 1)[1]
    assert "Dendritic plateau potentials" in updated and "published in Nature Neuroscience" in updated
    assert ledger(tmp_path).count(PLATEAU) == 1  # one delivery of the work, ever
    with sqlite3.connect(tmp_path / "watcher.db") as conn:
        rows = conn.execute("SELECT key, sources, pmid, dois, journal FROM papers WHERE title LIKE "
                            "'Dendritic plateau%'").fetchall()
    assert len(rows) == 1
    key, sources, pmid, dois, journal = rows[0]
    assert key == PLATEAU and json.loads(sources) == ["bio", "natneuro", "pm"] and pmid == "41302217"
    assert json.loads(dois) == ["10.1101/2026.11.20.689412", "10.1038/s41593-026-02114-7"]
    assert journal == "Nature Neuroscience"

    # the web paper page shows the DOIs, the venue, PubMed and where it was announced
    from webkit import app_for

    config = load_config(tmp_path / "config.toml")
    with TestClient(app_for(config, tmp_path / "watcher.db")) as client:
        page = client.get("/papers/" + PLATEAU)
        assert page.status_code == 200
        text = " ".join(re.sub(r"<[^>]+>", " ", page.text).split())
        assert "DOI 10.1101/2026.11.20.689412 · 10.1038/s41593-026-02114-7" in text
        assert "Venue bioRxiv → Nature Neuroscience DOI" in text and "PubMed 41302217" in text  # one spelling each
        assert "Announced by bio, natneuro, pm" in text
        found = client.get("/search", params={"q": "jr:biorxiv AND plateau"})
        assert "Dendritic plateau potentials" in found.text and "foundation model" not in found.text

    # BibTeX of the reading list: the journal version is an @article with its journal and DOI
    assert run_cli("--config", str(tmp_path / "config.toml"), "rate", "save",
                   "10.1038/S41593-026-02114-7", cwd=tmp_path).returncode == 0
    bib = run_cli("--config", str(tmp_path / "config.toml"), "saved", "--to", "bibtex", cwd=tmp_path)
    assert bib.returncode == 0, bib.stderr
    out = bib.stdout.decode()
    assert out.lower().startswith("@article{okafor2026dendritic"), out
    assert "journal = {Nature Neuroscience}" in out and "doi = {10.1038/s41593-026-02114-7}" in out


def test_each_source_fails_alone_and_nothing_of_it_is_stored(tmp_path, server):
    (tmp_path / "config.toml").write_text(CONFIG.format(base=server.base))
    serve(server, bio="biorxiv_details_2026-11-20_2026-11-23.json",
          feed=data("nature_neuroscience_rss1_2026-11-25.xml"), pmids=None)
    api = BiorxivApi(data("biorxiv_details_2026-11-20_2026-11-23.json"), page_size=1)

    def second_page_broken(request):  # each category's page 1 fine, page 2 cut off mid-record
        reply = api.reply(request)
        return reply if request.path.endswith("/0") else Reply(body=reply.body[:120])

    server.route("/bio/details/biorxiv/*", second_page_broken)
    server.route("/eutils/efetch.fcgi", Reply(status=429, headers={"Retry-After": "3600"}))
    server.route("/neuro.rss", Reply(body=data("nature_neuroscience_rss1_2026-11-25.xml")[:-300]))
    r = once(tmp_path)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert re.search(r"source bio failed: .*/bio/details/biorxiv/.*invalid JSON", err)
    assert re.search(r"source pm failed: .*429.*3600", err)
    assert re.search(r"source natneuro failed: .*neuro.rss.*not well-formed", err)
    delivered = {p["title"] for p in json.loads(newest(tmp_path, "json"))}
    assert "Sequence replay in recurrent networks with dendritic plateau plasticity" in delivered
    assert any(t.startswith("Wastewater surveillance") for t in delivered)  # medRxiv was fine
    with sqlite3.connect(tmp_path / "watcher.db") as conn:
        sources = {json.loads(s)[0] for (s,) in conn.execute("SELECT sources FROM papers")}
        failing = {r[0] for r in conn.execute("SELECT name FROM sources WHERE last_error IS NOT NULL")}
    assert sources == {"ax", "med"}  # not one record of the failed sources, not even page 1's
    assert failing == {"bio", "pm", "natneuro"}
    status = run_cli("--config", str(tmp_path / "config.toml"), "status", cwd=tmp_path)
    assert b"FAILING" in status.stdout
