"""One paper per work (docs/design.md): a preprint, its new version, its PubMed record and its journal
version are one stored paper, found by any DOI or PMID they share (or, before any listing links
them, by title and authors); two works of one title stay two; the migration keeps every paper
and its history."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import sqlite_utils
from sqlite_utils.migrations import Migrations

from watcher import store as store_module
from watcher.identity import contradicts, merge_batch
from watcher.models import Paper, normalize_doi
from watcher.store import Store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
AUTHORS = ["Maria Okafor", "Jonas Lindqvist", "Wei Zhang"]
TITLE = "Dendritic spikes gate place-field formation in CA1"


def preprint(version=1, published=None, **kw) -> Paper:
    base = dict(title=TITLE, authors=AUTHORS, abstract="Place fields form after plateau potentials.",
                doi="10.1101/2026.03.01.612345", version=version, published=T0,
                categories=["neuroscience"], venues=["bioRxiv"], source="bio", sources=["bio"],
                url="https://www.biorxiv.org/content/10.1101/2026.03.01.612345v1")
    if published:  # as bioRxiv's records read: the journal's DOI is the one to cite
        base["dois"] = ["10.1101/2026.03.01.612345", published]
        base["doi"] = published
    base.update(kw)
    return Paper(**base)


def article(**kw) -> Paper:
    base = dict(title=TITLE, authors=AUTHORS, doi="10.1038/S41593-026-01234-5",
                journal="Nature Neuroscience", venues=["Nature Neuroscience"],
                published=T0 + timedelta(days=150), source="natneuro", sources=["natneuro"])
    base.update(kw)
    return Paper(**base)


def pubmed(**kw) -> Paper:
    base = dict(title=TITLE + ".", authors=["Okafor M", "Lindqvist J", "Zhang W"],
                doi="10.1038/s41593-026-01234-5", pmid="41234567", pmcid="PMC12345678",
                journal="Nature neuroscience", venues=["Nature neuroscience"], source="pm",
                sources=["pm"])
    base.update(kw)
    return Paper(**base)


def test_a_doi_is_one_spelling_and_gives_the_key():
    p = article()
    assert p.doi == "10.1038/s41593-026-01234-5" and p.dois == [p.doi]
    assert p.key == "doi:10.1038/s41593-026-01234-5"
    assert normalize_doi("https://doi.org/10.1101/2026.03.01.612345.") == "10.1101/2026.03.01.612345"
    assert normalize_doi("not a doi") is None
    assert Paper(title="x", pmid="123").key == "pmid:123"
    assert Paper(title="x", arxiv_id="2504.07615", doi="10.1/x").key == "2504.07615"


def test_preprint_v2_pubmed_record_and_journal_version_are_one_stored_paper(tmp_path):
    with Store.open(tmp_path / "w.db") as s:
        first = s.upsert([preprint()], T0)
        assert first.new == ["doi:10.1101/2026.03.01.612345"]
        v2 = s.upsert([preprint(version=2, updated=T0 + timedelta(days=20))], T0 + timedelta(days=20))
        assert v2.updated == first.new and not v2.new
        linked = s.upsert([preprint(version=2, published="10.1038/s41593-026-01234-5")],
                          T0 + timedelta(days=150))
        assert linked.updated == first.new
        assert s.upsert([pubmed()], T0 + timedelta(days=151)).updated == first.new
        assert s.upsert([article()], T0 + timedelta(days=152)).updated == first.new
        assert s.count_papers() == 1
        p = s.get(first.new[0])
        assert p.version == 2 and p.pmid == "41234567" and p.pmcid == "PMC12345678"
        assert p.dois == ["10.1101/2026.03.01.612345", "10.1038/s41593-026-01234-5"]
        assert p.doi == "10.1038/s41593-026-01234-5"  # the journal's DOI is the one to cite
        # the journal's own spelling of its name, whichever listing came first (docs/sources-journals.md)
        assert p.sources == ["bio", "pm", "natneuro"] and p.venue == "Nature Neuroscience"
        assert p.publication == "published in Nature Neuroscience"
        assert p.title == TITLE  # the preprint's text stays


def test_the_journal_version_of_a_delivered_preprint_is_an_update(tmp_path):
    with Store.open(tmp_path / "w.db") as s:
        s.upsert([preprint()], T0)
        s.record_delivery("d", "mail", [preprint()], T0 + timedelta(hours=1))
        assert s.revised("d", "mail", after=T0 + timedelta(hours=1)) == []
        s.upsert([article()], T0 + timedelta(days=150))  # unlinked yet: title and authors tie it
        assert s.count_papers() == 1
        [updated] = s.revised("d", "mail", after=T0 + timedelta(hours=1))
        assert updated.publication == "published in Nature Neuroscience"
        assert s.candidates("d", "mail", since_day=None, stored_after=T0 + timedelta(hours=1)) == []
        # delivered again with its journal, it is no update any more
        s.record_delivery("d", "mail", [updated], T0 + timedelta(days=151))
        assert s.revised("d", "mail", after=T0 + timedelta(hours=1)) == []


def test_a_link_found_later_joins_two_stored_rows_of_one_work(tmp_path):
    renamed = article(title="Plateau potentials in CA1 dendrites build place fields")
    with Store.open(tmp_path / "w.db") as s:
        s.upsert([preprint()], T0)
        s.upsert([renamed], T0 + timedelta(days=150))  # another title: nothing ties them yet
        assert s.count_papers() == 2
        s.record_delivery("d", "mail", [renamed], T0 + timedelta(days=150, hours=1))
        s.upsert([preprint(published="10.1038/s41593-026-01234-5")], T0 + timedelta(days=151))
        assert s.count_papers() == 1
        [row] = s.db["papers"].rows
        assert row["key"] == "doi:10.1101/2026.03.01.612345"
        assert [r["paper"] for r in s.db["deliveries"].rows] == [row["key"]]
        assert {r["ident"]: r["paper"] for r in s.db["paper_ids"].rows} == {
            "doi:10.1101/2026.03.01.612345": row["key"], "doi:10.1038/s41593-026-01234-5": row["key"]}


def test_an_arxiv_paper_whose_doi_a_journal_lists_is_one_paper(tmp_path):
    ax = Paper(title="Scaling laws for protein language models", arxiv_id="2603.01234", version=1,
               authors=["Ana Ruiz"], doi="10.1126/science.adk1234", published=T0, source="ax",
               sources=["ax"])
    item = Paper(title="Scaling laws for protein language models.", authors=["A. Ruiz"],
                 doi="10.1126/SCIENCE.ADK1234", journal="Science", source="sci", sources=["sci"])
    with Store.open(tmp_path / "w.db") as s:
        s.upsert([ax], T0)
        assert s.upsert([item], T0 + timedelta(days=90)).updated == ["2603.01234"]
        assert s.count_papers() == 1 and s.get("2603.01234").journal == "Science"
    # journal first: the arXiv listing re-keys the row to its id
    with Store.open(tmp_path / "v.db") as s:
        s.upsert([item], T0)
        s.record_delivery("d", "mail", [item], T0)
        assert s.upsert([ax], T0 + timedelta(days=1)).updated == ["2603.01234"]
        assert [r["paper"] for r in s.db["deliveries"].rows] == ["2603.01234"]
    assert [p.key for p in merge_batch([item, ax])] == ["2603.01234"]


def test_two_works_of_one_title_stay_two():
    survey = dict(title="Single-cell atlas of the human retina", authors=["Ana Ruiz"])
    a = Paper(doi="10.1038/s41586-026-00001-1", **survey)
    b = Paper(doi="10.1016/j.cell.2026.01.002", **survey)  # two journal articles: two works
    assert contradicts(a, b) and len(merge_batch([a, b])) == 2
    other = Paper(title=survey["title"], authors=["Kenji Sato"], doi="10.1101/2026.01.01.000001")
    assert contradicts(a, other)  # a preprint of the title by someone else
    twins = [Paper(title="Same", arxiv_id="2603.00001", doi="10.1/shared"),
             Paper(title="Same", arxiv_id="2603.00002", doi="10.1/shared")]
    assert len(merge_batch(twins)) == 2  # two arXiv ids never merge, whatever DOI they share


def test_the_migration_keeps_every_paper_and_its_history(tmp_path):
    path = tmp_path / "old.db"
    old = Migrations("watcher")
    for m in (store_module.m001_initial, store_module.m002_web_search, store_module.m003_ratings,
              store_module.m004_tldr_cache):
        old()(m)
    db = sqlite_utils.Database(path)
    old.apply(db)
    columns = {c.name for c in db["papers"].columns}
    journal = Paper(title="A journal article", doi="10.1038/ABC.123", source="list")
    ax = Paper(title="An arXiv paper", arxiv_id="2401.00001", doi="10.1103/PhysRevD.1.2", source="ax")
    for p in (journal, ax):
        row = {k: v for k, v in store_module._paper_row(p).items() if k in columns}
        row.update(key=("title:a journal article" if p is journal else p.key),
                   doi=("10.1038/ABC.123" if p is journal else "10.1103/PhysRevD.1.2"),
                   first_seen="2025-01-01T00:00:00.000000+00:00",
                   last_changed="2025-01-01T00:00:00.000000+00:00")
        db["papers"].insert(row)
    db["deliveries"].insert({"digest": "d", "channel": "mail", "paper": "title:a journal article",
                             "version": None, "delivered_at": "2025-01-01T08:00:00+00:00"})
    db["ratings"].insert({"profile": "p", "paper": "title:a journal article", "value": "up",
                          "rated_at": "2025-01-02T00:00:00+00:00", "source": "cli"})
    db.close()
    with Store.open(path) as s:
        assert s.count_papers() == 2
        assert s.get("doi:10.1038/abc.123").title == "A journal article"
        assert s.get("doi:10.1038/abc.123").sources == ["list"]
        assert s.get("2401.00001").dois == ["10.1103/physrevd.1.2"]
        assert [r["paper"] for r in s.db["deliveries"].rows] == ["doi:10.1038/abc.123"]
        assert [r["paper"] for r in s.db["ratings"].rows] == ["doi:10.1038/abc.123"]
        # the same work listed again is found by its DOI, not stored anew
        again = s.upsert([Paper(title="A journal article", doi="10.1038/abc.123")], T0)
        assert again.unchanged == 1 and s.count_papers() == 2
        assert s.upsert([Paper(title="x", doi="10.1103/physrevd.1.2", journal="PRD")],
                        T0).updated == ["2401.00001"]


def test_jr_doi_and_subjects_select_papers_by_venue_and_doi():
    from watcher.config import Profile
    from watcher.errors import QuerySyntaxError
    from watcher.matching.match import ProfileMatcher, select
    from watcher.matching.query import parse_query

    linked = preprint(published="10.1038/s41593-026-02114-7", journal="Nature Neuroscience")
    med = Paper(title="Wastewater RSV", doi="10.1101/2026.11.20.26354902", venues=["medRxiv"],
                categories=["epidemiology"])
    ax = Paper(title="An arXiv paper", arxiv_id="2611.00001", categories=["q-bio.NC"])
    lancet = Paper(title="Flu", doi="10.1016/S1473-3099(26)00412-9", journal="The Lancet. Infectious diseases")
    papers = [linked, med, ax, lancet]

    def keys(query, **kw):
        matcher = ProfileMatcher(Profile(name="p", title="p", query=query, **kw))
        return sorted(m.paper.key for m in select(papers, [matcher]))

    assert keys("jr:biorxiv") == [linked.key]
    assert keys('jr:"nature neuroscience"') == keys("jr:nature*") == [linked.key]
    assert keys("jr:arxiv") == ["2611.00001"]
    assert keys('jr:"The Lancet Infectious Diseases"') == [lancet.key]  # punctuation aside
    assert keys("doi:10.1101/*") == sorted([linked.key, med.key])
    assert keys("doi:https://doi.org/10.1038/S41593-026-02114-7") == [linked.key]
    assert keys('doi:"10.1016/s1473-3099(26)00412-9"') == [lancet.key]
    assert keys("cat:neuroscience OR cat:epidemiology") == sorted([linked.key, med.key])
    assert keys("doi:10.* OR jr:arxiv", categories=("Cell_Biology", "neuroscience")) == sorted(
        [linked.key, lancet.key])  # the subject cut keeps papers whose categories are unknown
    [m] = select([linked], [ProfileMatcher(Profile(name="p", title="p", query="jr:biorxiv"))])
    assert m.reasons == ["jr: biorxiv"]
    for bad in ("doi:nonsense", "jr:*", "doi:10.1*01/x"):
        with pytest.raises(QuerySyntaxError):
            parse_query(bad)


def test_a_stored_paper_is_found_by_doi_pmid_or_key(tmp_path):
    with Store.open(tmp_path / "w.db") as s:
        s.upsert([preprint(published="10.1038/s41593-026-01234-5"), pubmed()], T0)
        key = "doi:10.1101/2026.03.01.612345"
        assert s.count_papers() == 1
        for ref in (key, "10.1038/S41593-026-01234-5", "https://doi.org/10.1101/2026.03.01.612345",
                    "pmid:41234567", TITLE):
            assert s.find(ref).key == key, ref
        assert s.find("10.1038/nothing") is None


def test_the_atom_feed_bibtex_and_updates_show_the_venue_and_the_doi():
    import json as jsonlib

    from watcher.present.bibtex import write
    from watcher.deliver.feed import build_entry
    from watcher.models import Digest, Match
    from watcher.present.render import render

    work = preprint(published="10.1038/s41593-026-01234-5", journal="Nature Neuroscience",
                    sources=["bio", "natneuro"])
    m = Match(work, 1.0, ["jr: biorxiv"], "p")
    entry = build_entry(m, T0)
    links = {(l.get("title"), l.get("href")) for l in entry if l.tag.endswith("link")}
    assert ("doi", "https://doi.org/10.1038/s41593-026-01234-5") in links
    content = next(e for e in entry if e.tag.endswith("content")).text
    assert "Nature Neuroscience" in content and "doi:10.1038/s41593-026-01234-5" in content
    bib = write([work, Paper(title="An arXiv paper", arxiv_id="2611.00001", authors=["Ola Nordmann"])])
    assert bib.startswith("@article{okafor2026dendritic") and "journal = {Nature Neuroscience}" in bib
    assert "@misc{nordmann" in bib and bib.count("journal =") == 1
    digest = Digest(name="d", title="D", date=T0.date(), matches=[m], updated=[m])
    html = render(digest, "html")
    assert "via bio, natneuro" in html and "· published in Nature Neuroscience</span>" in html
    assert "published in Nature Neuroscience" in render(digest, "markdown")
    slack = jsonlib.loads(render(digest, "slack"))
    assert "published in Nature Neuroscience" in jsonlib.dumps(slack)
    assert jsonlib.loads(render(digest, "json"))[0]["venue"] == "Nature Neuroscience"


def test_the_json_format_round_trips_a_work_and_refuses_wrong_types():
    from watcher import formats
    from watcher.errors import InputError
    from watcher.models import Digest, Match
    from watcher.present.render import render

    work = pubmed(dois=["10.1101/2026.03.01.612345", "10.1038/s41593-026-01234-5"], sources=["bio", "pm"])
    text = render(Digest(name="d", title="D", date=T0.date(), matches=[Match(work, 1.0, [], "p")]), "json")
    [back] = formats.read(text.encode(), "digest.json").papers
    assert (back.key, back.dois, back.pmid, back.pmcid, back.journal, back.sources) == (
        work.key, work.dois, "41234567", "PMC12345678", "Nature neuroscience", ["bio", "pm"])
    for bad in ('"dois": 5', '"venues": "Nature"', '"pmid": 41234567'):
        with pytest.raises(InputError, match=bad.split(":")[0].strip('"')):
            formats.read(('[{"title": "x", "arxiv_id": null, ' + bad + "}]").encode(), "bad.json")
