"""Two different papers of one common title stay two papers (docs/design.md "Identity"): an id-less
listing merges by title only where nothing contradicts it (authors, dates), while an id-less
listing and the arXiv entry of the SAME paper still merge."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from helpers import run_cli
from watcher import formats
from watcher.formats import text as text_format
from watcher.identity import contradicts, merge_batch
from watcher.models import Paper
from watcher.store import Store

NOW = datetime(2025, 4, 14, 20, 0, tzinfo=timezone.utc)
TITLE = "A Survey of Large Language Models"


def alice(**kw) -> Paper:
    base = dict(title=TITLE, arxiv_id="2504.00001", version=1, authors=["Alice Archer", "Carol Chen"],
                abstract="Alice's survey of models.", categories=["cs.CL"],
                published=datetime(2025, 4, 1, 9, 0, tzinfo=timezone.utc))
    base.update(kw)
    return Paper(**base)


def bob(**kw) -> Paper:
    base = dict(title=TITLE, arxiv_id="2504.00002", version=1, authors=["Bob Baker"],
                abstract="Bob's survey, a different paper.", categories=["cs.AI"],
                published=datetime(2025, 4, 9, 17, 30, tzinfo=timezone.utc))
    base.update(kw)
    return Paper(**base)


def idless(p: Paper) -> Paper:
    """How a text digest lists ``p``: title, authors, date, abstract, no id."""
    return Paper(title=p.title, authors=list(p.authors), abstract=p.abstract, published=p.published)


def summary(p: Paper) -> tuple:
    return (p.authors, p.published, p.abstract)


def test_a_text_digest_of_two_same_title_papers_reads_back_as_two(tmp_path):
    source = tmp_path / "two.json"
    source.write_text(json.dumps([alice().to_json(), bob().to_json()]))
    text = run_cli("convert", str(source), "--to", "text", "--title", "T", "--date", "2025-04-12",
                   cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    (tmp_path / "digest.txt").write_bytes(text.stdout.rstrip(b"\n"))
    back = run_cli("convert", str(tmp_path / "digest.txt"), "--to", "json", cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    got = sorted((p["authors"], p["published"], p["abstract"]) for p in json.loads(back.stdout))
    assert got == [(["Alice Archer", "Carol Chen"], "2025-04-01T09:00:00Z", "Alice's survey of models."),
                   (["Bob Baker"], "2025-04-09T17:30:00Z", "Bob's survey, a different paper.")]


def test_the_store_keeps_two_same_title_papers_read_from_a_text_digest():
    written = text_format.write("T", NOW.date(), [alice(), bob()])  # a text digest has no ids
    listing = formats.read(written.encode(), "digest.txt")
    assert [p.arxiv_id for p in listing.papers] == [None, None]
    with Store.open(None) as store:
        counts = store.upsert(listing.papers, NOW)
        assert len(counts.new) == 2 and store.count_papers() == 2
        stored = sorted((store.get(k) for k in counts.new), key=lambda p: p.published)
        assert [summary(p) for p in stored] == [summary(alice()), summary(bob())]
        # the arXiv entries arriving later each find their own id-less row
        again = store.upsert([bob(), alice()], NOW)
        assert again.new == [] and store.count_papers() == 2
        assert [summary(store.get(i)) for i in ("2504.00001", "2504.00002")] == [
            summary(alice()), summary(bob())]


def test_the_same_paper_still_merges_with_its_id_less_listing():
    with Store.open(None) as store:
        store.upsert([idless(alice())], NOW)
        c = store.upsert([alice()], NOW)  # the arXiv entry of the same paper
        assert c.new == [] and store.count_papers() == 1
        store.upsert([Paper(title=TITLE.upper(), upvotes=9)], NOW)  # no authors, no date: no contradiction
        assert store.count_papers() == 1 and store.get("2504.00001").upvotes == 9


@pytest.mark.parametrize("other, same", [
    (idless(alice()), True),                                               # the same paper
    (Paper(title=TITLE), True),                                            # nothing to contradict
    (Paper(title=TITLE, authors=["A. Archer"]), True),                     # a short author list
    (Paper(title=TITLE, authors=["Archer, Alice"],
           published=datetime(2025, 4, 2, tzinfo=timezone.utc)), True),    # date-only, a day off
    (idless(bob()), False),                                                # other authors
    (Paper(title=TITLE, authors=["Alice Archer"],
           published=datetime(2023, 6, 1, tzinfo=timezone.utc)), False),   # the same author, years apart
])
def test_an_id_less_listing_merges_only_where_nothing_contradicts(other, same):
    assert contradicts(alice(), other) is not same
    merged = merge_batch([alice(), other])
    assert len(merged) == (1 if same else 2)
    assert merged[0].arxiv_id == "2504.00001" and merged[0].authors == alice().authors


def test_a_title_key_stored_before_keeps_its_ledger_when_the_listing_comes_again():
    """A database written before keys carried author and day: the row is found by its title,
    re-keyed, and its ledger rows follow, so nothing is delivered twice."""
    with Store.open(None) as store:
        store.upsert([idless(alice())], NOW)
        [key] = [r["key"] for r in store.db["papers"].rows]
        old_key = key.split("|")[0]  # "title:a survey of large language models"
        store.db.execute("UPDATE papers SET key = ? WHERE key = ?", [old_key, key])
        store.record_delivery("daily", "me", [store.get(old_key)], NOW)
        store.upsert([idless(alice())], NOW)
        assert [r["key"] for r in store.db["papers"].rows] == [key]
        assert [r["paper"] for r in store.db["deliveries"].rows] == [key]
        assert store.candidates("daily", "me", since_day=None, stored_after=None) == []


def test_a_journal_article_whose_feed_gives_it_a_later_date_stays_one_paper():
    """ScienceDirect dates an article by when it went online, then by its issue: the same item
    (title, authors, link) a month and more later is the same paper, updated, never a second
    one delivered again (QA). Two articles of one title at two pages stay two."""
    link = "https://www.sciencedirect.com/science/article/pii/S1055790324002318"
    online = Paper(title="Phylogeny of the genus Exostema", authors=["Mulder, K."], url=link,
                   published=datetime(2026, 11, 24, tzinfo=timezone.utc), journal="Molecular Phylogenetics and Evolution")
    issue = Paper(title="Phylogeny of the genus Exostema", authors=["Mulder, K."], url=link.replace("https", "http"),
                  published=datetime(2027, 1, 1, tzinfo=timezone.utc), journal="Molecular Phylogenetics and Evolution")
    assert not contradicts(online, issue)
    with Store.open(None) as store:
        assert len(store.upsert([online], NOW).new) == 1
        again = store.upsert([issue], NOW)
        assert again.new == [] and store.count_papers() == 1
    elsewhere = Paper(title="Phylogeny of the genus Exostema", authors=["Mulder, K."], url=link + "x",
                      published=datetime(2027, 1, 1, tzinfo=timezone.utc))
    assert contradicts(online, elsewhere)

