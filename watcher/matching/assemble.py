"""What goes into one digest for one channel: pure decisions, no I/O, no clock.

The pipeline hands in the candidate papers (stored, listed as new, in the window, not yet
delivered through this channel) and the profile matchers; :func:`assemble` returns the
:class:`~watcher.models.Digest` to render: the selected papers newest first, revised papers
already delivered, and the reason when it is empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from ..present.counts import NOTHING_ANNOUNCED, NOTHING_MATCHED, SOURCES_FAILED
from .match import prepare, select
from .order import ORDERS, newest_first
from ..models import Digest, Paper


def window_start(now: datetime, lookback: timedelta, tz: ZoneInfo) -> date:
    """The first day a channel's first digest reaches back to: ``lookback`` before now, as a
    local date."""
    return (now - lookback).astimezone(tz).date()


def assemble(name: str, title: str, day: date, candidates: list[Paper], matchers: list,
             now: datetime, revised: Sequence[Paper] = (), *, sources_failed: bool = False,
             older: tuple[int, date, str] | None = None, order: str = "date") -> Digest:
    """The digest of ``candidates`` for ``matchers``: best papers per profile (``max_papers``),
    shown in ``order`` (``date``: newest first; ``score``: best match first); ``revised``
    papers that still match are listed as updated. An empty one says why (see
    :func:`empty_reason`)."""
    matches = select(candidates, matchers, now)
    matches.sort(key=ORDERS[order])
    updated = [m for m in select(list(revised), matchers, now)] if revised else []
    updated.sort(key=newest_first)
    empty = None
    if not matches:
        empty = empty_reason(bool(candidates), sources_failed, older)
    return Digest(name=name, title=title, date=day, matches=matches, updated=updated,
                  empty_reason=empty)


def nothing_since(last: datetime, tz: ZoneInfo, digest: str | None = None, sample: bool = False) -> str:
    """Why a channel that ran before gets nothing now: nothing was stored since ``last``, its
    last delivery (whatever was announced then went out then; not "nothing announced"). With
    ``digest``, that last run sent nothing (no profile took a paper): the papers stored before
    it were matched then and are not again, unless asked (``watcher digest NAME --since``) -
    what a profile just edited needs to be tried on them (``sample``: on the sample database,
    with ``--sample``, as a run without it reads the configured database)."""
    when = f"{last.astimezone(tz):%Y-%m-%d %H:%M}"
    if digest is None:
        return f"nothing new since the last delivery ({when})"
    return (f"nothing stored since the last run ({when}), which matched every paper before it; to "
            f"match those again (a profile just edited): "
            f"'watcher digest {digest}{' --sample' if sample else ''} --since DAY'")


def empty_reason(had_candidates: bool, sources_failed: bool = False,
                 older: tuple[int, date, str] | None = None) -> str:
    """Why a digest has no papers: candidates that matched nothing; else every source failing
    (nothing could arrive); else stored papers left out because they were filed before the
    window (``older``: how many, the window's first day, what set it: "lookback 3d" or
    "--since"); else nothing new was announced."""
    if had_candidates:
        return NOTHING_MATCHED
    if sources_failed:
        return SOURCES_FAILED
    if older and older[0]:
        n, since, why = older
        papers = "paper was" if n == 1 else "papers were"
        return f"nothing filed since {since.isoformat()} ({why}); {n} stored {papers} filed before it"
    return NOTHING_ANNOUNCED


def delivered_reason(delivered: list[Paper], matchers: list, since: date) -> str | None:
    """Why a digest over an explicit window (``--since``) is empty although papers filed in it
    match: they were ``delivered`` already. None when none of them matches."""
    if not delivered:
        return None
    batch = prepare(delivered)
    keys = {delivered[i].key for matcher in matchers for i in matcher.score_batch(batch)}
    if not keys:
        return None
    n = len(keys)
    papers, were = ("paper", "was") if n == 1 else ("papers", "were")
    return f"{n} matching {papers} filed since {since.isoformat()} {were} already delivered"
