"""Zotero (docs/zotero.md): the profile's ``zotero = {...}`` table, the Web API client, the
conversion between Zotero items and papers (pure), and a profile's examples as the last sync
stored them (:func:`examples`, read by :mod:`watcher.matching.compile`; the sync itself is
:mod:`watcher.zotero.sync`).

The client speaks the Zotero Web API v3 (https://www.zotero.org/support/dev/web_api/v3/basics)
over httpx, the HTTP library watcher already has, rather than through pyzotero: pyzotero pins
``bibtexparser<2`` (watcher reads and writes BibTeX with bibtexparser 2) and, since 1.15,
brings ``httpx2``, and it sends a fresh ``Zotero-Write-Token`` on every call, so a retried save
could not be recognised as the same write. What it needs of the API is small:

* ``Zotero-API-Version: 3`` and the key as ``Zotero-API-Key`` (never in a URL, so no log or
  error message can show it); a desktop Zotero's local API (``local = true``,
  ``http://127.0.0.1:23119/api``, library ``users/0``) takes no key;
* paging by ``start``/``limit``, following the ``Link: <…>; rel="next"`` header;
* ``Last-Modified-Version`` on every answer, ``If-Modified-Since-Version`` -> 304 when nothing
  changed, ``since=`` for what changed;
* ``Zotero-Write-Token`` on a new item (the same token on a retry), ``If-Unmodified-Since-Version``
  on a change to an existing one, 412 when either is stale;
* ``Backoff`` (on any answer) and ``Retry-After`` (on 429 and 503): waited out within the
  request's total deadline, else the request fails and the next cycle tries again.

Every request has a total deadline and every answer a size cap.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from urllib.parse import urlencode, urljoin, urlsplit

from ..errors import BadItem, InputError, TooLarge, TooManyValues, ZoteroError
from ..formats import load_json
from ..formats.zotero_json import item_paper
from ..masking import remember
from ..models import Paper, title_fingerprint
from ..util.paging import Paging
from ..present.bibtex import _name_parts, plain_text

WEB_API = "https://api.zotero.org"
LOCAL_API = "http://127.0.0.1:23119/api"  # Zotero 7's local API (Settings > Advanced)
MAX_BYTES = 32 * 1024 * 1024  # one answer: a page of 100 items is ~300 kB
MAX_CONTAINERS = 100_000  # JSON objects and arrays in one answer: an item is ~40, a page 100 items
PAGE_ITEMS = 100  # items asked for a page (the API's largest); a page of more is refused
MAX_ITEMS = 20_000  # items read from one collection, tag or search in one read
MAX_PAGES = MAX_ITEMS // PAGE_ITEMS + 50  # pages of one read (empty pages count too)
MAX_READ_BYTES = 256 * 1024 * 1024  # the answers of one paged read, all pages together
READ_TIMEOUTS = 20  # one paged read has READ_TIMEOUTS x the library's timeout in all (600 s)
MAX_WAIT = 120.0  # the longest Backoff / Retry-After waited out within a request
MAX_THROTTLED = 3  # 429 / 503 answers to one request before it fails (the next cycle retries)
_KEY = re.compile(r"[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}")  # Zotero's object keys
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


# --- the config table -----------------------------------------------------------------------

@dataclass(frozen=True)
class Library:
    """A profile's ``zotero = {...}``: the library, where its examples are read from
    (``collection``, ``tag`` or ``saved_search``; none: the whole library; ``read = false``:
    none at all), and how to reach it."""

    library_id: str
    library_type: str = "user"  # or "group"
    api_key_env: str | None = None
    collection: str | None = None
    tag: str | None = None
    saved_search: str | None = None
    url: str = WEB_API
    local: bool = False
    read: bool = True
    timeout: float = 30.0

    @property
    def prefix(self) -> str:
        """``/users/ID`` or ``/groups/ID``."""
        return f"/{self.library_type}s/{self.library_id}"

    @property
    def items_path(self) -> str:
        """The top-level items the examples are read from."""
        if self.collection:
            return f"{self.prefix}/collections/{self.collection}/items/top"
        if self.saved_search:
            return f"{self.prefix}/searches/{self.saved_search}/items"
        return f"{self.prefix}/items/top"

    @property
    def where(self) -> str:
        """What the examples come from, in messages: ``collection ABCD2345 of users/1234567``."""
        what = (f"collection {self.collection}" if self.collection else f"tag {self.tag!r}" if self.tag
                else f"saved search {self.saved_search}" if self.saved_search else "the library")
        return f"{what} of {self.prefix[1:]}" + (" (local API)" if self.local else "")

    @property
    def sync_key(self) -> str:
        """What the stored items of these examples are kept under (one per place read)."""
        return f"{self.url.rstrip('/')}{self.items_path}" + (f"?tag={self.tag}" if self.tag else "")

    def api_key(self) -> str | None:
        """The key, from the environment (never stored, never printed: masked in every error)."""
        key = os.environ.get(self.api_key_env) or None if self.api_key_env else None
        if key:
            remember(key)
        return key


LIBRARY_KEYS = {"library_id": (str, None), "library_type": (str, "user"), "api_key_env": (str, None),
                "collection": (str, None), "tag": (str, None), "saved_search": (str, None),
                "url": (str, None), "local": (bool, False), "read": (bool, True),
                "timeout": (float, 30.0)}


def library_from(r, where: str, table: object, env_name) -> Library:
    """The ``zotero`` table of a profile, checked by ``r`` (the config reader: unknown keys and
    wrong types are errors naming ``where``); ``env_name`` checks a ``*_env`` key."""
    if isinstance(table, dict) and isinstance(table.get("library_id"), int):
        table = dict(table, library_id=str(table["library_id"]))  # 1234567 or "1234567"
    v = r.table(where, table, LIBRARY_KEYS)
    if v["library_type"] not in ("user", "group"):
        raise r.fail(f"{where}.library_type", f"{v['library_type']!r} is not user or group")
    library_id = v["library_id"] or ("0" if v["local"] else None)
    if library_id is None:
        raise r.fail(f"{where}.library_id", "required (the number in your library's URL; "
                     "or local = true for a running desktop Zotero)")
    if not library_id.isdigit():
        raise r.fail(f"{where}.library_id", f"{library_id!r} is not a library number")
    for key in ("collection", "saved_search"):
        if v[key] is not None and not _KEY.fullmatch(v[key]):
            raise r.fail(f"{where}.{key}", f"{v[key]!r} is not a Zotero key (8 letters and digits, "
                         "as in the collection's URL)")
    if sum(v[k] is not None for k in ("collection", "tag", "saved_search")) > 1:
        raise r.fail(where, "give one of collection, tag or saved_search")
    url = v["url"] or (LOCAL_API if v["local"] else WEB_API)
    if not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", url):
        raise r.fail(f"{where}.url", f"{url!r} is not an http(s) URL")
    if v["timeout"] <= 0:
        raise r.fail(f"{where}.timeout", "must be a positive number of seconds")
    return Library(library_id=library_id, library_type=v["library_type"],
                   api_key_env=env_name(r, f"{where}.api_key_env", v["api_key_env"]),
                   collection=v["collection"], tag=v["tag"], saved_search=v["saved_search"],
                   url=url.rstrip("/"), local=v["local"], read=v["read"], timeout=v["timeout"])


def check_save_to(r, where: str, collection: str | None, library: Library | None) -> None:
    """``save_to_zotero``: a collection key, of a library named by the profile's ``zotero``,
    through the Web API with a key (the local API cannot write)."""
    if collection is None:
        return
    if not _KEY.fullmatch(collection):
        raise r.fail(f"{where}.save_to_zotero", f"{collection!r} is not a Zotero collection key "
                     "(8 letters and digits, as in the collection's URL)")
    if library is None:
        raise r.fail(f"{where}.save_to_zotero", "needs the profile's zotero = {library_id, ...}")
    if library.local:
        raise r.fail(f"{where}.save_to_zotero", "Zotero's local API is read-only: save through the "
                     "Web API (zotero = {library_id, api_key_env, ...})")
    if not library.api_key_env:
        raise r.fail(f"{where}.zotero.api_key_env", "required with save_to_zotero (a key with write access)")


# --- the client -----------------------------------------------------------------------------

@dataclass
class Answer:
    """One answer: status, headers (lower-case names), JSON body (None when empty)."""

    status: int
    headers: dict
    body: object = None

    @property
    def version(self) -> int | None:
        v = self.headers.get("last-modified-version", "")
        return int(v) if v.isdigit() else None


class Client:
    """Requests to one library, each within ``deadline`` seconds in all (waits included)."""

    def __init__(self, library: Library, *, user_agent: str = "watcher", http=None,
                 deadline: float | None = None, sleep=time.sleep, clock=time.monotonic):
        import httpx

        from ..util.http import client_headers, tls_context

        self.library = library
        self._key = library.api_key()
        self._http = http or httpx.Client(timeout=library.timeout, follow_redirects=False,
                                          headers=client_headers(user_agent), verify=tls_context())
        self._own = http is None
        self.deadline = deadline if deadline is not None else library.timeout * 4
        self._sleep, self._clock = sleep, clock
        self._paused_until = 0.0  # a Backoff header asks for a pause before the next request
        self.read_bytes = 0  # the answers' bytes so far (a paged read's total is capped)

    def close(self) -> None:
        if self._own:
            self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def headers(self, extra: dict | None = None) -> dict:
        out = {"Zotero-API-Version": "3"}
        if self._key:
            out["Zotero-API-Key"] = self._key
        return {**out, **(extra or {})}

    def request(self, method: str, path: str, *, params: dict | None = None, body=None,
                headers: dict | None = None, ok=(200,)) -> Answer:
        """``method path`` (a path under the API, or a full URL of a ``Link`` header); the
        answer when its status is in ``ok`` (or 304), else ZoteroError. 429 and 503 are
        retried after their ``Retry-After`` while the deadline allows."""
        import httpx

        url = path if path.startswith("http") else self.library.url + path
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        from ..util.http import safe_url, send_capped

        shown = safe_url(url.split("?")[0])
        end = self._clock() + self.deadline
        throttled = 0
        while True:
            self._wait(self._paused_until - self._clock(), end, shown)
            left = end - self._clock()
            if left <= 0:
                raise ZoteroError(f"Zotero {shown}: no answer within {self.deadline:g} s; the next cycle "
                                  "tries again")
            try:
                content = json.dumps(body).encode() if body is not None else None
                r, raw = send_capped(self._http, method, url, limit=MAX_BYTES, deadline=left, content=content,
                                     timeout=min(self.library.timeout, left),
                                     headers=self.headers({**({"Content-Type": "application/json"}
                                                             if content else {}), **(headers or {})}))
            except TooLarge as e:
                raise ZoteroError(f"Zotero {shown}: {e}") from e
            except httpx.HTTPError as e:
                raise ZoteroError(f"Zotero {shown}: {_describe(e)}") from e
            answer = Answer(r.status_code, {k.lower(): v for k, v in r.headers.items()})
            backoff = _seconds(answer.headers.get("backoff"))
            if backoff:
                self._paused_until = max(self._paused_until, self._clock() + backoff)
            if r.status_code in (429, 503):
                throttled += 1
                if throttled > MAX_THROTTLED:
                    raise ZoteroError(f"Zotero {shown}: HTTP {r.status_code} {throttled} times in a row; "
                                      "the next cycle tries again", r.status_code)
                wait = _seconds(answer.headers.get("retry-after"))
                wait = max(wait if wait is not None else 1.0, self._paused_until - self._clock())
                self._wait(wait, end, shown, r.status_code)
                continue
            self.read_bytes += len(raw)
            if raw:
                try:
                    answer.body = load_json(raw, f"Zotero {shown}", max_containers=MAX_CONTAINERS)
                except TooManyValues as e:
                    raise ZoteroError(str(e), r.status_code) from None
                except InputError:  # not JSON (an error page, a plain answer), or nested or wide
                    answer.body = raw.decode("utf-8", "replace")  # past any answer's: text
            if r.status_code == 304 or r.status_code in ok:
                return answer
            text = answer.body if isinstance(answer.body, str) else ""
            raise ZoteroError(f"Zotero {shown}: HTTP {r.status_code}" + (f": {text.strip()[:200]}" if text.strip() else ""),
                              r.status_code)

    def _wait(self, seconds: float, end: float, shown: str, status: int | None = None) -> None:
        if seconds <= 0:
            return
        if seconds > MAX_WAIT or self._clock() + seconds > end:
            why = f"HTTP {status}, " if status else ""
            raise ZoteroError(f"Zotero {shown}: {why}asked to wait {seconds:.0f} s, past this "
                              "request's deadline; the next cycle tries again", status or 429)
        self._sleep(seconds)

    def pages(self, path: str, params: dict | None = None, headers: dict | None = None):
        """Every answer of a paged request, following ``Link: rel="next"``; the first may be
        a 304. Within a :class:`~watcher.util.paging.Paging` (ZoteroError past a bound, naming it):
        :data:`MAX_PAGES` pages (empty ones too), :data:`MAX_ITEMS` items (a page of more than
        the :data:`PAGE_ITEMS` asked is refused), :data:`MAX_READ_BYTES` bytes and
        READ_TIMEOUTS x the library's timeout."""
        paging = Paging(f"Zotero {self.library.url}{path}", ZoteroError, pages=MAX_PAGES, items=MAX_ITEMS,
                        size=MAX_READ_BYTES, seconds=self.library.timeout * READ_TIMEOUTS,
                        per_page=PAGE_ITEMS, clock=self._clock)
        paging.next_page()
        before = self.read_bytes
        answer = self.request("GET", path, params={"limit": PAGE_ITEMS, **(params or {})}, headers=headers)
        while True:
            paging.took(self.read_bytes - before, len(answer.body) if isinstance(answer.body, list) else 0)
            yield answer
            found = _NEXT.search(answer.headers.get("link", ""))
            if answer.status == 304 or not found:
                return
            following = urljoin(self.library.url + "/", found.group(1))
            if urlsplit(following)[:2] != urlsplit(self.library.url)[:2]:  # the key goes nowhere else
                raise ZoteroError(f"Zotero {self.library.url}: the next page is on another server "
                                  f"({urlsplit(following).netloc}); not followed")
            paging.next_page()
            before = self.read_bytes
            answer = self.request("GET", following, headers=headers)

    def key_access(self) -> dict:
        """``GET /keys/current``: what the key may do (``access``), or ZoteroError."""
        return self.request("GET", "/keys/current").body or {}


def _seconds(value: str | None) -> float | None:
    from ..util.http import parse_retry_after

    return parse_retry_after(value)


def _describe(e) -> str:
    from ..util.http import _describe as describe

    return describe(e)


def access_problem(access: dict, library: Library, write: bool) -> str | None:
    """What the key of ``GET /keys/current`` (``access``) lacks for reading ``library`` (and
    writing to it with ``write``), in one line; None when nothing. A group is reached through
    the key's ``groups.all`` or ``groups.{id}``; a user library only by its own user's key."""
    rights = access.get("access") or {}
    if library.library_type == "user":
        if str(access.get("userID", "")) != library.library_id:
            return (f"the key belongs to user {access.get('userID', '?')}, not to library "
                    f"users/{library.library_id}")
        mine = rights.get("user") or {}
    else:
        groups = rights.get("groups") or {}
        mine = groups.get(library.library_id) or groups.get("all") or {}
    missing = [what for what, need in (("read access", "library"), ("write access", "write"))
               if (need == "library" or write) and not mine.get(need)]
    if not missing:
        return None
    return f"the key lacks {' and '.join(missing)} to {library.prefix[1:]}"


# --- items and papers (pure; an item read as a paper: watcher.formats.zotero_json) ---------------


def paper_item(paper: Paper, collection: str) -> dict:
    """``paper`` as a new Zotero item in ``collection``: a ``journalArticle`` when a journal
    published it, else a ``preprint``; creators, date, DOI, URL, abstract, and the arXiv id as
    Zotero's own arXiv import writes it (``archiveID`` ``arXiv:ID`` and ``extra``
    ``arXiv:ID [category]``; a journal article has no archiveID, so ``extra`` only). The title
    and abstract are plain text, their LaTeX decoded (``\\emph{x}`` -> x, ``$\\alpha$`` -> α),
    as the BibTeX export writes them."""
    creators = []
    for author in paper.authors:
        parts = _name_parts(author)
        last = " ".join([*parts.von, *parts.last]) + ("".join(", " + j for j in parts.jr) if parts.jr else "")
        first = " ".join(parts.first)
        creators.append({"creatorType": "author", "firstName": first, "lastName": last} if first
                        else {"creatorType": "author", "name": last or author})
    when = paper.published.date() if paper.published else paper.announced
    journal = paper.journal or (paper.venue if paper.venue not in (None, "arXiv") else None)
    item = {"itemType": "journalArticle" if paper.journal else "preprint", "title": item_title(paper),
            "creators": creators, "abstractNote": plain_text(paper.abstract) if paper.abstract else "",
            "date": when.isoformat() if when else "", "DOI": paper.doi or "",
            "url": paper.abs_url or paper.url or "", "collections": [collection], "tags": [],
            "relations": {}}
    extra = []
    if paper.arxiv_id:
        category = paper.primary_category or (paper.categories[0] if paper.categories else None)
        extra.append(f"arXiv:{paper.arxiv_id}" + (f" [{category}]" if category else ""))
    if paper.pmid:
        extra.append(f"PMID: {paper.pmid}")
    if paper.journal:
        item["publicationTitle"] = journal
    else:
        if paper.arxiv_id:
            item.update(archiveID=f"arXiv:{paper.arxiv_id}", repository="arXiv", libraryCatalog="arXiv.org")
        elif journal:  # bioRxiv, medRxiv
            item["repository"] = journal
    item["extra"] = "\n".join(extra)
    return item


def item_title(paper: Paper) -> str:
    """The title an item of ``paper`` has: its LaTeX decoded (``$\\alpha$`` -> α), as
    :func:`paper_item` writes it and a search for the item must ask."""
    return plain_text(paper.title)


def same_work(paper: Paper, item: dict) -> bool:
    """Whether a Zotero item is ``paper`` (same arXiv id, DOI or title, the title as the item
    holds it: :func:`item_title`). An item that is no readable paper is not."""
    try:
        other = item_paper(item)
    except BadItem:
        return False
    if other is None:
        return False
    if paper.arxiv_id and other.arxiv_id:
        return paper.arxiv_id == other.arxiv_id
    if paper.doi and other.doi:
        return paper.doi == other.doi
    return title_fingerprint(item_title(paper)) == title_fingerprint(other.title)


__all__ = ["Library", "Client", "ZoteroError", "Answer", "BadItem", "library_from", "check_save_to",
           "access_problem", "item_paper", "item_title", "paper_item", "same_work", "WEB_API", "LOCAL_API"]
