"""The SQLite store (sqlite-utils): papers, source state, runs and the delivery ledger. Every
SQL statement of watcher is here, one module per domain:

- ``migrations``: the schema, m001 to m019 (sqlite-utils migrations, applied in order when the
  database is opened);
- ``papers``: papers, the identity rules' lookups and re-keying, short keys, papers as sent;
- ``search``: the full-text index's queries;
- ``ledger``: deliveries, issues, messages and their papers;
- ``ratings``: ratings and the reading list;
- ``runs``: runs and the state of sources, channels and digests;
- ``tldr``: the summarizer's cache and budget;
- ``zotero``: Zotero's sync and saves;
- ``sessions``: the web's session generation;
- ``selections``: what each profile selects of each filing day, as the cycle recorded it;
- ``seen``: what was seen after its paper row is gone, pruning, the index upkeep;
- ``connection``, ``serving``, ``files``, ``rows``: connections and their errors, the web's
  connections, the database file (the state file, integrity), stored values as text;
- ``records``: what the store answers with beside Papers (typed records, values parsed).

:class:`Store` is composed of each domain's methods; ``interface`` lists them as a Protocol, the
seam a second store would implement. Every public method raises StoreError, never an sqlite3
error (:func:`~watcher.store.connection.translated`). This module re-exports every name that
the rest of watcher imports from ``watcher.store``.

Every write that belongs together happens in one transaction; the ledger row for a delivery is
written only after the channel accepted it.
"""

from __future__ import annotations

import inspect
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import sqlite_utils

from ..errors import StoreError
from ..util.folders import make_folder
from ..models import now_utc
from .connection import (Interrupted, _check_intact, as_database, busy_timeout, connect_readonly, database_error, error_kind,
                         no_database, require_database, translated)
from .files import STATE_ERROR_NOT_KEPT, NotAWatcherDatabase, build_state, complete_state, saved_database_intact
from .ledger import LedgerStore
from .migrations import (m001_initial, m002_web_search, m003_ratings, m004_tldr_cache, m005_change_counters,
                         m006_web_sessions, m007_works, m008_messages, m009_search_text, m010_deliveries_by_paper,
                         m011_short_keys, m012_papers_as_sent, m013_field_origins, m014_zotero, m015_citations,
                         m016_seen, m017_paper_counts, m018_waits, m019_selections, migrations)
from .papers import (SHORT_LOOKUP, SINCE_FIELDS, PaperStore, UpsertCounts, _filed_paper, _paper_row, _short,
                     changed_since, paper_snapshot, rekey_references, row_to_paper)
from .ratings import DELIVERED_UNDER, RatingStore
from .rows import _equal, as_stored, iso, local, local_text, parse_time, stamp
from .runs import RunStore
from .search import SearchStore
from .selections import DaySelection, RecordedChange, SelectionStore
from .seen import SeenStore
from .sessions import SessionStore
from .tldr import TldrStore
from .zotero import ZoteroStore

__all__ = [
    "DELIVERED_UNDER", "DaySelection", "RecordedChange", "Interrupted", "as_stored", "NotAWatcherDatabase", "SHORT_LOOKUP", "SINCE_FIELDS", "STATE_ERROR_NOT_KEPT", "Store", "UpsertCounts", "build_state", "complete_state",
    "busy_timeout", "changed_since", "connect_readonly", "database_error", "error_kind",
    "iso", "local", "local_text", "m001_initial", "m002_web_search", "m003_ratings", "m004_tldr_cache",
    "m005_change_counters", "m006_web_sessions", "m007_works", "m008_messages", "m009_search_text",
    "m010_deliveries_by_paper", "m011_short_keys", "m012_papers_as_sent", "m013_field_origins", "m014_zotero",
    "m015_citations", "m016_seen", "m017_paper_counts", "m018_waits", "m019_selections", "migrations", "no_database", "now_utc",
    "paper_snapshot", "parse_time", "rekey_references",
    "require_database", "row_to_paper", "saved_database_intact", "stamp",
    # private, for the tests and benchmarks that build old schemas
    "_check_intact", "_equal", "_filed_paper", "_paper_row", "_short",
]


CHECKED_SUFFIX = ".checked"  # beside the database: the file as the last writer that checked it left it


def _file_state(path: Path) -> str:
    """What changes when anything writes the database or its write-ahead log: each file's
    device, inode, size and modification time ("-" for a missing one)."""
    parts = []
    for name in (path, Path(f"{path}-wal")):
        try:
            st = name.stat()
            parts.append(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return " ".join(parts)


def _left_as_checked(path: Path) -> bool:
    """Whether the database is as the last writer that checked it (``PRAGMA quick_check``,
    before its first write) left it: nothing wrote it since, so checking every page again (a
    second per gigabyte, most of a run at 300,000 papers) would find what that check found.
    Anything else that wrote it (the web's ratings, another program, a copy, a damage that
    changed the file) makes the next writer check again."""
    try:
        return Path(f"{path}{CHECKED_SUFFIX}").read_text() == _file_state(path)
    except OSError:
        return False


class Store(PaperStore, SearchStore, LedgerStore, RatingStore, RunStore, TldrStore, ZoteroStore, SessionStore,
            SeenStore, SelectionStore):
    """A watcher database. Open with :meth:`open`; use as a context manager to close it."""

    serial = 0  # which connection this is, for a reader that keeps one (:mod:`watcher.store.serving`)
    _translating: int | None = None  # the thread inside a method of the boundary (:func:`~watcher.store.connection.translated`)

    def __init__(self, db: sqlite_utils.Database, path: Path | None):
        self.db = db
        self.path = path

    @classmethod
    def open(cls, path: str | Path | None, *, readonly: bool = False) -> "Store":
        """Open (creating and migrating) the database at ``path``; None means in memory.
        ``readonly``: open an existing database as it is, through a read-only connection
        (SQLite's ``mode=ro``: nothing is created, migrated or written; a write raises)."""
        try:
            if path is None:
                db = as_database()
            elif readonly:
                path = Path(path)
                if not path.exists():
                    raise no_database(path)
                db = as_database(connect_readonly(path, busy_timeout()))
            else:
                path = Path(path)
                existed = path.exists() and path.stat().st_size > 0
                make_folder(path.parent, path)
                conn = sqlite3.connect(str(path), timeout=busy_timeout(), isolation_level=None)
                db = as_database(conn)
                try:
                    if existed and not _left_as_checked(path):  # refuse a damaged file before writing to it
                        _check_intact(conn)
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=NORMAL")
                    migrations.apply(db)
                except BaseException:
                    conn.close()
                    raise
            if path is None and not readonly:
                migrations.apply(db)
        except sqlite3.Error as e:
            raise database_error(path, e, opening=True) from e
        except OSError as e:
            raise StoreError(f"{path}: cannot create the database ({e.strerror})") from e
        store = cls(db, path)
        store._checked = path is not None and not readonly  # checked (or made) here: close() says so
        return store

    @classmethod
    def open_current(cls, path: str | Path) -> "Store":
        """The database at ``path`` for reading: through a read-only connection when its schema
        is current (nothing checked, migrated or written: the check of every page before a
        write, a second per gigabyte, is the writers'; a reader changes nothing), else as
        :meth:`open` opens it, migrating it first. ``watcher status`` reads through here."""
        store = cls.open(path, readonly=True)
        try:
            pending = migrations.pending(store.db)
        except sqlite3.Error as e:
            store.close()
            raise database_error(store.path, e, opening=True) from e
        if not pending:
            return store
        store.close()
        return cls.open(path)

    _checked = False

    def close(self) -> None:
        """Close the connection; a writer that :meth:`open` checked notes the file as it left
        it (:func:`_left_as_checked`)."""
        self.db.close()
        if self._checked:
            try:
                Path(f"{self.path}{CHECKED_SUFFIX}").write_text(_file_state(self.path))
            except OSError:  # only a saving: the next writer checks every page again
                pass

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def writing(self) -> Iterator["Store"]:
        """One write transaction, started ``BEGIN IMMEDIATE``: the write lock is taken before
        the first read, so the connection's busy timeout really waits for another writer (a
        deferred ``BEGIN`` that reads, then writes after another connection committed, gets
        SQLITE_BUSY_SNAPSHOT at once, whatever the timeout). Commits at the end, rolls back on
        any error. Nested inside another transaction it is a savepoint of that one. Every
        write of watcher goes through here (papers, sources, the ledger, runs, ratings, the
        TL;DR cache). SQLite errors become :func:`database_error`'s, with the wait measured."""
        conn = self.db.conn
        if conn.in_transaction:
            with self.db.atomic():  # a SAVEPOINT inside the transaction already open
                yield self
            return
        started = time.monotonic()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise database_error(self.path, e, waited=time.monotonic() - started) from e
        try:
            yield self
            conn.execute("COMMIT")
        except BaseException as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(e, sqlite3.Error):
                raise database_error(self.path, e, waited=time.monotonic() - started) from e
            raise

    def _rows_in(self, sql: str, keys) -> list[tuple]:
        """The rows of ``sql`` whose ``IN ({})`` takes ``keys``, asked in chunks of 500 (within
        SQLite's limit on parameters)."""
        keys = list(keys)
        rows = []
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            rows += self.db.execute(sql.format(",".join("?" * len(chunk))), chunk).fetchall()
        return rows

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version`` of this connection: it changes when any other
        connection commits."""
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def readable(self) -> None:
        """Read one row of ``papers``: a StoreError when the database cannot answer."""
        self.db.execute("SELECT 1 FROM papers LIMIT 1").fetchall()


# The store's boundary: every public method raises StoreError, never an sqlite3 error (opening,
# closing and Store.writing translate their own).
for _name, _method in inspect.getmembers(Store, inspect.isfunction):
    if not _name.startswith("_") and _name not in ("close", "writing"):
        setattr(Store, _name, translated(_method))
del _name, _method
