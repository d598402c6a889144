"""The store: schema migrations, identity and merge rules of docs/design.md, the ledger."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from watcher.errors import StoreError
from watcher.models import Paper
from watcher.store import Store

NOW = datetime(2025, 4, 14, 20, 0, tzinfo=timezone.utc)


@pytest.fixture
def store():
    s = Store.open(None)
    yield s
    s.close()


def paper(**kw) -> Paper:
    base = dict(title="VLM-R1: A Stable and Generalizable R1-style Large Vision-Language Model",
                authors=["Haozhan Shen"], abstract="Recently DeepSeek R1 has shown ...",
                published=datetime(2025, 4, 10, 10, 5, 15, tzinfo=timezone.utc))
    base.update(kw)
    return Paper(**base)


def test_migrations_are_recorded_and_reopening_is_a_no_op(tmp_path):
    path = tmp_path / "w.db"
    with Store.open(path) as s:
        s.upsert([paper(arxiv_id="2504.07615", version=1)], NOW)
    with Store.open(path) as s:
        names = [r["name"] for r in s.db["_sqlite_migrations"].rows]
        assert names[0] == "m001_initial"
        assert {"m002_web_search", "m003_ratings", "m004_tldr_cache"} <= set(names)
        assert len(names) == len(set(names))
        assert s.count_papers() == 1


def test_a_database_from_before_the_tldr_cache_migrates_forward_with_nothing_lost(tmp_path):
    path = tmp_path / "w.db"
    with Store.open(path) as s:
        s.upsert([paper(arxiv_id="2504.07615", version=1)], NOW)
        s.record_delivery("daily", "me", [paper(arxiv_id="2504.07615")], NOW)
        s.db.execute("DROP TABLE tldr_cache")  # as written by a version without m004
        s.db.execute("DROP TABLE tldr_calls")
        s.db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm004_tldr_cache'")
    with Store.open(path) as s:
        assert s.count_papers() == 1 and s.channel_state("daily", "me").watermark
        s.tldr_remember([("2504.07615", "One sentence."), ("title:x", None)], "m", NOW)
        s.tldr_count_calls("2025-04-12", 2)
        s.tldr_count_calls("2025-04-12", 1)
    with Store.open(path) as s:
        assert s.tldr_cached(["2504.07615", "title:x", "2504.00001"]) == {
            "2504.07615": "One sentence.", "title:x": None}
        assert s.tldr_calls("2025-04-12") == 3 and s.tldr_calls("2025-04-13") == 0


def test_a_sqlite_utils_plugin_does_not_prepare_watchers_connections(tmp_path):
    """watcher's connections are its own: a sqlite-utils plugin installed for another tool is
    not run on them (and opening one does not read every installed package's entry points to
    find such plugins, a cost of every command's first read)."""
    import sqlite_utils
    from sqlite_utils.plugins import pm

    prepared = []

    class Plugin:
        @sqlite_utils.hookimpl
        def prepare_connection(self, conn):
            prepared.append(conn)

    plugin = Plugin()
    pm.register(plugin, name="a-plugin-of-another-tool")
    try:
        with Store.open(tmp_path / "watcher.db") as store:
            store.count_papers()
        with Store.open(tmp_path / "watcher.db", readonly=True), Store.open_current(tmp_path / "watcher.db"):
            pass
        with Store.open(None):
            pass
        assert prepared == []
        sqlite_utils.Database(memory=True)  # the plugin is registered: sqlite-utils' own use runs it
        assert len(prepared) == 1
    finally:
        pm.unregister(plugin)


def test_a_new_paper_then_the_same_paper_again_is_unchanged(store):
    c1 = store.upsert([paper(arxiv_id="2504.07615", version=1)], NOW)
    c2 = store.upsert([paper(arxiv_id="2504.07615", version=1)], NOW)
    assert (len(c1.new), len(c2.new), c2.unchanged, len(c2.updated)) == (1, 0, 1, 0)
    assert store.count_papers() == 1


def test_a_new_version_updates_the_row_and_is_not_a_new_paper(store):
    store.upsert([paper(arxiv_id="2504.07615", version=1)], NOW)
    c = store.upsert([paper(arxiv_id="2504.07615", version=2, abstract="Revised abstract.",
                            updated=NOW)], NOW + timedelta(days=1))
    assert c.new == [] and c.updated == ["2504.07615"]
    p = store.get("2504.07615")
    assert (p.version, p.abstract) == (2, "Revised abstract.")
    assert p.published == datetime(2025, 4, 10, 10, 5, 15, tzinfo=timezone.utc)  # first version's date stays
    assert store.db["papers"].get("2504.07615")["revised_at"] is not None
    # an older version seen later does not roll the text back
    store.upsert([paper(arxiv_id="2504.07615", version=1, abstract="Old.")], NOW)
    assert store.get("2504.07615").abstract == "Revised abstract."


def test_id_less_listing_then_arxiv_entry_merge_into_one_row(store):
    c1 = store.upsert([paper(title="VLM-R1:  a stable and generalizable R1-style large "
                                   "vision–language model")], NOW)
    assert c1.new[0].startswith("title:")
    c2 = store.upsert([paper(arxiv_id="2504.07615", version=1, categories=["cs.CV"])], NOW)
    assert c2.new == [] and c2.updated == ["2504.07615"]
    assert store.count_papers() == 1
    assert store.get("2504.07615").categories == ["cs.CV"]


def test_arxiv_entry_then_id_less_listing_merge_into_one_row(store):
    store.upsert([paper(arxiv_id="2504.07615", version=1)], NOW)
    c = store.upsert([paper(upvotes=12)], NOW)
    assert c.new == [] and store.count_papers() == 1
    assert store.get("2504.07615").upvotes == 12


def test_rekeying_keeps_the_ledger(store):
    store.upsert([paper()], NOW)
    key = store.find(paper().title).key
    store.record_delivery("daily", "me", [store.get(key)], NOW)
    store.upsert([paper(arxiv_id="2504.07615", version=1)], NOW)
    rows = list(store.db["deliveries"].rows)
    assert [r["paper"] for r in rows] == ["2504.07615"]


def test_upvotes_refresh_and_unknown_values_never_erase_known_ones(store):
    store.upsert([paper(arxiv_id="2504.07615", upvotes=3, comment="ICML")], NOW)
    store.upsert([paper(arxiv_id="2504.07615", upvotes=40, comment=None, authors=[])], NOW)
    p = store.get("2504.07615")
    assert (p.upvotes, p.comment, p.authors) == (40, "ICML", ["Haozhan Shen"])


def test_a_date_only_published_is_refined_by_an_exact_one(store):
    store.upsert([paper(arxiv_id="2504.07615", published=datetime(2025, 4, 10, tzinfo=timezone.utc))], NOW)
    store.upsert([paper(arxiv_id="2504.07615")], NOW)
    assert store.get("2504.07615").published.hour == 10


def test_a_replacement_of_an_unknown_paper_is_stored_but_not_listed_as_new(store):
    store.upsert([paper(arxiv_id="2401.00001", version=3, announce_type="replace",
                        announced=date(2025, 4, 14))], NOW)
    assert store.get("2401.00001") is not None
    assert store.candidates("d", "c", since_day=date(2025, 1, 1), stored_after=None) == []


def test_candidates_exclude_delivered_and_respect_window(store):
    store.upsert([paper(arxiv_id="2504.00001", title="One", announced=date(2025, 4, 14)),
                  paper(arxiv_id="2504.00002", title="Two", announced=date(2025, 4, 1))], NOW)
    got = store.candidates("d", "c", since_day=date(2025, 4, 11), stored_after=None)
    assert [p.arxiv_id for p in got] == ["2504.00001"]
    store.record_delivery("d", "c", got, NOW)
    assert store.candidates("d", "c", since_day=date(2025, 4, 11), stored_after=None) == []
    # another channel of the same digest has its own ledger
    assert len(store.candidates("d", "other", since_day=date(2025, 4, 11), stored_after=None)) == 1


def test_a_corrupt_database_is_a_clear_error_and_is_not_overwritten(tmp_path):
    path = tmp_path / "watcher.db"
    junk = b"this is not a database" * 100
    path.write_bytes(junk)
    with pytest.raises(StoreError, match="damaged or not a watcher database.*nothing was changed"):
        Store.open(path)
    assert path.read_bytes() == junk


def test_find_by_id_with_version_or_by_title(store):
    store.upsert([paper(arxiv_id="2504.07615", version=2)], NOW)
    assert store.find("2504.07615v2").arxiv_id == "2504.07615"
    assert store.find("arXiv:2504.07615").arxiv_id == "2504.07615"
    assert store.find("vlm-r1: a stable and generalizable r1-style large vision-language model")
    assert store.find("no such paper") is None


def test_a_paper_listed_by_two_sources_is_unchanged_when_both_list_it_again(store):
    arxiv = paper(arxiv_id="2504.07615", version=1, url="https://arxiv.org/abs/2504.07615v1")
    hf = paper(arxiv_id="2504.07615", url="https://huggingface.co/papers/2504.07615", upvotes=3)
    store.upsert([arxiv, hf], NOW)
    again = store.upsert([arxiv, hf], NOW + timedelta(days=1))
    assert again.updated == [] and again.unchanged == 1


def test_two_ids_with_the_same_title_stay_two_papers_and_an_id_less_listing_merges(store):
    a = paper(arxiv_id="2504.00001", title="Introduction")
    b = paper(arxiv_id="2504.00002", title="Introduction")
    c = paper(title="Introduction", upvotes=7)
    counts = store.upsert([a, b, c], NOW)
    assert sorted(counts.new) == ["2504.00001", "2504.00002"]
    assert store.get("2504.00001").upvotes == 7 and store.get("2504.00002").upvotes is None


def test_a_read_only_store_is_read_only(tmp_path):
    """``Store.open(readonly=True)`` neither creates, migrates nor writes: a write raises."""
    import sqlite3

    with pytest.raises(StoreError):
        Store.open(tmp_path / "none.db", readonly=True)
    assert not (tmp_path / "none.db").exists()
    with Store.open(tmp_path / "w.db") as s:
        s.upsert([paper(arxiv_id="2504.07615")], NOW)
    with Store.open(tmp_path / "w.db", readonly=True) as s:
        assert s.count_papers() == 1
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            s.db.execute("DELETE FROM papers")
    with Store.open(tmp_path / "w.db") as s:
        assert s.count_papers() == 1


def test_paper_counts_follow_every_insert_merge_and_delete(store):
    """status's counts (m017's paper_counts, kept by triggers) equal a count of every row,
    through new papers, a merge that re-keys one row and deletes another, and a delete."""

    def counted():
        rows = dict(store.db.execute("SELECT coalesce(source, ''), count(*) FROM papers GROUP BY 1").fetchall())
        kept = {k: n for k, n in store.db.execute("SELECT source, papers FROM paper_counts") if n}
        return rows, kept

    store.upsert([paper(source="hf"), paper(arxiv_id="2504.00002", title="Other", source="arxiv"),
                  paper(arxiv_id="2504.00003", title="Third", source=None)], NOW)
    rows, kept = counted()
    assert rows == kept == {"hf": 1, "arxiv": 1, "": 1} and store.count_papers() == 3
    # the title-only paper joins its arXiv listing: one row re-keyed, the total the same
    store.upsert([paper(arxiv_id="2504.07615", version=1, source="arxiv")], NOW)
    rows, kept = counted()
    assert rows == kept and store.count_papers() == sum(rows.values()) == 3
    with store.writing():
        store.db.execute("UPDATE papers SET source = 'pubmed' WHERE key = '2504.00002'")
        store.db.execute("DELETE FROM papers WHERE key = '2504.00003'")
    rows, kept = counted()
    assert rows == kept and store.count_papers() == 2
    assert {r.name: r.papers for r in store.sources()} == {}  # no sources row yet: none listed


def test_a_writer_checks_every_page_only_when_the_file_changed_since_the_last_checked_writer(tmp_path, monkeypatch):
    """PRAGMA quick_check reads the whole file (a second per gigabyte): a writer that finds the
    database as the last checked writer left it skips it; any other write brings it back."""
    import sqlite3

    import watcher.store as store_module

    checks = []
    real = store_module._check_intact
    monkeypatch.setattr(store_module, "_check_intact", lambda conn: (checks.append(1), real(conn)))
    path = tmp_path / "w.db"
    with Store.open(path) as s:
        s.upsert([paper(arxiv_id="2504.07615")], NOW)
    with Store.open(path) as s:  # as the last writer left it: not checked again
        s.upsert([paper(arxiv_id="2504.00002", title="Other")], NOW)
    assert checks == []
    conn = sqlite3.connect(path)  # another program writes it
    conn.execute("UPDATE papers SET comment = 'x'")
    conn.commit()
    conn.close()
    with Store.open(path):
        pass
    assert checks == [1]
    with Store.open(path):
        pass
    assert checks == [1]
