"""Issue 12's "done when", end to end: a digest of the real corpus goes out through a real SMTP
server (aiosmtpd) with rating links to the web inbox (`watcher serve`); the reader opens the
"up" link of the received e-mail in real Chromium (GET: a confirmation page that records
nothing), presses its button (POST), and the rating is recorded. (Before issue 34 the next
day's digest then took in papers like the liked one; now one like adds nothing beyond the query
until the ratings, held out by time, show that what likes add is liked: `watcher explain` says so.)"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from html import unescape

from deliverkit import MailServer, free_port
from test_web_browser import browser, new_page, no_overflow  # noqa: F401 (fixture)
from test_web_cli import read_url, started, wait_ok

from conftest import DATA
from helpers import run_cli
from helpers import mailed_links_config

import pytest

pytestmark = pytest.mark.slow  # drives Chromium: the full suite (CI) runs it, not the inner loop

SECRET = "a secret for the links of this test"
LIKED = "2504.05731"  # Retrieval Augmented Generation with Collaborative Filtering for Personalized ...


def html_of(received) -> str:
    message = received.message
    return next(part for part in message.walk() if part.get_content_type() == "text/html").get_content()


def rate_link(html: str, arxiv_id: str) -> str:
    """The rating link of the paper ``arxiv_id`` in the HTML e-mail (its page asks which)."""
    for block in html.split("<tr>"):
        if f"arxiv.org/abs/{arxiv_id}" in block:
            return unescape(re.search(r'<a href="([^"]+)"[^>]*>Rate</a>', block).group(1))
    raise AssertionError(f"{arxiv_id} is not in the e-mail")


def ratings_in(db) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT profile, paper, value, source FROM ratings").fetchall()
    finally:
        conn.close()


def next_day(folder, env) -> list[dict]:
    out = run_cli("digest", "daily", "--dry-run", "--to", "json", "--since", "2025-04-10",
                  cwd=folder, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_up_in_a_received_mail_clicked_in_chromium_teaches_the_next_days_digest(browser, tmp_path):  # noqa: F811
    env = {"WATCHER_TEST_SECRET": SECRET}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    shutil.copy(DATA / "corpus-2025-04-09.jsonl.gz", tmp_path / "day.jsonl.gz")
    with MailServer() as smtp:
        (tmp_path / "config.toml").write_text(mailed_links_config(smtp.port, base))
        assert run_cli("fetch", cwd=tmp_path, env=env).returncode == 0
        out = run_cli("digest", "daily", "--since", "2025-04-01", cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stderr
        [first] = smtp.received
        link = rate_link(html_of(first), LIKED)
        assert link.startswith(f"{base}/r/")

        # the next corpus day arrives; what its digest would be without the click
        shutil.copy(DATA / "corpus-2025-04-10.jsonl.gz", tmp_path / "day.jsonl.gz")
        assert run_cli("fetch", cwd=tmp_path, env=env).returncode == 0
        before = next_day(tmp_path, env)
        assert not any("you liked" in r for p in before for r in p["reasons"])

        with started(["serve", "--listen", f"127.0.0.1:{port}"], tmp_path, **env) as proc:
            url, _ = read_url(proc)
            wait_ok(url + "healthz")
            page = new_page(browser, 390)
            page.goto(link)  # what a mail scanner does too: nothing is recorded
            assert page.locator("h1").inner_text() == "Rate this paper"
            assert "Collaborative Filtering" in page.locator("main").inner_text()
            assert page.locator("main button").count() == 3  # more, less, save
            no_overflow(page, "rate-link-confirm-390")
            assert ratings_in(tmp_path / "watcher.db") == []
            page.click("main button:has-text('More like this')")
            page.wait_for_load_state("load")
            assert page.locator("h1").inner_text() == "Rated up"
            assert page.evaluate("document.scripts.length") == 0
            assert not [m for m in page.console if "Refused" in m], page.console
        assert ratings_in(tmp_path / "watcher.db") == [("mine", LIKED, "up", "link")]

        # issue 34: one like, with nothing held out by time to show what it would add, adds
        # nothing beyond the query (before, papers like it came in); `watcher explain` says why
        after = next_day(tmp_path, env)
        assert [p["arxiv_id"] for p in after] == [p["arxiv_id"] for p in before]
        out = run_cli("explain", "--profile", "mine", cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stderr
        assert "profile mine: 1 rating;" in out.stdout.decode() and "too little evidence" in out.stdout.decode()
