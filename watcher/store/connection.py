"""Connections and their errors: the busy timeout, what an SQLite error means in words, a
read-only connection, the integrity check before a write."""

from __future__ import annotations

import functools
import inspect
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path

from ..errors import DatabaseLocked, DatabaseUnavailable, Interrupted, StoreError


def _check_intact(conn: sqlite3.Connection) -> None:
    """``PRAGMA quick_check`` (milliseconds for a few MB, about 0.1 s for 200 MB): a damaged
    page raises before the first write could touch the file."""
    result = conn.execute("PRAGMA quick_check(1)").fetchone()
    if not result or result[0] != "ok":
        error = sqlite3.DatabaseError(f"database disk image is malformed ({result[0] if result else 'no answer'})")
        error.sqlite_errorname = "SQLITE_CORRUPT"
        raise error


def busy_timeout() -> float:
    """Seconds a connection waits for another writer's lock before giving up (30; the tests
    shorten it with ``$WATCHER_DB_TIMEOUT``)."""
    try:
        return max(0.0, float(os.environ.get("WATCHER_DB_TIMEOUT", "30")))
    except ValueError:
        return 30.0


def error_kind(error: BaseException) -> str:
    """What an SQLite error means, from its extended result code name (``sqlite_errorname``,
    Python 3.11+), never from its message text: ``locked`` (SQLITE_BUSY*, SQLITE_LOCKED*),
    ``readonly``, ``damaged`` (SQLITE_CORRUPT*, SQLITE_NOTADB), ``cantopen`` (SQLITE_CANTOPEN*,
    SQLITE_IOERR*), ``full``, else ``other`` (a constraint, a misuse: one step's problem)."""
    name = getattr(error, "sqlite_errorname", None) or ""
    for prefix, kind in (("SQLITE_BUSY", "locked"), ("SQLITE_LOCKED", "locked"),
                         ("SQLITE_READONLY", "readonly"), ("SQLITE_CORRUPT", "damaged"),
                         ("SQLITE_NOTADB", "damaged"), ("SQLITE_CANTOPEN", "cantopen"),
                         ("SQLITE_IOERR", "cantopen"), ("SQLITE_FULL", "full")):
        if name.startswith(prefix):
            return kind
    return "other"


def translated(method):
    """``method`` of the store raising :func:`database_error`'s StoreError (naming the store's
    file) for an SQLite error, so that no caller of the store sees an sqlite3 error: the store's
    boundary. A generator's each step is translated; a call from within another translated
    method is left to that one (a write's error keeps the wait :meth:`Store.writing` measured)."""
    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def steps(self, *args, **kwargs):
            try:
                yield from method(self, *args, **kwargs)
            except sqlite3.Error as e:
                raise database_error(self.path, e) from e
        return steps

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        me = threading.get_ident()
        if self._translating == me:  # within another method of the boundary, in this thread
            return method(self, *args, **kwargs)
        outer, self._translating = self._translating, me
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise database_error(self.path, e) from e
        finally:
            self._translating = outer
    return call


def database_error(path, error: sqlite3.Error, *, opening: bool = False,
                   waited: float | None = None) -> StoreError:
    """A StoreError that says in words what an SQLite error means for the user; a
    :class:`DatabaseUnavailable` when the database as a whole cannot be used (a
    :class:`DatabaseLocked` when another program held the write lock for longer than the
    wait). ``waited``: the seconds this write actually waited for the lock (measured by
    :meth:`Store.writing`); a message claims no wait it did not measure."""
    text = " ".join(str(error).replace("***", "").split())
    if (getattr(error, "sqlite_errorname", None) or "") == "SQLITE_INTERRUPT":
        return Interrupted(f"{path}: database error ({text})")
    kind = error_kind(error)
    if kind == "locked":
        how = "" if waited is None else f" (waited {waited:.0f}s)" if waited >= 1 else f" (waited {waited:.1f}s)"
        return DatabaseLocked(f"{path}: the database is locked by another program{how}; try again "
                              "once it has finished")
    if kind == "readonly":
        return DatabaseUnavailable(f"{path}: the database is read-only for this user; check the "
                                   "permissions of the file and of its folder")
    if kind == "damaged" and opening:
        return DatabaseUnavailable(f"{path}: the file is damaged or not a watcher database ({text}); "
                                   "nothing was changed — restore it from a backup, or move it away to "
                                   "start afresh")
    if kind == "damaged":
        return DatabaseUnavailable(f"{path}: the database file is damaged ({text}); watcher stopped "
                                   "there — restore it from a backup, or move it away to start afresh")
    if kind == "cantopen":
        return DatabaseUnavailable(f"{path}: cannot open the database ({text}); check that the file and "
                                   "its folder exist and are readable and writable")
    if kind == "full":
        return DatabaseUnavailable(f"{path}: the disk is full ({text})")
    if opening:
        return DatabaseUnavailable(f"{path}: cannot open the database ({text}); it may not be a watcher "
                                   "database — nothing was changed")
    return StoreError(f"{path}: database error ({text})")  # one step's problem, not the file's


SAMPLE_SUFFIX = "-sample"  # the sample database's name: the configured one's stem + this


def no_database(path: str | Path) -> StoreError:
    """The error of a command that reads the database when there is none yet (exit 1), naming
    the command that writes it (the sample database's: ``watcher once --sample``)."""
    if Path(path).stem.endswith(SAMPLE_SUFFIX):
        return StoreError(f"{path}: no sample database yet (run 'watcher once --sample' first)")
    return StoreError(f"{path}: no database yet (run 'watcher fetch' or 'watcher once' first)")


def connect_readonly(path: Path, timeout: float) -> sqlite3.Connection:
    """A read-only connection to the database at ``path`` (SQLite's ``mode=ro``: it creates
    nothing and any write raises), waiting up to ``timeout`` seconds for another's lock."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=timeout,
                           isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return conn


def as_database(conn: sqlite3.Connection | None = None):
    """sqlite-utils' Database over ``conn`` (None: a new one in memory), without sqlite-utils'
    plugins: watcher's connections are watcher's (a plugin installed for another tool does not
    prepare them), and opening one does not read every installed package's entry points to find
    plugins (docs/performance.md, "watcher status")."""
    import sqlite_utils

    if conn is None:
        return sqlite_utils.Database(memory=True, execute_plugins=False)
    return sqlite_utils.Database(conn, execute_plugins=False)


def require_database(path: str | Path) -> None:
    """For the commands that only read: refuse, instead of creating an empty database."""
    if not Path(path).exists():
        raise no_database(path)


@contextmanager
def papers_triggers_aside(conn: sqlite3.Connection, schema: str = "main"):
    """The triggers of ``schema``'s ``papers`` dropped for the block and made again after it
    (not when it raised: its transaction is rolled back): a bulk rewrite of papers that
    re-indexing each row would slow down, or whose index is built once at the end."""
    triggers = [tuple(t) for t in conn.execute(f"SELECT name, sql FROM {schema}.sqlite_master "
                                               "WHERE type = 'trigger' AND tbl_name = 'papers'")]
    for name, _ in triggers:
        conn.execute(f'DROP TRIGGER {schema}."{name}"')
    yield
    for _, sql in triggers:
        conn.execute(sql)
