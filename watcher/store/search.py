"""Search SQL: the full-text index (FTS5, m002/m009) asked for titles."""

from __future__ import annotations

import re
import sqlite3

from ..index import search_text
from ..models import Paper
from .papers import row_to_paper


class SearchStore:
    """Titles found through the full-text index."""

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
