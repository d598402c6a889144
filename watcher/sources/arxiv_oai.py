"""The ``arxiv-oai`` source: OAI-PMH ``ListRecords`` (``metadataPrefix=arXiv``) for backfill.

``watcher fetch --source NAME --since 2025-01-01`` harvests every record whose metadata changed
since that day (``from``, and the configured ``set`` such as ``cs`` or ``physics:hep-ex``),
following ``resumptionToken`` page after page. Without ``--since`` a run starts the day before
the previous run (records are dated by day), or ``first_fetch`` ago on the first run. arXiv's
OAI server answers 503 with ``Retry-After`` between pages when busy; the HTTP client waits.
"""

from __future__ import annotations

from datetime import date, timedelta

from ..errors import HttpStatusError, SourceError
from ..formats import arxiv_oai
from ..kinds import Kind, first_fetch, option, options
from ..util.paging import Paging
from . import urls
from .base import FetchResult, Source
from .common import http_client, name_papers, parse_listing, state_day

MAX_PAGES = 10000
MAX_RECORDS = 500_000  # records of one harvest: a month of every arXiv category is ~25,000
MAX_RUN_BYTES = 2 * 1024 * 1024 * 1024  # the answers of one harvest, all pages together (~2 KB a record)


# what `url` means (watcher.sources.urls): the default base, the paths watcher adds, an old ending
URL = ("https://oaipmh.arxiv.org/oai", "", None)

class ArxivOaiSource(Source):
    """Harvest arXiv metadata over OAI-PMH from a day on."""

    def from_day(self, state: dict) -> date:
        """The ``from`` day of this harvest (see the module docstring)."""
        if self.ctx.since is not None:
            return self.ctx.since.date()
        last = state_day(state, "harvested")
        if last is not None:
            return last - timedelta(days=1)
        return (self.ctx.now - self.cfg.first_fetch).date()

    def fetch(self, state: dict) -> FetchResult:
        """Harvest all pages from ``from_day``; SourceError on any OAI or network error.
        Progress counts records of the ``completeListSize`` the server announces."""
        with self.ctx.progress(f"source {self.name}", unit="papers") as progress:
            return self._fetch(state, progress)

    def _fetch(self, state: dict, progress) -> FetchResult:
        url = urls.base(URL, self.cfg.url)
        params = {"verb": "ListRecords", "metadataPrefix": "arXiv",
                  "from": self.from_day(state).isoformat()}
        if self.cfg.options.set:
            params["set"] = self.cfg.options.set
        papers = {}
        paging = Paging(f"source {self.name}: OAI-PMH harvest from {url}", SourceError, pages=MAX_PAGES,
                        items=MAX_RECORDS, size=MAX_RUN_BYTES, unit="records")
        while True:
            paging.next_page()
            listing = self._page(url, params, paging)
            if listing.total is not None:
                progress.set_total(listing.total)
            progress.advance(len(listing.papers) + len(listing.skipped))
            for paper in listing.papers:
                papers[paper.key] = paper
            if not listing.next_token:
                break
            params = {"verb": "ListRecords", "resumptionToken": listing.next_token}
        found = list(papers.values())
        name_papers(self, found)
        return FetchResult(papers=found, state={**state, "harvested": self.ctx.now.date().isoformat()})

    def _page(self, url: str, params: dict, paging: Paging):
        try:
            response = http_client(self).get(url, params=params, timeout=self.cfg.timeout)
        except HttpStatusError as e:
            if e.body.lstrip().startswith(b"<?xml") or b"<OAI-PMH" in e.body[:2000]:
                parse_listing(self, arxiv_oai, e.body, url)  # raises with the OAI message
            raise
        try:
            listing = parse_listing(self, arxiv_oai, response.content, response.url)
        except SourceError as e:
            hint = f" (check set = {self.cfg.options.set!r})" if self.cfg.options.set and "badArgument" in str(e) else ""
            raise SourceError(f"{e}{hint}") from e
        paging.took(len(response.content), len(listing.papers) + len(listing.skipped))
        return listing


@options
class ArxivOaiOptions:
    set: str | None = option(None, help="an OAI set such as `cs` or `physics:hep-ex` (default: every record)")
    first_fetch: timedelta | None = first_fetch()
    arxiv_categories = True  # arXiv's records: `watcher check` holds categories to the known ones


KIND = Kind("arxiv-oai", ArxivOaiSource, ArxivOaiOptions, url=URL)
