"""Search is the query language (docs/web.md "Search"): ``/search.json`` returns exactly the
papers a profile with the same query selects, over the same database — for the reviewer's
cases (stemming, categories, an AND that is true for both, LaTeX accents, apostrophes,
ligatures) and for queries hypothesis builds from the real corpus's own words."""

from __future__ import annotations

import warnings
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from test_search_check import NOW, corpus
from webkit import app_for

from watcher.categories import category_problem
from watcher.matching.compile import compile_profile
from watcher.config import load_config
from watcher.matching.index import prepare
from watcher.models import Paper
from watcher.store import Store
from watcher.util.text import words

CONFIG = """
[watcher]
database = "search.db"

[profile.p]
query = "placeholder"
"""


def tricky(base: Paper) -> list[Paper]:
    """Papers written the ways the reviewer found the index and the matcher disagreeing."""
    def one(n, title, abstract, **kw):
        return replace(base, arxiv_id=f"2504.9{n:04d}", title=title, abstract=abstract, **kw)
    return [
        one(1, "What the agent learned", "A policy is learned from demonstrations."),
        one(2, "Catching Pok\\'emon with planning", "We play Pok\\'{e}mon Red with an agent."),
        one(3, "The LLMs we trust", "Agents built on LLMs."),
        one(4, "An LLM's memory", "We probe an LLM's recall."),
        one(5, "Eﬃcient ﬁne-tuning of adapters", "Parameter-eﬃcient methods."),
        one(6, "Smith and Jones on graphs", "Graph learning.", authors=["Jane Smith", "Al Jones"]),
        one(7, "Learning to rank", "Ranking with learning.", categories=["cs.IR"], primary_category="cs.IR"),
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("searchtruth")
    (folder / "config.toml").write_text(CONFIG)
    config = load_config(folder / "config.toml")
    papers = corpus()
    papers += tricky(papers[0])
    with Store.open(config.settings.database) as store:
        store.upsert(papers, NOW)
        stored = [store.get(p.key) for p in papers]
    app = app_for(config, config.settings.database)
    with TestClient(app) as client:
        yield config, client, prepare(stored), stored


def searched(client, q: str) -> list[str]:
    keys, page = [], 1
    while True:
        r = client.get("/search.json", params={"q": q, "page": str(page)})
        assert r.status_code == 200, (q, r.text[:300])
        data = r.json()
        assert all(p["id"] and p["title"] for p in data["papers"])
        keys += [p["key"] for p in data["papers"]]
        if not data["more"]:
            return keys
        page += 1


def selected(config, batch, stored, q: str) -> list[str]:
    matcher = compile_profile(config, "p", query=q)
    return [stored[i].key for i in matcher.score_batch(batch)]


REVIEWER = ["learning", "learned", "cat:cs.LG", "cat:cs", "graph AND au:smith", "au:smith",
            "pokemon", "ti:pokemon", "LLM's", "LLMs", "ti:fine-tuning", "efficient", "ti:\"fine tuning\"",
            "learning AND cat:cs.IR", "learning ANDNOT cat:cs.LG", "reinforc* AND NOT ti:survey",
            "\"language model*\"", "au:\"J. Smith\"", "NOT learning"]


@pytest.mark.parametrize("q", REVIEWER)
def test_search_returns_exactly_what_a_profile_with_the_query_selects(site, q):
    config, client, batch, stored = site
    found = searched(client, q)
    assert len(found) == len(set(found))
    assert sorted(found) == sorted(selected(config, batch, stored, q)), q


def test_the_reviewers_cases_find_what_the_matcher_finds(site):
    config, client, batch, stored = site
    by = {q: set(searched(client, q)) for q in ("learning", "pokemon", "LLM's", "ti:fine-tuning",
                                                "graph", "graph AND au:smith")}
    assert "2504.90001" not in by["learning"]  # "learned" is not "learning": no stemmer of its own
    assert "2504.90007" in by["learning"]
    # cs.LG is not the category "lg": a profile with it selects nothing (and `watcher check`
    # refuses it), the search says so with check's words rather than finding nothing
    assert selected(config, batch, stored, "cat:lg") == []
    r = client.get("/search.json", params={"q": "cat:lg"})
    assert r.status_code == 400 and r.json()["problems"] == [category_problem("lg")]
    assert r.json()["problems"][0].startswith("'lg' is not an arXiv category")
    assert "2504.90002" in by["pokemon"]  # Pok\'emon
    assert {"2504.90003", "2504.90004"} <= by["LLM's"]  # LLMs and LLM's alike
    assert "2504.90005" in by["ti:fine-tuning"]  # the "ﬁ" ligature
    assert "2504.90006" in by["graph AND au:smith"] and by["graph AND au:smith"] <= by["graph"]


def _vocabulary():
    papers = corpus()
    vocab = sorted({w for p in papers[:120] for w in words(p.title) if len(w) > 3})
    # the categories a profile may name (`watcher check` refuses the rest, and so does the
    # search): listings also carry ACM and MSC classes ("F.2.2; I.2.7")
    cats = sorted({c for p in papers for c in p.categories
                   if category_problem(c) is None and category_problem(c.split(".")[0]) is None})
    names = sorted({a for p in papers[:60] for a in p.authors[:2] if a.replace(" ", "").replace(".", "").isalpha()})
    return vocab, cats, names


VOCAB, CATS, NAMES = _vocabulary()
term = st.one_of(
    st.sampled_from(VOCAB),
    st.sampled_from(VOCAB).map(lambda w: f"ti:{w}"),
    st.sampled_from(VOCAB).map(lambda w: f"abs:{w}"),
    st.sampled_from(VOCAB).map(lambda w: w[:4] + "*"),
    st.tuples(st.sampled_from(VOCAB), st.sampled_from(VOCAB)).map(lambda t: f'"{t[0]} {t[1]}"'),
    st.sampled_from(CATS).map(lambda c: f"cat:{c}"),
    st.sampled_from(CATS).map(lambda c: f"cat:{c.split('.')[0]}"),
    st.sampled_from(NAMES).map(lambda n: f'au:"{n}"'),
    st.sampled_from(NAMES).map(lambda n: f"au:{n.split()[-1]}"),
)
query = st.recursive(term, lambda inner: st.one_of(
    st.tuples(inner, inner).map(lambda t: f"({t[0]} AND {t[1]})"),
    st.tuples(inner, inner).map(lambda t: f"({t[0]} OR {t[1]})"),
    st.tuples(inner, inner).map(lambda t: f"({t[0]} ANDNOT {t[1]})"),
    st.tuples(inner, inner).map(lambda t: f"({t[0]} AND NOT {t[1]})"),
), max_leaves=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(q=query)
def test_any_query_of_the_corpus_words_searches_as_a_profile_selects(site, q):
    config, client, batch, stored = site
    assert sorted(searched(client, q)) == sorted(selected(config, batch, stored, q)), q
