"""What every network source shares: getting the HTTP client, parsing a response into a
listing with any parse failure turned into a SourceError that says what to check, and reading
timestamps kept in a source's saved state."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING

from ..errors import InputError, SourceError
from ..formats import Listing
from ..models import parse_iso

if TYPE_CHECKING:
    from ..util.http import HttpClient


def http_client(source) -> HttpClient:
    """The HTTP client a source uses (the context's, else the process-wide shared one).
    httpx loads here, at a source's first request: reading a config, which reads every
    source kind's options, stays light (``watcher status``)."""
    from ..util.http import client_for

    return client_for(source.ctx)


def parse_listing(source, reader, data: bytes, origin: str, *, today: date | None = None) -> Listing:
    """``reader.parse(data)``; its InputError becomes a SourceError naming the source."""
    try:
        return reader.parse(data, origin, today)
    except InputError as e:
        raise parse_failure(source, e) from e


def parse_failure(source, error: InputError) -> SourceError:
    """The SourceError for a response that could not be parsed."""
    return SourceError(f"{error} (source {source.name!r}: check its url; if this persists the "
                       "service may have changed its format)")


def conditional_get(source, url: str, state: dict):
    """GET ``url`` with the ETag / Last-Modified saved in ``state``; returns the response
    (``not_modified`` on 304) and the validators to save next."""
    response = http_client(source).get(url, etag=state.get("etag"),
                                       last_modified=state.get("last_modified"),
                                       timeout=source.cfg.timeout)
    validators = {k: v for k, v in (("etag", response.etag),
                                    ("last_modified", response.last_modified)) if v}
    return response, validators


def name_papers(source, papers) -> None:
    """Stamp each paper with the source's config name (``source`` and ``sources``)."""
    for paper in papers:
        paper.source = source.name
        paper.sources = [source.name]


def state_time(state: dict, key: str) -> datetime | None:
    """An aware UTC datetime saved as ISO 8601 under ``key``, else None."""
    return parse_iso(state.get(key))


def state_day(state: dict, key: str) -> date | None:
    """A date saved as ``YYYY-MM-DD`` under ``key``, else None."""
    value = state.get(key)
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def first_day(source, state: dict, reach_back: timedelta) -> date:
    """The first day a day-by-day source asks for: the backfill's start (``watcher fetch
    --since``), else the last day fetched (``state["last_day"]``) less ``reach_back``, else the
    very first run's ``now - first_fetch``."""
    today = source.ctx.now.date()
    last = state_day(state, "last_day")
    if source.ctx.since is not None:
        return source.ctx.since.date()
    if last is not None:
        return min(last, today) - reach_back
    return (source.ctx.now - source.cfg.first_fetch).date()


def iso(dt: datetime) -> str:
    """``dt`` as ISO 8601 UTC with a Z."""
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
