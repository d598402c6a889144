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


def by_day(store, matcher, todo: dict[date, tuple]) -> Iterator[tuple[date, list]]:
    """``(day, its matches)`` for each filing day of ``todo`` (day -> its signature,
    :meth:`~watcher.store.Store.day_signatures`), each as soon as the papers read have passed
    the day's last row: one read of the days' window, STEP papers scored at a time, only the
    candidates its query's terms find in the full-text index (:func:`narrowing`), else every
    paper of those days; the matcher decides, as for a digest. A caller keeping each day as it
    comes keeps what it finished when it is stopped."""
    for day, [matches] in _by_day_all(store, [matcher], todo, narrowing(matcher)):
        yield day, matches


def _by_day_all(store, matchers: list, todo: dict[date, tuple], narrow: str | None):
    """:func:`by_day` for several matchers over one read of the days' papers (``narrow``: the
    FTS5 expression every one of them is narrowed by, or None): ``(day, [matches of each])``."""
    if not todo:
        return
    pending: dict[date, list] = {day: [[] for _ in matchers] for day in todo}
    for chunk in store.window_papers(min(todo), max(todo), STEP, narrow):
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


def bring_up_to_date(store, name: str, matcher, start: date, end: date,
                     write: Callable[[list[tuple[date, str, tuple, list[str]]]], None],
                     stop: Callable[[], bool] = lambda: False) -> int:
    """Count the outdated days (:func:`outdated_days`) of profile ``name`` with ``matcher`` and
    hand each to ``write([(day, fingerprint, signature, selected keys)])`` as soon as it is
    counted (``stop()`` is asked between them); returns the days counted."""
    decided = decided_by(matcher)
    todo = outdated_days(store, name, matcher, start, end)
    done = 0
    for day, matches in by_day(store, matcher, todo):
        write([(day, decided, todo[day], [m.paper.key for m in matches])])
        done += 1
        if stop():
            break
    return done


def record_cycle(config, store, now: datetime, stop: Callable[[], bool] = lambda: False) -> dict[str, int]:
    """The cycle's record: every profile's selection of the last :data:`CHART_DAYS` filing days
    brought up to date in ``store`` (the profile compiled as the digests compile it), the rows
    of days past that window and of profiles gone from the config dropped. The profiles that
    score every paper (examples, ratings, followed authors: :func:`narrowing` is None) and lack
    the same days share one read of those days' papers (after the first run of this version,
    every profile lacks all 30 days; after a run that stored a day, all lack that day). A
    profile that cannot be compiled (an example file gone) is logged and left as recorded.
    Returns the days counted per profile."""
    start, end = store.recent_days(CHART_DAYS)
    counted: dict[str, int] = {}
    shared: dict[tuple, list] = {}  # the days lacking -> the profiles scoring every paper that lack them
    for name in config.profiles:
        if stop():
            return counted
        try:
            matcher = compile_profile(config, name, store)
        except WatcherError as e:
            log.warning("profile %s: its record of matches per day is left as it was: %s", name, e)
            continue
        todo = outdated_days(store, name, matcher, start, end)
        counted[name] = len(todo)
        if todo and narrowing(matcher) is None:
            shared.setdefault(tuple(sorted(todo.items())), []).append((name, matcher))
        elif todo:
            bring_up_to_date(store, name, matcher, start, end,
                             lambda rows, name=name: store.record_selections(name, rows, now, before=start), stop)
    for todo, group in shared.items():
        todo = dict(todo)
        for day, found in _by_day_all(store, [m for _, m in group], todo, None):
            for (name, matcher), matches in zip(group, found):
                store.record_selections(name, [(day, decided_by(matcher), todo[day], [m.paper.key for m in matches])],
                                        now, before=start)
            if stop():
                return counted
    if not stop():
        store.forget_selections(list(config.profiles))
    if any(counted.values()):
        log.debug("recorded what the profiles select: %s", ", ".join(
            f"{name} {n} day{'s' if n != 1 else ''}" for name, n in counted.items() if n))
    return counted
