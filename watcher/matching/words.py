"""A word classifier fitted on a profile's rated papers (pure: no I/O, no clock).

The ratings' model of :mod:`watcher.matching.learn` compares a paper with the liked and the
disliked papers as two wholes (a cosine with each side's summed vector). A profile with no other
way in (no query, no followed authors) has nothing else to go on, and two similarities cannot tell
the papers a reader keeps from their neighbours that share most words with them (image
*generation* from image *restoration*). For those profiles the model is a classifier over the
words themselves, the standard text classifier (`benchmarks/bound_learner.py` measures the same
one with scikit-learn):

* features: each paper's words (title and abstract, as :mod:`watcher.util.text` normalises them,
  without the words in more than half of all papers: "the", "we") and pairs of neighbouring such words
  ("image generation", "video editing"), weighted tf-idf (the idf of the matcher's table,
  :mod:`watcher.matching.docfreq`; a pair's is :meth:`~DocFreq.phrase_idf`'s), counts sublinear (``1 + ln tf``), unit length; a word or pair found in fewer than
  MIN_DF rated papers is left out (it says nothing about any other paper);
* an L2-penalised logistic regression, classes weighed to balance (C of each class ``C x n /
  (2 x its count)``), its intercept a constant feature as in LIBLINEAR, fitted by dual coordinate
  descent (Yu, Huang and Lin, "Dual coordinate descent methods for logistic regression and
  maximum entropy models", Machine Learning 85, 2011; LIBLINEAR's ``-s 7``): no step size to
  choose, one pass over the rated papers' words per sweep, exact to a tolerance;
* :func:`held_out` scores each rated paper by the model fitted without it (FOLDS folds), as a
  new paper would be scored: :mod:`watcher.matching.learn` sets the model's cut on those scores.

Cost: a sweep is two passes over the rated papers' features; a fit takes a few dozen sweeps.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Sequence

from .docfreq import DocFreq
from .index import Doc

C = 1.0  # the penalty's inverse weight (scikit-learn's and LIBLINEAR's default)
MIN_DF = 2  # a feature in fewer rated papers than this is left out
FOLDS = 5
TOLERANCE = 0.01  # the fit stops when no dual coordinate's gradient exceeds this
MAX_SWEEPS = 200
SEED = 0  # the order of the coordinates: a fixed shuffle, the same fit on every run


def terms(doc: Doc, doc_freq: DocFreq) -> Counter:
    """The words and neighbouring pairs of words of a paper's title and abstract, counted; the
    words in more than half of all papers (``doc_freq.frequent``: "the", "we") are dropped
    before pairing."""
    out: Counter = Counter()
    for text in (doc.title, doc.abstract):
        words = [w for w in text.split() if not doc_freq.frequent(w)]
        out.update(words)
        out.update(f"{a} {b}" for a, b in zip(words, words[1:]))
    return out


class WordModel:
    """A fitted word classifier: :meth:`score` is its decision value (log-odds) for a paper."""

    def __init__(self, idf: dict[str, float], weights: dict[str, float], bias: float, doc_freq: DocFreq):
        self.idf, self.weights, self.bias, self.doc_freq = idf, weights, bias, doc_freq
        self.cut = 0.0  # below this score the reader is taken not to want the paper (set by the caller)

    @classmethod
    def fit(cls, counted: Sequence[Counter], labels: Sequence[int], doc_freq: DocFreq) -> "WordModel | None":
        """The classifier of papers whose :func:`terms` are ``counted`` (``labels`` 1: liked, 0:
        disliked); None without both kinds."""
        if not (0 < sum(labels) < len(labels)):
            return None
        df: Counter = Counter()
        for c in counted:
            df.update(c.keys())
        idf = {t: doc_freq.phrase_idf(tuple(t.split())) for t, k in df.items() if k >= MIN_DF}
        rows = [_row(c, idf) for c in counted]
        weights, bias = _dual_cd(rows, list(labels))
        return cls(idf, weights, bias, doc_freq)

    def score(self, doc: Doc) -> float:
        """The decision value: above 0 the model thinks the reader likes the paper."""
        return self._score(terms(doc, self.doc_freq))

    def _score(self, counted: Counter) -> float:
        return self.bias + sum(self.weights.get(t, 0.0) * v for t, v in _row(counted, self.idf).items())

    def rejects(self, doc: Doc, vector=None, query=()) -> bool:
        """Whether the paper scores below ``cut`` (``vector`` and ``query``: as the ratings'
        other model takes them, unused)."""
        return self.score(doc) < self.cut


def held_out(counted: Sequence[Counter], labels: Sequence[int], doc_freq: DocFreq) -> list[tuple[float, int]]:
    """``(score, label)`` of each rated paper (its :func:`terms` in ``counted``) under the
    classifier fitted without its fold (FOLDS folds, every FOLDS-th paper): how a new paper
    would be scored."""
    out = []
    for k in range(FOLDS):
        train = [i for i in range(len(labels)) if i % FOLDS != k]
        model = WordModel.fit([counted[i] for i in train], [labels[i] for i in train], doc_freq)
        if model is None:
            continue
        out += [(model._score(counted[i]), labels[i]) for i in range(k, len(labels), FOLDS)]
    return out


def _row(counts: Counter, idf: dict[str, float]) -> dict[str, float]:
    """Sublinear tf x idf over the known terms, unit length."""
    row = {t: (1.0 + math.log(k)) * idf[t] for t, k in counts.items() if t in idf}
    norm = math.sqrt(sum(v * v for v in row.values()))
    return {t: v / norm for t, v in row.items()} if norm else row


def _dual_cd(rows: list[dict[str, float]], labels: list[int]) -> tuple[dict[str, float], float]:
    """Weights and intercept of the balanced, L2-penalised logistic regression of ``rows``
    (see the module docstring): minimises ``w.w / 2 + sum C_i ln(1 + exp(-y_i w.x_i))`` over
    ``w`` with a constant feature 1 (the intercept, penalised alike), through its dual."""
    n, pos = len(labels), sum(labels)
    cost = {1: C * n / (2.0 * pos), 0: C * n / (2.0 * (n - pos))}
    ys = [1.0 if t else -1.0 for t in labels]
    cs = [cost[t] for t in labels]
    # features as integer positions: the inner loops index lists, not dicts
    index: dict[str, int] = {}
    cols = [[index.setdefault(t, len(index)) for t in r] for r in rows]
    vals = [list(r.values()) for r in rows]
    bias = len(index)  # the constant feature's position
    w = [0.0] * (bias + 1)
    qii = [sum(v * v for v in vs) + 1.0 for vs in vals]
    alpha = [min(0.001 * c, 1e-8) for c in cs]  # alpha_i; its pair is C_i - alpha_i
    for i in range(n):
        step = ys[i] * alpha[i]
        for j, v in zip(cols[i], vals[i]):
            w[j] += step * v
        w[bias] += step
    order = list(range(n))
    shuffle = random.Random(SEED).shuffle
    inner_tol = 0.01
    for _ in range(MAX_SWEEPS):
        shuffle(order)
        worst = 0.0
        for i in order:
            yi, c, a = ys[i], cs[i], qii[i]
            b = yi * (sum(w[j] * v for j, v in zip(cols[i], vals[i])) + w[bias])
            # minimise g(z) = z ln z + (c - z) ln(c - z) + a/2 (z - old)^2 + sign b (z - old)
            # over alpha_i (sign 1) or its pair c - alpha_i (sign -1), whichever Newton starts better from
            if 0.5 * a * ((c - alpha[i]) - alpha[i]) + b < 0:
                sign, old = -1.0, c - alpha[i]
            else:
                sign, old = 1.0, alpha[i]
            z = old if c - old >= 0.5 * c else 0.1 * old
            grad = a * (z - old) + sign * b + math.log(z / (c - z))
            worst = max(worst, abs(grad))
            moved = False
            for _ in range(100):
                if abs(grad) < inner_tol:
                    break
                second = a + c / ((c - z) * z)
                nxt = z - grad / second
                z = z * 0.1 if nxt <= 0 else (z + c) / 2 if nxt >= c else nxt
                grad = a * (z - old) + sign * b + math.log(z / (c - z))
                moved = True
            if moved:
                new_alpha = z if sign > 0 else c - z
                step = yi * (new_alpha - alpha[i])
                alpha[i] = new_alpha
                for j, v in zip(cols[i], vals[i]):
                    w[j] += step * v
                w[bias] += step
        if worst < TOLERANCE:
            break
        inner_tol = max(1e-8, min(inner_tol, 0.1 * worst))
    names = list(index)
    return {names[j]: w[j] for j in range(bias) if w[j]}, w[bias]


__all__ = ["WordModel", "held_out", "terms"]
