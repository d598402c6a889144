"""Ratings and the reading list (docs/ratings.md; the rules are :mod:`watcher.services.ratings`')."""

from __future__ import annotations

import json
from datetime import datetime

from ..models import Paper
from .papers import row_to_paper
from .records import RatingRow
from .rows import parse_time


# Store.delivered_under's one query (a rating's profile, watcher.services.ratings.owners_of): the ledger and
# the messages' papers found by paper, the messages by id
DELIVERED_UNDER = """
    SELECT DISTINCT d.paper, d.digest, d.channel, mp.profile
    FROM deliveries d LEFT JOIN message_papers mp ON mp.paper = d.paper AND mp.profile <> ''
         AND EXISTS (SELECT 1 FROM messages m WHERE m.id = mp.message AND m.digest = d.digest
                     AND m.channel = d.channel)
    WHERE d.paper IN ({})"""


class RatingStore:
    """The ratings and saved tables, and the profiles a delivered paper can be rated under."""

    def rated_papers(self, profile: str) -> tuple[list[Paper], list[Paper]]:
        """The papers rated up and down for ``profile``, oldest rating first: what the learner
        (:mod:`watcher.matching.learn`) takes as examples and counter-examples."""
        liked, disliked = [], []
        for row in self.db.query(
                """SELECT p.*, r.value AS rating FROM ratings r JOIN papers p ON p.key = r.paper
                   WHERE r.profile = ? ORDER BY r.rated_at, r.paper""", [profile]):
            (liked if row.pop("rating") == "up" else disliked).append(row_to_paper(row))
        return liked, disliked

    def rated_sent_with(self, profile: str, reason: str) -> set[str]:
        """The papers rated for ``profile`` that a message recorded under it with ``reason``
        among their reasons (the record as sent, docs/record.md)."""
        exact = json.dumps(reason, ensure_ascii=False)
        return {r["paper"] for r in self.db.query(
            """SELECT r.paper FROM ratings r WHERE r.profile = ? AND EXISTS (
                   SELECT 1 FROM message_papers mp WHERE mp.paper = r.paper AND mp.profile = r.profile
                   AND instr(mp.reasons, ?) > 0)""", [profile, exact])}

    def record_rating(self, action: str, profile: str | None, key: str, when: str, source: str) -> bool:
        """Apply one rating action to paper ``key`` in one transaction (``BEGIN IMMEDIATE``:
        it waits for another writer instead of failing): ``up``/``down`` set the profile's
        rating (replacing an earlier one), ``clear`` removes it, ``save``/``unsave`` put the
        paper on or take it off the reading list. Whether anything changed."""
        with self.writing():
            if action in ("up", "down"):
                old = list(self.db.query("SELECT value FROM ratings WHERE profile = ? AND paper = ?",
                                         [profile, key]))
                changed = not old or old[0]["value"] != action
                if changed:
                    self.db["ratings"].upsert({"profile": profile, "paper": key, "value": action,
                                               "rated_at": when, "source": source}, pk=("profile", "paper"))
                return changed
            if action == "clear":
                return self.db.execute("DELETE FROM ratings WHERE profile = ? AND paper = ?",
                                       [profile, key]).rowcount > 0
            if action == "save":
                return self.db.execute("INSERT OR IGNORE INTO saved (paper, saved_at, source) VALUES (?, ?, ?)",
                                       [key, when, source]).rowcount > 0
            return self.db.execute("DELETE FROM saved WHERE paper = ?", [key]).rowcount > 0

    def rating_rows(self, profile: str | None = None) -> list[RatingRow]:
        """Every rating (of ``profile``, or all), oldest first (the arXiv id and title None for a
        paper no longer stored)."""
        sql = """SELECT r.profile, r.paper, p.arxiv_id, p.title, r.value, r.rated_at, r.source
                 FROM ratings r LEFT JOIN papers p ON p.key = r.paper"""
        args = []
        if profile is not None:
            sql += " WHERE r.profile = ?"
            args.append(profile)
        return [RatingRow.from_row(r) for r in self.db.query(sql + " ORDER BY r.rated_at, r.profile, r.paper", args)]

    def delivered_under(self, keys: list[str]) -> list[tuple]:
        """For the papers ``keys``: ``(paper, digest, channel, profile)`` of each delivery, with
        each profile the messages of that digest and channel recorded it under (None: none)."""
        return self._rows_in(DELIVERED_UNDER, keys)

    def marks_of(self, keys: list[str]) -> tuple[dict[tuple[str, str], str], set[str]]:
        """The ratings and reading-list state of the papers ``keys``:
        ``({(profile, key): "up"|"down"}, {saved keys})``."""
        rated = {(profile, paper): value for profile, paper, value in
                 self._rows_in("SELECT profile, paper, value FROM ratings WHERE paper IN ({})", keys)}
        return rated, {r[0] for r in self._rows_in("SELECT paper FROM saved WHERE paper IN ({})", keys)}

    def saved_papers(self) -> list[tuple[Paper, datetime]]:
        """The reading list, oldest first: ``(paper, when it was saved)``."""
        return [(row_to_paper(r), parse_time(r.pop("saved_at"))) for r in self.db.query(
            """SELECT p.*, s.saved_at AS saved_at FROM saved s JOIN papers p ON p.key = s.paper
               ORDER BY s.saved_at, s.paper""")]

    def rating_counts(self) -> dict[str, int]:
        """How many ratings each profile has: ``name -> number`` (none in a database from before
        the ratings, m003, opened read-only: not migrated yet)."""
        if "ratings" not in self.db.table_names():
            return {}
        return {r["profile"]: r["n"] for r in self.db.query(
            "SELECT profile, count(*) AS n FROM ratings GROUP BY profile ORDER BY profile")}
