"""What the store answers with, beside Papers: typed records, their fields parsed (times as
datetimes, JSON as lists and dicts, counts as ints), so that no caller reads a column name or
decodes a stored value. Each is built from a row here, in the store, by its ``from_row``; a
second store (another database) builds the same records from its own rows
(:mod:`watcher.store.interface`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import cast

from .rows import as_stored, parse_time


def _json(text, default):
    """A stored JSON value (``default`` for none)."""
    return json.loads(text) if text else default


def _day(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


# --- runs: the state of sources, channels and digests ----------------------------------------

@dataclass(frozen=True)
class SourceRecord:
    """What the store knows of one source: its last fetch and its failures, and how many
    papers it stored first."""

    name: str
    last_attempt: datetime | None = None
    last_success: datetime | None = None
    last_error: str | None = None
    last_error_at: datetime | None = None
    failures: int = 0
    last_counts: dict[str, int] | None = None  # new, updated, unchanged of the last good fetch
    papers: int = 0

    @classmethod
    def from_row(cls, row: dict, papers: int = 0) -> "SourceRecord":
        return cls(name=row["name"], last_attempt=parse_time(row.get("last_attempt")),
                   last_success=parse_time(row.get("last_success")), last_error=row.get("last_error"),
                   last_error_at=parse_time(row.get("last_error_at")), failures=row.get("failures") or 0,
                   last_counts=_json(row.get("last_counts"), None), papers=papers)


@dataclass(frozen=True)
class ChannelRecord:
    """The state of one (digest, channel): its watermark (every paper stored before it was
    delivered or passed over), the first run's window kept for its retries, its last attempt,
    delivery and error. All None before its first run."""

    digest: str
    channel: str
    watermark: datetime | None = None
    first_window: date | None = None
    last_attempt: datetime | None = None
    last_success: datetime | None = None
    last_error: str | None = None
    last_error_at: datetime | None = None
    last_count: int | None = None

    @classmethod
    def from_row(cls, row: dict) -> "ChannelRecord":
        return cls(digest=row["digest"], channel=row["channel"], watermark=parse_time(row.get("watermark")),
                   first_window=_day(row.get("first_window")), last_attempt=parse_time(row.get("last_attempt")),
                   last_success=parse_time(row.get("last_success")), last_error=row.get("last_error"),
                   last_error_at=parse_time(row.get("last_error_at")), last_count=row.get("last_count"))

    @property
    def failed_since_success(self) -> bool:
        """Whether its last error came at or after its last delivery (or with none yet)."""
        if not self.last_error:
            return False
        if self.last_success is None:
            return True
        return self.last_error_at is not None and self.last_error_at >= self.last_success


@dataclass(frozen=True)
class DigestRecord:
    """A digest's last run: when, how it ended (``ok``, ``degraded``, ``failed``; None before
    the first), its error (or what a degraded run lacked), and its last success."""

    name: str
    last_run: datetime | None = None
    last_success: datetime | None = None
    last_status: str | None = None
    last_error: str | None = None

    @classmethod
    def from_row(cls, row: dict) -> "DigestRecord":
        return cls(name=row["name"], last_run=parse_time(row.get("last_run")),
                   last_success=parse_time(row.get("last_success")), last_status=row.get("last_status"),
                   last_error=row.get("last_error"))


@dataclass(frozen=True)
class ChannelRun:
    """What one channel of a digest did in a run, as the run recorded it."""

    digest: str
    channel: str
    papers: int = 0
    sent: bool = False
    error: str | None = None
    empty: str | None = None  # why nothing was sent
    profiles: dict[str, int] = field(default_factory=dict)  # profile -> papers it brought

    @classmethod
    def from_detail(cls, d: dict) -> "ChannelRun":
        profiles = d.get("profiles") or {}
        return cls(digest=d.get("digest") or "", channel=d.get("channel") or "", papers=d.get("papers") or 0,
                   sent=bool(d.get("sent")), error=d.get("error"), empty=d.get("empty"),
                   profiles=dict(profiles) if isinstance(profiles, dict) else {})


@dataclass(frozen=True)
class UpkeepRecord:
    """The store's last upkeep: when (None: never), what it pruned then and in all, when it
    last rebuilt the file."""

    last_run: datetime | None = None
    pruned: int = 0
    total_pruned: int = 0
    vacuumed: datetime | None = None

    @classmethod
    def from_row(cls, row: dict | None) -> "UpkeepRecord":
        if not row:
            return cls()
        return cls(last_run=parse_time(row.get("last_run")), pruned=row.get("pruned") or 0,
                   total_pruned=row.get("total_pruned") or 0, vacuumed=parse_time(row.get("vacuumed")))


@dataclass(frozen=True)
class ZoteroPlace:
    """The last reads of one Zotero place: its library version and item count as the last good
    read left them, and the failures since."""

    place: str
    version: int | None = None
    items: int | None = None
    last_success: datetime | None = None
    last_error: str | None = None
    last_error_at: datetime | None = None
    failures: int = 0

    @classmethod
    def from_row(cls, row: dict) -> "ZoteroPlace":
        return cls(place=row["place"], version=row.get("version"), items=row.get("items"),
                   last_success=parse_time(row.get("last_success")), last_error=row.get("last_error"),
                   last_error_at=parse_time(row.get("last_error_at")), failures=row.get("failures") or 0)


# --- ratings --------------------------------------------------------------------------------

@dataclass(frozen=True)
class RatingRow:
    """One rating (docs/ratings.md): the profile, the paper's key (with its arXiv id and title
    when the paper is still stored, else None), ``up`` or ``down``, when it was made and from
    where (``cli``, ``link``, ``web``)."""

    profile: str
    paper: str
    arxiv_id: str | None
    title: str | None
    value: str
    rated_at: datetime
    source: str

    @classmethod
    def from_row(cls, row: dict) -> "RatingRow":
        return cls(profile=row["profile"], paper=row["paper"], arxiv_id=row.get("arxiv_id"), title=row.get("title"),
                   value=row["value"], rated_at=cast(datetime, parse_time(row["rated_at"])),  # NOT NULL (m003)
                   source=row["source"])

    @property
    def rated_text(self) -> str:
        """When it was made as the store keeps it (:func:`~watcher.store.as_stored`): what an
        export shows, and the learner's order (its fingerprint too, recorded with each check)."""
        return as_stored(self.rated_at)

    def to_json(self) -> dict:
        """As ``watcher ratings --to json`` and the profile page's JSON twin show it."""
        return {"profile": self.profile, "paper": self.paper, "arxiv_id": self.arxiv_id, "title": self.title,
                "value": self.value, "rated_at": self.rated_text, "source": self.source}


# --- a paper's record: when it was stored, where it went ---------------------------------------

@dataclass(frozen=True)
class PaperTimes:
    """When a paper was first stored and last changed, when a newer version (or its journal
    version) came, and the source that stored it first."""

    first_seen: datetime | None
    last_changed: datetime | None
    revised_at: datetime | None
    source: str | None

    @classmethod
    def from_row(cls, row: dict) -> "PaperTimes":
        return cls(first_seen=parse_time(row.get("first_seen")), last_changed=parse_time(row.get("last_changed")),
                   revised_at=parse_time(row.get("revised_at")), source=row.get("source"))


@dataclass(frozen=True)
class PaperDelivery:
    """One (digest, channel) a paper was delivered through: the version and when, and the
    message that showed it when known (its issue's date, YYYY-MM-DD as the issue's address
    names it, and its number that day)."""

    digest: str
    channel: str
    version: int | None
    delivered_at: datetime | None
    day: str | None
    number: int | None

    @classmethod
    def from_row(cls, row: dict) -> "PaperDelivery":
        return cls(digest=row["digest"], channel=row["channel"], version=row.get("version"),
                   delivered_at=parse_time(row.get("delivered_at")), day=row.get("day"), number=row.get("number"))


@dataclass(frozen=True)
class PaperMessage:
    """One delivered message that showed a paper, with what it recorded of it then."""

    digest: str
    day: str  # the issue's date, YYYY-MM-DD
    channel: str
    number: int
    sent_at: datetime | None
    kind: str  # new or updated
    version: int | None
    profile: str | None
    score: float | None
    reasons: list[str] = field(default_factory=list)

    @classmethod
    def from_row(cls, row: dict) -> "PaperMessage":
        return cls(digest=row["digest"], day=row["day"], channel=row["channel"], number=row["number"],
                   sent_at=parse_time(row.get("sent_at")), kind=row["kind"], version=row.get("version"),
                   profile=row.get("profile"), score=row.get("score"), reasons=_json(row.get("reasons"), []))


# --- the ledger: delivered issues and their messages -------------------------------------------

@dataclass(frozen=True)
class MessageRecord:
    """One delivered message of an issue, as the ledger recorded it: where it went, its number
    that day through that channel, when, in how many parts, and how many new papers it showed.
    Read as part of one issue (:meth:`~watcher.store.Store.issue`), it holds its papers too:
    ``matches`` and ``updated`` (Matches with the recorded score, profile, reasons and TL;DR,
    each paper as the message sent it) and ``titles_only`` (the keys a size limit listed as
    titles)."""

    digest: str
    day: str  # the issue's date, YYYY-MM-DD, as its address names it
    channel: str
    number: int
    sent_at: datetime | None
    parts: int | None = None
    papers: int = 0
    title: str | None = None
    empty_reason: str | None = None
    matches: list = field(default_factory=list)
    updated: list = field(default_factory=list)
    titles_only: list[str] = field(default_factory=list)

    @classmethod
    def from_row(cls, row: dict, **more) -> "MessageRecord":
        return cls(digest=row["digest"], day=row["day"], channel=row["channel"], number=row["number"],
                   sent_at=parse_time(row.get("sent_at")), parts=row.get("parts"),
                   papers=more.pop("papers", row.get("papers") or 0), title=row.get("title"),
                   empty_reason=row.get("empty_reason"), **more)


@dataclass(frozen=True)
class IssueRecord:
    """One delivered issue (a digest on a date): its title, when it was first and last
    delivered, why it was empty (None: it was not), and its messages in the order sent."""

    digest: str
    day: str  # YYYY-MM-DD, as its address names it
    title: str | None
    first_delivered: datetime | None
    last_delivered: datetime | None
    empty_reason: str | None = None
    messages: list[MessageRecord] = field(default_factory=list)

    @classmethod
    def from_row(cls, row: dict, messages: list[MessageRecord]) -> "IssueRecord":
        return cls(digest=row["digest"], day=row["day"], title=row.get("title"),
                   first_delivered=parse_time(row.get("first_delivered")),
                   last_delivered=parse_time(row.get("last_delivered")), empty_reason=row.get("empty_reason"),
                   messages=messages)
