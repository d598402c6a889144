"""Schedule decisions (pure): when a digest fires, and which digests are due."""

from __future__ import annotations

from datetime import datetime, timedelta

from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from .store import parse_time


_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]


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


def crontab_trigger(expr: str, tz) -> CronTrigger:
    """A CronTrigger from a standard 5-field crontab line (minute hour day month weekday),
    with crontab's weekday numbering. ValueError when it does not parse."""
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 fields (minute hour day month weekday), got {len(fields)}")
    minute, hour, day, month, dow = fields
    return CronTrigger(minute=minute, hour=hour, day=day, month=month,
                       day_of_week=_crontab_dow(dow), timezone=tz)


def trigger_for(dcfg, tz):
    """The APScheduler trigger of a digest: cron in the config's time zone, or an interval."""
    if dcfg.every:
        return IntervalTrigger(seconds=int(dcfg.every.total_seconds()), timezone=tz)
    expr = dcfg.schedule
    if expr == "arxiv":
        # arXiv announces Sunday to Thursday at 20:00 America/New_York; fire shortly after.
        from zoneinfo import ZoneInfo

        return CronTrigger(day_of_week="sun-thu", hour=20, minute=30, timezone=ZoneInfo("America/New_York"))
    return crontab_trigger(expr, tz)


def last_fire_before(dcfg, tz, now: datetime, horizon: timedelta = timedelta(days=8)) -> datetime | None:
    """The latest scheduled time at or before ``now`` (within ``horizon``), or None."""
    if dcfg.every:
        return now
    trigger = trigger_for(dcfg, tz)
    t = trigger.get_next_fire_time(None, now - horizon)
    last = None
    while t is not None and t <= now:
        last = t
        t = trigger.get_next_fire_time(t, t + timedelta(seconds=1))
    return last


def is_due(dcfg, tz, last_run: datetime | None, now: datetime) -> bool:
    """Has the schedule fired since ``last_run``? A digest that never ran is due."""
    if last_run is None:
        return True
    if dcfg.every:
        return now - last_run >= dcfg.every
    fired = last_fire_before(dcfg, tz, now)
    return fired is not None and fired > last_run


def due_digests(config, store, now: datetime) -> list[str]:
    """The digests of ``config`` whose schedule fired since their last run."""
    tz = config.settings.timezone
    return [name for name, d in config.digests.items()
            if is_due(d, tz, parse_time(store.digest_state(name).get("last_run")), now)]
