"""``watcher site DIR``: the web inbox as static files (docs/cli.md), to open from ``file://`` or
publish (GitHub Pages).

One truth: the pages are the web app's own. The app runs in-process with its ``static`` flag
(no rating buttons nor the reader's ratings, the search page loads the client-side search), a crawl from ``/`` follows
every link of every page, and each answer is written to a file, its links made relative.
Only two things come from the store here: the search index (``search-index.json``, and
``search-index.js`` holding the same data for browsers, which refuse ``fetch`` on
``file://``), and the own address (arXiv) of a paper a page links that has no page of its own.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import posixpath
import re
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from ..config import Config
from ..errors import InputError
from ..present.latex import title_text

HOST = "http://127.0.0.1"  # the address the app allows (loopback)
NOT_CRAWLED = ("/r/", "/rate", "/login", "/logout", "/healthz")  # actions, not pages
SEARCH = "/search"  # answered in the browser: links keep their query, the page is crawled bare
PAPERS = "/papers/"  # a paper page is written when a digest, a list or a profile links it
INDEX_JS, INDEX_JSON = "/search-index.js", "/search-index.json"
LINK = re.compile(r'(\s(?:href|src|action)=")([^"]*)(")')
MAX_NAME = 200  # bytes of one file name (most file systems allow 255)


@dataclass
class SiteReport:
    """What ``watcher site`` wrote: files by kind, the papers of the index, links that
    answered with an error (page -> (link, status)); a site with broken links is a bug."""

    pages: int = 0
    files: int = 0
    papers: int = 0
    broken: list[tuple[str, str, int]] = field(default_factory=list)


_NOT_IN_NAMES = re.compile(r'[<>:"|?*%\\\x00-\x1f]')  # Windows refuses the first ones; % escapes them


def _name(segment: str) -> str:
    """A file name for one path segment: as it is, but for the characters Windows refuses in
    a file name (``doi:10.1038/…``, a title key's ``|``: a site unpacked there, or zipped),
    written ``%3A`` (and ``%`` itself ``%25``, so no two segments give one name); shortened
    when too long for a file system; a name that is no file of its own (``.``, ``..``,
    empty: a path out of the site's folder) prefixed."""
    if segment in ("", ".", ".."):
        return "_" + segment
    segment = _NOT_IN_NAMES.sub(lambda m: "%{:02X}".format(ord(m.group())), segment)
    if len(segment.encode()) <= MAX_NAME:
        return segment
    digest = hashlib.sha1(segment.encode()).hexdigest()[:12]
    return segment.encode()[:MAX_NAME - 13].decode(errors="ignore") + "-" + digest


def file_for(target: str, is_html: bool) -> str:
    """The file (relative to the site's root, ``/`` separated) that holds the answer to the
    app path ``target`` (path and query): pages end in ``.html``, ``/`` is ``index.html``, a
    query is part of the name; other files keep their path."""
    parts = urlsplit(target)
    path = unquote(parts.path).strip("/") or "index"
    if parts.query:
        path += "--" + re.sub(r"[^A-Za-z0-9._-]+", "-", unquote(parts.query))
    name = "/".join(_name(s) for s in path.replace("\\", "/").split("/"))
    return name + ".html" if is_html and not name.endswith(".html") else name


def relative(from_file: str, to_file: str) -> str:
    """The link from the page ``from_file`` to ``to_file`` (both site-relative), encoded so
    that a browser maps it back to the file (``arxiv:2504.1`` would read as a scheme)."""
    rel = posixpath.relpath(to_file, posixpath.dirname(from_file) or ".")
    return quote(rel, safe="/-_.~")


def _links(text: str) -> list[str]:
    return [html.unescape(m.group(2)) for m in LINK.finditer(text)]


def _internal(link: str) -> bool:
    return link.startswith("/") and not link.startswith("//")


def _crawlable(path: str) -> bool:
    return not any(path == p.rstrip("/") or path.startswith(p) for p in NOT_CRAWLED)


def crawl(app) -> tuple[dict[str, tuple[str, bytes, bool]], list[tuple[str, str, int]]]:
    """Every page and file reachable from ``/`` of ``app``: target -> (file, body, is_html),
    and the broken links found (page, link, status). Paper pages are those that the other
    pages link (digests, the saved list, profiles), not the papers they in turn link: the
    archive, not the whole database."""
    from concurrent.futures import ThreadPoolExecutor

    import anyio

    with ThreadPoolExecutor(1) as pool:  # an event loop of its own, even when called from one
        return pool.submit(anyio.run, _crawl, app).result()


async def _crawl(app):
    import httpx

    found: dict[str, tuple[str, bytes, bool]] = {}
    broken = []
    aliases: dict[str, str] = {}  # a path the app redirects -> where to
    queue, seen = deque([("/", "/")]), {"/"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=HOST) as client:
        while queue:
            target, referrer = queue.popleft()
            r = await client.get(target, follow_redirects=False)
            location = r.headers.get("location", "")
            if r.is_redirect and _internal(location):  # e.g. a paper's versioned id
                aliases[target] = location
                if location not in seen:
                    seen.add(location)
                    queue.append((location, referrer))
                continue
            if r.status_code != 200:
                broken.append((referrer, target, r.status_code))
                continue
            is_html = r.headers.get("content-type", "").startswith("text/html")
            found[target] = (file_for(target, is_html), r.content, is_html)
            if not is_html:
                continue
            for link in _links(r.text):
                link = link.split("#", 1)[0]
                if not _internal(link) or link in (INDEX_JS, INDEX_JSON):
                    continue
                path = urlsplit(link).path
                if path == SEARCH:
                    link = SEARCH  # the bare search page; its queries run in the browser
                if path.startswith(PAPERS) and target.startswith(PAPERS):
                    continue  # similar papers: followed, they would reach every stored paper
                if link not in seen and _crawlable(path):
                    seen.add(link)
                    queue.append((link, target))
    for alias, location in aliases.items():
        while location in aliases and aliases[location] != alias:  # a chain of redirects
            location = aliases[location]
        if location in found:
            found[alias] = found[location]
    return found, broken


def rewrite(text: str, here: str, files: dict[str, str], outside: dict[str, str | None]) -> str:
    """The page ``text`` (written as ``here``) with every internal link relative: to the
    file of a crawled page, or for the search, to ``search.html`` keeping its query. A link
    to a paper without a page here (``outside``: link -> its own URL, e.g. on arXiv) goes
    there, or is dropped when it has none (the title stays, as text)."""
    def sub(m: re.Match) -> str:
        link = html.unescape(m.group(2))
        if not _internal(link):
            return m.group(0)
        base, _, fragment = link.partition("#")
        parts = urlsplit(base)
        if parts.path == SEARCH:
            target = relative(here, files[SEARCH]) + (f"?{parts.query}" if parts.query else "")
        elif base in files:
            target = relative(here, files[base])
        elif base in outside:
            if not outside[base]:
                return ""
            return m.group(1) + html.escape(outside[base], quote=True) + m.group(3)
        else:
            return m.group(0)  # not a page (a rating action): left as the app wrote it
        target += f"#{fragment}" if fragment else ""
        return m.group(1) + html.escape(target, quote=True) + m.group(3)

    return LINK.sub(sub, text)


def outside_papers(database: Path, found, files) -> dict[str, str | None]:
    """Each link of the pages to a paper that has no page here -> the paper's own address
    (arXiv, its publisher), None when it has none."""
    from ..present.render import safe_url
    from ..store import Store

    links = {link.split("#", 1)[0] for _, body, is_html in found.values() if is_html
             for link in _links(body.decode()) if link.startswith(PAPERS)} - set(files)
    out = {}
    with Store.open(database) as store:
        for link in links:
            paper = store.get(unquote(urlsplit(link).path)[len(PAPERS):])
            out[link] = (safe_url(paper.abs_url or paper.url) or None) if paper else None
    return out


def search_index(database: Path, papers: dict[str, str]) -> list[dict]:
    """One entry per paper page of the site (``papers``: key -> file), newest first: what the
    browser's search looks through and shows. ``words`` are the matcher's own normalised words
    of the fields a plain word searches (:func:`watcher.matching.index.prepare_doc`: title, abstract,
    authors, each as the matcher holds it), so that the browser finds a plain word where the
    server's search does ("RL" is a word, not a part of "world")."""
    from ..matching.index import prepare_doc
    from ..store import Store
    from ..present.tldr import stored_tldrs

    with Store.open(database) as store:
        stored = [p for p in (store.get(k) for k in papers) if p is not None]
        tldrs = stored_tldrs(stored, store.tldrs_recorded([p.key for p in stored]))
    docs = {p.key: prepare_doc(p) for p in stored}
    entries = [{"url": quote(papers[p.key], safe="/-_.~"), "title": title_text(p.title),
                "authors": list(p.authors), "tldr": tldrs.get(p.key) or "",
                "day": p.day.isoformat() if p.day else "",
                "categories": list(p.categories or ([p.primary_category] if p.primary_category else [])),
                "words": [docs[p.key].title.strip(), docs[p.key].abstract.strip(), docs[p.key].authors.strip()]}
               for p in stored]
    return sorted(entries, key=lambda e: (e["day"], e["title"]), reverse=True)


def prepare(out: Path) -> None:
    """``out`` must be a new or empty folder, or an earlier site (its index is there), so that
    a wrong path never scatters pages over a project."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / INDEX_JSON.lstrip("/")).exists():
        raise InputError(f"{out} is neither empty nor a site written by watcher site; "
                         "choose a new folder")
    out.mkdir(parents=True, exist_ok=True)


def build_site(config: Config, out: Path, database: Path | None = None) -> SiteReport:
    """Write the static site of ``database`` (default: the config's) into ``out``."""
    from ..store import Store
    from ..web.app import create_app

    database = Path(database or config.settings.database)
    prepare(out)
    Store.open(database).close()  # brings an older database's schema up to date: the app only reads
    site_config = replace(config, web=replace(config.web, base_url=None))  # links from /
    found, broken = crawl(create_app(site_config, database, static=True))
    files = {target: f for target, (f, _, _) in found.items()}
    files[INDEX_JS] = INDEX_JS.lstrip("/")
    outside = outside_papers(database, found, files)
    report = SiteReport(broken=broken)
    written: set[str] = set()
    for target, (name, body, is_html) in found.items():
        if name in written:  # a redirect's alias
            continue
        written.add(name)
        if is_html:
            body = rewrite(body.decode(), name, files, outside).encode()
            report.pages += 1
        else:
            report.files += 1
        _write(out / name, body, out)
    papers = {unquote(urlsplit(t).path)[len(PAPERS):]: f for t, (f, _, h) in found.items()
              if h and t.startswith(PAPERS)}
    index = search_index(database, papers)
    report.papers = len(index)
    data = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    _write(out / INDEX_JSON.lstrip("/"), data.encode(), out)
    _write(out / INDEX_JS.lstrip("/"), f"window.WATCHER_INDEX = {data};\n".encode(), out)
    return report


def _write(path: Path, body: bytes, root: Path) -> None:
    """Write ``body`` to ``path``, which must lie inside ``root`` (whatever a paper's ids hold)."""
    if not path.resolve().is_relative_to(root.resolve()):
        raise InputError(f"{path}: outside the site's folder {root}; not written")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(body)
    os.replace(tmp, path)
