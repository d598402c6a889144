"""Profiles by the thousand, generated from the corpus's own vocabulary (deterministic).

    make_scale_profiles(papers, n, seed=14) -> list[Profile]

For the matching-at-scale benchmark (``benchmarks/run.py``, ``match_scale_ratio`` and
``match_speedup``) and the test that the indexed matcher selects exactly what profile-by-profile
matching does. The vocabulary comes from ``papers`` (normally the shipped corpus):

* words: normalised title words found in at least 3 papers and at most 12 % of them, function
  words left out (topical words: "segmentation", "grpo", "llm"; not "model" or "with"), drawn in
  proportion to the square root of their frequency, so common topics recur across profiles as
  they do across users;
* phrases: title word pairs found in at least 3 papers, no function word in them ("gaussian
  splatting", "reinforcement learning", "language model"), drawn alike;
* authors: names on at least 2 papers; categories: every arXiv category the papers carry,
  drawn in proportion to the square root of their frequency.

Queries mix phrases, AND/OR, NOT/ANDNOT, field prefixes (ti:, abs:), wildcards, ``cat:`` and
``au:`` terms; a profile may also follow authors, exclude a term, restrict categories and set
``min_score`` and ``max_papers``. One in 200 is a category-only query ("everything in cs.RO", a
rarer category), one in 500 a purely negative query restricted to a category: both match many
papers and are not anchored by any word, the hard case for an index of terms.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter

from watcher.config import Profile
from watcher.util.text import words as normalise

_OPERATOR_WORDS = {"and", "or", "not", "andnot"}
_STOP = _OPERATOR_WORDS | set("""a an the of for with via in on to from by at as is are be its into
    toward towards using through under over without beyond than that this what when how can do does
    we our your their vs versus based more less all one two new""".split())
_CATEGORY = re.compile(r"[a-z-]+\.[A-Za-z-]+")  # arXiv's; the corpus also lists MSC/ACM codes
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ .-")


class Vocabulary:
    """Words, phrases, authors and categories of ``papers``, with their document counts."""

    def __init__(self, papers):
        n = len(papers)
        word_df: Counter = Counter()
        pair_df: Counter = Counter()
        authors: Counter = Counter()
        cats: Counter = Counter()
        for p in papers:
            title = [w for w in normalise(p.title) if w not in _OPERATOR_WORDS]
            word_df.update(set(title))
            pair_df.update({(a, b) for a, b in zip(title, title[1:])})
            authors.update({a for a in p.authors if set(a) <= _NAME_CHARS and " " in a})
            cats.update(c for c in set(p.categories) if _CATEGORY.fullmatch(c))
        top = 0.12 * n
        topical = {w for w, c in word_df.items() if 3 <= c <= top and len(w) > 2
                   and not w.isdigit() and w not in _STOP}
        self.words = sorted(topical)
        self.word_weights = [math.sqrt(word_df[w]) for w in self.words]
        known = topical | {w for w, c in word_df.items() if c > top and w not in _STOP}
        pairs = sorted((a, b) for (a, b), c in pair_df.items() if c >= 3 and a in known and b in known)
        self.phrases = [f"{a} {b}" for a, b in pairs]
        self.phrase_weights = [math.sqrt(pair_df[pair]) for pair in pairs]
        self.authors = sorted(a for a, c in authors.items() if c >= 2)
        self.categories = sorted(cats)
        self.category_weights = [math.sqrt(cats[c]) for c in self.categories]
        self.rare_categories = sorted(c for c, k in cats.items() if 10 <= k <= 0.05 * n) or self.categories


class _Maker:
    def __init__(self, vocab: Vocabulary, rng: random.Random):
        self.v, self.rng = vocab, rng

    def word(self) -> str:
        return self.rng.choices(self.v.words, self.v.word_weights)[0]

    def phrase(self) -> str:
        return '"' + self.rng.choices(self.v.phrases, self.v.phrase_weights)[0] + '"'

    def term(self) -> str:
        return self.phrase() if self.rng.random() < 0.4 else self.word()

    def prefix(self) -> str:
        word = self.rng.choice([w for w in (self.word() for _ in range(5)) if len(w) >= 6] or ["reinforc"])
        return word[: self.rng.randint(5, len(word) - 1)] + "*"

    def author(self) -> str:
        return self.rng.choice(self.v.authors)

    def category(self) -> str:
        return self.rng.choices(self.v.categories, self.v.category_weights)[0]

    def query(self) -> str:
        r, t = self.rng.randrange(12), self.term
        if r == 0:
            return t()
        if r == 1:
            return f"{t()} OR {t()} OR {t()}"
        if r == 2:
            return f"({t()} OR {t()}) AND {t()}"
        if r == 3:
            return f"ti:{t()} AND ({t()} OR {t()})"
        if r == 4:
            return f"{t()} NOT {self.word()}"
        if r == 5:
            return f"({t()} OR {t()}) ANDNOT ti:{self.word()}"
        if r == 6:
            return f"{self.prefix()} AND cat:{self.category()}"
        if r == 7:
            return f'au:"{self.author()}" OR ti:{t()}'
        if r == 8:
            return f"cat:{self.category()} AND abs:{t()}"
        if r == 9:
            return f"abs:({t()} AND {t()}) OR ti:{t()}"
        if r == 10:
            return f"{t()} {t()}"  # juxtaposition: AND
        return f"({t()} OR {self.prefix()}) AND NOT ({t()} OR ti:{self.word()})"


def make_scale_profiles(papers, n: int, seed: int = 14) -> list[Profile]:
    """``n`` profiles drawn from the vocabulary of ``papers`` (same inputs, same profiles)."""
    vocab = Vocabulary(papers)
    rng = random.Random(seed)
    make = _Maker(vocab, rng)
    out = []
    for i in range(n):
        if i % 500 == 499:
            query = f"NOT ti:{make.word()}"
            categories = (rng.choice(vocab.rare_categories),)
        elif i % 200 == 199:
            query, categories = f"cat:{rng.choice(vocab.rare_categories)}", ()
        else:
            query = make.query()
            categories = tuple(sorted({make.category() for _ in range(rng.randint(1, 2))})) if rng.random() < 0.2 else ()
        out.append(Profile(
            name=f"g{i}", title=f"Generated {i}", query=query,
            authors=tuple(make.author() for _ in range(rng.randint(1, 2))) if rng.random() < 0.1 else (),
            exclude=f"ti:{make.word()}" if rng.random() < 0.15 else None,
            categories=categories,
            min_score=rng.choice((0.0, 0.0, 1.0, 2.0, 3.0)),
            max_papers=rng.choice((10, 20, 30, 50)),
        ))
    return out
