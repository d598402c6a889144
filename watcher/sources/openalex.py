"""The ``openalex`` source: new works citing followed works, and new works of followed authors,
from the OpenAlex works API (docs/openalex.md). No key; ``mailto`` puts the requests in OpenAlex's
polite pool.

Each run::

    for each followed work not resolved yet (state["works"]):      # once, ever
        GET {url}/works/{W123 | doi:10.… | doi:10.48550/arXiv.… | pmid:…}?select=id,title
    since = ctx.since or state["last_day"] - OVERLAP or now - first_fetch
    for each stream: cites (filter cites:W1|W2…), authors (author.orcid:… / author.id:…),
                     or, with neither, search / topics alone:
        cursor = "*"
        GET {url}/works?filter=<stream>,from_created_date:SINCE[,topics.id:T1|T2]
                       [&search=…]&per-page=200&cursor=CURSOR&mailto=…
        ... cursor = meta.next_cursor, until it is null or a page is empty

``from_created_date`` is the day a work entered OpenAlex, which is what "new" means here (an
old paper OpenAlex only now indexes is new to the reader); the run reaches back OVERLAP days
for works indexed late, and identity makes the overlap free. Each work records which followed
works it cites (its ``referenced_works``) and which followed authors wrote it, as entries with
the cited work's title, resolved once and kept in the source's state, so that every card can
say "cites your <title>". Where the API refuses ``from_created_date`` (it has been a filter for
some plans' API keys only), the source says ``from_publication_date`` instead, from then on
(``state["date_filter"]``). ``api_key_env`` names the variable holding an OpenAlex API key, sent
as ``api_key`` and masked in the log like every secret. Requests go through the shared HTTP client: its timeout, its size cap
(MAX_PAGE_BYTES per answer), its retries with backoff honouring ``Retry-After`` on 429 and
5xx. A run is bounded in all, every stream together (:func:`run_paging`): MAX_PAGES pages,
MAX_WORKS works, MAX_RUN_BYTES bytes; a page of more than PER_PAGE works (a server ignoring
``per-page``) is refused. A page that fails, or a bound reached, fails the run in one line and
the state stays, so the next run asks again; nothing of a failed run is stored (the other
sources and channels of the cycle go on).

Why not pyalex: it is a well-kept client, but it makes its requests through ``requests`` with
its own retry policy, so it could not use watcher's per-request deadline, answer size cap,
polite pacing and masked error messages, which every other source gets from
:mod:`watcher.util.http`; the API needs only a few GETs.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta

from ..errors import HttpStatusError, InputError, SourceError
from ..masking import remember
from ..util.paging import Paging
from ..formats import openalex
from ..kinds import Kind, first_fetch, option, options
from . import urls
from .base import FetchResult, Source
from .common import first_day, http_client, name_papers, parse_failure
from ..formats.openalex import author_ref, work_ref

log = logging.getLogger("watcher")

OVERLAP = timedelta(days=3)  # works indexed with a created date a day or two back
PER_PAGE = 200  # the API's largest page; a page of more works is refused
MAX_PAGES = 250  # pages of one run, every stream together (empty or short pages count too)
MAX_WORKS = 20_000  # works of one run, every stream together: far beyond any citation alert
MAX_PAGE_BYTES = 16 * 1024 * 1024  # one page of 200 works with abstracts is ~1-2 MB
MAX_RUN_BYTES = 256 * 1024 * 1024  # the answers of one run, all pages together
MAX_VALUES = 50  # values OR-ed in one filter (OpenAlex takes up to 100)
# "new" is the day OpenAlex created a work; where the API refuses that filter (it has been kept
# for the API keys of some plans), the publication date stands in, and a work OpenAlex indexes
# long after its publication is then missed
RATE_LIMITED = ("OpenAlex's rate limit, or the day's budget, is spent; the next run asks again "
                "(mailto joins its polite pool; a key, api_key_env, has a budget of its own)")
DATE_FILTERS = ("from_created_date", "from_publication_date")
SELECT = ("id,doi,title,display_name,publication_date,created_date,ids,authorships,"
          "primary_location,locations,abstract_inverted_index,referenced_works,type")


# what `url` means (watcher.sources.urls): the default base, the paths watcher adds, an old ending
URL = ("https://api.openalex.org", "/works", None)

class OpenalexSource(Source):
    """New works citing the followed works, and new works of the followed authors."""

    def __init__(self, cfg, ctx):
        super().__init__(cfg, ctx)
        self.api_key = os.environ.get(cfg.options.api_key_env) if cfg.options.api_key_env else None
        if self.api_key:
            remember(self.api_key)  # it travels in the URL: masked wherever an error is stored

    def _get(self, path: str, params: dict):
        base = urls.base(URL, self.cfg.url)
        if self.cfg.options.mailto:
            params = {**params, "mailto": self.cfg.options.mailto}
        if self.api_key:
            params = {**params, "api_key": self.api_key}
        try:
            return http_client(self).get(f"{base}/{path}", params=params, timeout=self.cfg.timeout,
                                         max_bytes=MAX_PAGE_BYTES)
        except HttpStatusError as e:
            if e.status != 429:
                raise
            # past the retries: OpenAlex's rate limit or the day's budget, not a server down
            raise HttpStatusError(f"{str(e).rsplit('; ', 1)[0]}; {RATE_LIMITED}", e.status, e.body) from None

    def resolve(self, known: dict) -> dict:
        """Each followed work's OpenAlex id and title, ``key -> [id, title]``: those in
        ``known`` (the saved state) as they are, the others asked once. A work OpenAlex does
        not know (yet: a DOI minted last week) is left out of this run with a warning, and
        asked again by the next."""
        out = {}
        for ref in self.cfg.options.cites:
            if isinstance(known.get(ref), list) and len(known[ref]) == 2:
                out[ref] = known[ref]
                continue
            try:
                response = self._get(f"works/{openalex.api_path(ref)}", {"select": "id,title,display_name"})
            except HttpStatusError as e:
                if e.status != 404:
                    raise
                log.warning("source %s: OpenAlex knows no work %s (cites) yet; its citations are "
                            "looked for once it does (check its spelling if this persists)", self.name, ref)
                continue
            try:
                out[ref] = list(openalex.parse_work(response.content, response.url))
            except InputError as e:
                raise parse_failure(self, e) from e
        return out

    def streams(self, works: dict) -> list[str | None]:
        """The works filters this run pages through, one request chain each."""
        ids = list(dict.fromkeys(wid for wid, _ in works.values()))
        out: list[str | None] = [f"cites:{'|'.join(ids[i:i + MAX_VALUES])}"
                                 for i in range(0, len(ids), MAX_VALUES)]
        for i in range(0, len(self.cfg.options.authors), MAX_VALUES):
            out += openalex.author_filters(self.cfg.options.authors[i:i + MAX_VALUES])
        return out or [None]

    def fetch(self, state: dict) -> FetchResult:
        """Resolve the followed works, then page through each stream; progress counts works."""
        works = self.resolve(state.get("works") or {})
        follow = openalex.Follow(works={wid: openalex.entry(ref, title)
                                        for ref, (wid, title) in works.items()},
                                 authors=frozenset(self.cfg.options.authors))
        since = first_day(self, state, OVERLAP)
        today = self.ctx.now.date()
        by = state.get("date_filter") if state.get("date_filter") in DATE_FILTERS else DATE_FILTERS[0]
        papers, self._total, self._paging = [], 0, run_paging(self.name)
        with self.ctx.progress(f"source {self.name}", unit="works") as progress:
            for stream in self.streams(works):
                try:
                    papers += self._stream(stream, f"{by}:{since.isoformat()}", follow, progress)
                except HttpStatusError as e:  # the created date refused (a key-only filter)
                    if by != DATE_FILTERS[0] or e.status not in (400, 401, 403) or b"created_date" not in e.body:
                        raise
                    by = DATE_FILTERS[1]
                    papers += self._stream(stream, f"{by}:{since.isoformat()}", follow, progress)
        name_papers(self, papers)
        return FetchResult(papers=papers, state={**state, "works": works, "date_filter": by,
                                                 "last_day": today.isoformat()})

    def _stream(self, stream: str | None, since: str, follow, progress) -> list:
        filters = [f for f in (stream, since,
                               "topics.id:" + "|".join(self.cfg.options.topics) if self.cfg.options.topics else None) if f]
        params = {"filter": ",".join(filters), "per-page": PER_PAGE, "select": SELECT}
        if self.cfg.options.search:
            params["search"] = self.cfg.options.search
        found = []
        for n, page in enumerate(self.pages(params, follow)):
            if n == 0 and page.count is not None:  # every stream's works, in one total
                self._total += page.count
                progress.set_total(self._total)
            progress.advance(len(page.papers) + len(page.skipped))
            found += page.papers
        return found

    def pages(self, params: dict, follow=None, paging: Paging | None = None):
        """Each page of ``/works`` with ``params``, by cursor, until ``next_cursor`` is null
        or a page is empty; within ``paging`` (the run's: :func:`run_paging`)."""
        paging = paging or getattr(self, "_paging", None) or run_paging(self.name)
        cursor = "*"
        while True:
            paging.next_page()
            response = self._get("works", {**params, "cursor": cursor})
            try:
                page = openalex.parse_page(response.content, response.url, follow, max_results=PER_PAGE)
            except InputError as e:
                raise parse_failure(self, e) from e
            paging.took(len(response.content), len(page.papers) + len(page.skipped))
            yield page
            if not page.next_cursor or not (page.papers or page.skipped):
                return
            cursor = page.next_cursor


def run_paging(name: str):
    """The :class:`~watcher.util.paging.Paging` of one run: MAX_PAGES pages, MAX_WORKS works,
    MAX_RUN_BYTES bytes, every stream together (a page of more works than PER_PAGE is refused
    by the parser, before its works are read)."""
    return Paging(f"source {name}: OpenAlex", SourceError, pages=MAX_PAGES, items=MAX_WORKS,
                  size=MAX_RUN_BYTES, unit="works")


def works_of(source: OpenalexSource, author: str) -> list[tuple[str, str]]:
    """The works of the author ``author`` (a :func:`~watcher.formats.openalex.author_ref` key),
    listed once: each work's key (its DOI, else its OpenAlex id) and title, for ``watcher init
    --orcid``."""
    params = {"filter": openalex.author_filters([author])[0], "per-page": PER_PAGE,
              "select": "id,doi,title,display_name"}
    return list(dict.fromkeys(ref for page in source.pages(params, paging=run_paging(source.name))
                              for ref in page.refs))


def _validate(r, where: str, v: dict) -> dict:
    """An ``openalex`` source's keys, each identifier in one spelling (see
    :mod:`watcher.formats.openalex`): what it follows must be said, and said right."""
    cites, authors = [], []
    for key, values, ref, out, example in (
            ("cites", v["cites"], work_ref, cites, "a DOI, arxiv:2106.09685 or W2741809807"),
            ("authors", v["authors"], author_ref, authors, "an ORCID such as 0000-0002-1825-0097 "
                                                           "(whose last character checks the others) "
                                                           "or an OpenAlex id such as A5023888391")):
        for value in values:
            found = ref(value)
            if found is None:
                raise r.fail(f"{where}.{key}", f"{value!r} is not {example}")
            out.append(found)
    topics = []
    for value in v["topics"]:
        topic = value.strip().rsplit("/", 1)[-1].upper()
        if not topic[:1] == "T" or not topic[1:].isdigit():
            raise r.fail(f"{where}.topics", f"{value!r} is not an OpenAlex topic id such as T10102")
        topics.append(topic)
    if not (cites or authors or (v["search"] or "").strip() or topics):
        raise r.fail(f"{where}.cites", "an openalex source follows something: give cites (works "
                                       "whose new citations you want), authors, search or topics")
    if v["mailto"] is not None:
        r.address(f"{where}.mailto", v["mailto"])
    return {"cites": tuple(dict.fromkeys(cites)), "authors": tuple(dict.fromkeys(authors)),
            "search": (v["search"] or "").strip() or None, "topics": tuple(topics),
            "mailto": v["mailto"]}


@options
class OpenalexOptions:
    cites: tuple[str, ...] = option((), help="works whose new citations you want: DOIs, `arxiv:` ids or "
                                             "OpenAlex `W…` ids")
    authors: tuple[str, ...] = option((), help="authors whose new works you want: ORCIDs or OpenAlex `A…` ids")
    search: str | None = option(None, help="OpenAlex's full-text search")
    topics: tuple[str, ...] = option((), help="OpenAlex topic ids (`T…`)")
    mailto: str | None = option(None, help="an e-mail address: the requests join OpenAlex's polite pool")
    api_key_env: str | None = option(None, secret=True, help="the variable holding an OpenAlex API key",
                                     unset="OpenAlex is asked without a key (within its keyless daily budget)")
    first_fetch: timedelta | None = first_fetch()


KIND = Kind("openalex", OpenalexSource, OpenalexOptions, _validate, url=URL)
