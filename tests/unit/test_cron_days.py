"""Day of month and day of week combine as in cron (crontab(5), Vixie cron): when both fields are
restricted (neither starts with ``*``), a day matches when EITHER matches; when one is ``*``,
the other alone decides. The expectations are crontab(5)'s own examples."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from conftest import MINIMAL_CONFIG
from watcher.config import load_config
from watcher.errors import ConfigError
from watcher.util.schedule import next_wall_time

UTC = timezone.utc


def fires(expr: str, start: datetime, until: datetime) -> list[datetime]:
    out, t = [], start
    while (t := next_wall_time(expr, UTC, t)) < until:
        out.append(t)
    return out


def days(expr: str, start: datetime, until: datetime) -> list[int]:
    return [t.day for t in fires(expr, start, until)]


JAN = datetime(2026, 1, 1, tzinfo=UTC)  # a Thursday
FEB = datetime(2026, 2, 1, tzinfo=UTC)


def test_both_restricted_fire_on_either():
    # crontab(5): "30 4 1,15 * 5" would cause a command to be run at 4:30 am on the 1st and
    # 15th of each month, plus every Friday.
    got = fires("30 4 1,15 * 5", JAN, FEB)
    assert [t.day for t in got] == [1, 2, 9, 15, 16, 23, 30]  # Fridays: 2, 9, 16, 23, 30
    assert all((t.hour, t.minute) == (4, 30) for t in got)


def test_every_monday_and_the_first():
    # the line: every Monday, and the 1st whatever its weekday
    start = datetime(2026, 11, 26, tzinfo=UTC)  # a Thursday
    got = fires("0 9 1 * mon", start, datetime(2027, 1, 1, tzinfo=UTC))
    assert [(t.month, t.day) for t in got] == [(11, 30), (12, 1), (12, 7), (12, 14), (12, 21),
                                               (12, 28)]


@pytest.mark.parametrize("expr, expected", [
    # crontab(5)'s EXAMPLE CRON FILE: one of the two day fields is *, the other decides
    ("5 0 * * *", list(range(1, 32))),          # five minutes after midnight, every day
    ("15 14 1 * *", [1]),                        # 2:15pm on the first of every month
    ("0 22 * * 1-5", [1, 2, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16, 19, 20, 21, 22, 23, 26, 27,
                      28, 29, 30]),              # 10 pm on weekdays
    ("5 4 * * sun", [4, 11, 18, 25]),            # 5 after 4 every Sunday
    # a field starting with * counts as unrestricted (Vixie cron), even with a step: AND
    ("0 0 */2 * 5", [9, 23]),                    # odd days that are Fridays
])
def test_crontab_examples(expr, expected):
    assert sorted(set(days(expr, JAN - JAN.resolution, FEB))) == expected


def test_every_two_hours_at_23_past():
    # crontab(5): "23 0-23/2 * * *" runs 23 minutes after midnight, 2am, 4am ..., every day
    got = fires("23 0-23/2 * * *", JAN, datetime(2026, 1, 2, tzinfo=UTC))
    assert [t.hour for t in got] == list(range(0, 24, 2)) and {t.minute for t in got} == {23}


def test_feb_29_or_monday_is_valid_and_never_firing_lines_still_refused(write_config):
    ok = MINIMAL_CONFIG.replace('"30 21 * * sun-thu"', '"0 0 29 2 1"')
    assert load_config(write_config(ok)).digests["daily"].schedule == "0 0 29 2 1"
    assert next_wall_time("0 0 29 2 1", UTC, JAN).isoweekday() == 1  # the first Monday
    for never in ("0 0 30 2 *", "0 0 31 4 *"):
        bad = MINIMAL_CONFIG.replace('"30 21 * * sun-thu"', f'"{never}"')
        with pytest.raises(ConfigError, match=r"digest\.daily\.schedule: .*never fires in the next 5 years"):
            load_config(write_config(bad))
