"""Sources: one module per kind of listing, each turning a SourceConfig into fetched papers.

Fetching is separate from parsing: a source asks :mod:`watcher.http` for bytes and hands them to
a parser in :mod:`watcher.formats`. ``SOURCES`` maps the config's ``type`` to the class.
"""

from __future__ import annotations

from .base import FetchResult, Source, SourceContext

SOURCES: dict[str, str] = {
    "arxiv": "watcher.sources.arxiv:ArxivSource",
    "arxiv-rss": "watcher.sources.arxiv_rss:ArxivRssSource",
    "arxiv-oai": "watcher.sources.arxiv_oai:ArxivOaiSource",
    "hf-daily": "watcher.sources.hf_daily:HfDailySource",
    "listing": "watcher.sources.listing:ListingSource",
    "biorxiv": "watcher.sources.biorxiv:BiorxivSource",
    "pubmed": "watcher.sources.pubmed:PubmedSource",
    "feed": "watcher.sources.feed:FeedSource",
    "openalex": "watcher.sources.openalex:OpenalexSource",
}

# Source types that cannot reach back to a given day (``watcher fetch --since``), and why.
NO_BACKFILL: dict[str, str] = {
    "arxiv-rss": "the feed holds only the latest announcement",
    "listing": "a listing is read whole, as it is",
    "feed": "a table of contents holds only the latest issue",
}


# Not a type a config file may name: ``--sample`` puts it in place of the configured sources.
_BUILT_IN: dict[str, str] = {"sample": "watcher.sources.sample:SampleSource"}


def make_source(cfg, ctx: SourceContext) -> Source:
    """The Source object for one ``[source.NAME]`` config table."""
    import importlib

    module, _, cls = (SOURCES.get(cfg.type) or _BUILT_IN[cfg.type]).partition(":")
    return getattr(importlib.import_module(module), cls)(cfg, ctx)


__all__ = ["FetchResult", "NO_BACKFILL", "Source", "SourceContext", "SOURCES", "make_source"]
