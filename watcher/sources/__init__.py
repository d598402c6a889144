"""Sources: one module per kind of listing, each turning a SourceConfig into fetched papers.

Fetching is separate from parsing: a source asks :mod:`watcher.util.http` for bytes and hands them to
a parser in :mod:`watcher.formats`. Each module declares its kind (a :class:`~watcher.kinds.Kind`:
its ``type``, keys, validation, what ``check`` notes); ``KINDS`` lists them, one line per kind,
in the order error messages name them, and :mod:`watcher.config` reads it.
"""

from __future__ import annotations

from ..kinds import Registry, SourceConfig
from .base import FetchResult, Source, SourceContext

# type -> the module declaring it (its KIND), imported when the kind is first asked for
KINDS = Registry(__name__, {
    "arxiv": "arxiv",
    "arxiv-rss": "arxiv_rss",
    "arxiv-oai": "arxiv_oai",
    "hf-daily": "hf_daily",
    "listing": "listing",
    "biorxiv": "biorxiv",
    "pubmed": "pubmed",
    "feed": "feed",
    "openalex": "openalex",
    "crossref": "crossref",
})


def __getattr__(name: str):
    """``NO_BACKFILL``: the source types that cannot reach back to a given day (``watcher
    fetch --since``), and why; read from every kind when first asked for."""
    if name != "NO_BACKFILL":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return {name: kind.no_backfill for name, kind in KINDS.items() if kind.no_backfill}


# Not a type a config file may name: ``--sample`` puts it in place of the configured sources.
_BUILT_IN: dict[str, str] = {"sample": "watcher.sources.sample:SampleSource"}


def source_config(name: str, type: str, *, url: str | None = None, timeout: float = 30.0, **keys):
    """A :class:`~watcher.kinds.SourceConfig` from its keys, as a table would give them
    (``source_config(name="pm", type="pubmed", term="CRISPR")``): the kind's keys make its
    options (unchecked: :func:`watcher.config.load_config` checks a file's)."""
    declared = KINDS[type].options if type in KINDS else None
    options = declared(**keys) if declared is not None else None
    return SourceConfig(name=name, type=type, url=url, timeout=timeout, options=options)


def make_source(cfg, ctx: SourceContext) -> Source:
    """The Source object for one ``[source.NAME]`` config table."""
    if cfg.type in KINDS:
        return KINDS[cfg.type].cls(cfg, ctx)
    import importlib

    module, _, cls = _BUILT_IN[cfg.type].partition(":")
    return getattr(importlib.import_module(module), cls)(cfg, ctx)


__all__ = ["FetchResult", "KINDS", "NO_BACKFILL", "Source", "SourceContext", "make_source", "source_config"]
