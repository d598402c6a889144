"""Which profiles a batch of papers can match: an index from query terms to profiles, as
percolators do (pure, no I/O).

Matching profile by profile evaluates every profile against the batch, so a thousand profiles
cost a thousand evaluations even when a day's papers concern a few of them. The percolator turns
this around. For each profile it picks *anchor* terms, a set such that every paper the profile
can select holds at least one of them:

* a term anchors itself; an OR needs the anchors of each of its items; an AND needs those of
  one positive item (the rarest, by the word-rarity table); a NOT anchors nothing, and neither
  does a query that can match without any term (``NOT ti:survey``);
* a followed author anchors the profile by that author.

It then keeps an inverted index ``anchor -> profiles``. For a batch, each distinct anchor is
looked up once in the batch's own index (:class:`~watcher.matching.index.Batch`), whatever the number of
profiles sharing it; a profile none of whose anchors occurs is not evaluated at all, and the
others are evaluated only on the papers holding one of their anchors. Profiles without anchors
(a purely negative query, or examples, whose similarity reaches papers without any query term)
are evaluated on the whole batch, as before.

The result is the same as evaluating every profile on the whole batch (the test compares both on
the corpus): the anchors only decide where to look, never what matches or how it scores.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

from .index import Batch
from ..models import Match
from .query import Not, Or, Term

CATEGORY_SHARE = 0.3  # the share of papers a cat: term is guessed to match (no table for them)

_ANYWHERE = None  # no anchor set: the profile is evaluated on the whole batch


def anchors(node, rarity) -> list[Term] | None:
    """Terms of which every paper matching the query tree ``node`` holds at least one, or None
    when ``node`` can match a paper holding none of its terms. ``rarity(term)`` estimates the
    share of papers a term matches; an AND is anchored by its rarest positive item."""
    if isinstance(node, Term):
        return [node]
    if isinstance(node, Not):
        return _ANYWHERE
    if isinstance(node, Or):
        out: list[Term] = []
        for item in node.items:
            found = anchors(item, rarity)
            if found is _ANYWHERE:
                return _ANYWHERE
            out += [t for t in found if t not in out]
        return out
    options = [found for item in node.items if not isinstance(item, Not)
               if (found := anchors(item, rarity)) is not _ANYWHERE]
    if not options:
        return _ANYWHERE
    return min(options, key=lambda terms: sum(map(rarity, terms)))


def profile_anchors(matcher) -> list[Term] | None:
    """The anchors of a :class:`~watcher.matching.match.ProfileMatcher`: its query's and its followed
    authors', or None when it must see every paper (no query anchor, or examples)."""
    if matcher.sees_every_paper() or (matcher.query is None and not matcher.authors):
        return _ANYWHERE
    found: list[Term] = []
    if matcher.query is not None:
        anchored = anchors(matcher.query.root, lambda term: _rarity(term, matcher))
        if anchored is _ANYWHERE or anchored is None:
            return _ANYWHERE
        found = anchored
    return found + [Term("au", (key[0],), name, 0, name=key) for name, key in matcher.authors]


def _rarity(term: Term, matcher) -> float:
    """The share of papers ``term`` is expected to match, from its idf (``ln(1 + N/(df+1))``)."""
    if term.field in ("cat", "jr"):
        return CATEGORY_SHARE
    if term.field in ("cites", "by"):  # the papers an openalex source brought
        return CATEGORY_SHARE
    if term.field == "doi":
        return 0.0 if not term.words[0].endswith("*") else CATEGORY_SHARE  # one paper
    idf = matcher.weights.get(term)
    if idf is None:
        idf = matcher.doc_freq.phrase_idf(term.words)
    return 1.0 / math.expm1(idf)


class Percolator:
    """The inverted index ``anchor term -> profiles`` over ``matchers``; :meth:`match` gives
    what each matcher's ``score_batch`` gives, evaluating only where an anchor occurs."""

    def __init__(self, matchers: Sequence):
        self.matchers = list(matchers)
        self.terms: dict[tuple, Term] = {}
        self.profiles: dict[tuple, list[int]] = defaultdict(list)
        self.everywhere: list[int] = []
        for k, matcher in enumerate(self.matchers):
            found = profile_anchors(matcher)
            if found is _ANYWHERE:
                self.everywhere.append(k)
                continue
            for key in dict.fromkeys((t.field, t.words, t.name) for t in found):
                self.profiles[key].append(k)
            for term in found:
                self.terms.setdefault((term.field, term.words, term.name), term)

    def candidates(self, batch: Batch) -> dict[int, set[int] | None]:
        """For each matcher (by position) that can select a paper of ``batch``: the papers
        holding one of its anchors, or None for a matcher that sees every paper. Matchers
        absent from the answer select nothing in this batch."""
        out: dict[int, set[int] | None] = dict.fromkeys(self.everywhere)
        for key, term in self.terms.items():
            found = batch.matching(term)  # once per distinct term, however many profiles use it
            if not found:
                continue
            for k in self.profiles[key]:
                papers = out.get(k)
                if papers is None:
                    out[k] = set(found)
                else:
                    papers |= found
        return out

    def match(self, batch: Batch) -> list[dict[int, Match]]:
        """Per matcher (in order), its matches in ``batch`` by position, as
        ``matcher.score_batch(batch)`` returns them."""
        out: list[dict[int, Match]] = [{} for _ in self.matchers]
        for k, papers in self.candidates(batch).items():
            out[k] = self.matchers[k].score_batch(batch, papers)
        return out
