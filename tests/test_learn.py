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
