"""Learning from ratings: up-rated papers are examples of their profile, down-rated ones
counter-examples (pure: no I/O, no clock). On the tf-idf vectors of :mod:`watcher.matching.index`.

**Likes.** The matcher (:mod:`watcher.matching.match`) compares papers with a profile's examples as a
whole: the tf-idf centroid, and a threshold taken from the examples themselves. Liked papers join
those examples, so a paper like them scores higher, and one similar enough comes in even without
a query match; its reason names the closest liked paper, ``like 2504.07615 (you liked)``. A
profile with no other way in (no query, no authors) reaches further: its threshold is at most
REACH_RATIO x the similarity the least typical REACH_QUANTILE of its liked papers have to the
others (a reader who rates what they see prunes what comes in too far out).

**Dislikes, with few ratings: a guarded rule.** A disliked paper *votes* against a paper the
profile would select when the paper is similar to it (at least the examples' threshold, the
similarity that would let a liked paper bring a paper in, and at least SIMILAR_ONE, what a
single example needs) and closer to it than to the liked papers' centroid and to every liked
paper. A paper is disliked when it has one vote, or, if the query matched it, QUERY_VOTES: a
query match is never dropped by one dislike, and nothing is dropped for sharing a few words
with a disliked paper. A reader who dislikes more than they like needs proportionally more
votes (x dislikes / likes): otherwise papers on the topic, outnumbered by the disliked ones
among their neighbours, would go.

**Dislikes, once there are MODEL_MIN liked and disliked papers: a per-profile model.** A
logistic regression (L2, classes balanced, Newton's method: pure Python) over the features

* ``ln(1 + query score)`` and ``ln(1 + the query's score in the title)`` (0 when the query does
  not match; both left out without a query),
* the similarity to the liked papers (and examples): cosine with their summed vectors,
* the similarity to the disliked papers: likewise,

fitted on the profile's own rated papers (a rated paper's similarity to its own side leaves it
out, as a new paper is not among the ratings). The threshold keeps recall: the model calls a
paper disliked when its probability is below what the least likely KEEP_QUANTILE of the liked
papers get when each is held out of the fit (FOLDS-fold; never above MODEL_CEILING), so about
that share of what the reader likes is at risk. With NO_QUERY_F1, a profile without a query (its
followed authors and its likes bring papers in, the model their only filter) takes instead the
threshold with the best F1 on the rated papers held out. With MODEL_AGREE the Rocchio evidence must
agree: 1, the paper is closer to the disliked papers' centroid than to the liked one; 2, that,
or it is far out of what the reader keeps (less like the liked papers than the median disliked
paper is, and than FAR_RATIO x as like them as they typically are to each other).

**Without any other way in (no query, no authors): a word classifier.** The likes reach far
and nothing else filters, so two similarities are too little to go on (what they bring in
shares most words with the liked papers, whatever its topic). Such a profile's
model is instead a classifier over the rated papers' words and pairs of words
(:mod:`watcher.matching.words`, the WORDS_MAX latest ratings), cut where the rated papers held
out have their best F1: cold start F1 over the last 10 days 0.733 -> 0.819 on visual
generation, 0.815 -> 0.837 on RAG, 0.588 -> 0.537 on robot learning, 0.891 -> 0.923 on the
held-out gaussian-splatting topic (docs/ratings-check.md).

A disliked paper loses its score and DISLIKE_SCORE x its similarity to the closest disliked
paper / the threshold more: it ranks below every paper not disliked and, with ``min_score`` at 0
or above, drops out; the reason names the closest disliked paper, ``unlike 2505.01234 (you
disliked)``; a paper rated down is itself always disliked. No ratings, no change.

**Checked on the profile's own ratings** (issue 34). A profile with another way in (a query,
followed authors) keeps what it selects itself unless its ratings, held out by time,
justify a change (a profile without one selects what its ratings teach: nothing to check
against). The ratings are cut by time into TIME_FOLDS + 1 pieces, and each later piece is judged
by the learner fitted on the pieces before it, as new papers would be (:meth:`Feedback._self_check`):

* *additions*: a paper the profile does not select itself comes in by the likes only from the
  similarity at which the held-out rated papers the likes would have brought in are, at the
  Wilson lower bound, more often liked than the profile's own selection among the held-out
  ratings, and at least ADD_MIN of them (:func:`decide_additions`); else nothing comes in by the
  likes. The reason says which liked paper it is like, and the estimate says on what evidence.
* *removals*: the model removes a paper the profile selects itself only at the loosest recall
  quantile of QUANTILES at which the share of the held-out liked papers it would lose has its
  upper bound (one-sided BOUND_CONFIDENCE Clopper-Pearson, :func:`loss_bound`) within the
  profile's ``max_recall_loss`` (MAX_RECALL_LOSS by default), and it removes a set less often
  liked than the whole (:func:`decide_removals`); else it removes nothing the profile selects (a
  paper rated down itself is always out), and says how many more ratings the bound needs. The
  point estimate of the loss was too hopeful on topics it was not measured on (2.8 and 2.9
  points lost where it promised at most 1). A
  removed paper is never shown and so never rated: the held-out ratings alone would be only what
  the model let through, and would always say it removes nothing (while on new papers it lost up
  to 8 points of recall on a broad query). So the check sample (:func:`in_check_sample`, one
  paper in CHECK_SAMPLE) is never removed: it is shown with the reason CHECKED, and the record
  as sent tells the learner which rated papers were (``kept``). Each of them stands for itself
  and the CHECK_SAMPLE - 1 removed papers like it, and counts CHECK_SAMPLE times; every other
  rated paper the profile selects itself counts once (an unbiased count of what the profile
  selects, the removed papers included).

With too little evidence nothing changes: the profile's own selection, ranked with the likes'
help. The guarded rule of the first ratings (above) still applies until the model is fitted.

The constants were chosen with ``benchmarks/eval_feedback.py`` (a reader rating every digest
over 30 days of the real corpus) on three judged topics together, leave-one-topic-out
(``benchmarks/choose_learner.py``: each candidate setting picked on two topics and reported on
the third; docs/ratings.md).

Costs: likes join the centroid (one pass over the batch's postings); the fit is a few Newton
steps over the rated papers when the profile is compiled; the dislike check runs only on the
papers a profile would select: a few cosines each.
"""

from __future__ import annotations

import dataclasses

import math
import statistics
import zlib
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

from .index import (CENTROID_WORDS, SIMILAR_ONE, Doc, Nearest, cosine, example_vector, paper_vector,
                    prepare, top_words, vector_sum)
from ..models import Match, Paper, reason_label as label, unique_papers
from ..util.turns import take_turn
from .words import WordModel, held_out, terms

DISLIKE_SCORE = 4.0  # what a paper as close to a disliked one as the threshold loses beyond its score
QUERY_VOTES = 2  # a query match needs this many disliked papers against it (others: one)
MODEL_MIN = 8  # liked and disliked papers each, before the model replaces the rule
KEEP_QUANTILE = 0.05  # the model's threshold: what the least likely 5% of liked papers get ...
MODEL_CEILING = 0.5  # ... but never above this probability
NO_QUERY_F1 = 1  # without a query, the model's threshold is the held-out F1's best (0: as with one)
FOLDS = 5  # the threshold comes from held-out probabilities, FOLDS-fold
MODEL_AGREE = 2  # the Rocchio evidence that must agree with the model (see the docstring)
FAR_RATIO = 0.4  # far out: less than this x the liked papers' median similarity to each other
RIDGE = 1.0  # L2 penalty of the model's weights (standardised features)
REACH_QUANTILE = 0.05  # without a query: the likes reach as far as their least typical 5% ...
REACH_RATIO = 0.9  # ... times this
REACH_FLOOR = 0.05
WORDS_MAX = 2000  # without a query, the word classifier learns from this many ratings, the latest (its cost grows with them)
# The self-check (see "Checked on the profile's own ratings" above): no topic in these, only how
# much evidence is enough and how much recall a removal may cost.
TIME_FOLDS = 4  # the ratings, cut by time into TIME_FOLDS + 1 pieces: each later piece predicted from the earlier
MAX_RECALL_LOSS = 0.02  # the default of a profile's max_recall_loss: what removals may cost of what the reader likes, at most
BOUND_CONFIDENCE = 0.95  # removals are decided on the one-sided upper bound of their loss at this confidence (loss_bound)
QUANTILES = (0.02, 0.015, 0.01, 0.0075, 0.005, 0.0025, 0.0)  # the recall quantiles tried, loosest first (steps of a quarter of the 1% budget they were set with): the model predicts about that share of the liked lost, so none above the 2-point limit
ADD_MIN = 5  # rated papers beyond the profile's own selection an addition needs held out before it is believed
CONFIDENCE_Z = 1.645  # one-sided 95%: the Wilson lower bound of the additions' precision
CHECK_SAMPLE = 10  # one paper in this many is never removed by the model: the fair sample its removals are checked on


LIKED, DISLIKED = "(you liked)", "(you disliked)"  # the end of a reason that names a rating
CHECKED = f"kept to check the ratings (one paper in {CHECK_SAMPLE} is never removed)"  # see in_check_sample


def liked_reason(paper: Paper) -> str:
    return f"like {label(paper)} {LIKED}"


def disliked_reason(paper: Paper) -> str:
    return f"unlike {label(paper)} {DISLIKED}"


def names_a_rating(reason: str) -> bool:
    """True for a reason that says which paper the reader rated (a published site leaves it out)."""
    return reason.endswith((LIKED, DISLIKED))


class Feedback:
    """A profile's ratings: ``liked`` and ``disliked`` papers (a paper is in at most one list:
    its latest rating)."""

    def __init__(self, liked: Sequence[Paper] = (), disliked: Sequence[Paper] = (),
                 times: dict[str, str] | None = None, kept: set[str] | frozenset = frozenset()):
        self.liked = unique_papers(liked)
        self.disliked = unique_papers(disliked)
        self.times = dict(times or {})  # paper key -> when it was rated (ISO): the self-check's order
        self.kept = set(kept)  # rated papers shown only as the check sample (CHECKED): the model had removed them
        self.add_floor: float | None = 1.0  # papers beyond the profile's own selection: x the threshold (None: none)
        self.remove = True  # the model may remove what the profile itself selects
        self.max_loss = MAX_RECALL_LOSS  # the profile's max_recall_loss: removals' bound must be within it
        self.estimates: dict[str, Estimate] = {}  # "added" / "removed": what the self-check found
        self._examples = None
        self._negatives: list[tuple[str, dict]] = []
        self._nearest: Nearest | None = None  # the disliked papers' vectors indexed by word (_near)
        self.model: Model | WordModel | None = None
        self._keys = {p.key for p in self.disliked}  # the disliked papers' own keys
        self._balance = 1.0  # votes needed grow with dislikes per like (see the module docstring)
        self._weight, self._boost = None, 0.0
        self._reach = False  # no other way in (attach's reach): not checked

    def __bool__(self) -> bool:
        return bool(self.liked or self.disliked)

    def attach(self, examples, doc_freq, title_boost: float, reach: bool,
               query_parts: Callable[[list[Paper]], list[list]] | None = None, check: "Check | None" = None,
               max_loss: float | None = None, decided: "dict[str, Estimate] | None" = None):
        """Prepare the counter-examples under the word weights of the matcher's ``doc_freq``
        (:class:`~watcher.matching.docfreq.DocFreq`), against the matcher's ``examples`` (the
        liked papers and the profile's own examples, already merged; None without any).
        ``reach``: the profile has no other way in (no query, no authors), so the likes reach as
        far as the least typical liked paper and the word classifier is its model (see the
        module docstring).
        ``query_parts``: the parts of the profile's query score of each of some papers (``(score,
        reason)``, none unmatched), None without a query; the model is fitted on them. Returns
        the examples to use. ``check``: how the profile is without its ratings, for the
        self-check (None: no check, every change allowed; a profile with no other way in is not
        checked either: its likes are all it has). ``max_loss``: the profile's ``max_recall_loss``
        (default MAX_RECALL_LOSS), the most that removals may cost of what the reader likes at
        the upper bound of :func:`decide_removals`. ``decided``: the self-check's estimates as a
        run recorded them for the same profile, examples and ratings (the check is not run again:
        it is most of a fit's seconds)."""
        if max_loss is not None:
            self.max_loss = max_loss
        weight = doc_freq.vector_weight
        self._weight, self._boost, self._reach = weight, title_boost, reach
        if examples and reach and self.liked and examples.sims:
            low = examples.sims[int(REACH_QUANTILE * (len(examples.sims) - 1))]
            examples.threshold = min(examples.threshold, max(REACH_FLOOR, REACH_RATIO * low))
        self._examples = examples
        docs = prepare(self.disliked).docs
        weighted = [(d, v) for d in docs if (v := example_vector(d, weight, title_boost))]
        self._negatives = [(disliked_reason(d.paper), v) for d, v in weighted]
        self._nearest = None
        liked = self._liked_count()
        self._balance = max(1.0, len(self._negatives) / max(1, liked))
        if liked >= MODEL_MIN and len(self._negatives) >= MODEL_MIN:
            neg_docs = [d for d, _ in weighted]
            if reach:  # the likes are all it has: the word classifier (see words.py)
                self.model = fit_words(*self._latest(examples.docs, neg_docs), doc_freq)
            else:
                self.model = Model.fit(examples, neg_docs, [v for _, v in self._negatives], weight,
                                       title_boost, query_parts)
        if check is not None and not reach:
            self._apply(decided if decided is not None else self._self_check(check, doc_freq, title_boost, query_parts))
        return examples

    def _latest(self, liked: list[Doc], disliked: list[Doc]) -> tuple[list[Doc], list[Doc]]:
        """The WORDS_MAX rated papers rated last (the profile's own examples, never rated, always
        kept) of ``liked`` and ``disliked``: what the word classifier is fitted on."""
        rated = sorted((d for d in (*liked, *disliked) if d.paper.key in self.times),
                       key=lambda d: self.times[d.paper.key], reverse=True)
        keep = {id(d) for d in rated[:WORDS_MAX]}
        return ([d for d in liked if id(d) in keep or d.paper.key not in self.times],
                [d for d in disliked if id(d) in keep or d.paper.key not in self.times])

    def _self_check(self, check: "Check", doc_freq, title_boost: float, query_parts) -> dict[str, "Estimate"]:
        """Decide what the ratings may change from the ratings themselves, held out by time:
        cut into TIME_FOLDS + 1 pieces (a day's ratings never split), each later piece is
        judged by the learner fitted on the pieces before it, as new papers would be. Papers
        the profile selects without its ratings tell what removals would cost (the model's
        rejections at each of QUANTILES); the others what the likes would add (their
        similarity to the likes held out, x the threshold). :func:`decide_additions` and
        :func:`decide_removals` decide: their estimates, by kind (:meth:`_apply` takes them)."""
        rated = sorted([(self.times.get(p.key, ""), p.key, p, 1) for p in self.liked]
                       + [(self.times.get(p.key, ""), p.key, p, 0) for p in self.disliked])
        papers = [r[2] for r in rated]
        docs = prepare(papers).docs
        weight = doc_freq.vector_weight
        plain = check.plain(papers)
        parts = query_parts(papers) if query_parts is not None else [[] for _ in papers]
        vectors = [paper_vector(d, weight, title_boost) for d in docs]
        adds: list[tuple[float, int]] = []
        base = [0, 0]  # liked, all: the rated papers held out that the profile selects itself
        pieces = time_pieces([r[0] for r in rated], TIME_FOLDS + 1)
        before: dict[int, object] = {}  # piece start -> the examples with the likes before it (both checks)
        for start, end in pieces[1:]:
            liked = [r[2] for r in rated[:start] if r[3]]
            if not liked:
                continue
            examples = before[start] = check.examples(liked)
            for i in range(start, end):
                if plain[i]:
                    base[0] += rated[i][3]
                    base[1] += 1
                elif examples and vectors[i]:
                    ratio = cosine(vectors[i], examples.centroid) / examples.threshold
                    if ratio >= 1.0:
                        adds.append((ratio, rated[i][3]))
        added = decide_additions(adds, *base)
        if self.model is None:  # the guarded rule decides until the model can be fitted
            return {"added": added, "removed": Estimate("removed", None, 0, 0, 0, 0,
                                                        rated=(self._liked_count(), len(self._negatives)))}
        # Removals: a paper the model removed was never shown, so never rated, and the ratings
        # made after it began are only what it let through: they alone would say it removes
        # nothing. But the papers of the check sample (:func:`in_check_sample`) are shown even
        # when it removes them, with the reason CHECKED, and the record as sent says which: each
        # such paper stands for itself and the CHECK_SAMPLE - 1 like it that were never shown
        # (it counts CHECK_SAMPLE times), every other rated paper the profile selects for itself.
        # Each later piece is judged by the model fitted on the ratings before it.
        held: list[Held] = []  # each held-out rated paper the profile selects itself, as judged then
        for start, end in pieces[1:]:
            fold = Feedback([r[2] for r in rated[:start] if r[3]], [r[2] for r in rated[:start] if not r[3]])
            examples = before[start] if start in before else check.examples(fold.liked)
            fold.attach(examples, doc_freq, title_boost, False, query_parts)
            if fold.model is None:
                continue
            for i in range(start, end):
                if plain[i] and vectors[i]:
                    p = fold.model.probability(vectors[i], parts[i])
                    agrees = fold.model.agrees(vectors[i])
                    held.append(Held(rated[i][3], CHECK_SAMPLE if rated[i][1] in self.kept else 1,
                                     tuple(agrees and p < fold.model.cut_at(q) for q in QUANTILES)))
        return {"added": added, "removed": decide_removals(held, self.max_loss)}

    def _apply(self, estimates: dict[str, "Estimate"]) -> None:
        """Take what the self-check decided (``estimates``: :meth:`_self_check`'s, or as a run
        recorded them for the same ratings): how far the likes reach beyond the profile's own
        selection, and the model's cut, if the dislikes may remove anything."""
        self.estimates = dict(estimates)
        self.add_floor = estimates["added"].setting
        quantile = estimates["removed"].setting
        self.remove = self.model is None or quantile is not None  # no model: the guarded rule decides
        if self.model is not None and quantile is not None:
            self.model.cut = self.model.cut_at(quantile)

    def _near(self, vector: dict) -> list[tuple[float, str]]:
        """``(similarity, reason)`` of ``vector`` to each disliked paper."""
        if self._nearest is None:
            self._nearest = Nearest([v for _, v in self._negatives])
        return list(zip(self._nearest.dots(vector), (r for r, _ in self._negatives)))

    def _liked_count(self) -> int:
        """The liked papers and the profile's own examples the model would learn from."""
        return len(self._examples.vectors) if self._examples else 0

    def rated_down(self, key: str) -> bool:
        """Whether the reader rated the paper ``key`` down (its latest rating)."""
        return key in self._keys

    def adds(self, ratio: float) -> bool:
        """Whether the likes bring in a paper the profile does not select itself, ``ratio``
        its similarity to them / the threshold (see :func:`decide_additions`)."""
        return self.add_floor is not None and ratio >= self.add_floor

    def checked(self) -> list[str]:
        """What the self-check found, one sentence per kind of change (additions first), for
        ``watcher explain --profile`` and the profile page; for a profile with no other way in,
        which is not checked, what its ratings do instead."""
        if self._reach:
            liked = self._liked_count()
            model = ("its word classifier decides what goes" if isinstance(self.model, WordModel) else
                     f"its word classifier decides what goes once it has {MODEL_MIN} liked and {MODEL_MIN} "
                     f"disliked papers (it has {liked} and {len(self._negatives)}; until then "
                     f"{guarded_rule(query=False)})")
            return [("not checked: a profile without a query or followed authors selects what its likes bring in"
                     if liked else "a profile without a query or followed authors selects nothing until a paper "
                     "is rated up (or given as an example)") + f"; {model}"]
        return [e.text() for _, e in sorted(self.estimates.items())]

    def estimate(self, kind: str) -> str:
        """The sentence that justifies (or refuses) the ratings' ``kind`` of change ("added",
        "removed"); "" when none was estimated."""
        found = self.estimates.get(kind)
        return found.text() if found else ""

    def penalty(self, doc: Doc, scored: list[tuple[float, object]],
                query: Sequence[tuple[float, str]] = (), plain: bool = False) -> tuple[float, str] | None:
        """``(negative score, reason)`` when the ratings put ``doc`` among the disliked papers
        (the model once fitted, else the guarded rule: see the module docstring); ``scored``
        are the score's parts so far, ``query`` the query's among them (none unmatched);
        ``plain``: the profile selects the paper without its ratings (the model then removes
        it only when the self-check allows removals). The
        penalty takes away the paper's score and DISLIKE_SCORE x its similarity to the closest
        disliked paper / the examples' threshold more. None otherwise."""
        if not self._negatives:
            return None
        vector = paper_vector(doc, self._weight, self._boost)
        if not vector:
            return None
        near = None  # the similarity to each disliked paper: only where it decides, or names why
        threshold = self._examples.threshold if self._examples else SIMILAR_ONE
        if doc.paper.key in self._keys:  # the paper rated down itself: its own rating decides
            pass
        elif self.model is not None:
            if plain and not self.remove:
                return None  # removals not justified by the check
            if not self.model.rejects(doc, vector, query):
                return None
            if plain and in_check_sample(doc.paper.key):
                return (0.0, CHECKED)
        else:
            liked = max([cosine(vector, self._examples.centroid),
                         *(cosine(vector, v) for v in self._examples.vectors)]) if self._examples else 0.0
            floor = max(threshold, SIMILAR_ONE)
            near = self._near(vector)
            votes = sum(1 for s, _ in near if s >= floor and s > liked)
            if votes < (QUERY_VOTES if query else 1) * self._balance:
                return None
        if near is None:
            near = self._near(vector)
        closest, reason = max(near, key=lambda x: x[0])
        gained = sum(s for s, _ in scored if s > 0)
        return (-(gained + DISLIKE_SCORE * closest / threshold), reason)


@dataclass(frozen=True)
class Change:
    """A paper the ratings changed: ``added`` to the profile's selection (``match`` is its
    match with the ratings) or removed from it (``match``: its match without them); ``rating``
    is the reason naming the rating that decided it, ``like 2504.07615 (you liked)`` or
    ``unlike 2505.01234 (you disliked)``."""

    match: Match
    added: bool
    rating: str
    estimate: str = ""  # what the profile's ratings held out by time said of this kind of change


@dataclass(frozen=True)
class Check:
    """How a profile is without its ratings, for the self-check: ``plain(papers)`` says for
    each paper whether the profile selects it without its ratings; ``examples(liked)`` are the
    matcher's examples made of ``liked`` and the profile's own examples (None without any)."""

    plain: Callable[[list[Paper]], list[bool]]
    examples: Callable[[list[Paper]], object]


@dataclass(frozen=True)
class Estimate:
    """What the profile's ratings held out by time say of one kind of change (``kind``:
    "added", beyond what the profile selects itself, or "removed", from it): ``setting`` is
    what was decided (additions: the lowest similarity / threshold let in; removals: the
    model's recall quantile), None for no change of this kind; the change would have made
    ``total`` of the held-out rated papers (``liked`` of them liked), of which the profile
    itself selected ``base_total`` (``base_liked`` liked)."""

    kind: str
    setting: float | None
    liked: int
    total: int
    base_liked: int
    base_total: int
    rated: tuple[int, int] | None = None  # (liked, disliked) when too few to fit the model at all
    # removals (decide_removals): the upper bound of their loss (of the cut decided, else of the
    # one nearest to being allowed; None: no cut tried removes a disliked paper and raises
    # precision), the profile's limit, the held-out rated papers it was measured on (and the
    # liked among them), and, when none is allowed, how many more liked papers held out and
    # about how many more ratings the bound needs (None: more would not do)
    bound: float | None = None
    limit: float = MAX_RECALL_LOSS
    ratings: int = 0
    liked_ratings: int = 0
    more: int | None = None
    more_ratings: int | None = None

    def text(self) -> str:
        """One sentence for ``watcher explain`` and the profile page."""
        own = (f"the profile without ratings: {self.base_liked} of {self.base_total} liked"
               if self.base_total else "no rated paper the profile selects itself")
        if self.kind == "added":
            if self.setting is None and not self.total:
                return ("the likes add nothing beyond the profile's own selection: no rated paper held out "
                        "by time would have come in by them alone (too little evidence)")
            share = f"{self.liked} of {self.total} liked"
            if self.setting is None:
                return (f"the likes add nothing beyond the profile's own selection: of the rated papers held "
                        f"out by time that they would have added, {share}, not surely more than "
                        f"the profile's own ({own})")
            return (f"the likes add papers at least {self.setting:.2f} x as similar to them as the threshold: of "
                    f"the rated papers held out by time that they would have added, {share} ({own})")
        counted = f"each paper shown only to check counting {CHECK_SAMPLE}"
        if self.rated is not None:
            return (f"the dislikes remove nothing the profile selects itself by a model yet: it needs {MODEL_MIN} "
                    f"liked and {MODEL_MIN} disliked papers (the profile has {self.rated[0]} and {self.rated[1]}); "
                    f"until then {guarded_rule(query=True)}")
        if self.setting is None and not self.base_total:
            return ("the dislikes remove nothing the profile selects itself: no rated paper it selects could be "
                    f"held out by time (a day's ratings are never split, and the model needs {MODEL_MIN} liked and "
                    f"{MODEL_MIN} disliked papers before the ones it is checked on; too little evidence)")
        limit = f"{percent(self.limit)} of what you like"
        measured = (f"measured on your {self.ratings} held-out ratings ({self.liked_ratings} liked) of papers it "
                    f"selects itself")
        if self.setting is not None:
            return (f"the dislikes remove papers below the model's {self.setting:g} quantile: removing these costs "
                    f"at most {percent(self.bound)} of what you like, with {percent(BOUND_CONFIDENCE)} confidence, "
                    f"{measured} (they would have removed {self.total}, {self.liked} of them liked, {counted}; "
                    f"your limit: {limit})")
        if self.bound is None:
            return (f"the dislikes remove nothing the profile selects itself: on your {self.ratings} held-out "
                    f"ratings no cut tried would remove a paper you rated down without losing as large a share of "
                    f"what you like ({counted}; {own})")
        if self.more is None:
            return (f"the dislikes remove nothing the profile selects itself: the cut that loses least would lose "
                    f"{percent(self.liked / self.base_liked)} of what you like on your held-out ratings, "
                    f"over your limit of {limit}; more ratings would not change that ({measured}, {counted})")
        return (f"the dislikes remove nothing the profile selects itself: removing would cost at most "
                f"{percent(self.bound)} of what you like, with {percent(BOUND_CONFIDENCE)} confidence, {measured}, "
                f"over your limit of {limit}; it needs about {self.more_ratings} more ratings ({self.more} more liked "
                f"papers it selects itself) to show a cut within it ({counted})")


def estimates_data(estimates: dict[str, Estimate]) -> dict:
    """The self-check's ``estimates`` as JSON-able data (:func:`estimates_from` reads it back)."""
    return {kind: dataclasses.asdict(e) for kind, e in estimates.items()}


def estimates_from(data: dict) -> dict[str, Estimate]:
    """The estimates :func:`estimates_data` wrote."""
    return {kind: Estimate(**{**fields, "rated": tuple(fields["rated"]) if fields.get("rated") else None})
            for kind, fields in data.items()}


def percent(share: float) -> str:
    """A share as the sentences say it: ``1.8%``, ``95%``, ``0.5%``."""
    return f"{100 * share:.1f}".removesuffix(".0") + "%"


def time_pieces(times: Sequence[str], n: int) -> list[tuple[int, int]]:
    """``(start, end)`` of ``n`` runs of about equal size of ``times`` (ascending), never
    splitting equal times (fewer runs when they do not allow ``n``)."""
    bounds = [0]
    for k in range(1, n):
        j = round(k * len(times) / n)
        while 0 < j < len(times) and times[j] == times[j - 1]:
            j += 1
        if bounds[-1] < j < len(times):
            bounds.append(j)
    bounds.append(len(times))
    return list(zip(bounds, bounds[1:]))


def in_check_sample(key: str) -> bool:
    """Whether the paper ``key`` is in the check sample: one in CHECK_SAMPLE of the papers (by a
    hash of the key, the same on every run), which the model never removes from what the profile
    selects itself, so that their ratings tell, without the model's own choice in them, what
    its removals would cost."""
    return zlib.crc32(key.encode()) % CHECK_SAMPLE == 0


def wilson_low(hits: int, n: int, z: float = CONFIDENCE_Z) -> float:
    """The Wilson score interval's lower end for ``hits`` of ``n`` (0 when n is 0)."""
    if not n:
        return 0.0
    p = hits / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - margin) / (1 + z * z / n)


def decide_additions(held: Sequence[tuple[float, int]], base_liked: int, base_total: int) -> Estimate:
    """Whether, and from what similarity, the likes bring in papers the profile does not select
    itself. ``held``: ``(similarity / threshold, liked 1 or 0)`` of each rated paper held out by
    time that the likes before it would have brought in; ``base_*``: the held-out rated papers
    the profile selects itself. The likes add papers from the lowest similarity at which the
    held-out papers at least that similar are, at the Wilson lower bound (CONFIDENCE_Z), more
    often liked than the profile's own selection, and are at least ADD_MIN; else nothing."""
    precision = base_liked / base_total if base_total else None
    best, liked = None, 0
    for k, (ratio, y) in enumerate(sorted(held, reverse=True), 1):
        liked += y
        if k >= ADD_MIN and precision is not None and wilson_low(liked, k) > precision:
            best = (ratio, liked, k)
    if best is None:
        return Estimate("added", None, sum(y for _, y in held), len(held), base_liked, base_total)
    return Estimate("added", best[0], best[1], best[2], base_liked, base_total)


def guarded_rule(query: bool) -> str:
    """The guarded rule of the first ratings, as the why-lines say it (the module docstring;
    :meth:`Feedback.penalty` applies it): ``query``, for a profile whose query matches papers."""
    return ("a paper goes only when it is closer to disliked papers than to every liked one"
            + (f" ({QUERY_VOTES} of them for a query match)" if query else ""))


class Held(NamedTuple):
    """One rated paper held out by time that the profile selects itself, as the self-check saw
    it: ``liked`` (1 or 0), ``weight`` (CHECK_SAMPLE for a paper shown only to check, else 1)
    and, for each of QUANTILES, whether the model fitted on the ratings before it removes it."""

    liked: int
    weight: int
    removed: tuple[bool, ...]


def decide_removals(held: Sequence[Held], limit: float = MAX_RECALL_LOSS) -> Estimate:
    """Whether, and at what recall quantile, the model removes papers the profile selects
    itself (``held``: the rated papers held out by time, :class:`Held`; ``limit``: the profile's
    max_recall_loss). The loosest of QUANTILES whose loss — the share of the held-out liked
    papers (weighted) it removes — has its upper bound (:func:`loss_bound` on the liked papers'
    effective number, :func:`effective_size`) within ``limit``, and that removes a set less often
    liked than the whole (precision rises); else none, and the estimate says how many more
    ratings the bound would need (:func:`more_needed`).

    Trying the quantiles loosest first and taking the first whose bound is within the limit
    keeps the confidence: their removals are nested (a looser cut removes all a tighter one
    does), so on the same liked papers the bound grows with the quantile, and a quantile whose
    true loss is over the limit passes only if the tightest such quantile does, which happens at
    most 1 - BOUND_CONFIDENCE of the time."""
    liked_w = [h.weight for h in held if h.liked]
    liked, disliked = sum(liked_w), sum(h.weight for h in held if not h.liked)
    n = effective_size(liked_w)
    counts = dict(ratings=len(held), liked_ratings=len(liked_w), limit=limit)
    near = []  # (more liked papers needed or None, share lost, quantile index, bound) of each cut over the limit
    for k, q in enumerate(QUANTILES):
        lost = sum(h.weight for h in held if h.liked and h.removed[k])
        cut = sum(h.weight for h in held if not h.liked and h.removed[k])
        if not cut or lost * (liked + disliked) >= liked * (lost + cut):
            continue  # removes nothing rated down, or does not raise precision
        share = lost / liked
        bound = loss_bound(share * n, n)
        if bound <= limit:
            return Estimate("removed", q, lost, lost + cut, liked, liked + disliked, bound=bound, **counts)
        near.append((more_needed(liked_w, share, limit), share, k, bound))
    # the cut nearest to being allowed: the one that needs the fewest more ratings, else loses least
    more, _, k, bound = min(near, key=lambda c: (c[0] is None, c[0] or 0, c[1]), default=(None, 0, -1, None))
    lost = sum(h.weight for h in held if h.liked and h.removed[k])
    cut = sum(h.weight for h in held if not h.liked and h.removed[k])
    return Estimate("removed", None, lost, lost + cut, liked, liked + disliked, bound=bound, more=more,
                    more_ratings=ratings_for(more, held), **counts)


def effective_size(weights: Sequence[int]) -> float:
    """Kish's effective sample size of weighted observations, (sum w)^2 / sum w^2: the number
    of unweighted ones that would estimate a share as precisely (a paper counting 10 is not 10
    papers' evidence)."""
    return sum(weights) ** 2 / sum(w * w for w in weights) if weights else 0.0


def loss_bound(lost: float, n: float, confidence: float = BOUND_CONFIDENCE) -> float:
    """The one-sided Clopper–Pearson upper bound of a share seen as ``lost`` of ``n``: the
    ``confidence`` quantile of Beta(lost + 1, n - lost) (1 with nothing seen). Exact for whole
    counts (never below its confidence, however small the share: what a promise needs); for the
    weighted counts of the check, ``n`` is their effective number and ``lost`` the share of it
    (Korn and Graubard's use of the interval for survey estimates)."""
    if n <= 0 or lost >= n:
        return 1.0
    return beta_quantile(confidence, lost + 1.0, n - lost)


def more_needed(weights: Sequence[int], share: float, limit: float) -> int | None:
    """How many more liked papers held out by time (each counting once) the bound of a loss of
    ``share`` needs to come within ``limit`` (None when it never will: ``share`` is not below it)."""
    if share >= limit:
        return None
    total, squares = sum(weights), sum(w * w for w in weights)

    def enough(m: int) -> bool:
        n = (total + m) ** 2 / (squares + m)
        return loss_bound(share * n, n) <= limit

    high = 1
    while not enough(high):
        high *= 2
        if high > 10 ** 9:
            return None
    low = 0
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid + 1, high)
    return low


def ratings_for(liked: int | None, held: Sequence[Held]) -> int | None:
    """About how many more ratings bring ``liked`` more liked papers held out by time: of the
    ratings held out so far, that share were liked papers the profile selects itself, and
    TIME_FOLDS of TIME_FOLDS + 1 pieces are held out."""
    rows = sum(1 for h in held if h.liked)
    if liked is None or not rows:
        return None
    per_rating = rows / len(held) * TIME_FOLDS / (TIME_FOLDS + 1)
    return math.ceil(liked / per_rating)


def beta_quantile(p: float, a: float, b: float) -> float:
    """The ``p`` quantile of the Beta(a, b) distribution (a, b > 0), by bisection on
    :func:`beta_cdf` to 1e-12 (no SciPy: a few hundred evaluations, well under a millisecond)."""
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if beta_cdf(mid, a, b) < p else (low, mid)
    return (low + high) / 2


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function I_x(a, b): Beta(a, b)'s distribution function,
    by its continued fraction (modified Lentz), on the side where it converges fast."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(x, a, b) / a
    return 1.0 - front * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    out = d
    for m in range(1, 400):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            out *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return out


def rating_changes(papers: Sequence[Paper], plain, rated, likes=None) -> list[Change]:
    """What the ratings change among ``papers`` (the rated papers themselves left out): the
    papers the profile's matcher with its ratings (``rated``) selects and the one without them
    (``plain``) does not (added), and those ``likes`` (the matcher with its likes alone; default
    ``plain``) selects and ``rated`` does not (removed); the matchers' own ``score_batch`` and
    ``explain`` decide. Added first, best first."""
    feedback = rated.feedback
    own = {p.key for p in (*feedback.liked, *feedback.disliked)} if feedback else set()
    batch = prepare([p for p in papers if p.key not in own])
    before, after = plain.score_batch(batch), rated.score_batch(batch)
    kept = likes.score_batch(batch) if likes is not None else before
    out = []
    added, removed = (feedback.estimate(k) if feedback else "" for k in ("added", "removed"))
    for i in after.keys() - before.keys():
        out.append(Change(after[i], True, _deciding(after[i].reasons, LIKED), added))
    for i in kept.keys() - after.keys():
        why = rated.explain(batch.docs[i].paper).reasons
        out.append(Change(kept[i], False, _deciding(why, DISLIKED), removed))
    return sorted(out, key=change_order)


def change_order(change: Change) -> tuple:
    """Added first, then best first."""
    return change_rank(change.added, change.match.score, change.match.paper.key)


def change_rank(added: bool, score: float, key: str) -> tuple:
    """:func:`change_order` of a change that ``added`` (or removed) the paper ``key`` at ``score``."""
    return (not added, -score, key)


def _deciding(reasons: list[str], mark: str) -> str:
    """The reason naming the deciding rating (else the last reason: why the paper is out)."""
    return next((r for r in reasons if r.endswith(mark)), reasons[-1] if reasons else "")


class Model:
    """The per-profile logistic regression of the module docstring: weights over standardised
    features, and the probability below which a paper counts as disliked."""

    def __init__(self, liked: "Side", disliked: "Side", use_query: bool):
        self.liked, self.disliked = liked, disliked
        self.use_query = use_query
        self.mean: list[float] = []
        self.scale: list[float] = []
        self.weights: list[float] = []
        self.cut = 0.0
        self.held: list[float] = []  # the liked rows' held-out probabilities, ascending
        self.far = 0.0  # less like the liked papers than this: far out of what the reader keeps

    @classmethod
    def fit(cls, examples, neg_docs: list[Doc], negatives: list[dict], weight, title_boost,
            query_parts) -> "Model":
        """Fitted on the liked ``examples`` and the disliked papers ``neg_docs`` (those with a
        weighted word), whose vectors are ``negatives``, in the same order."""
        pos_docs = examples.docs
        model = cls(Side(examples.vectors), Side(negatives), query_parts is not None)
        scores = (query_parts([d.paper for d in pos_docs + neg_docs]) if query_parts is not None
                  else [[]] * (len(pos_docs) + len(neg_docs)))
        model.use_query = any(scores)
        x, labels = [], []
        for docs, y in ((pos_docs, 1), (neg_docs, 0)):
            for k, d in enumerate(docs):  # a rated paper's own side leaves it out
                vector = paper_vector(d, weight, title_boost)
                x.append(model.features(vector, scores[len(x)], liked_skip=k if y else None,
                                        disliked_skip=None if y else k))
                labels.append(y)
        model.mean = [sum(col) / len(col) for col in zip(*x)]
        model.scale = [math.sqrt(sum((a - m) ** 2 for a in col) / len(col)) or 1.0
                       for col, m in zip(zip(*x), model.mean)]
        z = [model.standard(row) for row in x]
        model.weights = _logistic(z, labels)
        held = _held_out(z, labels, model.weights)
        model.held = sorted(p for p, t in held if t)
        model.cut = (f1_cut(z, labels, held) if NO_QUERY_F1 and query_parts is None
                     else model.cut_at(KEEP_QUANTILE))
        if examples.sims:  # less like the liked papers than the median disliked one, and far less than they are
            near = sorted(cosine(paper_vector(d, weight, title_boost), model.liked.centroid) for d in neg_docs)
            model.far = min(near[len(near) // 2], FAR_RATIO * statistics.median(examples.sims))
        return model

    def features(self, vector: dict, query, liked_skip=None, disliked_skip=None) -> list[float]:
        """The query's score and its part in the title (logarithms), the similarity to the liked
        and to the disliked papers (``*_skip``: that rated paper left out of its side)."""
        title = sum(s for s, r in query if r.startswith("ti:"))
        return ([math.log1p(sum(s for s, _ in query)), math.log1p(title)] if self.use_query else []) + [
            self.liked.similarity(vector, liked_skip), self.disliked.similarity(vector, disliked_skip)]

    def standard(self, row: list[float]) -> list[float]:
        return [(a - m) / s for a, m, s in zip(row, self.mean, self.scale)]

    def probability(self, vector: dict, query) -> float:
        """The model's probability that the reader likes a paper (its vector, its query score)."""
        return _sigmoid(_dot(self.weights, [1.0, *self.standard(self.features(vector, query))]))

    def cut_at(self, quantile: float) -> float:
        """The probability below which the least likely ``quantile`` of the liked rows fall when
        each is held out of the fit, at most MODEL_CEILING (see :func:`recall_cut`)."""
        return _quantile_cut(self.held, quantile)

    def rejects(self, doc: Doc, vector: dict, query) -> bool:
        """Below the cut, and the Rocchio evidence agrees (:meth:`agrees`); ``doc`` is the
        paper whose ``vector`` and ``query`` parts these are."""
        return self.probability(vector, query) < self.cut and self.agrees(vector)

    def agrees(self, vector: dict) -> bool:
        """The Rocchio evidence of MODEL_AGREE: closer to the disliked papers than to the liked
        ones (1), or that or far out of what the reader keeps (2); always with 0."""
        if not MODEL_AGREE:
            return True
        liked = cosine(vector, self.liked.centroid)
        return cosine(vector, self.disliked.centroid) > liked or (MODEL_AGREE == 2 and liked < self.far)


class Side:
    """The rated papers of one side (liked or disliked): a paper's similarity to their sum."""

    def __init__(self, vectors: list[dict]):
        self.vectors = vectors
        self.total = vector_sum(vectors)
        self.norm2 = sum(w * w for w in self.total.values())
        self.centroid = top_words(self.total, CENTROID_WORDS)

    def similarity(self, vector: dict, skip: int | None = None) -> float:
        """Cosine of a unit vector with the side's sum; ``skip``: leave that rated paper out
        (fitting on the rated papers themselves), from dot products alone."""
        dot, norm2 = cosine(vector, self.total), self.norm2
        if skip is not None:
            mine = self.vectors[skip]
            dot -= cosine(vector, mine)
            norm2 += sum(w * w for w in mine.values()) - 2 * cosine(mine, self.total)
        return dot / math.sqrt(norm2) if norm2 > 1e-12 else 0.0


def fit_words(liked: list[Doc], disliked: list[Doc], doc_freq) -> WordModel | None:
    """The word classifier of the rated papers (:mod:`watcher.matching.words`), its ``cut`` the
    score with the best F1 on the rated papers held out (as :func:`f1_cut`)."""
    counted = [terms(d, doc_freq) for d in (*liked, *disliked)]
    labels = [1] * len(liked) + [0] * len(disliked)
    model = WordModel.fit(counted, labels, doc_freq)
    if model is not None:
        model.cut = f1_cut(None, None, held_out(counted, labels, doc_freq))
    return model


def recall_cut(x: list[list[float]], y: list[int]) -> float:
    """The probability below which the model calls a paper disliked: what the least likely
    KEEP_QUANTILE of the liked rows get when each is held out of the fit, at most MODEL_CEILING."""
    return _quantile_cut(sorted(p for p, t in _held_out(x, y) if t), KEEP_QUANTILE)


def _quantile_cut(probs: list[float], quantile: float) -> float:
    """``probs`` (ascending) at ``quantile``, at most MODEL_CEILING; 0 without any."""
    return min(MODEL_CEILING, probs[int(quantile * (len(probs) - 1))]) if probs else 0.0


def f1_cut(x: list[list[float]], y: list[int], held=None) -> float:
    """The probability below which the model calls a paper disliked when it is the profile's
    only filter (no query): the one that gives the best F1 on the rated rows held out
    (``held``: those rows' :func:`_held_out`, when the caller has them)."""
    rows = sorted(held if held is not None else _held_out(x, y), reverse=True)
    total = sum(t for _, t in rows)
    best, cut, hit = -1.0, 0.0, 0
    for k, (p, t) in enumerate(rows, 1):  # keep the k most likely
        hit += t
        f1 = 2 * hit / (k + total) if total else 0.0
        if f1 > best:
            best, cut = f1, p
    return cut


def _held_out(x: list[list[float]], y: list[int], start: list[float] | None = None) -> list[float]:
    """``(probability, label)`` of each row under a model fitted without its fold (FOLDS
    folds, every FOLDS-th row): how a new paper would fare. ``start``: the weights fitted on
    all rows, where each fold's fit starts (it ends where it would from zero, in fewer steps)."""
    out = []
    for k in range(FOLDS):
        train = [i for i in range(len(y)) if i % FOLDS != k]
        if not any(y[i] for i in train) or all(y[i] for i in train):
            continue
        w = _logistic([x[i] for i in train], [y[i] for i in train], start=start)
        out += [(_sigmoid(_dot(w, [1.0, *x[i]])), y[i]) for i in range(k, len(y), FOLDS)]
    return out


def _logistic(x: list[list[float]], y: list[int], steps: int = 25, start: list[float] | None = None) -> list[float]:
    """Weights (intercept first) of an L2-penalised logistic regression with balanced classes,
    by Newton's method (a handful of features: the Hessian is tiny), from ``start`` (else 0)."""
    n = len(x[0]) + 1
    pos = sum(y)
    neg = len(y) - pos
    cw = {1: len(y) / (2.0 * pos), 0: len(y) / (2.0 * neg)}
    w = list(start) if start is not None else [0.0] * n
    rows = [[1.0, *r] for r in x]
    for _ in range(steps):
        take_turn()  # beside a server's pages: they go first (util.turns)
        grad = [RIDGE * w[k] if k else 0.0 for k in range(n)]
        hess = [[(RIDGE if i == j and i else 0.0) for j in range(n)] for i in range(n)]
        for r, t in zip(rows, y):
            p = _sigmoid(_dot(w, r))
            c = cw[t]
            g = c * (p - t)
            h = c * p * (1 - p)
            for i in range(n):
                grad[i] += g * r[i]
                for j in range(n):
                    hess[i][j] += h * r[i] * r[j]
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step)]
        if max(abs(s) for s in step) < 1e-8:
            break
    return w


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """``a^-1 b`` by Gaussian elimination with partial pivoting (a small, positive definite a)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-12:
            m[c][c] = 1e-12
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def _sigmoid(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))


def _dot(a, b) -> float:
    return sum(x * y for x, y in zip(a, b))


__all__ = ["Feedback", "Model", "Change", "Check", "Estimate", "decide_additions", "decide_removals", "time_pieces", "rating_changes", "change_order", "change_rank", "liked_reason", "disliked_reason", "label"]
