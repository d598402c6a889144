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
list only when asked (``keep_ratings``: ``[watcher] state_ratings``, or ``--with-ratings``): on
a branch of a public repository, anyone can read the file.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from ..errors import InputError
from ..store import copy_database, saved_database_intact, strip_for_state

# what a saved file may unpack to: a database compresses a few times (about 4x), a file of
# zeros a thousand times; bounded by what it produces, never only by the bytes read
MAX_RATIO = 100
MIN_UNPACKED = 256 * 1024 * 1024


def save(database: Path, out: Path, keep_ratings: bool = False) -> tuple[int, int] | None:
    """Write a gzip of a consistent copy of ``database`` to ``out`` (atomically), holding only
    what a state file holds (:func:`watcher.store.strip_for_state`): how many ratings and saved
    papers it left out. None, and nothing written, when there is no database yet (a run that
    failed before creating it)."""
    if not database.is_file():
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        copy = Path(tmp) / "copy.db"
        copy_database(database, copy)
        left_out = strip_for_state(copy, keep_ratings)
        packed = Path(tmp) / "out.gz"
        with open(copy, "rb") as f, gzip.GzipFile(packed, "wb", mtime=0) as z:
            shutil.copyfileobj(f, z)
        os.replace(packed, out)
    return left_out


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
            ok = saved_database_intact(copy)
        except (OSError, EOFError, sqlite3.Error) as e:
            raise InputError(f"{packed}: not a saved watcher database ({e})") from e
        if not ok:
            raise InputError(f"{packed}: the saved database is damaged (quick_check failed)")
        for suffix in ("-wal", "-shm"):  # a stale journal must not be replayed over the copy
            database.with_name(database.name + suffix).unlink(missing_ok=True)
        os.replace(copy, database)
    return True
