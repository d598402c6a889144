"""The interface every source implements, and what it returns.

A source is given its config, a :class:`SourceContext` (the HTTP client, the clock, whether this
is a sample run) and its saved ``state`` (a JSON-able dict the store keeps per source: ETag,
Last-Modified, the newest date seen, ...). It returns a :class:`FetchResult`; the pipeline stores
the papers and saves ``result.state``. Errors are raised as :class:`watcher.errors.SourceError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..models import Paper
from ..util.progress import ProgressFactory, start


@dataclass
class SourceContext:
    """What a source may use: ``now`` (aware UTC), the shared HTTP client, the user agent, and
    ``progress``, which a source that fetches many pages asks for a :class:`~watcher.util.progress.
    Progress` (a bar on a terminal, else a log line at most every 30 s)."""

    now: datetime
    http: Any = None
    user_agent: str = "watcher"
    since: datetime | None = None  # an explicit backfill start (watcher fetch --since)
    progress: ProgressFactory = start


@dataclass
class FetchResult:
    """Papers fetched in one go, and the state to save for next time."""

    papers: list[Paper] = field(default_factory=list)
    state: dict = field(default_factory=dict)
    not_modified: bool = False


class Source:
    """Base class: subclasses implement :meth:`fetch`."""

    def __init__(self, cfg, ctx: SourceContext):
        self.cfg = cfg
        self.ctx = ctx

    @property
    def name(self) -> str:
        """The source's name in the config."""
        return self.cfg.name

    def fetch(self, state: dict) -> FetchResult:
        """Fetch what is new since ``state``; raise SourceError on failure."""
        raise NotImplementedError
