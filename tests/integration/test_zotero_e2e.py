"""Zotero, end to end (docs/zotero.md): a profile with nothing but ``zotero = {...}`` gets its digest
from a collection of the stand-in Zotero library (``watcher once`` against the local arXiv
API), and the Save of that e-mail's link adds the paper to the ``save_to_zotero`` collection
as one complete item, however often it is clicked."""

from __future__ import annotations

import re
import warnings
from html import unescape

from arxivserver import PagedFeed
from helpers import run_cli as run_watcher  # in process: the digest, the items and the status are what is checked
from deliverkit import MailServer
from helpers import data
from httpserver import server  # noqa: F401
from test_source_arxiv import ALL, PAGE
from test_zotero import READS, SAVES, translator_item
from zoteroserver import zotero  # noqa: F401

from watcher.present.bibtex import plain_text
from watcher.config import load_config

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, csrf_of

SECRET = "a secret only the server knows"
CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[web]
base_url = "http://testserver"
secret_env = "WATCHER_TEST_LINK_SECRET"

[source.ax]
type = "arxiv"
query = "all:testing"
url = "{arxiv}"
first_fetch = "3650d"
timeout = 5

[profile.mine]
zotero = {{ library_id = "{user}", api_key_env = "ZOTERO_TEST_KEY", collection = "{reads}", url = "{zotero}" }}
save_to_zotero = "{saves}"

[digest.d]
profiles = ["mine"]
every = "1d"
lookback = "3650d"
formats = ["html"]
order = "score"  # best match first: the papers most like the collection
channels = ["me"]

[channel.me]
type = "email"
host = "127.0.0.1"
port = {smtp}
security = "none"
from = "watcher <watcher@example.org>"
to = ["me@example.org"]
timeout = 5
"""


def pushed(database) -> None:
    """Wait for the background push of the web's Saves (a few seconds at most)."""
    import time

    from watcher.zotero.sync import pushing

    for _ in range(400):
        if not pushing(database):
            return
        time.sleep(0.025)
    raise AssertionError("the background push never ended")


def test_a_zotero_only_profile_gets_a_digest_and_its_save_link_adds_one_complete_item(
        tmp_path, server, zotero, monkeypatch):
    papers = {p.arxiv_id: p for p in ALL}
    server.route("/api/query", PagedFeed(data(PAGE)).reply)
    # a collection on group testing: one paper the arXiv source stores, two it never reaches
    # (older than its first fetch): those count by their title and abstract
    for ident in ("1306.4664", "1009.3186", "2008.01944"):
        zotero.add(translator_item(papers[ident]), [READS])
    zotero.collections.add(SAVES)
    env = {"ZOTERO_TEST_KEY": "write-key-4567", "WATCHER_TEST_LINK_SECRET": SECRET}
    with MailServer() as smtp:
        config = tmp_path / "config.toml"
        config.write_text(CONFIG.format(arxiv=server.url("/api/query"), user=zotero.user, reads=READS,
                                        zotero=zotero.url, saves=SAVES, smtp=smtp.port))
        check = run_watcher("--config", str(config), "check", cwd=tmp_path, env=env)
        assert check.returncode == 0, check.stdout + check.stderr
        r = run_watcher("--config", str(config), "once", cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stderr
        [mail] = smtp.received
    html = mail.message.get_body(("html",)).get_content()
    titles = re.findall(r'<a [^>]*>([^<]{20,})</a>', html)
    # best first: the stored paper of the collection and one like the collection (pooled testing)
    assert {papers["2008.01944"].title, papers["2004.03322"].title} <= set(titles[:3]), titles
    assert "write-key" not in r.stderr.decode() + html
    assert not [m for m, _, _ in zotero.requests if m != "GET"]  # reading wrote nothing

    # the Save of the e-mail's link for 2004.03322 (its card holds the one "rate" link)
    card = html[html.index(papers["2004.03322"].title):]
    link = unescape(re.search(r'href="(http://testserver/r/[^"]+)"', card).group(1))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    cfg = load_config(config)
    with TestClient(app_for(cfg, tmp_path / "watcher.db"), follow_redirects=False) as c:
        path = link.removeprefix("http://testserver")
        assert c.get(path).status_code == 200 and zotero.in_collection(SAVES) == []  # GET saves nothing
        first = c.post(path, data={"action": "save"})  # queued; a background worker adds it
        assert first.status_code == 200 and "Zotero: queued" in first.text
        pushed(tmp_path / "watcher.db")
        again = c.post(path, data={"action": "save"})  # clicked twice
        assert again.status_code == 200 and "Zotero" not in again.text
        button = c.post("/rate", data={"csrf": csrf_of(c.get("/")), "action": "save", "paper": "2008.01944",
                                       "next": "/"})  # the web inbox's Save button: the same
        assert button.status_code == 303
        pushed(tmp_path / "watcher.db")
    [item] = [i for i in zotero.in_collection(SAVES) if i["archiveID"] == "arXiv:2004.03322"]
    assert sorted(i["archiveID"] for i in zotero.in_collection(SAVES)) == ["arXiv:2004.03322", "arXiv:2008.01944"]
    paper = papers["2004.03322"]
    assert item["itemType"] == "preprint" and item["title"] == paper.title
    assert "$50$" in paper.abstract and "only 50 tests" in item["abstractNote"]  # LaTeX decoded
    assert [f"{c['firstName']} {c['lastName']}" for c in item["creators"]] == paper.authors
    assert item["date"] == paper.published.date().isoformat() and item["abstractNote"] == plain_text(paper.abstract)
    assert item["archiveID"] == "arXiv:2004.03322" and item["extra"].startswith("arXiv:2004.03322 [")
    assert item["url"] == "https://arxiv.org/abs/2004.03322" and "DOI" in item
    # one new item; 2008.01944, already in the library (the collection read), joined the collection
    assert [m for m, _, _ in zotero.requests if m != "GET"] == ["POST", "PATCH"]
    assert len(zotero.items) == 4

    r = run_watcher("--config", str(config), "once", cwd=tmp_path, env=env)  # the next cycle adds nothing
    assert r.returncode == 0 and len(zotero.in_collection(SAVES)) == 2
    status = run_watcher("--config", str(config), "status", cwd=tmp_path, env=env).stdout.decode()
    assert f"collection {READS} of users/{zotero.user}: last sync" in status
    assert "saves: 2 added to Zotero, 0 queued" in status
