"""How rare a word is: document frequencies for the matcher's idf weights.

Rarity comes from a fixed table, not from the batch being scored, so a paper's score does not
change with the papers it arrives with (``watcher explain`` shows the score the digest used).
The shipped table (``watcher/data/doc_freq.txt.gz``, built by ``benchmarks/build_doc_freq.py``)
counts words in 7,258 cs.CV / cs.CL / cs.AI / cs.LG papers of 2025-2026. Words it lacks count
as rare. Tests and callers may pass their own :class:`DocFreq`.
"""

from __future__ import annotations

import gzip
import math
from functools import lru_cache
from importlib import resources
from typing import Mapping


class DocFreq:
    """Document frequencies of normalised words among ``papers`` papers."""

    def __init__(self, counts: Mapping[str, int], papers: int):
        self.counts = dict(counts)
        self.papers = max(papers, 1)
        self._vector: dict[str, float] = {}
        self._frequent: frozenset[str] | None = None

    def df(self, word: str) -> int:
        """In how many papers ``word`` occurs; a trailing ``*`` sums its completions."""
        if not word.endswith("*"):
            return self.counts.get(word, 0)
        stem = word[:-1]
        return min(self.papers, sum(n for w, n in self.counts.items() if w.startswith(stem)))

    def idf(self, word: str) -> float:
        """``ln(1 + N / (df + 1))``: about 0.7 for "the", 2.5 for "reinforcement", 8.9 for an
        unseen word."""
        return math.log(1 + self.papers / (self.df(word) + 1))

    def phrase_idf(self, words: tuple[str, ...]) -> float:
        """A phrase is as rare as its rarest word, plus a little for each further word."""
        idfs = sorted((self.idf(w) for w in words), reverse=True)
        return idfs[0] + 0.25 * sum(idfs[1:])

    def vector_weight(self, word: str) -> float:
        """The weight of ``word`` when comparing papers: its idf, or 0 for a word in more than
        a tenth of all papers ("model", "results")."""
        weight = self._vector.get(word)
        if weight is None:
            weight = 0.0 if self.df(word) > 0.1 * self.papers else self.idf(word)
            self._vector[word] = weight
        return weight

    def frequent(self, word: str) -> bool:
        """Whether ``word`` is in more than half of all papers ("the", "we", "model"): it tells
        no paper from another (the ratings' word classifier leaves it out)."""
        if self._frequent is None:
            self._frequent = frozenset(w for w, n in self.counts.items() if n > 0.5 * self.papers)
        return word in self._frequent


@lru_cache(maxsize=1)
def default_doc_freq() -> DocFreq:
    """The table shipped with watcher (read once, from the package's data)."""
    ref = resources.files("watcher") / "data" / "doc_freq.txt.gz"
    counts, papers = {}, 0
    for line in gzip.decompress(ref.read_bytes()).decode().splitlines():
        if line.startswith("# papers "):
            papers = int(line.split()[-1])
        elif line:
            word, n = line.split()
            counts[word] = int(n)
    return DocFreq(counts, papers)
