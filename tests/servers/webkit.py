"""Shared by the web tests: a sample database built the way `watcher once --sample` builds it,
a database of hostile papers, the app over either, and a real server in a thread."""

from __future__ import annotations

import re
import shutil
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import httpx

from conftest import REPO
from helpers import built_once, copy_folder, run_cli
from watcher.config import load_config
from watcher.store import Store
from watcher.web import create_app
from watcher.web.serve import Plan, bind, server


def _run_the_sample(folder: Path) -> None:
    shutil.copy(REPO / "config.toml", folder / "config.toml")
    r = run_cli("once", "--sample", cwd=folder)
    assert r.returncode == 0, r.stderr


def sample_setup(folder: Path):
    """The shipped config.toml in ``folder`` and its sample database after
    `watcher once --sample`, as a user runs it (a copy of the one run of this test process:
    the sample's day is fixed, so every run gives the same database). Returns (config, database)."""
    copy_folder(built_once("sample", _run_the_sample), folder)
    config = load_config(folder / "config.toml")
    return config, folder / "watcher-sample.db"


def database_copy(db: Path, folder: Path) -> Path:
    """A writable copy of the database ``db`` in ``folder`` (``copy.db``)."""
    copy = folder / "copy.db"
    src = sqlite3.connect(db)
    src.execute(f"VACUUM INTO '{copy}'")
    src.close()
    return copy


def hostile_setup(folder: Path):
    """The shipped config with a database holding the hostile papers of the delivery tests,
    delivered as one digest (reasons and titles hostile too). Returns (config, database)."""
    from test_injection import hostile_digest

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "config.toml", folder / "config.toml")
    config = load_config(folder / "config.toml")
    db = folder / "hostile.db"
    digest = hostile_digest()
    now = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)
    with Store.open(db) as store:
        store.upsert(digest.papers + [m.paper for m in digest.updated], now)
        store.record_delivery("daily", "archive", digest.papers, now, issue=digest)
    return config, db, digest


def app_for(config, db, **kw):
    """The app over ``db``, answering to Starlette's test client's name (``testserver``) too,
    as ``[web].hosts`` lets a user name more hosts."""
    config = replace(config, web=replace(config.web, hosts=(*config.web.hosts, "testserver")))
    return create_app(config, db, **kw)


def csrf_of(response) -> str:
    """The CSRF token of the page's first form."""
    return re.search(r'name="csrf" value="([^"]+)"', response.text).group(1)


def text(response) -> str:
    """The page's visible text, tags stripped, entities decoded, spacing collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


ALLOWED_TAGS = {"html", "head", "meta", "title", "link", "body", "header", "nav", "a", "form",
                "input", "button", "main", "h1", "h2", "h3", "p", "section", "article", "span",
                "time", "details", "summary", "ul", "li", "code", "label", "select", "option",
                "div", "pre", "dl", "dt", "dd", "strong", "figure", "figcaption", "svg", "line",
                "text", "rect", "textarea", "path"}  # path: the icons (inline SVG)


class TagCheck(HTMLParser):
    """Every tag and attribute of a page: hostile text must never become markup."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.bad: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED_TAGS:
            self.bad.append(f"tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in ("style", "srcdoc"):
                self.bad.append(f"attribute {name} on <{tag}>")
            if name in ("href", "src", "action") and value and value.strip().lower().startswith(("javascript:", "data:")):
                self.bad.append(f"{name}={value[:40]}")


def markup_problems(html: str) -> list[str]:
    """Tags or attributes in ``html`` that no template writes."""
    check = TagCheck()
    check.feed(html)
    return check.bad


@contextmanager
def live_server(config, db, password: str | None = None):
    """A real uvicorn server over the app on a free loopback port; yields its base URL."""
    web = replace(config.web, host="127.0.0.1", port=0)
    sock = bind(web)
    srv = server(config, Plan(web, Path(db), password, None), sock)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    deadline = time.monotonic() + 60  # a bound on a loaded machine, not a figure
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield base
    finally:
        srv.should_exit = True
        thread.join(10)
        sock.close()


def get(base: str, path: str) -> httpx.Response:
    return httpx.get(base + path, timeout=30)
