"""Stored values as text and back: times (ISO 8601 UTC), and WHERE clauses of equal columns."""

from __future__ import annotations

from datetime import date, datetime
from typing import overload

from ..models import utc


def iso(dt: datetime | date | None) -> str | None:
    """A datetime as ISO 8601 UTC text (sortable), a date as YYYY-MM-DD."""
    if dt is None:
        return None
    if isinstance(dt, datetime):
        return utc(dt).isoformat(timespec="seconds")
    return dt.isoformat()


def stamp(dt: datetime) -> str:
    """A datetime as ISO 8601 UTC text with microseconds: for the times compared with each
    other (``first_seen``, ``revised_at``, watermarks), so that a paper stored in the same second
    as a delivery still counts as stored after it. Sorts correctly against :func:`iso` text."""
    return utc(dt).isoformat(timespec="microseconds")


@overload
def as_stored(dt: datetime, stamped: bool = False) -> str: ...
@overload
def as_stored(dt: datetime | None, stamped: bool = False) -> str | None: ...
def as_stored(dt: datetime | None, stamped: bool = False) -> str | None:
    """A record's time as text again, as the store keeps it (:func:`iso`'s seconds, or with
    ``stamped`` :func:`stamp`'s microseconds; with its UTC offset when the stored text had
    one): what a JSON twin or an export shows of it."""
    if dt is None:
        return None
    return dt.isoformat(timespec="microseconds" if stamped else "seconds")


def parse_time(text: str | datetime | None) -> datetime | None:
    """The inverse of :func:`iso` for datetimes (a datetime, as the store's records hold
    times, as it is)."""
    if isinstance(text, datetime):
        return text
    return datetime.fromisoformat(text) if text else None


def local(when: datetime, tz) -> str:
    """``when`` (naive: UTC) in ``tz``, as status shows every time: ``2025-04-12T23:59:00+02:00``."""
    return utc(when).astimezone(tz).isoformat(timespec="seconds")


def local_text(text: str | datetime | None, tz) -> str:
    """A stored UTC time (``2025-04-12T21:59:00``, or a record's datetime) in ``tz`` as
    :func:`local` shows it; "" for none."""
    return local(parse_time(text), tz) if text else ""


def _equal(**columns) -> tuple[str, list]:
    """A WHERE clause (and its arguments) asking each column for its value; None: any."""
    given = {c: v for c, v in columns.items() if v is not None}
    return " AND ".join([f"{c} = ?" for c in given] or ["1"]), list(given.values())
