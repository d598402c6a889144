"""Search SQL: the full-text index (FTS5, m002/m009) asked for a search's candidates
(:mod:`watcher.services.search` decides which of them match), for similar papers, and for titles."""

from __future__ import annotations

import re
import sqlite3
from datetime import date
from typing import Callable

from ..matching.index import search_text
from ..models import Paper
from .connection import database_error
from .papers import row_to_paper, stored_words


def _found(cursor, rows) -> list[tuple[Paper, dict]]:
    """Rows of papers as ``(paper, its stored search words)`` (:func:`~watcher.matching.index.prepare`'s
    ``stored``: what a search checks without normalising the text again)."""
    names = [d[0] for d in cursor.description]
    out = []
    for r in rows:
        row = dict(zip(names, r))
        out.append((row_to_paper(row), stored_words(row)))
    return out


class Candidates:
    """A search's candidates (:meth:`SearchStore.search_candidates`), read a chunk at a time
    while the caller checks them; ``count()`` counts every one the filters select."""

    def __init__(self, cursor: sqlite3.Cursor, count: Callable[[], int], path):
        self._cursor, self._count, self._path = cursor, count, path

    def fetch(self, n: int | None = None) -> list[tuple[Paper, dict]]:
        """The next ``n`` candidates (None: all the rest), each with its stored search words."""
        try:
            return _found(self._cursor, self._cursor.fetchall() if n is None else self._cursor.fetchmany(n))
        except sqlite3.Error as e:
            raise database_error(self._path, e) from e

    def count(self) -> int:
        try:
            return self._count()
        except sqlite3.Error as e:
            raise database_error(self._path, e) from e

    def close(self) -> None:
        self._cursor.close()


class SearchStore:
    """Papers found through the full-text index."""

    def suggest(self, text: str, limit: int = 3) -> list[Paper]:
        """Stored papers whose title holds every word of ``text`` (a fragment of a title, as
        the matcher normalises words), best first: what ``explain`` and ``rate`` offer when
        ``text`` names no paper."""
        words = list(dict.fromkeys(re.findall(r"[a-z0-9]+", search_text(Paper(title=text))["search_title"])))
        if not words:
            return []
        expr = " AND ".join(f'"{w}"' for w in words[:12])
        try:
            rows = self.db.execute(
                "SELECT p.* FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid "
                "WHERE papers_fts MATCH ? ORDER BY papers_fts.rank LIMIT ?",
                [f"{{search_title}} : ({expr})", limit])
        except sqlite3.OperationalError:  # no index yet (a database before it)
            return []
        names = [d[0] for d in rows.description]
        return [row_to_paper(dict(zip(names, r))) for r in rows.fetchall()]

    def search_candidates(self, expr: str | None, *, day_from: date | None, day_to: date | None,
                          category: str | None, order: str, ranked: int,
                          page: tuple[int, int] | None) -> Candidates:
        """The candidates of a search (:func:`watcher.services.search.run_search`): the stored papers
        that the FTS5 expression ``expr`` (None: every paper) and the filters select, newest
        stored first (``order`` ``relevance`` with an ``expr``: bm25 over the newest ``ranked``
        candidates); ``page``: ``(limit, offset)`` of them only. Its ``count()`` counts what
        the filters and ``expr`` select (no page, no order)."""
        where, args = [], []
        if expr:
            sql = "SELECT p.* FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
            where.append("papers_fts MATCH ?")
            args.append(expr)
        else:
            sql = "SELECT p.* FROM papers p"
        if day_from:
            where.append("p.day >= ?")
            args.append(day_from.isoformat())
        if day_to:
            where.append("p.day <= ?")
            args.append(day_to.isoformat())
        if category:
            where.append("(p.primary_category = ? OR EXISTS (SELECT 1 FROM json_each(p.categories) "
                         "WHERE value = ? OR value LIKE ? || '.%'))")
            args += [category] * 3
        if where:
            sql += " WHERE " + " AND ".join(where)
        counting = (sql.replace("SELECT p.*", "SELECT count(*)", 1), list(args))  # the filters' count, no query
        # newest: the order papers were stored in, which the index walks without sorting
        if expr and order == "relevance":
            # best match first among the newest ``ranked`` candidates: ranking every match of a
            # common word costs in proportion to the database (and to the number of terms)
            sql = ("SELECT p.* FROM (" + sql.replace("SELECT p.*", "SELECT p.rowid AS id, papers_fts.rank AS score", 1)
                   + f" ORDER BY papers_fts.rowid DESC LIMIT {int(ranked)}) AS c JOIN papers p ON p.rowid = c.id"
                   " ORDER BY c.score")
        elif expr:
            sql += " ORDER BY papers_fts.rowid DESC"
        else:
            sql += " ORDER BY p.rowid DESC"
        if page is not None:
            sql += " LIMIT ? OFFSET ?"
            args += list(page)
        return Candidates(self.db.execute(sql, args), lambda: self.db.execute(*counting).fetchone()[0], self.path)

    def similar_candidates(self, expr: str, key: str) -> list[tuple[Paper, dict]]:
        """Up to 200 stored papers (other than ``key``) whose title or abstract words match the
        FTS5 expression ``expr``, best first (bm25), each with the words the index holds of it
        (:func:`watcher.services.search.similar_papers` ranks them)."""
        rows = self.db.execute(
            "SELECT p.* FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid "
            "WHERE papers_fts MATCH ? AND p.key != ? ORDER BY papers_fts.rank LIMIT 200",
            [f"{{search_title search_abstract}} : ({expr})", key])
        return _found(rows, rows.fetchall())
