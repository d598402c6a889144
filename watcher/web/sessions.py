"""Revocable sessions (docs/web.md "Security"): the database holds a generation number, every
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
from pathlib import Path

from .pages import writable

log = logging.getLogger("watcher")


def fingerprint(password: str, salt: bytes) -> bytes:
    """A slow, salted hash of ``password`` (scrypt): tells a new password without keeping it."""
    return hashlib.scrypt(password.encode(), salt=salt, n=2 ** 14, r=8, p=1, dklen=32)


def end_all(database: Path, timeout: float = 10.0) -> int:
    """Logout: a new generation; every session made before no longer counts. A database
    locked past ``timeout`` or unusable raises its StoreError."""
    with writable(database, timeout) as store:
        return store.end_sessions()


def password_check(database: Path, password: str, timeout: float = 10.0) -> bool:
    """At start: when ``password`` is not the one the sessions were made with, a new
    generation (and the new password's fingerprint). True when it changed."""
    def same(salt: bytes | None, seen: bytes | None) -> bool:
        return bool(salt and seen and hmac.compare_digest(fingerprint(password, salt), seen))

    def fresh() -> tuple[bytes, bytes]:
        salt = secrets.token_bytes(16)
        return salt, fingerprint(password, salt)

    with writable(database, timeout) as store:
        changed = store.session_password(same, fresh)
    if changed:
        log.warning("web: the password changed: every session made before has ended")
    return changed
