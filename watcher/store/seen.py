"""What was seen, once its paper row is gone, and the store's upkeep (migration m016).

``seen`` holds, for each paper whose row was pruned (``[watcher] keep``) or left out of a
saved state file, its identity keys: its key (an arXiv id without version, ``doi:…``,
``pmid:…`` or ``title:…``) with the last arXiv version stored, and each DOI and PMID that
``paper_ids`` held for it. A listing that finds no row but one of its keys here is no new
paper: a newer arXiv version of it is a revision, anything else unchanged
(:meth:`PaperStore._upsert_one`). About 20 bytes a paper (an arXiv id and a version, in a
table without rowid), where its row and index rows take about 3 kB.

Which papers may go, and when upkeep is due, is decided in :mod:`watcher.cycle.retention` (pure);
here is only the SQL.
"""

from __future__ import annotations

import re
from datetime import date, datetime

from ..models import Paper
from .records import UpkeepRecord
from .rows import parse_time, stamp

CHUNK = 500  # papers forgotten per transaction: a writer waiting for the lock waits for one chunk

# What still names a paper: a paper any of these names is never pruned (the ledger, what the
# reader did, the summarizer's cache aside, which goes with the paper).
LEDGER_REFERENCES = (("deliveries", "paper"), ("message_papers", "paper"), ("issue_papers", "paper"))
RATING_REFERENCES = (("ratings", "paper"), ("saved", "paper"), ("zotero_saves", "paper"))
REFERENCES = LEDGER_REFERENCES + RATING_REFERENCES

# A seen ident keeps the newest version any listing of it had.
KEEP_NEWEST = "ON CONFLICT(ident) DO UPDATE SET version = max(coalesce(version, 0), coalesce(excluded.version, 0))"
SEE = "INSERT INTO seen (ident, version) VALUES (?, ?) " + KEEP_NEWEST

# The seen rows of the papers of ``{papers}`` (a table or a query with ``key`` and ``version``)
# and of their ``paper_ids`` idents, read from schema ``{src}`` into ``{dst}``.
REMEMBER = ("INSERT INTO {dst}.seen (ident, version) SELECT key, version FROM {papers} WHERE true " + KEEP_NEWEST,
            "INSERT OR IGNORE INTO {dst}.seen (ident) SELECT i.ident FROM {src}.paper_ids i "
            "JOIN {papers} f ON f.key = i.paper")


# In a saved state file the seen-set is one text (:func:`pack_seen`, unpacked on restore by
# :func:`unpack_seen`): its idents sorted, each line the length of the prefix it shares with the
# line before, the rest of it and its version. Ids that follow each other (``2501.01234``,
# ``2501.01235``) take a few bytes a line, and the file's compressor makes little of the rest;
# as table rows (b-tree pages) they took 16 to 20 bytes each once compressed.
PACKED = "seen_packed"


_ESCAPES = {"\\": "\\", "t": "\t", "n": "\n"}  # a backslash, tab or newline in an ident (a DOI may hold one)


def _front_coded(rows) -> str:
    lines, prev = [], ""
    for ident, version in rows:
        n = min(len(prev), len(ident))
        while prev[:n] != ident[:n]:
            n -= 1
        rest = ident[n:].replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
        lines.append(f"{n}\t{rest}\t{'' if version is None else version}")
        prev = ident
    return "\n".join(lines)


def _front_decoded(text: str):
    prev = ""
    for line in text.split("\n") if text else ():
        n, rest, version = line.split("\t")
        if "\\" in rest:
            rest = re.sub(r"\\([\\tn])", lambda m: _ESCAPES[m[1]], rest)
        prev = prev[:int(n)] + rest
        yield prev, int(version) if version else None


def pack_seen(conn) -> None:
    """In a state file being built (``main``): the seen-set's rows as one front-coded text in
    ``seen_packed``, the table ``seen`` left empty."""
    text = _front_coded(conn.execute("SELECT ident, version FROM main.seen ORDER BY ident"))
    conn.execute(f"CREATE TABLE main.{PACKED} (idents TEXT NOT NULL)")
    conn.execute(f"INSERT INTO main.{PACKED} (idents) VALUES (?)", [text])
    conn.execute("DELETE FROM main.seen")


def unpack_seen(conn) -> None:
    """In a restored state file: the seen-set's rows again from ``seen_packed``, which goes
    (a file saved before it, without one, is left as it is)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", [PACKED]).fetchone():
        return
    for (text,) in conn.execute(f"SELECT idents FROM {PACKED}").fetchall():
        conn.executemany(SEE, _front_decoded(text))
    conn.execute(f"DROP TABLE {PACKED}")


def remember(conn, papers: str, src: str = "main", dst: str = "main") -> None:
    """Add to ``dst``'s seen-set the papers of ``papers`` (rows with ``key`` and ``version``)."""
    for sql in REMEMBER:
        conn.execute(sql.format(papers=papers, src=src, dst=dst))


class SeenStore:
    """The seen-set, pruning and the index upkeep."""

    @staticmethod
    def _seen_version(conn, paper: Paper) -> tuple[bool, int | None]:
        """Whether one of ``paper``'s identity keys is in the seen-set, and the arXiv version
        seen of it (None: unknown)."""
        idents = [paper.key, *paper.identifiers()]
        rows = conn.execute(f"SELECT ident, version FROM seen WHERE ident IN ({','.join('?' * len(idents))})",
                            idents).fetchall()
        if not rows:
            return False, None
        return True, max((v for _, v in rows if v is not None), default=None)

    @staticmethod
    def _see_again(conn, paper: Paper) -> None:
        """A listing of a seen paper: its version and any identifier it adds are seen too."""
        conn.execute(SEE, (paper.key, paper.version))
        conn.executemany("INSERT OR IGNORE INTO seen (ident) VALUES (?)", [(i,) for i in paper.identifiers()])

    def seen_count(self) -> int:
        """How many identity keys the seen-set holds."""
        return self.db.execute("SELECT count(*) FROM seen").fetchone()[0]

    def is_seen(self, ident: str) -> bool:
        """Whether ``ident`` (a paper key, ``doi:…``, ``pmid:…``) is in the seen-set."""
        return self.db.execute("SELECT 1 FROM seen WHERE ident = ?", [ident]).fetchone() is not None

    def oldest_watermark(self) -> datetime | None:
        """The oldest watermark of any (digest, channel): papers stored after it may still be
        delivered."""
        return parse_time(self.db.execute("SELECT min(watermark) FROM channels").fetchone()[0])

    def prunable(self, cutoff: datetime, before_day: date, keep_keys: frozenset[str] = frozenset(),
                 limit: int = CHUNK) -> list[str]:
        """Up to ``limit`` keys of papers first stored before ``cutoff`` and filed before
        ``before_day`` that nothing names (:data:`REFERENCES`), not in ``keep_keys`` (Zotero
        examples), oldest first."""
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        unreferenced = " ".join(f"AND NOT EXISTS (SELECT 1 FROM {t} r WHERE r.{c} = p.key)"
                                for t, c in REFERENCES if t in tables)
        rows = self.db.execute(f"SELECT p.key FROM papers p WHERE p.first_seen < ? AND p.day < ? {unreferenced} "
                               "ORDER BY p.first_seen LIMIT ?",
                               [stamp(cutoff), before_day.isoformat(), limit + len(keep_keys)])
        return [k for (k,) in rows if k not in keep_keys][:limit]

    def zotero_example_keys(self) -> frozenset[str]:
        """The keys of the papers Zotero examples describe (never pruned)."""
        if not self._has_zotero():
            return frozenset()
        places = [r[0] for r in self.db.execute("SELECT place FROM zotero_places")]
        return frozenset(p.key for place in places for p in self.zotero_examples(place))

    def forget(self, keys: list[str]) -> int:
        """Prune the papers ``keys`` in one transaction: their keys go to the seen-set, their
        rows, ``paper_ids`` and TL;DRs away (the full-text rows by the triggers); how many."""
        if not keys:
            return 0
        with self.writing():
            conn = self.db.conn
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS forgetting (key TEXT PRIMARY KEY, version INTEGER)")
            conn.execute("DELETE FROM temp.forgetting")
            conn.executemany("INSERT OR IGNORE INTO temp.forgetting (key, version) "
                             "SELECT key, version FROM papers WHERE key = ?", [(k,) for k in keys])
            remember(conn, "temp.forgetting")
            for table, column in (("paper_ids", "paper"), ("tldr_cache", "paper"), ("papers", "key")):
                conn.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT key FROM temp.forgetting)")
            n = conn.execute("SELECT count(*) FROM temp.forgetting").fetchone()[0]
            conn.execute("DELETE FROM temp.forgetting")
        return n

    def upkeep_state(self) -> UpkeepRecord:
        """When upkeep last ran, what it pruned then and in all, when it last rebuilt the file;
        every time None before the first."""
        return UpkeepRecord.from_row(next(self.db.query(
            "SELECT last_run, pruned, total_pruned, vacuumed FROM upkeep WHERE id = 1"), None))

    def upkeep_done(self, when: datetime, pruned: int, vacuumed: bool) -> None:
        """Record one upkeep at ``when`` that pruned ``pruned`` papers."""
        when = stamp(when)
        with self.writing():
            self.db.execute("INSERT INTO upkeep (id, last_run, pruned, total_pruned, vacuumed) VALUES (1, ?, ?, ?, ?) "
                            "ON CONFLICT(id) DO UPDATE SET last_run = excluded.last_run, pruned = excluded.pruned, "
                            "total_pruned = total_pruned + excluded.pruned, "
                            "vacuumed = coalesce(excluded.vacuumed, vacuumed)",
                            [when, pruned, pruned, when if vacuumed else None])

    def page_counts(self) -> tuple[int, int]:
        """(pages, free pages) of the database file."""
        return (self.db.execute("PRAGMA page_count").fetchone()[0],
                self.db.execute("PRAGMA freelist_count").fetchone()[0])

    def optimize_indexes(self, full_text: bool) -> None:
        """SQLite's ``PRAGMA optimize`` and, with ``full_text`` (after pruning), the full-text
        index's ``optimize`` (its segments merged into one, the deleted rows' entries dropped),
        each its own short transaction, started as every write is (:meth:`writing`): the
        ``ANALYZE`` that ``PRAGMA optimize`` may run outside one takes the write lock without
        waiting for another writer's, and fails at once with "database is locked"."""
        with self.writing():
            self.db.execute("PRAGMA optimize")
        if full_text and self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'papers_fts'").fetchone():
            with self.writing():
                self.db.execute("INSERT INTO papers_fts (papers_fts) VALUES ('optimize')")

    def vacuum(self) -> None:
        """Rebuild the file without its free pages (outside any transaction)."""
        self.db.execute("VACUUM")
