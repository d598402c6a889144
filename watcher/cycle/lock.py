"""Locks beside the database, so one daemon and one writer at a time use it.

Two ``fcntl.flock`` locks on files next to the database (``watcher.db`` here):

- ``watcher.db.lock`` — held by ``watcher run`` for its whole life. A second ``watcher run``
  on the same database refuses to start, naming the process that holds it.
- ``watcher.db.write.lock`` — held during every cycle that writes (``run``'s cycles, ``once``,
  ``digest``, ``fetch``). A ``watcher once`` started while the daemon is delivering waits for
  it (saying so once on stderr) instead of interleaving with it.

The kernel drops a flock when its process dies, so a ``kill -9`` never leaves a stale lock. The
files stay behind on purpose (deleting a lock file races with its next user); their content is
only the holder's description, for messages.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from ..errors import LockBusy, StoreError
from ..util.folders import make_folder

log = logging.getLogger("watcher")


class FileLock:
    """An exclusive flock on ``path``, with a description of the holder written inside."""

    def __init__(self, path: Path, what: str):
        self.path = Path(path)
        self.what = what
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def holder(self) -> str:
        """Who holds the lock, as written by its holder ("" when unknown)."""
        try:
            return self.path.read_text(encoding="utf-8").strip()
        except OSError:
            return ""

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False when another process holds it."""
        if self._fd is not None:
            return True
        make_folder(self.path.parent, self.path)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise StoreError(f"{self.path}: cannot open the lock file ({e.strerror})") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        since = datetime.now(timezone.utc).isoformat(timespec="seconds")
        os.write(fd, f"pid {os.getpid()} ({self.what}, since {since})\n".encode())
        self._fd = fd
        return True

    def acquire(self, timeout: float, stop: Callable[[], bool] | None = None,
                poll: float = 0.1) -> None:
        """Take the lock, waiting up to ``timeout`` seconds (logging once that it waits).
        Raises LockBusy on timeout, or when ``stop()`` turns true while waiting."""
        if self.try_acquire():
            return
        deadline = time.monotonic() + timeout
        log.warning("waiting for %s to finish (%s)", self.holder() or "another watcher", self.path)
        while not self.try_acquire():
            if time.monotonic() >= deadline or (stop and stop()):
                raise LockBusy(f"{self.path}: still held by {self.holder() or 'another watcher'}; "
                               f"gave up after {timeout:.0f}s")
            time.sleep(poll)

    def release(self) -> None:
        """Let go of the lock (closing the file releases the flock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "FileLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def daemon_lock(database: Path) -> FileLock:
    """The lock ``watcher run`` holds for its life."""
    return FileLock(Path(str(database) + ".lock"), "watcher run")


def write_lock(database: Path, what: str = "a watcher cycle") -> FileLock:
    """The lock held while a cycle writes the database."""
    return FileLock(Path(str(database) + ".write.lock"), what)


def daemon_holder(database: Path) -> str | None:
    """The description of the running daemon of ``database``, or None when none runs."""
    lock = daemon_lock(database)
    if not lock.path.exists():
        return None
    try:
        fd = os.open(lock.path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return lock.holder() or "a watcher run"
    finally:
        os.close(fd)
    return None
