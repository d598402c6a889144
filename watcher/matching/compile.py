"""One way to compile a profile: its query, its examples and its ratings, into a matcher.

The pipeline (:class:`~watcher.cycle.pipeline.DigestPlan`), ``watcher rate``, ``watcher explain``,
``watcher convert``, and every page of the web inbox (the paper's reasons, the profile's
chart and its query preview, a search within a profile, the rating buttons) compile profiles
here and nowhere else, so that they all score a paper as the digests do:

* ``examples`` resolved to papers (:func:`example_papers`: arXiv ids through the store, files
  read from the config's folder);
* with a store, the profile's ratings as examples and counter-examples (:func:`feedback`);
* the query preview is the same compilation with only the query replaced (``query=``).

:class:`Compiled` keeps the web's matchers between requests, keyed on everything a matcher is
made of: the config object, the database's change counters (:func:`changes`, kept by
triggers: every write to ``papers`` or ``ratings`` adds one, so two states never share a key,
unlike a summary such as a count and the latest time), the example files' sizes and times and
the Zotero library version last read.

Under it, every compilation in the process reuses the last matcher fitted for the same profile
and variant when what it is fitted from is unchanged (:class:`_Fits`): the profile's config,
its example papers and its ratings (the rated papers as stored, when each was rated, which
were shown as the check sample). Storing new papers changes none of these, so a cycle that
only stored papers, and the web after it, reuse the fit instead of refitting the learner.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import replace

from .. import formats
from ..errors import InputError
from ..models import parse_arxiv_id
from ..present.bibtex import read as read_bib
from .fingerprint import fingerprint
from .learn import estimates_from
from .libraries import examples as zotero_examples, read_state
from .match import ProfileMatcher

log = logging.getLogger("watcher")

KEEP = object()  # compile_profile(query=KEEP): the profile's own query


def example_papers(profile, lookup) -> list:
    """Resolve a profile's ``examples`` to papers: a path (relative to the config) is read as a
    listing, or as BibTeX when it ends in ``.bib`` (a stored paper stands in for its entry, as it
    has the abstract); anything else is an arXiv id looked up with ``lookup(id) -> Paper | None``.
    A file that cannot be read is an InputError naming it."""
    papers = []
    for example in profile.examples:
        path = profile.base_dir / example
        ident = parse_arxiv_id(example)
        if ident and not path.exists():
            found = lookup(ident[0])
            if found:
                papers.append(found)
            else:
                log.warning("profile %s: example %s is not known yet", profile.name, example)
            continue
        try:
            if path.suffix.lower() == ".bib":  # papers one likes, e.g. exported from Zotero
                papers.extend(p.arxiv_id and lookup(p.arxiv_id) or p
                              for p in read_bib(path.read_bytes(), str(path)))
            else:
                papers.extend(formats.read(path.read_bytes(), str(path)).papers)
        except OSError as e:
            raise InputError(f"profile {profile.name}: example file {path}: {e.strerror}") from e
    return papers


def feedback(store, profile: str, dislikes: bool = True):
    """The ratings of ``profile`` as the matcher's examples and counter-examples (``dislikes``
    False: the examples only), with when each was made (the learner checks itself on them in
    that order) and which of them were shown only to check the ratings (the model would have
    removed them: the record says so)."""
    from .learn import CHECKED, Feedback

    # the learner orders by the time as stored: the text its fingerprint records with each check
    times = {r.paper: r.rated_text for r in store.rating_rows(profile)}
    liked, disliked = store.rated_papers(profile)
    return Feedback(liked, disliked if dislikes else [], times=times,
                    kept=store.rated_sent_with(profile, CHECKED))


def compile_profile(config, name: str, store=None, *, lookup=None, query=KEEP,
                    ratings: bool = True, dislikes: bool = True) -> ProfileMatcher:
    """The matcher of profile ``name``. Examples are looked up with ``lookup`` (default: the
    store's papers); with a ``store``, the items of its Zotero library are examples too
    (:func:`watcher.matching.libraries.examples`) and, unless ``ratings`` is False, the profile learns
    from its ratings (``dislikes`` False: from its likes alone). ``query`` replaces the
    profile's query (the web's preview of a draft; None or "" for none)."""
    profile, examples, rated = profile_inputs(config, name, store, lookup=lookup, query=query, ratings=ratings,
                                              dislikes=dislikes)
    # one kept fit per profile and variant (the query preview: one, of the last draft)
    slot = (name, ratings, dislikes, query is not KEEP)
    inputs = made_from(profile, examples, rated)
    kept = _fits.get(slot, inputs)
    if kept is not None:
        return kept
    decided, made = _recorded_check(name, store, inputs) if rated and query is KEEP and dislikes else (None, None)
    matcher = ProfileMatcher(profile, examples, feedback=rated, decided=decided)
    matcher.made_from = inputs  # what its recorded selections were decided by (selections)
    matcher.decided_by = made
    _fits.put(slot, inputs, matcher)
    return matcher


def _recorded_check(name: str, store, inputs: tuple) -> tuple:
    """``(estimates, fingerprint)``: what the self-check of profile ``name``'s ratings decided,
    as a run recorded it for a matcher fitted from the same ``inputs`` (:func:`recorded_check`),
    else None, and the fingerprint of ``inputs``. Without a store, ``(None, None)``."""
    if store is None:
        return None, None
    made = fingerprint(inputs)
    kept = recorded_check(store, name, made)
    return (estimates_from(kept[1]) if kept is not None and kept[1] else None), made


def recorded_check(store, name: str, decided: str) -> tuple[list[str], dict] | None:
    """``(sentences, estimates as data)``: what the self-check of profile ``name``'s ratings
    found and decided, as recorded (:func:`watcher.cycle.selections.record_check`) for the
    matcher fingerprinted ``decided``; None when no record is that matcher's."""
    kept = store.rating_check(name)
    return (kept[1], kept[2]) if kept is not None and kept[0] == decided else None


def profile_inputs(config, name: str, store=None, *, lookup=None, query=KEEP, ratings: bool = True,
                   dislikes: bool = True) -> tuple:
    """What :func:`compile_profile` fits profile ``name`` from, read without fitting:
    ``(profile, example papers, ratings as feedback or None)`` (the same arguments)."""
    profile = config.profiles[name]
    if query is not KEEP:
        profile = replace(profile, query=(query or "").strip() or None)
    if lookup is None:
        lookup = store.get if store is not None else (lambda key: None)
    examples = example_papers(profile, lookup)
    if store is not None and profile.zotero is not None:
        examples += zotero_examples(store, profile)
    rated = feedback(store, name, dislikes) if store is not None and ratings else None
    return profile, examples, rated


def made_from(profile, examples, rated) -> tuple:
    """What a matcher is fitted from, comparable (:func:`profile_inputs`' three)."""
    return profile, examples, _learned_from(rated)


def _learned_from(rated) -> tuple | None:
    """What a matcher learns from a profile's ratings (:func:`feedback`), comparable: the
    rated papers as stored (a paper's new version is a new fit), when each was rated and which
    were shown as the check sample."""
    if rated is None:
        return None
    return (rated.liked, rated.disliked, sorted(rated.times.items()), frozenset(rated.kept))


class _Fits:
    """The matchers fitted in this process, the last one per slot (a profile and a variant),
    with what each was fitted from: :func:`compile_profile` gives the kept one back while its
    inputs compare equal, so a pipeline cycle, ``watcher rate`` and the web share one fitted
    matcher, refitted only when the profile, its examples or its ratings changed. ``fitted``
    counts the learner's fits (matchers compiled with ratings) per profile: what the tests
    count. Thread safe."""

    def __init__(self):
        self._kept: dict[tuple, tuple] = {}
        self._lock = threading.Lock()
        self.fitted: Counter = Counter()

    def get(self, slot: tuple, inputs: tuple) -> ProfileMatcher | None:
        with self._lock:
            kept = self._kept.get(slot)
        return kept[1] if kept is not None and kept[0] == inputs else None

    def put(self, slot: tuple, inputs: tuple, matcher: ProfileMatcher) -> None:
        with self._lock:
            self._kept[slot] = (inputs, matcher)
            if matcher.feedback:
                self.fitted[slot[0]] += 1


_fits = _Fits()


def compile_profiles(config, names, store=None, *, lookup=None) -> list[ProfileMatcher]:
    """:func:`compile_profile` for each of ``names``, in order."""
    return [compile_profile(config, n, store, lookup=lookup) for n in names]


def compile_plain(config, name: str, store) -> ProfileMatcher:
    """The matcher of profile ``name`` without its ratings (examples looked up in ``store``):
    what the ratings changed is measured against it."""
    return compile_profile(config, name, store, ratings=False)


def explain_paper(config, name: str, store, paper, matchers=None):
    """How profile ``name`` scores ``paper`` now, as ``watcher explain PAPER`` and a paper's
    page say it: ``(match, selected, without)``. ``without`` is whether the profile compiled
    without its ratings selects the paper, when the ratings changed that (else None).
    ``matchers(ratings)``: the profile's matcher with (True) or without (False) its ratings,
    when the caller keeps them (the web's :class:`Compiled`); default: compiled here."""
    if matchers is None:
        matchers = lambda ratings: (compile_profile(config, name, store) if ratings  # noqa: E731
                                    else compile_plain(config, name, store))
    matcher = matchers(True)
    selected = matcher.score(paper) is not None
    without = None
    if matcher.feedback:  # no ratings, nothing they could have changed
        plain = matchers(False).score(paper) is not None
        without = plain if plain != selected else None
    return matcher.explain(paper), selected, without


RATED_DAYS = 30  # what ratings changed: over the stored papers of this many days


def what_ratings_changed(config, name: str, store, days: int = RATED_DAYS, rated=None):
    """``(first day, last day, changes)``: the papers of the last ``days`` stored days that the
    ratings of profile ``name`` added to or removed from its selection, each with the rating
    that decided it (:func:`watcher.matching.learn.rating_changes`: the profile compiled with and
    without its ratings, here; a run records the same per day with its matches,
    :mod:`watcher.cycle.selections`). ``rated``: the profile's matcher with its ratings, when
    the caller has it."""
    from .learn import change_order, rating_changes

    start, end = store.recent_days(days)
    rated = rated or compile_profile(config, name, store)
    compared = compared_with(config, name, store, rated)
    if compared is None:
        return start, end, []
    return start, end, sorted(rating_changes(store.papers_between(start, end), compared[0], rated, compared[1]),
                              key=change_order)


def compared_with(config, name: str, store, rated) -> tuple | None:
    """What the changes the ratings of profile ``name`` made (``rated``: its matcher with them)
    are measured against: ``(plain, likes)``, the profile compiled without its ratings and, for
    a profile with no query or authors, which selects only by its likes (and examples), with
    its likes alone when it has dislikes: what the dislikes removed is measured against that,
    as against nothing it would be none (else None). None when ``rated`` learnt from no rating."""
    if not rated.feedback:
        return None
    profile = config.profiles[name]
    likes = (compile_profile(config, name, store, dislikes=False)
             if not (profile.query or profile.authors) and rated.feedback.disliked else None)
    return compile_plain(config, name, store), likes


def changes(store) -> tuple[int, int]:
    """The database's change counters ``(papers, ratings)``: each write to a paper or a rating
    adds one (triggers of migration m005), so a matcher compiled at one value saw exactly the
    papers and ratings it would see now."""
    rows = store.change_serials()
    return rows.get("papers", 0), rows.get("ratings", 0)


def _files(profile) -> tuple:
    """What the example files of ``profile`` are now (size, time; None when missing)."""
    out: list[tuple[int, int] | None] = []
    for example in profile.examples:
        try:
            st = (profile.base_dir / example).stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


class Compiled:
    """Compiled matchers kept between requests (the web inbox): per profile, with and without
    its ratings, compiled again when the config, the database's :func:`changes` or an example
    file changed. Thread safe; compiling happens outside the lock, so a slow compilation holds
    up no other page."""

    def __init__(self):
        self._kept: dict[tuple[str, bool], tuple] = {}  # (name, ratings) -> (key, matcher, config)
        self._lock = threading.Lock()

    @staticmethod
    def key(config, name: str, store) -> tuple:
        """What a kept matcher of ``name`` is kept for: the config, the database's
        :func:`changes`, the example files, the Zotero library's state."""
        profile = config.profiles[name]
        return id(config), changes(store), _files(profile), read_state(store, profile)

    def ready(self, config, name: str, store, ratings: bool = True, key: tuple | None = None):
        """The kept matcher of ``name`` when it is what :meth:`matcher` gives now, else None
        (nothing is compiled here)."""
        key = key if key is not None else self.key(config, name, store)
        with self._lock:
            kept = self._kept.get((name, ratings))
        return kept[1] if kept is not None and kept[0] == key and kept[2] is config else None

    def matcher(self, config, name: str, store, ratings: bool = True) -> ProfileMatcher:
        """The matcher :func:`compile_profile` gives now for ``name`` (``ratings`` False:
        :func:`compile_plain`'s, without its ratings)."""
        key = self.key(config, name, store)
        kept = self.ready(config, name, store, ratings, key)
        if kept is not None:
            return kept
        compiled = compile_profile(config, name, store) if ratings else compile_plain(config, name, store)
        with self._lock:
            self._kept[name, ratings] = (key, compiled, config)
        return compiled


__all__ = ["compile_profile", "compile_plain", "compile_profiles", "what_ratings_changed", "compared_with", "recorded_check", "RATED_DAYS", "example_papers", "feedback", "changes",
           "Compiled", "KEEP"]
