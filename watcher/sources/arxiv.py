"""The ``arxiv`` source: the arXiv API search of ``query``, paged, newest submissions first.

Each run asks only for what it has not seen::

    since = ctx.since                                  # watcher fetch --since (backfill)
         or state["newest"] - OVERLAP                  # newest submission seen, less 2 weeks
         or now - first_fetch                          # the very first run
    for start in 0, page, 2*page, ... (while start < 30,000):
        GET ?search_query=(QUERY) AND submittedDate:[since TO now]
            &sortBy=submittedDate&sortOrder=descending&start=START&max_results=PAGE
        keep entries submitted at or after since; stop at totalResults or at an older entry

so days when watcher was down are caught up and whole history is never fetched again. The API
can only search by submission date, and arXiv announces a paper days after its submission, a
week or more when it is held in moderation or by a holiday backlog: so every run reaches back
``OVERLAP`` (two weeks) before the newest submission it has seen. Identity makes the overlap
free: the store merges the re-read papers as unchanged, and a late paper is new when it comes.
The API's error feed becomes a SourceError naming the query; an empty page short of
``totalResults`` (a known API hiccup) is retried, then fails the run so that nothing is
silently skipped: state only advances after a whole fetch.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from ..errors import ArxivApiError, HttpStatusError, InputError, SourceError
from ..formats import Listing, arxiv_atom
from ..kinds import Kind, first_fetch, option, options
from . import urls
from .base import FetchResult, Source
from .common import http_client, iso, name_papers, parse_failure, state_time

log = logging.getLogger(__name__)

MAX_RESULTS = 2000   # the API's largest page
MAX_START = 30000    # the API refuses start + max_results beyond this
OVERLAP = timedelta(days=14)  # arXiv's announcement delays: moderation holds, holiday backlogs
EMPTY_PAGE_TRIES = 3


# what `url` means (watcher.sources.urls): the default base, the paths watcher adds, an old ending
URL = ("https://export.arxiv.org/api", "/query", "/query")

class ArxivSource(Source):
    """Incremental arXiv API search (see the module docstring for the flow)."""

    def fetch(self, state: dict) -> FetchResult:
        """Fetch every paper submitted since the last run (with overlap) matching the query,
        showing progress in papers of ``totalResults``."""
        with self.ctx.progress(f"source {self.name}", unit="papers") as progress:
            return self._fetch(state, progress)

    def _fetch(self, state: dict, progress) -> FetchResult:
        since = self.since(state)
        until = self.ctx.now + timedelta(days=1)
        search = (f"({self.cfg.options.query}) AND submittedDate:"
                  f"[{since:%Y%m%d%H%M} TO {until:%Y%m%d%H%M}]")
        page_size = max(1, min(self.cfg.options.page_size, MAX_RESULTS))
        papers: dict[str, object] = {}
        start = 0
        while True:
            if start >= MAX_START:
                log.warning("source %s: stopped at the arXiv API's limit of %d results; papers "
                            "submitted before %s may be missing", self.name, MAX_START,
                            min(p.published for p in papers.values() if p.published))
                break
            listing = self._page(search, start, min(page_size, MAX_START - start))
            if listing.total is not None:
                progress.set_total(min(listing.total, MAX_START))
            progress.advance(len(listing.papers) + len(listing.skipped))
            reached_older, before = False, len(papers)
            for paper in listing.papers:
                if paper.published is not None and paper.published < since:
                    reached_older = True
                    continue
                papers.setdefault(paper.key, paper)  # pages shift when papers arrive meanwhile
            start += len(listing.papers) + len(listing.skipped)
            if not (listing.papers or listing.skipped) or reached_older:
                break
            if len(papers) == before:  # a server that ignores start: stop instead of looping
                log.warning("source %s: page at start=%d repeated earlier papers; stopping",
                            self.name, start - len(listing.papers))
                break
            if listing.total is not None and start >= listing.total:
                break
        found = list(papers.values())
        name_papers(self, found)
        new_state = dict(state)
        newest = max((p.published for p in found if p.published), default=None)
        old_newest = state_time(state, "newest")
        if newest and (old_newest is None or newest > old_newest):
            new_state["newest"] = iso(newest)
        return FetchResult(papers=found, state=new_state)

    def since(self, state: dict):
        """Where this run starts (aware UTC): see the module docstring."""
        if self.ctx.since is not None:
            return self.ctx.since
        newest = state_time(state, "newest")
        if newest is not None:
            return newest - OVERLAP
        return self.ctx.now - self.cfg.first_fetch

    def _page(self, search: str, start: int, size: int) -> Listing:
        """One page; an empty page before ``totalResults`` is re-asked, then a SourceError."""
        url = urls.endpoint(URL, self.cfg.url, "/query")
        params = {"search_query": search, "start": start, "max_results": size,
                  "sortBy": "submittedDate", "sortOrder": "descending"}
        for _ in range(EMPTY_PAGE_TRIES):
            try:
                response = http_client(self).get(url, params=params, timeout=self.cfg.timeout)
            except HttpStatusError as e:
                if e.status == 400 and e.body:
                    self._parse(e.body, url)  # the error feed explains the 400
                raise
            listing = self._parse(response.content, response.url)
            if listing.papers or listing.skipped or not listing.total or start >= listing.total:
                return listing
            log.warning("source %s: arXiv API returned an empty page at start=%d of %d; asking "
                        "again", self.name, start, listing.total)
        raise SourceError(f"arXiv API kept returning empty pages at start={start} of "
                          f"{listing.total} results; the next run will try again")

    def _parse(self, data: bytes, origin: str) -> Listing:
        try:
            return arxiv_atom.parse(data, origin)
        except ArxivApiError as e:
            raise SourceError(f"{e} (check the query of [source.{self.name}]: "
                              f"{self.cfg.options.query!r})") from e
        except InputError as e:
            raise parse_failure(self, e) from e


def _validate(r, where: str, v: dict) -> None:
    if not v["query"].strip():
        raise r.fail(f"{where}.query", "must not be empty (an arXiv API query such as cat:cs.LG)")
    if not 1 <= v["page_size"] <= 2000:
        raise r.fail(f"{where}.page_size", "must be between 1 and 2000")


@options
class ArxivOptions:
    query: str = option(help="an arXiv API query such as `cat:cs.LG` (not empty)")
    page_size: int = option(200, help="results asked per page (1–2000)")
    first_fetch: timedelta | None = first_fetch()
    arxiv_categories = True  # its query's cat: terms are arXiv's: `watcher check` holds them to the known ones


KIND = Kind("arxiv", ArxivSource, ArxivOptions, _validate, url=URL)
