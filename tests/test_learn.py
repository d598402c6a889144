"""Learning from ratings (watcher.learn through ProfileMatcher): liked papers are examples,
disliked ones counter-examples; the reasons name them."""

from __future__ import annotations

from datetime import datetime, timezone

from watcher.config import Profile
from watcher.learn import Feedback
from watcher.match import ProfileMatcher, select
from watcher.models import Paper


def paper(id, title, abstract) -> Paper:
    return Paper(title=title, abstract=abstract, arxiv_id=id,
                 published=datetime(2025, 4, 9, 12, tzinfo=timezone.utc))


LIKED = [
    paper("2504.00001", "Retrieval-augmented generation with a learned reranker for open-domain question answering",
          "We retrieve passages from a knowledge corpus with a dense retriever, rerank them and let the "
          "generator answer questions grounded in the retrieved passages. RAG improves factuality."),
    paper("2504.00002", "Adaptive retrieval for RAG: when should the generator consult the knowledge corpus",
          "Retrieval-augmented generation retrieves passages for every question. We learn when retrieval "
          "helps the generator answer, cutting retrieved passages while keeping answer accuracy."),
    paper("2504.00003", "Chunking and reranking passages for retrieval-augmented question answering",
          "How documents are chunked into passages changes what the retriever finds and what the "
          "generator answers. We compare chunking and reranking for RAG question answering."),
]
DISLIKED = [
    paper("2505.01234", "Radiology report generation from chest X-rays for hospital patients",
          "We generate radiology reports from chest X-ray images of hospital patients, evaluated by "
          "radiologists on clinical findings. A RAG baseline is included for comparison."),
    paper("2505.01235", "Clinical note summarization for patients in intensive care",
          "Summaries of clinical notes help physicians treat intensive care patients. We fine-tune a "
          "model on hospital records; RAG is mentioned as future work."),
]
RADIOLOGY = paper("2506.00001", "Chest X-ray radiology reports for hospital patients with clinical findings",
                  "Radiologists judge generated radiology reports of chest X-ray images from hospital "
                  "patients by their clinical findings; we also try RAG.")
RERANKER = paper("2506.00002", "A passage reranker for retrieval-augmented generation",
                 "Reranking retrieved passages from the knowledge corpus lets the generator answer "
                 "open-domain questions better; RAG with our reranker gains accuracy.")
DENSE = paper("2506.00003", "Dense retriever training for open-domain question answering over passages",
              "A dense retriever finds passages in a knowledge corpus; a generator answers the questions "
              "from the retrieved passages, and reranking passages helps further.")
UNRELATED = paper("2506.00004", "Diffusion models for video generation",
                  "We train a video diffusion model with temporal attention for long video synthesis.")

RAG = Profile(name="rag", title="RAG", query='"retrieval-augmented" OR RAG')


def test_a_paper_like_a_disliked_one_drops_out_and_the_reason_names_it():
    plain = ProfileMatcher(RAG)
    rated = ProfileMatcher(RAG, feedback=Feedback(LIKED, DISLIKED))
    assert plain.score(RADIOLOGY) is not None  # the query alone keeps it
    assert rated.score(RADIOLOGY) is None
    why = rated.explain(RADIOLOGY)
    assert why.score < plain.score(RADIOLOGY).score
    assert "unlike 2505.01234 (you disliked)" in why.reasons
    assert any(r.startswith("score ") and "below min_score" in r for r in why.reasons)


def test_a_paper_like_the_liked_ones_is_not_penalised_and_ranks_higher():
    plain = ProfileMatcher(RAG).score(RERANKER)
    rated = ProfileMatcher(RAG, feedback=Feedback(LIKED, DISLIKED)).score(RERANKER)
    assert rated is not None and rated.score > plain.score
    assert not any("you disliked" in r for r in rated.reasons)
    assert any(r.endswith("(you liked)") and r.startswith("like 2504.0000") for r in rated.reasons)


def test_without_a_query_match_a_paper_like_the_liked_ones_comes_in():
    rated = ProfileMatcher(RAG, feedback=Feedback(LIKED, DISLIKED))
    assert ProfileMatcher(RAG).score(DENSE) is None  # no query term in it
    match = rated.score(DENSE)
    assert match is not None
    assert match.reasons[0].startswith("like 2504.0000") and match.reasons[0].endswith("(you liked)")
    assert rated.score(UNRELATED) is None


def test_a_profile_with_only_ratings_selects_what_they_teach():
    only = Profile(name="mine", title="Mine")
    assert ProfileMatcher(only).score(DENSE) is None  # nothing to go by yet
    matcher = ProfileMatcher(only, feedback=Feedback(LIKED, DISLIKED))
    kept = {m.paper.arxiv_id for m in select([DENSE, RERANKER, RADIOLOGY, UNRELATED], [matcher])}
    assert kept == {"2506.00002", "2506.00003"}


def test_examples_keep_their_reason_beside_liked_papers():
    profile = Profile(name="p", title="P", examples=("2504.00001",))
    matcher = ProfileMatcher(profile, [LIKED[0]], feedback=Feedback(LIKED[1:], []))
    reasons = [matcher.explain(p).reasons[0] for p in (LIKED[0], LIKED[1])]
    assert reasons == ["similar to 2504.00001", "like 2504.00002 (you liked)"]


def test_no_ratings_change_nothing():
    a = [ProfileMatcher(RAG)]
    b = [ProfileMatcher(RAG, feedback=Feedback([], []))]
    papers = [RADIOLOGY, RERANKER, DENSE, UNRELATED]
    assert select(papers, a) == select(papers, b)


# --- issue 21: the guarded rule, the model, what ratings changed ------------------------------

import gzip  # noqa: E402
import random  # noqa: E402
import tomllib  # noqa: E402

from conftest import REPO  # noqa: E402

from watcher import formats, learn  # noqa: E402
from watcher.index import prepare  # noqa: E402
from watcher.learn import rating_changes  # noqa: E402

RAG_WORDS = ("retriever reranker passages corpus grounded generator chunking dense sparse index "
             "open-domain question answering knowledge citations hallucination").split()
CLINIC_WORDS = ("hospital patients clinical radiology physicians diagnosis treatment nursing "
                "medication symptoms triage cardiology oncology discharge").split()


def synthetic(prefix: str, n: int, words: list[str], rng: random.Random, query_word: str = "RAG") -> list[Paper]:
    out = []
    for k in range(n):
        picked = rng.sample(words, 7)
        out.append(paper(f"{prefix}.{k:05d}", " ".join(picked[:4]).capitalize(),
                         " ".join(picked) + f". We also use {query_word}. " + " ".join(rng.sample(words, 5))))
    return out


def test_the_model_is_fitted_once_there_are_enough_ratings_and_learns_which_side_is_which():
    rng = random.Random(21)
    liked = synthetic("2501", learn.MODEL_MIN + 4, RAG_WORDS, rng)
    disliked = synthetic("2502", learn.MODEL_MIN + 4, CLINIC_WORDS, rng)
    few = ProfileMatcher(RAG, feedback=Feedback(liked[:3], disliked[:3]))
    assert few.feedback.model is None  # a few ratings: the guarded rule
    matcher = ProfileMatcher(RAG, feedback=Feedback(liked, disliked))
    model = matcher.feedback.model
    assert model is not None
    new_rag, new_clinic = synthetic("2503", 10, RAG_WORDS, rng), synthetic("2504", 10, CLINIC_WORDS, rng)
    batch = prepare(new_rag + new_clinic)
    kept = {batch.docs[i].paper.key for i in matcher.score_batch(batch)}
    assert {p.key for p in new_rag} <= kept  # the liked side stays
    assert not kept & {p.key for p in new_clinic}  # the disliked side goes
    why = matcher.explain(new_clinic[0])
    assert any(r.startswith("unlike 2502.") and r.endswith("(you disliked)") for r in why.reasons)


def test_the_model_threshold_keeps_what_the_reader_likes(monkeypatch):
    """The cut comes from held-out probabilities of the liked rows: about KEEP_QUANTILE of new
    papers like them fall below it, even when liked and disliked papers overlap widely."""
    rng = random.Random(7)

    def rows(n, centre):
        return [[rng.gauss(centre, 1.0), rng.gauss(0.0, 1.0)] for _ in range(n)]

    x, y = rows(200, 0.5) + rows(200, -0.5), [1] * 200 + [0] * 200
    w = learn._logistic(x, y)
    new = rows(2000, 0.5)

    def lost(quantile):
        monkeypatch.setattr(learn, "KEEP_QUANTILE", quantile)
        cut = learn.recall_cut(x, y)
        return sum(learn._sigmoid(learn._dot(w, [1.0, *r])) < cut for r in new) / len(new)

    assert 0.01 <= lost(0.05) <= 0.10
    assert lost(0.3) > 0.2  # the knob is what keeps recall
    monkeypatch.setattr(learn, "MODEL_CEILING", 0.3)
    assert lost(0.9) < 0.5  # never above the ceiling


def test_without_a_query_the_threshold_is_the_best_f1_held_out():
    """The F1 threshold (NO_QUERY_F1) cuts where precision and recall balance: with few liked
    papers among many disliked ones it cuts deeper than the recall threshold does."""
    rng = random.Random(3)
    x = [[rng.gauss(1.0, 1.0)] for _ in range(60)] + [[rng.gauss(-1.0, 1.0)] for _ in range(240)]
    y = [1] * 60 + [0] * 240
    f1, recall = learn.f1_cut(x, y), learn.recall_cut(x, y)
    assert f1 > recall
    w = learn._logistic(x, y)

    def f1_at(cut):
        kept = [t for r, t in zip(x, y) if learn._sigmoid(learn._dot(w, [1.0, *r])) >= cut]
        return 2 * sum(kept) / (len(kept) + 60)

    assert f1_at(f1) > f1_at(recall)


def test_logistic_regression_finds_the_side_of_a_separable_feature():
    x = [[v] for v in (-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0)]
    y = [0, 0, 0, 0, 1, 1, 1, 1]
    w = learn._logistic(x, y)
    assert w[1] > 0
    assert learn._sigmoid(learn._dot(w, [1.0, 2.0])) > 0.8 > 0.2 > learn._sigmoid(learn._dot(w, [1.0, -2.0]))


def test_rating_changes_name_the_rating_that_decided_each_paper():
    plain = ProfileMatcher(RAG)
    rated = ProfileMatcher(RAG, feedback=Feedback(LIKED, DISLIKED))
    changes = rating_changes([RADIOLOGY, RERANKER, DENSE, UNRELATED], plain, rated)
    assert [(c.match.paper.arxiv_id, c.added) for c in changes] == [("2506.00003", True), ("2506.00001", False)]
    assert changes[0].rating.startswith("like 2504.0000") and changes[0].rating.endswith("(you liked)")
    assert changes[1].rating == "unlike 2505.01234 (you disliked)"
    assert rating_changes([RADIOLOGY, RERANKER], plain, ProfileMatcher(RAG)) == []


def llm_rl_profile() -> Profile:
    query = tomllib.loads((REPO / "config.toml").read_text())["profile"]["llm-rl"]["query"]
    return Profile(name="llm-rl", title="LLM-RL", query=query)


def test_an_rlhf_anime_video_paper_is_not_dropped_as_unlike_a_dialogue_paper():
    """A new user's report: with 5 up and 5 down, "Aligning Anime Video Generation with Human
    Feedback" went as unlike a disliked paper it shares a few words with."""
    data = gzip.decompress((REPO / "tests" / "data" / "llm-rl-rated-2025-04.jsonl.gz").read_bytes())
    by_id = {p.arxiv_id: p for p in formats.read(data, "llm-rl-rated.jsonl").papers}
    liked = [by_id[k] for k in ("2504.11343", "2504.09696", "2504.09710", "2504.10160", "2504.11456")]
    disliked = [by_id[k] for k in ("2504.02894", "2504.09737", "2504.11346", "2504.08590", "2504.09488")]
    anime = by_id["2504.10044"]
    profile = llm_rl_profile()
    assert ProfileMatcher(profile).score(anime) is not None
    rated = ProfileMatcher(profile, feedback=Feedback(liked, disliked))
    match = rated.score(anime)
    assert match is not None, rated.explain(anime).reasons
    assert not any(r.endswith("(you disliked)") for r in match.reasons)
