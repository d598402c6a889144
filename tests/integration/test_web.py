"""The web inbox through its ASGI app (Starlette's httpx test client): every page over the
sample database, bad input, 404 and 503 pages, login, sessions and CSRF (docs/web.md)."""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from html import unescape

import warnings

import pytest

with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its test client; httpx works
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, csrf_of, database_copy, hostile_setup, markup_problems, sample_setup, text



@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("web"))


@pytest.fixture
def client(sample):
    config, db = sample
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        yield c


def links(response, pattern: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'href="([^"]+)"', response.text) if re.search(pattern, unescape(h))]


# --- pages --------------------------------------------------------------------------------

def test_the_inbox_shows_the_latest_sample_digest_with_its_papers_and_reasons(client):
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    page = text(r)
    assert "LLM-RL" in page and "Sat 12 Apr 2025" in page and "30 papers" in page
    assert page.count("30 papers") == 1  # said in the issue's facts, not again for its one message (QA)
    assert "announced 2025-04" not in page  # a card's day as a reader says it (announced Fri 11 Apr 2025)
    assert re.search(r'<time datetime="2025-04-1\d">announced \w{3} 1\d Apr 2025</time>', r.text)
    assert len(links(r, r"^/papers/")) == 30
    assert "VLM-R1: A Stable and Generalizable R1-style Large Vision-Language Model" in page
    assert 'ti: "VLM"' in page  # the stored reasons of the delivery
    assert links(r, r"^/digests/daily/2025-04-12/archive$")  # the message that showed it


def test_the_digest_archive_and_the_permalink_show_the_digest_as_delivered(client):
    r = client.get("/digests")
    assert r.status_code == 200 and "2025-04-12 · LLM-RL" in text(r) and "30 papers" in text(r)
    issue = client.get("/digests/daily/2025-04-12")
    assert issue.status_code == 200
    inbox = client.get("/")
    # the same papers in the same order as the inbox (the digest's order when it was sent)
    assert links(issue, r"^/papers/") == links(inbox, r"^/papers/")
    assert client.get("/digests?digest=daily").status_code == 200
    # times in the config's zone (Europe/Berlin), as a reader says them (the ISO time in
    # <time datetime>): sent 21:59 UTC
    assert "delivered Sat 12 Apr 2025, 23:59" in text(issue)
    assert '<time datetime="2025-04-12T23:59:00+02:00">' in issue.text
    paper = text(client.get("/papers/2504.07615"))
    assert "2025-04-12T23:59:00+02:00" in paper and "T21:59:00 " not in paper


@pytest.mark.parametrize("path", ["/digests/daily/2025-04-13", "/digests/weekly/2025-04-12",
                                  "/digests/daily/not-a-date", "/papers/2504.99999",
                                  "/papers/title:no such paper", "/profiles/nobody", "/nowhere"])
def test_a_missing_paper_digest_or_profile_is_a_404_page(client, path):
    r = client.get(path)
    assert r.status_code == 404
    assert "Not found" in r.text and "<!doctype html>" in r.text


def test_the_urls_in_a_papers_comment_are_links_and_the_rest_stays_text(client):
    from watcher.web.pages import linked

    r = client.get("/papers/2504.06672")  # arXiv's comment: "Code available at: https://github.com/helia95/ragme"
    assert r.status_code == 200
    assert '<a href="https://github.com/helia95/ragme" rel="noopener noreferrer nofollow">' in r.text
    hostile = linked('See https://a.org/p). <img src=x> javascript:alert(1) https://x.org/"onmouseover=1')
    assert str(hostile) == ('See <a href="https://a.org/p" rel="noopener noreferrer nofollow">https://a.org/p</a>). '
                            '&lt;img src=x&gt; javascript:alert(1) <a href="https://x.org/" rel="noopener '
                            'noreferrer nofollow">https://x.org/</a>&#34;onmouseover=1')


def test_a_paper_page_has_versions_deliveries_reasons_per_profile_and_similar_papers(client):
    r = client.get("/papers/2504.07615")
    assert r.status_code == 200
    page = text(r)
    assert "VLM-R1" in page and "Haozhan Shen" in page
    assert "https://arxiv.org/abs/2504.07615v" in r.text or "Versions" in page or "Dates first" in page
    assert "daily 2025-04-12 → archive" in page  # where it was delivered
    assert links(r, r"^/digests/daily/2025-04-12/archive$")  # the message that showed it
    assert re.search(r"LLM-RL ?: selected, score \d", page)
    assert 'ti: "VLM"' in page
    similar = r.text.split("Similar stored papers")[1]
    assert len(re.findall(r'href="/papers/', similar)) >= 1
    assert "/papers/2504.07615\"" not in similar  # not similar to itself


@pytest.fixture(scope="module")
def idless(sample, tmp_path_factory):
    """The sample's database with one paper no listing gave an id (a title-only line of a text
    listing): every paper of the sample itself now has its arXiv id."""
    from datetime import datetime, timezone

    from watcher.models import Paper
    from watcher.store import Store

    config, db = sample
    copy = database_copy(db, tmp_path_factory.mktemp("idless"))
    with Store.open(copy) as store:
        store.upsert([Paper(title="A Title-Only Paper on Reinforcement Learning for Language Models",
                            authors=["Ann Lee"])], datetime(2025, 4, 12, 12, tzinfo=timezone.utc))
        key = store.db.execute("SELECT key FROM papers WHERE key LIKE 'title:%'").fetchone()[0]
    with TestClient(app_for(config, copy), follow_redirects=False) as c:
        yield c, key


def test_a_paper_addressed_with_its_version_redirects_and_an_id_less_paper_has_a_page(client, idless):
    r = client.get("/papers/2504.07615v2")
    assert r.status_code == 301 and r.headers["location"] == "/papers/2504.07615"
    c, key = idless
    r = c.get(f"/papers/{key}")
    assert r.status_code == 200 and re.search(r"LLM-RL ?: (not )?selected", text(r))


def test_search_finds_grpo_with_the_full_text_index(client):
    r = client.get("/search", params={"q": "GRPO"})
    assert r.status_code == 200
    found = links(r, r"^/papers/")
    assert len(found) >= 3
    for href in found:  # each hit really mentions GRPO
        assert "grpo" in client.get(href).text.lower()


def test_search_speaks_the_profile_query_language(client):
    one = links(client.get("/search", params={"q": "ti:survey"}), r"^/papers/")
    assert one and all("survey" in client.get(h).text.split("<h1>")[1].split("</h1>")[0].lower()
                       for h in one)
    both = links(client.get("/search", params={"q": "GRPO AND cat:cs.CV"}), r"^/papers/")
    grpo = links(client.get("/search", params={"q": "GRPO"}), r"^/papers/")
    assert set(both) < set(grpo)
    without = links(client.get("/search", params={"q": "GRPO ANDNOT cat:cs.CV"}), r"^/papers/")
    assert set(both).isdisjoint(without) and set(both) | set(without) == set(grpo)


def test_search_filters_by_category_date_and_profile(client):
    all_grpo = set(links(client.get("/search", params={"q": "GRPO"}), r"^/papers/"))
    cv = set(links(client.get("/search", params={"q": "GRPO", "cat": "cs.CV"}), r"^/papers/"))
    assert cv == set(links(client.get("/search", params={"q": "GRPO AND cat:cs.CV"}), r"^/papers/"))
    assert client.get("/search", params={"q": "GRPO", "from": "2031-01-01"}).text.count('href="/papers/') == 0
    assert set(links(client.get("/search", params={"q": "GRPO", "to": "2031-01-01"}), r"^/papers/")) == all_grpo
    prof = set(links(client.get("/search", params={"q": "GRPO", "profile": "llm-rl"}), r"^/papers/"))
    assert prof and prof <= all_grpo
    r = client.get("/search", params={"q": "GRPO", "from": "yesterday"})
    assert r.status_code == 400 and "not a date" in text(r)
    r = client.get("/search", params={"q": "GRPO", "from": "2025-04-12", "to": "2025-04-01"})
    assert r.status_code == 400 and "from: 2025-04-12 is after to: 2025-04-01" in text(r)


def test_search_is_paginated_without_repeating_a_paper(client):
    pages, seen = 0, []
    url = "/search?q=learning&order=newest"
    while url and pages < 30:
        r = client.get(url)
        assert r.status_code == 200
        seen += links(r, r"^/papers/")
        nxt = [h for h in links(r, r"^/search\?") if "next" in r.text and h.endswith(f"page={pages + 2}")]
        url = nxt[0] if nxt else None
        pages += 1
    assert pages >= 2 and len(seen) == len(set(seen)) > 25
    past = client.get("/search", params={"q": "learning", "page": pages + 3})  # past the last page
    assert past.status_code == 200 and f"Page {pages + 3} is past the last page of this search." in text(past)
    assert "No stored paper matches" not in text(past) and "/search?q=learning" in links(past, r"^/search\?")


@pytest.mark.parametrize("query, caret", [("ti:(foo", "ti:(foo\n   ^"), ("GRPO AND", None),
                                          ('"unclosed', None), ("nope:x", None), ("a OR OR b", None),
                                          ("x*", None), (")", None),
                                          ("GRPO -reward", "GRPO -reward\n     ^")])  # was: GRPO AND reward
def test_a_malformed_search_is_shown_back_with_the_caret_never_a_500(client, query, caret):
    r = client.get("/search", params={"q": query})
    assert r.status_code == 400
    assert '<pre class="caret">' in r.text and "^" in text(r)
    if caret:
        assert caret in unescape(r.text)


def test_odd_searches_never_fail(client):
    for q in ["", "*", "NOT GRPO", "au:Levine", "cat:cs", "cat:cs.*", '"" ', "ti:\"a b\"",
              "x" * 3000, "AND", "' OR 1=1 --", "{}", "NEAR(a b)", "col:x", "\\"]:
        r = client.get("/search", params={"q": q, "page": "2"})
        assert r.status_code in (200, 400), (q, r.status_code)


def test_the_profile_page_charts_matches_per_day_as_svg(client):
    r = client.get("/profiles/llm-rl")
    assert r.status_code == 200
    svg = re.search(r"<svg.*?</svg>", r.text, re.S).group(0)
    bars = re.findall(r"<title>(\d{4}-\d\d-\d\d): (\d+) (match now|delivered)</title>", svg)
    assert len(bars) == 60  # 30 days, two series
    delivered = {d: int(n) for d, n, s in bars if s == "delivered"}
    assert delivered["2025-04-12"] == 30 and sum(delivered.values()) == 30
    matched = sum(int(n) for d, n, s in bars if s == "match now")
    assert matched >= 30
    assert f"{matched} papers filed from 2025-03-14 to 2025-04-12 match the profile now and 30 were delivered" in text(r)
    assert "would not be selected now" not in text(r)  # nothing delivered that does not match now


def test_the_query_preview_shows_what_a_draft_would_select_and_the_toml(client):
    r = client.get("/profiles/llm-rl", params={"preview": "GRPO", "days": "30"})
    assert r.status_code == 200
    page = text(r)
    m = re.search(r"the draft matches (\d+) ; the current query matches (\d+)", page)
    assert m and 0 < int(m.group(1)) < int(m.group(2))
    assert "[profile.llm-rl]\nquery = '''\nGRPO\n'''" in unescape(r.text)
    tricky = client.get("/profiles/llm-rl", params={"preview": "ti:\"a '''b\"", "days": "7"})
    assert tricky.status_code == 200 and 'query = "ti:\\"a \'\'\'b\\""' in unescape(tricky.text)


def test_a_malformed_preview_is_shown_back_with_the_caret(client):
    r = client.get("/profiles/llm-rl", params={"preview": "GRPO AND (", "days": "7"})
    assert r.status_code == 400 and '<pre class="caret">' in r.text and "GRPO AND (" in unescape(r.text)
    empty = client.get("/profiles/llm-rl", params={"preview": "  ", "days": "7"})
    assert empty.status_code == 400 and "the draft query is empty" in text(empty)
    assert "paste" not in text(empty).lower()  # no TOML of an empty query to paste


@pytest.mark.parametrize("tail", [" OR RLHF", " OR (x AND y)"])
def test_a_query_past_the_bound_is_said_never_cut(client, tail):
    """A draft (or search) longer than the page reads was cut at the bound and the cut query
    used: a valid one was then refused for a problem it does not have ('OR needs a term after
    it', the cut landing after an OR), or another query was previewed and offered to paste."""
    from watcher.web.profiles import MAX_QUERY as PREVIEW_MAX
    from watcher.web.search import MAX_QUERY as SEARCH_MAX

    for path, key, bound in (("/profiles/llm-rl", "preview", PREVIEW_MAX), ("/search", "q", SEARCH_MAX)):
        query = "GRPO" + " OR GRPO" * (bound // 8) + tail  # valid, and a cut at the bound is not it
        assert len(query) > bound
        r = client.get(path, params={key: query, "days": "7"})
        assert r.status_code == 400, (path, text(r)[:300])
        assert f"{len(query)} characters, more than the {bound}" in text(r), (path, text(r)[:300])
        assert "needs a term" not in text(r) and "paste" not in text(r).lower() and "<pre class=\"caret\">" not in r.text


def test_a_misspelt_category_is_refused_as_watcher_check_refuses_it(client):
    """Search (page and twin, the query's cat: and the category field) and the query preview
    say what `watcher check` says of the same category, instead of finding nothing."""
    said = "'cs.LGG' is not an arXiv category or bioRxiv/medRxiv subject; did you mean cs.LG?"
    for params in ({"q": "cat:cs.LGG"}, {"q": "GRPO", "cat": "cs.LGG"}):
        twin = client.get("/search.json", params=params)
        assert twin.status_code == 400 and twin.json()["papers"] == []
        assert any(said in p for p in twin.json()["problems"]), twin.json()
        page = client.get("/search", params=params)
        assert page.status_code == 400 and said in text(page)
    # what is a category still searches: arXiv's, an archive, a bioRxiv subject
    for params in ({"q": "cat:cs.LG"}, {"q": "cat:cs"}, {"q": "GRPO", "cat": "cs.CV"},
                   {"q": "cat:cell_biology"}, {"q": "GRPO", "cat": "Cell Biology"}):
        assert client.get("/search.json", params=params).status_code == 200, params
    preview = client.get("/profiles/llm-rl", params={"preview": "GRPO AND cat:cs.LGG", "days": "30"})
    assert preview.status_code == 400 and said in text(preview)
    assert "the draft matches" not in text(preview) and "[profile.llm-rl]" not in preview.text
    assert client.get("/profiles/llm-rl.json", params={"preview": "cat:cs.LGG"}).json()["error"] == said


def test_an_unknown_search_order_is_refused_with_the_orders_there_are(client):
    for path in ("/search", "/search.json"):
        r = client.get(path, params={"q": "GRPO", "order": "weird"})
        assert r.status_code == 400
        said = "order: 'weird' is not one of newest, relevance"
        assert (said in r.json()["problems"]) if path.endswith(".json") else (said in text(r))
    for order in ("", "newest", "relevance"):
        assert client.get("/search.json", params={"q": "GRPO", "order": order}).status_code == 200, order


def test_a_digest_page_past_the_end_says_so_and_links_page_one(client):
    r = client.get("/digests", params={"page": "99"})
    assert r.status_code == 404
    assert "Page 99 is past the last page" in text(r) and "No digest delivered yet" not in text(r)
    assert links(r, r"^/digests$") and not links(r, r"page=98")
    r = client.get("/digests", params={"page": "99", "digest": "daily"})
    assert r.status_code == 404 and links(r, r"^/digests\?digest=daily$")
    twin = client.get("/digests.json", params={"page": "99"})
    assert twin.status_code == 404 and twin.json()["issues"] == [] and "past the last page" in twin.json()["error"]
    assert client.get("/digests", params={"page": "1"}).status_code == 200


def test_a_digests_own_path_lists_its_issues_and_an_unknown_one_is_a_404_page(client):
    r = client.get("/digests/daily")
    assert r.status_code == 302 and r.headers["location"] == "/digests?digest=daily"
    listed = client.get(r.headers["location"])
    assert listed.status_code == 200 and links(listed, r"^/digests/daily/2025-04-12$")
    twin = client.get("/digests/daily.json")
    assert twin.status_code == 302 and twin.headers["location"] == "/digests.json?digest=daily"
    gone = client.get("/digests/nope")
    assert gone.status_code == 404 and "no digest named 'nope'" in text(gone) and "/digests" in text(gone)
    asked = client.get("/digests", params={"digest": "nope"})  # the list's own filter says so too
    assert asked.status_code == 404 and "no digest named 'nope'" in text(asked)
    channel = client.get("/digests/daily/2025-04-12/nochannel")
    assert channel.status_code == 404
    assert "digest 'daily' sent no message through channel 'nochannel' on 2025-04-12" in text(channel)


def test_status_and_healthz(client):
    r = client.get("/status")
    assert r.status_code == 200 and "papers stored" in r.text and "daily" in r.text
    h = client.get("/healthz")
    assert (h.status_code, h.text) == (200, "ok")


# --- the database unavailable ---------------------------------------------------------------

def test_a_locked_unreadable_or_missing_database_is_a_503_page_and_the_server_carries_on(
        sample, tmp_path, caplog):
    config, db = sample
    copy = database_copy(db, tmp_path)
    app = app_for(config, copy)
    app.state.web.db_timeout = 0.1
    with TestClient(app) as c:
        assert c.get("/").status_code == 200
        holder = sqlite3.connect(copy, isolation_level=None)
        holder.execute("PRAGMA journal_mode=DELETE")
        holder.execute("BEGIN EXCLUSIVE")
        with caplog.at_level(logging.ERROR, logger="watcher"):
            for path in ("/", "/healthz", "/search?q=GRPO", "/papers/2504.07615"):
                r = c.get(path)
                assert r.status_code == 503, path
                assert "Database unavailable" in r.text and "locked" in r.text
        assert any("503" in rec.getMessage() and "locked" in rec.getMessage() for rec in caplog.records)
        holder.execute("ROLLBACK")
        holder.close()
        assert c.get("/").status_code == 200  # back as soon as the lock is gone
        good = copy.read_bytes()
        copy.write_bytes(b"not a database at all" * 100)
        assert c.get("/").status_code == 503 and c.get("/healthz").status_code == 503
        copy.unlink()
        assert c.get("/").status_code == 503 and "no database yet" in c.get("/").text
        copy.write_bytes(good)
        assert c.get("/healthz").status_code == 200


# --- security -------------------------------------------------------------------------------

PAGES = ["/", "/digests", "/digests/daily/2025-04-12", "/search?q=GRPO", "/profiles/llm-rl",
         "/status", "/login", "/papers/nope", "/search?q=ti:(x"]


def test_every_page_has_the_content_security_policy_and_no_script(client):
    for path in PAGES:
        r = client.get(path, follow_redirects=True)
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp  # so no script at all
        assert "'unsafe-inline'" not in csp and "frame-ancestors 'none'" in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        assert "<script" not in r.text.lower() and " style=" not in r.text
        assert not markup_problems(r.text), (path, markup_problems(r.text))


def test_get_never_changes_state_and_post_needs_the_csrf_token(client, sample):
    config, db = sample
    watch = sqlite3.connect(db)  # data_version moves when another connection commits
    before = watch.execute("PRAGMA data_version").fetchone()
    for path in PAGES + ["/papers/2504.07615", "/profiles/llm-rl?preview=GRPO&days=30", "/healthz"]:
        client.get(path)
    assert client.post("/logout").status_code == 403
    assert client.post("/logout", data={"csrf": "forged"}).status_code == 403
    assert client.post("/login", data={"password": "x"}).status_code in (303, 403)
    assert client.post("/search", data={"q": "x"}).status_code == 405
    assert watch.execute("PRAGMA data_version").fetchone() == before
    watch.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return hostile_setup(tmp_path_factory.mktemp("hostile"))


def test_hostile_papers_stay_text_on_every_page(hostile):
    config, db, digest = hostile
    with TestClient(app_for(config, db)) as c:
        paths = ["/", "/digests", "/digests/daily/2025-04-12", "/profiles/llm-rl",
                 "/profiles/llm-rl?days=30&preview=" + "%3Cscript%3Ealert(1)%3C/script%3E",
                 "/search?q=reinforcement", "/search?q=Slack", "/search?q=Header",
                 "/search?q=%3Cscript%3E", "/search?q=" + "%3Cb%20onmouseover%3D1%3E(",
                 "/status"]
        paths += [f"/papers/{p.key}" for p in digest.papers]
        for path in paths:
            r = c.get(path)
            assert r.status_code in (200, 400), path
            body = r.text
            assert not markup_problems(body), (path, markup_problems(body))
            assert "<script" not in body.lower() and "<!channel>" not in body and "<@U" not in body
            assert "\x00" not in body and "\x1b" not in body and "\u202e" not in body[:0]
            assert "JINJA-RAN" not in body.replace("%}JINJA-RAN{%", "")
            assert "Bcc: victim" not in r.headers.get("location", "")
        inbox = c.get("/").text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in inbox
        assert "&lt;!channel&gt;" in inbox
        assert "{{ 7*7 }}" in unescape(inbox)


def login_client(config, db, password="s3cret pass"):
    return TestClient(app_for(config, db, password=password, secret="test-secret"),
                      follow_redirects=False)


def test_with_a_password_every_page_but_healthz_needs_the_login(sample):
    config, db = sample
    with login_client(config, db) as c:
        r = c.get("/search?q=GRPO")
        assert r.status_code == 303 and r.headers["location"] == "/login?next=%2Fsearch%3Fq%3DGRPO"
        for path in ("/", "/papers/2504.07615", "/profiles/llm-rl", "/status", "/digests"):
            assert c.get(path).status_code == 303
        assert c.post("/logout").status_code == 403
        assert c.get("/healthz").status_code == 200 and c.get("/login").status_code == 200
        assert c.get("/static/web.css").status_code == 200
        # the login page names no profile, digest or page before the login
        login = c.get("/login").text
        assert "/profiles/" not in login and "llm-rl" not in login and 'href="/saved"' not in login


def test_login_sets_a_signed_httponly_samesite_cookie_and_logout_ends_it(sample):
    config, db = sample
    with login_client(config, db) as c:
        form = c.get("/login?next=/profiles/llm-rl")
        token = csrf_of(form)
        assert c.post("/login", data={"password": "s3cret pass"}).status_code == 403  # no token
        r = c.post("/login", data={"csrf": token, "password": "s3cret pass", "next": "/profiles/llm-rl"})
        assert r.status_code == 303 and r.headers["location"] == "/profiles/llm-rl"
        cookie = r.headers["set-cookie"]
        assert "watcher_session=" in cookie and "httponly" in cookie.lower()
        assert "samesite=lax" in cookie.lower()
        assert c.get("/").status_code == 200
        value = c.cookies["watcher_session"]
        c.cookies.set("watcher_session", value[:-3] + ("AAA" if not value.endswith("AAA") else "BBB"))
        assert c.get("/").status_code == 303  # an altered cookie is no session
        c.cookies.clear()
        token = csrf_of(c.get("/login"))
        c.post("/login", data={"csrf": token, "password": "s3cret pass"})
        home = c.get("/")
        assert home.status_code == 200
        out = c.post("/logout", data={"csrf": csrf_of(home)})
        assert out.status_code == 303 and out.headers["location"] == "/login"
        assert c.get("/").status_code == 303


def test_failed_logins_are_slowed_and_the_next_target_stays_on_this_site(sample, monkeypatch):
    monkeypatch.setenv("WATCHER_LOGIN_DELAY", "0.2")
    config, db = sample
    with login_client(config, db) as c:
        throttle = c.app.state.web.throttle
        token = csrf_of(c.get("/login"))
        first = c.post("/login", data={"csrf": token, "password": "wrong"})
        assert first.status_code == 401 and "Wrong password" in first.text
        started = time.monotonic()
        second = c.post("/login", data={"csrf": token, "password": "also wrong"})
        assert second.status_code == 401
        assert time.monotonic() - started >= 0.2  # the second failure waited
        assert throttle.delay() >= 2 * 0.2
        for evil in ("//evil.example/x", "https://evil.example", "/\\evil.example"):
            token = csrf_of(c.get("/login"))  # a login renews the session's token
            r = c.post("/login", data={"csrf": token, "password": "s3cret pass", "next": evil})
            assert r.status_code == 303 and r.headers["location"] == "/"
        assert throttle.delay() == 0  # a success forgives


def test_behind_a_proxy_every_link_carries_the_base_url_path(sample, tmp_path):
    from dataclasses import replace

    config, db = sample
    config = replace(config, web=replace(config.web, base_url="https://example.org/papers",
                                         secret_env="WATCHER_SECRET"))
    with TestClient(app_for(config, db, secret="x"), base_url="https://example.org") as c:
        r = c.get("/")
        hrefs = re.findall(r'(?:href|action)="([^"]+)"', r.text)
        local = [h for h in hrefs if not h.startswith("http")]
        assert local and all(h.startswith("/papers/") or h == "/papers" for h in local), local[:5]
        assert "secure" in c.get("/login").headers.get("set-cookie", "secure").lower()


def test_the_chart_follows_papers_stored_after_it_was_drawn(sample, tmp_path):
    from datetime import date, datetime, timezone

    from watcher.models import Paper
    from watcher.store import Store

    config, db = sample
    copy = database_copy(db, tmp_path)

    def matched(c) -> int:
        r = c.get("/profiles/llm-rl")
        return int(re.search(r"(\d+) papers? filed from \S+ to \S+ match(?:es)? the profile now", text(r)).group(1))

    with TestClient(app_for(config, copy)) as c:
        before = matched(c)
        with Store.open(copy) as store:
            store.upsert([Paper(title="GRPO for LLM agents", arxiv_id="2504.99999", version=1,
                                abstract="Reinforcement learning with GRPO for a large language model.",
                                announced=date(2025, 4, 12))],
                         datetime(2025, 4, 12, 22, tzinfo=timezone.utc))
        assert matched(c) == before + 1


def test_the_paper_page_explains_with_the_profiles_ratings_as_explain_does(sample, tmp_path):
    """A rating teaches the profile at once: the paper page, like `watcher explain`, shows the
    disliked paper as not selected, naming the dislike."""
    config, db = sample
    copy = database_copy(db, tmp_path)
    with TestClient(app_for(config, copy)) as c:
        assert re.search(r"LLM-RL ?: selected", text(c.get("/papers/2504.07615")))
        from watcher.services.ratings import apply_rating
        from watcher.store import Store

        with Store.open(copy) as store:
            apply_rating(store, "down", "llm-rl", "2504.07615", "cli", profiles=config.profiles)
        page = text(c.get("/papers/2504.07615"))
        assert "unlike 2504.07615 (you disliked)" in page
        assert not re.search(r"LLM-RL ?: selected", page)


def test_a_digest_of_several_profiles_is_grouped_by_profile_best_group_first(tmp_path):
    """Papers of one message grouped by profile, each group in the order sent, the group of
    the first paper first; the compact card by default, the whole one with ?view=full."""
    from dataclasses import replace
    from datetime import datetime, timezone

    from deliverkit import sample_digest

    from watcher.store import Store

    config, _ = sample_setup(tmp_path / "s")
    digest = sample_digest(6, updated=0)
    digest.matches = [replace(m, profile="vision" if i in (1, 3) else "llm-rl")
                      for i, m in enumerate(digest.matches)]
    now = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)
    db = tmp_path / "two.db"
    with Store.open(db) as store:
        store.upsert(digest.papers, now)
        store.record_delivery("daily", "archive", digest.papers, now, issue=digest)
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        for path in ("/", "/digests/daily/2025-04-12"):
            page = c.get(path).text
            groups = re.findall(r'<p class="profile"><strong>([^<]+)</strong> · (\d+) papers</p>', page)
            assert groups == [("llm-rl", "4"), ("vision", "2")], path
            keys = re.findall(r'<article class="paper compact" id="p-([^"]+)"', page)
            order = [m.paper.arxiv_id for m in digest.matches]
            assert keys == [order[i] for i in (0, 2, 4, 5, 1, 3)], path
            assert not markup_problems(page)
            full = c.get(path, params={"view": "full"}).text
            assert re.findall(r'<article class="paper" id="p-([^"]+)"', full) == keys
            assert 'href="/?view=full"' in c.get("/").text


def test_a_paper_without_versions_says_nothing_rather_than_unknown(client, idless):
    """A paper no listing versioned (a title-only one) has no "Versions: unknown"."""
    c, key = idless
    page = c.get(f"/papers/{key}")
    assert page.status_code == 200
    facts = page.text.split('<dl class="facts">')[1].split("</dl>")[0]
    assert "unknown" not in facts and "Versions" not in facts and "<dt>Dates</dt><dd>first 20" in facts
    arxiv = client.get("/papers/2504.07615").text.split('<dl class="facts">')[1].split("</dl>")[0]
    assert "unknown" not in arxiv  # the sample's listing gave no version number either


def test_similar_papers_below_the_floor_are_not_shown(client, sample):
    """A paper page lists only papers that share a topic, not a few words."""
    from watcher.matching.docfreq import default_doc_freq
    from watcher.services.search import SIMILAR_SHOWN, similar_papers
    from watcher.store import Store

    config, db = sample
    weight = default_doc_freq().vector_weight
    with Store.open(db, readonly=True) as store:
        keys = [r["key"] for r in store.db.query("SELECT key FROM papers WHERE arxiv_id IS NOT NULL LIMIT 40")]
        every = {k: similar_papers(store, store.get(k), weight, floor=0.0) for k in keys}
    low = [k for k, sims in every.items() if sims and sims[-1][1] < SIMILAR_SHOWN]
    assert low, "the sample has papers whose nearest neighbours are weak"
    for key in low[:5]:
        page = client.get(f"/papers/{key}").text.split("Similar stored papers")[1]
        scores = [float(x) for x in re.findall(r'<span class="meta">[^<]*· (\d\.\d\d)</span>', page)]
        assert all(s >= SIMILAR_SHOWN for s in scores), (key, scores)
        assert len(scores) == sum(1 for _, v in every[key] if v >= SIMILAR_SHOWN)


def test_a_long_message_is_shown_a_page_at_a_time(tmp_path):
    """A message of more papers than a page holds: the inbox shows the first page and links
    the issue's next one; the issue's pages together show every paper once, in order."""
    from dataclasses import replace
    from datetime import datetime, timezone

    from deliverkit import sample_digest

    from watcher.store import Store
    from watcher.web.pages import ISSUE_PAGE

    config, _ = sample_setup(tmp_path / "s")
    base = sample_digest(30, updated=0)
    n = ISSUE_PAGE + 7
    digest = replace(base, matches=[replace(base.matches[i % 30], paper=replace(
        base.matches[i % 30].paper, arxiv_id=f"2504.{20000 + i}", title=f"Paper number {i}"))
        for i in range(n)])
    now = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)
    db = tmp_path / "long.db"
    with Store.open(db) as store:
        store.upsert(digest.papers, now)
        store.record_delivery("daily", "archive", digest.papers, now, issue=digest)
    order = [m.paper.arxiv_id for m in digest.matches]
    card = r'<article class="paper compact" id="p-([^"]+)"'
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        inbox = c.get("/").text
        assert re.findall(card, inbox) == order[:ISSUE_PAGE]
        assert f'href="/digests/daily/2025-04-12?page=2">papers {ISSUE_PAGE + 1}–{n} of {n} →' in inbox
        first = c.get("/digests/daily/2025-04-12").text
        second = c.get("/digests/daily/2025-04-12", params={"page": "2"}).text
        assert re.findall(card, first) + re.findall(card, second) == order
        assert f'href="/digests/daily/2025-04-12">← papers 1–{ISSUE_PAGE}' in second
        assert not markup_problems(second)
