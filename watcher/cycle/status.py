"""``watcher status``: what the database says about sources, digests and channels.

Every time shown is in the config's ``[watcher].timezone`` (the database keeps UTC)."""

from __future__ import annotations

from contextlib import nullcontext
from datetime import datetime

from ..config import Config
from .lock import daemon_holder
from ..masking import redact
from ..present.counts import NOTHING_MATCHED, counts_line, profile_counts
from .sampledb import is_sample
from ..util.schedule import due_digests, next_fire as _next_fire
from ..store import Store, local, require_database
from ..store.records import ChannelRecord, ChannelRun, SourceRecord
from ..util.text import plural
from ..zotero.sync import status_lines


def _delivered_nothing(d, config: Config, channels: list[ChannelRun]) -> str | None:
    """Why the digest's last run sent nothing to any channel, as its terminal line said it
    (``no new papers (nothing matched your profiles)``), with each profile's count and where
    to preview its query when papers came and no profile took one; None when a channel got
    papers, one failed (its own line says so) or the digest never ran."""
    if not channels or any(c.sent or c.error or not c.empty for c in channels):
        return None
    reasons = sorted({c.empty for c in channels})
    line = f"no new papers ({'; '.join(reasons)})"
    if NOTHING_MATCHED in reasons:
        brought: dict[str, int] = {}
        for c in channels:
            brought.update(c.profiles)
        counts = profile_counts(d, config.profiles, brought)
        line += f"; per profile: {counts_line(counts, hint=True)}"
    return line


def _ago(when: datetime | None, tz) -> str:
    """A stored UTC time as local time in ``tz``; "never" when there is none."""
    return "never" if when is None else local(when, tz)


def st_every(dcfg) -> str:
    """An ``every`` interval as written in configs (``6h``, ``1h30m``, ``10s``)."""
    secs = int(dcfg.every.total_seconds())
    out = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if secs >= size:
            out += f"{secs // size}{unit}"
            secs %= size
    return out


def next_fire(dcfg, tz, now: datetime, last_success: datetime | None = None) -> datetime:
    """The digest's next scheduled time after ``now`` (an ``every`` schedule counts from its
    last successful run)."""
    return _next_fire(dcfg, tz, now, anchor=last_success)


def status_text(config: Config, now: datetime, store: Store | None = None) -> str:
    """The status report as text, read from ``store`` when given (the web inbox's open
    database), else from the config's database, opened here."""
    db = config.settings.database
    if store is None:
        require_database(db)
    tz = config.settings.timezone
    running = daemon_holder(db)
    lines = [f"database {db}", f"  daemon: {'running, ' + running if running else 'not running'}"]
    with Store.open_current(db) if store is None else nullcontext(store) as store:
        lines.append(f"  {plural(store.count_papers(), 'paper')} stored")
        lines.append("sources:")
        rows = {r.name: r for r in store.sources()}
        for name in config.sources:
            r = rows.get(name) or SourceRecord(name)
            counts = r.last_counts
            last = f"last fetch {_ago(r.last_success, tz)}"
            if counts:
                last += f" ({counts['new']} new, {counts['updated']} updated, {counts['unchanged']} unchanged)"
            lines.append(f"  {name}: {last}; {plural(r.papers, 'paper')}")
            if r.failures:
                # the store keeps the latest failure of the streak, not its first
                lines.append(f"    FAILING ({r.failures} in a row), last failed at "
                             f"{_ago(r.last_error_at, tz)}: {r.last_error}")
        lines.append("digests:")
        sample = is_sample(config)  # ran once by 'once --sample': no schedule to miss
        # each a query for all the digests, none per digest: what status shows, never the stored history
        states = store.digest_states(config.digests)
        due = {} if sample else {d.name: d for d in due_digests(
            config, {n: st.last_success for n, st in states.items()}, now)}
        last_days = store.last_issue_days(config.digests)
        last_channels = store.last_run_channels(config.digests)
        channel_states = store.channel_states(config.digests)
        for name, d in config.digests.items():
            st = states[name]
            missed = due[name].missed if name in due else None
            if sample:
                when = "not scheduled (the sample: 'watcher once --sample' runs it)"
            elif name in due:
                when = "now (overdue)" if running else "overdue: at the next 'watcher run' start or 'watcher once --due'"
            else:
                when = local(next_fire(d, tz, now, st.last_success), tz)
            sched = f"every {st_every(d)}" if d.every else f"schedule {d.schedule!r}"
            lines.append(f"  {name}: last run {_ago(st.last_run, tz)} "
                         f"({st.last_status or '-'}); next {when} [{sched}]")
            if st.last_status in ("failed", "degraded") and st.last_error:
                lines.append(f"    last run {st.last_status}: {st.last_error}")
            if missed is not None:
                lines.append(f"    missed its run at {local(missed, tz)} "
                             f"(last success {_ago(st.last_success, tz)})")
            day = last_days.get(name)
            if day:
                counts = profile_counts(d, config.profiles, store.issue_profile_counts(name, day))
                lines.append(f"    last issue {day}, per profile: {counts_line(counts, hint=True)}")
            empty = _delivered_nothing(d, config, last_channels[name])
            if empty and not (st.last_error and st.last_error in empty):  # not said twice
                lines.append(f"    last run delivered nothing: {empty}")
            for ch in d.channels:
                c = channel_states.get((name, ch)) or ChannelRecord(name, ch)
                line = f"    -> {ch}: last delivery {_ago(c.last_success, tz)}"
                if c.last_count is not None:
                    line += f" ({plural(c.last_count, 'paper')})"
                lines.append(line)
                if c.failed_since_success:
                    lines.append(f"       FAILED at {_ago(c.last_error_at, tz)}: {c.last_error}")
        lines += status_lines(config, store)
    # errors stored before secrets were masked where they are stored: masked when shown
    return redact("\n".join(lines))
