"""Short paper links (``h.…``, :func:`watcher.models.short_key`): the store keeps each paper's
short form in ``papers.short`` (m011) in step with its key, and ``Store.get_short`` finds a
paper by it through an index instead of hashing every key."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import sqlite_utils

from watcher import store as store_module
from watcher.models import Paper, short_key
from watcher.matching.query import parse_query
from watcher.services.search import Filters, run_search
from watcher.store import SHORT_LOOKUP, Store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def journal_items(n: int) -> list[Paper]:
    """``n`` papers without an arXiv id, keyed ``doi:…``, ``pmid:…`` and ``title:…`` in turn."""
    out = []
    for i in range(n):
        kind = i % 3
        out.append(Paper(title=f"Plateau potentials in CA1, cohort {i}", authors=[f"Ana Ruiz{i}"],
                         doi=f"10.1038/s41593-026-{i:05d}" if kind == 0 else None,
                         pmid=str(41000000 + i) if kind == 1 else None,
                         published=T0 - timedelta(days=i % 40), source="list", sources=["list"]))
    return out


def assert_in_step(store: Store) -> None:
    """Every row's ``short`` is its key's short form (NULL where links carry the key itself)."""
    for key, short in store.db.execute("SELECT key, short FROM papers"):
        assert short == (short_key(key) if short_key(key) != key else None), key


def test_each_short_key_of_many_papers_without_an_id_names_its_paper(tmp_path):
    papers = journal_items(600)
    ax = [Paper(title=f"An arXiv paper {i}", arxiv_id=f"2603.{i:05d}", version=1) for i in range(50)]
    with Store.open(tmp_path / "w.db") as s:
        s.upsert(papers + ax, T0)
        keys = [k for (k,) in s.db.execute("SELECT key FROM papers WHERE arxiv_id IS NULL")]
        assert len(keys) == 600 and {k.split(":")[0] for k in keys} == {"doi", "pmid", "title"}
        assert len({short_key(k) for k in keys}) == 600
        for key in keys:
            found = s.get_short(short_key(key))
            assert found is not None and found.key == key
            assert s.get_short(key).key == key  # a full key still works
        assert s.get_short("2603.00007").title == "An arXiv paper 7"  # an arXiv id is its own short form
        assert s.get_short("h.AAAAAAAAAAA") is None
        assert_in_step(s)


def test_a_rekeyed_paper_answers_to_its_new_key_s_short_form_only(tmp_path):
    authors = ["Maria Okafor", "Jonas Lindqvist"]
    bare = Paper(title="Dendritic spikes gate place-field formation", authors=authors, published=T0)
    with Store.open(tmp_path / "w.db") as s:
        [title_key] = s.upsert([bare], T0).new
        assert title_key.startswith("title:") and s.get_short(short_key(title_key)).key == title_key
        # a listing with its DOI: re-keyed to doi:…
        with_doi = Paper(title=bare.title, authors=authors, published=T0, doi="10.1101/2026.03.01.612345")
        [doi_key] = s.upsert([with_doi], T0 + timedelta(days=1)).updated
        assert doi_key == "doi:10.1101/2026.03.01.612345"
        assert s.get_short(short_key(doi_key)).key == doi_key
        assert s.get_short(short_key(title_key)) is None  # the stale short form names nothing
        assert_in_step(s)
        # its arXiv listing: re-keyed to the arXiv id, which links carry as it is
        ax = Paper(title=bare.title, authors=authors, arxiv_id="2603.01234", version=1,
                   doi="10.1101/2026.03.01.612345", published=T0)
        assert s.upsert([ax], T0 + timedelta(days=2)).updated == ["2603.01234"]
        assert s.get_short(short_key(doi_key)) is None
        assert s.get_short("2603.01234").key == "2603.01234"
        assert s.db.execute("SELECT short FROM papers").fetchall() == [(None,)]
        assert_in_step(s)


def test_two_rows_joined_by_a_doi_leave_one_short_form(tmp_path):
    """A journal article stored before a listing linked it to its preprint: the link found
    later joins the rows; the joined row's short form names nothing any more."""
    preprint = Paper(title="Dendritic spikes gate place-field formation in CA1", authors=["Maria Okafor"],
                     doi="10.1101/2026.03.01.612345", published=T0, venues=["bioRxiv"])
    article = Paper(title="Plateau potentials in CA1 dendrites build place fields", authors=["Maria Okafor"],
                    doi="10.1038/s41593-026-01234-5", journal="Nature Neuroscience",
                    published=T0 + timedelta(days=150))
    with Store.open(tmp_path / "w.db") as s:
        [kept] = s.upsert([preprint], T0).new
        [joined] = s.upsert([article], T0 + timedelta(days=150)).new
        assert s.get_short(short_key(joined)).key == joined
        linked = Paper(title=preprint.title, authors=preprint.authors, published=T0, venues=["bioRxiv"],
                       dois=["10.1101/2026.03.01.612345", "10.1038/s41593-026-01234-5"],
                       doi="10.1038/s41593-026-01234-5")
        s.upsert([linked], T0 + timedelta(days=151))
        assert s.count_papers() == 1
        assert s.get_short(short_key(kept)).key == kept
        assert s.get_short(short_key(joined)) is None
        assert_in_step(s)


def test_two_papers_of_one_short_form_name_the_earliest_stored(tmp_path):
    """64 bits of SHA-256 make a collision improbable, not impossible: the answer is the
    earliest stored paper (then the smaller key), whatever the order of the rows."""
    with Store.open(tmp_path / "w.db") as s:
        [later] = s.upsert([Paper(title="A later journal article", authors=["B Bee"])], T0 + timedelta(days=1)).new
        [earlier] = s.upsert([Paper(title="An earlier journal article", authors=["C Sea"])], T0).new
        s.db.execute("UPDATE papers SET short = 'h.SAMEHASH000'")  # as if both keys hashed alike
        assert s.get_short("h.SAMEHASH000").key == earlier
        s.db.execute("UPDATE papers SET first_seen = ? ", [store_module.stamp(T0)])
        assert s.get_short("h.SAMEHASH000").key == min(earlier, later)


def test_the_short_lookup_is_one_indexed_search():
    with Store.open(None) as s:
        plan = [r[-1] for r in s.db.execute("EXPLAIN QUERY PLAN " + SHORT_LOOKUP, ["h.AAAAAAAAAAA"])]
    assert plan == ["SEARCH papers USING INDEX papers_short (short=?)"], plan  # no scan, no sort


def test_the_migration_fills_short_for_an_older_database(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    store_module.migrations.apply(db, stop_before="m011_short_keys")
    columns = {c.name for c in db["papers"].columns}
    assert "short" not in columns
    papers = journal_items(30) + [Paper(title="An arXiv paper", arxiv_id="2603.00001", version=1)]
    for p in papers:
        row = {k: v for k, v in store_module._paper_row(p).items() if k in columns}
        row.update(first_seen=store_module.stamp(T0), last_changed=store_module.stamp(T0))
        db["papers"].insert(row)
    triggers = set(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall())
    assert {name for name, _ in triggers} >= {"papers_au", "papers_changes_update"}
    db.close()
    with Store.open(path) as s:
        assert "m011_short_keys" in [r["name"] for r in s.db["_sqlite_migrations"].rows]
        assert_in_step(s)
        for p in papers:
            assert s.get_short(short_key(p.key)).key == p.key
        # the triggers set aside while the column was filled are back: the search index and
        # the change counter follow the next update (and later migrations add their own)
        assert set(s.db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()) >= triggers
        serial = s.db.execute("SELECT serial FROM changes WHERE name = 'papers'").fetchone()[0]
        s.upsert([Paper(title="An arXiv paper about quokkas", arxiv_id="2603.00001", version=2)], T0 + timedelta(days=1))
        assert s.db.execute("SELECT serial FROM changes WHERE name = 'papers'").fetchone()[0] > serial
        found = run_search(s, parse_query("ti:quokkas"), Filters(), limit=10).papers
        assert [p.key for p in found] == ["2603.00001"]
    conn = sqlite3.connect(path)
    try:  # reopening migrates nothing again
        assert conn.execute("SELECT count(*) FROM _sqlite_migrations WHERE name = 'm011_short_keys'").fetchone() == (1,)
    finally:
        conn.close()
