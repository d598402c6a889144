"""``watcher site DIR --sample``: the web inbox as static files, as a user builds it after the
quick start (a subprocess), then read as a browser and a link checker read it: every link
relative and leading to a file, no rating buttons, the saved list with its BibTeX, the Atom
feed, and a search that runs in Chromium from ``file://``."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import pytest

from conftest import REPO
from helpers import run_cli
from watcher.cli.site import file_for, relative

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions"]
SAVED = "2504.07615"  # VLM-R1, a paper of the sample digest
DISLIKED = "2504.06958"  # VideoChat-R1, another


class Links(HTMLParser):
    """Every href / src / action of a page, and its forms' methods."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.forms = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("href", "src", "action"):
            if a.get(name) is not None:
                self.links.append(a[name])
        if tag == "form":
            self.forms.append((a.get("method") or "get").lower())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    text = (REPO / "config.toml").read_text()
    text = text.replace('channels = ["archive"]', 'channels = ["archive", "feed"]')
    (folder / "config.toml").write_text(text + '\n[channel.feed]\ntype = "feed"\npath = "feeds/{digest}.atom"\n')
    assert run_cli("once", "--sample", cwd=folder).returncode == 0
    assert run_cli("rate", "save", SAVED, cwd=folder).returncode == 0
    assert run_cli("rate", "up", SAVED, "--profile", "llm-rl", cwd=folder).returncode == 0
    # a delivered paper rated down: the ratings decide its fate (the server's page says so)
    assert run_cli("rate", "down", DISLIKED, "--profile", "llm-rl", cwd=folder).returncode == 0
    r = run_cli("site", "out", "--sample", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(rb"wrote \d+ pages, \d+ other files and a search index of \d+ papers to out; "
                        rb"open out/index\.html\n", r.stdout), r.stdout
    return folder / "out"


def test_every_link_is_relative_and_leads_to_a_file(site):
    pages = list(site.rglob("*.html"))
    assert len(pages) > 35  # inbox, archive, issues, profiles, status and the papers they link
    checked = 0
    for page in pages:
        parser = Links()
        parser.feed(page.read_text())
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https", "mailto") or link.startswith("#"):
                continue
            assert not link.startswith("/"), f"{page.relative_to(site)}: absolute link {link}"
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_file(), f"{page.relative_to(site)}: broken link {link}"
            assert site.resolve() in target.parents
            checked += 1
        assert parser.forms in ([], ["get"]), f"{page.relative_to(site)}: a form that posts"
    assert checked > 400


def test_the_pages_are_the_web_inbox_without_rating_buttons(site):
    index = (site / "index.html").read_text()
    assert "LLM-RL" in index and "TL;DR" in index
    assert 'href="digests/daily/2025-04-12.html"' in index
    issue = (site / "digests" / "daily" / "2025-04-12.html").read_text()
    assert issue.count('<article class="paper') == 30
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert "More like this" not in text and "/rate" not in text and 'name="csrf"' not in text
    paper = (site / "papers" / f"{SAVED}.html").read_text()
    assert "VLM-R1" in paper and "llm-rl" in paper  # why it matched, as on the server


def test_the_site_publishes_no_ratings(site):
    """A site is published (public Pages): the reader's ratings, their times and what they
    changed stay on the server's pages (``watcher serve`` shows them)."""
    profile = (site / "profiles" / "llm-rl.html").read_text()
    assert "LLM-RL" in profile and "Per day" in profile
    for said in ("Your ratings", "rated up", "What your ratings changed", "No ratings yet", 'class="rated"'):
        assert said not in profile, said
    for page in site.rglob("*"):
        if page.is_file():
            body = page.read_bytes()
            assert b'class="value up"' not in body and b'"rated_at"' not in body, page
            assert b"(you liked)" not in body and b"(you disliked)" not in body, page  # a reason naming it
            assert b"Your ratings decided it" not in body, page
    why = (site / "papers" / "2504.07954.html").read_text()  # its reasons, but the like, are there
    assert "Why, per profile" in why and 'abs: &#34;GRPO&#34;' in why


def test_the_site_is_the_archive_and_a_paper_outside_it_links_to_arxiv(site):
    """Paper pages for what the digests, the saved list and the profiles show; their similar
    papers, when not among them, link to their own address instead of a page of their own
    (followed, similar papers would reach every stored paper)."""
    papers = {str(p.relative_to(site / "papers"))[:-len(".html")] for p in (site / "papers").rglob("*.html")}
    issue = (site / "digests" / "daily" / "2025-04-12.html").read_text()
    shown = {unquote(h)[:-len(".html")] for h in re.findall(r'href="\.\./\.\./papers/([^"]+)"', issue)}
    assert len(shown) == 30 and shown <= papers
    outside = 0
    for page in (site / "papers").rglob("*.html"):  # a key with a slash (doi:10.1038/...) is a subfolder
        outside += page.read_text().partition("<h2>Similar")[2].count('href="https://arxiv.org/abs/')
    assert outside > 10


def test_the_saved_list_its_bibtex_and_the_feed_are_there(site):
    saved = (site / "saved.html").read_text()
    assert "VLM-R1" in saved and 'href="saved.bib"' in saved
    bib = (site / "saved.bib").read_text()
    assert bib.lstrip().startswith("@") and "VLM-R1" in bib
    archive = (site / "digests--digest-daily.html").read_text()
    assert 'href="feeds/daily.atom"' in archive
    assert (site / "feeds" / "daily.atom").read_text().count("<entry>") == 30


def test_the_search_index_holds_every_paper_page(site):
    index = json.loads((site / "search-index.json").read_text())
    pages = {str(p.relative_to(site)) for p in (site / "papers").rglob("*.html")}
    assert {unquote(e["url"]) for e in index} == pages  # encoded: a title key holds spaces and |
    assert not any(" " in e["url"] or "|" in e["url"] for e in index)  # a title key's spaces and | encoded
    # no file name holds a character Windows refuses (a site unpacked or zipped there)
    assert not [p for p in pages if set(p) & set('<>:"|?*\\')]
    grpo = [e for e in index if "grpo" in " ".join(e["words"]).split()]
    assert grpo and all(e["day"] and e["tldr"] for e in grpo)
    js = (site / "search-index.js").read_text()
    assert json.loads(js[js.index("=") + 1:].rstrip().rstrip(";")) == index


def test_a_second_build_overwrites_the_site_but_never_a_foreign_folder(site, tmp_path):
    folder = site.parent
    again = run_cli("site", "out", "--sample", cwd=folder)
    assert again.returncode == 0, again.stderr
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("mine")
    shutil.copy(folder / "config.toml", tmp_path / "config.toml")
    shutil.copy(folder / "watcher-sample.db", tmp_path / "watcher-sample.db")
    r = run_cli("site", "project", "--sample", cwd=tmp_path)
    assert r.returncode == 2 and b"neither empty nor a site written by watcher site" in r.stderr
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["notes.txt"]


def test_file_names_and_relative_links():
    assert file_for("/", True) == "index.html"
    assert file_for("/digests?digest=daily&page=2", True) == "digests--digest-daily-page-2.html"
    assert file_for("/saved.bib", False) == "saved.bib"
    assert file_for("/papers/title:a%20b", True) == "papers/title%3Aa b.html"  # no ":" on Windows
    assert file_for("/papers/title:a|b%25", True) == "papers/title%3Aa%7Cb%25.html"  # % itself escaped
    assert relative("index.html", "papers/title%3Aa b.html") == "papers/title%253Aa%20b.html"
    long = file_for("/papers/title:" + "x" * 400, True)
    assert len(long.split("/")[1].encode()) <= 205 and long.endswith(".html")
    # a colon in the first segment would read as a URL scheme: it is encoded
    assert relative("papers/a.html", "papers/arxiv:1.html") == "arxiv%3A1.html"
    assert relative("digests/daily/x.html", "index.html") == "../../index.html"


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api", reason="the test extra installs playwright")
    if not Path(CHROMIUM).exists():
        pytest.skip("needs Debian's chromium (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.mark.slow  # drives Chromium
def test_the_site_opens_from_file_and_its_search_finds_a_paper(site, browser):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((site / "index.html").as_uri())
    assert "LLM-RL" in page.inner_text("main")
    assert page.evaluate("getComputedStyle(document.querySelector('header.top')).display") != "inline"  # styled
    page.click("text=Search")
    assert page.url.endswith("/search.html")
    page.fill('input[name="q"]', "GRPO")
    page.click('form.search button[type="submit"]')
    page.wait_for_selector("#results article.paper")
    assert page.url.endswith("search.html?q=GRPO") or "q=GRPO" in page.url
    found = page.locator("#results article.paper h3 a")
    assert found.count() > 0
    assert "match" in page.inner_text("#results p.meta")
    assert page.locator("#results p.tldr strong").first.inner_text() == "TL;DR:"
    titles = [found.nth(i).inner_text() for i in range(found.count())]
    found.first.click()  # a result opens its paper page, from file:// too
    page.wait_for_load_state("load")
    assert page.url.startswith("file://") and "/papers/" in page.url
    assert page.inner_text("h1") == titles[0]
    # every author is searched, not only the six a card shows (Tiancheng Zhao is VLM-R1's 12th)
    page.goto((site / "search.html").as_uri() + "?q=tiancheng%20ZHAO%20VLM")
    page.wait_for_selector("#results article.paper")
    assert page.locator("#results article.paper h3 a").all_inner_texts() == [
        "VLM-R1: A Stable and Generalizable R1-style Large Vision-Language Model"]
    assert "et al." in page.inner_text("#results article.paper p.meta")
    page.goto((site / "search.html").as_uri() + "?q=zzzqqqnothing")
    page.wait_for_selector("#results p.meta")
    assert page.inner_text("#results p.meta") == "0 papers match"
    # a date range from after to is said, as the server says it, not "0 papers match" (QA)
    page.goto((site / "search.html").as_uri() + "?q=GRPO&from=2025-04-12&to=2025-04-01")
    page.wait_for_selector("#results p.error")
    assert page.inner_text("#results") == "from: 2025-04-12 is after to: 2025-04-01 (no day is in between)"
    assert errors == []


QUERY_LANGUAGE = ["GRPO OR diffusion", "cat:cs", "(GRPO", "GRPO)", '"unterminated', "au:", "-GRPO",
                  "NOT GRPO", "GRPO AND diffusion", 'ti:"world model"', "reinforc*", "ti:GRPO"]


@pytest.mark.slow  # drives Chromium
@pytest.mark.parametrize("query", QUERY_LANGUAGE)
def test_the_static_search_says_the_query_language_needs_serve(site, browser, query):
    """The browser searches plain words only; a query in the query language's syntax gets a
    sentence saying so (and that `watcher serve` reads it), never a silent "0 papers match"
    nor a different reading of it."""
    from urllib.parse import quote as q

    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((site / "search.html").as_uri() + "?q=" + q(query, safe=""))
    page.wait_for_selector("#results p.meta")
    said = page.inner_text("#results")
    assert "plain words only" in said and "watcher serve" in said, said
    assert "match" not in said and page.locator("#results article.paper").count() == 0
    assert page.input_value('input[name="q"]') == query
    assert errors == []
    page.close()


PLAIN_QUERIES = ["RL", "grpo Reasoning", "GrPo", "policies", "LLMs", "fine-tuning", "R1-style", "vision language",
                 "Zhao", "models reinforcement", "world"]


@pytest.mark.slow  # drives Chromium
def test_the_static_search_finds_what_the_server_finds_for_plain_words(site, browser):
    """For plain words the browser's search finds exactly the papers of the site that the
    server's search (the query language, :func:`watcher.services.search.run_search`) finds: whole words,
    folded alike ("RL" never finds "world"; "policies" finds "policy"; "fine-tuning" is a
    phrase)."""
    from watcher.matching.query import parse_query
    from watcher.services.search import Filters, run_search
    from watcher.store import Store

    index = json.loads((site / "search-index.json").read_text())
    on_site = {e["url"]: e["title"] for e in index}
    files = {unquote(e["url"]): e["url"] for e in index}
    answers = {}
    with Store.open(site.parent / "watcher-sample.db") as store:
        for query in PLAIN_QUERIES:
            papers = run_search(store, parse_query(query), Filters(), limit=10_000).papers
            answers[query] = sorted(on_site[files[f]] for p in papers
                                    if (f := file_for("/papers/" + p.key, True)) in files)
    # "rl" inside other words ("world", "early") holds more papers than the word RL
    assert 0 < len(answers["RL"]) < sum("rl" in " ".join(e["words"]) for e in index)
    assert 0 < len(answers["grpo Reasoning"]) < len(answers["GrPo"])
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    for query in PLAIN_QUERIES:
        page.goto((site / "search.html").as_uri() + "?q=" + quote(query, safe=""))
        page.wait_for_selector("#results p.meta")
        assert "plain words only" not in page.inner_text("#results"), query
        assert sorted(page.locator("#results article.paper h3 a").all_inner_texts()) == answers[query], query
    assert errors == []
    page.close()


def test_the_crawl_reports_a_broken_link_and_follows_a_redirect():
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, RedirectResponse
    from starlette.routing import Route

    from watcher.cli.site import crawl

    def home(request):
        return HTMLResponse('<a href="/a">a</a> <a href="/old#x">old</a> <a href="/missing">gone</a>'
                            ' <form method="post" action="/rate"></form>')

    app = Starlette(routes=[Route("/", home), Route("/a", lambda r: HTMLResponse("<p>a</p>")),
                            Route("/old", lambda r: RedirectResponse("/a", status_code=301))])
    found, broken = crawl(app)
    assert broken == [("/", "/missing", 404)]
    assert found["/old"] == found["/a"] and found["/a"][0] == "a.html"  # one file for both
    assert "/rate" not in found  # an action, never fetched
