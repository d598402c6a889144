"""Revocable sessions (SPEC §7 Security): the database holds a generation number, every
session cookie carries the number it was made under, and a session counts only while the two
agree. Logging out adds one (every session made before ends, in every browser), and so does
starting with a new password (the database keeps a salted scrypt fingerprint of the last one),
so a stolen or replayed cookie stops working at the latest at the next logout.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import sqlite3
from pathlib import Path

from .pages import writable

log = logging.getLogger("watcher")


def fingerprint(password: str, salt: bytes) -> bytes:
    """A slow, salted hash of ``password`` (scrypt): tells a new password without keeping it."""
    return hashlib.scrypt(password.encode(), salt=salt, n=2 ** 14, r=8, p=1, dklen=32)


def generation(db: sqlite3.Connection) -> int:
    """The current generation (0 before the first logout)."""
    row = db.execute("SELECT generation FROM web_sessions WHERE id = 1").fetchone()
    return row[0] if row else 0


def _write(database: Path, timeout: float, change) -> int:
    """Run ``change(conn, generation) -> generation`` in one write transaction (the store's
    :meth:`~watcher.store.Store.writing`, as every write); the new number. A database locked
    past ``timeout`` or unusable raises its StoreError."""
    with writable(database, timeout) as store, store.writing():
        return change(store.db.conn, generation(store.db.conn))


def end_all(database: Path, timeout: float = 10.0) -> int:
    """Logout: a new generation; every session made before no longer counts."""
    def bump(conn, gen):
        conn.execute("UPDATE web_sessions SET generation = ? WHERE id = 1", [gen + 1])
        return gen + 1

    return _write(database, timeout, bump)


def password_check(database: Path, password: str, timeout: float = 10.0) -> bool:
    """At start: when ``password`` is not the one the sessions were made with, a new
    generation (and the new password's fingerprint). True when it changed."""
    changed = False

    def check(conn, gen):
        nonlocal changed
        salt, seen = conn.execute("SELECT salt, fingerprint FROM web_sessions WHERE id = 1").fetchone()
        if salt and seen and hmac.compare_digest(fingerprint(password, salt), seen):
            return gen
        changed = seen is not None  # the first password ever: no session to end
        salt = secrets.token_bytes(16)
        conn.execute("UPDATE web_sessions SET generation = ?, salt = ?, fingerprint = ? WHERE id = 1",
                     [gen + changed, salt, fingerprint(password, salt)])
        return gen + changed

    _write(database, timeout, check)
    if changed:
        log.warning("web: the password changed: every session made before has ended")
    return changed
