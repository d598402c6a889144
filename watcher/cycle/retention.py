"""Retention and the store's upkeep, as pure decisions (no I/O): which papers may be pruned
(``[watcher] keep``, docs/configuration.md), when upkeep is due, when rebuilding the file is
worth it. :mod:`watcher.cycle.upkeep` reads the store, asks these and does what they say.

A paper may be pruned when it was first stored and filed more than ``keep`` ago, nothing names
it (a delivery, a message, an issue, a rating, the saved list, a Zotero save: the SQL of
:meth:`watcher.store.Store.prunable`), it is no Zotero example, and it was stored before the
oldest watermark of any channel (a channel that failed for longer may still deliver it). Its
identity keys stay in the seen-set (:mod:`watcher.store.seen`).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

UPKEEP_EVERY = timedelta(hours=20)  # about once a day, whatever the schedule's drift
VACUUM_FREE_SHARE = 0.25  # the file is rebuilt when a quarter of its pages are free ...
VACUUM_FREE_PAGES = 2_000  # ... and that is at least this many pages (8 MB of 4 kB pages)


def upkeep_due(last_run: datetime | None, now: datetime, every: timedelta = UPKEEP_EVERY) -> bool:
    """Whether the upkeep is due: never ran, or ran ``every`` ago or more (or in the future: a
    clock set back)."""
    return last_run is None or not (now - every < last_run <= now)


def prune_cutoff(now: datetime, keep: timedelta, oldest_watermark: datetime | None) -> tuple[datetime, date]:
    """(stored before, filed before): papers first stored before the first (``keep`` ago, or the
    oldest channel's watermark when that is earlier) and filed before the second (the day
    ``keep`` ago) may be pruned."""
    cutoff = now - keep
    return (min(cutoff, oldest_watermark) if oldest_watermark is not None else cutoff), cutoff.date()


def vacuum_worth(pages: int, free: int) -> bool:
    """Whether rebuilding the file (VACUUM) is worth its time: many free pages, a large share."""
    return free >= VACUUM_FREE_PAGES and free >= VACUUM_FREE_SHARE * pages
