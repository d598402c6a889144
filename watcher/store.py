"""The SQLite store (sqlite-utils): papers, source state, runs and the delivery ledger.

Schema changes are sqlite-utils migrations, applied in order when the database is opened.

Identity (SPEC §6, §8): a paper's row key is its arXiv id without version, else ``doi:`` and its
first DOI, else ``pmid:`` and its PMID, else ``title:`` plus its title fingerprint (and its first
author's surname and first day, when known). ``paper_ids`` maps every DOI and PMID of a paper to
its key, so that a listing sharing any of them (a preprint's journal version, its PubMed record)
finds the row. A paper later seen with a better id is re-keyed to it; an id-less listing of a
paper stored with its id merges into that row, where nothing contradicts (other authors, a date
far apart). A higher version updates the row (``revised_at`` is set) and never counts as a new
paper; so does the journal version of a preprint (``journal_at`` and ``revised_at`` are set).

Every write that belongs together happens in one transaction; the ledger row for a delivery is
written only after the channel accepted it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from datetime import date, datetime
from pathlib import Path
from typing import Callable, Iterator

import sqlite_utils
from sqlite_utils.migrations import Migrations

from .masking import redact
from .errors import DatabaseLocked, DatabaseUnavailable, StoreError
from .index import search_text
from .identity import contradicts, merge, merge_batch, other_arxiv_ids
from .models import Digest, Match, Paper, Sent, normalize_doi, now_utc, short_key, title_fingerprint, utc

migrations = Migrations("watcher")


@migrations()
def m001_initial(db: sqlite_utils.Database) -> None:
    """Papers, per-source state, runs, digest state and the delivery ledger."""
    db.execute("""
        CREATE TABLE papers (
            key TEXT PRIMARY KEY, arxiv_id TEXT, version INTEGER, title TEXT NOT NULL,
            authors TEXT, abstract TEXT, published TEXT, updated TEXT, categories TEXT,
            primary_category TEXT, comment TEXT, journal_ref TEXT, doi TEXT, url TEXT,
            announce_type TEXT, upvotes INTEGER, source TEXT, announced TEXT,
            author_count INTEGER, organization TEXT, github_repo TEXT, ai_keywords TEXT,
            fingerprint TEXT NOT NULL, day TEXT, first_seen TEXT NOT NULL,
            last_changed TEXT NOT NULL, revised_at TEXT, listed_as_new INTEGER NOT NULL DEFAULT 1
        )""")
    db.execute("CREATE INDEX papers_fingerprint ON papers(fingerprint)")
    db.execute("CREATE INDEX papers_first_seen ON papers(first_seen)")
    db.execute("CREATE INDEX papers_day ON papers(day)")
    db.execute("""
        CREATE TABLE sources (
            name TEXT PRIMARY KEY, state TEXT NOT NULL DEFAULT '{}', last_attempt TEXT,
            last_success TEXT, last_error TEXT, last_error_at TEXT,
            failures INTEGER NOT NULL DEFAULT 0, last_counts TEXT
        )""")
    db.execute("""
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY, kind TEXT NOT NULL, started TEXT NOT NULL, finished TEXT,
            status TEXT, detail TEXT
        )""")
    db.execute("""
        CREATE TABLE digests (
            name TEXT PRIMARY KEY, last_run TEXT, last_success TEXT, last_status TEXT,
            last_error TEXT
        )""")
    db.execute("""
        CREATE TABLE channels (
            digest TEXT NOT NULL, channel TEXT NOT NULL, watermark TEXT, first_window TEXT,
            last_attempt TEXT,
            last_success TEXT, last_error TEXT, last_error_at TEXT, last_count INTEGER,
            PRIMARY KEY (digest, channel)
        )""")
    db.execute("""
        CREATE TABLE deliveries (
            digest TEXT NOT NULL, channel TEXT NOT NULL, paper TEXT NOT NULL,
            version INTEGER, delivered_at TEXT NOT NULL,
            PRIMARY KEY (digest, channel, paper)
        )""")


@migrations()
def m002_web_search(db: sqlite_utils.Database) -> None:
    """The web inbox (SPEC §7): a full-text index of the papers (FTS5, kept in step by
    triggers as papers are stored, updated and re-keyed), and what each delivered digest held
    (``issues``: one row per digest and date; ``issue_papers``: its papers in order, with
    score, profile and reasons). Deliveries made before this migration become issues of their
    UTC delivery date, without scores or reasons; nothing else changes."""
    db["papers"].enable_fts(["title", "abstract", "authors", "categories"], fts_version="FTS5",
                            create_triggers=True, tokenize="porter unicode61 remove_diacritics 2")
    db.execute("""
        CREATE TABLE issues (
            digest TEXT NOT NULL, day TEXT NOT NULL, title TEXT NOT NULL,
            first_delivered TEXT NOT NULL, last_delivered TEXT NOT NULL, empty_reason TEXT,
            PRIMARY KEY (digest, day)
        )""")
    db.execute("""
        CREATE TABLE issue_papers (
            digest TEXT NOT NULL, day TEXT NOT NULL, paper TEXT NOT NULL, position INTEGER NOT NULL,
            kind TEXT NOT NULL DEFAULT 'new', version INTEGER, score REAL, profile TEXT,
            reasons TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (digest, day, paper)
        )""")
    db.execute("CREATE INDEX issue_papers_paper ON issue_papers(paper)")
    db.execute("""
        INSERT INTO issues (digest, day, title, first_delivered, last_delivered)
        SELECT digest, substr(delivered_at, 1, 10), digest, min(delivered_at), max(delivered_at)
        FROM deliveries GROUP BY digest, substr(delivered_at, 1, 10)""")
    db.execute("""
        INSERT OR IGNORE INTO issue_papers (digest, day, paper, position, version)
        SELECT digest, substr(delivered_at, 1, 10), paper,
               row_number() OVER (PARTITION BY digest, substr(delivered_at, 1, 10)
                                  ORDER BY delivered_at, paper), version
        FROM deliveries""")


@migrations()
def m003_ratings(db: sqlite_utils.Database) -> None:
    """Ratings (SPEC §7): per profile and paper up or down, when and from where; the global
    reading list. Keyed by profile *name*, so ratings outlive profile edits and removals."""
    db.execute("""
        CREATE TABLE ratings (
            profile TEXT NOT NULL, paper TEXT NOT NULL,
            value TEXT NOT NULL CHECK (value IN ('up', 'down')),
            rated_at TEXT NOT NULL, source TEXT NOT NULL,
            PRIMARY KEY (profile, paper)
        )""")
    db.execute("CREATE INDEX ratings_paper ON ratings(paper)")
    db.execute("""
        CREATE TABLE saved (
            paper TEXT PRIMARY KEY, saved_at TEXT NOT NULL, source TEXT NOT NULL
        )""")


@migrations()
def m004_tldr_cache(db: sqlite_utils.Database) -> None:
    """The summarizer's memory (SPEC §7): a model's TL;DR per paper, asked for once ever (``tldr``
    NULL: the model answered with nothing usable), and the calls made per UTC day."""
    db.execute("""
        CREATE TABLE tldr_cache (
            paper TEXT PRIMARY KEY, tldr TEXT, model TEXT NOT NULL, created TEXT NOT NULL
        )""")
    db.execute("CREATE TABLE tldr_calls (day TEXT PRIMARY KEY, calls INTEGER NOT NULL DEFAULT 0)")


@migrations()
def m005_change_counters(db: sqlite_utils.Database) -> None:
    """Change counters (``changes``): every insert, update or delete of a paper or a rating
    adds one to its counter, by triggers, whoever writes. What is compiled from papers and
    ratings (a profile's matcher, with its examples and ratings) is kept by these numbers
    (:class:`watcher.compile.Compiled`): unlike a summary (a count, the latest time), they never
    come back to an earlier value."""
    db.execute("CREATE TABLE changes (name TEXT PRIMARY KEY, serial INTEGER NOT NULL DEFAULT 0)")
    db.execute("INSERT INTO changes (name, serial) VALUES ('papers', 0), ('ratings', 0)")
    for table in ("papers", "ratings"):
        for event in ("INSERT", "UPDATE", "DELETE"):
            db.execute(f"""
                CREATE TRIGGER {table}_changes_{event.lower()} AFTER {event} ON {table}
                BEGIN UPDATE changes SET serial = serial + 1 WHERE name = '{table}'; END""")


@migrations()
def m006_web_sessions(db: sqlite_utils.Database) -> None:
    """The web inbox's session generation (one row): every session cookie carries the number;
    logout and a new password add one to it, which ends every session made before
    (:mod:`watcher.web.sessions`). ``salt`` and ``fingerprint`` (scrypt) tell a new password."""
    db.execute("CREATE TABLE web_sessions (id INTEGER PRIMARY KEY CHECK (id = 1), "
               "generation INTEGER NOT NULL, salt BLOB, fingerprint BLOB)")
    db.execute("INSERT INTO web_sessions (id, generation) VALUES (1, 0)")


@migrations()
def m007_works(db: sqlite_utils.Database) -> None:
    """One paper per work across arXiv, bioRxiv/medRxiv, PubMed and journals (SPEC §8): every
    DOI of a paper (``dois``), its PMID and PMCID, the journal that published it, the venues
    and sources that announced it, when the store learnt of its journal version
    (``journal_at``), and ``paper_ids``: each DOI and PMID -> the paper's key. Existing papers
    keep their rows and history: their DOI is lower-cased, an id-less paper with a DOI is
    re-keyed to ``doi:…`` (its deliveries, issues, ratings and saved mark with it), and a
    paper's source becomes its first source."""
    for column in ("dois", "pmid", "pmcid", "journal", "venues", "sources", "journal_at"):
        db.execute(f"ALTER TABLE papers ADD COLUMN {column} TEXT")
    db.execute("CREATE TABLE paper_ids (ident TEXT PRIMARY KEY, paper TEXT NOT NULL)")
    db.execute("CREATE INDEX paper_ids_paper ON paper_ids(paper)")
    db.execute("UPDATE papers SET sources = json_array(source) WHERE source IS NOT NULL")
    conn = db.conn
    rows = conn.execute("SELECT key, doi, arxiv_id FROM papers WHERE doi IS NOT NULL "
                        "ORDER BY first_seen, key").fetchall()
    for key, raw, arxiv_id in rows:
        doi = normalize_doi(raw)
        if doi is None:
            continue
        conn.execute("UPDATE papers SET doi = ?, dois = json_array(?) WHERE key = ?", (doi, doi, key))
        new_key = key if arxiv_id else "doi:" + doi
        if new_key != key:
            if conn.execute("SELECT 1 FROM papers WHERE key = ?", (new_key,)).fetchone():
                # two id-less rows of one DOI: one work, the later joins the earlier
                conn.execute("DELETE FROM papers WHERE key = ?", (key,))
                rekey_references(conn, key, new_key)
                continue
            conn.execute("UPDATE papers SET key = ? WHERE key = ?", (new_key, key))
            rekey_references(conn, key, new_key)
        conn.execute("INSERT OR IGNORE INTO paper_ids (ident, paper) VALUES (?, ?)",
                     ("doi:" + doi, new_key))


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


@migrations()
def m008_messages(db: sqlite_utils.Database) -> None:
    """What each delivered message showed (SPEC §7 "One truth"): ``messages``, one row per
    message a channel accepted (digest, date, channel, its number that day through that
    channel, when, how many parts a size limit split it into), and ``message_papers``, its
    papers in order with kind, version, score, profile, reasons, TL;DR and ``shown``
    (``full``, or ``title`` when a size limit listed it as a title with a link).

    Deliveries recorded before become messages too: one per digest, issue, channel and time of
    delivery, from the ledger and the issue's papers (TL;DR and ``shown`` unknown)."""
    db.execute("""
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY, digest TEXT NOT NULL, day TEXT NOT NULL, channel TEXT NOT NULL,
            number INTEGER NOT NULL, title TEXT NOT NULL, sent_at TEXT NOT NULL,
            empty_reason TEXT, parts INTEGER,
            UNIQUE (digest, day, channel, number)
        )""")
    db.execute("""
        CREATE TABLE message_papers (
            message INTEGER NOT NULL REFERENCES messages(id), position INTEGER NOT NULL,
            paper TEXT NOT NULL, kind TEXT NOT NULL DEFAULT 'new', version INTEGER, score REAL,
            profile TEXT, reasons TEXT NOT NULL DEFAULT '[]', tldr TEXT, shown TEXT,
            PRIMARY KEY (message, position)
        )""")
    db.execute("CREATE INDEX message_papers_paper ON message_papers(paper)")
    db.execute("""
        INSERT INTO messages (digest, day, channel, number, title, sent_at)
        SELECT i.digest, i.day, d.channel,
               row_number() OVER (PARTITION BY i.digest, i.day, d.channel ORDER BY d.delivered_at),
               i.title, d.delivered_at
        FROM issues i JOIN deliveries d ON d.digest = i.digest
             AND d.delivered_at BETWEEN i.first_delivered AND i.last_delivered
        JOIN issue_papers ip ON ip.digest = i.digest AND ip.day = i.day AND ip.paper = d.paper
        GROUP BY i.digest, i.day, d.channel, d.delivered_at""")
    db.execute("""
        INSERT INTO message_papers (message, position, paper, kind, version, score, profile, reasons)
        SELECT id, row_number() OVER (PARTITION BY id ORDER BY kind = 'updated', position), paper,
               kind, version, score, profile, reasons
        FROM (SELECT m.id, ip.position, ip.paper, ip.kind, d.version, ip.score, ip.profile, ip.reasons
              FROM messages m JOIN deliveries d ON d.digest = m.digest AND d.channel = m.channel
                   AND d.delivered_at = m.sent_at
              JOIN issue_papers ip ON ip.digest = m.digest AND ip.day = m.day AND ip.paper = d.paper
                   AND ip.kind = 'new'
              UNION ALL  -- revised papers: the ledger does not say which message listed them
              SELECT m.id, ip.position, ip.paper, ip.kind, ip.version, ip.score, ip.profile, ip.reasons
              FROM messages m JOIN issue_papers ip ON ip.digest = m.digest AND ip.day = m.day
                   AND ip.kind = 'updated'
              WHERE m.number = 1)""")


@migrations()
def m009_search_text(db: sqlite_utils.Database) -> None:
    """Search is the query language (SPEC §7): the full-text index holds the matcher's own
    normalised words (:func:`watcher.index.search_text`) instead of the raw text under a
    Porter stemmer, which found "learned" for ``learning``, cs.LG for ``cat:lg``, and missed
    ``Pok\\'emon`` for ``pokemon``. New columns hold those words for every paper, filled here
    for the stored ones; the index is built again over them (categories keep their dots and
    hyphens, as whole tokens)."""
    for column in ("search_title", "search_abstract", "search_authors", "search_categories"):
        db.execute(f"ALTER TABLE papers ADD COLUMN {column} TEXT")
    conn = db.conn
    cursor = conn.execute("SELECT rowid AS _rowid, * FROM papers")
    names = [d[0] for d in cursor.description]
    for values in cursor.fetchall():
        row = dict(zip(names, values))
        text = search_text(row_to_paper(row))
        conn.execute("UPDATE papers SET search_title = ?, search_abstract = ?, search_authors = ?, "
                     "search_categories = ? WHERE rowid = ?", [*text.values(), row["_rowid"]])
    db["papers"].disable_fts()
    db["papers"].enable_fts(["search_title", "search_abstract", "search_authors", "search_categories"],
                            fts_version="FTS5", create_triggers=True, tokenize="unicode61 tokenchars '.-'",
                            replace=True)


@migrations()
def m010_deliveries_by_paper(db: sqlite_utils.Database) -> None:
    """An index of the ledger by paper: which digests delivered a paper (the profiles its
    rating buttons are for, its page's deliveries) was a scan of every delivery per paper."""
    db.execute("CREATE INDEX IF NOT EXISTS deliveries_paper ON deliveries(paper)")


@migrations()
def m011_short_keys(db: sqlite_utils.Database) -> None:
    """``short``: the hashed form (``h.…``, :func:`~watcher.models.short_key`) of a key that
    links cannot carry as it is (a paper without an arXiv id), indexed; NULL where links carry
    the key itself. A rating link, web address or e-mail naming such a paper was resolved by
    hashing the key of every paper without an arXiv id. Filled here for the stored papers,
    with the triggers of ``papers`` set aside meanwhile (the column is neither searched nor
    compiled into anything; re-indexing each row's text made this six times slower)."""
    db.execute("ALTER TABLE papers ADD COLUMN short TEXT")
    conn = db.conn
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
                            "AND tbl_name = 'papers'").fetchall()
    for name, _ in triggers:
        conn.execute(f'DROP TRIGGER "{name}"')
    rows = conn.execute("SELECT rowid, key FROM papers").fetchall()
    conn.executemany("UPDATE papers SET short = ? WHERE rowid = ?",
                     [(short, rowid) for rowid, key in rows if (short := _short(key))])
    for _, sql in triggers:
        conn.execute(sql)
    db.execute("CREATE INDEX papers_short ON papers(short, first_seen, key) WHERE short IS NOT NULL")


@migrations()
def m012_papers_as_sent(db: sqlite_utils.Database) -> None:
    """``message_papers.paper_sent``: each paper of a message as it was sent (SPEC §11): its
    fields (title, authors, version, journal, abstract, links ...) as JSON
    (:func:`paper_snapshot`). A message's pages, twins and the static site show that, not the
    paper as stored now (a later version, a journal's title), and say when it changed since.
    NULL for papers recorded before: those show the paper as stored now, marked as such."""
    db.execute("ALTER TABLE message_papers ADD COLUMN paper_sent TEXT")


@migrations()
def m013_field_origins(db: sqlite_utils.Database) -> None:
    """``origins``: where each of a paper's merged fields came from and how it was read (JSON,
    ``{"authors": "pubmed:list", "journal": "feed:channel", …}``, :attr:`Paper.origins`), so
    that merging listings keeps the better value whatever their order and ``watcher explain``
    can say where a field came from. Stored papers have none: their fields count as read
    from structured metadata until another listing of them says more. (m012 is left to
    another change made at the same time.)"""
    db.execute("ALTER TABLE papers ADD COLUMN origins TEXT")


@migrations()
def m014_zotero(db: sqlite_utils.Database) -> None:
    """Zotero (SPEC §10, :mod:`watcher.zotsync`): ``zotero_places``, per place examples are read
    from (a collection, tag or saved search of a library), the library version last read and
    how the last sync went; ``zotero_items``, the items read there (the paper each is, as JSON:
    examples even when watcher never stored the paper); ``zotero_saves``, the ledger of saved
    papers added to a Zotero collection (the write token sent, the item made)."""
    db.execute("CREATE TABLE zotero_places (place TEXT PRIMARY KEY, version INTEGER, items INTEGER, "
               "last_success TEXT, last_error TEXT, last_error_at TEXT, failures INTEGER NOT NULL DEFAULT 0)")
    db.execute("CREATE TABLE zotero_items (place TEXT NOT NULL, item TEXT NOT NULL, version INTEGER, "
               "paper TEXT NOT NULL, PRIMARY KEY (place, item))")
    db.execute("CREATE TABLE zotero_saves (target TEXT NOT NULL, paper TEXT NOT NULL, token TEXT, "
               "item TEXT, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, queued_at TEXT, "
               "done_at TEXT, last_error TEXT, PRIMARY KEY (target, paper))")


@migrations()
def m015_citations(db: sqlite_utils.Database) -> None:
    """Citations and followed authors (SPEC §10): ``cites``, the followed works a paper cites,
    and ``followed``, the followed authors who wrote it, each a JSON list of ``key|title`` /
    ``key|name`` (:mod:`watcher.formats.openalex`); NULL for papers stored before."""
    for column in ("cites", "followed"):
        db.execute(f"ALTER TABLE papers ADD COLUMN {column} TEXT")


# Store.delivered_under's one query (a rating's profile, watcher.ratings.owners_of): the ledger and
# the messages' papers found by paper, the messages by id
DELIVERED_UNDER = """
    SELECT DISTINCT d.paper, d.digest, d.channel, mp.profile
    FROM deliveries d LEFT JOIN message_papers mp ON mp.paper = d.paper AND mp.profile <> ''
         AND EXISTS (SELECT 1 FROM messages m WHERE m.id = mp.message AND m.digest = d.digest
                     AND m.channel = d.channel)
    WHERE d.paper IN ({})"""

# Store.get_short's one query: the index papers_short (m011) answers it, order and all
SHORT_LOOKUP = "SELECT * FROM papers WHERE short = ? ORDER BY first_seen, key LIMIT 1"

_PAPER_FIELDS = [f.name for f in fields(Paper)]
_JSON_FIELDS = {"authors", "categories", "ai_keywords", "dois", "venues", "sources", "cites", "followed"}
_REPLACE_TYPES = ("replace", "replace-cross")


def iso(dt: datetime | date | None) -> str | None:
    """A datetime as ISO 8601 UTC text (sortable), a date as YYYY-MM-DD."""
    if dt is None:
        return None
    if isinstance(dt, datetime):
        return utc(dt).isoformat(timespec="seconds")
    return dt.isoformat()


def stamp(dt: datetime) -> str:
    """A datetime as ISO 8601 UTC text with microseconds: for the times compared with each
    other (``first_seen``, ``revised_at``, watermarks), so that a paper stored in the same second
    as a delivery still counts as stored after it. Sorts correctly against :func:`iso` text."""
    return utc(dt).isoformat(timespec="microseconds")


def parse_time(text: str | None) -> datetime | None:
    """The inverse of :func:`iso` for datetimes."""
    return datetime.fromisoformat(text) if text else None


def local(when: datetime, tz) -> str:
    """``when`` (naive: UTC) in ``tz``, as status shows every time: ``2025-04-12T23:59:00+02:00``."""
    return utc(when).astimezone(tz).isoformat(timespec="seconds")


def local_text(text: str | None, tz) -> str:
    """A stored UTC time (``2025-04-12T21:59:00``) in ``tz`` as :func:`local` shows it; "" for none."""
    return local(parse_time(text), tz) if text else ""


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


def _equal(**columns) -> tuple[str, list]:
    """A WHERE clause (and its arguments) asking each column for its value; None: any."""
    given = {c: v for c, v in columns.items() if v is not None}
    return " AND ".join([f"{c} = ?" for c in given] or ["1"]), list(given.values())


def _check_intact(conn: sqlite3.Connection) -> None:
    """``PRAGMA quick_check`` (milliseconds for a few MB, about 0.1 s for 200 MB): a damaged
    page raises before the first write could touch the file."""
    result = conn.execute("PRAGMA quick_check(1)").fetchone()
    if not result or result[0] != "ok":
        error = sqlite3.DatabaseError(f"database disk image is malformed ({result[0] if result else 'no answer'})")
        error.sqlite_errorname = "SQLITE_CORRUPT"
        raise error


def busy_timeout() -> float:
    """Seconds a connection waits for another writer's lock before giving up (30; the tests
    shorten it with ``$WATCHER_DB_TIMEOUT``)."""
    try:
        return max(0.0, float(os.environ.get("WATCHER_DB_TIMEOUT", "30")))
    except ValueError:
        return 30.0


def error_kind(error: BaseException) -> str:
    """What an SQLite error means, from its extended result code name (``sqlite_errorname``,
    Python 3.11+), never from its message text: ``locked`` (SQLITE_BUSY*, SQLITE_LOCKED*),
    ``readonly``, ``damaged`` (SQLITE_CORRUPT*, SQLITE_NOTADB), ``cantopen`` (SQLITE_CANTOPEN*,
    SQLITE_IOERR*), ``full``, else ``other`` (a constraint, a misuse: one step's problem)."""
    name = getattr(error, "sqlite_errorname", None) or ""
    for prefix, kind in (("SQLITE_BUSY", "locked"), ("SQLITE_LOCKED", "locked"),
                         ("SQLITE_READONLY", "readonly"), ("SQLITE_CORRUPT", "damaged"),
                         ("SQLITE_NOTADB", "damaged"), ("SQLITE_CANTOPEN", "cantopen"),
                         ("SQLITE_IOERR", "cantopen"), ("SQLITE_FULL", "full")):
        if name.startswith(prefix):
            return kind
    return "other"


def database_error(path, error: sqlite3.Error, *, opening: bool = False,
                   waited: float | None = None) -> StoreError:
    """A StoreError that says in words what an SQLite error means for the user; a
    :class:`DatabaseUnavailable` when the database as a whole cannot be used (a
    :class:`DatabaseLocked` when another program held the write lock for longer than the
    wait). ``waited``: the seconds this write actually waited for the lock (measured by
    :meth:`Store.writing`); a message claims no wait it did not measure."""
    text = " ".join(str(error).replace("***", "").split())
    kind = error_kind(error)
    if kind == "locked":
        how = "" if waited is None else f" (waited {waited:.0f}s)" if waited >= 1 else f" (waited {waited:.1f}s)"
        return DatabaseLocked(f"{path}: the database is locked by another program{how}; try again "
                              "once it has finished")
    if kind == "readonly":
        return DatabaseUnavailable(f"{path}: the database is read-only for this user; check the "
                                   "permissions of the file and of its folder")
    if kind == "damaged" and opening:
        return DatabaseUnavailable(f"{path}: the file is damaged or not a watcher database ({text}); "
                                   "nothing was changed — restore it from a backup, or move it away to "
                                   "start afresh")
    if kind == "damaged":
        return DatabaseUnavailable(f"{path}: the database file is damaged ({text}); watcher stopped "
                                   "there — restore it from a backup, or move it away to start afresh")
    if kind == "cantopen":
        return DatabaseUnavailable(f"{path}: cannot open the database ({text}); check that the file and "
                                   "its folder exist and are readable and writable")
    if kind == "full":
        return DatabaseUnavailable(f"{path}: the disk is full ({text})")
    if opening:
        return DatabaseUnavailable(f"{path}: cannot open the database ({text}); it may not be a watcher "
                                   "database — nothing was changed")
    return StoreError(f"{path}: database error ({text})")  # one step's problem, not the file's


def no_database(path: str | Path) -> StoreError:
    """The error of a command that reads the database when there is none yet (exit 1)."""
    return StoreError(f"{path}: no database yet (run 'watcher fetch' or 'watcher once' first)")


def connect_readonly(path: Path, timeout: float) -> sqlite3.Connection:
    """A read-only connection to the database at ``path`` (SQLite's ``mode=ro``: it creates
    nothing and any write raises), waiting up to ``timeout`` seconds for another's lock."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=timeout,
                           isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return conn


def copy_database(database: Path, copy: Path) -> None:
    """A consistent copy of ``database`` at ``copy`` through SQLite's backup API (a snapshot
    even while another process writes), as one self-contained file (no journal beside it)."""
    src = connect_readonly(database, busy_timeout())
    dst = sqlite3.connect(copy)
    try:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")
    finally:
        src.close()
        dst.close()


STATE_ERROR_NOT_KEPT = "(failed; the error itself is not kept in a saved state file)"


def strip_for_state(path: Path, keep_ratings: bool = False) -> None:
    """Leave in the database copy at ``path`` only what a saved state file holds (papers, the
    ledger, messages and the sources' state: :mod:`watcher.statefile`): no web password
    material, no stored errors, and no ratings or saved list unless ``keep_ratings``; then
    rebuild the file so nothing deleted survives in its free pages."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA secure_delete=ON")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        steps = [("web_sessions", "UPDATE web_sessions SET salt = NULL, fingerprint = NULL", ()),
                 ("runs", "UPDATE runs SET detail = NULL", ())]
        steps += [(t, f"UPDATE {t} SET last_error = ? WHERE last_error IS NOT NULL", (STATE_ERROR_NOT_KEPT,))
                  for t in ("sources", "channels", "digests")]
        if not keep_ratings:
            steps += [(t, f"DELETE FROM {t}", ()) for t in ("ratings", "saved")]
        for table, sql, args in steps:
            if table in tables:  # a database of an older schema may lack one
                conn.execute(sql, args)
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()


def saved_database_intact(path: Path) -> bool:
    """Whether the database file at ``path`` passes ``PRAGMA quick_check``; sqlite3.Error when
    it is no watcher database at all (no ``deliveries`` table)."""
    conn = sqlite3.connect(path)
    try:
        ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        conn.execute("SELECT count(*) FROM deliveries").fetchone()
    finally:
        conn.close()
    return ok


def require_database(path: str | Path) -> None:
    """For the commands that only read: refuse, instead of creating an empty database."""
    if not Path(path).exists():
        raise no_database(path)


class Store:
    """A watcher database. Open with :meth:`open`; use as a context manager to close it."""

    def __init__(self, db: sqlite_utils.Database, path: Path | None):
        self.db = db
        self.path = path

    @classmethod
    def open(cls, path: str | Path | None, *, readonly: bool = False) -> "Store":
        """Open (creating and migrating) the database at ``path``; None means in memory.
        ``readonly``: open an existing database as it is, through a read-only connection
        (SQLite's ``mode=ro``: nothing is created, migrated or written; a write raises)."""
        try:
            if path is None:
                db = sqlite_utils.Database(memory=True)
            elif readonly:
                path = Path(path)
                if not path.exists():
                    raise no_database(path)
                db = sqlite_utils.Database(connect_readonly(path, busy_timeout()))
            else:
                path = Path(path)
                existed = path.exists() and path.stat().st_size > 0
                path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(path), timeout=busy_timeout(), isolation_level=None)
                db = sqlite_utils.Database(conn)
                try:
                    if existed:  # refuse a damaged file before writing to it
                        _check_intact(conn)
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute("PRAGMA synchronous=NORMAL")
                    migrations.apply(db)
                except BaseException:
                    conn.close()
                    raise
            if path is None and not readonly:
                migrations.apply(db)
        except sqlite3.Error as e:
            raise database_error(path, e, opening=True) from None
        except OSError as e:
            raise StoreError(f"{path}: cannot create the database ({e.strerror})") from None
        return cls(db, path)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def writing(self) -> Iterator["Store"]:
        """One write transaction, started ``BEGIN IMMEDIATE``: the write lock is taken before
        the first read, so the connection's busy timeout really waits for another writer (a
        deferred ``BEGIN`` that reads, then writes after another connection committed, gets
        SQLITE_BUSY_SNAPSHOT at once, whatever the timeout). Commits at the end, rolls back on
        any error. Nested inside another transaction it is a savepoint of that one. Every
        write of watcher goes through here (papers, sources, the ledger, runs, ratings, the
        TL;DR cache). SQLite errors become :func:`database_error`'s, with the wait measured."""
        conn = self.db.conn
        if conn.in_transaction:
            with self.db.atomic():  # a SAVEPOINT inside the transaction already open
                yield self
            return
        started = time.monotonic()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise database_error(self.path, e, waited=time.monotonic() - started) from None
        try:
            yield self
            conn.execute("COMMIT")
        except BaseException as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(e, sqlite3.Error):
                raise database_error(self.path, e, waited=time.monotonic() - started) from None
            raise

    # --- papers -----------------------------------------------------------------------------

    def upsert(self, papers: list[Paper], now: datetime, *, backfill: bool = False) -> UpsertCounts:
        """Store a batch of papers by the identity rules, in one transaction. Listings of the
        same paper within the batch are merged first, so a batch stored twice is unchanged.
        Papers first stored by a ``backfill`` (``watcher fetch --since``) are history: they
        are never listed as new in a digest."""
        counts = UpsertCounts()
        conn = self.db.conn
        when = stamp(now)
        with self.writing():
            for paper in merge_batch(papers):
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
        from .models import parse_arxiv_id

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
        """How many papers are stored."""
        return self.db["papers"].count

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

    def all_sources_failed(self, names) -> bool:
        """True when each of the sources ``names`` (at least one) was fetched and its last
        attempt failed."""
        rows = {r["name"]: r for r in self.db["sources"].rows}
        return bool(names) and all(
            n in rows and rows[n]["last_error_at"] and rows[n]["last_error_at"] == rows[n]["last_attempt"]
            for n in names)

    def delivered_since(self, digest: str, channel: str, since_day: date) -> list[Paper]:
        """Papers listed as new, filed on or after ``since_day``, already delivered through
        (digest, channel): what ``digest --since`` leaves out."""
        sql = """SELECT p.* FROM papers p JOIN deliveries d ON d.paper = p.key
                 WHERE d.digest = ? AND d.channel = ? AND p.listed_as_new = 1 AND p.day >= ?"""
        return [row_to_paper(r) for r in self.db.query(sql, [digest, channel, iso(since_day)])]

    def revised(self, digest: str, channel: str, *, after: datetime | None) -> list[Paper]:
        """Papers delivered through (digest, channel) whose newer version, or whose journal
        version (SPEC §8), was stored after ``after`` and after the delivery — what rich formats
        list under "updated"."""
        sql = """SELECT p.* FROM papers p JOIN deliveries d ON d.paper = p.key
                 WHERE d.digest = ? AND d.channel = ?
                 AND (p.version > COALESCE(d.version, 0) OR p.journal_at > d.delivered_at)
                 AND p.revised_at IS NOT NULL"""
        args: list = [digest, channel]
        if after is not None:
            sql += " AND p.revised_at > ?"
            args.append(stamp(after))
        return [_filed_paper(r) for r in self.db.query(sql, args)]

    # --- sources ----------------------------------------------------------------------------

    def source_state(self, name: str) -> dict:
        """The saved state dict of a source (ETag, cursors, ...)."""
        rows = list(self.db["sources"].rows_where("name = ?", [name]))
        return json.loads(rows[0]["state"]) if rows else {}

    def source_ok(self, name: str, state: dict, counts: dict, now: datetime) -> None:
        """Record a successful fetch: new state, counts, failures reset."""
        with self.writing():
            self.db["sources"].upsert({
                "name": name, "state": json.dumps(state), "last_attempt": iso(now),
                "last_success": iso(now), "failures": 0, "last_counts": json.dumps(counts),
            }, pk="name")

    def source_failed(self, name: str, error: str, now: datetime) -> None:
        """Record a failed fetch; the state stays as it was."""
        with self.writing():
            rows = list(self.db["sources"].rows_where("name = ?", [name]))
            failures = (rows[0]["failures"] if rows else 0) + 1
            self.db["sources"].upsert({"name": name, "last_attempt": iso(now), "last_error": redact(error),
                                       "last_error_at": iso(now), "failures": failures}, pk="name")

    def sources(self) -> list[dict]:
        """All rows of the sources table, with the number of papers each source stored first."""
        counts = {r["source"]: r["n"] for r in self.db.query(
            "SELECT source, count(*) AS n FROM papers GROUP BY source")}
        return [dict(r, papers=counts.get(r["name"], 0)) for r in self.db["sources"].rows]

    # --- the summarizer's cache and budget ----------------------------------------------------

    def tldr_cached(self, keys: list[str]) -> dict[str, str | None]:
        """The remembered model TL;DRs of these papers (None: asked, nothing usable came back)."""
        return dict(self.rows_in("SELECT paper, tldr FROM tldr_cache WHERE paper IN ({})", keys))

    def tldrs_recorded(self, keys: list[str]) -> dict[str, str]:
        """The TL;DR recorded for each of these papers: the summarizer's remembered model
        TL;DR, else the one the latest message that showed it carried; a paper with neither is
        left out (its TL;DR is the extractive one, :func:`watcher.tldr.stored_tldrs`). A
        message's own cards show the TL;DR that message carried (:meth:`issue`)."""
        out = dict(self.rows_in("SELECT paper, tldr FROM message_papers WHERE tldr IS NOT NULL "
                                "AND paper IN ({}) ORDER BY message, position", keys))
        out.update({k: t for k, t in self.tldr_cached(keys).items() if t})
        return out

    def rows_in(self, sql: str, keys) -> list[tuple]:
        """The rows of ``sql`` whose ``IN ({})`` takes ``keys``, asked in chunks of 500 (within
        SQLite's limit on parameters)."""
        keys = list(keys)
        rows = []
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            rows += self.db.execute(sql.format(",".join("?" * len(chunk))), chunk).fetchall()
        return rows

    def tldr_remember(self, rows: list[tuple[str, str | None]], model: str,
                      now: datetime | None) -> None:
        """Keep (paper key, TL;DR or None) pairs; a paper is never asked for again."""
        if rows:
            when = iso(now or now_utc())
            with self.writing():
                self.db["tldr_cache"].upsert_all(
                    [{"paper": k, "tldr": t, "model": model, "created": when} for k, t in rows], pk="paper")

    def tldr_calls(self, day: str) -> int:
        """Calls made to the summarizer's endpoint on ``day`` (YYYY-MM-DD, UTC)."""
        row = self.db.execute("SELECT calls FROM tldr_calls WHERE day = ?", [day]).fetchone()
        return row[0] if row else 0

    def tldr_count_calls(self, day: str, calls: int) -> None:
        """Add ``calls`` to ``day``'s count."""
        if calls:
            with self.writing():
                self.db.execute("INSERT INTO tldr_calls (day, calls) VALUES (?, ?) ON CONFLICT(day) "
                                "DO UPDATE SET calls = calls + excluded.calls", [day, calls])

    # --- digests, channels, ledger ----------------------------------------------------------

    def channel_state(self, digest: str, channel: str) -> dict:
        """The (digest, channel) row, or {} before the first run."""
        rows = list(self.db["channels"].rows_where("digest = ? AND channel = ?", [digest, channel]))
        return rows[0] if rows else {}

    def record_delivery(self, digest: str, channel: str, papers: list[Paper], now: datetime,
                        issue: Digest | None = None, sent: Sent | None = None) -> None:
        """After the channel accepted: ledger rows for ``papers`` and the watermark moved to now,
        in one transaction. An empty ``papers`` (nothing to send) only moves the watermark.
        ``issue``, the digest as sent, is kept as the channel's message (:meth:`record_message`,
        with what ``sent`` says the channel showed of it)."""
        with self.writing():
            if issue is not None:
                self.record_message(issue, channel, now, sent)
            self._ledger(digest, channel, papers, now)
            row = {"digest": digest, "channel": channel, "watermark": stamp(now),
                   "last_attempt": iso(now), "last_error": None}
            if papers:  # "last delivery" in status means the last digest actually sent
                row.update(last_success=iso(now), last_count=len(papers))
            self.db["channels"].upsert(row, pk=("digest", "channel"))

    def record_shown(self, digest: str, channel: str, papers: list[Paper], now: datetime,
                     issue: Digest | None = None, sent: Sent | None = None) -> None:
        """Ledger rows for ``papers`` that a channel showed before it failed (the accepted parts
        of a split e-mail), and with ``issue`` the message of just those papers; the watermark
        stays, so the next run still sends the rest."""
        with self.writing():
            if issue is not None:
                keys = {p.key for p in papers}
                self.record_message(replace(issue, matches=[m for m in issue.matches if m.paper.key in keys]),
                                    channel, now, sent)
            self._ledger(digest, channel, papers, now)

    def _ledger(self, digest: str, channel: str, papers: list[Paper], now: datetime) -> None:
        """The ledger rows: ``papers`` delivered through (digest, channel) at ``now``."""
        self.db["deliveries"].upsert_all(
            [{"digest": digest, "channel": channel, "paper": p.key, "version": p.version,
              "delivered_at": iso(now)} for p in papers],
            pk=("digest", "channel", "paper"))

    def next_message(self, digest: str, day: date, channel: str) -> int:
        """The number the next message of (digest, date, channel) gets: 1 for the first that
        day through that channel (what its "view in browser" link names before it is sent)."""
        return self.db.execute("SELECT coalesce(max(number), 0) + 1 FROM messages WHERE digest = ? "
                               "AND day = ? AND channel = ?", [digest, iso(day), channel]).fetchone()[0]

    def record_message(self, issue: Digest, channel: str, now: datetime, sent: Sent | None = None) -> int:
        """Keep what one delivered message showed: the ``issues`` row of (digest, date), and a
        ``messages`` row with its papers in order (new, then updated), each with score, profile,
        reasons, TL;DR and how it was shown (``sent``: what a size limit cut). Returns its id."""
        day = iso(issue.date)
        when = iso(now)
        self.db.execute("""
            INSERT INTO issues (digest, day, title, first_delivered, last_delivered, empty_reason)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (digest, day) DO UPDATE SET last_delivered = excluded.last_delivered,
                title = excluded.title""",
                        [issue.name, day, issue.title, when, when, issue.empty_reason])
        sent = sent or Sent()
        number = self.next_message(issue.name, issue.date, channel)
        message = self.db.execute(
            "INSERT INTO messages (digest, day, channel, number, title, sent_at, empty_reason, parts) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [issue.name, day, channel, number, issue.title, when, issue.empty_reason, sent.parts]).lastrowid
        rows = [(m, "new") for m in issue.matches] + [(m, "updated") for m in issue.updated]
        self.db.conn.executemany("""
            INSERT INTO message_papers (message, position, paper, kind, version, score, profile,
                                        reasons, tldr, shown, paper_sent)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                            [(message, i, m.paper.key, kind, m.paper.version, round(m.score, 4), m.profile,
                              json.dumps(list(m.reasons), ensure_ascii=False), m.tldr,
                              "title" if kind == "new" and m.paper.key in sent.titles_only else "full",
                              paper_snapshot(m.paper))
                             for i, (m, kind) in enumerate(rows, 1)])
        return message

    def issues(self, digest: str | None = None, *, day: str | None = None, limit: int | None = None,
               offset: int = 0) -> list[dict]:
        """Delivered digests, newest date first (of one digest, and of one date, when named),
        each with its ``messages`` (channel, number, ``papers``: how many new papers it showed)
        in the order they were sent."""
        where, args = _equal(digest=digest, day=day)
        sql = f"SELECT * FROM issues WHERE {where} ORDER BY day DESC, digest"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            args += [limit, offset]
        return self._with_messages(list(self.db.query(sql, args)))

    def latest_issues(self) -> list[dict]:
        """The newest delivered issue of each digest, with its ``messages`` as :meth:`issues`."""
        return self._with_messages(list(self.db.query("""
            SELECT i.* FROM issues i
            WHERE i.day = (SELECT max(day) FROM issues j WHERE j.digest = i.digest)
            ORDER BY i.digest""")))

    def _with_messages(self, issues: list[dict]) -> list[dict]:
        by_issue = {(i["digest"], i["day"]): i for i in issues}
        for issue in issues:
            issue["messages"] = []
        for row in self.db.query(f"""
                SELECT m.digest, m.day, m.channel, m.number, m.sent_at, m.parts,
                       (SELECT count(*) FROM message_papers mp WHERE mp.message = m.id
                        AND mp.kind = 'new') AS papers
                FROM messages m WHERE m.digest || char(0) || m.day IN ({",".join("?" * len(by_issue))})
                ORDER BY m.sent_at, m.id""", [f"{d}\0{day}" for d, day in by_issue]):
            by_issue[(row["digest"], row["day"])]["messages"].append(row)
        return issues

    def issue_profile_counts(self, digest: str, day: str) -> dict[str, int]:
        """How many papers each profile brought to the issue of ``digest`` on ``day``, as its
        messages recorded them (a paper counted once, whatever the channels)."""
        return dict(self.db.execute("""
            SELECT mp.profile, count(DISTINCT mp.paper) FROM message_papers mp
            JOIN messages m ON m.id = mp.message
            WHERE m.digest = ? AND m.day = ? AND mp.kind = 'new' GROUP BY mp.profile""", [digest, day]))

    def issue_days(self, digest: str) -> list[str]:
        """The dates ``digest`` was delivered on, newest first."""
        return [r[0] for r in self.db.execute("SELECT day FROM issues WHERE digest = ? ORDER BY day DESC",
                                              [digest])]

    def issue(self, digest: str, day: str, channel: str | None = None,
              number: int | None = None) -> dict | None:
        """One delivered issue with its ``messages`` (of ``channel`` only, and only message
        ``number`` of it, when given), in the order they were sent; each message holds its
        ``matches`` (Match objects with the recorded score, profile, reasons and TL;DR, in
        the message's order), ``updated``, and ``titles_only`` (keys of papers a size limit
        listed as titles). None when there is no such issue. A paper no longer stored is
        left out.

        Each Match's paper is the paper as the message sent it (``paper_sent``, m012), and its
        ``since`` the paper as stored now when that differs (:func:`changed_since`). A paper
        recorded before m012 is the one stored now (``as_sent`` False), with ``since`` set
        when its version is no longer the one sent."""
        rows = list(self.db.query("SELECT * FROM issues WHERE digest = ? AND day = ?", [digest, day]))
        if not rows:
            return None
        where, args = _equal(digest=digest, day=day, channel=channel, number=number)
        messages = {r["id"]: dict(r, matches=[], updated=[], titles_only=[])
                    for r in self.db.query(f"SELECT * FROM messages WHERE {where} ORDER BY sent_at, id", args)}
        for r in self.db.query(f"""
                SELECT mp.message, mp.kind, mp.score, mp.profile, mp.reasons, mp.tldr, mp.shown,
                       mp.version AS sent_version, mp.paper_sent, p.*
                FROM message_papers mp JOIN papers p ON p.key = mp.paper
                WHERE mp.message IN ({",".join("?" * len(messages))})
                ORDER BY mp.message, mp.position""", list(messages)):
            now = row_to_paper(r)
            if r["paper_sent"]:
                paper = row_to_paper(json.loads(r["paper_sent"]))
                as_sent, since = True, changed_since(paper, now)
                if paper.key != now.key:  # re-keyed since (an id found later): named as stored now
                    paper, since = replace(paper, arxiv_id=now.arxiv_id, dois=list(now.dois), doi=now.doi,
                                           pmid=now.pmid), now
                    if paper.key != now.key:
                        paper, as_sent = now, False
            else:  # recorded before messages kept their papers: only the version is known
                paper, as_sent = now, False
                since = now if r["sent_version"] not in (None, now.version) else None
            m = Match(paper, r["score"] or 0.0, json.loads(r["reasons"] or "[]"),
                      r["profile"] or "", r["tldr"], as_sent=as_sent, since=since)
            message = messages[r["message"]]
            message["matches" if r["kind"] == "new" else "updated"].append(m)
            if r["shown"] == "title":
                message["titles_only"].append(m.paper.key)
        return dict(rows[0], messages=list(messages.values()))

    def delivered_per_day(self, profile: str, start: date, end: date) -> dict[date, set[str]]:
        """The papers the messages of each issue date from ``start`` to ``end`` delivered as
        new under ``profile`` (the profile chart's "delivered"): date -> paper keys."""
        out: dict[date, set[str]] = {}
        for d, key in self.db.execute("""
                SELECT DISTINCT m.day, mp.paper FROM message_papers mp JOIN messages m ON m.id = mp.message
                WHERE mp.profile = ? AND mp.kind = 'new' AND m.day >= ? AND m.day <= ?""",
                                      [profile, iso(start), iso(end)]):
            out.setdefault(date.fromisoformat(d), set()).add(key)
        return out

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

    def rated_papers(self, profile: str) -> tuple[list[Paper], list[Paper]]:
        """The papers rated up and down for ``profile``, oldest rating first: what the learner
        (:mod:`watcher.learn`) takes as examples and counter-examples."""
        liked, disliked = [], []
        for row in self.db.query(
                """SELECT p.*, r.value AS rating FROM ratings r JOIN papers p ON p.key = r.paper
                   WHERE r.profile = ? ORDER BY r.rated_at, r.paper""", [profile]):
            (liked if row.pop("rating") == "up" else disliked).append(row_to_paper(row))
        return liked, disliked

    def paper_deliveries(self, key: str) -> list[dict]:
        """Where a paper went: one row per (digest, channel) with the version and time, and the
        message (issue date and number) that showed it when known."""
        return list(self.db.query("""
            SELECT d.digest, d.channel, d.version, d.delivered_at, m.day, m.number
            FROM deliveries d LEFT JOIN messages m ON m.id = (
                SELECT m2.id FROM message_papers mp JOIN messages m2 ON m2.id = mp.message
                WHERE mp.paper = d.paper AND mp.kind = 'new' AND m2.digest = d.digest
                AND m2.channel = d.channel ORDER BY m2.sent_at LIMIT 1)
            WHERE d.paper = ? ORDER BY d.delivered_at, d.digest, d.channel""", [key]))

    def change_serials(self) -> dict[str, int]:
        """The database's change counters (migration m005): table name -> writes so far."""
        return dict(self.db.execute("SELECT name, serial FROM changes").fetchall())

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version`` of this connection: it changes when any other
        connection commits."""
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def readable(self) -> None:
        """Read one row of ``papers``: an sqlite3.Error when the database cannot answer."""
        self.db.execute("SELECT 1 FROM papers LIMIT 1").fetchall()

    def paper_times(self, key: str) -> dict:
        """When paper ``key`` was first seen and last changed, when a new version came
        (``revised_at``) and its ``source``."""
        return next(self.db.query("SELECT first_seen, last_changed, revised_at, source FROM papers "
                                  "WHERE key = ?", [key]))

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

    # --- ratings and the reading list (SPEC §7; the rules are watcher.ratings') -------------

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

    def rating_rows(self, profile: str | None = None) -> list[dict]:
        """Every rating (of ``profile``, or all), oldest first: ``profile``, ``paper`` (the key),
        ``arxiv_id``, ``title``, ``value``, ``rated_at``, ``source``."""
        sql = """SELECT r.profile, r.paper, p.arxiv_id, p.title, r.value, r.rated_at, r.source
                 FROM ratings r LEFT JOIN papers p ON p.key = r.paper"""
        args = []
        if profile is not None:
            sql += " WHERE r.profile = ?"
            args.append(profile)
        return [dict(r) for r in self.db.query(sql + " ORDER BY r.rated_at, r.profile, r.paper", args)]

    def delivered_under(self, keys: list[str]) -> list[tuple]:
        """For the papers ``keys``: ``(paper, digest, channel, profile)`` of each delivery, with
        each profile the messages of that digest and channel recorded it under (None: none)."""
        return self.rows_in(DELIVERED_UNDER, keys)

    def marks_of(self, keys: list[str]) -> tuple[dict[tuple[str, str], str], set[str]]:
        """The ratings and reading-list state of the papers ``keys``:
        ``({(profile, key): "up"|"down"}, {saved keys})``."""
        rated = {(profile, paper): value for profile, paper, value in
                 self.rows_in("SELECT profile, paper, value FROM ratings WHERE paper IN ({})", keys)}
        return rated, {r[0] for r in self.rows_in("SELECT paper FROM saved WHERE paper IN ({})", keys)}

    def saved_papers(self) -> list[tuple[Paper, str]]:
        """The reading list, oldest first: ``(paper, saved_at)``."""
        return [(row_to_paper(r), r.pop("saved_at")) for r in self.db.query(
            """SELECT p.*, s.saved_at AS saved_at FROM saved s JOIN papers p ON p.key = s.paper
               ORDER BY s.saved_at, s.paper""")]

    def rating_counts(self) -> dict[str, int]:
        """How many ratings each profile has: ``name -> number``."""
        return {r["profile"]: r["n"] for r in self.db.query(
            "SELECT profile, count(*) AS n FROM ratings GROUP BY profile ORDER BY profile")}

    def paper_messages(self, key: str) -> list[dict]:
        """The delivered messages that showed paper ``key``, oldest first, each with what it
        recorded of the paper: digest, day, channel, number, sent_at, kind (new or updated),
        version, profile, score and reasons (a list)."""
        rows = list(self.db.query("""
            SELECT m.digest, m.day, m.channel, m.number, m.sent_at, mp.kind, mp.version, mp.profile,
                   mp.score, mp.reasons
            FROM message_papers mp JOIN messages m ON m.id = mp.message
            WHERE mp.paper = ? ORDER BY m.sent_at, m.id""", [key]))
        for row in rows:
            row["reasons"] = json.loads(row["reasons"] or "[]")
        return rows

    def delivery_failed(self, digest: str, channel: str, error: str, now: datetime,
                        first_window: date | None = None) -> None:
        """Record a failed delivery; nothing enters the ledger and the watermark stays. A first
        run's window start is kept (``first_window``) so that retries after a long outage still
        reach back to it."""
        row = {"digest": digest, "channel": channel, "last_attempt": iso(now),
               "last_error": redact(error), "last_error_at": iso(now)}
        with self.writing():
            if first_window and not self.channel_state(digest, channel).get("first_window"):
                row["first_window"] = iso(first_window)
            self.db["channels"].upsert(row, pk=("digest", "channel"))

    def digest_ran(self, name: str, now: datetime, ok: bool, error: str | None = None,
                   degraded: str | None = None) -> None:
        """Record a digest run (the daemon's catch-up and ``--due`` read it). A run that
        delivered without something it should carry (``degraded``: why) counts as a success
        for the schedule, with the status ``degraded`` and the reason as its error."""
        status = "failed" if not ok else "degraded" if degraded else "ok"
        row = {"name": name, "last_run": iso(now), "last_status": status,
               "last_error": redact((error if not ok else degraded) or "") or None}
        if ok:
            row["last_success"] = iso(now)
        with self.writing():
            self.db["digests"].upsert(row, pk="name")

    def digest_state(self, name: str) -> dict:
        """The digests row, or {} before the first run."""
        rows = list(self.db["digests"].rows_where("name = ?", [name]))
        return rows[0] if rows else {}

    def digest_times(self, names, column: str) -> dict[str, datetime | None]:
        """Each named digest's ``last_run`` or ``last_success`` (None before the first)."""
        assert column in ("last_run", "last_success")
        return {n: parse_time(self.digest_state(n).get(column)) for n in names}

    def last_run_channels(self, digest: str, limit: int = 50) -> list[dict]:
        """What each channel of ``digest`` did in the newest of the last ``limit`` runs that
        delivered it (their recorded detail: ``papers``, ``sent``, ``empty`` - why nothing was
        sent -, ``profiles``: name -> papers brought); [] when none of them did."""
        for row in self.db.query("SELECT detail FROM runs WHERE detail IS NOT NULL ORDER BY id DESC LIMIT ?",
                                 [limit]):
            try:
                channels = [c for c in json.loads(row["detail"]).get("channels", []) if c.get("digest") == digest]
            except (ValueError, AttributeError):
                continue
            if channels:
                return channels
        return []

    def start_run(self, kind: str, now: datetime) -> int:
        """A new row in runs; returns its id."""
        with self.writing():
            return self.db["runs"].insert({"kind": kind, "started": iso(now), "status": "running"}).last_pk

    def finish_run(self, run_id: int, status: str, detail: dict, now: datetime) -> None:
        """Close a run with its status and a JSON detail."""
        with self.writing():
            self.db["runs"].update(run_id, {"finished": iso(now), "status": status,
                                            "detail": redact(json.dumps(detail))})

    # --- Zotero (SPEC §10; the decisions and the HTTP are watcher.zotsync's) ---------------

    def _has_zotero(self) -> bool:
        """Whether migration m014 made the Zotero tables (a read-only store may predate it)."""
        return "zotero_places" in self.db.table_names()

    def zotero_place_version(self, place: str) -> int | None:
        """The library version ``place`` was last read at (None: never read)."""
        row = self.db.execute("SELECT version FROM zotero_places WHERE place = ?", [place]).fetchone()
        return row[0] if row else None

    def replace_zotero_items(self, place: str, current: set[str] | None,
                             changed: list[tuple[str, int | None, dict | None]],
                             version: int | None, when: str) -> int:
        """Record one good read of ``place`` in one transaction: the items no longer in
        ``current`` (the library's item keys now; None: unchanged) dropped, each ``(item,
        version, paper fields)`` of ``changed`` kept (fields None: dropped, not a paper), the
        new library ``version`` and the success; the number of items kept."""
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
            db.execute("INSERT INTO zotero_places (place, version, items, last_success, failures) "
                       "VALUES (?, ?, ?, ?, 0) ON CONFLICT(place) DO UPDATE SET version = excluded.version, "
                       "items = excluded.items, last_success = excluded.last_success, failures = 0, "
                       "last_error = NULL", [place, version, n, when])
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

    def zotero_places(self) -> dict[str, dict] | None:
        """Every place read, by its key: ``version``, ``items``, ``last_success``,
        ``last_error``, ``last_error_at``, ``failures``; None without the tables."""
        if not self._has_zotero():
            return None
        return {r["place"]: r for r in self.db.query("SELECT * FROM zotero_places")}

    def zotero_save_counts(self) -> tuple[int, int, str | None]:
        """``(added, queued, an error of the queued)`` of the saves to Zotero."""
        queued, error = self.db.execute(
            "SELECT count(*), max(last_error) FROM zotero_saves WHERE state != 'done'").fetchone()
        done = self.db.execute("SELECT count(*) FROM zotero_saves WHERE state = 'done'").fetchone()[0]
        return done, queued, error

    # --- the web's session generation (SPEC §7; the rules are watcher.web.sessions') -------

    def session_generation(self) -> int:
        """The web sessions' current generation (0 before the first logout)."""
        row = self.db.execute("SELECT generation FROM web_sessions WHERE id = 1").fetchone()
        return row[0] if row else 0

    def end_sessions(self) -> int:
        """A new generation, in one transaction: every session made before no longer counts."""
        with self.writing():
            generation = self.session_generation() + 1
            self.db.execute("UPDATE web_sessions SET generation = ? WHERE id = 1", [generation])
            return generation

    def session_password(self, same: Callable[[bytes | None, bytes | None], bool],
                         fresh: Callable[[], tuple[bytes, bytes]]) -> bool:
        """In one transaction: unless ``same(salt, fingerprint)`` of the password recorded,
        record ``fresh()``'s ``(salt, fingerprint)`` and, when a password was recorded before,
        start a new generation. True when that ended the sessions."""
        with self.writing():
            generation = self.session_generation()
            salt, seen = self.db.execute("SELECT salt, fingerprint FROM web_sessions WHERE id = 1").fetchone()
            if same(salt, seen):
                return False
            changed = seen is not None  # the first password ever: no session to end
            self.db.execute("UPDATE web_sessions SET generation = ?, salt = ?, fingerprint = ? WHERE id = 1",
                            [generation + changed, *fresh()])
            return changed
