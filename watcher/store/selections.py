"""What each profile selects of each filing day, as the pipeline decided it (m019): the profile
page's "match now" reads these rows instead of scoring every paper of its days again
(:mod:`watcher.cycle.selections` decides; here they are kept and read)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import date, datetime
from typing import Iterator

from ..models import Paper
from . import papers
from .rows import iso


@dataclass(frozen=True)
class RecordedChange:
    """A paper a profile's ratings added to its selection of a day (``added``) or removed from
    it, as decided with that selection: its ``score`` and ``reasons`` (with the ratings when
    added, without them when removed), the ``rating`` that decided it and what the profile's
    ratings held out by time said of such changes (``estimate``)."""

    key: str
    added: bool
    score: float
    reasons: tuple[str, ...]
    rating: str
    estimate: str = ""


@dataclass(frozen=True)
class DaySelection:
    """The papers profile ``profile`` selected of the papers filed on ``day``: ``papers`` (their
    keys), decided by the matcher whose fingerprint is ``decided_by`` over the day's papers as
    they were (``signature``: their number, last row and last change, as
    :meth:`~watcher.store.Store.day_signatures` gives it), recorded at ``recorded_at``, with
    what its ratings changed there (``changes``; none without ratings)."""

    profile: str
    day: date
    decided_by: str
    signature: tuple
    papers: tuple[str, ...]
    recorded_at: str
    changes: tuple[RecordedChange, ...] = ()  # what the profile's ratings changed of the day


class SelectionStore:
    """The ``selections`` table (m019)."""

    def selections(self, profile: str, start: date, end: date) -> dict[date, DaySelection]:
        """The recorded selections of ``profile`` for the filing days ``start`` to ``end``: one
        row per day, whatever the number of papers stored."""
        return {date.fromisoformat(day): DaySelection(profile, date.fromisoformat(day), decided_by,
                                                      tuple(json.loads(signature)), tuple(json.loads(papers)),
                                                      recorded_at, _changes(changes))
                for day, decided_by, signature, papers, recorded_at, changes in self.db.execute(
                    "SELECT day, decided_by, signature, papers, recorded_at, changes FROM selections "
                    "WHERE profile = ? AND day >= ? AND day <= ?", [profile, start.isoformat(), end.isoformat()])}

    def record_selections(self, profile: str, days: list[tuple[date, str, tuple, list[str], list[RecordedChange]]],
                          now: datetime, before: date | None = None) -> None:
        """Record ``(day, decided_by, signature, selected keys, changes)`` for each of ``days``
        (one transaction), replacing what was recorded for those days; ``before``: the
        profile's rows of earlier days go (a chart's window moved past them)."""
        stamp = iso(now)
        with self.writing():
            self.db.conn.executemany(
                "INSERT OR REPLACE INTO selections (profile, day, decided_by, signature, papers, recorded_at, changes) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(profile, day.isoformat(), decided_by, json.dumps(list(signature)), json.dumps(sorted(keys)), stamp,
                  json.dumps([[c.key, c.added, c.score, list(c.reasons), c.rating, c.estimate] for c in changes]))
                 for day, decided_by, signature, keys, changes in days])
            if before is not None:
                self.db.execute("DELETE FROM selections WHERE profile = ? AND day < ?", [profile, before.isoformat()])

    def recorded_owners(self, keys: list[str]) -> dict[str, dict[str, bool]]:
        """For each paper of ``keys`` whose filing day a profile's record holds: that profile ->
        whether the record has the paper selected (a paper no record covers is left out)."""
        out: dict[str, dict[str, bool]] = {}
        picked: dict[tuple[str, str], frozenset] = {}  # one parse per recorded day, not per paper
        for key, profile, day, selected in self._rows_in(
                "SELECT p.key, s.profile, s.day, s.papers FROM papers p JOIN selections s ON s.day = p.day "
                "WHERE p.key IN ({})", keys):
            if (profile, day) not in picked:
                picked[profile, day] = frozenset(json.loads(selected))
            out.setdefault(key, {})[profile] = key in picked[profile, day]
        return out

    def forget_selections(self, profiles: list[str]) -> None:
        """Drop the rows of every profile not named in ``profiles`` (gone from the config)."""
        with self.writing():
            for table in ("selections", "rating_checks"):
                self.db.execute(f"DELETE FROM {table} WHERE profile NOT IN ({','.join('?' * len(profiles))})",
                                profiles)

    def rating_check(self, profile: str) -> tuple[str, list[str], dict] | None:
        """``(decided_by, sentences, estimates)``: what the self-check of ``profile``'s ratings
        found and decided, as recorded with the fingerprint of the matcher that found it; None
        when none is (or the database, opened read-only, predates the record)."""
        try:
            row = self.db.execute("SELECT decided_by, checked, estimates FROM rating_checks WHERE profile = ?",
                                  [profile]).fetchone()
        except sqlite3.OperationalError:  # no such table: not migrated yet
            return None
        return (row[0], list(json.loads(row[1])), dict(json.loads(row[2]))) if row else None

    def record_rating_check(self, profile: str, decided_by: str, checked: list[str], estimates: dict) -> None:
        """Record what the self-check of ``profile``'s ratings found (``checked``) and decided
        (``estimates``, as data), by the matcher fingerprinted ``decided_by``, replacing what
        was recorded."""
        with self.writing():
            self.db.execute("INSERT OR REPLACE INTO rating_checks (profile, decided_by, checked, estimates) "
                            "VALUES (?, ?, ?, ?)", [profile, decided_by, json.dumps(checked), json.dumps(estimates)])

    def changed_papers(self, day: date, after_row: int, since: str, chunk: int
                       ) -> Iterator[list[tuple[Paper, dict, date, int]]]:
        """The papers filed on ``day`` stored after row ``after_row`` or changed after ``since``
        (a ``last_changed`` stamp): what a record over the day's papers as they were (its
        signature's last row and last change) has not seen, ``chunk`` at a time, as
        :meth:`~watcher.store.Store.window_papers` gives them."""
        last = 0
        while True:
            rows = list(self.db.query(
                "SELECT rowid, * FROM papers WHERE day = ? AND (rowid > ? OR last_changed > ?) AND rowid > ? "
                "ORDER BY rowid LIMIT ?", [day.isoformat(), after_row, since, last, chunk]))
            if not rows:
                return
            last = rows[-1]["rowid"]
            yield [papers.filed_row(r) for r in rows]

    def filed_on(self, day: date, keys: list[str]) -> set[str]:
        """Those of ``keys`` still stored as papers filed on ``day``."""
        if not keys:
            return set()
        return {key for (key,) in self.db.execute(
            "SELECT key FROM papers WHERE day = ? AND key IN (SELECT value FROM json_each(?))",
            [day.isoformat(), json.dumps(keys)])}


def _changes(text: str) -> tuple[RecordedChange, ...]:
    """The ``changes`` column as :class:`RecordedChange`s."""
    return tuple(RecordedChange(key, bool(added), float(score), tuple(reasons), rating, estimate)
                 for key, added, score, reasons, rating, estimate in json.loads(text or "[]"))

