"""The word classifier of a profile with no other way in than its ratings (watcher.matching.words,
used by watcher.matching.learn): its features, its fit, and what it decides through the matcher."""

from __future__ import annotations

import math
import random

from test_learn import paper

from watcher.config import Profile
from watcher.matching import learn, words
from watcher.matching.docfreq import DocFreq, default_doc_freq
from watcher.matching.index import prepare
from watcher.matching.learn import Feedback
from watcher.matching.match import ProfileMatcher
from watcher.matching.words import WordModel


def test_terms_drop_the_words_of_half_the_papers_and_pair_the_neighbours_left():
    table = DocFreq({"the": 90, "of": 80, "image": 30, "video": 5}, papers=100)
    doc = prepare([paper("2504.00001", "The image generation of video", "Image generation of the video.")]).docs[0]
    counted = words.terms(doc, table)
    assert "the" not in counted and "of" not in counted
    assert counted["image generation"] == 2 and counted["generation video"] == 2
    assert counted["image"] == 2 and "image the" not in counted


def test_the_fit_is_the_optimum_of_the_balanced_penalised_logistic_regression():
    """Dual coordinate descent ends where the primal's gradient vanishes: w + sum C_i (s(y_i
    w.x_i) - 1) y_i x_i = 0, the intercept a constant feature 1, each class's C_i balanced."""
    rng = random.Random(5)
    rows, labels = [], []
    for i in range(120):
        y = int(i % 4 == 0)
        row = {f"w{j}": rng.random() for j in rng.sample(range(40), 6)}
        row["good" if y else "bad"] = rng.random() if rng.random() < 0.8 else 0.0
        norm = math.sqrt(sum(v * v for v in row.values()))
        rows.append({k: v / norm for k, v in row.items() if v})
        labels.append(y)
    weights, bias = words._dual_cd(rows, labels)
    pos = sum(labels)
    cost = {1: len(labels) / (2 * pos), 0: len(labels) / (2 * (len(labels) - pos))}
    grad = dict(weights)
    grad_bias = bias
    for row, t in zip(rows, labels):
        y = 1.0 if t else -1.0
        margin = y * (bias + sum(weights.get(k, 0.0) * v for k, v in row.items()))
        g = cost[t] * (1.0 / (1.0 + math.exp(-margin)) - 1.0) * y
        for k, v in row.items():
            grad[k] = grad.get(k, 0.0) + g * v
        grad_bias += g
    assert max(abs(v) for v in [*grad.values(), grad_bias]) < 0.05
    assert weights["good"] > 1.0 > -1.0 > weights["bad"]


GENERATION = ("text-to-image synthesis sampler prompt guidance generator generative sampling "
              "classifier-free creative artwork compositional").split()
RESTORATION = ("denoising deblurring super-resolution restoration degraded inpainting artifacts noisy "
               "blurry compression low-light dehazing").split()
SHARED = "image images pixel visual photo resolution quality diffusion network backbone".split()


def pictures(prefix: str, n: int, topic: list[str], rng: random.Random):
    out = []
    for k in range(n):
        own, shared = rng.sample(topic, 3), rng.sample(SHARED, 6)
        out.append(paper(f"{prefix}.{k:05d}", " ".join(own[:2] + shared[:2]).capitalize(),
                         " ".join(own + shared) + ". " + " ".join(rng.sample(SHARED, 5) + rng.sample(topic, 1))))
    return out


def test_without_a_query_the_word_classifier_removes_what_is_like_the_disliked_papers():
    """A profile with no query, no authors: its ratings are all it has, and once there are
    enough of both kinds the word classifier decides; a removed paper's reason names the
    closest disliked paper."""
    rng = random.Random(8)
    liked, disliked = pictures("2501", 40, GENERATION, rng), pictures("2502", 40, RESTORATION, rng)
    matcher = ProfileMatcher(Profile(name="gen", title="Image generation"), feedback=Feedback(liked, disliked))
    assert isinstance(matcher.feedback.model, WordModel)
    new_gen, new_rest = pictures("2503", 15, GENERATION, rng), pictures("2504", 15, RESTORATION, rng)
    batch = prepare(new_gen + new_rest)
    kept = {batch.docs[i].paper.key for i in matcher.score_batch(batch)}
    assert {p.key for p in new_gen} <= kept
    assert not kept & {p.key for p in new_rest}
    likes_alone = ProfileMatcher(Profile(name="gen", title="Image generation"), feedback=Feedback(liked, []))
    near = [p for p in new_rest if likes_alone.score(p) is not None]  # close enough to the likes to come in
    assert near
    for p in near:
        why = matcher.explain(p)
        assert any(r.startswith("unlike 2502.") and r.endswith("(you disliked)") for r in why.reasons), why
    # a profile with a query keeps the model of the query's features (watcher.matching.learn.Model)
    rag = ProfileMatcher(Profile(name="q", title="q", query="image"), feedback=Feedback(liked, disliked))
    assert isinstance(rag.feedback.model, learn.Model)


def test_the_word_classifier_learns_from_the_latest_ratings(monkeypatch):
    """WORDS_MAX bounds what the classifier costs: it learns from the ratings made last, so a
    reader whose interest turned is followed."""
    rng = random.Random(9)
    old_liked, old_disliked = pictures("2501", 30, GENERATION, rng), pictures("2502", 30, RESTORATION, rng)
    new_liked, new_disliked = pictures("2503", 30, RESTORATION, rng), pictures("2504", 30, GENERATION, rng)
    times = {p.key: "2025-03-01T20:00:00Z" for p in old_liked + old_disliked}
    times |= {p.key: "2025-04-01T20:00:00Z" for p in new_liked + new_disliked}
    # the latest rating of a paper is the one that counts: each paper is in one list
    feedback = lambda: Feedback(old_liked + new_liked, old_disliked + new_disliked, times)  # noqa: E731
    probe = pictures("2505", 10, RESTORATION, rng)
    profile = Profile(name="p", title="p")
    monkeypatch.setattr(learn, "WORDS_MAX", 60)
    latest = ProfileMatcher(profile, feedback=feedback())
    assert sum(latest.score(p) is not None for p in probe) >= 8  # restoration is liked now
    kept = {d.paper.key for d in latest.feedback._latest(prepare(old_liked + new_liked).docs,
                                                          prepare(old_disliked + new_disliked).docs)[0]}
    assert kept == {p.key for p in new_liked}


def test_a_fitted_model_scores_a_paper_by_the_words_it_was_taught():
    rng = random.Random(4)
    liked, disliked = pictures("2501", 20, GENERATION, rng), pictures("2502", 20, RESTORATION, rng)
    table = default_doc_freq()
    docs = prepare(liked + disliked).docs
    model = WordModel.fit([words.terms(d, table) for d in docs], [1] * 20 + [0] * 20, table)
    gen, rest = prepare(pictures("2503", 1, GENERATION, rng) + pictures("2504", 1, RESTORATION, rng)).docs
    assert model.score(gen) > 0 > model.score(rest)
    assert WordModel.fit([words.terms(d, table) for d in docs[:20]], [1] * 20, table) is None  # one kind only
