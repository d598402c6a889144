"""One cycle, shared by ``watcher once``, ``watcher run``, ``fetch`` and ``digest``.

The flow, written down once::

    run_once(config, cycle, fetch, deliver):
        take the write lock beside the database           # waits while another cycle writes
        store = open the database; a row in runs          # kind: once, run, fetch or digest
        for each source (of fetch):                       # isolated: one failing does not stop others
            state = store.source_state(source)
            result = source.fetch(state)                  # HTTP + parse; SourceError on failure
            counts = store.upsert(result.papers, now)     # identity + merge; new / updated / unchanged
            store.source_ok(source, result.state, counts) # or store.source_failed(source, error)
        for each digest (of deliver):                     # isolated too; stop() is checked between steps
            plan = the digest's title, day and profiles, compiled once
            for each channel of the digest:               # isolated too
                watermark = last successful delivery through (digest, channel)
                candidates = stored papers listed as new, in the window, not in the ledger
                digest = plan.build(candidates)           # assemble (pure: what goes in, in which
                                                          # order), then TL;DRs and rating links
                if empty: the reason (nothing announced / matched / an arXiv holiday)
                if empty and not send_empty: move the watermark, send nothing
                channel.send(render(digest, each format)) # DeliveryError on failure
                store.record_delivery(...)                # ledger + watermark, only after acceptance
            store.digest_ran(digest, ok, errors)
        record what each profile selects of the last 30 filing days  # the profile pages read it
        the runs row: ok, or failed when any source, digest or channel failed or the cycle stopped

Isolation: a source, a digest or a channel that fails, with watcher's own error or with any
unexpected exception (a bug), fails alone: its error is logged (an unexpected one with its
traceback, which the log shows where tracebacks belong: see :mod:`watcher.util.logs`), stored for
``watcher status``, and the cycle carries on with the next one. Only a database that cannot be
used at all (locked past the timeout, read-only, damaged, full: :class:`DatabaseUnavailable`)
stops the cycle, since nothing after it could be recorded.

Nothing is recorded as delivered before a channel accepted it, so a failed or killed run leaves
the papers for the next run, and a delivered paper is never delivered again through that channel.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path
from typing import Callable, TextIO

from ..matching.assemble import assemble, delivered_reason, nothing_since, window_start
from ..present.counts import NOTHING_ANNOUNCED, SOURCES_FAILED, brought_by, digest_title, profile_counts
from ..config import FORMAT_CHANNELS, Config, DigestConfig
from ..deliver import channel_for, redact
from ..errors import DatabaseLocked, DeliveryError, StoreError, WatcherError
from ..present.links import links_for, links_missing
from .lock import write_lock
from ..matching.compile import compile_profiles
from ..matching.match import ProfileMatcher
from ..models import Digest, utc
from ..present.render import render
from .selections import record_cycle
from ..util.schedule import quiet_day_reason
from ..sources import SourceContext, make_source
from ..sources.common import name_papers
from ..sources.sample import read_samples, sample_today
from .sampledb import is_sample, reading_config, sample_config, sample_database
from ..services.steps import failure, stops_the_cycle
from ..store import Store
from ..store.records import ChannelRecord
from ..util.text import plural
from ..present.summarize import Summarizer
from .upkeep import upkeep
from ..zotero.sync import in_cycle

log = logging.getLogger("watcher")


@dataclass
class SourceReport:
    """The outcome of fetching one source."""

    name: str
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    error: str | None = None
    not_modified: bool = False  # the server answered 304: nothing was read


@dataclass
class ChannelReport:
    """The outcome of one digest through one channel: what was sent (``issue``, ``rendered``,
    the ``files`` a file channel wrote) or why nothing was (``empty``), or the error."""

    digest: str
    channel: str
    papers: int = 0
    sent: bool = False
    error: str | None = None
    rendered: dict[str, str] = field(default_factory=dict)
    issue: Digest | None = None
    files: list[Path] = field(default_factory=list)
    empty: str | None = None
    profiles: list = field(default_factory=list)  # ProfileCount: the papers each profile brought


@dataclass
class CycleReport:
    """Everything one cycle did; ``ok`` is False when any source, digest or channel failed."""

    sources: list[SourceReport] = field(default_factory=list)
    channels: list[ChannelReport] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)  # digest -> why it failed as a whole
    degraded: dict[str, str] = field(default_factory=dict)  # digest -> what its delivery lacked

    @property
    def ok(self) -> bool:
        """True when no source, no digest and no channel failed and no digest went out degraded."""
        return not (any(s.error for s in self.sources) or self.digests or self.degraded
                    or any(c.error for c in self.channels))


@dataclass
class Cycle:
    """How one cycle runs, whatever it does. ``now`` is an aware datetime (the clock is read by
    the caller); with ``clock`` it is read again once the write lock is held."""

    now: datetime
    kind: str = "once"  # the runs table's kind: once, run (the daemon), fetch, digest
    stop: Callable[[], bool] = lambda: False  # the daemon's shutdown: checked between steps
    lock_wait: float = 900.0  # seconds to wait for another cycle's write lock
    clock: Callable[[], datetime] | None = None


@dataclass
class Fetch:
    """What a cycle fetches: the named sources (all when None); ``since`` backfills history
    (``watcher fetch --since``: papers first stored are never listed as new)."""

    sources: list[str] | None = None
    since: datetime | None = None


@dataclass
class DryRun:
    """``--dry-run``: print each digest instead of sending it (see :func:`dry_run_digest`)."""

    print_format: str | None = None  # ``--to``: only this format
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)  # banners and notes


@dataclass
class Deliver:
    """What a cycle delivers: the named digests (all when None). ``since_day`` takes papers
    filed on or after that day, ignoring the last run (``watcher digest --since``); ``stdout``
    is where a stdout channel writes."""

    digests: list[str] | None = None
    since_day: date | None = None
    dry_run: DryRun | None = None
    stdout: TextIO = field(default_factory=lambda: sys.stdout)


def sample_now(config: Config) -> datetime:
    """The end of the sample's newest day in the configured time zone (``--sample``'s today)."""
    day = sample_today(read_samples())
    return datetime.combine(day, time(23, 59), tzinfo=config.settings.timezone).astimezone(timezone.utc)


def open_store(config: Config) -> Store:
    """The database of this config."""
    return Store.open(config.settings.database)


def fetch_sources(config: Config, store: Store, cycle: Cycle, fetch: Fetch, http=None) -> list[SourceReport]:
    """Fetch and store every (selected) source, each in isolation."""
    ctx = SourceContext(now=cycle.now, http=http, user_agent=config.settings.user_agent,
                        since=fetch.since)
    reports = []
    for name in fetch.sources or list(config.sources):
        if cycle.stop():
            log.info("stopping: leaving the remaining sources for the next run")
            break
        report = SourceReport(name)
        reports.append(report)
        try:
            source = make_source(config.sources[name], ctx)
            result = source.fetch(store.source_state(name))
            name_papers(source, result.papers)
            counts = store.upsert(result.papers, cycle.now, backfill=fetch.since is not None)
            store.source_ok(name, result.state, counts.summary(), cycle.now)
            report.new, report.updated = len(counts.new), len(counts.updated)
            report.unchanged, report.not_modified = counts.unchanged, result.not_modified
            if result.not_modified:  # HTTP 304: the server said so, nothing was read
                log.info("source %s: not modified since the last fetch", name)
            else:
                log.info("source %s: %d new, %d updated, %d unchanged", name,
                         report.new, report.updated, report.unchanged)
        except Exception as e:
            if stops_the_cycle(e):
                raise
            report.error = failure(f"source {name}", e, redact)  # a url_env's URL is a secret
            store.source_failed(name, report.error, cycle.now)
    return reports


@dataclass
class DigestPlan:
    """What every rendering of one digest in one cycle shares: its title, its day, its
    compiled profiles, its summarizer and links (built once per digest, for delivery and dry
    run alike)."""

    dcfg: DigestConfig
    title: str  # before matching: every profile's; each digest names the profiles that brought papers
    profiles: dict  # name -> ProfileConfig: the titles of its profiles
    day: date
    now: datetime
    matchers: list[ProfileMatcher]
    summarizer: Summarizer  # one for all the digest's channels: a paper is summarised once
    links: object = None  # the rating links digests carry (watcher.present.links), or None
    sources_failed: bool = False  # the last fetch of every source failed
    tz: object = timezone.utc  # [watcher].timezone: the times its reasons show
    sample: bool = False  # the sample database's (watcher once --sample): its commands take --sample

    @classmethod
    def make(cls, config: Config, store: Store, dcfg: DigestConfig, now: datetime) -> "DigestPlan":
        """Compile the digest's profiles (examples looked up in ``store``)."""
        return cls(dcfg, digest_title(dcfg, config.profiles), config.profiles,
                   now.astimezone(config.settings.timezone).date(),
                   now, compile_profiles(config, dcfg.profiles, store),
                   # rating links expire counting from the wall clock, not from ``now``: a
                   # --sample run's "today" is the sample's day, months ago
                   Summarizer(config.summarizer, store, now), links_for(config),
                   store.all_sources_failed(list(config.sources)), config.settings.timezone, is_sample(config))

    def build(self, candidates: list, revised: list, older: tuple | None = None,
              last: datetime | None = None, ran_empty: bool = False) -> Digest:
        """The digest of these papers; an empty one says why (failed sources, then an arXiv
        holiday, then papers filed before the window (``older``, see :func:`left_out`), then
        nothing stored since the channel's ``last`` delivery, or its last run when that sent
        nothing: ``ran_empty``)."""
        digest = assemble(self.dcfg.name, self.title, self.day, candidates, self.matchers, self.now, revised,
                          sources_failed=self.sources_failed, older=older, order=self.dcfg.order)
        if not digest.matches and not candidates and not self.sources_failed:
            digest.empty_reason = quiet_day_reason(self.dcfg, self.now) or digest.empty_reason
            if last is not None and digest.empty_reason == NOTHING_ANNOUNCED:
                digest.empty_reason = nothing_since(last, self.tz, self.dcfg.name if ran_empty else None,
                                                    self.sample)
        digest.profiles = profile_counts(self.dcfg, self.profiles, brought_by(digest.matches))
        digest.title = digest_title(self.dcfg, self.profiles, digest.profiles)
        self.summarizer.fill(digest)  # the TL;DRs, before rendering; never fails a delivery
        digest.links = self.links
        return digest


def left_out(store: Store, dcfg: DigestConfig, channel: str, first_window: date | None,
             since_day: date | None) -> tuple[int, date, str] | None:
    """For an empty digest: how many stored papers its window leaves out as filed before it,
    the window's first day and what set it (``--since``, or the first run's lookback)."""
    if since_day:
        return store.count_older(dcfg.name, channel, since_day), since_day, "--since"
    if first_window:
        days, rest = divmod(dcfg.lookback.total_seconds(), 86400)
        span = f"{int(days)}d" if not rest else f"{int(dcfg.lookback.total_seconds() // 3600)}h"
        return store.count_older(dcfg.name, channel, first_window), first_window, f"lookback {span}"
    return None


def channel_papers(config: Config, store: Store, dcfg: DigestConfig, channel: str, now: datetime,
                   since_day: date | None = None) -> tuple[list, list, date | None]:
    """What (digest, channel) has not had yet: (candidates, revised, the first run's window
    start or None). ``since_day`` replaces the window and ignores the watermark."""
    tz = config.settings.timezone
    state = store.channel_state(dcfg.name, channel)
    watermark = state.watermark
    since = None  # after the first run: everything stored since the last successful
    # delivery, whatever its date (late announcements, holidays, long outages)
    first_window = None
    if watermark is None:  # the first run reaches back lookback; if it failed, its
        # window is kept for the retries
        since = state.first_window or window_start(now, dcfg.lookback, tz)
        first_window = since
    if since_day:
        since, watermark = since_day, None
    candidates = store.candidates(dcfg.name, channel, since_day=since, stored_after=watermark)
    revised = store.revised(dcfg.name, channel, after=watermark) if watermark else []
    return candidates, revised, first_window


def deliver_digest(config: Config, store: Store, dcfg: DigestConfig, cycle: Cycle,
                   deliver: Deliver) -> list[ChannelReport]:
    """Build the digest for each channel of ``dcfg`` and deliver it (see module docstring);
    with ``deliver.dry_run``, print it once instead (:func:`dry_run_digest`)."""
    plan = DigestPlan.make(config, store, dcfg, cycle.now)
    if deliver.dry_run:
        return dry_run_digest(config, store, plan, deliver)
    reports = []
    for name in dcfg.channels:
        if cycle.stop():
            break
        report = ChannelReport(dcfg.name, name)
        reports.append(report)
        first_window = None
        waiting = f"channel {dcfg.name}/{name}"  # a Retry-After past an earlier run (store.wait_until)
        try:
            until = None if deliver.dry_run else store.wait_until(waiting)
            if until is not None:
                raise DeliveryError(f"channel {name}: its server asked to wait until "
                                    f"{until:%Y-%m-%d %H:%M} UTC (Retry-After); not asked before then")
            channel = channel_for(config, name, dcfg.formats, deliver.stdout, cycle.now)
            candidates, revised, first_window = channel_papers(config, store, dcfg, name, cycle.now,
                                                               deliver.since_day)
            older = None if candidates else left_out(store, dcfg, name, first_window, deliver.since_day)
            state = (ChannelRecord(dcfg.name, name) if candidates or first_window or deliver.since_day
                     else store.channel_state(dcfg.name, name))
            # a run after the last delivery that sent nothing moved the watermark past it (the
            # watermark has microseconds, the delivery's time seconds)
            ran_empty = state.watermark is not None and (state.last_success is None or
                                                         state.watermark.replace(microsecond=0) > state.last_success)
            last = state.watermark if ran_empty else state.last_success
            digest = plan.build(candidates, revised, older, utc(last) if last else None, ran_empty)
            say_delivered(store, plan, [name], deliver.since_day, digest)
            if digest.links is not None:  # "view in browser" opens exactly this message
                digest.links = digest.links.message(name, store.next_message(dcfg.name, digest.date, name))
            report.papers, report.profiles = len(digest.matches), digest.profiles
            if not digest.matches and not dcfg.send_empty:
                report.empty = digest.empty_reason
                log.info("digest %s -> %s: %s; nothing sent", dcfg.name, name, digest.empty_reason)
                store.record_delivery(dcfg.name, name, [], cycle.now)
                continue
            if not channel.formats() and config.channels[name].type in FORMAT_CHANNELS:
                # a file or stdout channel with no format would write nothing, yet record
                raise DeliveryError(f"channel {name} writes no format for digest {dcfg.name} "
                                    "(its formats are empty); nothing recorded")
            report.rendered = {fmt: render(digest, fmt, config.settings.templates_dir)
                               for fmt in channel.formats()}
            channel.send(digest, report.rendered)
            store.record_delivery(dcfg.name, name, digest.papers, cycle.now, issue=digest, sent=channel.sent)
            report.sent, report.issue = True, digest
            report.files = list(getattr(channel, "written", []))
            if digest.matches:
                log.info("digest %s -> %s: delivered %s", dcfg.name, name, plural(report.papers, "paper"))
            else:  # send_empty: the text format has no place for the reason, the log has
                log.info("digest %s -> %s: delivered an empty digest (%s)", dcfg.name, name,
                         digest.empty_reason)
        except DeliveryError as e:
            shown = getattr(e, "delivered", None)  # a split e-mail: the parts accepted before
            if shown:
                store.record_shown(dcfg.name, name, shown, cycle.now, issue=digest, sent=channel.sent)
            report.error = failure(f"digest {dcfg.name} -> channel {name}", e, redact)
            store.delivery_failed(dcfg.name, name, report.error, cycle.now, first_window)
            if getattr(e, "retry_after", None):  # asked again only after it, by later runs too
                store.wait_set(waiting, e.retry_after, "Retry-After")
        except Exception as e:  # a bug in one channel must not stop the others (isolation)
            if stops_the_cycle(e):
                raise
            report.error = failure(f"digest {dcfg.name} -> channel {name}", e, redact)
            store.delivery_failed(dcfg.name, name, report.error, cycle.now, first_window)
    return reports


def say_delivered(store, plan: "DigestPlan", channels: list[str], since_day: date | None, digest) -> None:
    """A digest over an explicit window (``--since``) that is empty although papers filed in
    it match says they were delivered already (through ``channels``), not that nothing matched."""
    if digest.matches or not since_day:
        return
    delivered = {p.key: p for name in channels for p in store.delivered_since(plan.dcfg.name, name, since_day)}
    digest.empty_reason = delivered_reason(list(delivered.values()), plan.matchers, since_day) or digest.empty_reason


def dry_run_digest(config: Config, store: Store, plan: DigestPlan, deliver: Deliver) -> list[ChannelReport]:
    """``--dry-run``: build the digest once and print it once per format; send and record nothing.

    The channels of a digest differ only in what their ledgers already hold, so the digest
    shown is that of the union of their papers: everything at least one channel would get.
    It is printed in ``dry_run.print_format`` (``--to``) or else in every format its channels
    send, each rendering on ``dry_run.stdout`` alone (``--to json`` is one JSON array), with a
    ``==>`` banner per format on ``dry_run.stderr``. When nothing would be sent, stdout stays
    empty and stderr says ``digest NAME: no new papers (reason)``.
    """
    dcfg, dry = plan.dcfg, deliver.dry_run
    reports, owners, candidates, revised, older = [], {}, {}, {}, None
    formats: dict[str, list[str]] = {}  # format -> the channels that send it
    for name in dcfg.channels:
        report = ChannelReport(dcfg.name, name)
        reports.append(report)
        try:
            channel = channel_for(config, name, dcfg.formats, dry.stdout)
            for fmt in channel.formats() or ("markdown",):  # apprise, feed: built from the
                formats.setdefault(fmt, []).append(name)    # digest; Markdown shows its content
            new, old, first_window = channel_papers(config, store, dcfg, name, plan.now, deliver.since_day)
            if not new and not older:
                older = left_out(store, dcfg, name, first_window, deliver.since_day)
        except Exception as e:
            if stops_the_cycle(e):
                raise
            report.error = failure(f"digest {dcfg.name} -> channel {name}", e, redact)
            continue
        for p in new:
            candidates.setdefault(p.key, p)
            owners.setdefault(p.key, []).append(report)
        for p in old:
            revised.setdefault(p.key, p)
    revised = [p for key, p in revised.items() if key not in candidates]  # new somewhere wins
    digest = plan.build(list(candidates.values()), revised, older)
    for m in digest.matches:
        for report in owners[m.paper.key]:
            report.papers += 1
    for report in reports:
        report.profiles = digest.profiles
    say_delivered(store, plan, dcfg.channels, deliver.since_day, digest)
    if not digest.matches and not dcfg.send_empty:
        dry.stderr.write(f"digest {dcfg.name}: no new papers ({digest.empty_reason})\n")
        dry.stderr.flush()
        return reports
    if dry.print_format:
        formats = {dry.print_format: formats.get(dry.print_format, [])}
    for fmt, channels in formats.items():
        body = render(digest, fmt, config.settings.templates_dir)
        to = f"; channels: {', '.join(channels)}" if channels else ""
        empty = f"; empty: {digest.empty_reason}" if not digest.matches else ""
        dry.stderr.write(f"==> digest {dcfg.name}, format {fmt} (dry run, not sent{to}{empty})\n")
        dry.stderr.flush()
        dry.stdout.write(body + "\n")
        dry.stdout.flush()
    return reports


def run_once(config: Config, cycle: Cycle, fetch: Fetch | None = None, deliver: Deliver | None = None,
             *, http=None) -> CycleReport:
    """One cycle: fetch the sources of ``fetch``, then build and deliver the digests of
    ``deliver`` (either may be None: ``watcher fetch`` delivers nothing, ``watcher digest``
    fetches nothing). Recorded in the runs table as ``cycle.kind``."""
    report = CycleReport()
    db = config.settings.database
    with write_lock(db, f"watcher {cycle.kind}") as lock:
        lock.acquire(cycle.lock_wait, stop=cycle.stop)
        if cycle.clock:  # stamps must not run behind those of a cycle that held the lock before
            cycle.now = cycle.clock()
        with open_store(config) as store:  # locked past the timeout, read-only, damaged: StoreError
            _run_locked(config, store, cycle, fetch, deliver, report, http)
    return report


def _run_locked(config: Config, store: Store, cycle: Cycle, fetch: Fetch | None,
                deliver: Deliver | None, report: CycleReport, http) -> None:
    run_id = store.start_run(cycle.kind, cycle.now)
    stopped_by = None  # the error that ended the cycle early, if one did
    try:
        if fetch is not None:
            report.sources = fetch_sources(config, store, cycle, fetch, http)
        if any(p.zotero is not None for p in config.profiles.values()):  # docs/zotero.md

            in_cycle(config, store, cycle.now, push_saves=not (deliver and deliver.dry_run))
        if deliver is not None:
            _deliver_digests(config, store, cycle, deliver, report)
        if not (deliver is not None and deliver.dry_run) and not cycle.stop():  # after the deliveries
            _record_selections(config, store, cycle)
        if deliver is not None and not deliver.dry_run and not cycle.stop():  # after the deliveries, never before
            _upkeep(config, store, cycle)
    except BaseException as e:
        stopped_by = str(e) if isinstance(e, WatcherError) else ": ".join(filter(None, (type(e).__name__, str(e))))
        raise
    finally:
        detail = {"sources": [s.__dict__ for s in report.sources],
                  "channels": [{k: v for k, v in c.__dict__.items() if k not in ("rendered", "issue", "files")}
                               | {"profiles": {p.name: p.papers for p in c.profiles}} for c in report.channels]}
        if report.digests:
            detail["digests"] = report.digests
        if report.degraded:
            detail["degraded"] = report.degraded
        if stopped_by:
            detail["error"] = stopped_by
        try:
            store.finish_run(run_id, "ok" if report.ok and not stopped_by else "failed", detail, cycle.now)
        except StoreError as e:  # the error that ended the cycle is the one to report
            log.debug("could not record the end of the run: %s", e)


def _record_selections(config: Config, store: Store, cycle: Cycle) -> None:
    """Record what each profile selects of the last filing days this cycle stored or changed
    papers of, and of those recorded before that are outdated now
    (:func:`watcher.cycle.selections.record_cycle`: what the profile pages show)."""
    _after_deliveries("the profiles' record of matches per day", record_cycle, config, store, cycle)


def _upkeep(config: Config, store: Store, cycle: Cycle) -> None:
    """The store's upkeep when due (:mod:`watcher.cycle.upkeep`)."""
    _after_deliveries("upkeep", upkeep, config, store, cycle)


def _after_deliveries(what: str, step, config: Config, store: Store, cycle: Cycle) -> None:
    """``step(config, store, now, stop=…)``, isolated as a source or a channel is: its failure
    is logged and fails nothing delivered; a database another writer held past the busy
    timeout leaves it to the next cycle; a database that cannot be used still stops the cycle."""
    try:
        step(config, store, cycle.now, stop=cycle.stop)
    except Exception as e:  # noqa: BLE001 - isolated, as a source or a channel is
        if isinstance(e, DatabaseLocked):
            log.warning("%s left to the next cycle: %s", what, e)
            return
        if stops_the_cycle(e):
            raise
        log.warning("%s failed: %s", what, e)


def _deliver_digests(config: Config, store: Store, cycle: Cycle, deliver: Deliver,
                     report: CycleReport) -> None:
    names = deliver.digests if deliver.digests is not None else list(config.digests)
    missing = links_missing(config)  # a degraded digest goes out, never silently
    for name in names:
        if cycle.stop():
            log.info("stopping: digest %s is left for the next run", name)
            continue
        dcfg = config.digests[name]
        try:
            reports = deliver_digest(config, store, dcfg, cycle, deliver)
        except Exception as e:  # its matching or rendering: this digest fails, the next goes on
            if stops_the_cycle(e):
                raise
            report.digests[name] = failure(f"digest {name}", e, redact)
            if not deliver.dry_run:
                store.digest_ran(name, cycle.now, False, report.digests[name])
            continue
        report.channels.extend(reports)
        if missing and any(r.sent for r in reports):
            report.degraded[name] = missing
            log.error("digest %s: %s", name, missing)
        elif missing and deliver.dry_run:
            log.warning("digest %s: %s", name, missing.replace("delivered", "would be delivered"))
        if not deliver.dry_run and len(reports) == len(dcfg.channels):  # not cut short by stop()
            errors = [r.error for r in reports if r.error]
            # nothing could arrive: a run, not a failure (the papers come with the next one), but not "ok"
            starved = SOURCES_FAILED if reports and all(r.empty == SOURCES_FAILED for r in reports) else None
            store.digest_ran(name, cycle.now, not errors, "; ".join(errors) or None,
                             degraded=report.degraded.get(name) or starved)


__all__ = ["Cycle", "CycleReport", "Deliver", "DryRun", "Fetch", "run_once", "fetch_sources",
           "deliver_digest", "open_store", "reading_config", "sample_config", "sample_database", "is_sample",
           "sample_now"]
