"""Zotero (docs/zotero.md): the sync of examples and the saves (the decisions and the HTTP are
:mod:`watcher.zotero.sync`'s)."""

from __future__ import annotations

import json

from ..models import Paper
from .records import ZoteroPlace


class ZoteroStore:
    """The Zotero tables (m014): places read, items read there, saves added."""

    def _has_zotero(self) -> bool:
        """Whether migration m014 made the Zotero tables (a read-only store may predate it)."""
        return "zotero_places" in self.db.table_names()

    def zotero_place_version(self, place: str) -> int | None:
        """The library version ``place`` was last read at (None: never read)."""
        row = self.db.execute("SELECT version FROM zotero_places WHERE place = ?", [place]).fetchone()
        return row[0] if row else None

    def replace_zotero_items(self, place: str, current: set[str] | None,
                             changed: list[tuple[str, int | None, dict | None]],
                             version: int | None, when: str, note: str | None = None) -> int:
        """Record one good read of ``place`` in one transaction: the items no longer in
        ``current`` (the library's item keys now; None: unchanged) dropped, each ``(item,
        version, paper fields)`` of ``changed`` kept (fields None: dropped, not a paper), the
        new library ``version`` and the success, with ``note`` (items skipped) as its last
        error; the number of items kept."""
        with self.writing():
            db = self.db
            if current is not None:
                kept = {r[0] for r in db.execute("SELECT item FROM zotero_items WHERE place = ?", [place])}
                db.conn.executemany("DELETE FROM zotero_items WHERE place = ? AND item = ?",
                                    [(place, k) for k in kept - set(current)])
            for item, item_version, fields_ in changed:
                if fields_ is None:
                    db.execute("DELETE FROM zotero_items WHERE place = ? AND item = ?", [place, item])
                    continue
                db.execute("INSERT OR REPLACE INTO zotero_items (place, item, version, paper) VALUES (?, ?, ?, ?)",
                           [place, item, item_version, json.dumps(fields_, ensure_ascii=False)])
            n = db.execute("SELECT count(*) FROM zotero_items WHERE place = ?", [place]).fetchone()[0]
            db.execute("INSERT INTO zotero_places (place, version, items, last_success, failures, last_error) "
                       "VALUES (?, ?, ?, ?, 0, ?) ON CONFLICT(place) DO UPDATE SET version = excluded.version, "
                       "items = excluded.items, last_success = excluded.last_success, failures = 0, "
                       "last_error = excluded.last_error", [place, version, n, when, note])
        return n

    def zotero_sync_failed(self, place: str, error: str, when: str) -> None:
        """Record a failed read of ``place``; its items and version stay as they were."""
        with self.writing():
            self.db.execute(
                "INSERT INTO zotero_places (place, last_error, last_error_at, failures) VALUES (?, ?, ?, 1) "
                "ON CONFLICT(place) DO UPDATE SET last_error = excluded.last_error, "
                "last_error_at = excluded.last_error_at, failures = failures + 1", [place, error, when])

    def zotero_examples(self, place: str) -> list[Paper]:
        """The papers the items of ``place`` describe, as the last sync left them (by item
        key); none before the first sync or without the tables."""
        if not self._has_zotero():
            return []
        return [Paper(**json.loads(text)) for (text,) in self.db.execute(
            "SELECT paper FROM zotero_items WHERE place = ? ORDER BY item", [place])]

    def zotero_read_state(self, place: str) -> tuple | None:
        """``(version, items)`` of the last read of ``place``; None before it or without the tables."""
        if not self._has_zotero():
            return None
        return self.db.execute("SELECT version, items FROM zotero_places WHERE place = ?", [place]).fetchone()

    def zotero_saved(self) -> set[tuple[str, str]] | None:
        """Every ``(collection, paper key)`` a save was added to Zotero for; None without the tables."""
        if not self._has_zotero():
            return None
        return {(r[0], r[1]) for r in self.db.execute("SELECT target, paper FROM zotero_saves WHERE state = 'done'")}

    def zotero_save_token(self, target: str, paper: str, fresh: str, when: str) -> str:
        """The write token of the save of ``paper`` to the collection ``target``: the one an
        earlier try recorded, else ``fresh``, queued; committed (before anything is sent: a
        retry must send the same one). Each call counts an attempt."""
        with self.writing():
            row = self.db.execute("SELECT token FROM zotero_saves WHERE target = ? AND paper = ?",
                                  [target, paper]).fetchone()
            if row and row[0]:
                self.db.execute("UPDATE zotero_saves SET attempts = attempts + 1 WHERE target = ? AND paper = ?",
                                [target, paper])
                return row[0]
            self.db.execute("INSERT INTO zotero_saves (target, paper, token, state, attempts, queued_at) "
                            "VALUES (?, ?, ?, 'queued', 1, ?) ON CONFLICT(target, paper) DO UPDATE SET "
                            "token = excluded.token, attempts = attempts + 1", [target, paper, fresh, when])
            return fresh

    def queue_zotero_save(self, target: str, paper: str, fresh: str, when: str) -> None:
        """Queue the save of ``paper`` to the collection ``target`` with the write token
        ``fresh``, unless it is recorded already; no attempt counted (nothing is sent)."""
        with self.writing():
            self.db.execute("INSERT INTO zotero_saves (target, paper, token, state, attempts, queued_at) "
                            "VALUES (?, ?, ?, 'queued', 0, ?) ON CONFLICT(target, paper) DO NOTHING",
                            [target, paper, fresh, when])

    def zotero_save_failed(self, target: str, paper: str, error: str, *, drop_token: bool) -> None:
        """Keep the save queued with its error (``drop_token``: the next try takes a new token)."""
        with self.writing():
            self.db.execute("UPDATE zotero_saves SET last_error = ?, token = CASE WHEN ? THEN NULL "
                            "ELSE token END WHERE target = ? AND paper = ?", [error, drop_token, target, paper])

    def mark_zotero_saved(self, target: str, paper: str, item: str, when: str) -> None:
        """Record the save done: ``item`` is the paper's item in the collection."""
        with self.writing():
            self.db.execute("UPDATE zotero_saves SET state = 'done', item = ?, done_at = ?, "
                            "last_error = NULL WHERE target = ? AND paper = ?", [item, when, target, paper])

    def zotero_places(self) -> dict[str, ZoteroPlace] | None:
        """Every place read, by its key; None without the tables."""
        if not self._has_zotero():
            return None
        return {r["place"]: ZoteroPlace.from_row(r) for r in self.db.query("SELECT * FROM zotero_places")}

    def zotero_save_counts(self) -> tuple[int, int, str | None]:
        """``(added, queued, an error of the queued)`` of the saves to Zotero."""
        queued, error = self.db.execute(
            "SELECT count(*), max(last_error) FROM zotero_saves WHERE state != 'done'").fetchone()
        done = self.db.execute("SELECT count(*) FROM zotero_saves WHERE state = 'done'").fetchone()[0]
        return done, queued, error
