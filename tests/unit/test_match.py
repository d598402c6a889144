"""ProfileMatcher and select(): ways in, cuts, scores, reasons, ranking and merging."""

from __future__ import annotations

import tomllib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from watcher import formats
from watcher.config import Profile, parse_config
from watcher.matching.docfreq import DocFreq, default_doc_freq
from watcher.errors import QuerySyntaxError
from watcher.matching.match import AUTHOR_BOOST, CATEGORY_WEIGHT, QUERY_BASE, ProfileMatcher, prepare, select
from watcher.models import Paper

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = Path(__file__).resolve().parent.parent / "data"
# A tiny rarity table: "grpo" is rare, "model" is everywhere.
DF = DocFreq({"grpo": 1, "reinforcement": 50, "learning": 400, "model": 900, "llm": 300}, 1000)


def profile(**kw) -> Profile:
    kw.setdefault("name", "p")
    kw.setdefault("title", kw["name"].upper())
    return Profile(**kw)


def paper(title, abstract="", *, id=None, day=1, **kw) -> Paper:
    published = datetime(2025, 4, day, 12, tzinfo=timezone.utc)
    return Paper(title=title, abstract=abstract, arxiv_id=id, published=published, **kw)


def matcher(**kw) -> ProfileMatcher:
    examples = kw.pop("examples_papers", ())
    return ProfileMatcher(profile(**kw), examples, doc_freq=DF)


# --- scoring -------------------------------------------------------------------------------

def test_title_hits_weigh_more_than_abstract_hits():
    m = matcher(query="GRPO")
    in_title = m.score(paper("GRPO for all"))
    in_abstract = m.score(paper("Something", "We use GRPO."))
    assert in_title.score > in_abstract.score > 0
    assert in_title.reasons == ['ti: "GRPO"']
    assert in_abstract.reasons == ['abs: "GRPO"']


def test_rare_terms_weigh_more_than_common_ones():
    m = matcher(query="GRPO OR model")
    rare = m.score(paper("x", "GRPO"))
    common = m.score(paper("x", "model"))
    assert rare.score > 2 * common.score


def test_repeats_in_the_abstract_add_a_little():
    m = matcher(query="GRPO")
    once = m.score(paper("x", "GRPO here."))
    thrice = m.score(paper("x", "GRPO here, GRPO there, GRPOs everywhere."))
    assert once.score < thrice.score < 2 * once.score


def test_reasons_are_best_first_and_use_the_query_spelling():
    m = matcher(query='GRPO AND ("reinforcement learning" OR LLMs)')
    match = m.score(paper("Fast GRPO", "Reinforcement-learning of large LLM agents."))
    assert match.reasons == ['ti: "GRPO"', 'abs: "reinforcement learning"', 'abs: "LLMs"']


def test_followed_authors_match_whatever_the_query_says():
    m = matcher(query="GRPO", authors=("S. Levine", "Chelsea Finn"))
    by_author = m.score(paper("Robots", "walking", authors=["Sergey Levine", "Ann Bee"]))
    assert by_author.score == AUTHOR_BOOST
    assert by_author.reasons == ["author: Sergey Levine"]
    both = m.score(paper("GRPO", "", authors=["Chelsea Finn", "Sergey Levine"]))
    assert both.reasons[1:] == ["author: Sergey Levine", "author: Chelsea Finn"]  # profile order
    assert m.score(paper("Robots", "walking", authors=["Tom Levine"])) is None


def test_upvotes_boost_a_match_but_do_not_make_one():
    m = matcher(query="GRPO")
    plain = m.score(paper("x", "GRPO"))
    voted = m.score(paper("x", "GRPO", upvotes=42))
    assert voted.score > plain.score
    assert "42 upvotes" in voted.reasons
    assert m.score(paper("x", "nothing", upvotes=500)) is None


@pytest.mark.parametrize("query", ["cat:cs.CV", "cat:cs.CV OR cat:cs.CL", "cat:cs.CV ANDNOT GRPO",
                                   "cat:CS.cv", "cat:cs.*", "cat:cs"])
def test_a_query_of_categories_alone_selects(query):
    m = matcher(query=query)
    match = m.score(paper("Segmenting cells", categories=["cs.CV", "q-bio.QM"]))
    assert match is not None and match.score == CATEGORY_WEIGHT
    assert match.reasons == [f"cat: {query.split()[0][4:]}"]
    assert m.score(paper("x", categories=["math.OC"])) is None
    assert m.score(paper("Segmenting cells")) is None  # categories unknown: cat: cannot match


def test_category_terms_add_to_word_terms():
    m = matcher(query="GRPO AND cat:cs.LG")
    match = m.score(paper("x", "GRPO", categories=["cs.LG"]))
    assert match.reasons == ['abs: "GRPO"', "cat: cs.LG"]
    assert match.score == pytest.approx(matcher(query="GRPO").score(paper("x", "GRPO")).score
                                        + CATEGORY_WEIGHT, abs=1e-3)


def test_a_category_query_is_subject_to_min_score():
    m = matcher(query="cat:cs.CV", min_score=2.0)
    assert m.score(paper("x", categories=["cs.CV"])) is None
    assert "below min_score 2" in m.explain(paper("x", categories=["cs.CV"])).reasons[-1]


def test_a_purely_negative_query_matches_everything_without_the_term():
    m = matcher(query="NOT ti:survey")
    match = m.score(paper("GRPO", "a survey of surveys"))  # ti: only
    assert match is not None and match.score == QUERY_BASE > 0
    assert match.reasons == ["query matched"]
    survey = paper("A survey of GRPO")
    assert m.score(survey) is None
    assert m.explain(survey).reasons == ["query not matched"]
    assert matcher(query="NOT ti:survey", min_score=1.0).score(paper("GRPO")) is None


def test_a_query_matched_through_not_alone_still_scores():
    m = matcher(query="GRPO OR NOT LLM")
    assert m.score(paper("x", "robots")).reasons == ["query matched"]
    assert m.score(paper("x", "LLM")) is None


# --- cuts ----------------------------------------------------------------------------------

def test_exclude_removes_and_explain_says_why():
    m = matcher(query="GRPO", exclude="ti:survey OR ti:review")
    p = paper("A Survey of GRPO", "GRPO")
    assert m.score(p) is None
    match = m.explain(p)
    assert match.score > 0
    assert match.reasons[-1] == "excluded by ti:survey"
    assert m.score(paper("GRPO, surveyed", "a survey")) is not None  # abstract is not ti:


def test_categories_restrict_when_known():
    m = matcher(query="GRPO", categories=("cs.CL", "cs.LG"))
    assert m.score(paper("GRPO", categories=["cs.LG", "stat.ML"])) is not None
    outside = paper("GRPO", categories=["cs.CV"])
    assert m.score(outside) is None
    assert m.explain(outside).reasons[-1] == "category not in cs.CL, cs.LG"
    assert m.score(paper("GRPO")) is not None  # a text listing without categories


def test_categories_may_name_an_archive():
    m = matcher(query="GRPO", categories=("cs",))
    assert m.score(paper("GRPO", categories=["cs.CV"])) is not None
    assert m.score(paper("GRPO", categories=["math.OC"])) is None


def test_min_score_cuts_and_explain_says_why():
    m = matcher(query="GRPO OR model", min_score=3.0)
    assert m.score(paper("x", "GRPO")) is not None
    weak = paper("x", "a model")
    assert m.score(weak) is None
    assert m.explain(weak).reasons[-1].startswith("score 0.") and "below min_score 3" in \
        m.explain(weak).reasons[-1]


def test_explain_a_paper_that_does_not_match():
    m = matcher(query="GRPO AND LLM", authors=("Sergey Levine",))
    match = m.explain(paper("GRPO", "robots"))
    assert match.score == 0
    assert match.reasons == ['query not matched (found all: "GRPO"); no followed author']
    assert m.explain(paper("x")).reasons == ["no query term found; no followed author"]


# --- examples ------------------------------------------------------------------------------

EXAMPLE = paper("Group relative policy optimization for reasoning",
                "We train reasoning language models with group relative policy optimization "
                "and verifiable rewards on mathematics.", id="2504.07615")


def test_examples_alone_make_a_profile():
    m = ProfileMatcher(profile(examples=("2504.07615",)), [EXAMPLE])
    near = paper("Relative policy optimization for mathematics reasoning",
                 "Verifiable rewards train reasoning models with group policy optimization.")
    far = paper("Gaussian splatting of city scenes", "We reconstruct streets from drone video.")
    match = m.score(near)
    assert match is not None and match.reasons == ["similar to 2504.07615"]
    assert m.score(far) is None
    assert "not similar to the examples" in m.explain(far).reasons[0]


def test_examples_rank_similar_papers_higher():
    q = "policy"
    plain = ProfileMatcher(profile(query=q))
    with_examples = ProfileMatcher(profile(query=q), [EXAMPLE])
    near = paper("Relative policy optimization for mathematics reasoning",
                 "Verifiable rewards train reasoning models with group policy optimization.")
    assert with_examples.score(near).score > plain.score(near).score


def test_example_without_id_is_named_by_title():
    ex = paper("Group relative policy optimization for reasoning", EXAMPLE.abstract)
    m = ProfileMatcher(profile(examples=("digest.txt",)), [ex])
    assert m.score(EXAMPLE).reasons == ['similar to "Group relative policy optimization for reasoning"']


DOMAINS = ["robotic grasping with tactile sensors", "protein folding and molecular docking",
           "chip floorplanning and circuit placement", "symbolic music composition",
           "traffic signal control in cities", "dialogue agents for customer support"]


def reward_examples():
    return [paper(f"Reward models and policy optimization for {d}",
                  f"We learn reward models from preferences and apply policy optimization with "
                  f"verifiable rewards to {d}. The reward model guides the policy.", id=f"2504.0{k}")
            for k, d in enumerate(DOMAINS)]


def test_examples_match_their_common_topic_not_one_example():
    m = ProfileMatcher(profile(examples=("digest.txt",)), reward_examples())
    topic = paper("Reward hacking under policy optimization",
                  "Policy optimization against learned reward models from preferences invites "
                  "reward hacking; verifiable rewards help.")
    match = m.score(topic)
    assert match is not None and match.reasons[0].startswith("similar to 2504.0")
    one_domain = paper("Tactile sensors for robotic grasping",
                       "A gripper with tactile sensors improves robotic grasping of soft objects.")
    assert m.score(one_domain) is None  # close to one example's domain, not to the topic
    assert m.score(paper("Gaussian splatting of city scenes", "We reconstruct streets.")) is None


def test_an_example_given_twice_counts_once():
    topic = paper("Reward hacking under policy optimization",
                  "Policy optimization against learned reward models from preferences.")
    once = ProfileMatcher(profile(examples=("a",)), reward_examples()[:2]).explain(topic)
    twice = ProfileMatcher(profile(examples=("a", "b")), reward_examples()[:2] * 2).explain(topic)
    assert twice == once


def test_examples_reason_names_the_closest_example():
    examples = reward_examples()
    m = ProfileMatcher(profile(examples=("digest.txt",)), examples)
    near_music = paper("Policy optimization with reward models for symbolic music composition",
                       "Reward models from listener preferences guide policy optimization.")
    assert m.score(near_music).reasons == ["similar to 2504.03"]


def test_a_paper_that_is_itself_an_example_is_never_its_own_reason():
    """QA: a Zotero collection's paper, announced, came "similar to <itself>": it names the
    closest other example, or (the only one) says it is one of the profile's examples."""
    from watcher.matching.match import OWN_EXAMPLE

    examples = reward_examples()
    m = ProfileMatcher(profile(examples=("digest.txt",)), examples)
    reason = m.explain(examples[3]).reasons[0]
    assert reason.startswith("similar to 2504.0") and reason != "similar to 2504.03", reason
    assert ProfileMatcher(profile(examples=("2504.07615",)), [EXAMPLE]).score(EXAMPLE).reasons == [OWN_EXAMPLE]


@pytest.mark.slow  # scores the 7,258-paper benchmark corpus (benchmarks/data) twice
def test_examples_only_profile_keeps_an_on_topic_set():
    """The seed digest as the only example, over the 7,258-paper corpus of benchmarks/data/:
    a few hundred kept, most of them also kept by the shipped llm-rl query profile."""
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from corpus import read_corpus, read_digest

    path = ROOT / "config.toml"
    by_query = ProfileMatcher(parse_config(tomllib.loads(path.read_text()), path).profiles["llm-rl"])
    by_examples = ProfileMatcher(profile(examples=("llm-rl-2025-04-12.txt",)),
                                 read_digest(DATA / "llm-rl-2025-04-12.txt"))
    batch = prepare(read_corpus())
    kept = by_examples.score_batch(batch)
    assert 150 <= len(kept) <= 600
    assert len(kept.keys() & by_query.score_batch(batch).keys()) >= 0.7 * len(kept)
    assert all(m.reasons[0].startswith("similar to ") for m in kept.values())


# --- select --------------------------------------------------------------------------------

def test_select_ranks_best_first_ties_newest_first():
    m = matcher(query="GRPO")
    papers = [paper("x", "GRPO", id="1", day=1), paper("GRPO", id="2", day=2),
              paper("y", "GRPO", id="3", day=3), paper("nothing", id="4")]
    assert [x.paper.arxiv_id for x in select(papers, [m])] == ["2", "3", "1"]


def test_select_merges_profiles_under_the_best_one():
    rl = matcher(name="rl", query="GRPO OR reinforcement")
    llm = matcher(name="llm", query="LLM")
    papers = [paper("GRPO for LLM", id="a"), paper("LLM", "LLM reinforcement", id="b"),
              paper("LLM only", id="c")]
    out = {x.paper.arxiv_id: x for x in select(papers, [rl, llm])}
    assert len(out) == 3
    assert out["a"].profile == "rl"
    assert out["a"].reasons == ['ti: "GRPO"', 'llm: ti: "LLM"']
    assert out["b"].profile == "llm" and out["b"].reasons == ['ti: "LLM"', 'rl: abs: "reinforcement"']
    assert out["c"].profile == "llm" and out["c"].reasons == ['ti: "LLM"']


def test_select_applies_max_papers_per_profile_and_min_score():
    rl = matcher(name="rl", query="GRPO", max_papers=2)
    llm = matcher(name="llm", query="LLM", min_score=100.0)
    papers = [paper(f"GRPO {i}", id=str(i), day=i + 1) for i in range(5)]
    papers.append(paper("LLM", id="L"))
    out = select(papers, [rl, llm])
    assert [x.paper.arxiv_id for x in out] == ["4", "3"]


def test_select_counts_a_paper_once_across_listings():
    m = matcher(query="GRPO")
    a = paper("GRPO", id="2504.1", day=1)
    b = paper("GRPO", "GRPO again", id="2504.1", day=1, upvotes=10)
    out = select([a, b], [m])
    assert len(out) == 1 and "10 upvotes" in out[0].reasons


def test_select_accepts_a_prepared_batch_and_ignores_the_clock():
    m = matcher(query="GRPO")
    papers = [paper("GRPO", id="1"), paper("x", "GRPO", id="2")]
    batch = prepare(papers)
    assert select(batch, [m]) == select(papers, [m], now=datetime(2030, 1, 1, tzinfo=timezone.utc))


def test_scores_do_not_depend_on_the_batch():
    m = ProfileMatcher(profile(query="GRPO OR reinforc* OR LLM"))
    papers = [paper("GRPO", "LLM", id="1"), paper("x", "reinforcement learning", id="2"),
              paper("LLM", id="3")]
    alone = [m.score(p).score for p in papers]
    together = {x.paper.arxiv_id: x.score for x in select(papers, [m])}
    assert alone == [together["1"], together["2"], together["3"]]


# --- integration ---------------------------------------------------------------------------

def test_config_reports_query_errors_with_key_and_position(tmp_path):
    data = {"profile": {"x": {"query": "GRPO AND (LLM"}}}
    with pytest.raises(QuerySyntaxError) as info:
        parse_config(data, tmp_path / "config.toml")
    assert info.value.key == "profile.x.query" and info.value.position == 9


def test_shipped_table_knows_common_words():
    df = default_doc_freq()
    assert df.papers > 5000
    assert df.idf("the") < df.idf("reinforcement") < df.idf("grpo") < df.idf("xyzzyplugh")


def test_llm_rl_profile_keeps_the_seed_and_little_else():
    from watcher.identity import merge_batch as dedupe

    def read(path):
        return formats.read(path.read_bytes(), path.name).papers

    path = ROOT / "config.toml"
    prof = parse_config(tomllib.loads(path.read_text()), path).profiles["llm-rl"]
    m = ProfileMatcher(prof)
    seed = read(DATA / "llm-rl-2025-04-12.txt")
    assert len(seed) == 30
    missed = [p.title for p in seed if m.score(p) is None]
    assert missed == []
    corpus = dedupe([p for f in sorted(DATA.glob("corpus-*.jsonl.gz")) for p in read(f)])
    kept = m.score_batch(prepare(corpus))
    assert 0.02 * len(corpus) < len(kept) <= 0.07 * len(corpus)


def test_batch_similarity_is_the_cosine_of_the_paper_vectors():
    from watcher.matching.index import cosine, paper_vector, similarity

    papers = reward_examples() + [paper("Reward hacking", "policy optimization, twice: policy"),
                                  paper("Nothing shared", "")]
    batch = prepare(papers)
    weight = DF.vector_weight
    query = {"reward": 0.6, "policy": 0.5, "grpo": 0.62}
    norm = sum(w * w for w in query.values()) ** 0.5
    query = {word: w / norm for word, w in query.items()}  # cosine() takes unit vectors
    for boost in (0.0, 1.0):
        sims = similarity(batch, query, weight, title_boost=boost)
        for i, doc in enumerate(batch.docs):
            expected = cosine(query, paper_vector(doc, weight, boost))
            assert sims.get(i, 0.0) == pytest.approx(expected, abs=1e-12)
