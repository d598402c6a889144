"""The search's check by the query language: pages, however the candidates are chunked, are
exactly the query language's matches, newest first — for every query, those the index narrows
well included; the check's shortcuts (words read from a small batch's papers, the stored
normalised words) give what the index and normalising give."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from watcher import formats
from watcher.matching.index import prepare
from watcher.matching.query import parse_query
from watcher.services.search import Filters, run_search
from watcher.store import Store

DATA = Path(__file__).parent.parent / "data"
NOW = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)

QUERIES = ["transformer*", "reinforc*", "polic*", "policy", "ti:policies", "abs:\"language model*\"",
           "LLMs", "fine-tuning", "au:Levine", "NOT transformer", "reinforc* ANDNOT ti:survey",
           "agent* OR ti:diffusion", "(model* AND cat:cs.CL) OR au:Wang", "ti:benchmark*",
           "zürich OR naïve OR fine*", "studies", "study*", "multi-agent*",
           "GRPO", "learning", "cat:lg", "cat:cs.LG", "ti:fine-tuning", "etude", "LLM's"]


def corpus():
    papers = []
    for name in ("corpus-2025-04-09.jsonl.gz", "corpus-2025-04-10.jsonl.gz"):
        papers += formats.read((DATA / name).read_bytes(), name).papers
    papers = list({p.key: p for p in papers}.values())  # the second day repeats a few    # accents, ligatures and LaTeX, which normalising folds
    papers.append(replace(papers[0], arxiv_id="2504.99991", title="Naïve ﬁne-tuning in Zürich",
                          abstract="Policies for \\'{e}tudes of multi-agent studies"))
    return papers


@pytest.mark.slow  # pages through every match of 25 queries over the two-day corpus, 4 and 25 at a time
def test_checked_pages_are_the_query_languages_matches_newest_first(tmp_path):
    """Newest first walks the order papers were stored in, which is their days' order within a
    fetch whatever order its listing gave them in: here the days are scattered over the
    listing, as a backfill or the sample of several days gives them."""
    papers = [replace(p, announced=date(2025, 4, 1 + (7 * i) % 10)) for i, p in enumerate(corpus())]
    with Store.open(tmp_path / "w.db") as s:
        s.upsert(papers, NOW)
        stored = [s.get(p.key) for p in papers]
        rows = list(s.db.execute("SELECT key, day, rowid FROM papers"))
        assert len({day for _, day, _ in rows}) == 10
        order = {key: n for n, (key, _, _) in enumerate(sorted(rows, key=lambda r: (r[1], r[2]), reverse=True))}
        every = run_search(s, None, Filters(), limit=len(rows))  # no query: SQLite's page alone
        assert [p.key for p in every.papers] == sorted(order, key=order.get)
        batch = prepare(stored)
        for q in QUERIES:
            query = parse_query(q)
            expected = sorted((stored[i].key for i in batch.evaluate(query.root)), key=order.get)
            for size in (4, 25):
                found, page = [], 0
                while True:
                    r = run_search(s, query, Filters(), offset=page * size, limit=size)
                    found += [p.key for p in r.papers]
                    page += 1
                    if not r.more:
                        break
                assert found == expected, (q, size)
            # with the filters: the days from 3 to 8 April, category cs.CL
            narrow = Filters(day_from=date(2025, 4, 3), day_to=date(2025, 4, 8), category="cs.CL")
            kept = [k for k in expected if "2025-04-03" <= s.get(k).day.isoformat() <= "2025-04-08"
                    and ("cs.CL" in s.get(k).categories or s.get(k).primary_category == "cs.CL")]
            assert [p.key for p in run_search(s, query, narrow, limit=len(rows)).papers] == kept, q


def test_every_search_runs_in_a_worker_thread_never_on_the_event_loop(tmp_path, monkeypatch):
    """The web page runs every search, exact or checked (names, prefixes, NOT), in a worker
    thread (watcher.web.pages.in_thread): a search scanning candidates on the event loop held
    up every other request. The pages are what run_search gives either way."""
    import threading
    import warnings

    from webkit import app_for, sample_setup

    from watcher.web import pages, search as web_search

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    config, db = sample_setup(tmp_path)
    loop_threads, search_threads = set(), []
    real_search, real_pool = web_search._search, pages.run_in_threadpool

    async def counted(fn, *args):
        loop_threads.add(threading.get_ident())
        return await real_pool(fn, *args)

    def recorded(request):
        search_threads.append(threading.get_ident())
        return real_search(request)

    monkeypatch.setattr(pages, "run_in_threadpool", counted)
    monkeypatch.setattr(web_search, "_search", recorded)
    queries = ["reinforc*", "NOT GRPO", "au:Levine OR polic*", "GRPO"]
    with TestClient(app_for(config, db, secret="s")) as client:
        for q in queries:
            for page in ("1", "2"):
                r = client.get("/search", params={"q": q, "page": page})
                assert r.status_code == 200
    assert len(search_threads) == 2 * len(queries)
    assert loop_threads and not loop_threads & set(search_threads)


@pytest.mark.slow  # looks up thousands of words, prefixes and categories of the corpus one fresh batch at a time
def test_a_small_batch_reads_a_word_from_its_papers_as_its_index_finds_it():
    """A search's chunk of candidates looks its few words up by reading each paper's field
    (index.SCANS words a field) instead of indexing every word of every paper: the same
    papers for every word, prefix and category of the corpus, in every field."""
    from watcher.matching import index

    papers = corpus()
    indexed = prepare(papers)
    fields = ("title", "abstract", "authors", "categories", "venues", "dois")
    words = {f: sorted(indexed.index(f)) for f in fields}
    asked = 0
    for start in range(0, len(papers), 40):
        chunk = papers[start:start + 40]
        reference = prepare(chunk)
        for f in fields:
            reference.index(f)  # indexed first: postings reads the index
        for f in fields:
            sample = words[f][start % 7::7][:60]
            asks = sample + [w[:3] + "*" for w in sample if len(w) > 3] + ["zzzz", "zz*"]
            for k in range(0, len(asks), index.SCANS):
                batch = prepare(chunk)  # a fresh batch for each SCANS words: every one read
                for word in asks[k:k + index.SCANS]:
                    assert batch.postings(f, word) == reference.postings(f, word), (f, word)
                    asked += 1
                assert f not in batch._index  # read from the papers, never indexed
    assert asked > 2000


def test_the_check_reads_the_stored_words_which_are_the_matchers_own(tmp_path):
    """The words the store keeps of each paper (search_title, search_abstract: what the index
    holds) are the ones normalising its text gives, so the check reads them instead of
    normalising again; a paper whose stored words are missing is normalised as before."""
    from watcher.matching.index import prepare_doc
    from watcher.store import row_to_paper

    papers = corpus()
    with Store.open(tmp_path / "w.db") as s:
        s.upsert(papers, NOW)
        rows = [dict(r) for r in s.db.query("SELECT * FROM papers")]
    assert len(rows) == len(papers)
    for row in rows:
        paper = row_to_paper(row)
        assert prepare_doc(paper, row) == prepare_doc(paper), paper.key
        assert prepare_doc(paper, dict(row, search_abstract=None)) == prepare_doc(paper)
    row = dict(rows[0], search_title="stored words")
    assert prepare_doc(row_to_paper(row), row).title == " stored words "  # read, not normalised
