"""Every field of the documents watcher reads (see docs/sources.md): ``watcher convert`` reads
every format a source reads (OpenAlex ``/works`` answers, Zotero item lists), a bioRxiv /
medRxiv abstract is read without the details API's conversion markers, a PubMed journal is
named without its catalogue subtitle.

Documents: the OpenAlex work W2741809807 and the Zotero items of tests/data/openalex and
tests/data/zotero (real answers; SOURCES.md there). The works pages are built at run time
around the real work in the two ``meta`` shapes the OpenAlex documentation gives ("Paging":
``page`` 1 with no cursor, and ``page`` null with ``next_cursor``), compact and
pretty-printed, and once with ``abstract_inverted_index`` null (as OpenAlex serves most closed
articles)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import run_cli_text
from httpserver import server  # noqa: F401
from watcher import formats
from watcher.formats.highwire import abstract_text
from watcher.formats.pubmed_xml import journal_name

DATA = Path(__file__).parent.parent / "data"
WORK = json.loads((DATA / "openalex" / "work_W2741809807_state_of_oa.json").read_text("utf-8"))
TITLE = "The state of OA: a large-scale analysis of the prevalence and impact of Open Access articles"


def _page(meta: dict, work: dict, indent) -> bytes:
    return json.dumps({"meta": meta, "results": [work], "group_by": []}, indent=indent).encode()


PAGES = {
    "page-meta": _page({"count": 1, "db_response_time_ms": 929, "page": 1, "per_page": 25}, WORK, None),
    "cursor-meta-pretty": _page({"count": 1, "db_response_time_ms": 28, "page": None, "per_page": 100,
                                 "next_cursor": None}, WORK, 2),
    "no-abstract-pretty": _page({"count": 1, "db_response_time_ms": 28, "page": 1, "per_page": 25},
                                {**WORK, "abstract_inverted_index": None}, 4),
    "single-work": json.dumps(WORK, indent=2).encode(),
}


@pytest.mark.parametrize("name", PAGES)
def test_convert_reads_an_openalex_works_answer_detected_and_by_from(name, tmp_path):
    path = tmp_path / f"{name}.json"
    path.write_bytes(PAGES[name])
    for args in ([str(path)], ["--from", "openalex", str(path)]):
        r = run_cli_text("convert", "--to", "json", *args)
        assert r.returncode == 0, r.stderr
        [paper] = json.loads(r.stdout)
        assert paper["title"] == TITLE
        assert paper["doi"] == "10.7717/peerj.4375"
        assert paper["authors"][0] == "Heather A. Piwowar" and len(paper["authors"]) == 9
        if name == "no-abstract-pretty":
            assert paper["abstract"] == ""
        else:
            assert paper["abstract"].startswith("Despite growing interest in Open Access")


def test_convert_reads_zotero_item_lists_detected_and_by_from(tmp_path):
    """The Web API's answer (an array of items with ``data``; here the real item of
    pyzotero's test answers in an array, as ``/items`` lists it) and an array of the items'
    data (Zotero's own arXiv import)."""
    api = tmp_path / "items.json"
    api.write_text("[" + (DATA / "zotero" / "pyzotero_item.json").read_text("utf-8") + "]", "utf-8")
    for args in ([str(api)], ["--from", "zotero", str(api)]):
        r = run_cli_text("convert", "--to", "json", *args)
        assert r.returncode == 0, r.stderr
        [paper] = json.loads(r.stdout)
        assert paper["title"].startswith("Electron Microscopy and Analysis 1993: Proceedings")
        assert paper["authors"] == ["Institute of Physics (Great Britain)"]
    r = run_cli_text("convert", "--to", "json", str(DATA / "zotero" / "translator_items.json"))
    assert r.returncode == 0, r.stderr
    papers = json.loads(r.stdout)
    assert [p["title"] for p in papers] == ["A dual pair for free boundary fluids",
                                            "Precision of a Low-Cost InGaAs Detector for Near Infrared Photometry"]
    assert papers[0]["arxiv_id"] == "1402.1516" and papers[1]["doi"] == "10.1086/672573"
    assert papers[0]["authors"] == ["Francois Gay-Balmaz", "Cornelia Vizman"]


# --- real answers of other projects, read to the papers written beside them -----------------
# Each document is an answer the service served, saved by another project (provenance in the
# SOURCES.md of its folder); NAME.expected.json holds its papers as read from the document by
# hand, not by running watcher.
REAL = [
    ("openalex/isugenomics_works_cursor_trimmed.json", "openalex"),  # cursor meta, indent 1, null abstract
    ("zotero/web-library_collection-items_dogs.json", "zotero"),  # Web API /items, a note among them
    ("biorxiv/radar-papers_medrxiv_details_2026-09-15.json", "biorxiv-json"),  # the markers, glued headings
]


@pytest.mark.parametrize("name, kind", REAL, ids=[Path(n).parent.name for n, _ in REAL])
def test_convert_reads_a_real_answer_to_its_papers_detected_and_by_from(name, kind):
    path = DATA / name
    want = json.loads(path.with_name(path.name.replace(".json", ".expected.json")).read_text("utf-8"))
    for args in ([str(path)], ["--from", kind, str(path)]):
        r = run_cli_text("convert", "--to", "json", *args)
        assert r.returncode == 0, r.stderr
        papers = json.loads(r.stdout)
        assert [p["title"] for p in papers] == [w["title"] for w in want]
        for paper, w in zip(papers, want):
            assert paper["authors"] == w["authors"], w["title"]
            assert paper["journal"] == w["journal"], w["title"]
            assert paper["doi"] == w["doi"], w["title"]
            assert (paper["published"] or "")[:10] == (w["date"] or ""), w["title"]
            assert paper["url"] == w["url"], w["title"]
            if "abstract_start" not in w:
                continue
            if not w["abstract_start"]:  # abstract_inverted_index null: no abstract, not "None"
                assert paper["abstract"] == "", w["title"]
            assert paper["abstract"].startswith(w["abstract_start"]), paper["abstract"][:200]
            assert paper["abstract"].endswith(w["abstract_end"]), paper["abstract"][-200:]
            for part in w["abstract_contains"]:
                assert part in paper["abstract"], (part, w["title"])
            assert not re.search(r"[OCM]_[A-Z]{2}|\{[a-z]+\}|  ", paper["abstract"]), paper["abstract"]
        if kind == "zotero":  # the note among the items is said, not silently dropped
            assert "item 4: a Zotero note, not a paper" in r.stderr


def test_every_format_a_source_reads_is_one_convert_reads():
    from watcher.formats import READERS

    assert {"openalex", "zotero", "biorxiv-json", "pubmed-xml", "arxiv-atom", "hf-json"} <= set(READERS)


# --- bioRxiv / medRxiv: the details API's markers -------------------------------------------
# Abstracts in the shapes the details API gives (the markers and glued headings as other
# projects' saved answers show them: "Abstract/SummaryO_ST_ABSBackgroundC_ST_ABS…",
# "HighlightsO_LI…\nC_LIO_LI…\nC_LI", "AO_SCPLOWBSTRACTC_SCPLOW…", "O_FIG O_LINKSMALLFIG …
# M_FIG C_FIG").
MARKED = {
    "BackgroundThe modified Blalock-Taussig-Thomas shunt palliates.\nObjectivesThis study asks why.":
        "Background: The modified Blalock-Taussig-Thomas shunt palliates. Objectives: This study asks why.",
    "Abstract/SummaryO_ST_ABSBackgroundC_ST_ABSCollaborative research programs need data.":
        "Background: Collaborative research programs need data.",
    "We present X.\n\nHighlightsO_LIA unified framework\nC_LIO_LISuperior performance\nC_LI":
        "We present X. Highlights: • A unified framework • Superior performance",
    "AO_SCPLOWBSTRACTC_SCPLOWManual annotation is slow. We introduce MO_SCPLOWETAC_SCPLOWMO_SCPLOWUSEC_SCPLOW.":
        "Manual annotation is slow. We introduce MetaMuse.",
    "It remains unreliable.\n\nGraphical Abstract\n\nO_FIG O_LINKSMALLFIG WIDTH=200 HEIGHT=46 "
    "SRC=\"FIGDIR/small/735386v1_ufig1.gif\" ALT=\"Figure 1\">\nView larger version (13K):\n"
    "org.highwire.dtl.DTLVardef@1868524_HPS_FORMAT_FIGEXP  M_FIG C_FIG": "It remains unreliable.",
    "AbstractO_ST_ABSAim:C_ST_ABSAvian malaria spreads.": "Aim: Avian malaria spreads.",
    # as the medRxiv answer of tests/data/biorxiv writes them: small capitals, a character by
    # its name, a heading glued to its first subsection's
    "Cohens O_SCPLOWKC_SCPLOWO_SCPCAP.C_SCPCAP Descriptor importance was explored.":
        "Cohens k. Descriptor importance was explored.",
    "normalized WSR ({rho} = 0.94) and {Delta}G{middle dot}mol, kept {braces}":
        "normalized WSR (\u03c1 = 0.94) and \u0394G\u00b7mol, kept {braces}",
    "ConclusionsIt works.\n\nCLINICAL PERSPECTIVEO_ST_ABSWhat is new?C_ST_ABSO_LIA first point.\nC_LI":
        "Conclusions: It works. CLINICAL PERSPECTIVE: What is new? \u2022 A first point.",
}


@pytest.mark.parametrize("raw", MARKED)
def test_a_details_api_abstract_reads_as_the_structure_its_markers_stand_for(raw):
    assert abstract_text(raw) == MARKED[raw]


def test_the_markers_never_reach_a_paper_read_from_the_details_api():
    record = {"doi": "10.1101/2026.01.02.26300001", "title": "T", "date": "2026-01-03", "version": "1",
              "server": "medRxiv", "abstract": next(iter(MARKED))}
    page = json.dumps({"messages": [{"status": "ok", "total": 1, "count": 1, "cursor": 0}],
                       "collection": [record]}).encode()
    [paper] = formats.read(page, "details").papers
    assert paper.abstract.startswith("Background: The modified Blalock")
    assert "BackgroundThe" not in paper.abstract and "ObjectivesThis" not in paper.abstract


def test_plain_abstracts_keep_their_words():
    text = "Findings hold in DeepMind's GitHub data.\n\nResults are robust."
    assert abstract_text(text) == "Findings hold in DeepMind's GitHub data. Results are robust."


# --- PubMed: a journal's name without its subtitle ------------------------------------------
@pytest.mark.parametrize("nlm, name", [
    ("European spine journal : official publication of the European Spine Society, the European "
     "Spinal Deformity Society, and the European Section of the Cervical Spine Research Society",
     "European Spine Journal"),
    ("The spine journal : official journal of the North American Spine Society", "The Spine Journal"),
    ("Brain : a journal of neurology", "Brain"),
    ("Journal of magnetic resonance (San Diego, Calif. : 1997)", "Journal of Magnetic Resonance"),
    ("The Lancet. Infectious diseases", "The Lancet. Infectious Diseases"),
])
def test_a_pubmed_journal_is_named_without_its_subtitle(nlm, name):
    assert journal_name(nlm, {"eng"}) == name


def test_a_pubmed_record_of_a_subtitled_journal_gives_the_journal_s_name():
    doc = ("<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><Journal><Title>"
           "European spine journal : official publication of the European Spine Society, the European "
           "Spinal Deformity Society, and the European Section of the Cervical Spine Research Society"
           "</Title></Journal><ArticleTitle>A.</ArticleTitle><Language>eng</Language></Article>"
           "</MedlineCitation></PubmedArticle></PubmedArticleSet>").encode()
    [paper] = formats.read(doc, "efetch").papers
    assert paper.journal == "European Spine Journal"


# --- a newcomer's first week ----------------------------------------------------------------
REPO = Path(__file__).resolve().parent.parent.parent


def test_no_made_up_home_for_the_project():
    """watcher has no public repository: no install line, project URL, docs link or user agent
    names one; a URL appears only as a placeholder the reader replaces with their own."""
    import subprocess
    import tomllib

    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True).stdout.split()
    named = [p for p in tracked if p.endswith((".md", ".toml", ".py", ".yml", ".yaml", ".txt", ".example"))
             and p != "tests/integration/test_every_field_right.py"
             and "github.com/watcher-papers" in (REPO / p).read_text("utf-8", errors="replace")]
    assert named == []
    assert "urls" not in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    from watcher.config import parse_config

    assert "http" not in parse_config({"watcher": {"timezone": "UTC"}}, REPO / "c.toml").settings.user_agent


def test_the_readme_s_cron_line_runs_under_cron_s_bare_environment(server, tmp_path):
    """The README's crontab line, run as cron runs it (``/bin/sh -c`` with HOME, a bare PATH and
    nothing else): it finds watcher (the venv's absolute path), reads the secrets of the env
    file (here the webhook URL the digest is posted to) and delivers."""
    import re
    import subprocess
    import sys

    from httpserver import Reply

    [line] = re.findall(r"^\s*(\*/15 \* \* \* \* .*)$", (REPO / "README.md").read_text("utf-8"), re.M)
    command = line.split(None, 5)[5]
    home = tmp_path / "home"
    (home / "watcher" / ".venv" / "bin").mkdir(parents=True)
    (home / "watcher" / ".venv" / "bin" / "watcher").symlink_to(Path(sys.executable).with_name("watcher"))
    papers = home / "papers"
    papers.mkdir()
    server.route("/hf/daily_papers", Reply(body=(DATA / "hf_daily_papers_2025-04-10.json").read_bytes()))
    server.route("/hook", Reply(body=b"ok"))
    (papers / "config.toml").write_text(f"""
[watcher]
database = "watcher.db"
timezone = "UTC"

[source.hf]
type = "hf-daily"
url = "{server.url('/hf')}"
first_fetch = "1d"

[profile.all]
query = "NOT ti:zzzqqqzzz"

[digest.daily]
profiles = ["all"]
every = "1d"
channels = ["hook"]

[channel.hook]
type = "webhook"
url_env = "WATCHER_HOOK_URL"
""", "utf-8")
    (papers / "secrets.env").write_text(f"WATCHER_HOOK_URL={server.url('/hook')}\n", "utf-8")
    r = subprocess.run(["/bin/sh", "-c", command], env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.stderr, (papers / "watcher.log").read_text() if (papers / "watcher.log").exists() else "")
    assert "not found" not in r.stderr
    assert [q.path for q in server.requests if q.path == "/hook"], (papers / "watcher.log").read_text()


def test_check_says_the_generated_config_s_placeholders_are_placeholders(tmp_path):
    """The starter config's mail channel uncommented as it stands: an error while a digest
    delivers through it (it would fail), one line for the channel; a note while none does."""
    assert run_cli_text("init", str(tmp_path / "p")).returncode == 0
    config = tmp_path / "p" / "config.toml"
    text = config.read_text("utf-8")
    for key in ("[channel.mail]", 'type = "email"', 'host = "smtp.example.org"', "from = ", 'to = ["me@example.org"]'):
        text = text.replace("# " + key, key, 1)
    config.write_text(text, "utf-8")
    r = run_cli_text("--config", str(config), "check")
    assert r.returncode == 0, r.stderr
    [line] = [l for l in r.stdout.splitlines() if "channel.mail:" in l]
    assert "placeholder" in line and "host, from, to" in line
    config.write_text(text.replace('channels = ["archive"]', 'channels = ["archive", "mail"]'), "utf-8")
    r = run_cli_text("--config", str(config), "check")
    assert r.returncode != 0
    [line] = [l for l in r.stderr.splitlines() if "channel.mail:" in l]
    assert "placeholder" in line and "smtp" not in r.stdout


@pytest.mark.parametrize("args, said", [
    (["digest", "daly", "--dry-run"], "no digest named 'daly'; did you mean daily?"),
    (["once", "--digest", "dayly"], "no digest named 'dayly'; did you mean daily?"),
    (["explain", "--profile", "llm-r", "2504.07954"], "no profile named 'llm-r'; did you mean llm-rl?"),
    (["test-deliver", "archiv"], "no channel named 'archiv'; did you mean archive?"),
    (["convert", "--profile", "llmrl", "-"], "no profile named 'llmrl'; did you mean llm-rl?"),
])
def test_a_typo_in_a_name_on_the_command_line_gets_a_did_you_mean(args, said, tmp_path):
    assert run_cli_text("init", str(tmp_path)).returncode == 0
    r = run_cli_text("--config", str(tmp_path / "config.toml"), *args, input="")
    assert r.returncode == 2 and said in r.stderr, r.stderr


def test_a_one_week_ratings_chart_draws_narrow_bars_not_two_full_width_ones():
    from datetime import date

    from watcher.web.chart import WIDTH, bar_chart

    svg = bar_chart([date(2026, 11, 23)], [("up", {date(2026, 11, 23): 3}, "up"),
                                           ("down", {date(2026, 11, 23): 1}, "down")], "ratings")
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]
    assert len(widths) == 2 and max(widths) <= WIDTH / 10, widths
    xs = [float(x) for x in re.findall(r'<rect x="([\d.]+)"', svg)]
    assert WIDTH / 4 < xs[0] < xs[1] < 3 * WIDTH / 4  # the group sits in the middle of the chart


def test_the_preview_form_lands_at_the_preview(tmp_path):
    """On a phone the profile page is long: Preview must land at its result (#preview), not at
    the top. The browser test drives it at 390 px (tests/integration/test_web_browser.py)."""
    from starlette.testclient import TestClient

    from watcher.config import load_config
    from webkit import app_for

    assert run_cli_text("init", str(tmp_path)).returncode == 0
    assert run_cli_text("once", "--sample", cwd=tmp_path).returncode == 0
    from watcher.cycle.pipeline import sample_config

    config = sample_config(load_config(tmp_path / "config.toml"))
    with TestClient(app_for(config, config.settings.database)) as c:
        page = c.get("/profiles/llm-rl").text
    assert re.search(r'<form method="get" action="[^"]*/profiles/llm-rl#preview" class="preview">', page)


def test_url_means_one_thing_and_check_says_what_each_source_asks(tmp_path):
    """docs/sources.md's mirror recipe, verbatim: `watcher check` prints for each source the
    URL its comment says it asks; an old whole-endpoint `url` still works and gets one line
    saying what to write."""
    doc = (REPO / "docs" / "sources.md").read_text("utf-8")
    block = doc.split("## Your own url: a mirror or a stand-in")[1].split("```toml\n")[1].split("```")[0]
    config = tmp_path / "config.toml"
    config.write_text('[watcher]\ntimezone = "UTC"\n\n' + block, "utf-8")
    r = run_cli_text("--config", str(config), "check")
    assert r.returncode == 0, r.stderr
    said = dict(re.findall(r"source\.(\S+) \(\S+\) asks (\S+)", r.stdout))
    assert said["arxiv-mirror"] == "http://127.0.0.1:8001/api/query"
    assert said["hf-mirror"] == "http://127.0.0.1:8002/api/daily_papers"
    assert said["bio-mirror"].startswith("http://127.0.0.1:8003/details/biorxiv/")
    assert said["pubmed-mirror"].startswith("http://127.0.0.1:8004/entrez/eutils/esearch.fcgi")
    assert said["cites-mirror"] == "http://127.0.0.1:8005/works"
    assert said["oai-mirror"] == "http://127.0.0.1:8006/oai"
    assert said["rss-mirror"] == "http://127.0.0.1:8007/rss/cs.LG"
    config.write_text('[watcher]\ntimezone = "UTC"\n\n[source.old]\ntype = "arxiv"\nquery = "cat:cs.LG"\n'
                      'url = "http://127.0.0.1:8001/api/query"\n', "utf-8")
    r = run_cli_text("--config", str(config), "check")
    assert r.returncode == 0 and "source.old (arxiv) asks http://127.0.0.1:8001/api/query\n" in r.stdout
    [line] = [l for l in r.stdout.splitlines() if "source.old.url" in l]
    assert 'write url = "http://127.0.0.1:8001/api"' in line


def test_a_mirror_s_address_written_as_the_docs_say_is_asked_where_the_docs_say(server):
    """hf-daily with url the service's address (as biorxiv, pubmed and openalex always had):
    the request goes to {url}/daily_papers, not a 404 at {url}."""
    from datetime import datetime, timezone

    from helpers import context, fast_client
    from httpserver import Reply
    from watcher.sources import source_config
    from watcher.sources import make_source

    server.route("/api/daily_papers", Reply(body=(DATA / "hf_daily_papers_2025-04-10.json").read_bytes()))
    cfg = source_config(name="hf", type="hf-daily", url=server.url("/api"), timeout=10.0)
    with fast_client() as http:
        src = make_source(cfg, context(http, now=datetime(2025, 4, 10, 20, tzinfo=timezone.utc)))
        result = src.fetch({"last_day": "2025-04-09"})
    assert result.papers and all(q.path == "/api/daily_papers" for q in server.requests)


def test_the_sample_s_html_digest_links_every_paper_and_stays_under_50_kb(tmp_path):
    """The sample without [web]: every one of its 30 papers links to its page (the seed digest
    names 19 by title alone; their arXiv ids are shipped beside it), and the HTML digest holds
    all 30 in full in under 50 KB (mail clients clip longer messages)."""
    assert run_cli_text("init", str(tmp_path)).returncode == 0
    assert run_cli_text("once", "--sample", cwd=tmp_path).returncode == 0
    html = (tmp_path / "digests" / "daily-2025-04-12.html").read_bytes()
    assert len(html) < 50_000, len(html)
    titles = re.findall(rb'<div style="font-size:17px;line-height:23px;font-weight:bold;color:#111827;">(.*?)</div>', html, re.S)
    assert len(titles) == 30
    assert all(t.startswith(b'<a href="https://') for t in titles), [t for t in titles if b"<a " not in t]
    text = (tmp_path / "digests" / "daily-2025-04-12.txt").read_text("utf-8")
    assert text.count("\n\nAuthors:") >= 29  # the text digest keeps every paper in full too


def test_a_channel_told_to_wait_past_the_run_is_not_asked_again_before_then(server, tmp_path):
    """A webhook answering 429 with Retry-After: 3600 is asked once; the next run (another
    process, as cron's next `watcher once`) does not ask it before the hour has passed, and
    says so in one line."""
    from httpserver import Reply

    server.route("/hook", Reply(status=429, headers={"Retry-After": "3600"}, body=b"slow down"))
    assert run_cli_text("init", str(tmp_path)).returncode == 0
    config = tmp_path / "config.toml"
    config.write_text(config.read_text("utf-8").replace('channels = ["archive"]', 'channels = ["hook"]')
                      + f'\n[channel.hook]\ntype = "webhook"\nurl = "{server.url("/hook")}"\n', "utf-8")
    first = run_cli_text("once", "--sample", cwd=tmp_path)
    assert first.returncode == 1 and "3600" in first.stderr, first.stderr
    assert len(server.hits("/hook")) == 1
    again = run_cli_text("once", "--sample", cwd=tmp_path)
    assert again.returncode == 1 and "not asked before then" in again.stderr, again.stderr
    assert len(server.hits("/hook")) == 1  # not asked again within its Retry-After
