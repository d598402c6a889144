"""The percolator (watcher/matching/percolate.py): profiles are evaluated only where one of their anchor
terms occurs, and select exactly what evaluating every profile on every paper selects."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from watcher import formats
from watcher.config import Profile
from watcher.matching.docfreq import default_doc_freq
from watcher.identity import merge_batch
from watcher.matching.match import ProfileMatcher, merge, prepare, select
from watcher.models import Match, Paper
from watcher.matching.percolate import Percolator, anchors
from watcher.matching.query import parse_query

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_match import make_profiles  # noqa: E402
from profilegen import make_scale_profiles  # noqa: E402

# Hand-written shapes the generator makes rarely or never: NOT inside OR, AND of NOTs only,
# nested groups, wildcards and phrases with field prefixes, followed authors with no query.
EDGE_QUERIES = [
    "NOT ti:model",
    "segmentation OR NOT ti:video",
    "(NOT ti:video) AND (NOT abs:image)",
    "diffusion AND (NOT ti:video OR abs:audio)",
    "ti:(reinforc* AND (agent OR policy*)) ANDNOT cat:cs.CV",
    'au:"Wang" AND (llm OR "language model")',
    'abs:"large language model*" NOT ti:survey',
    "cat:cs AND NOT cat:cs.CV",
    "cat:cs.RO OR cat:eess.IV",
    'ti:"vision language" ti:benchmark',
    "zzzunseenword OR ti:qqqnotthere",
]


def corpus_papers() -> list[Paper]:
    """Two real days of arXiv listings (tests/data/corpus-2025-04-*.jsonl.gz), each paper once."""
    return merge_batch([p for path in sorted(DATA.glob("corpus-*.jsonl.gz"))
                        for p in formats.read(path.read_bytes(), path.name).papers])


def profile(query=None, **kw) -> Profile:
    return Profile(name=kw.pop("name", "p"), title="P", query=query, **kw)


def flat(matches: dict[int, Match]) -> dict[int, tuple]:
    return {i: (m.paper.key, m.score, m.reasons, m.profile) for i, m in matches.items()}


@pytest.fixture(scope="module")
def corpus_case():
    papers = corpus_papers()
    matchers = [ProfileMatcher(p) for p in make_scale_profiles(papers, 1000)]
    matchers += make_profiles(papers, 30)  # examples, followed authors, excludes, categories
    matchers += [ProfileMatcher(profile(q, name=f"edge{k}", min_score=k % 3,
                                        categories=("cs.CL",) if k % 4 == 1 else ()))
                 for k, q in enumerate(EDGE_QUERIES)]
    matchers.append(ProfileMatcher(profile(None, name="authors-only",
                                           authors=("Y. Zhang", "Sergey Levine"))))
    return papers, matchers


@pytest.mark.slow  # a thousand generated profiles evaluated on every corpus paper, twice
def test_indexed_matching_equals_every_profile_on_every_paper(corpus_case):
    """On real corpus papers, with a thousand generated profiles and hand-written edge cases:
    each profile's matches (papers, scores, reasons) are those of evaluating it on the whole
    batch, and so is select's merged result."""
    papers, matchers = corpus_case
    batch = prepare(papers)
    indexed = Percolator(matchers).match(batch)
    exhaustive = [m.score_batch(batch) for m in matchers]
    assert sum(map(len, exhaustive)) > 5000  # the comparison covers many matches
    assert sum(1 for found in exhaustive if found) > 500
    for matcher, new, old in zip(matchers, indexed, exhaustive):
        assert flat(new) == flat(old), matcher.profile.query
    # select() merges the indexed results exactly as it merged the exhaustive ones
    assert [(m.paper.key, m.score, m.reasons, m.profile) for m in select(batch, matchers)] == \
        [(m.paper.key, m.score, m.reasons, m.profile) for m in merge(batch, matchers, exhaustive)]


def test_profiles_are_evaluated_only_where_an_anchor_occurs():
    papers = [Paper(title="GRPO for language models", abstract="We train with GRPO.",
                    arxiv_id="2504.00001", categories=["cs.CL"]),
              Paper(title="Video diffusion", abstract="A diffusion model for video.",
                    arxiv_id="2504.00002", categories=["cs.CV"], authors=["Sergey Levine"])]
    matchers = [ProfileMatcher(profile(q, name=f"p{k}")) for k, q in enumerate(
        ["GRPO", "quantum AND GRPO", "NOT ti:video", "zzzunseen OR ti:diffusion"])]
    matchers.append(ProfileMatcher(profile(None, name="author", authors=("S. Levine",))))
    candidates = Percolator(matchers).candidates(prepare(papers))
    # "quantum AND GRPO" is anchored by its rarer word, which no paper holds: never evaluated.
    assert candidates == {0: {0}, 2: None, 3: {1}, 4: {1}}


@pytest.mark.parametrize("query, expected", [
    ("GRPO", ["grpo"]),
    ("GRPO OR RLHF", ["grpo", "rlhf"]),
    ("model AND GRPO", ["grpo"]),  # the rarer side of an AND
    ("(model OR method) AND (GRPO OR RLHF)", ["grpo", "rlhf"]),
    ("GRPO NOT survey", ["grpo"]),
    ("NOT survey", None),  # matches papers with none of its terms
    ("GRPO OR NOT survey", None),
    ('"gaussian splatting" AND cat:cs.CV', ["gaussian splatting"]),
    ('"language model" OR cat:cs.CL', ["language model", "cs.cl"]),
])
def test_anchors(query, expected):
    table = default_doc_freq()
    found = anchors(parse_query(query).root,
                    lambda t: 0.3 if t.field == "cat" else 1 / math.expm1(table.phrase_idf(t.words)))
    assert (None if found is None else [" ".join(t.words) for t in found]) == expected
