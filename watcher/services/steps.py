"""One isolated step of a cycle (a source, a digest, a channel, Zotero): whether its error
stops the whole cycle, and the one line recorded for ``watcher status`` when it does not. Shared
by :mod:`watcher.cycle.pipeline` and :mod:`watcher.zotero.sync` (the isolation rule is written down in
:mod:`watcher.cycle.pipeline`'s docstring).
"""

from __future__ import annotations

import logging

from ..errors import MAX_ERROR, DatabaseUnavailable, WatcherError
from ..util.text import shorten

log = logging.getLogger("watcher")


def stops_the_cycle(error: BaseException) -> bool:
    """True when ``error`` means the database cannot be used at all (nothing later could be
    recorded), or that the reader of stdout is gone (``watcher ... | head``: nothing later
    could be printed); any other error fails only the source, digest or channel it came from."""
    if isinstance(error, BrokenPipeError):  # channels turn their sockets' errors into DeliveryError
        return True
    return isinstance(error, DatabaseUnavailable)  # the store's errors say it (never sqlite3's)


def failure(what: str, error: Exception, clean=lambda text: text) -> str:
    """Log the failure of one isolated step (``what``: "source arxiv") and return the one line
    to store for ``watcher status``. watcher's own errors are explained in their message; any
    other exception is a bug, logged with its traceback."""
    if isinstance(error, WatcherError):
        message = shorten(clean(str(error)), MAX_ERROR)
        log.error("%s failed: %s", what, message)
    else:
        message = shorten(clean(f"internal error: {type(error).__name__}: {error}"), MAX_ERROR)
        log.error("%s failed: %s", what, message, exc_info=error)
    return message
