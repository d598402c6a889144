"""Ratings and the reading list (docs/ratings.md): the data, and the one function that changes them.

A rating is per profile and paper: ``up`` or ``down``, with when and from where (``cli``,
``link``, ``web``). A later rating replaces an earlier one; ``clear`` removes it. ``save`` puts
a paper on the global reading list, ``unsave`` takes it off. Ratings are keyed by the profile's
*name*: a profile edit keeps them, and the ratings of a profile that no longer exists are kept
(``watcher check`` lists them) until a profile of that name comes back.

:func:`apply_rating` is the only writer: ``watcher rate``, the signed links of digests
(``POST /r/{token}``) and the web inbox's buttons all call it, so all three do exactly the same.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import RatingError
from ..formats.text import one_line
from ..util.text import shorten

if TYPE_CHECKING:  # the store (sqlite-utils) is imported when used: `watcher --help` stays quick
    from ..models import Paper
    from ..store import Store
    from ..store.records import RatingRow

ACTIONS = ("up", "down", "save", "unsave", "clear")
PROFILE_ACTIONS = ("up", "down", "clear")  # the ones that belong to a profile
SOURCES = ("cli", "link", "web", "benchmark")


NOTHING_TO_UNDO = {"unsave": "was not on the reading list", "clear": "had no rating"}


@dataclass(frozen=True)
class Applied:
    """What :func:`apply_rating` did, for a one-line confirmation."""

    action: str
    paper: Paper
    profile: str | None
    changed: bool  # False when it was so already (rating twice is one rating)

    def __str__(self) -> str:
        what = {"up": "rated up", "down": "rated down", "clear": "rating cleared",
                "save": "saved", "unsave": "removed from the reading list"}[self.action]
        where = f" for {self.profile}" if self.profile else ""
        same = "" if self.changed else " (already so)"
        if not self.changed and self.action in NOTHING_TO_UNDO:
            what, same = NOTHING_TO_UNDO[self.action], ""
        return f"{label(self.paper)}: {what}{where}{same}"


def label(paper: Paper) -> str:
    """How a paper is named in messages and reasons: its arXiv id, else its title (on one line)."""
    return paper.arxiv_id or one_line(paper.title)


def find_paper(store: Store, paper: str) -> Paper:
    """The stored paper named by ``paper`` (a key, an arXiv id with or without version, or a
    title), or a RatingError."""
    found = store.get(paper) or store.find(paper)
    if found is None:
        offered = suggestions(store, paper)  # a fragment of a title: the papers it may mean
        raise RatingError(f"unknown paper {paper!r}: " + (f"no stored paper has this id or whole title{offered}"
                                                          if offered else "not in the database"))
    return found


def suggestions(store: Store, text: str) -> str:
    """``; did you mean: ID (title), …?`` for the stored papers whose title holds the words of
    ``text`` (a fragment of a title), or "" when none does. Each names what can be given back
    as it is: the arXiv id, else the DOI, else ``pmid:…``, else the whole title."""
    found = store.suggest(text)
    if not found:
        return ""

    def named(p) -> str:
        ident = p.arxiv_id or p.doi or (f"pmid:{p.pmid}" if p.pmid else None)
        return f"{ident} ({shorten(p.title, 60)})" if ident else repr(" ".join(p.title.split()))

    return "; did you mean: " + ", ".join(named(p) for p in found) + "?"


def apply_rating(store: Store, action: str, profile: str | None, paper: str, source: str, *,
                 profiles: Collection[str], now: datetime | None = None) -> Applied:
    """Record ``action`` on ``paper`` for ``profile`` (None for ``save``/``unsave``), from
    ``source``. ``profiles`` are the configured profile names: a rating for any other is refused.

    Raises RatingError (nothing recorded) for an unknown action, paper or profile.
    """
    if action not in ACTIONS:
        raise RatingError(f"unknown action {action!r} (one of {', '.join(ACTIONS)})")
    if action in PROFILE_ACTIONS:
        if not profile:
            raise RatingError(f"{action} needs a profile")
        if profile not in profiles:
            raise RatingError(f"unknown profile {profile!r}"
                              + (f" (profiles: {', '.join(profiles)})" if profiles else ""))
    from ..store import iso, now_utc

    found = find_paper(store, paper)
    changed = store.record_rating(action, profile, found.key, iso(now or now_utc()), source)
    return Applied(action, found, profile if action in PROFILE_ACTIONS else None, changed)


def ratings(store: Store, profile: str | None = None) -> list[RatingRow]:
    """Every rating (of ``profile``, or all), oldest first (the arXiv id and title None for a
    paper no longer stored)."""
    return store.rating_rows(profile)


def owners(config, store: Store, paper: Paper, matcher=None) -> list[str]:
    """The profiles ``paper`` belongs to (:func:`owners_of` of this one paper)."""
    return owners_of(config, store, [paper], matcher)[paper.key]


# Each delivery of the papers (digest, channel, paper) with the profile(s) its messages recorded
# it under, or one row with NULL where none did (deliveries from before profiles were recorded).
# Indexed all the way: deliveries(paper), message_papers(paper), messages by id.
def owners_of(config, store: Store, papers: Collection[Paper], matcher=None) -> dict[str, list[str]]:
    """For each of ``papers`` (by key), the profiles it belongs to, for a rating that does not
    name one: the only profile; else, for a paper a digest delivered, the profiles its messages
    recorded it under (the match's profile, decided when the digest was built: the union over
    every message that showed it), a delivery without one (recorded before profiles were, or
    under a profile no longer configured) counting for its digest's profiles; else the profiles
    whose record of the paper's filing day (the runs' record the profile pages read,
    :meth:`~watcher.store.Store.recorded_owners`) selects it, and for a profile no run recorded
    that day, whether it selects it now, decided for all the remaining papers in one batch through the
    percolator (:mod:`watcher.matching.percolate`), as a digest selects: a profile none of whose anchor
    terms occurs is not evaluated at all. The deliveries of all the papers are one query
    (:meth:`~watcher.store.Store.delivered_under`). ``matcher(name)``: a profile's compiled matcher (default:
    compiled here, learning from the ratings). Each list sorted; empty when none."""
    papers = list({p.key: p for p in papers}.values())
    names = list(config.profiles)
    if len(names) <= 1:
        return {p.key: names for p in papers}
    out: dict[str, set[str]] = {p.key: set() for p in papers}
    recorded: dict[tuple[str, str, str], set[str]] = {}
    for key, digest, channel, profile in store.delivered_under(list(out)):
        known = recorded.setdefault((key, digest, channel), set())
        if profile in config.profiles:
            known.add(profile)
    for (key, digest, _), known in recorded.items():
        if known:
            out[key].update(known)
        elif digest in config.digests:
            out[key].update(config.digests[digest].profiles)
    rest = [p for p in papers if not out[p.key]]
    recorded = store.recorded_owners([p.key for p in rest]) if rest else {}
    for p in rest:  # what the runs recorded each profile selecting of the paper's filing day
        out[p.key].update(n for n, selected in recorded.get(p.key, {}).items() if selected and n in config.profiles)
    live = [n for n in names if any(n not in recorded.get(p.key, {}) for p in rest)]
    if live:
        from ..matching.index import prepare
        from ..matching.percolate import Percolator

        if matcher is None:
            from ..matching.compile import compile_profile

            matcher = lambda n: compile_profile(config, n, store)  # noqa: E731
        for name, selected in zip(live, Percolator([matcher(n) for n in live]).match(prepare(rest))):
            for i in selected:
                if name not in recorded.get(rest[i].key, {}):
                    out[rest[i].key].add(name)
    return {key: sorted(found) for key, found in out.items()}


def current(store: Store, keys: Collection[str]) -> tuple[dict[tuple[str, str], str], set[str]]:
    """The ratings and reading-list state of the papers ``keys`` now:
    ``({(profile, key): "up"|"down"}, {saved keys})`` (what the web inbox's buttons show)."""
    return store.marks_of(list(dict.fromkeys(keys)))


def saved(store: Store) -> list[tuple[Paper, datetime]]:
    """The reading list, oldest first: ``(paper, saved_at)``."""
    return store.saved_papers()


def orphaned(store: Store, profiles: Collection[str]) -> dict[str, int]:
    """Profiles that have ratings but are no longer configured: ``name -> number of ratings``
    (kept, not deleted; a profile of that name takes them up again)."""
    return {name: n for name, n in store.rating_counts().items() if name not in profiles}


def export_saved(items, fmt: str) -> str:
    """The reading list ``[(paper, saved_at)]`` in ``fmt``: text, json, bibtex or markdown
    (also what the web inbox's ``/saved`` and ``/saved.bib`` serve)."""
    import json

    if fmt == "bibtex":
        from ..present.bibtex import write

        return write([p for p, _ in items])
    if fmt == "json":
        from ..store import as_stored

        return json.dumps([dict(p.to_json(), saved_at=as_stored(when)) for p, when in items],
                          ensure_ascii=False, indent=2)
    if fmt == "markdown":  # a card list: the template saved.md
        from ..present.render import environment

        return environment().get_template("saved.md").render(items=items).rstrip("\n")

    lines = []
    for p, when in items:
        authors = ", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else "")
        ident = p.arxiv_id or (f"doi:{p.doi}" if p.doi else f"pmid:{p.pmid}" if p.pmid else "-")
        lines.append(f"{ident}  {one_line(p.title)}  ({authors}; saved {when.date().isoformat()})")
    return "\n".join(lines) if lines else "the reading list is empty"


def orphan_notes(config) -> list[str]:
    """For ``watcher check``: one line per profile that has ratings in the database but is no
    longer in the config (renamed or removed). Nothing when there is no database yet."""
    from pathlib import Path

    from ..store import Store

    db = Path(config.settings.database)
    if not db.exists():
        return []
    with Store.open(db, readonly=True) as store:  # not migrated yet: no ratings, none orphaned
        gone = orphaned(store, config.profiles)
    return [f"{config.path}: ratings of profile {name!r}, which is no longer in the config: {n} "
            f"kept (a profile of that name takes them up again; 'watcher ratings --profile {name}' "
            "lists them)" for name, n in gone.items()]


__all__ = ["owners", "owners_of", "current", "orphan_notes", "export_saved", "ACTIONS", "Applied", "RatingError", "apply_rating", "ratings",
           "saved", "orphaned", "find_paper", "label"]
