"""The ``arxiv-rss`` source: the daily rss.arxiv.org feed of the configured categories.

One GET of ``https://rss.arxiv.org/rss/CAT+CAT...`` (or the ``url`` override) per run, made
conditional with the ETag / Last-Modified saved from the previous run (304 = nothing new).
Every item keeps its ``announce_type``: ``new`` and ``cross`` are new papers, ``replace`` and
``replace-cross`` are new versions (a replacement of a paper never seen before is stored but not
presented as new; the store and digest read ``announce_type``). ``announced`` is the feed's day.
An empty feed (weekends and holidays) is normal and gives no papers.
"""

from __future__ import annotations

from ..formats import arxiv_rss
from ..kinds import Kind, option, options
from .base import FetchResult, Source
from .common import conditional_get, name_papers, parse_listing

RSS_URL = "https://rss.arxiv.org/rss/"


class ArxivRssSource(Source):
    """The arXiv RSS feed of ``categories`` (joined with ``+``)."""

    @property
    def url(self) -> str:
        """The feed URL: the ``url`` override, else rss.arxiv.org for the categories."""
        return self.cfg.url or RSS_URL + "+".join(self.cfg.options.categories)

    def fetch(self, state: dict) -> FetchResult:
        """Fetch the feed unless it is unchanged since the saved validators."""
        response, validators = conditional_get(self, self.url, state)
        if response.not_modified:
            return FetchResult(papers=[], state=state, not_modified=True)
        listing = parse_listing(self, arxiv_rss, response.content, response.url)
        name_papers(self, listing.papers)
        new_state = dict(validators)
        day = listing.date or max((p.announced for p in listing.papers if p.announced), default=None)
        if day:
            new_state["feed_day"] = day.isoformat()
        return FetchResult(papers=listing.papers, state=new_state)


def _validate(r, where: str, v: dict) -> None:
    if not v["categories"]:
        raise r.fail(f"{where}.categories", "needs at least one category")
    r.timeout(f"{where}.timeout", v["timeout"])  # said before a category, as it always was
    for category in v["categories"]:
        r.category(f"{where}.categories", category, archive_wildcard=False)


@options
class ArxivRssOptions:
    categories: tuple[str, ...] = option(help="arXiv categories or archives such as `cs.LG`, `hep-ex`, "
                                              "`astro-ph.CO`, `cs`")
    arxiv_categories = True  # its categories are arXiv's: `watcher check` holds them to the known ones


KIND = Kind("arxiv-rss", ArxivRssSource, ArxivRssOptions, _validate,
            no_backfill="the feed holds only the latest announcement")
