"""The web's session generation (docs/web.md; the rules are :mod:`watcher.web.sessions`')."""

from __future__ import annotations

from typing import Callable


class SessionStore:
    """The web_sessions row (m006)."""

    def session_generation(self) -> int:
        """The web sessions' current generation (0 before the first logout)."""
        row = self.db.execute("SELECT generation FROM web_sessions WHERE id = 1").fetchone()
        return row[0] if row else 0

    def end_sessions(self) -> int:
        """A new generation, in one transaction: every session made before no longer counts."""
        with self.writing():
            generation = self.session_generation() + 1
            self.db.execute("UPDATE web_sessions SET generation = ? WHERE id = 1", [generation])
            return generation

    def session_password(self, same: Callable[[bytes | None, bytes | None], bool],
                         fresh: Callable[[], tuple[bytes, bytes]]) -> bool:
        """In one transaction: unless ``same(salt, fingerprint)`` of the password recorded,
        record ``fresh()``'s ``(salt, fingerprint)`` and, when a password was recorded before,
        start a new generation. True when that ended the sessions."""
        with self.writing():
            generation = self.session_generation()
            salt, seen = self.db.execute("SELECT salt, fingerprint FROM web_sessions WHERE id = 1").fetchone()
            if same(salt, seen):
                return False
            changed = seen is not None  # the first password ever: no session to end
            self.db.execute("UPDATE web_sessions SET generation = ?, salt = ?, fingerprint = ? WHERE id = 1",
                            [generation + changed, *fresh()])
            return changed
