"""Matching papers against profiles: which papers a profile selects, with a score and reasons.

Pure: no I/O, no clock. A paper enters a profile in any of three ways, and then must pass the
cuts::

    ways in:  the query matches | a followed author wrote it | it is similar to an example
    cuts:     categories (when the paper's are known) | exclude query | min_score

The score adds up, with reasons, best first:

* each query term found: its idf (rare terms weigh more, see :mod:`watcher.matching.docfreq`), times
  TITLE_WEIGHT in the title, times 1 (+ a little for repeats) in the abstract; a ``cat:`` term
  found among the paper's categories (cross-lists too, as on arXiv): CATEGORY_WEIGHT, reason
  ``cat: cs.CV``;
* a query that matches without any of its terms being found, as a purely negative one
  (``NOT ti:survey`` matches every paper without "survey" in its title) does: QUERY_BASE, reason
  ``query matched``. So a matching query always gives a positive score, and only ``min_score``
  decides whether that is enough;
* each followed author: AUTHOR_BOOST;
* similarity to the examples ("more like these", see below): EXAMPLE_SCORE x similarity /
  threshold, from the threshold up, reason ``similar to`` the closest example;
* Hugging Face upvotes: ln(1 + upvotes).

:func:`select` merges profiles: each paper once, under its best profile, with the reasons of
every profile that matched; per-profile ``max_papers``; best first, ties newest first.

Examples (Rocchio): each example is a tf-idf vector of its title and abstract words (idf from the
fixed table, words in more than a tenth of all papers dropped, repeats in the abstract counted
sublinearly, title words 1 + TITLE_BOOST times); the profile compares each paper (its distinct
words, idf-weighted, title words boosted alike) by cosine with the *centroid* of the examples,
cut to its CENTROID_WORDS heaviest words. The threshold comes from the examples themselves:
SIMILAR_RATIO x the median similarity of an example to the centroid of the others (so a paper
about as close to the topic as a typical example passes). A single example has SIMILAR_ONE, and
n examples weigh that prior in as one of n, ``(SIMILAR_ONE + (n - 1) x relative) / n``, as the
median of a few is noisy; the result is kept between SIMILAR_FLOOR and SIMILAR_MAX. Profiles
without examples pay nothing for this.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from functools import partial
from typing import Iterable, Sequence

from .docfreq import DocFreq, default_doc_freq
from ..util.turns import take_turn
from ..formats.xmlsafe import gc_paused
from .index import (CENTROID_WORDS, SIMILAR_ONE, Batch, Nearest, cosine, example_vector, paper_vector,
                    prepare, similarity, top_words, vector_sum)
from .learn import LIKED, Check, disliked_reason, liked_reason
from ..models import Match, Paper, reason_label, unique_papers
from .percolate import Percolator
from .query import parse_query
from ..util.text import name_key, plural
from ..formats.openalex import entries, matches_ref

TITLE_WEIGHT = 2.0
AUTHOR_TERM_WEIGHT = 2.0  # a query word found in the author list
AUTHOR_BOOST = 5.0  # a followed author
CATEGORY_WEIGHT = 1.0  # a cat: term among the paper's categories (jr:, doi: alike)
QUERY_BASE = 0.5  # a query that matched without a term found (NOT ti:survey)
EXAMPLE_SCORE = 4.0  # a paper exactly as similar to the examples as the threshold
SIMILAR_RATIO = 0.9  # threshold: this x the examples' median similarity to the others' centroid
SIMILAR_MAX = 0.25  # the highest threshold (examples much alike)
SIMILAR_FLOOR = 0.05  # the lowest threshold (examples with little in common)
TITLE_BOOST = 1.0  # a title word counts 1 + TITLE_BOOST times when comparing papers
THRESHOLD_SAMPLE = 50  # at most this many examples are left out in turn to set the threshold

_SIMILAR = object()  # stands for the reason "similar to <the closest example>"
OWN_EXAMPLE = "one of the profile's examples"  # the reason of the only example, announced itself

__all__ = ["ProfileMatcher", "select", "prepare", "Batch"]


class ProfileMatcher:
    """Scores papers for one :class:`~watcher.config.Profile`; the queries are parsed once.

    ``example_papers`` are the profile's examples, already resolved to papers by the caller.
    ``doc_freq`` defaults to the shipped table.
    """

    def __init__(self, profile, example_papers: Sequence[Paper] = (), doc_freq: DocFreq | None = None,
                 feedback=None, decided=None):
        self.profile = profile
        self.doc_freq = doc_freq or default_doc_freq()
        self.query = parse_query(profile.query) if profile.query else None
        self.exclude = parse_query(profile.exclude) if profile.exclude else None
        self.terms = self.query.positive_terms() if self.query else []
        self.weights = {t: self.doc_freq.phrase_idf(t.words) for t in self.terms}
        self.authors = [(a, k) for a in profile.authors if (k := name_key(a))]
        # arXiv categories, archives, bioRxiv / medRxiv subjects ("cell_biology": "cell biology")
        self.categories = frozenset(c.lower().removesuffix(".*").replace("_", " ")
                                    for c in profile.categories)
        # ratings (see :mod:`watcher.matching.learn`): liked papers join the examples
        self.feedback = feedback if feedback else None
        # what compiled it (matching.compile.made_from) and its fingerprint (watcher.cycle.selections)
        self.made_from: tuple | None = None
        self.decided_by: str | None = None
        liked = list(feedback.liked) if self.feedback else []
        self.examples = (_Examples([*liked, *example_papers], self.doc_freq.vector_weight,
                                   {p.key for p in liked}) if example_papers or liked else None)
        # the profile without its ratings: what the ratings' self-check measures changes against
        self._plain = None
        if self.feedback:
            reach = not (self.query or self.authors)
            if not reach:
                self._plain = ProfileMatcher(profile, example_papers, self.doc_freq)
            self.examples = self.feedback.attach(
                self.examples, self.doc_freq, TITLE_BOOST, reach=reach,
                query_parts=self.query_parts if self.query else None,
                check=None if reach else Check(self._plain.selects, partial(self._examples_with, example_papers)),
                max_loss=getattr(profile, "max_recall_loss", None), decided=decided)

    def _examples_with(self, example_papers: Sequence[Paper], liked: Sequence[Paper]):
        """The examples this matcher would have with only ``liked`` as liked papers."""
        papers = [*liked, *example_papers]
        return _Examples(papers, self.doc_freq.vector_weight, {p.key for p in liked}) if papers else None

    def selects(self, papers: Sequence[Paper]) -> list[bool]:
        """For each of ``papers``, whether the profile selects it."""
        found = self.score_batch(prepare(list(papers)))
        return [i in found for i in range(len(papers))]

    def score(self, paper: Paper) -> Match | None:
        """The match of ``paper``, or None when the profile does not select it."""
        return self.score_batch(prepare([paper])).get(0)

    def explain(self, paper: Paper) -> Match:
        """Score and reasons, also for a paper the profile does not select (then the reasons
        say why not, e.g. ``excluded by ti:survey``)."""
        return self._judge(prepare([paper]), [0], explain=True)[0]

    def query_parts(self, papers: Sequence[Paper]) -> list[list[tuple[float, str]]]:
        """The query's parts of each paper's score, with their reasons (empty when the query
        does not match it): what the ratings' model (:mod:`watcher.matching.learn`) is fitted on."""
        batch = prepare(list(papers))
        matched = batch.evaluate(self.query.root) if self.query else set()
        hits = self._term_hits(batch) if matched else None
        return [self._query_parts(batch, i, hits) if i in matched else [] for i in range(len(batch))]

    def _query_parts(self, batch: Batch, i: int, hits) -> list[tuple[float, str]]:
        """The score's parts of a paper the query matched: its terms found, else QUERY_BASE."""
        return self._term_reasons(batch, i, hits) or [(QUERY_BASE, "query matched")]

    def score_batch(self, batch: Batch, within: set[int] | None = None) -> dict[int, Match]:
        """The selected papers of a prepared batch, by position in the batch. ``within`` may
        name the only papers the profile can select (see :mod:`watcher.matching.percolate`): the query
        and the exclusion are then evaluated there alone, for the same result."""
        return self._judge(batch, None, explain=False, within=within)

    def sees_every_paper(self) -> bool:
        """Whether a paper can enter this profile other than by its query or a followed author
        (by similarity to its examples): then the percolator cannot narrow where it looks."""
        return bool(self.examples)

    def _judge(self, batch: Batch, only: list[int] | None, explain: bool,
               within: set[int] | None = None) -> dict[int, Match]:
        matched = batch.evaluate(self.query.root, within) if self.query else set()
        by_author = self._authors(batch)
        similar = self._similar(batch, explain)
        threshold = self.examples.threshold if self.examples else 0.0
        # ratings checked against the profile without them (learn.Feedback's self-check): the
        # likes bring in a paper it does not select itself only as far as the check allows
        gate = self.feedback if self._plain is not None else None
        own = (set(self._plain._similar(batch, False)) if gate is not None and self._plain.examples
               else set())  # similar to the profile's own examples
        candidates = only if only is not None else (matched | by_author.keys() | {
            i for i, s in similar.items()
            if s >= threshold and (gate is None or i in own or gate.adds(s / threshold))})
        excluded = batch.evaluate(self.exclude.root, within) if self.exclude else set()
        if not explain:  # the cuts that need no score first: these papers would be dropped
            candidates = [i for i in candidates if i not in excluded and not (
                self.categories and batch.docs[i].categories
                and not (self.categories & batch.docs[i].categories))]
        hits = self._term_hits(batch) if matched else None
        out: dict[int, Match] = {}
        for i in candidates:
            take_turn()  # beside a server's pages: they go first (util.turns)
            doc = batch.docs[i]
            scored: list[tuple[float, str]] = []
            if i in matched:
                scored += self._query_parts(batch, i, hits)
            query = list(scored)
            for name in by_author.get(i, ()):
                scored.append((AUTHOR_BOOST, f"author: {name}"))
            plain = i in matched or i in by_author or i in own
            sim = similar.get(i, 0.0)
            held_back = (self.examples and sim >= threshold and not plain and gate is not None
                         and not gate.adds(sim / threshold))
            if self.examples and sim >= threshold and not held_back:
                scored.append((EXAMPLE_SCORE * sim / threshold, _SIMILAR))  # named if kept
            why_not = []
            if not scored:
                if self.feedback and self.feedback.rated_down(doc.paper.key):
                    why_not.append(disliked_reason(doc.paper))  # the reader's own rating first
                why_not.append(f"not added ({self.examples.closest(doc)}): {gate.estimate('added')}"
                               if held_back else self._no_match(batch, i, sim))
            elif doc.paper.upvotes:
                scored.append((math.log1p(doc.paper.upvotes), plural(doc.paper.upvotes, "upvote")))
            if scored and self.feedback and (penalty := self.feedback.penalty(doc, scored, query, plain)):
                scored.append(penalty)  # the ratings put it among the disliked
            score = round(sum(s for s, _ in scored), 3)
            if self.categories and doc.categories and not (self.categories & doc.categories):
                why_not.append(f"category not in {', '.join(self.profile.categories)}")
            if i in excluded:
                hits = [t.syntax() for t in self.exclude.positive_terms() if i in batch.hits(t)]
                why_not.append(f"excluded by {', '.join(hits) or self.profile.exclude}")
            if scored and score < self.profile.min_score:
                why_not.append(f"score {score:g} below min_score {self.profile.min_score:g}")
            if why_not and not explain:
                continue
            if len(scored) > 1:
                scored.sort(key=lambda sr: -sr[0])
            reasons = [self.examples.closest(doc) if r is _SIMILAR else r
                       for _, r in scored]
            out[i] = Match(doc.paper, score, reasons + why_not, self.profile.name)
        return out

    def _term_hits(self, batch: Batch) -> list[tuple]:
        """``(term, its hits in batch, its weight)`` for each query term, for :meth:`_term_reasons`."""
        return [(t, batch.hits(t), self.weights[t]) for t in self.terms]

    def _term_reasons(self, batch: Batch, i: int, hits: list | None = None) -> list[tuple[float, str]]:
        """Score and reason of each query term found in paper ``i``; ``hits`` from
        :meth:`_term_hits`, looked up once per batch by the caller."""
        out = []
        for term, found, idf in hits if hits is not None else self._term_hits(batch):
            hit = found.get(i)
            if hit is None:
                continue
            if hit.category and term.field in ("cites", "by"):  # each followed work or author
                out += [(CATEGORY_WEIGHT, r) for r in followed_reasons(batch.docs[i].paper, term)]
                continue
            if hit.category:  # cat:, jr: or doi:
                out.append((CATEGORY_WEIGHT, f"{term.field}: {term.text}"))
                continue
            title = TITLE_WEIGHT * idf if hit.title else 0.0
            abstract = idf * (1 + 0.5 * math.log(hit.abstract)) if hit.abstract else 0.0
            author = AUTHOR_TERM_WEIGHT if hit.author else 0.0
            field = "ti" if hit.title else "abs" if hit.abstract else "au"
            out.append((title + abstract + author, term.display(field)))
        return out

    def _authors(self, batch: Batch) -> dict[int, list[str]]:
        out: dict[int, list[str]] = defaultdict(list)
        for name, key in self.authors:
            for i, same in batch.authored(key).items():
                names = _names(batch.docs[i].paper)
                for k in same:
                    if names[k] not in out[i]:
                        out[i].append(names[k])
        return {i: names for i, names in out.items() if names}

    def _similar(self, batch: Batch, explain: bool) -> dict[int, float]:
        """Similarity to the examples' centroid: from the threshold up, or (explaining) all."""
        if not self.examples:
            return {}
        floor = 0.0 if explain else self.examples.threshold
        return similarity(batch, self.examples.centroid, self.examples.weight, floor, TITLE_BOOST)

    def _no_match(self, batch: Batch, i: int, sim: float) -> str:
        ways = []
        if self.query:
            found = [t.display() for t in self.terms if i in batch.hits(t)]
            ways.append(f"query not matched (found {', '.join(found)})" if found
                        else "no query term found" if self.terms else "query not matched")
        if self.authors:
            ways.append("no followed author")
        if self.examples:
            digits = 2 if round(sim, 2) < round(self.examples.threshold, 2) else 3  # never "0.05, needs 0.05"
            ways.append(f"not similar to the {self.examples.kind()} ({sim:.{digits}f}, needs "
                        f"{self.examples.threshold:.{digits}f})")
        return "; ".join(ways) or ("no way in yet: no query, followed author, example or liked paper"
                                   + (" (only papers rated down)" if self.feedback else ""))


class _Examples:
    """A profile's examples for "more like these": their centroid and the similarity to it
    that makes a paper similar (see the module docstring)."""

    def __init__(self, papers: Sequence[Paper], weight, liked=frozenset()):
        self.weight = weight
        docs = prepare(unique_papers(papers)).docs  # an example given twice (its id and a digest) counts once
        vectors = [(liked_reason(d.paper) if d.paper.key in liked else f"similar to {reason_label(d.paper)}",
                    example_vector(d, weight, TITLE_BOOST), d) for d in docs]
        vectors = [v for v in vectors if v[1]]  # an example without a weighted word says nothing
        self.labels = [label for label, _, _ in vectors]
        self.docs = [doc for _, _, doc in vectors]
        self.vectors = [vector for _, vector, _ in vectors]
        self._nearest: Nearest | None = None  # the vectors indexed by word, once a paper asks (closest)
        self._positions: dict[str, int] = {}  # paper key -> its place among the examples (closest)
        total = vector_sum(self.vectors)
        self.centroid = top_words(total, CENTROID_WORDS)
        self.threshold = SIMILAR_ONE
        self.sims: list[float] = []  # a sample of the examples' similarities to the others
        if (n := len(vectors)) > 1:
            step = max(1, len(vectors) // THRESHOLD_SAMPLE)
            sims = []
            for k in range(0, len(vectors), step)[:THRESHOLD_SAMPLE]:
                others = dict(total)
                for word, w in self.vectors[k].items():
                    others[word] -= w
                sims.append(cosine(top_words(others, CENTROID_WORDS),
                                   paper_vector(vectors[k][2], weight, TITLE_BOOST)))
            self.sims = sorted(sims)
            relative = SIMILAR_RATIO * statistics.median(sims)
            shrunk = (SIMILAR_ONE + (n - 1) * relative) / n  # few examples: a noisy median
            self.threshold = min(SIMILAR_MAX, max(SIMILAR_FLOOR, shrunk))

    def __bool__(self) -> bool:
        return bool(self.centroid)

    def kind(self) -> str:
        """What the examples are, as reasons say it: "examples", "liked papers" or both."""
        liked = sum(label.endswith(LIKED) for label in self.labels)
        return ("liked papers" if liked == len(self.labels) else "examples" if not liked
                else "examples and liked papers")

    def closest(self, doc) -> str:
        """The reason naming the example most similar to ``doc`` (a prepared paper):
        ``similar to 2504.07615``, or ``like 2504.07615 (you liked)`` for a liked paper. A paper
        that is itself an example (a Zotero collection's, announced) is never its own reason:
        the closest other example is named, else OWN_EXAMPLE; a liked paper itself keeps its
        like (the rating is why: ``like 2504.07615 (you liked)``)."""
        if self._nearest is None:
            self._nearest = Nearest(self.vectors)
            self._positions = {d.paper.key: k for k, d in enumerate(self.docs)}  # examples are unique
        mine = self._positions.get(doc.paper.key)
        if mine is not None and self.labels[mine].endswith(LIKED):
            return self.labels[mine]
        others = len(self.docs) - (mine is not None)
        if not others:
            return OWN_EXAMPLE if self.docs else ""
        dots = self._nearest.dots(paper_vector(doc, self.weight, TITLE_BOOST)) if others > 1 else [0.0] * len(self.docs)
        best = max((k for k in range(len(self.docs)) if k != mine), key=lambda k: (dots[k], -k))
        return self.labels[best]


def followed_reasons(paper: Paper, term) -> list[str]:
    """The reasons a ``cites:`` or ``by:`` term gives ``paper``: "cites your <title>" for each
    followed work it cites, "by <name>, whom you follow" for each followed author."""
    if term.field == "cites":
        return [f"cites your {title}" for key, title in entries(paper.cites)
                if matches_ref(key, term.words[0])]
    return [f"by {name}, whom you follow" for key, name in entries(paper.followed)
            if matches_ref(key, term.words[0])]


def _names(paper: Paper) -> list[str]:
    return [a for a in paper.authors if name_key(a)]


def _newest(paper: Paper) -> float:
    when = paper.published or paper.updated
    if when is not None:
        return when.timestamp()
    if paper.announced is not None:
        return float(paper.announced.toordinal() - 719163) * 86400.0  # days since 1970
    return float("-inf")


def rank_key(match: Match) -> tuple:
    """Sort key: best score first, then newest first, then by paper identity (stable)."""
    return (-match.score, -_newest(match.paper), match.paper.key)


def select(papers: Iterable[Paper] | Batch, matchers: Sequence[ProfileMatcher], now=None) -> list[Match]:
    """The papers the profiles select, each once under its best profile (ties: the earlier
    matcher), with the other matching profiles' reasons appended as ``"name: reason"``.

    ``min_score`` and then ``max_papers`` of each profile apply; the result is best first, ties
    newest first. ``papers`` may be a prepared :class:`Batch`. ``now`` is accepted for the
    pipeline's convenience; scores do not depend on the time.
    """
    # Each profile is evaluated only on the papers holding one of its anchor terms (see
    # watcher.matching.percolate). Matching builds many small acyclic objects (a match per profile and
    # paper): with the collector running, half the time of 10,000 profiles went to full
    # collections walking them.
    with gc_paused():
        batch = prepare(papers)
        return merge(batch, matchers, Percolator(matchers).match(batch))


def merge(batch: Batch, matchers: Sequence[ProfileMatcher], results: list[dict[int, Match]]) -> list[Match]:
    """:func:`select`'s answer from each matcher's ``score_batch`` result (in matcher order)."""
    found: dict[str, list[Match]] = defaultdict(list)
    keys = [doc.paper.key for doc in batch.docs]
    for matches in results:
        for i, match in matches.items():
            found[keys[i]].append(match)
    limits = {m.profile.name: m.profile.max_papers for m in matchers}
    per_profile: dict[str, list[list[Match]]] = defaultdict(list)
    for matches in found.values():  # one paper's matches: best first
        if len(matches) > 1:
            matches.sort(key=_minus_score)  # stable: equal scores keep matcher order
        per_profile[matches[0].profile].append(matches)
    out = []
    for name, groups in per_profile.items():
        groups.sort(key=lambda g: rank_key(g[0]))
        for matches in groups[: limits[name]]:  # the other profiles' reasons only for the kept
            best = matches[0]
            others = [f"{m.profile}: {r}" for m in matches[1:] if m.profile != best.profile
                      for r in m.reasons]
            out.append(Match(best.paper, best.score, best.reasons + others, best.profile))
    return sorted(out, key=rank_key)


def _minus_score(match: Match) -> float:
    return -match.score
