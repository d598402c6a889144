"""``watcher state save|restore``: the database as one compressed file, so that a scheduled run
with no disk of its own (a CI job) keeps its history — the ledger of what was delivered —
from one run to the next.

``save`` copies the database through SQLite's backup API (a consistent snapshot even while
another process writes) and gzips it; ``restore`` checks such a file and puts it where the
config's database lives. Moving the file between runs (a git branch, a CI cache) is the
workflow's business.

**What the file holds.** Only what the next run needs: the papers, the ledger (what each
digest delivered through each channel, its issues and messages, the schedule's last runs)
and each source's state (ETags, the last day fetched), with the summarizer's TL;DRs. It never
holds the web inbox's password material (the salt and scrypt fingerprint of the password) nor
the errors runs stored (a server may have quoted a request in one); the ratings and the saved
list only when asked (``keep_ratings``): on a branch of a public repository, anyone can read
the file.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from .errors import InputError
from .store import busy_timeout, connect_readonly


NOT_KEPT = "(failed; the error itself is not kept in a saved state file)"
# what a saved file may unpack to: a database compresses a few times (about 4x), a file of
# zeros a thousand times; bounded by what it produces, never only by the bytes read
MAX_RATIO = 100
MIN_UNPACKED = 256 * 1024 * 1024


def strip(conn: sqlite3.Connection, keep_ratings: bool = False) -> None:
    """Leave in the copy ``conn`` only what a saved state holds (module docstring), then
    rebuild the file so nothing deleted survives in its free pages."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    steps = [("web_sessions", "UPDATE web_sessions SET salt = NULL, fingerprint = NULL", ()),
             ("runs", "UPDATE runs SET detail = NULL", ())]
    steps += [(t, f"UPDATE {t} SET last_error = ? WHERE last_error IS NOT NULL", (NOT_KEPT,))
              for t in ("sources", "channels", "digests")]
    if not keep_ratings:
        steps += [(t, f"DELETE FROM {t}", ()) for t in ("ratings", "saved")]
    for table, sql, args in steps:
        if table in tables:  # a database of an older schema may lack one
            conn.execute(sql, args)
    conn.commit()
    conn.execute("VACUUM")


def save(database: Path, out: Path, keep_ratings: bool = False) -> bool:
    """Write a gzip of a consistent copy of ``database`` to ``out`` (atomically), holding only
    what a state file holds (:func:`strip`). False, and nothing written, when there is no
    database yet (a run that failed before creating it)."""
    if not database.is_file():
        return False
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        copy = Path(tmp) / "copy.db"
        src = connect_readonly(database, busy_timeout())
        dst = sqlite3.connect(copy)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            dst.execute("PRAGMA secure_delete=ON")
            strip(dst, keep_ratings)
        finally:
            src.close()
            dst.close()
        packed = Path(tmp) / "out.gz"
        with open(copy, "rb") as f, gzip.GzipFile(packed, "wb", mtime=0) as z:
            shutil.copyfileobj(f, z)
        os.replace(packed, out)
    return True


def restore(packed: Path, database: Path, force: bool = False) -> bool:
    """Put the database saved in ``packed`` at ``database``. False when ``packed`` does not
    exist (no state yet: the first run starts afresh). An unreadable or damaged file is an
    InputError and leaves ``database`` alone; so does an existing database without ``force``."""
    if not packed.is_file():
        return False
    if database.exists() and not force:
        raise InputError(f"{database} already exists; pass --force to replace it")
    database.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=database.parent) as tmp:
        copy = Path(tmp) / "restored.db"
        try:
            limit = max(MIN_UNPACKED, MAX_RATIO * packed.stat().st_size)
            with gzip.open(packed, "rb") as z, open(copy, "wb") as f:
                size = 0
                while chunk := z.read(1 << 20):
                    size += len(chunk)
                    if size > limit:
                        raise InputError(f"{packed}: unpacks to more than {limit:,} bytes, far more "
                                         "than a saved database; not restored")
                    f.write(chunk)
            conn = sqlite3.connect(copy)
            try:
                ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
                conn.execute("SELECT count(*) FROM deliveries").fetchone()
            finally:
                conn.close()
        except (OSError, EOFError, sqlite3.Error) as e:
            raise InputError(f"{packed}: not a saved watcher database ({e})") from None
        if not ok:
            raise InputError(f"{packed}: the saved database is damaged (quick_check failed)")
        for suffix in ("-wal", "-shm"):  # a stale journal must not be replayed over the copy
            database.with_name(database.name + suffix).unlink(missing_ok=True)
        os.replace(copy, database)
    return True
