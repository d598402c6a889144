"""The store's upkeep, after a cycle's deliveries (``watcher once``, ``watcher run``): prune the
papers :mod:`watcher.cycle.retention` lets go (a chunk per transaction, their keys kept in the
seen-set), then ``PRAGMA optimize``, the full-text index's ``optimize`` when papers were pruned
and, when many pages are free, ``VACUUM``. Skipped when not due (about once a day); recorded in the ``upkeep`` row that
``watcher status`` reads. Never before a delivery: :func:`watcher.cycle.pipeline.run_once` calls it
after them, and ``stop()`` ends it between two chunks.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Callable

from ..config import Config
from ..util.progress import ProgressFactory, start
from .retention import prune_cutoff, upkeep_due, vacuum_worth
from ..store import Store, stamp

log = logging.getLogger("watcher")


def upkeep(config: Config, store: Store, now: datetime, stop: Callable[[], bool] = lambda: False,
           progress: ProgressFactory = start, force: bool = False) -> dict | None:
    """Run the upkeep when due (or ``force``): what it did (``pruned``, ``vacuumed``), None when
    not due."""
    if not force and not upkeep_due(store.upkeep_state().last_run, now):
        return None
    stored_before, filed_before = prune_cutoff(now, config.settings.keep, store.oldest_watermark())
    keep_keys = store.zotero_example_keys()
    pruned = 0
    with progress("upkeep: pruning", unit="papers") as bar:
        while not stop():
            keys = store.prunable(stored_before, filed_before, keep_keys)
            if not keys:
                break
            n = store.forget(keys)
            pruned += n
            bar.advance(n)
            if n < len(keys):  # none of them any more: another writer took them
                break
    store.optimize_indexes(full_text=pruned > 0)
    vacuumed = not stop() and vacuum_worth(*store.page_counts())
    if vacuumed:
        store.vacuum()
    store.upkeep_done(now, pruned, vacuumed)
    if pruned:
        log.info("upkeep: pruned %d paper%s first stored before %s (their keys stay seen)%s", pruned,
                 "s" * (pruned != 1), stamp(stored_before)[:10], "; the file rebuilt" if vacuumed else "")
    return {"pruned": pruned, "vacuumed": vacuumed}
