"""``watcher state save|restore``: the database as one compressed file, so that a scheduled run
with no disk of its own (a CI job) keeps its history — the ledger of what was delivered —
from one run to the next.

``save`` builds a new database of what a later run needs, read from the database in one
snapshot (consistent even while another process writes), and compresses it (:func:`pack`:
bzip2; a gzip file of an older save is read too); ``restore`` checks such a file and puts it
where the config's database lives. Moving the file between runs (a git branch, a CI cache) is the
workflow's business.

**What the file holds.** Only what the next run needs, by an allow-list
(:data:`watcher.store.files.STATE_TABLES`, table by table in docs/security-limits.md): the
ledger (what each digest delivered through each channel, its issues and messages with their
papers as sent, the schedule's last runs), each source's and channel's state (ETags, the last
day fetched, watermarks), the seen-set (the identity keys of every paper seen: a paper listed
again is not new), and only the papers a later run needs: those a message or delivery names and
those a digest can still deliver. Not the others (their keys are in the seen-set), the web
inbox's password material, the errors runs stored (a server may have quoted a request in one),
nor reasons that name a rating; the ratings, the saved list and the Zotero library only when
asked (``keep_ratings``: ``[watcher] state_ratings``, or ``--with-ratings``): on a branch of a
public repository, anyone can read the file. About 4.5 MB for a year of the shipped config
(docs/performance.md).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

from ..errors import InputError
from ..store import NotAWatcherDatabase, Store, build_state, complete_state, now_utc, saved_database_intact
from ..store.files import needs_migration

# what a saved file may unpack to: a database compresses a few times (about 4x), a file of
# zeros a thousand times; bounded by what it produces, never only by the bytes read
MAX_RATIO = 100
MIN_UNPACKED = 256 * 1024 * 1024

# How a state file is compressed, told by its first bytes: bzip2 is what ``save`` writes (the
# papers' text is most of the file: on distinct abstracts bzip2 level 9 makes 0.70 of gzip's
# bytes in 1 s for 11 MB, where xz needs 14 s for 0.69, and xz's fast presets make 0.92);
# gzip is what saves before it wrote, xz is read too. Every one through the same unpack bound.
OPENERS = ((b"BZh", bz2.open), (b"\x1f\x8b", gzip.open), (b"\xfd7zXZ\x00", lzma.open))


def pack(database: Path, out: Path) -> None:
    """Compress the database file at ``database`` into ``out`` (the one format ``save`` writes)."""
    with open(database, "rb") as f, bz2.open(out, "wb", compresslevel=9) as z:
        shutil.copyfileobj(f, z, 1 << 20)


def unpack(packed: Path, out: Path) -> None:
    """Decompress the state file ``packed`` into ``out``, whichever of :data:`OPENERS` made it,
    stopping at ``MAX_RATIO`` times its size (at least ``MIN_UNPACKED``): InputError when it
    unpacks to more or is no such file."""
    with open(packed, "rb") as f:
        head = f.read(6)
    opener = next((o for magic, o in OPENERS if head.startswith(magic)), None)
    if opener is None:
        raise InputError(f"{packed}: not a saved watcher database (neither bzip2, gzip nor xz)")
    limit = max(MIN_UNPACKED, MAX_RATIO * packed.stat().st_size)
    with opener(packed, "rb") as z, open(out, "wb") as f:
        size = 0
        while chunk := z.read(1 << 20):
            size += len(chunk)
            if size > limit:
                raise InputError(f"{packed}: unpacks to more than {limit:,} bytes, far more "
                                 "than a saved database; not restored")
            f.write(chunk)


def save(database: Path, out: Path, keep_ratings: bool = False,
         lookback: timedelta = timedelta(days=3)) -> tuple[int, int] | None:
    """Write to ``out`` (atomically) the compressed file (:func:`pack`) of a new database holding what a later run needs
    of ``database`` (:func:`watcher.store.build_state`: an allow-list; ``lookback``, the
    longest of the digests', keeps the papers a channel's first window can still deliver):
    how many ratings and saved papers it left out. None, and nothing written, when there is
    no database yet (a run that failed before creating it)."""
    if not database.is_file():
        return None
    if needs_migration(database):  # of the current schema: migrated, as the next run would
        Store.open(database).close()  # (else not opened to write: its quick_check reads the whole file)
    out.parent.mkdir(parents=True, exist_ok=True)
    pending_day = (now_utc().date() - lookback - timedelta(days=1)).isoformat()
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        built = Path(tmp) / "state.db"
        left_out = build_state(database, built, keep_ratings, pending_day)  # a damaged page read: StoreError
        packed = Path(tmp) / "out.packed"
        pack(built, packed)
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
            unpack(packed, copy)
            ok = saved_database_intact(copy)
            if ok:
                complete_state(copy)  # the derived data a state file leaves out
        except (OSError, EOFError, NotAWatcherDatabase, ValueError, lzma.LZMAError) as e:
            raise InputError(f"{packed}: not a saved watcher database ({e})") from e
        if not ok:
            raise InputError(f"{packed}: the saved database is damaged (quick_check failed)")
        for suffix in ("-wal", "-shm"):  # a stale journal must not be replayed over the copy
            database.with_name(database.name + suffix).unlink(missing_ok=True)
        os.replace(copy, database)
    return True
