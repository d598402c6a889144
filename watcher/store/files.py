"""The database file as a whole: a consistent copy, what a saved state file keeps of it, its
integrity (:mod:`watcher.cli.statefile`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .connection import busy_timeout, connect_readonly


def copy_database(database: Path, copy: Path) -> None:
    """A consistent copy of ``database`` at ``copy`` through SQLite's backup API (a snapshot
    even while another process writes), as one self-contained file (no journal beside it)."""
    src = connect_readonly(database, busy_timeout())
    dst = sqlite3.connect(copy)
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")
    finally:
        src.close()
        dst.close()


STATE_ERROR_NOT_KEPT = "(failed; the error itself is not kept in a saved state file)"


def strip_for_state(path: Path, keep_ratings: bool = False) -> tuple[int, int]:
    """Leave in the database copy at ``path`` only what a saved state file holds (papers, the
    ledger, messages and the sources' state: :mod:`watcher.cli.statefile`): no web password
    material, no stored errors, and no ratings or saved list unless ``keep_ratings``; then
    rebuild the file so nothing deleted survives in its free pages. Returns how many ratings
    and saved papers were left out."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA secure_delete=ON")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        left_out = tuple(0 if keep_ratings or t not in tables else conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                         for t in ("ratings", "saved"))
        steps = [("web_sessions", "UPDATE web_sessions SET salt = NULL, fingerprint = NULL", ()),
                 ("runs", "UPDATE runs SET detail = NULL", ())]
        steps += [(t, f"UPDATE {t} SET last_error = ? WHERE last_error IS NOT NULL", (STATE_ERROR_NOT_KEPT,))
                  for t in ("sources", "channels", "digests")]
        if not keep_ratings:
            steps += [(t, f"DELETE FROM {t}", ()) for t in ("ratings", "saved")]
        for table, sql, args in steps:
            if table in tables:  # a database of an older schema may lack one
                conn.execute(sql, args)
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()
    return left_out


def saved_database_intact(path: Path) -> bool:
    """Whether the database file at ``path`` passes ``PRAGMA quick_check``; sqlite3.Error when
    it is no watcher database at all (no ``deliveries`` table)."""
    conn = sqlite3.connect(path)
    try:
        ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        conn.execute("SELECT count(*) FROM deliveries").fetchone()
    finally:
        conn.close()
    return ok
