"""Schedule decisions with fixed clocks: next fire, DST, missed runs, arXiv's calendar."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from watcher.config import DigestConfig
from watcher.util.schedule import (ARXIV_HOLIDAYS, DigestTrigger, arxiv_announcement_day, is_due,
                              missed_since, next_fire, next_wall_time, quiet_day_reason)

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
NY = ZoneInfo("America/New_York")


def digest(schedule=None, every=None) -> DigestConfig:
    return DigestConfig(name="d", profiles=("p",), channels=("c",), schedule=schedule, every=every)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def fires(d, tz, start: datetime, n: int) -> list[datetime]:
    out, t = [], start
    for _ in range(n):
        t = next_fire(d, tz, t)
        out.append(t)
    return out


def test_cron_next_fire_in_the_configured_zone():
    d = digest("30 21 * * sun-thu")
    # Friday 2025-04-11 12:00 Berlin -> next is Sunday 21:30 Berlin (19:30 UTC, CEST)
    assert next_fire(d, BERLIN, datetime(2025, 4, 11, 12, tzinfo=BERLIN)) == utc(2025, 4, 13, 19, 30)
    # strictly after: at the fire time itself, the next one is the following day
    assert next_fire(d, BERLIN, utc(2025, 4, 13, 19, 30)) == utc(2025, 4, 14, 19, 30)


def test_crontab_weekday_numbers_count_sunday_as_zero():
    d = digest("0 9 * * 0")  # Sundays
    t = next_fire(d, UTC, utc(2025, 4, 7))  # a Monday
    assert t == utc(2025, 4, 13, 9) and t.isoweekday() == 7


def test_spring_forward_skipped_time_fires_once_after_the_gap():
    d = digest("30 2 * * *")
    got = fires(d, BERLIN, datetime(2025, 3, 29, 12, tzinfo=BERLIN), 3)
    local = [t.astimezone(BERLIN).strftime("%m-%d %H:%M") for t in got]
    assert local == ["03-30 03:30", "03-31 02:30", "04-01 02:30"]


def test_fall_back_repeated_time_fires_once():
    d = digest("30 2 * * *")
    got = fires(d, BERLIN, datetime(2025, 10, 25, 12, tzinfo=BERLIN), 3)
    assert got == [utc(2025, 10, 26, 0, 30), utc(2025, 10, 27, 1, 30), utc(2025, 10, 28, 1, 30)]


def test_fall_back_sub_hourly_schedule_keeps_firing_through_the_repeated_hour():
    got = []
    t = utc(2025, 10, 26, 0, 0)  # 02:00 CEST
    while t < utc(2025, 10, 26, 2, 0):
        t = next_wall_time("*/20 * * * *", BERLIN, t)
        got.append(t)
    assert got == sorted(set(got))  # strictly increasing, no duplicates
    assert len(got) == 6  # 02:20 02:40 (CEST), 02:00 02:20 02:40 (CET), 03:00


def test_every_counts_from_the_anchor():
    d = digest(every=timedelta(hours=6))
    last = utc(2025, 4, 12, 1)
    assert next_fire(d, UTC, utc(2025, 4, 12, 3), anchor=last) == utc(2025, 4, 12, 7)
    assert next_fire(d, UTC, utc(2025, 4, 12, 7), anchor=last) == utc(2025, 4, 12, 13)
    assert next_fire(d, UTC, last, anchor=last) == utc(2025, 4, 12, 7)


def test_is_due_and_missed_runs_for_cron():
    d = digest("30 21 * * *")
    last = datetime(2025, 4, 10, 21, 30, 5, tzinfo=BERLIN)  # ran on time on the 10th
    assert not is_due(d, BERLIN, last, datetime(2025, 4, 11, 21, 29, tzinfo=BERLIN))
    assert is_due(d, BERLIN, last, datetime(2025, 4, 11, 21, 30, tzinfo=BERLIN))
    # down for two days: one missed time is reported (the first), and it runs once
    assert missed_since(d, BERLIN, last, datetime(2025, 4, 13, 8, tzinfo=BERLIN)) == \
        datetime(2025, 4, 11, 21, 30, tzinfo=BERLIN)
    assert is_due(d, BERLIN, None, utc(2025, 1, 1))  # never ran


def test_is_due_for_every():
    d = digest(every=timedelta(minutes=30))
    last = utc(2025, 4, 12, 10)
    assert not is_due(d, UTC, last, utc(2025, 4, 12, 10, 29))
    assert is_due(d, UTC, last, utc(2025, 4, 12, 10, 30))


def test_monthly_schedule_missed_long_ago_is_still_due():
    d = digest("0 9 1 * *")
    assert is_due(d, UTC, utc(2025, 1, 1, 9, 0, 1), utc(2025, 2, 20))
    assert not is_due(d, UTC, utc(2025, 2, 1, 9, 0, 1), utc(2025, 2, 20))


def test_arxiv_schedule_follows_new_york_time_across_its_dst_change():
    d = digest("arxiv")
    # US DST starts 2025-03-09: 20:30 EST = 01:30 UTC, 20:30 EDT = 00:30 UTC
    got = fires(d, BERLIN, utc(2025, 3, 6, 12), 4)  # from Thursday noon
    assert [t.astimezone(NY).strftime("%a %H:%M") for t in got] == \
        ["Thu 20:30", "Sun 20:30", "Mon 20:30", "Tue 20:30"]
    assert got[0] == utc(2025, 3, 7, 1, 30)  # Thursday evening, EST
    assert got[1] == utc(2025, 3, 10, 0, 30)  # Sunday evening, EDT


def test_arxiv_has_no_slot_on_friday_or_saturday():
    d = digest("arxiv")
    t = next_fire(d, UTC, datetime(2025, 4, 11, 0, 0, tzinfo=NY))  # Friday
    assert t.astimezone(NY).strftime("%a %H:%M") == "Sun 20:30"


def test_arxiv_announcement_day():
    assert arxiv_announcement_day(datetime(2025, 11, 27, 20, 30, tzinfo=NY)) == date(2025, 11, 27)
    assert arxiv_announcement_day(datetime(2025, 11, 27, 19, 0, tzinfo=NY)) == date(2025, 11, 26)
    # Saturday morning: the latest slot was Thursday evening
    assert arxiv_announcement_day(datetime(2025, 11, 29, 9, 0, tzinfo=NY)) == date(2025, 11, 27)


def test_holiday_gives_a_reason_and_ordinary_days_do_not():
    d = digest("arxiv")
    thanksgiving = datetime(2025, 11, 27, 20, 30, tzinfo=NY)
    assert next_fire(d, UTC, thanksgiving - timedelta(hours=1)) == thanksgiving  # still fires
    reason = quiet_day_reason(d, thanksgiving)
    assert reason == "no arXiv announcement on Thu 27 Nov 2025 (holiday: Thanksgiving)"
    assert quiet_day_reason(d, thanksgiving + timedelta(days=4)) is None  # Monday
    assert quiet_day_reason(digest("30 21 * * *"), thanksgiving) is None  # not an arxiv digest


def test_holiday_table_lists_only_announcement_days():
    for day in ARXIV_HOLIDAYS:
        assert day.isoweekday() not in (5, 6), day


def test_trigger_fires_strictly_after_previous_and_anchors_intervals():
    d = digest(every=timedelta(seconds=10))
    now = utc(2025, 4, 12, 12)
    trig = DigestTrigger(d, UTC)
    first = trig.get_next_fire_time(None, now)
    assert first == now + timedelta(seconds=10)
    assert trig.get_next_fire_time(first, first) == first + timedelta(seconds=10)
    anchored = DigestTrigger(d, UTC, anchor=now - timedelta(seconds=3))
    assert anchored.get_next_fire_time(None, now) == now + timedelta(seconds=7)


@pytest.mark.parametrize("expr, start, n", [
    ("30 2 * * *", utc(2025, 1, 1), 400),           # a year, both DST changes
    ("0 0 * * 1-5", utc(2025, 1, 1), 300),
    ("*/15 * * * *", utc(2025, 3, 29), 300),        # through spring forward
    ("*/15 * * * *", utc(2025, 10, 25, 12), 300),   # through fall back
])
def test_trigger_never_repeats_or_stalls(expr, start, n):
    trig = DigestTrigger(digest(expr), BERLIN)
    t = trig.get_next_fire_time(None, start)
    for _ in range(n):
        nxt = trig.get_next_fire_time(t, t)
        assert t < nxt <= t + timedelta(days=4)
        t = nxt
