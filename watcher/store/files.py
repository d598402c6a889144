"""The database file as a whole: what a saved state file keeps of it, its integrity
(:mod:`watcher.cli.statefile`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ..errors import NotAWatcherDatabase
from ..matching.index import search_text
from .connection import as_database, busy_timeout, connect_readonly, database_error, papers_triggers_aside
from .seen import LEDGER_REFERENCES, RATING_REFERENCES


def needs_migration(database: Path) -> bool:
    """Whether the database at ``database`` lacks a migration of this version (read only); True
    when it cannot be read (opening it to migrate then says why in words)."""
    from .migrations import migrations

    try:
        conn = connect_readonly(database, busy_timeout())
        try:
            return bool(migrations.pending(as_database(conn)))
        finally:
            conn.close()
    except sqlite3.Error:
        return True


STATE_ERROR_NOT_KEPT = "(failed; the error itself is not kept in a saved state file)"

# What a saved state file holds: an allow-list, table by table and column by column (a table
# or column not named here is not copied: it stays empty, or at its default, in the file).
# Why each is kept, or not, is in docs/security-limits.md ("What the state branch holds").
# ``ERROR``: a stored error, replaced by STATE_ERROR_NOT_KEPT; ``REASONS``: a paper's reasons,
# without those that name a rating (``like 2501.01234 (you liked)``).
ERROR, REASONS = object(), object()
_PAPER_COLUMNS = (
    "key", "arxiv_id", "version", "title", "authors", "abstract", "published", "updated", "categories",
    "primary_category", "comment", "journal_ref", "doi", "url", "announce_type", "upvotes", "source", "announced",
    "author_count", "organization", "github_repo", "ai_keywords", "fingerprint", "day", "first_seen",
    "last_changed", "revised_at", "listed_as_new", "dois", "pmid", "pmcid", "journal", "venues", "sources",
    "journal_at", "short", "origins", "cites", "followed")  # search_*: derived, made again on restore
SEARCH_COLUMNS = ("search_title", "search_abstract", "search_authors", "search_categories")
KEPT = "SELECT key FROM temp.kept"  # the papers the file holds (:func:`_kept_papers`)
STATE_TABLES: tuple[tuple[str, tuple, str | None], ...] = (
    # (table, columns, which rows: a condition on the source's row, None: all)
    ("papers", _PAPER_COLUMNS, f"key IN ({KEPT})"),
    ("paper_ids", ("ident", "paper"), f"paper IN ({KEPT})"),
    ("seen", ("ident", "version"), None),
    ("tldr_cache", ("paper", "tldr", "model", "created"), f"paper IN ({KEPT})"),
    ("tldr_calls", ("day", "calls"), None),
    ("deliveries", ("digest", "channel", "paper", "version", "delivered_at"), None),
    ("issues", ("digest", "day", "title", "first_delivered", "last_delivered", "empty_reason"), None),
    ("issue_papers", ("digest", "day", "paper", "position", "kind", "version", "score", "profile",
                      ("reasons", REASONS)), None),
    ("messages", ("id", "digest", "day", "channel", "number", "title", "sent_at", "empty_reason", "parts"), None),
    ("message_papers", ("message", "position", "paper", "kind", "version", "score", "profile", ("reasons", REASONS),
                        "tldr", "shown", "paper_sent"), None),
    ("sources", ("name", "state", "last_attempt", "last_success", ("last_error", ERROR), "last_error_at",
                 "failures", "last_counts"), None),
    ("channels", ("digest", "channel", "watermark", "first_window", "last_attempt", "last_success",
                  ("last_error", ERROR), "last_error_at", "last_count"), None),
    ("digests", ("name", "last_run", "last_success", "last_status", ("last_error", ERROR)), None),
    ("runs", ("id", "kind", "started", "finished", "status"), None),
    ("changes", ("name", "serial"), None),
    ("web_sessions", ("id", "generation"), None),
    ("upkeep", ("id", "last_run", "pruned", "total_pruned", "vacuumed"), None),
    ("waits", ("what", "until", ("reason", ERROR)), None),
    ("_sqlite_migrations", ("id", "migration_set", "name", "applied_at"), None),  # as applied: one state, one file
)
# only with the ratings (``keep_ratings``): what the reader did, and their Zotero library
RATING_TABLES: tuple[tuple[str, tuple, str | None], ...] = (
    ("ratings", ("profile", "paper", "value", "rated_at", "source"), None),
    ("saved", ("paper", "saved_at", "source"), None),
    ("zotero_places", ("place", "version", "items", "last_success", ("last_error", ERROR), "last_error_at",
                       "failures"), None),
    ("zotero_items", ("place", "item", "version", "paper"), None),
    ("zotero_saves", ("target", "paper", "token", "item", "state", "attempts", "queued_at", "done_at",
                      ("last_error", ERROR)), None),
    ("rating_checks", ("profile", "decided_by", "checked", "estimates"), None),
)


def _public_reasons(text: str | None) -> str | None:
    """A reasons JSON list without the reasons that name a rating."""
    from ..matching.learn import names_a_rating

    if not text or text == "[]":
        return text
    try:
        reasons = json.loads(text)
    except ValueError:
        return "[]"
    return json.dumps([r for r in reasons if not (isinstance(r, str) and names_a_rating(r))], ensure_ascii=False)


def _kept_papers(conn, keep_ratings: bool, pending_since: str | None, pending_day: str) -> None:
    """``temp.kept``: the papers a later run needs (``src`` is the database saved): those any
    message, issue or delivery names (the site shows them, a newer version comes as an update);
    those a digest can still deliver (listed as new, stored after ``pending_since``, the oldest
    channel's watermark, or filed on or after ``pending_day``, the earliest first window); with
    the ratings, the rated, saved and Zotero-saved ones."""
    conn.execute("CREATE TEMP TABLE kept (key TEXT PRIMARY KEY)")
    for table, column in LEDGER_REFERENCES + (RATING_REFERENCES if keep_ratings else ()):  # what pruning keeps too
        conn.execute(f"INSERT OR IGNORE INTO temp.kept SELECT {column} FROM src.{table}")
    for column, since in (("first_seen", pending_since or "9999"), ("day", pending_day)):  # by their indexes
        conn.execute(f"INSERT OR IGNORE INTO temp.kept SELECT key FROM src.papers WHERE {column} >= ? "
                     "AND listed_as_new = 1 AND (first_seen > ? OR day >= ?)", [since, pending_since or "9999",
                                                                                 pending_day])


def build_state(database: Path, out: Path, keep_ratings: bool = False, pending_day: str = "0000") -> tuple[int, int]:
    """:func:`_build_state`, a damaged page of ``database`` read raising its StoreError."""
    try:
        return _build_state(database, out, keep_ratings, pending_day)
    except sqlite3.Error as e:
        raise database_error(database, e, opening=True) from e


def _build_state(database: Path, out: Path, keep_ratings: bool, pending_day: str) -> tuple[int, int]:
    """Write at ``out`` a new database holding only what a saved state file holds (an
    allow-list: :data:`STATE_TABLES`, with :data:`RATING_TABLES` when ``keep_ratings``) of the
    database at ``database`` (of the current schema), read in one snapshot: the ledger, the
    sources' and channels' state, the seen-set with the keys of every paper left out, and the
    papers a later run needs (:func:`_kept_papers`; ``pending_day``: papers filed since are kept
    whatever the watermarks, for a channel's first window). The full-text index of those few
    papers is filled as they are inserted. Returns how many ratings and saved papers were left
    out."""
    from .migrations import migrations
    from .seen import pack_seen, remember

    conn = sqlite3.connect(Path(out).resolve().as_uri(), uri=True, isolation_level=None)
    try:
        migrations.apply(as_database(conn))
        conn.execute("PRAGMA journal_mode=OFF")  # a file built once: no journal to keep
        conn.execute("PRAGMA synchronous=OFF")
        conn.create_function("public_reasons", 1, _public_reasons, deterministic=True)
        conn.execute("ATTACH DATABASE ? AS src", [f"{Path(database).resolve().as_uri()}?mode=ro"])
        conn.execute("BEGIN")  # one snapshot of the source, one transaction of the copy
        conn.execute("DELETE FROM main._sqlite_migrations")
        left_out = (0, 0) if keep_ratings else tuple(
            conn.execute(f"SELECT count(*) FROM src.{t}").fetchone()[0] for t in ("ratings", "saved"))
        watermark = conn.execute("SELECT min(watermark) FROM src.channels").fetchone()[0]
        first = conn.execute("SELECT min(first_window) FROM src.channels WHERE watermark IS NULL").fetchone()[0]
        _kept_papers(conn, keep_ratings, watermark, min(filter(None, (first, pending_day))))
        with papers_triggers_aside(conn):  # the full-text index is derived, made on restore: not filled here
            for table, columns, rows in STATE_TABLES + (RATING_TABLES if keep_ratings else ()):
                names = [c if isinstance(c, str) else c[0] for c in columns]
                values = [c if isinstance(c, str) else
                          f"CASE WHEN {c[0]} IS NULL THEN NULL ELSE '{STATE_ERROR_NOT_KEPT}' END" if c[1] is ERROR
                          else f"public_reasons({c[0]})" if not keep_ratings else c[0] for c in columns]
                source = f"src.{table}{f' WHERE {rows}' if rows else ''}"
                if table == "papers":  # each kept paper by its key, in storage order (search's order)
                    source = "temp.kept k JOIN src.papers t ON t.key = k.key ORDER BY t.rowid"
                    values = [f"t.{v}" for v in values]
                if table == "message_papers":  # written once, as changes: no row rewritten, no page half empty
                    conn.create_function("sent_as_changes", 2, _sent_as_changes(conn))
                    values = ["sent_as_changes(rowid, paper_sent)" if v == "paper_sent" else v for v in values]
                conn.execute(f"INSERT OR REPLACE INTO main.{table} ({', '.join(names)}) SELECT {', '.join(values)} "
                             f"FROM {source}")
            conn.execute("CREATE TEMP TABLE left_out AS SELECT key, version FROM src.papers "  # papers_key_version
                         f"INDEXED BY papers_key_version WHERE key NOT IN ({KEPT})")
            remember(conn, "temp.left_out", src="src")
            pack_seen(conn)
            # the papers' counts per source (m017), which the triggers set aside would have kept
            conn.execute("DELETE FROM main.paper_counts")
            conn.execute("INSERT INTO main.paper_counts (source, papers) "
                         "SELECT coalesce(source, ''), count(*) FROM main.papers GROUP BY coalesce(source, '')")
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE src")
        conn.execute("VACUUM")  # the b-trees filled out of order (the seen-set, indexes) packed: 0.4 MB less once compressed
    finally:
        conn.close()
    return left_out


SENT_CHANGES = "~row"  # a paper_sent kept as what differs from the paper's row (:func:`_sent_as_changes`)


def _row_snapshot(row: dict) -> dict:
    from .papers import paper_snapshot, row_to_paper

    return json.loads(paper_snapshot(row_to_paper(row)))


def _sent_as_changes(conn):
    """Each message's paper as sent (``paper_sent``, the same text as the paper's row most of
    the time) as the fields where it differs from that row, ``{"~row": {...}}``, when
    :func:`complete_state` makes exactly the same text of it again: a function of (the source's
    ``message_papers`` rowid, its ``paper_sent``) giving what the file keeps (the papers are
    already in ``main``)."""
    conn.row_factory = sqlite3.Row
    changes = {}
    try:
        for r in conn.execute("SELECT mp.rowid AS _mp, mp.paper_sent AS _sent, p.* FROM src.message_papers mp "
                              "JOIN main.papers p ON p.key = mp.paper WHERE mp.paper_sent IS NOT NULL"):
            sent, base = json.loads(r["_sent"]), _row_snapshot(dict(r))
            if not isinstance(sent, dict) or set(sent) != set(base):
                continue
            diff = {k: v for k, v in sent.items() if base[k] != v}
            if json.dumps(base | diff, ensure_ascii=False) == r["_sent"]:
                changes[r["_mp"]] = json.dumps({SENT_CHANGES: diff}, ensure_ascii=False)
    finally:
        conn.row_factory = None
    return lambda rowid, sent: changes.get(rowid, sent)


def complete_state(path: Path) -> None:
    """Make again in the restored database at ``path`` what a state file leaves out because
    it is derived (:func:`build_state`): each paper's search columns and the full-text index,
    and each message's papers as sent from the changes kept of them. A database saved whole
    (an older state file) is left as it is. NotAWatcherDatabase when SQLite cannot do it."""
    try:
        _complete_state(path)
    except sqlite3.Error as e:
        raise NotAWatcherDatabase(str(e)) from e


def _complete_state(path: Path) -> None:
    from .papers import row_to_paper
    from .seen import unpack_seen

    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'seen'").fetchone():
            return
        conn.execute("BEGIN")
        unpack_seen(conn)
        with papers_triggers_aside(conn):  # the index is built once at the end (as m011 does)
            rows = conn.execute("SELECT rowid AS _rowid, * FROM papers WHERE search_title IS NULL").fetchall()
            conn.executemany(f"UPDATE papers SET {', '.join(c + ' = ?' for c in SEARCH_COLUMNS)} WHERE rowid = ?",
                             [[*search_text(row_to_paper(dict(r))).values(), r["_rowid"]] for r in rows])
        if rows:
            conn.execute("INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')")
        sent = []
        for r in conn.execute("SELECT mp.rowid AS _mp, mp.paper_sent AS _sent, p.* FROM message_papers mp "
                              "JOIN papers p ON p.key = mp.paper WHERE mp.paper_sent LIKE ?",
                              ['{"' + SENT_CHANGES + '"%']):
            diff = json.loads(r["_sent"])[SENT_CHANGES]
            sent.append((json.dumps(_row_snapshot(dict(r)) | diff, ensure_ascii=False), r["_mp"]))
        conn.executemany("UPDATE message_papers SET paper_sent = ? WHERE rowid = ?", sent)
        conn.execute("COMMIT")
    finally:
        conn.close()


def saved_database_intact(path: Path) -> bool:
    """Whether the database file at ``path`` passes ``PRAGMA quick_check``; NotAWatcherDatabase
    when it is no watcher database at all (no ``deliveries`` table)."""
    try:
        conn = sqlite3.connect(path)
        try:
            ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            conn.execute("SELECT count(*) FROM deliveries").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as e:
        raise NotAWatcherDatabase(str(e)) from e
    return ok
