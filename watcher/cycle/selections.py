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

import dataclasses
import hashlib
import json
import logging
from datetime import date, datetime
from pathlib import PurePath
from typing import Callable, Iterator

from ..errors import WatcherError
from ..matching.compile import compile_profile, made_from, profile_inputs
from ..matching.index import prepare
from ..services.search import fts_expression
from ..store import stamp

log = logging.getLogger("watcher")

CHART_DAYS = 30  # the profile page's chart: the filing days recorded per profile
STEP = 500  # papers read and scored at once: memory stays bounded whatever a window holds
# (a step costs ~0.1 s of CPU at 300,000 papers); each day is kept as soon as it is read
# what of a profile's config decides nothing it selects: where its config file is (the example
# files are read into the examples), its title, its digests' cap, its Zotero library's place
# (its items are among the examples) and where Save goes
NOT_DECIDING = frozenset({"base_dir", "title", "max_papers", "zotero", "save_to_zotero"})
RECORD_VERSION = 1  # part of every fingerprint: a change to how profiles score papers counts again


def narrowing(matcher) -> str | None:
    """An FTS5 expression matching at least every paper ``matcher`` can select: its query's
    (:func:`watcher.services.search.fts_expression`, as a search narrows), when nothing else can bring
    a paper in. None (every paper of a window is scored) for a matcher without a query, with
    authors it follows, or with examples or liked papers (similarity reaches any paper)."""
    if matcher.query is None or matcher.authors or matcher.sees_every_paper():
        return None
    return fts_expression(matcher.query.root)


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


def _plain(value):
    """``value`` as JSON-able data, the same in every process (sets sorted, dataclasses by field)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return sorted([str(k), _plain(v)] for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (PurePath, date, datetime)):
        return str(value)
    return repr(value)


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


def fingerprint(made_from: tuple) -> str:
    """:func:`decided_by` of a matcher fitted from ``made_from``
    (:func:`~watcher.matching.compile.made_from`), without fitting it."""
    profile, examples, learned = made_from
    config = {k: v for k, v in _plain(profile).items() if k not in NOT_DECIDING}
    text = json.dumps([RECORD_VERSION, config, _plain(examples), _plain(learned)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


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


def counted_again(store, day: date, records: list, matchers: list, pause=None) -> list[list[str]]:
    """Each matcher's selection of ``day``'s papers now, from its record over the day's papers
    as they were (``records``, all of the same signature; each made by that matcher): the keys
    it kept that are still filed that day and unchanged, and those it selects of the papers
    stored or changed since (one read, shared by every matcher), scored as a whole day's
    would be. Exact because a matcher judges each paper by itself (its query, authors,
    examples' centroid, ratings and ``min_score``; no cap or ranking within a day)."""
    _, after_row, since = records[0].signature
    rescored: set[str] = set()
    chosen: list[set[str]] = [set() for _ in matchers]
    for chunk in store.changed_papers(day, after_row, since, STEP):
        if pause is not None:
            pause()
        batch = prepare([p for p, _, _, _ in chunk], [words for _, words, _, _ in chunk])
        rescored.update(p.key for p, _, _, _ in chunk)
        for k, matcher in enumerate(matchers):
            chosen[k].update(chunk[i][0].key for i in matcher.score_batch(batch))
    kept = [set(r.papers) - rescored for r in records]
    there = store.filed_on(day, sorted(set().union(*kept)))
    return [sorted((old & there) | new) for old, new in zip(kept, chosen)]


def bring_up_to_date(store, name: str, matcher, start: date, end: date,
                     write: Callable[[list[tuple[date, str, tuple, list[str]]]], None],
                     stop: Callable[[], bool] = lambda: False, pause: Callable[[], None] | None = None) -> int:
    """Count the outdated days (:func:`outdated_days`) of profile ``name`` with ``matcher`` and
    hand each to ``write([(day, fingerprint, signature, selected keys)])`` as soon as it is
    counted (``stop()`` is asked between them; ``pause()``, when given, before each step of
    papers is scored: :func:`by_day`); returns the days counted. A day the same
    matcher recorded before papers were added to it scores only those (:func:`plan`)."""
    decided = decided_by(matcher)
    whole, added = plan(store.selections(name, start, end), store.day_signatures(start, end), decided)
    done = 0
    for day, (sig, record) in added.items():
        [keys] = counted_again(store, day, [record], [matcher], pause)
        write([(day, decided, sig, keys)])
        done += 1
        if stop():
            return done
    for day, matches in by_day(store, matcher, whole, pause=pause):
        write([(day, decided, whole[day], [m.paper.key for m in matches])])
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
    ``last_changed`` of the papers it stored. The profiles that score every paper (examples,
    ratings, followed authors: :func:`narrowing` is None) and lack the same whole days share
    one read of those days' papers, and those whose record of a day has the same signature
    one read of what was added to it. A profile that cannot be compiled (an example file
    gone) is logged and left as recorded. ``every_day``: the days lacking a record are counted
    too, whoever stored their papers (a database from before the record). Returns the days
    counted per profile."""
    start, end = store.recent_days(CHART_DAYS)
    signatures = store.day_signatures(start, end)
    touched = None if every_day else stamp(now)
    counted: dict[str, int] = {}
    shared: dict[tuple, list] = {}  # the whole days lacking -> the profiles scoring every paper that lack them
    grown: dict[tuple, list] = {}  # (day, its record's signature) -> (profile, matcher, record) of each
    for name in config.profiles:
        if stop():
            return counted
        try:
            matcher = compile_profile(config, name, store)
        except WatcherError as e:
            log.warning("profile %s: its record of matches per day is left as it was: %s", name, e)
            continue
        whole, added = plan(store.selections(name, start, end), signatures, decided_by(matcher), touched)
        counted[name] = len(whole) + len(added)
        for day, (sig, record) in added.items():
            grown.setdefault((day, tuple(sig), tuple(record.signature)), []).append((name, matcher, record))
        if whole and narrowing(matcher) is None:
            shared.setdefault(tuple(sorted(whole.items())), []).append((name, matcher))
        elif whole:
            decided = decided_by(matcher)
            for day, matches in by_day(store, matcher, whole):
                store.record_selections(name, [(day, decided, whole[day], [m.paper.key for m in matches])],
                                        now, before=start)
                if stop():
                    return counted
    for (day, sig, _), group in grown.items():
        for (name, matcher, _), keys in zip(group, counted_again(store, day, [r for _, _, r in group],
                                                                 [m for _, m, _ in group])):
            store.record_selections(name, [(day, decided_by(matcher), sig, keys)], now, before=start)
        if stop():
            return counted
    for whole, group in shared.items():
        whole = dict(whole)
        for day, found in _by_day_all(store, [m for _, m in group], whole, None):
            for (name, matcher), matches in zip(group, found):
                store.record_selections(name, [(day, decided_by(matcher), whole[day], [m.paper.key for m in matches])],
                                        now, before=start)
            if stop():
                return counted
    if not stop():
        store.forget_selections(list(config.profiles))
    if any(counted.values()):
        log.debug("recorded what the profiles select: %s", ", ".join(
            f"{name} {n} day{'s' if n != 1 else ''}" for name, n in counted.items() if n))
    return counted
