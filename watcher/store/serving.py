"""The store of a long-running server (the web inbox): each worker thread's read-only
connection, kept between requests (opening one and reading the schema costs more than most
pages), and a writable connection opened for one write. Every SQLite error comes out as the
store's StoreError (:func:`~watcher.store.connection.database_error`), a statement stopped by
the caller's ``stop`` as :class:`~watcher.store.connection.Interrupted`."""

from __future__ import annotations

import itertools
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..errors import StoreError
from .connection import Interrupted, as_database, connect_readonly, database_error, no_database

_local = threading.local()
_serials = itertools.count(1)


def _connection(path: Path, timeout: float) -> tuple[sqlite3.Connection, int]:
    """This thread's read-only connection to ``path`` and its number; a new one (a new number)
    when the file was replaced."""
    ident = path.stat()
    key = (str(path), ident.st_dev, ident.st_ino)
    cached = getattr(_local, "conn", None)
    if cached and cached[0] == key:
        return cached[1], cached[2]
    _drop()
    conn = connect_readonly(path, timeout)
    _local.conn = (key, conn, next(_serials))
    return conn, _local.conn[2]


def _drop() -> None:
    """Close this thread's kept connection (a broken one is not kept for the next request)."""
    cached = getattr(_local, "conn", None)
    _local.conn = None
    if cached:
        try:
            cached[1].close()
        except sqlite3.Error:
            pass


@contextmanager
def thread_reader(database: Path, timeout: float, stop: Callable[[], bool], every: int) -> Iterator:
    """This thread's read-only Store of ``database`` for one use (a request), its connection
    kept for the next (its ``serial`` changes when a new one is opened), waiting up to
    ``timeout`` seconds for another's lock. ``stop()`` is asked every ``every`` SQLite steps of
    a statement: True stops it (:class:`Interrupted`). A missing, locked or unreadable
    database raises StoreError; a connection that failed is dropped, one interrupted kept."""
    from . import Store

    try:
        conn, serial = _connection(Path(database).resolve(), timeout)
    except FileNotFoundError:
        raise no_database(database) from None
    except OSError as e:
        raise StoreError(f"{database}: cannot read the database ({e.strerror})") from e
    except sqlite3.Error as e:
        _drop()
        raise database_error(database, e) from e
    conn.set_progress_handler(stop, every)
    store = Store(as_database(conn), database)
    store.serial = serial
    broken = False
    try:
        yield store
    except sqlite3.Error as e:  # a statement of the caller's own, outside the store's methods
        error = database_error(database, e)
        broken = not isinstance(error, Interrupted)
        raise error from e
    except StoreError as e:
        broken = isinstance(e.__cause__, sqlite3.Error) and not isinstance(e, Interrupted)
        raise
    finally:
        try:
            if conn.in_transaction:
                conn.rollback()
        except sqlite3.Error:
            broken = True
        if broken:
            _drop()


@contextmanager
def writer(database: Path, timeout: float) -> Iterator:
    """A writable Store of ``database`` (of the current schema: nothing is migrated), waiting up
    to ``timeout`` seconds for another's lock, closed at the end; an SQLite error, opening or
    using it, raises its StoreError."""
    from . import Store

    try:
        conn = sqlite3.connect(str(database), timeout=timeout, isolation_level=None)
    except sqlite3.Error as e:
        raise database_error(database, e) from e
    try:
        yield Store(as_database(conn), database)
    except sqlite3.Error as e:
        raise database_error(database, e) from e
    finally:
        conn.close()
