"""What each profile selects of each filing day, decided once and recorded (the ``selections``
table, :mod:`watcher.store.selections`): the profile page's "match now" chart and its JSON twin
read the record instead of scoring the papers of its 30 days on every request.

The cycle (:func:`record_cycle`, from :mod:`watcher.cycle.pipeline` after its fetch and deliveries)
brings every profile's record of the last :data:`CHART_DAYS` filing days up to date: a day is
counted again only when its papers changed since (:meth:`~watcher.store.Store.day_signatures`)
or what decides the profile did (:func:`decided_by`: its config, examples and ratings). A web
rating between two cycles changes the matcher: the page then shows the record it has, says
that it predates the change, and brings it up to date beside the page with
:func:`bring_up_to_date`, the same function the cycle runs.

Counting a day reads its papers :data:`STEP` at a time and, when the query alone can bring a
paper in, only the candidates its terms find in the full-text index (:func:`narrowing`)."""

from __future__ import annotations

from dataclasses import dataclass
import logging
from datetime import date, datetime
from typing import Callable, Iterator

from ..errors import WatcherError
from ..matching.compile import (RATED_DAYS, compared_with, compile_profile, made_from, profile_inputs,
                                recorded_check)
from ..matching.fingerprint import fingerprint
from ..matching.index import prepare
from ..matching.learn import Change, change_rank, estimates_data, rating_changes
from ..models import Match
from ..services.search import fts_expression
from ..store import RecordedChange, stamp

log = logging.getLogger("watcher")

CHART_DAYS = RATED_DAYS  # the profile page's chart, and what its ratings changed: the filing days recorded per profile
STEP = 500  # papers read and scored at once: memory stays bounded whatever a window holds
# (a step costs ~0.1 s of CPU at 300,000 papers); each day is kept as soon as it is read


def narrowing(matcher) -> str | None:
    """An FTS5 expression matching at least every paper ``matcher`` can select: its query's
    (:func:`watcher.services.search.fts_expression`, as a search narrows), when nothing else can bring
    a paper in. None (every paper of a window is scored) for a matcher without a query, with
    authors it follows, or with examples or liked papers (similarity reaches any paper)."""
    if matcher.query is None or matcher.authors or matcher.sees_every_paper():
        return None
    return fts_expression(matcher.query.root)


@dataclass(frozen=True)
class Judge:
    """What decides a profile's record of a day: ``rated``, its matcher as the digests compile
    it (what it selects), and ``compared``: what the changes its ratings made are measured
    against (:func:`~watcher.matching.compile.compared_with`; None without ratings)."""

    rated: object
    compared: tuple | None = None

    @property
    def matchers(self) -> list:
        """The matchers that score a day's papers for it: the profile's, then its comparisons."""
        return [m for m in (self.rated, *(self.compared or ())) if m is not None]

    def checked(self) -> list[str]:
        """What the self-check of the profile's ratings found (none without ratings)."""
        return self.rated.feedback.checked() if self.rated.feedback else []

    def narrowing(self) -> str | None:
        """:func:`narrowing` that holds for each of its matchers (None: every paper is scored)."""
        found = {narrowing(m) for m in self.matchers}
        return found.pop() if len(found) == 1 else None

    def decide(self, found: list[dict[str, Match]]) -> tuple[list[str], list[RecordedChange]]:
        """``(selected keys, changes)`` from the matches of each of :attr:`matchers` among some
        papers (key -> match): what the profile selects, and what its ratings changed there
        (:func:`~watcher.matching.learn.rating_changes`, on the papers the matchers disagree
        on: the same rule as ``watcher explain``)."""
        keys = sorted(found[0])
        if self.compared is None:
            return keys, []
        plain, likes = self.compared
        disputed = {k: m.paper for f in found for k, m in f.items() if not all(k in other for other in found)}
        return keys, [recorded(c) for c in rating_changes(list(disputed.values()), plain, self.rated, likes)]


def judge(config, name: str, store, matcher=None) -> Judge:
    """The :class:`Judge` of profile ``name``: ``matcher`` (default: compiled here, as the
    digests compile it) and, when it learnt from ratings, what they are compared with."""
    rated = matcher if matcher is not None else compile_profile(config, name, store)
    return Judge(rated, compared_with(config, name, store, rated))


def record_check(store, name: str, judged: Judge) -> None:
    """Record what the self-check of profile ``name``'s ratings found (:meth:`Judge.checked`)
    and decided (its estimates), unless it is recorded for the same matcher already: a profile
    page reads the first without fitting the learner, a compilation of the same profile,
    examples and ratings the second instead of checking again
    (:func:`~watcher.matching.compile.recorded_check`)."""
    decided = decided_by(judged.rated)
    feedback = judged.rated.feedback
    if feedback and recorded_check(store, name, decided) is None:
        store.record_rating_check(name, decided, judged.checked(), estimates_data(feedback.estimates))


def recorded(change: Change) -> RecordedChange:
    """``change`` as the record keeps it (:func:`changes_of` reads it back)."""
    m = change.match
    return RecordedChange(m.paper.key, change.added, m.score, tuple(m.reasons), change.rating, change.estimate)


def changes_of(store, profile: str, changes, limit: int | None = None) -> list[Change]:
    """The first ``limit`` (default: all) of the recorded ``changes``
    (:class:`~watcher.store.RecordedChange`) in their order (added first, best first), as the
    changes ``watcher explain`` lists, each with its paper as stored now (one gone since is
    left out): only those papers are read."""
    first = sorted(changes, key=lambda c: change_rank(c.added, c.score, c.key))[:limit]
    out = []
    for c in first:
        paper = store.get(c.key)
        if paper is not None:
            out.append(Change(Match(paper, c.score, list(c.reasons), profile), c.added, c.rating, c.estimate))
    return out


def by_day(store, matcher, todo: dict[date, tuple],
           pause: Callable[[], None] | None = None) -> Iterator[tuple[date, list]]:
    """``(day, its matches)`` for each filing day of ``todo`` (day -> its signature,
    :meth:`~watcher.store.Store.day_signatures`), each as soon as the papers read have passed
    the day's last row: one read of the days' window, STEP papers scored at a time, only the
    candidates its query's terms find in the full-text index (:func:`narrowing`), else every
    paper of those days; the matcher decides, as for a digest. A caller keeping each day as it
    comes keeps what it finished when it is stopped. ``pause()``, when given, is called before
    each step is scored (the web's work beside the pages lets the pages go first)."""
    for day, [matches] in _by_day_all(store, [matcher], todo, narrowing(matcher), pause):
        yield day, matches


def judged_by_day(store, judges: list[Judge], todo: dict[date, tuple], pause=None):
    """:func:`by_day` for the :class:`Judge` of each of several profiles, over one read of the
    days' papers (narrowed only when every matcher of every judge is narrowed alike):
    ``(day, [(selected keys, changes) of each judge])``."""
    matchers = [m for j in judges for m in j.matchers]
    narrow = {j.narrowing() for j in judges}
    for day, found in _by_day_all(store, matchers, todo, narrow.pop() if len(narrow) == 1 else None, pause):
        yield day, _decided(judges, [{m.paper.key: m for m in matches} for matches in found])


def _decided(judges: list[Judge], found: list[dict]) -> list[tuple[list[str], list[RecordedChange]]]:
    """Each judge's :meth:`Judge.decide` from ``found``, the matches of every judge's matchers in turn."""
    out, at = [], 0
    for j in judges:
        n = len(j.matchers)
        out.append(j.decide(found[at:at + n]))
        at += n
    return out


def _by_day_all(store, matchers: list, todo: dict[date, tuple], narrow: str | None, pause=None):
    """:func:`by_day` for several matchers over one read of the days' papers (``narrow``: the
    FTS5 expression every one of them is narrowed by, or None): ``(day, [matches of each])``."""
    if not todo:
        return
    pending: dict[date, list] = {day: [[] for _ in matchers] for day in todo}
    for chunk in store.window_papers(min(todo), max(todo), STEP, narrow):
        if pause is not None:
            pause()
        batch = prepare([p for p, _, _, _ in chunk], [words for _, words, _, _ in chunk])
        for k, matcher in enumerate(matchers):
            for i, match in matcher.score_batch(batch).items():
                if chunk[i][2] in pending:
                    pending[chunk[i][2]][k].append(match)
        read = chunk[-1][3]
        for day in [d for d in pending if todo[d][1] <= read]:  # signature[1]: the day's last rowid
            yield day, pending.pop(day)
    yield from pending.items()


def decided_by(matcher) -> str:
    """A fingerprint of what decides ``matcher``'s selection: the profile's config (but
    :data:`NOT_DECIDING`), its example papers (Zotero's too) and what it learnt from its
    ratings, as
    :func:`~watcher.matching.compile.compile_profile` compiled it (the same inputs give the
    same fingerprint in any process). Kept on the matcher."""
    kept = matcher.decided_by
    if kept is None:
        kept = matcher.decided_by = fingerprint(matcher.made_from or (matcher.profile, (), None))
    return kept


def decided_now(config, name: str, store) -> str:
    """:func:`decided_by` of profile ``name`` as :func:`~watcher.matching.compile.compile_profile`
    would compile it now, read without fitting the learner (its config, examples and ratings)."""
    return fingerprint(made_from(*profile_inputs(config, name, store)))


def current(record, decided: str, signature: tuple | None) -> bool:
    """Whether ``record`` (a :class:`~watcher.store.DaySelection` or None) is what the matcher
    fingerprinted ``decided`` selects of its day's papers as they are now (``signature``)."""
    return record is not None and record.decided_by == decided and tuple(record.signature) == tuple(signature or ())


def outdated_days(store, name: str, matcher, start: date, end: date) -> dict[date, tuple]:
    """The filing days from ``start`` to ``end`` whose record for profile ``name`` is missing or
    not what ``matcher`` selects of their papers now: day -> its signature."""
    decided = decided_by(matcher)
    recorded = store.selections(name, start, end)
    return {day: sig for day, sig in store.day_signatures(start, end).items()
            if not current(recorded.get(day), decided, sig)}


def plan(recorded: dict, signatures: dict[date, tuple], decided: str,
         touched: str | None = None) -> tuple[dict[date, tuple], dict[date, tuple]]:
    """What counting brings a profile's record (``recorded``: day -> its
    :class:`~watcher.store.DaySelection`) up to date with the days' papers now (``signatures``)
    and its matcher (fingerprint ``decided``): ``(whole, added)``. ``whole``: day -> signature,
    the days whose every paper is scored: no record, or one another matcher made. ``added``:
    day -> (signature, record), the days the same matcher recorded over fewer papers: only
    the papers stored or changed since are scored (:func:`counted_again`). ``touched``: a
    ``last_changed`` stamp (the cycle's): a day lacking a record is counted only when its
    papers changed from then on (the cycle stored or changed them); the others are left to
    the page (None: every day lacking one is counted)."""
    whole, added = {}, {}
    for day, sig in signatures.items():
        record = recorded.get(day)
        if current(record, decided, sig):
            continue
        if record is not None and record.decided_by == decided and len(record.signature) == 3:
            added[day] = (sig, record)
        elif record is not None or touched is None or str(sig[2]) >= touched:
            whole[day] = sig
    return whole, added


def counted_again(store, day: date, records: list, judges: list[Judge],
                  pause=None) -> list[tuple[list[str], list[RecordedChange]]]:
    """Each judge's record of ``day``'s papers now, ``(selected keys, changes)``, from its
    record over the day's papers as they were (``records``, all of the same signature; each
    made by that judge): the keys it kept and the changes it recorded of papers still filed
    that day and unchanged, and what it decides of the papers stored or changed since (one
    read, shared by every judge), scored as a whole day's would be. Exact because a matcher
    judges each paper by itself (its query, authors, examples' centroid, ratings and
    ``min_score``; no cap or ranking within a day), and so does what the ratings changed."""
    _, after_row, since = records[0].signature
    rescored: set[str] = set()
    matchers = [m for j in judges for m in j.matchers]
    found: list[dict[str, Match]] = [{} for _ in matchers]
    for chunk in store.changed_papers(day, after_row, since, STEP):
        if pause is not None:
            pause()
        batch = prepare([p for p, _, _, _ in chunk], [words for _, words, _, _ in chunk])
        rescored.update(p.key for p, _, _, _ in chunk)
        for k, matcher in enumerate(matchers):
            found[k].update((chunk[i][0].key, m) for i, m in matcher.score_batch(batch).items())
    kept = [set(r.papers) - rescored for r in records]
    kept_changes = [[c for c in r.changes if c.key not in rescored] for r in records]
    there = store.filed_on(day, sorted(set().union(*kept, (c.key for cs in kept_changes for c in cs))))
    return [(sorted((old & there) | set(keys)), [c for c in old_changes if c.key in there] + changes)
            for old, old_changes, (keys, changes) in zip(kept, kept_changes, _decided(judges, found))]


def bring_up_to_date(store, name: str, judged: Judge, start: date, end: date,
                     write: Callable[[list[tuple[date, str, tuple, list[str], list[RecordedChange]]]], None],
                     stop: Callable[[], bool] = lambda: False, pause: Callable[[], None] | None = None) -> int:
    """Count the outdated days (:func:`outdated_days`) of profile ``name`` with its
    :class:`Judge` and hand each to ``write([(day, fingerprint, signature, selected keys,
    changes)])`` as soon as it is counted (``stop()`` is asked between them; ``pause()``, when
    given, before each step of papers is scored: :func:`by_day`); returns the days counted. A
    day the same matcher recorded before papers were added to it scores only those (:func:`plan`)."""
    decided = decided_by(judged.rated)
    whole, added = plan(store.selections(name, start, end), store.day_signatures(start, end), decided)
    done = 0
    for day, (sig, record) in added.items():
        [(keys, changes)] = counted_again(store, day, [record], [judged], pause)
        write([(day, decided, sig, keys, changes)])
        done += 1
        if stop():
            return done
    for day, [(keys, changes)] in judged_by_day(store, [judged], whole, pause=pause):
        write([(day, decided, whole[day], keys, changes)])
        done += 1
        if stop():
            break
    return done


def record_cycle(config, store, now: datetime, stop: Callable[[], bool] = lambda: False,
                 every_day: bool = False) -> dict[str, int]:
    """The cycle's record: what each profile selects of the filing days of the last
    :data:`CHART_DAYS` that the cycle stored or changed papers of, and of the days recorded
    before that are outdated now, in ``store`` (the profile compiled as the digests compile it);
    the rows of days past that window and of profiles gone from the config dropped. What it
    costs follows the cycle's papers, never the window: a day lacking a record whose papers the
    cycle did not touch (every day but the new ones after ``watcher state restore``, whose
    state file leaves the record out) is left to the profile page, which counts the missing
    days beside itself, and to ``watcher site``; a day the same matcher recorded scores only
    its papers stored or changed since (:func:`counted_again`). ``now``: the cycle's time, the
    ``last_changed`` of the papers it stored. Each day's record holds what the profile's
    ratings changed there too (:class:`Judge`: scored with and without them), and what their
    self-check found is recorded per profile (:func:`record_check`). The profiles that
    score every paper (examples, ratings, followed authors: :func:`narrowing` is None) and lack
    the same whole days share one read of those days' papers, and those whose record of a day
    has the same signature one read of what was added to it. A profile that cannot be compiled (an example file
    gone) is logged and left as recorded. ``every_day``: the days lacking a record are counted
    too, whoever stored their papers (a database from before the record). Returns the days
    counted per profile."""
    start, end = store.recent_days(CHART_DAYS)
    signatures = store.day_signatures(start, end)
    touched = None if every_day else stamp(now)
    counted: dict[str, int] = {}
    shared: dict[tuple, list] = {}  # the whole days lacking -> the profiles scoring every paper that lack them
    grown: dict[tuple, list] = {}  # (day, its record's signature) -> (profile, judge, record) of each

    def keep(name: str, judged: Judge, day: date, sig: tuple, decision: tuple) -> None:
        store.record_selections(name, [(day, decided_by(judged.rated), sig, *decision)], now, before=start)

    for name in config.profiles:
        if stop():
            return counted
        try:
            judged = judge(config, name, store)
        except WatcherError as e:
            log.warning("profile %s: its record of matches per day is left as it was: %s", name, e)
            continue
        record_check(store, name, judged)
        whole, added = plan(store.selections(name, start, end), signatures, decided_by(judged.rated), touched)
        counted[name] = len(whole) + len(added)
        for day, (sig, record) in added.items():
            grown.setdefault((day, tuple(sig), tuple(record.signature)), []).append((name, judged, record))
        if whole and judged.narrowing() is None:
            shared.setdefault(tuple(sorted(whole.items())), []).append((name, judged))
        elif whole:
            for day, [decision] in judged_by_day(store, [judged], whole):
                keep(name, judged, day, whole[day], decision)
                if stop():
                    return counted
    for (day, sig, _), group in grown.items():
        for (name, judged, _), decision in zip(group, counted_again(store, day, [r for _, _, r in group],
                                                                    [j for _, j, _ in group])):
            keep(name, judged, day, sig, decision)
        if stop():
            return counted
    for whole, group in shared.items():
        whole = dict(whole)
        for day, decisions in judged_by_day(store, [j for _, j in group], whole):
            for (name, judged), decision in zip(group, decisions):
                keep(name, judged, day, whole[day], decision)
            if stop():
                return counted
    if not stop():
        store.forget_selections(list(config.profiles))
    if any(counted.values()):
        log.debug("recorded what the profiles select: %s", ", ".join(
            f"{name} {n} day{'s' if n != 1 else ''}" for name, n in counted.items() if n))
    return counted
