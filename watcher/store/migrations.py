"""The schema: sqlite-utils migrations m001 to m021, applied in order when the database is
opened (:meth:`watcher.store.Store.open`). A new migration is the next number, at the end."""

from __future__ import annotations

import sqlite_utils
from sqlite_utils.migrations import Migrations

from ..matching.index import search_text
from ..models import normalize_doi
from .connection import papers_triggers_aside
from .papers import _short, rekey_references, row_to_paper


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
    """The web inbox (docs/web.md): a full-text index of the papers (FTS5, kept in step by
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
    """Ratings (docs/ratings.md): per profile and paper up or down, when and from where; the global
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
    """The summarizer's memory (docs/channels.md): a model's TL;DR per paper, asked for once ever (``tldr``
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
    (:class:`watcher.matching.compile.Compiled`): unlike a summary (a count, the latest time), they never
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
    """One paper per work across arXiv, bioRxiv/medRxiv, PubMed and journals (docs/design.md): every
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


@migrations()
def m008_messages(db: sqlite_utils.Database) -> None:
    """What each delivered message showed (docs/web.md "What is recorded and what is computed now"): ``messages``, one row per
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
    """Search is the query language (docs/web.md "Search"): the full-text index holds the matcher's own
    normalised words (:func:`watcher.matching.index.search_text`) instead of the raw text under a
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
    with papers_triggers_aside(conn):
        rows = conn.execute("SELECT rowid, key FROM papers").fetchall()
        conn.executemany("UPDATE papers SET short = ? WHERE rowid = ?",
                         [(short, rowid) for rowid, key in rows if (short := _short(key))])
    db.execute("CREATE INDEX papers_short ON papers(short, first_seen, key) WHERE short IS NOT NULL")


@migrations()
def m012_papers_as_sent(db: sqlite_utils.Database) -> None:
    """``message_papers.paper_sent``: each paper of a message as it was sent (docs/record.md): its
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
    """Zotero (docs/zotero.md, :mod:`watcher.zotero.sync`): ``zotero_places``, per place examples are read
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
    """Citations and followed authors (docs/openalex.md): ``cites``, the followed works a paper cites,
    and ``followed``, the followed authors who wrote it, each a JSON list of ``key|title`` /
    ``key|name`` (:mod:`watcher.formats.openalex`); NULL for papers stored before."""
    for column in ("cites", "followed"):
        db.execute(f"ALTER TABLE papers ADD COLUMN {column} TEXT")


@migrations()
def m016_seen(db: sqlite_utils.Database) -> None:
    """What was seen outlives its paper row (:mod:`watcher.store.seen`): ``seen``, one row per
    identity key of a paper whose row was pruned (``keep``) or left out of a saved state file
    (its key, each DOI and PMID ``paper_ids`` held for it), with the last arXiv version seen
    on the key's row, so that a listing bringing the paper again is not new and a newer
    version of it is a revision; ``upkeep`` (one row), when the store's upkeep last ran and
    what it pruned."""
    db.execute("CREATE TABLE seen (ident TEXT PRIMARY KEY, version INTEGER) WITHOUT ROWID")
    # every paper's key and version without reading its row: what a state file's seen-set takes
    # of the papers it leaves out (a scan of this index reads ~20 bytes a paper, the table ~3 kB)
    db.execute("CREATE INDEX papers_key_version ON papers(key, version)")
    db.execute("CREATE TABLE upkeep (id INTEGER PRIMARY KEY CHECK (id = 1), last_run TEXT, "
               "pruned INTEGER NOT NULL DEFAULT 0, total_pruned INTEGER NOT NULL DEFAULT 0, vacuumed TEXT)")


@migrations()
def m017_paper_counts(db: sqlite_utils.Database) -> None:
    """A year of papers (300,000) read as fast as a week: what a page or a run reads grows with
    what it shows, never with every paper stored.

    ``paper_counts``: how many papers each source stored first (``''`` for none), kept by
    triggers on every insert, delete and change of a paper's source, whoever writes. ``watcher
    status`` and ``/status`` read these few rows where they counted every paper (a scan of the
    whole table: 0.8 s of a 300,000-paper database, growing with it); the total is their sum.

    Indexes: papers by day and last change (``papers_day`` replaced: a profile chart's "what
    changed on each day" read every paper of its 30 days, 5 KB each, for one column), papers
    revised (a run's "updated" papers walked every delivery of the channel), and messages by
    day (a profile chart's "delivered" read every message's papers, snapshots and all)."""
    db.execute("CREATE INDEX papers_day_changed ON papers(day, last_changed)")
    db.execute("DROP INDEX IF EXISTS papers_day")
    db.execute("CREATE INDEX papers_revised ON papers(revised_at) WHERE revised_at IS NOT NULL")
    db.execute("CREATE INDEX messages_day ON messages(day)")
    db.execute("CREATE TABLE paper_counts (source TEXT PRIMARY KEY, papers INTEGER NOT NULL)")
    db.execute("INSERT INTO paper_counts (source, papers) "
               "SELECT coalesce(source, ''), count(*) FROM papers GROUP BY coalesce(source, '')")
    add = ("INSERT INTO paper_counts (source, papers) VALUES (coalesce(NEW.source, ''), 1) "
           "ON CONFLICT (source) DO UPDATE SET papers = papers + 1;")
    remove = "UPDATE paper_counts SET papers = papers - 1 WHERE source = coalesce(OLD.source, '');"
    db.execute(f"CREATE TRIGGER papers_counts_insert AFTER INSERT ON papers BEGIN {add} END")
    db.execute(f"CREATE TRIGGER papers_counts_delete AFTER DELETE ON papers BEGIN {remove} END")
    db.execute("CREATE TRIGGER papers_counts_update AFTER UPDATE OF source ON papers "
               f"WHEN coalesce(OLD.source, '') IS NOT coalesce(NEW.source, '') BEGIN {remove} {add} END")


@migrations()
def m018_waits(db: sqlite_utils.Database) -> None:
    """``waits``: who asked watcher to wait until when (an endpoint's ``Retry-After`` past the
    run: the summarizer's endpoint), so that later runs, other processes too, do not ask
    before then (:meth:`watcher.store.Store.wait_until`)."""
    db.execute("CREATE TABLE waits (what TEXT PRIMARY KEY, until TEXT NOT NULL, reason TEXT)")


@migrations()
def m019_selections(db: sqlite_utils.Database) -> None:
    """``selections``: what each profile selects of each filing day, as the cycle decided it
    (:mod:`watcher.cycle.selections`), with what decided it (the matcher's fingerprint: its
    config, examples and ratings) and the day's papers as they were (their number, last row and
    last change). A profile page reads its 30 rows where it scored the 30 days' papers (at
    300,000 papers, 30,000 of them: seconds past its deadline)."""
    db.execute("CREATE TABLE selections (profile TEXT NOT NULL, day TEXT NOT NULL, decided_by TEXT NOT NULL, "
               "signature TEXT NOT NULL, papers TEXT NOT NULL, recorded_at TEXT NOT NULL, "
               "PRIMARY KEY (profile, day)) WITHOUT ROWID")


@migrations()
def m020_selection_changes(db: sqlite_utils.Database) -> None:
    """``selections.changes``: with what a profile selects of a day, what its ratings changed
    there (each paper they added or removed, with its score, reasons and the deciding rating),
    decided with it (:mod:`watcher.cycle.selections`): a profile page reads the changes of its
    30 days where it scored those days' papers with and without the ratings (at 300,000 papers,
    seconds). Adding a column with a default rewrites no row: instant at any size. The rows
    recorded before it say no change; the fingerprints of the matchers changed with it, so the
    next cycle (or the page) counts each profile's days again, the changes with them."""
    db.execute("ALTER TABLE selections ADD COLUMN changes TEXT NOT NULL DEFAULT '[]'")


@migrations()
def m021_rating_checks(db: sqlite_utils.Database) -> None:
    """``rating_checks``: what the self-check of a profile's ratings decided (its estimates)
    and found (the sentences ``watcher explain --profile`` prints), as the cycle decided it
    with the profile's matcher, whose fingerprint it keeps (:mod:`watcher.cycle.selections`): a
    profile page reads the sentences where it fitted the profile's learner on its first visit,
    and a compilation of the same profile, examples and ratings takes the estimates instead of
    holding the ratings out by time again (most of a fit's seconds at 2,000 ratings)."""
    db.execute("CREATE TABLE rating_checks (profile TEXT PRIMARY KEY, decided_by TEXT NOT NULL, "
               "checked TEXT NOT NULL, estimates TEXT NOT NULL DEFAULT '{}') WITHOUT ROWID")

