"""Schedule decisions (pure): when a digest fires, whether it is due, arXiv's calendar.

Every function here takes the clock as an argument and touches nothing else, so ``watcher run``
(through :class:`DigestTrigger`), ``watcher once --due`` and ``watcher status`` share one answer.

Cron schedules are crontab lines, read as cron reads them: when both the day of month and the
day of week are restricted, a day matches when either does (:func:`crontab_trigger`). They
match *wall-clock* times in ``[watcher].timezone``, like cron itself:

- spring forward: a time that does not exist that day (02:30 in a skipped hour) fires at the
  same instant shifted by the gap (03:30 local), once;
- fall back: a time that occurs twice (02:30 in a repeated hour) fires once, at its first
  occurrence; schedules that fire more often than hourly also fire in the repeated hour.

``every = "6h"`` schedules fire at ``anchor + k * every``; the anchor is the digest's last
successful run (from the database), so a restart does not reset the interval.

``schedule = "arxiv"`` fires at 20:30 America/New_York Sunday to Thursday, half an hour after
arXiv's 20:00 announcement (there is none Friday or Saturday). On the days in
:data:`ARXIV_HOLIDAYS` arXiv announces nothing; the digest still fires, and when it finds
nothing it says so (:func:`quiet_day_reason`) instead of staying silent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger

UTC = timezone.utc
NEW_YORK = ZoneInfo("America/New_York")
ARXIV_CRON = "30 20 * * sun-thu"  # in America/New_York: 30 minutes after the announcement
ARXIV_ANNOUNCE_HOUR = 20  # arXiv announces at 20:00 America/New_York, Sunday to Thursday

# Days arXiv announced it would not announce (its "deferred mailings"), from
# https://info.arxiv.org/help/availability.html ("On Deferred Mailings"). A date means: no
# 20:00 America/New_York announcement that day. arXiv publishes each year's list during the
# year (December's days late); add them here as they appear. Data, not logic.
ARXIV_HOLIDAYS: dict[date, str] = {
    date(2023, 1, 16): "Martin Luther King Jr. Day",
    date(2023, 6, 14): "deferred mailing",
    date(2023, 6, 19): "Juneteenth",
    date(2023, 7, 4): "Independence Day",
    date(2023, 9, 4): "Labor Day",
    date(2023, 11, 23): "Thanksgiving",
    date(2023, 12, 25): "Christmas",
    date(2023, 12, 27): "holiday break",
    date(2025, 1, 1): "New Year's Day",
    date(2025, 1, 20): "Martin Luther King Jr. Day",
    date(2025, 6, 19): "Juneteenth",
    date(2025, 7, 6): "Independence Day break",
    date(2025, 9, 1): "Labor Day",
    date(2025, 11, 27): "Thanksgiving",
}

_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_TICK = timedelta(microseconds=1)


def _dow_value(text: str) -> int:
    text = text.lower()
    if text in _DAYS:
        return _DAYS.index(text)
    if text.isdigit() and 0 <= int(text) <= 7:
        return int(text) % 7
    raise ValueError(f"{text!r} is not a day of the week (0-7 or sun..sat)")


def _crontab_dow(field: str) -> str:
    """A crontab day-of-week field (0 or 7 = Sunday, names, ranges, lists, steps) in
    APScheduler's terms (names: APScheduler counts 0 as Monday, crontab as Sunday)."""
    if field == "*":
        return "*"
    days: set[int] = set()
    for item in field.split(","):
        base, _, step = item.partition("/")
        if base == "*":
            lo, hi = 0, 6
        elif "-" in base:
            a, b = base.split("-", 1)
            lo, hi = _dow_value(a), _dow_value(b)
            if b.strip() == "7":
                hi = 7
            if lo > hi:
                raise ValueError(f"day range {base!r} runs backwards (Sunday is 0)")
        else:
            lo = hi = _dow_value(base)
        every = int(step) if step else 1
        if every < 1:
            raise ValueError(f"bad step in {item!r}")
        days.update(d % 7 for d in range(lo, hi + 1, every))
    return ",".join(_DAYS[d] for d in sorted(days))


class CrontabTrigger(BaseTrigger):
    """Fires at the earliest of its CronTriggers: a crontab line whose day of month and day of
    week are both restricted is the union of one trigger per day field (see
    :func:`crontab_trigger`)."""

    __slots__ = ("triggers",)

    def __init__(self, triggers: list[CronTrigger]):
        self.triggers = triggers

    def get_next_fire_time(self, previous_fire_time, now):
        """The earliest next fire time of any of the triggers, or None. The weekday trigger
        (first) fires within a year; the day-of-month one is searched only up to it (it may
        never fire, "30 2", and APScheduler would search up to the year 9999 to say so)."""
        best = None
        for trigger in self.triggers:
            trigger.end_date = best
            found = trigger.get_next_fire_time(previous_fire_time, now)
            if found is not None and (best is None or found < best):
                best = found
        return best


def crontab_trigger(expr: str, tz) -> CrontabTrigger:
    """A trigger from a standard 5-field crontab line (minute hour day month weekday), with
    crontab's weekday numbering and day matching: when both the day of month and the day of
    week are restricted (neither starts with ``*``), a day matches when either does, as cron
    (crontab(5): "30 4 1,15 * 5" runs on the 1st and 15th, plus every Friday); otherwise the
    restricted one decides. ValueError when it does not parse."""
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 fields (minute hour day month weekday), got {len(fields)}")
    minute, hour, day, month, dow = fields
    dow = _crontab_dow(dow)
    if day.startswith("*") or dow == "*" or fields[4].startswith("*"):
        return CrontabTrigger([CronTrigger(minute=minute, hour=hour, day=day, month=month,
                                           day_of_week=dow, timezone=tz)])
    return CrontabTrigger([CronTrigger(minute=minute, hour=hour, month=month, day_of_week=dow,
                                       timezone=tz),
                           CronTrigger(minute=minute, hour=hour, day=day, month=month, timezone=tz)])


def cron_of(dcfg, tz) -> tuple[str, ZoneInfo]:
    """The crontab line of a cron digest and the zone its wall-clock times are in."""
    if dcfg.schedule == "arxiv":
        return ARXIV_CRON, NEW_YORK
    return dcfg.schedule, tz


def next_wall_time(expr: str, tz, after: datetime) -> datetime:
    """The first instant strictly after ``after`` whose wall-clock time in ``tz`` matches the
    crontab line ``expr`` (DST rules in the module docstring)."""
    naive_utc = crontab_trigger(expr, UTC)  # matches naive wall-clock times, no DST of its own
    wall = after.astimezone(tz).replace(tzinfo=None)
    found = None
    while found is None:
        hit = naive_utc.get_next_fire_time(None, (wall + _TICK).replace(tzinfo=UTC))
        if hit is None:
            raise ValueError(f"schedule {expr!r} never fires")
        wall = hit.replace(tzinfo=None)
        for fold in (0, 1):
            # fold=0: a skipped time maps forward by the gap, a repeated time to its first
            # occurrence; fold=1 gives the repeated time's second occurrence.
            instant = wall.replace(tzinfo=tz, fold=fold).astimezone(UTC)
            if instant > after:
                found = instant
                break
    if "*" in expr.split()[1]:
        # Hour is a wildcard: like cron, also fire in a repeated hour. APScheduler's own zoned
        # trigger yields those instants; it is only trusted when it moves forward.
        zoned = crontab_trigger(expr, tz).get_next_fire_time(None, after + _TICK)
        if zoned is not None and after < zoned < found:
            found = zoned.astimezone(UTC)
    return found


def next_fire(dcfg, tz, after: datetime, anchor: datetime | None = None) -> datetime:
    """The digest's first scheduled time strictly after ``after``. An ``every`` schedule fires
    at ``anchor + k * every`` for k >= 1; ``anchor`` is its last successful run (default
    ``after``)."""
    if dcfg.every:
        anchor = anchor or after
        steps = max(1, (after - anchor) // dcfg.every + 1)
        return anchor + steps * dcfg.every
    expr, zone = cron_of(dcfg, tz)
    return next_wall_time(expr, zone, after)


def is_due(dcfg, tz, last: datetime | None, now: datetime) -> bool:
    """Has the schedule fired since ``last`` (at or before ``now``)? Never ran: due."""
    return last is None or missed_since(dcfg, tz, last, now) is not None


def missed_since(dcfg, tz, last: datetime | None, now: datetime) -> datetime | None:
    """The first scheduled time after ``last`` that passed by ``now`` (None when not due, or
    when the digest never ran)."""
    if last is None:
        return None
    t = next_fire(dcfg, tz, last, anchor=last)
    return t if t <= now else None


@dataclass(frozen=True)
class Due:
    """A digest whose schedule fired since its last run, and the scheduled time it missed
    (None: it never ran)."""

    name: str
    missed: datetime | None


def due_digests(config, last: Mapping[str, datetime | None], now: datetime,
                only: Iterable[str] | None = None) -> list[Due]:
    """The one answer to "is this digest due": the digests of ``config`` (of ``only``, when
    given) whose schedule fired since the time ``last`` holds for each, at or before ``now``; a
    digest with no time there never ran and is due. ``watcher once --due`` passes each
    digest's last run (any run counts), the daemon's catch-up and ``watcher status`` its last
    successful run."""
    tz = config.settings.timezone
    wanted = None if only is None else set(only)
    out = []
    for name, dcfg in config.digests.items():
        if wanted is not None and name not in wanted:
            continue
        when = last.get(name)
        if when is None:
            out.append(Due(name, None))
        elif (missed := missed_since(dcfg, tz, when, now)) is not None:
            out.append(Due(name, missed))
    return out


def arxiv_announcement_day(now: datetime) -> date:
    """The New York date of arXiv's latest regular announcement slot (Sunday to Thursday
    20:00 America/New_York) at or before ``now``, holidays included."""
    local = now.astimezone(NEW_YORK)
    day = local.date()
    if local.hour < ARXIV_ANNOUNCE_HOUR:
        day -= timedelta(days=1)
    while day.isoweekday() in (5, 6):  # Friday, Saturday: no announcement
        day -= timedelta(days=1)
    return day


def arxiv_holiday(day: date) -> str | None:
    """The name of the arXiv holiday on ``day`` (no announcement), or None."""
    return ARXIV_HOLIDAYS.get(day)


def quiet_day_reason(dcfg, now: datetime) -> str | None:
    """For a ``schedule = "arxiv"`` digest whose latest announcement slot fell on an arXiv
    holiday: why its digest is empty ("no arXiv announcement today (holiday: …)")."""
    if dcfg.schedule != "arxiv":
        return None
    day = arxiv_announcement_day(now)
    name = arxiv_holiday(day)
    if name is None:
        return None
    return f"no arXiv announcement on {day:%a %d %b %Y} (holiday: {name})"


class DigestTrigger(BaseTrigger):
    """APScheduler's view of a digest's schedule: :func:`next_fire` and nothing else."""

    __slots__ = ("dcfg", "tz", "anchor")

    def __init__(self, dcfg, tz, anchor: datetime | None = None):
        self.dcfg = dcfg
        self.tz = tz
        self.anchor = anchor

    def get_next_fire_time(self, previous_fire_time, now):
        """Strictly after the previous fire time, else at or after ``now``."""
        if self.anchor is None:
            self.anchor = now.astimezone(UTC)  # an interval counts from when it was scheduled
        after = previous_fire_time if previous_fire_time else now - _TICK
        return next_fire(self.dcfg, self.tz, after.astimezone(UTC), self.anchor)

    def __str__(self) -> str:
        if self.dcfg.every:
            return f"every {self.dcfg.every}"
        expr, zone = cron_of(self.dcfg, self.tz)
        return f"cron[{expr}] {zone}"


def trigger_for(dcfg, tz, anchor: datetime | None = None) -> DigestTrigger:
    """The APScheduler trigger of a digest (``anchor``: see :func:`next_fire`)."""
    return DigestTrigger(dcfg, tz, anchor)
