"""Matching papers against profiles (interim: plain terms and phrases; replaced by the full matcher)."""

from __future__ import annotations

import re

from .models import Match, Paper
from .query import parse_query


class ProfileMatcher:
    """Scores papers for one profile."""

    def __init__(self, profile, example_papers=()):
        self.profile = profile
        self.groups = parse_query(profile.query) if profile.query else []

    def explain(self, paper: Paper) -> Match:
        """Score and reasons, also for a paper that does not match."""
        text = f"{paper.title} {paper.abstract}".lower()
        reasons, score = [], 0.0
        for group in self.groups:
            if all(re.search(rf"\b{re.escape(t)}\b", text) for t in group):
                reasons += [f'all: "{t}"' for t in group]
                score += len(group)
        return Match(paper, score, reasons, self.profile.name)

    def score(self, paper: Paper) -> Match | None:
        """The match, or None when the paper does not match."""
        m = self.explain(paper)
        return m if m.score > 0 and m.score >= self.profile.min_score else None


def select(papers, matchers, now=None) -> list[Match]:
    """Each paper once under its best profile, best first, ``max_papers`` per profile."""
    best: dict[str, Match] = {}
    for paper in papers:
        for matcher in matchers:
            m = matcher.score(paper)
            if m and (paper.key not in best or m.score > best[paper.key].score):
                best[paper.key] = m
    out, per = [], {}
    for m in sorted(best.values(), key=lambda m: -m.score):
        limit = next(x.profile.max_papers for x in matchers if x.profile.name == m.profile)
        if per.get(m.profile, 0) < limit:
            per[m.profile] = per.get(m.profile, 0) + 1
            out.append(m)
    return out
