"""The ``feed`` source: any journal's (or preprint server's) RSS 1.0/2.0 or Atom table of
contents, fetched conditionally (ETag / Last-Modified through the shared HTTP client) and read
by :mod:`watcher.formats.journal_feed`. Each item's DOI makes it the same work as its preprint
or its PubMed record (docs/design.md)."""

from __future__ import annotations

from datetime import date, timedelta

from ..formats import journal_feed
from ..kinds import Kind, first_fetch, options
from .base import FetchResult, Source
from .common import conditional_get, name_papers, parse_listing


class FeedSource(Source):
    """One table of contents; a feed unchanged since the last run is not read again."""

    def fetch(self, state: dict) -> FetchResult:
        """Fetch and parse the feed; its items are filed under their own dates."""
        response, validators = conditional_get(self, self.cfg.url, state)
        if response.not_modified:
            return FetchResult(papers=[], state=state, not_modified=True)
        listing = parse_listing(self, journal_feed, response.content, response.url,
                                today=self.ctx.now.date())
        for paper in listing.papers:
            paper.announced = paper.announced or listing.date or self.ctx.now.date()
        papers = [p for p in listing.papers if p.announced >= self._first_day(state)]
        name_papers(self, papers)
        return FetchResult(papers=papers, state=dict(validators, fetched=True))

    def _first_day(self, state: dict) -> date:
        """The oldest item date taken: a backfill's start (``watcher fetch --since``); on the
        very first fetch ``now - first_fetch`` when it is set; else every item (a feed holds
        only its latest items, and after the first fetch the store tells new from seen)."""
        if self.ctx.since is not None:
            return self.ctx.since.date()
        if not state.get("fetched") and self.cfg.first_fetch is not None:
            return (self.ctx.now - self.cfg.first_fetch).date()
        return date.min


def _validate(r, where: str, v: dict) -> None:
    if not v.get("url"):
        raise r.fail(f"{where}.url", "a feed source needs the url of the journal's RSS or Atom feed")
    if not v["url"].startswith("file://"):  # file:// works, as for any source
        r.http_url(f"{where}.url", v["url"], "https://www.nature.com/nature.rss")


@options
class FeedOptions:
    first_fetch: timedelta | None = first_fetch(None, help="the first fetch takes only items dated within "
                                                           "it (default: every item the feed holds)")


KIND = Kind("feed", FeedSource, FeedOptions, _validate,
            no_backfill="a table of contents holds only the latest issue")
