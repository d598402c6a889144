"""The store's interface: every method the rest of watcher calls on a store, by concern, typed
with the records of :mod:`watcher.store.records` (and the Papers of :mod:`watcher.models`).

:class:`~watcher.store.Store` (SQLite, through sqlite-utils) is the one implementation; this
Protocol is the seam a second one would implement (PostgreSQL, say, for a service that
outgrows one machine): nothing outside ``watcher/store/`` reads a column name, a stored text
or an SQLite error. What each method promises is said here in one line and in full in the
SQLite store's docstrings; ``tests/unit/test_store_interface.py`` checks that :class:`Store` has
exactly these methods, with these signatures.

The contract beyond the signatures:

- every error is a :class:`~watcher.errors.StoreError` (a
  :class:`~watcher.errors.DatabaseUnavailable` when the database as a whole cannot be used,
  a :class:`~watcher.errors.DatabaseLocked` when another writer held it past the wait), never
  a driver's own;
- every write that belongs together is one transaction (:meth:`StoreInterface.writing`, which
  waits for another writer's lock rather than failing at once); the ledger rows of a delivery
  are written only after the channel accepted it;
- a search's candidates (:class:`~watcher.store.search.Candidates`) are read a chunk at a
  time while the caller checks them: ``fetch(n)`` gives ``(paper, its stored search words)``
  pairs, ``count()`` counts all, ``close()`` ends the reading;
- times come out as datetimes (UTC), dates as dates, stored JSON as lists and dicts; an
  issue's date is its ``YYYY-MM-DD`` text, as its address names it. (A few writes still take
  a time as the ISO text :func:`~watcher.store.iso` makes: ratings, Zotero's, the
  summarizer's day.)
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import Callable, Iterator, Protocol

from ..models import Digest, Paper, Sent
from .papers import UpsertCounts
from .records import (ChannelRecord, ChannelRun, DigestRecord, IssueRecord, PaperDelivery, PaperMessage, PaperTimes,
                      RatingRow, SourceRecord, UpkeepRecord, ZoteroPlace)
from .search import Candidates
from .selections import DaySelection, RecordedChange


class StoreInterface(Protocol):
    """What a store of watcher answers and records (see the module's docstring)."""

    path: Path | None  # the database it opened (None: in memory), as its errors name it
    serial: int  # which connection this is, for a reader that keeps one (0: not such a reader)

    # --- lifetime: opening, closing, transactions -----------------------------------------

    @classmethod
    def open(cls, path: str | Path | None, *, readonly: bool = False) -> "StoreInterface":
        """Open (creating and migrating) the database at ``path``; ``readonly``: as it is, nothing written."""

    @classmethod
    def open_current(cls, path: str | Path) -> "StoreInterface":
        """The database for reading: read-only when its schema is current, else opened and migrated."""

    def close(self) -> None:
        """Close it (a writer that checked the file notes it as it left it)."""

    @contextmanager
    def writing(self) -> "Iterator[StoreInterface]":
        """One write transaction that waits for another writer's lock; nested, a savepoint of the outer
        one."""

    # --- papers: storing listings by the identity rules, reading papers back --------------

    def upsert(self, papers: list[Paper], now: datetime, *, backfill: bool = False) -> UpsertCounts:
        """Store a batch of listings by the identity rules, in one transaction: what it did."""

    def get(self, key: str) -> Paper | None:
        """The stored paper with this key."""

    def get_short(self, key: str) -> Paper | None:
        """The stored paper a link names by its short key (or by its key)."""

    def find(self, text: str) -> Paper | None:
        """A stored paper by arXiv id, key, DOI, PMID or whole title."""

    def count_papers(self) -> int:
        """How many papers are stored."""

    def candidates(self, digest: str, channel: str, *, since_day: date | None,
                   stored_after: datetime | None) -> list[Paper]:
        """Papers listed as new not yet delivered through (digest, channel), within the window given."""

    def count_older(self, digest: str, channel: str, before_day: date) -> int:
        """How many papers not yet delivered through (digest, channel) were filed before ``before_day``."""

    def delivered_since(self, digest: str, channel: str, since_day: date) -> list[Paper]:
        """Papers filed since ``since_day`` already delivered through (digest, channel)."""

    def revised(self, digest: str, channel: str, *, after: datetime | None) -> list[Paper]:
        """Papers delivered through (digest, channel) whose newer or journal version came after ``after``."""

    def recent_days(self, days: int) -> tuple[date, date]:
        """The ``days`` days up to the newest stored paper's day."""

    def papers_between(self, start: date, end: date) -> list[Paper]:
        """The papers filed from ``start`` to ``end``."""

    def change_serials(self) -> dict[str, int]:
        """The change counters: table name -> writes so far."""

    def paper_times(self, key: str) -> PaperTimes:
        """When paper ``key`` was first stored, last changed and revised, and its source."""

    def day_signatures(self, start: date, end: date) -> dict[date, tuple]:
        """Each filing day from ``start`` to ``end`` holding papers, with what changes when they do."""

    def day_papers(self, day: date, chunk: int) -> Iterator[list[Paper]]:
        """The papers filed on ``day``, ``chunk`` at a time."""

    def window_papers(self, start: date, end: date, chunk: int,
                      narrow: str | None = None) -> Iterator[list[tuple[Paper, dict, date, int]]]:
        """The papers filed from ``start`` to ``end`` in storage order, with their stored words, day and
        position."""

    # --- search: the full-text index ------------------------------------------------------

    def suggest(self, text: str, limit: int = 3) -> list[Paper]:
        """Stored papers whose title holds every word of ``text``, best first."""

    def search_candidates(self, expr: str | None, *, day_from: date | None, day_to: date | None,
                          category: str | None, order: str, ranked: int,
                          page: tuple[int, int] | None) -> Candidates:
        """A search's candidates, newest stored first (or by relevance), read a chunk at a time."""

    def similar_candidates(self, expr: str, key: str) -> list[tuple[Paper, dict]]:
        """Up to 200 papers (not ``key``) sharing words of the FTS5 expression ``expr``, with their words."""

    # --- ledger: deliveries, issues and their messages ------------------------------------

    def record_delivery(self, digest: str, channel: str, papers: list[Paper], now: datetime,
                        issue: Digest | None = None, sent: Sent | None = None) -> None:
        """After a channel accepted: the ledger rows, the message, the watermark moved, in one transaction."""

    def record_shown(self, digest: str, channel: str, papers: list[Paper], now: datetime,
                     issue: Digest | None = None, sent: Sent | None = None) -> None:
        """The ledger rows (and message) of what a channel showed before it failed; the watermark stays."""

    def next_message(self, digest: str, day: date, channel: str) -> int:
        """The number the next message of (digest, date, channel) gets."""

    def record_message(self, issue: Digest, channel: str, now: datetime, sent: Sent | None = None) -> int:
        """Keep what one delivered message showed; its id."""

    def issues(self, digest: str | None = None, *, day: str | None = None, limit: int | None = None,
               offset: int = 0) -> list[IssueRecord]:
        """Delivered issues, newest first, each with its messages (without their papers)."""

    def latest_issues(self) -> list[IssueRecord]:
        """The newest delivered issue of each digest, as :meth:`issues`."""

    def issue_profile_counts(self, digest: str, day: str) -> dict[str, int]:
        """How many papers each profile brought to the issue of ``digest`` on ``day``."""

    def issue_days(self, digest: str) -> list[str]:
        """The dates ``digest`` was delivered on, newest first."""

    def last_issue_days(self, digests) -> dict[str, str]:
        """The date of each named digest's newest issue, in one query (absent: never delivered)."""

    def issue(self, digest: str, day: str, channel: str | None = None,
              number: int | None = None) -> IssueRecord | None:
        """One delivered issue with its messages and their papers as sent; None when there is none."""

    def delivered_per_day(self, profile: str, start: date, end: date) -> dict[date, set[str]]:
        """The papers delivered as new under ``profile`` on each issue date from ``start`` to ``end``."""

    def paper_deliveries(self, key: str) -> list[PaperDelivery]:
        """Where a paper went: one record per (digest, channel)."""

    def paper_messages(self, key: str) -> list[PaperMessage]:
        """The delivered messages that showed paper ``key``, oldest first."""

    # --- ratings and the reading list -----------------------------------------------------

    def rated_papers(self, profile: str) -> tuple[list[Paper], list[Paper]]:
        """The papers rated up and down for ``profile``, oldest rating first."""

    def rated_sent_with(self, profile: str, reason: str) -> set[str]:
        """The papers rated for ``profile`` that a message recorded under it with ``reason``."""

    def record_rating(self, action: str, profile: str | None, key: str, when: str, source: str) -> bool:
        """Apply one rating action to paper ``key`` in one transaction: whether anything changed."""

    def rating_rows(self, profile: str | None = None) -> list[RatingRow]:
        """Every rating (of ``profile``, or all), oldest first."""

    def delivered_under(self, keys: list[str]) -> list[tuple]:
        """``(paper, digest, channel, profile)`` of each delivery of the papers ``keys``."""

    def marks_of(self, keys: list[str]) -> tuple[dict[tuple[str, str], str], set[str]]:
        """The ratings and reading-list state of the papers ``keys``."""

    def saved_papers(self) -> list[tuple[Paper, datetime]]:
        """The reading list, oldest first: ``(paper, saved_at)``."""

    def rating_counts(self) -> dict[str, int]:
        """How many ratings each profile has."""

    # --- runs: the state of sources, channels and digests ---------------------------------

    def all_sources_failed(self, names) -> bool:
        """Whether each of the sources ``names`` (at least one) failed its last attempt."""

    def source_state(self, name: str) -> dict:
        """The saved state of a source (ETag, cursors, ...)."""

    def source_ok(self, name: str, state: dict, counts: dict, now: datetime) -> None:
        """Record a successful fetch: new state, counts, failures reset."""

    def source_failed(self, name: str, error: str, now: datetime) -> None:
        """Record a failed fetch; the state stays."""

    def sources(self) -> list[SourceRecord]:
        """Every source fetched, with its last fetch, failures and papers."""

    def channel_state(self, digest: str, channel: str) -> ChannelRecord:
        """The state of (digest, channel); every field None before its first run."""

    def channel_states(self, digests) -> dict[tuple[str, str], ChannelRecord]:
        """The state of every channel of the named digests that ran, by (digest, channel), in one query."""

    def delivery_failed(self, digest: str, channel: str, error: str, now: datetime,
                        first_window: date | None = None) -> None:
        """Record a failed delivery; nothing enters the ledger, the watermark stays."""

    def digest_ran(self, name: str, now: datetime, ok: bool, error: str | None = None,
                   degraded: str | None = None) -> None:
        """Record a digest run (ok, degraded or failed)."""

    def digest_state(self, name: str) -> DigestRecord:
        """The digest's last run; every field None before the first."""

    def digest_states(self, names) -> dict[str, DigestRecord]:
        """The last run of each named digest, in one query."""

    def last_runs(self, names) -> dict[str, datetime | None]:
        """When each named digest last ran, whatever the outcome."""

    def last_successes(self, names) -> dict[str, datetime | None]:
        """When each named digest last ran successfully."""

    def last_run_channels(self, digests, limit: int = 50) -> dict[str, list[ChannelRun]]:
        """For each named digest, what each of its channels did in the newest run that delivered it."""

    def start_run(self, kind: str, now: datetime) -> int:
        """A new run; its id."""

    def finish_run(self, run_id: int, status: str, detail: dict, now: datetime) -> None:
        """Close a run with its status and detail."""

    # --- tldr: the summarizer's cache and budget, and the waits endpoints asked for -------

    def tldr_cached(self, keys: list[str]) -> dict[str, str | None]:
        """The remembered model TL;DRs of these papers (None: asked, nothing usable)."""

    def tldrs_recorded(self, keys: list[str]) -> dict[str, str]:
        """The TL;DR recorded for each of these papers (the model's, else a message's)."""

    def tldr_remember(self, rows: list[tuple[str, str | None]], model: str, now: datetime | None) -> None:
        """Keep (paper key, TL;DR or None) pairs."""

    def tldr_calls(self, day: str) -> int:
        """Calls made to the summarizer's endpoint on ``day``."""

    def tldr_count_calls(self, day: str, calls: int) -> None:
        """Add ``calls`` to ``day``'s count."""

    def wait_until(self, what: str) -> datetime | None:
        """The time before which ``what`` is not to be asked; None when none or past."""

    def wait_set(self, what: str, seconds: float, reason: str) -> None:
        """Record that ``what`` is not to be asked for ``seconds`` from now."""

    # --- zotero: the sync of examples and the saves ---------------------------------------

    def zotero_place_version(self, place: str) -> int | None:
        """The library version ``place`` was last read at."""

    def replace_zotero_items(self, place: str, current: set[str] | None,
                             changed: list[tuple[str, int | None, dict | None]], version: int | None,
                             when: str, note: str | None = None) -> int:
        """Record one good read of ``place`` in one transaction: the number of items kept."""

    def zotero_sync_failed(self, place: str, error: str, when: str) -> None:
        """Record a failed read of ``place``; its items and version stay."""

    def zotero_examples(self, place: str) -> list[Paper]:
        """The papers the items of ``place`` describe, as the last sync left them."""

    def zotero_read_state(self, place: str) -> tuple | None:
        """``(version, items)`` of the last read of ``place``."""

    def zotero_saved(self) -> set[tuple[str, str]] | None:
        """Every ``(collection, paper key)`` a save was added to Zotero for."""

    def zotero_save_token(self, target: str, paper: str, fresh: str, when: str) -> str:
        """The write token of a save (an earlier try's, else ``fresh``), committed; counts an attempt."""

    def queue_zotero_save(self, target: str, paper: str, fresh: str, when: str) -> None:
        """Queue a save with the token ``fresh`` unless recorded already."""

    def zotero_save_failed(self, target: str, paper: str, error: str, *, drop_token: bool) -> None:
        """Keep the save queued with its error."""

    def mark_zotero_saved(self, target: str, paper: str, item: str, when: str) -> None:
        """Record the save done."""

    def zotero_places(self) -> dict[str, ZoteroPlace] | None:
        """Every place read, by its key."""

    def zotero_save_counts(self) -> tuple[int, int, str | None]:
        """``(added, queued, an error of the queued)`` of the saves to Zotero."""

    # --- sessions: the web's session generation -------------------------------------------

    def session_generation(self) -> int:
        """The web sessions' current generation."""

    def end_sessions(self) -> int:
        """A new generation, in one transaction: every earlier session ends."""

    def session_password(self, same: Callable[[bytes | None, bytes | None], bool],
                         fresh: Callable[[], tuple[bytes, bytes]]) -> bool:
        """In one transaction: record a changed password, ending the sessions when one was recorded before."""

    # --- seen: what was seen after its paper row is gone, pruning -------------------------

    def seen_count(self) -> int:
        """How many identity keys the seen-set holds."""

    def is_seen(self, ident: str) -> bool:
        """Whether ``ident`` is in the seen-set."""

    def oldest_watermark(self) -> datetime | None:
        """The oldest watermark of any (digest, channel)."""

    def prunable(self, cutoff: datetime, before_day: date, keep_keys: frozenset[str] = frozenset(),
                 limit: int = 500) -> list[str]:
        """Up to ``limit`` keys of papers stored before ``cutoff``, filed before ``before_day``, that
        nothing names."""

    def zotero_example_keys(self) -> frozenset[str]:
        """The keys of the papers Zotero examples describe (never pruned)."""

    def forget(self, keys: list[str]) -> int:
        """Prune the papers ``keys`` in one transaction, their keys kept seen: how many."""

    # --- selections: what each profile selected of each filing day, as a cycle recorded it --

    def selections(self, profile: str, start: date, end: date) -> dict[date, DaySelection]:
        """The recorded selections of ``profile`` for the filing days ``start`` to ``end``."""

    def record_selections(self, profile: str, days: list[tuple[date, str, tuple, list[str], list[RecordedChange]]],
                          now: datetime, before: date | None = None) -> None:
        """Record ``(day, decided_by, signature, selected keys, changes)`` for each of ``days``."""

    def recorded_owners(self, keys: list[str]) -> dict[str, dict[str, bool]]:
        """For each paper whose filing day a profile's record holds: profile -> selected there."""

    def forget_selections(self, profiles: list[str]) -> None:
        """Drop the rows of every profile not named in ``profiles``."""

    def rating_check(self, profile: str) -> tuple[str, list[str], dict] | None:
        """``(decided_by, sentences, estimates)`` of the recorded self-check of ``profile``'s ratings."""

    def record_rating_check(self, profile: str, decided_by: str, checked: list[str], estimates: dict) -> None:
        """Record what the self-check of ``profile``'s ratings found and decided."""

    def changed_papers(self, day: date, after_row: int, since: str, chunk: int
                       ) -> Iterator[list[tuple[Paper, dict, date, int]]]:
        """The papers of ``day`` stored after row ``after_row`` or changed after ``since``."""

    def filed_on(self, day: date, keys: list[str]) -> set[str]:
        """Those of ``keys`` still stored as papers filed on ``day``."""

    # --- upkeep: the file's upkeep and state ----------------------------------------------

    def upkeep_state(self) -> UpkeepRecord:
        """The last upkeep."""

    def upkeep_done(self, when: datetime, pruned: int, vacuumed: bool) -> None:
        """Record one upkeep."""

    def page_counts(self) -> tuple[int, int]:
        """(pages, free pages) of the database file."""

    def optimize_indexes(self, full_text: bool) -> None:
        """Let the store optimise its indexes (and the full-text index after pruning)."""

    def vacuum(self) -> None:
        """Rebuild the file without its free pages."""

    def data_version(self) -> int:
        """A number that changes whenever another connection commits."""

    def readable(self) -> None:
        """Read one paper row: a StoreError when the database cannot answer."""

