"""One cycle, shared by ``watcher once``, ``watcher run``, ``fetch`` and ``digest``.

The flow, written down once::

    run_once(config, digests, now):
        take the write lock beside the database           # waits while another cycle writes
        store = open the database
        for each source:                                  # isolated: one failing does not stop others
            state = store.source_state(source)
            result = source.fetch(state)                  # HTTP + parse; SourceError on failure
            counts = store.upsert(result.papers, now)     # identity + merge; new / updated / unchanged
            store.source_ok(source, result.state, counts) # or store.source_failed(source, error)
        for each digest (all, the named ones, or the due ones):  # stop() is checked between steps
            matchers = the digest's profiles, compiled once
            for each channel of the digest:               # isolated too
                watermark = last successful delivery through (digest, channel)
                candidates = stored papers listed as new, in the window, not in the ledger
                digest = assemble(candidates, matchers)   # pure: what goes in, in which order
                if empty: the reason (nothing announced / matched / an arXiv holiday)
                if empty and not send_empty: move the watermark, send nothing
                channel.send(render(digest, each format)) # DeliveryError on failure
                store.record_delivery(...)                # ledger + watermark, only after acceptance

Nothing is recorded as delivered before a channel accepted it, so a failed or killed run leaves
the papers for the next run, and a delivered paper is never delivered again through that channel.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path
from typing import Callable, TextIO

from .assemble import assemble, digest_title, window_start
from .config import Config, DigestConfig
from .deliver import channel_for, redact
from .errors import DeliveryError, InputError, SourceError, StoreError
from .links import links_for
from .lock import write_lock
from .match import ProfileMatcher
from .render import render
from .schedule import quiet_day_reason
from .sources import SourceContext, make_source
from .store import Store, database_error, parse_time

log = logging.getLogger("watcher")


@dataclass
class SourceReport:
    """The outcome of fetching one source."""

    name: str
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    error: str | None = None


@dataclass
class ChannelReport:
    """The outcome of one digest through one channel."""

    digest: str
    channel: str
    papers: int = 0
    sent: bool = False
    error: str | None = None
    rendered: dict[str, str] = field(default_factory=dict)


@dataclass
class CycleReport:
    """Everything one cycle did; ``ok`` is False when any source or channel failed."""

    sources: list[SourceReport] = field(default_factory=list)
    channels: list[ChannelReport] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no source and no channel failed."""
        return not any(s.error for s in self.sources) and not any(c.error for c in self.channels)


@dataclass
class Cycle:
    """Options of one cycle. ``now`` is an aware datetime (the clock is read by the caller)."""

    now: datetime
    digests: list[str] | None = None
    sources: list[str] | None = None
    dry_run: bool = False
    sample: bool = False
    since: datetime | None = None
    since_day: date | None = None
    print_format: str | None = None
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)  # the dry run's banners and notes
    kind: str = "once"  # the runs table's kind: "once" or "run" (the daemon)
    stop: Callable[[], bool] = lambda: False  # the daemon's shutdown: checked between steps
    lock_wait: float = 900.0  # seconds to wait for another cycle's write lock
    clock: Callable[[], datetime] | None = None  # when given, ``now`` is re-read once locked


def sample_database(config: Config) -> Path:
    """Where ``--sample`` keeps its own database, so samples never mix with real history."""
    db = config.settings.database
    return db.with_name(db.stem + "-sample" + db.suffix)


def sample_now(config: Config) -> datetime:
    """The end of the sample's newest day in the configured time zone (``--sample``'s today)."""
    from .sources.sample import read_samples, sample_today

    day = sample_today(read_samples())
    return datetime.combine(day, time(23, 59), tzinfo=config.settings.timezone).astimezone(timezone.utc)


def open_store(config: Config, sample: bool = False) -> Store:
    """The database of this config (or its sample database)."""
    return Store.open(sample_database(config) if sample else config.settings.database)


def fetch_sources(config: Config, store: Store, cycle: Cycle, http=None) -> list[SourceReport]:
    """Fetch and store every (selected) source, each in isolation."""
    ctx = SourceContext(now=cycle.now, http=http, user_agent=config.settings.user_agent,
                        since=cycle.since)
    if cycle.sample:
        from .config import SourceConfig
        from .sources.sample import SampleSource

        sources = [SampleSource(SourceConfig(name="sample", type="sample"), ctx)]
    else:
        names = cycle.sources or list(config.sources)
        sources = [make_source(config.sources[n], ctx) for n in names]
    reports = []
    for source in sources:
        if cycle.stop():
            log.info("stopping: leaving the remaining sources for the next run")
            break
        report = SourceReport(source.name)
        try:
            result = source.fetch(store.source_state(source.name))
            for paper in result.papers:
                paper.source = source.name
            counts = store.upsert(result.papers, cycle.now, backfill=cycle.since is not None)
            store.source_ok(source.name, result.state, counts.summary(), cycle.now)
            report.new, report.updated = len(counts.new), len(counts.updated)
            report.unchanged = counts.unchanged
            log.info("source %s: %d new, %d updated, %d unchanged", source.name,
                     report.new, report.updated, report.unchanged)
        except (SourceError, InputError) as e:
            report.error = str(e)
            store.source_failed(source.name, report.error, cycle.now)
            log.error("source %s failed: %s", source.name, e)
        reports.append(report)
    return reports


def load_example_papers(profile, lookup) -> list:
    """Resolve a profile's ``examples`` to papers: a path (relative to the config) is read as a
    listing, or as BibTeX when it ends in ``.bib`` (a stored paper stands in for its entry, as it
    has the abstract); anything else is an arXiv id looked up with ``lookup(id) -> Paper | None``."""
    from . import formats
    from .models import parse_arxiv_id

    papers = []
    for example in profile.examples:
        path = profile.base_dir / example
        ident = parse_arxiv_id(example)
        if ident and not path.exists():
            found = lookup(ident[0])
            if found:
                papers.append(found)
            else:
                log.warning("profile %s: example %s is not known yet", profile.name, example)
            continue
        try:
            if path.suffix.lower() == ".bib":  # papers one likes, e.g. exported from Zotero
                from .bibtex import read as read_bib

                papers.extend(p.arxiv_id and lookup(p.arxiv_id) or p
                              for p in read_bib(path.read_bytes(), str(path)))
            else:
                papers.extend(formats.read(path.read_bytes(), str(path)).papers)
        except OSError as e:
            raise InputError(f"profile {profile.name}: example file {path}: {e.strerror}") from None
    return papers


def matchers_for(config: Config, profile_names, lookup, store: Store | None = None) -> list[ProfileMatcher]:
    """Compiled matchers for the named profiles; ``lookup`` resolves example ids; with a
    ``store``, each profile also learns from its ratings (:mod:`watcher.learn`)."""
    return [ProfileMatcher(config.profiles[n], load_example_papers(config.profiles[n], lookup),
                           feedback=feedback_for(store, n) if store is not None else None)
            for n in profile_names]


def feedback_for(store: Store, profile: str):
    """The ratings of ``profile`` as the matcher's examples and counter-examples."""
    from .learn import Feedback
    from .ratings import rated_papers

    return Feedback(*rated_papers(store, profile))


def channel_papers(config: Config, store: Store, dcfg: DigestConfig, channel: str,
                   cycle: Cycle) -> tuple[list, list, date | None]:
    """What (digest, channel) has not had yet: (candidates, revised, the first run's window
    start or None)."""
    tz = config.settings.timezone
    state = store.channel_state(dcfg.name, channel)
    watermark = parse_time(state.get("watermark"))
    since = None  # after the first run: everything stored since the last successful
    # delivery, whatever its date (late announcements, holidays, long outages)
    first_window = None
    if watermark is None:  # the first run reaches back lookback; if it failed, its
        # window is kept for the retries
        since = (date.fromisoformat(state["first_window"]) if state.get("first_window")
                 else window_start(cycle.now, dcfg.lookback, tz))
        first_window = since
    if cycle.since_day:
        since, watermark = cycle.since_day, None
    candidates = store.candidates(dcfg.name, channel, since_day=since, stored_after=watermark)
    revised = store.revised(dcfg.name, channel, after=watermark) if watermark else []
    return candidates, revised, first_window


def deliver_digest(config: Config, store: Store, dcfg: DigestConfig, cycle: Cycle) -> list[ChannelReport]:
    """Build the digest for each channel of ``dcfg`` and deliver it (see module docstring);
    with ``cycle.dry_run``, print it once instead (:func:`dry_run_digest`)."""
    if cycle.dry_run:
        return dry_run_digest(config, store, dcfg, cycle)
    tz = config.settings.timezone
    day = cycle.now.astimezone(tz).date()
    title = digest_title(dcfg, config.profiles)
    matchers = matchers_for(config, dcfg.profiles, store.get, store)
    reports = []
    for name in dcfg.channels:
        if cycle.stop():
            break
        report = ChannelReport(dcfg.name, name)
        reports.append(report)
        first_window = None
        try:
            channel = channel_for(config, name, dcfg.formats, cycle.stdout)
            candidates, revised, first_window = channel_papers(config, store, dcfg, name, cycle)
            digest = assemble(dcfg.name, title, day, candidates, matchers, cycle.now, revised)
            digest.links = links_for(config)
            report.papers = len(digest.matches)
            if not digest.matches:
                digest.empty_reason = quiet_day_reason(dcfg, cycle.now) or digest.empty_reason
            if not digest.matches and not dcfg.send_empty:
                log.info("digest %s -> %s: %s; nothing sent", dcfg.name, name, digest.empty_reason)
                store.record_delivery(dcfg.name, name, [], cycle.now)
                continue
            report.rendered = {fmt: render(digest, fmt, config.settings.templates_dir)
                               for fmt in channel.formats()}
            channel.send(digest, report.rendered)
            store.record_delivery(dcfg.name, name, digest.papers, cycle.now)
            report.sent = True
            if digest.matches:
                log.info("digest %s -> %s: delivered %d papers", dcfg.name, name, report.papers)
            else:  # send_empty: the text format has no place for the reason, the log has
                log.info("digest %s -> %s: delivered an empty digest (%s)", dcfg.name, name,
                         digest.empty_reason)
        except (DeliveryError, InputError) as e:
            report.error = redact(str(e))
            store.delivery_failed(dcfg.name, name, report.error, cycle.now, first_window)
            log.error("digest %s -> channel %s failed: %s", dcfg.name, name, report.error)
        except (StoreError, sqlite3.Error):  # the database, not the channel: the cycle stops
            raise
        except Exception as e:  # a bug in one channel must not stop the others (isolation)
            report.error = redact(f"internal error: {type(e).__name__}: {e}")
            store.delivery_failed(dcfg.name, name, report.error, cycle.now, first_window)
            log.error("digest %s -> channel %s failed: %s", dcfg.name, name, report.error,
                      exc_info=log.isEnabledFor(logging.DEBUG))
    return reports


def dry_run_digest(config: Config, store: Store, dcfg: DigestConfig, cycle: Cycle) -> list[ChannelReport]:
    """``--dry-run``: build the digest once and print it once per format; send and record nothing.

    The channels of a digest differ only in what their ledgers already hold, so the digest
    shown is that of the union of their papers: everything at least one channel would get.
    It is printed in ``cycle.print_format`` (``--to``) or else in every format its channels
    send, each rendering on ``cycle.stdout`` alone (``--to json`` is one JSON array), with a
    ``==>`` banner per format on ``cycle.stderr``. When nothing would be sent, stdout stays
    empty and stderr says ``digest NAME: no new papers (reason)``.
    """
    tz = config.settings.timezone
    day = cycle.now.astimezone(tz).date()
    title = digest_title(dcfg, config.profiles)
    matchers = matchers_for(config, dcfg.profiles, store.get, store)
    reports, owners, candidates, revised = [], {}, {}, {}
    formats: dict[str, list[str]] = {}  # format -> the channels that send it
    for name in dcfg.channels:
        report = ChannelReport(dcfg.name, name)
        reports.append(report)
        try:
            channel = channel_for(config, name, dcfg.formats, cycle.stdout)
            for fmt in channel.formats():
                formats.setdefault(fmt, []).append(name)
            new, old, _ = channel_papers(config, store, dcfg, name, cycle)
        except (DeliveryError, InputError) as e:
            report.error = redact(str(e))
            log.error("digest %s -> channel %s: %s", dcfg.name, name, report.error)
            continue
        for p in new:
            candidates.setdefault(p.key, p)
            owners.setdefault(p.key, []).append(report)
        for p in old:
            revised.setdefault(p.key, p)
    revised = [p for key, p in revised.items() if key not in candidates]  # new somewhere wins
    digest = assemble(dcfg.name, title, day, list(candidates.values()), matchers, cycle.now, revised)
    digest.links = links_for(config)
    for m in digest.matches:
        for report in owners[m.paper.key]:
            report.papers += 1
    if not digest.matches:
        digest.empty_reason = quiet_day_reason(dcfg, cycle.now) or digest.empty_reason
        if not dcfg.send_empty:
            cycle.stderr.write(f"digest {dcfg.name}: no new papers ({digest.empty_reason})\n")
            cycle.stderr.flush()
            return reports
    if cycle.print_format:
        formats = {cycle.print_format: formats.get(cycle.print_format, [])}
    for fmt, channels in formats.items():
        body = render(digest, fmt, config.settings.templates_dir)
        to = f"; channels: {', '.join(channels)}" if channels else ""
        empty = f"; empty: {digest.empty_reason}" if not digest.matches else ""
        cycle.stderr.write(f"==> digest {dcfg.name}, format {fmt} (dry run, not sent{to}{empty})\n")
        cycle.stderr.flush()
        cycle.stdout.write(body + "\n")
        cycle.stdout.flush()
    return reports


def run_once(config: Config, cycle: Cycle, *, fetch: bool = True, http=None) -> CycleReport:
    """One cycle: fetch every source, then build and deliver the selected digests."""
    report = CycleReport()
    db = sample_database(config) if cycle.sample else config.settings.database
    with write_lock(db, f"watcher {cycle.kind}") as lock:
        lock.acquire(cycle.lock_wait, stop=cycle.stop)
        if cycle.clock:  # stamps must not run behind those of a cycle that held the lock before
            cycle.now = cycle.clock()
        try:
            with open_store(config, cycle.sample) as store:
                _run_locked(config, store, cycle, report, fetch, http)
        except sqlite3.Error as e:  # locked past the timeout, read-only, damaged: stop the cycle
            raise database_error(db, e) from None
    return report


def _run_locked(config: Config, store: Store, cycle: Cycle, report: CycleReport, fetch: bool,
                http) -> None:
    run_id = store.start_run(cycle.kind, cycle.now)
    try:
        if fetch:
            report.sources = fetch_sources(config, store, cycle, http)
        names = cycle.digests if cycle.digests is not None else list(config.digests)
        for name in names:
            if cycle.stop():
                log.info("stopping: digest %s is left for the next run", name)
                continue
            dcfg = config.digests[name]
            reports = deliver_digest(config, store, dcfg, cycle)
            report.channels.extend(reports)
            if not cycle.dry_run and len(reports) == len(dcfg.channels):  # not cut short by stop()
                errors = [r.error for r in reports if r.error]
                store.digest_ran(name, cycle.now, not errors, "; ".join(errors) or None)
    finally:
        try:
            store.finish_run(run_id, "ok" if report.ok else "failed", {
                "sources": [s.__dict__ for s in report.sources],
                "channels": [{k: v for k, v in c.__dict__.items() if k != "rendered"}
                             for c in report.channels]}, cycle.now)
        except sqlite3.Error as e:  # the error that ended the cycle is the one to report
            log.debug("could not record the end of the run: %s", e)


__all__ = ["Cycle", "CycleReport", "run_once", "fetch_sources", "deliver_digest", "open_store",
           "sample_now"]
