"""Learning from ratings: up-rated papers are examples of their profile, down-rated ones
counter-examples (pure: no I/O, no clock). Rocchio, on the tf-idf vectors of :mod:`watcher.index`.

**Likes.** The matcher (:mod:`watcher.match`) compares papers with a profile's examples as a
whole: the tf-idf centroid, and a threshold taken from the examples themselves. Liked papers join
those examples, so a paper like them scores higher, and one similar enough comes in even without
a query match; its reason names the closest liked paper, ``like 2504.07615 (you liked)``. A
profile with no other way in (no query, no authors) reaches further: its threshold is at most
REACH_RATIO x the similarity the least typical REACH_QUANTILE of its liked papers have to the
others (a reader who rates what they see prunes what comes in too far out).

**Dislikes.** Once the reader has disliked papers, a paper the profile would select counts as
disliked too when either

* it is closer to the disliked papers' centroid than to the liked one (nearest centroid), or
* it is less like the liked papers than the median disliked paper is, and less than
  DISLIKE_RATIO x as like them as they typically are to each other (the median of their
  leave-one-out similarities): far out of what the reader keeps.

It then loses its score and DISLIKE_SCORE x its similarity to the closest disliked paper / the
threshold more: it ranks below every paper not disliked and, with ``min_score`` at 0 or above,
drops out; the reason names the closest disliked paper, ``unlike 2505.01234 (you disliked)``.
No ratings, no change. The constants were chosen by ``benchmarks/eval_feedback.py`` (a reader
rating every digest over 30 days of the real corpus) and checked on a second topic.

Costs: likes join the centroid (one pass over the batch's postings); the dislike check runs
only on the papers a profile would select: a few cosines each.
"""

from __future__ import annotations

import statistics
from typing import Sequence

from .index import (CENTROID_WORDS, SIMILAR_ONE, Doc, cosine, example_vector, paper_vector, prepare,
                    top_words, vector_sum)
from .models import Paper, reason_label as label, unique_papers

DISLIKE_SCORE = 4.0  # what a paper as close to a disliked one as the threshold loses beyond its score
DISLIKE_QUANTILE = 0.5  # ... less like the liked papers than the median disliked paper, and
DISLIKE_RATIO = 0.4  # ... than this x the liked papers' median similarity: disliked
REACH_QUANTILE = 0.05  # without a query: the likes reach as far as their least typical 5% ...
REACH_RATIO = 0.9  # ... times this
REACH_FLOOR = 0.05


def liked_reason(paper: Paper) -> str:
    return f"like {label(paper)} (you liked)"


def disliked_reason(paper: Paper) -> str:
    return f"unlike {label(paper)} (you disliked)"


class Feedback:
    """A profile's ratings: ``liked`` and ``disliked`` papers (a paper is in at most one list:
    its latest rating)."""

    def __init__(self, liked: Sequence[Paper] = (), disliked: Sequence[Paper] = ()):
        self.liked = unique_papers(liked)
        self.disliked = unique_papers(disliked)
        self._examples = None
        self._negatives: list[tuple[str, dict]] = []
        self._against: dict[str, float] = {}  # the disliked papers' centroid
        self._cut = 0.0  # below this similarity to the liked centroid: among the disliked

    def __bool__(self) -> bool:
        return bool(self.liked or self.disliked)

    def attach(self, examples, weight, title_boost: float, reach: bool):
        """Prepare the counter-examples under the matcher's word weights, against the matcher's
        ``examples`` (the liked papers and the profile's own examples, already merged; None
        without any). ``reach``: the profile has no other way in (no query, no authors), so
        the likes reach as far as the least typical liked paper (see the module docstring).
        Returns the examples to use."""
        self._weight, self._boost = weight, title_boost
        if examples and reach and self.liked and examples.sims:
            low = examples.sims[int(REACH_QUANTILE * (len(examples.sims) - 1))]
            examples.threshold = min(examples.threshold, max(REACH_FLOOR, REACH_RATIO * low))
        self._examples = examples
        docs = prepare(self.disliked).docs
        vectors = [(disliked_reason(d.paper), v, d) for d in docs
                   if (v := example_vector(d, weight, title_boost))]
        self._negatives = [(r, v) for r, v, _ in vectors]
        if vectors:
            self._against = top_words(vector_sum([v for _, v, _ in vectors]), CENTROID_WORDS)
            if examples and examples.sims:  # the second rule needs a few liked papers
                sims = sorted(cosine(paper_vector(d, weight, title_boost), examples.centroid)
                              for _, _, d in vectors)
                self._cut = min(sims[int(DISLIKE_QUANTILE * (len(sims) - 1))],
                                DISLIKE_RATIO * statistics.median(examples.sims))
        return examples

    def penalty(self, doc: Doc, scored: list[tuple[float, object]]) -> tuple[float, str] | None:
        """``(negative score, reason)`` when the ratings put ``doc`` among the disliked papers:
        it is closer to their centroid than to the liked one, or far less like the liked papers
        than they are to each other (see the module docstring). The penalty takes away the paper's score (``scored``,
        the parts so far) and DISLIKE_SCORE x its similarity to the closest disliked paper /
        the examples' threshold more. None otherwise."""
        if not self._negatives:
            return None
        vector = paper_vector(doc, self._weight, self._boost)
        if not vector:
            return None
        liked = cosine(vector, self._examples.centroid) if self._examples else 0.0
        if not (cosine(vector, self._against) > liked or liked < self._cut):
            return None
        near, reason = max(((cosine(vector, v), r) for r, v in self._negatives), key=lambda x: x[0])
        threshold = self._examples.threshold if self._examples else SIMILAR_ONE
        gained = sum(s for s, _ in scored if s > 0)
        return (-(gained + DISLIKE_SCORE * near / threshold), reason)


__all__ = ["Feedback", "liked_reason", "disliked_reason", "label"]
