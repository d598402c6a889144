"""Papers: rows as Papers and back, the identity lookups and upserts (docs/design.md), short keys,
each paper as a message sent it (its snapshot), and the papers of a window of days.

Identity (docs/design.md): a paper's row key is its arXiv id without version, else ``doi:`` and its
first DOI, else ``pmid:`` and its PMID, else ``title:`` plus its title fingerprint (and its first
author's surname and first day, when known). ``paper_ids`` maps every DOI and PMID of a paper to
its key, so that a listing sharing any of them (a preprint's journal version, its PubMed record)
finds the row. A paper later seen with a better id is re-keyed to it; an id-less listing of a
paper stored with its id merges into that row, where nothing contradicts (other authors, a date
far apart). A higher version updates the row (``revised_at`` is set) and never counts as a new
paper; so does the journal version of a preprint (``journal_at`` and ``revised_at`` are set).
A paper whose row is gone but whose key is in the seen-set (:mod:`watcher.store.seen`) is not
stored again: a newer version of it counts as updated, any other listing as unchanged."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from typing import Iterator

from ..identity import contradicts, merge, merge_batch, other_arxiv_ids
from ..matching.index import search_text
from ..models import Paper, normalize_doi, now_utc, parse_arxiv_id, short_key, title_fingerprint
from .records import PaperTimes
from .rows import iso, parse_time, stamp


# Store.get_short's one query: the index papers_short (m011) answers it, order and all
SHORT_LOOKUP = "SELECT * FROM papers WHERE short = ? ORDER BY first_seen, key LIMIT 1"


_PAPER_FIELDS = [f.name for f in fields(Paper)]


_JSON_FIELDS = {"authors", "categories", "ai_keywords", "dois", "venues", "sources", "cites", "followed"}


_REPLACE_TYPES = ("replace", "replace-cross")


@dataclass
class UpsertCounts:
    """What storing one batch did: keys of new and updated papers, and the unchanged count."""

    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0

    def summary(self) -> dict:
        """Counts as a dict for printing and for the sources table."""
        return {"new": len(self.new), "updated": len(self.updated), "unchanged": self.unchanged}


def row_to_paper(row: dict) -> Paper:
    """A ``papers`` row as a Paper (a search reads a few dozen a page: the columns are taken
    as they are, then only the JSON lists, the times and the day converted)."""
    kwargs = {name: row.get(name) for name in _PAPER_FIELDS}
    for name in _JSON_FIELDS:
        value = kwargs[name]
        kwargs[name] = [] if not value or value == "[]" else (
            json.loads(value) if isinstance(value, str) else list(value))
    origins = kwargs.get("origins")  # JSON text in a row, a dict in a message's snapshot
    kwargs["origins"] = (json.loads(origins) if isinstance(origins, str) else dict(origins)) if origins else {}
    for name in ("published", "updated"):
        kwargs[name] = parse_time(kwargs[name])
    if kwargs["announced"]:
        kwargs["announced"] = date.fromisoformat(kwargs["announced"])
    return Paper(**kwargs)


def paper_snapshot(p: Paper) -> str:
    """``p`` as a message records it (``message_papers.paper_sent``): every field of the Paper
    as it was sent, as JSON (times as ISO 8601 text); :func:`row_to_paper` reads it back."""
    out = {}
    for name in _PAPER_FIELDS:
        value = getattr(p, name)
        out[name] = iso(value) if isinstance(value, (datetime, date)) else value
    return json.dumps(out, ensure_ascii=False)


SINCE_FIELDS = ("version", "title", "authors", "abstract", "journal", "journal_ref", "doi")


def changed_since(sent: Paper, now: Paper) -> Paper | None:
    """``now`` (the paper as stored today) when it differs from ``sent`` (as a message showed
    it) in what a card shows: version, title, authors, abstract, journal; else None."""
    if any(getattr(sent, f) != getattr(now, f) for f in SINCE_FIELDS):
        return now
    return None


def stored_words(row: dict) -> dict:
    """A paper row's stored search words (:func:`~watcher.matching.index.prepare`'s ``stored``:
    what a scoring checks without normalising the text again)."""
    return {"search_title": row.get("search_title"), "search_abstract": row.get("search_abstract")}


def filed_row(row: dict) -> tuple[Paper, dict, date, int]:
    """A paper row read by its filing day: ``(paper, its stored search words, day, rowid)``."""
    return row_to_paper(row), stored_words(row), date.fromisoformat(row["day"]), row["rowid"]


def _filed_paper(row: dict) -> Paper:
    """A row as the Paper a digest shows: one that no listing dated (an undated JSON listing)
    counts as announced on the day it was filed, so that its text entry has a date too."""
    paper = row_to_paper(row)
    if paper.published is None and paper.announced is None and row.get("day"):
        paper.announced = date.fromisoformat(row["day"])
    return paper


def _paper_row(p: Paper) -> dict:
    row = {}
    for name in _PAPER_FIELDS:
        value = getattr(p, name)
        if name in _JSON_FIELDS or name == "origins":
            value = json.dumps(value, ensure_ascii=False) if value or name != "origins" else None
        elif isinstance(value, (datetime, date)):
            value = iso(value)
        row[name] = value
    row["key"] = p.key
    row["fingerprint"] = title_fingerprint(p.title)
    row["day"] = iso(p.day)
    row["short"] = _short(p.key)
    row.update(search_text(p))
    return row


def _short(key: str) -> str | None:
    """The ``short`` column of the paper with ``key``: its :func:`~watcher.models.short_key`
    where that is not the key itself."""
    short = short_key(key)
    return short if short != key else None


def rekey_references(conn, old: str, new: str) -> None:
    """Everything that names paper ``old`` names ``new`` instead. Where ``new`` already has a
    row of its own, its deliveries, issue entries and TL;DR stay, and ``old``'s rating and
    reading-list mark replace its own (the newer decision about the work)."""
    conn.execute("UPDATE OR IGNORE deliveries SET paper = ? WHERE paper = ?", (new, old))
    conn.execute("DELETE FROM deliveries WHERE paper = ?", (old,))
    conn.execute("UPDATE OR IGNORE issue_papers SET paper = ? WHERE paper = ?", (new, old))
    conn.execute("UPDATE OR REPLACE ratings SET paper = ? WHERE paper = ?", (new, old))
    conn.execute("UPDATE OR REPLACE saved SET paper = ? WHERE paper = ?", (new, old))
    conn.execute("UPDATE OR IGNORE tldr_cache SET paper = ? WHERE paper = ?", (new, old))
    conn.execute("DELETE FROM tldr_cache WHERE paper = ?", (old,))
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'message_papers'").fetchone():  # m008 on
        conn.execute("UPDATE message_papers SET paper = ? WHERE paper = ?", (new, old))
    conn.execute("UPDATE OR REPLACE paper_ids SET paper = ? WHERE paper = ?", (new, old))
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'zotero_saves'").fetchone():  # m014 on
        conn.execute("UPDATE OR IGNORE zotero_saves SET paper = ? WHERE paper = ?", (new, old))


class PaperStore:
    """The papers table: storing listings by the identity rules, and reading papers back."""

    def upsert(self, papers: list[Paper], now: datetime, *, backfill: bool = False) -> UpsertCounts:
        """Store a batch of papers by the identity rules, in one transaction. Listings of the
        same paper within the batch are merged first, so a batch stored twice is unchanged.
        Papers first stored by a ``backfill`` (``watcher fetch --since``) are history: they
        are never listed as new in a digest. A batch is stored oldest day first (a paper without
        one, filed under today, last), so that the order papers are stored in, which search's
        "newest first" walks without sorting, is their days' order within every fetch, a
        backfill's or a sample's of several days included."""
        counts = UpsertCounts()
        conn = self.db.conn
        when = stamp(now)
        today = now.date()
        with self.writing():
            for paper in sorted(merge_batch(papers), key=lambda p: p.day or today):  # stable
                self._upsert_one(conn, paper, when, counts, backfill)
        return counts

    def _find(self, conn, paper: Paper) -> dict | None:
        conn.row_factory = sqlite3.Row
        try:
            row = conn.execute("SELECT * FROM papers WHERE key = ?", (paper.key,)).fetchone()
            for ident in paper.identifiers() if row is None else ():  # a DOI or PMID in common
                row = conn.execute("SELECT p.* FROM paper_ids i JOIN papers p ON p.key = i.paper "
                                   "WHERE i.ident = ?", (ident,)).fetchone()
                if row is not None and not other_arxiv_ids(row["arxiv_id"], paper.arxiv_id):
                    break
                row = None
            if row is None:  # the same title, where nothing contradicts (identity.contradicts)
                fp = title_fingerprint(paper.title)
                if paper.arxiv_id:  # an id-less listing of the same paper stored earlier
                    rows = conn.execute("SELECT * FROM papers WHERE fingerprint = ? AND arxiv_id IS NULL",
                                        (fp,))
                else:  # the same paper stored with its id, else without
                    rows = conn.execute("SELECT * FROM papers WHERE fingerprint = ? "
                                        "ORDER BY arxiv_id IS NULL, first_seen", (fp,))
                row = next((r for r in rows if not contradicts(row_to_paper(dict(r)), paper)), None)
        finally:
            conn.row_factory = None
        return dict(row) if row is not None else None

    def _others(self, conn, paper: Paper, key: str) -> list[dict]:
        """Other rows that ``paper``'s DOIs and PMID name: the same work stored twice before a
        listing linked them (a journal article stored before its preprint's ``published``)."""
        conn.row_factory = sqlite3.Row
        try:
            rows = {}
            for ident in paper.identifiers():
                for r in conn.execute("SELECT p.* FROM paper_ids i JOIN papers p ON p.key = i.paper "
                                      "WHERE i.ident = ? AND p.key != ?", (ident, key)):
                    if not other_arxiv_ids(r["arxiv_id"], paper.arxiv_id):
                        rows.setdefault(r["key"], dict(r))
        finally:
            conn.row_factory = None
        return list(rows.values())

    def _upsert_one(self, conn, paper: Paper, stamp: str, counts: UpsertCounts,
                    backfill: bool = False) -> None:
        found = self._find(conn, paper)
        if found is None:
            seen, version = self._seen_version(conn, paper)
            if seen:  # its row was pruned or left out of a state file: never new again (m016)
                self._see_again(conn, paper)
                if paper.version is not None and version is not None and paper.version > version:
                    counts.updated.append(paper.key)  # a revision of it
                else:
                    counts.unchanged += 1
                return
            row = _paper_row(paper)
            row["day"] = row["day"] or stamp[:10]
            row.update(first_seen=stamp, last_changed=stamp, revised_at=None, journal_at=None,
                       listed_as_new=0 if backfill or paper.announce_type in _REPLACE_TYPES else 1)
            cols = ", ".join(row)
            conn.execute(f"INSERT INTO papers ({cols}) VALUES ({', '.join('?' * len(row))})",
                         list(row.values()))
            self._identify(conn, paper, row["key"])
            counts.new.append(row["key"])
            return
        old = row_to_paper(found)
        merged = merge(old, paper)
        others = self._others(conn, merged, found["key"])
        for other in others:  # one work: the later stored row joins the earlier
            merged = merge(merged, row_to_paper(other))
        if merged == old and found["key"] == merged.key:  # equal papers make equal rows
            counts.unchanged += 1
            return
        row = _paper_row(merged)
        old_row = _paper_row(old)
        row["day"] = row["day"] or found["day"]
        old_row["day"] = old_row["day"] or found["day"]
        if row == old_row and found["key"] == row["key"]:
            counts.unchanged += 1
            return
        revised = (merged.version or 0) > (old.version or 0) and old.version is not None
        published = merged.publication is not None and old.publication is None
        row.update(last_changed=stamp,
                   revised_at=stamp if revised or published else found["revised_at"],
                   journal_at=stamp if published else found["journal_at"])
        for other in others:
            conn.execute("DELETE FROM papers WHERE key = ?", (other["key"],))
            rekey_references(conn, other["key"], found["key"])
        sets = ", ".join(f"{c} = ?" for c in row)
        conn.execute(f"UPDATE papers SET {sets} WHERE key = ?", [*row.values(), found["key"]])
        if found["key"] != row["key"]:
            rekey_references(conn, found["key"], row["key"])
        self._identify(conn, merged, row["key"])
        counts.updated.append(row["key"])

    @staticmethod
    def _identify(conn, paper: Paper, key: str) -> None:
        """``paper_ids``: each DOI and PMID of ``paper`` names the row ``key`` (a DOI that
        already names another paper, two arXiv ids sharing it, keeps naming that one)."""
        conn.executemany("INSERT OR IGNORE INTO paper_ids (ident, paper) VALUES (?, ?)",
                         [(ident, key) for ident in paper.identifiers()])

    def get(self, key: str) -> Paper | None:
        """The stored paper with this key (arXiv id without version, or ``title:…``)."""
        rows = list(self.db["papers"].rows_where("key = ?", [key], limit=1))
        return row_to_paper(rows[0]) if rows else None

    def get_short(self, key: str) -> Paper | None:
        """The stored paper a link names by :func:`~watcher.models.short_key` (or by its key):
        a hashed ``h.…`` key through the ``short`` column's index. Two keys of one short form
        (64 bits of SHA-256: about one chance in 10^9 among 100,000 papers) name the earliest
        stored of them (then the smaller key), as the scan in storage order this replaced did.
        A re-keyed paper answers to its new key's short form only."""
        if not key.startswith("h."):
            return self.get(key)
        row = next(self.db.query(SHORT_LOOKUP, [key]), None)
        return row_to_paper(row) if row is not None else None

    def find(self, text: str) -> Paper | None:
        """A stored paper by arXiv id (any version suffix), key, DOI (any case, ``doi:`` or a
        doi.org link), ``pmid:…``, or by title."""
        ident = parse_arxiv_id(text)
        if ident and (p := self.get(ident[0])):
            return p
        if p := self.get(text.strip()):
            return p
        doi = normalize_doi(text)
        for key in (f"doi:{doi}" if doi else None, text.strip().lower()):
            row = self.db.execute("SELECT paper FROM paper_ids WHERE ident = ?", [key]).fetchone()
            if row and (p := self.get(row[0])):
                return p
        rows = list(self.db["papers"].rows_where("fingerprint = ?", [title_fingerprint(text)], limit=1))
        return row_to_paper(rows[0]) if rows else None

    def count_papers(self) -> int:
        """How many papers are stored: the sum of ``paper_counts`` (kept by triggers, m017), never
        a count of every row."""
        return self.db.execute("SELECT coalesce(sum(papers), 0) FROM paper_counts").fetchone()[0]

    def candidates(self, digest: str, channel: str, *, since_day: date | None,
                   stored_after: datetime | None) -> list[Paper]:
        """Papers listed as new and not yet delivered through (digest, channel): filed on or
        after ``since_day`` (when given; a channel's first run) and stored after
        ``stored_after`` (when given; every later run, whatever their dates)."""
        sql = """SELECT p.* FROM papers p WHERE p.listed_as_new = 1
                 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.digest = ? AND d.channel = ?
                                 AND d.paper = p.key)"""
        args: list = [digest, channel]
        if since_day is not None:
            sql += " AND p.day >= ?"
            args.append(iso(since_day))
        if stored_after is not None:
            sql += " AND p.first_seen > ?"
            args.append(stamp(stored_after))
        return [_filed_paper(r) for r in self.db.query(sql, args)]

    def count_older(self, digest: str, channel: str, before_day: date) -> int:
        """How many papers listed as new, not yet delivered through (digest, channel), were
        filed before ``before_day``: what a window starting that day leaves out."""
        sql = """SELECT count(*) FROM papers p WHERE p.listed_as_new = 1 AND p.day < ?
                 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.digest = ? AND d.channel = ?
                                 AND d.paper = p.key)"""
        return self.db.execute(sql, [iso(before_day), digest, channel]).fetchone()[0]

    def delivered_since(self, digest: str, channel: str, since_day: date) -> list[Paper]:
        """Papers listed as new, filed on or after ``since_day``, already delivered through
        (digest, channel): what ``digest --since`` leaves out."""
        sql = """SELECT p.* FROM papers p JOIN deliveries d ON d.paper = p.key
                 WHERE d.digest = ? AND d.channel = ? AND p.listed_as_new = 1 AND p.day >= ?"""
        return [row_to_paper(r) for r in self.db.query(sql, [digest, channel, iso(since_day)])]

    def revised(self, digest: str, channel: str, *, after: datetime | None) -> list[Paper]:
        """Papers delivered through (digest, channel) whose newer version, or whose journal
        version (docs/design.md), was stored after ``after`` and after the delivery — what rich formats
        list under "updated"."""
        # after a time: the papers revised since (index papers_revised, m017) looked up in the
        # ledger, CROSS JOIN keeping that order; every delivery of the channel grows all year
        sql = f"""SELECT p.* FROM papers p {'CROSS JOIN' if after is not None else 'JOIN'} deliveries d
                 ON d.paper = p.key WHERE d.digest = ? AND d.channel = ?
                 AND (p.version > COALESCE(d.version, 0) OR p.journal_at > d.delivered_at)
                 AND p.revised_at IS NOT NULL"""
        args: list = [digest, channel]
        if after is not None:
            sql += " AND p.revised_at > ?"
            args.append(stamp(after))
        return [_filed_paper(r) for r in self.db.query(sql, args)]

    def recent_days(self, days: int) -> tuple[date, date]:
        """The ``days`` days up to the newest stored paper's day (today on a running watcher;
        the sample's last day on the sample database)."""
        from datetime import timedelta

        newest = self.db.execute("SELECT max(day) FROM papers WHERE day <= ?",
                                 [(now_utc().date() + timedelta(days=1)).isoformat()]).fetchone()[0]
        end = date.fromisoformat(newest) if newest else now_utc().date()
        return end - timedelta(days=days - 1), end

    def papers_between(self, start: date, end: date) -> list[Paper]:
        """The papers of the days ``start`` to ``end`` (their ``day``)."""
        return [row_to_paper(r) for r in self.db.query("SELECT * FROM papers WHERE day >= ? AND day <= ?",
                                                       [start.isoformat(), end.isoformat()])]

    def change_serials(self) -> dict[str, int]:
        """The database's change counters (migration m005): table name -> writes so far."""
        return dict(self.db.execute("SELECT name, serial FROM changes").fetchall())

    def paper_times(self, key: str) -> PaperTimes:
        """When paper ``key`` was first seen and last changed, when a new version came, and
        its source."""
        return PaperTimes.from_row(next(self.db.query("SELECT first_seen, last_changed, revised_at, source "
                                                      "FROM papers WHERE key = ?", [key])))

    def day_signatures(self, start: date, end: date) -> dict[date, tuple]:
        """Each filing day from ``start`` to ``end`` that holds papers, with what changes when
        its papers do (their number, the last row, the last change): one indexed query."""
        return {date.fromisoformat(d): tuple(sig) for d, *sig in self.db.execute(
            "SELECT day, count(*), max(rowid), max(last_changed) FROM papers WHERE day >= ? AND day <= ? "
            "GROUP BY day", [start.isoformat(), end.isoformat()])}

    def day_papers(self, day: date, chunk: int) -> Iterator[list[Paper]]:
        """The papers filed on ``day``, ``chunk`` at a time (memory stays bounded)."""
        last = 0
        while True:
            rows = list(self.db.query("SELECT rowid, * FROM papers WHERE day = ? AND rowid > ? ORDER BY rowid "
                                      "LIMIT ?", [day.isoformat(), last, chunk]))
            if not rows:
                return
            last = rows[-1]["rowid"]
            yield [row_to_paper(r) for r in rows]  # it reads the Paper fields by name: rowid stays out

    def window_papers(self, start: date, end: date, chunk: int,
                      narrow: str | None = None) -> Iterator[list[tuple[Paper, dict, date, int]]]:
        """The papers filed from ``start`` to ``end``, ``chunk`` at a time in the order they
        were stored, each as ``(paper, its stored search words, its filing day, its rowid)`` (the words
        are :func:`~watcher.matching.index.prepare`'s ``stored``: no normalising again).
        ``narrow``: an FTS5 expression (:func:`watcher.services.search.fts_expression`); only the papers
        it matches are read, found through the full-text index within the window's rows (the
        rowids of its first and last stored papers, from the index of days), so what is read
        grows with the matches of the window, never with every paper stored."""
        days = [start.isoformat(), end.isoformat()]
        low, high = self.db.execute("SELECT min(rowid), max(rowid) FROM papers WHERE day >= ? AND day <= ?",
                                    days).fetchone()
        if low is None:
            return
        if narrow is None:
            sql = ("SELECT rowid, * FROM papers WHERE rowid > ? AND rowid <= ? AND day >= ? AND day <= ? "
                   "ORDER BY rowid LIMIT ?")
        else:
            sql = ("SELECT p.rowid, p.* FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid "
                   "WHERE papers_fts MATCH ? AND papers_fts.rowid > ? AND papers_fts.rowid <= ? "
                   "AND p.day >= ? AND p.day <= ? ORDER BY papers_fts.rowid LIMIT ?")
        last = low - 1
        while True:
            head = [narrow] if narrow is not None else []
            rows = list(self.db.query(sql, [*head, last, high, *days, chunk]))
            if not rows:
                return
            last = rows[-1]["rowid"]
            yield [filed_row(r) for r in rows]
            if len(rows) < chunk:
                return
