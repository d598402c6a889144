"""``watcher run``: the daemon.

How it runs, written down once::

    start:
        take <database>.lock or refuse         # one daemon per database (lock.py)
        load the config; log to stderr, its secrets masked (logs.configure)
        catch up: every digest whose last scheduled time passed without a successful run
                  (digests table, schedule.due_digests) is queued to run at once
        APScheduler (BackgroundScheduler): one job per digest, DigestTrigger (schedule.py);
                  a firing only queues the digest's name
        runner thread: takes queued names, waits GATHER seconds for digests firing together,
                  then runs one cycle for all of them: run_once(fetch sources once, deliver each)
        main thread: waits for signals
    SIGHUP:   reload the config; invalid -> log why and keep the old one; valid -> reschedule
              (a digest added or rescheduled by the reload catches up like at start)
    SIGTERM / SIGINT: stop scheduling, ask the running cycle to stop at its next step (a
              delivery in flight finishes), wait up to STOP_GRACE seconds, exit 0. Whatever was
              not delivered stays for the next run (the ledger is written only after delivery).

One runner means a slow cycle never overlaps another; a digest firing again while queued or
running is queued once (coalesced). The database, not APScheduler's memory job store, is the
truth about what ran.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import socket
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..config import Config, load_config
from ..errors import ConfigError, DatabaseLocked, LockBusy, WatcherError
from .lock import daemon_lock
from ..util.logs import configure
from ..models import now_utc
from ..util.schedule import due_digests, trigger_for
from ..store import Store
from ..util.text import plural
from .pipeline import Cycle, Deliver, Fetch, run_once

log = logging.getLogger("watcher")

GATHER = 0.3  # seconds a firing waits for other digests due at the same moment
STOP_GRACE = 8.0  # seconds a stop waits for the running cycle (systemd allows 15, spec 10)
WAKE_EVERY = 30  # seconds: re-check fire times this often (after suspend, clock jumps)
LOCK_RETRIES = (10.0, 30.0, 60.0)  # seconds before each new try of a cycle the database lock stopped


def notify(state: str) -> None:
    """Tell systemd (Type=notify) about our state, when it listens; otherwise do nothing."""
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(addr)
            s.sendall(state.encode())
    except OSError as e:
        log.debug("cannot notify systemd: %s", e)


def _schedule_key(dcfg) -> tuple:
    return (dcfg.schedule, dcfg.every)


class Daemon:
    """One ``watcher run`` process. ``open`` takes the lock and loads the config, ``serve``
    runs until a stop signal; ``run_digests`` is the job (the benchmark calls it directly)."""

    def __init__(self, config_path: Path, clock: Callable[[], datetime] = now_utc,
                 log_level: str = "warning"):
        self.config_path = Path(config_path)
        self.clock = clock
        self.log_level = log_level  # the daemon logs to stderr, each config's secrets masked
        self.config: Config | None = None
        self.lock = None
        self.scheduler = None
        self._signals: queue.SimpleQueue = queue.SimpleQueue()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._runner: threading.Thread | None = None
        self.cycles = 0
        self.lock_retries = LOCK_RETRIES  # waits before each retry of a cycle stopped by the lock

    # --- lifecycle ------------------------------------------------------------------------

    def open(self, config: Config | None = None) -> None:
        """Load the config and take the daemon lock of its database (LockBusy: refuse)."""
        self.config = config or load_config(self.config_path)
        configure(self.log_level, daemon=True, config=self.config)
        db = self.config.settings.database
        self.lock = daemon_lock(db)
        if not (self.lock.try_acquire() or (time.sleep(0.5) or self.lock.try_acquire())):
            raise LockBusy(f"another watcher run is using {db} ({self.lock.holder() or 'unknown process'}); "
                           "stop it first (e.g. systemctl stop watcher) or give this one another database")

    def close(self) -> None:
        """Release the daemon lock."""
        if self.lock:
            self.lock.release()

    def serve(self) -> int:
        """Catch up, schedule, and wait for signals until SIGTERM / SIGINT. Returns 0."""
        from apscheduler.schedulers.background import BackgroundScheduler

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda signum, frame: self._signals.put(signum))
        self._runner = threading.Thread(target=self._run_queue, name="watcher-runner", daemon=True)
        self._runner.start()
        self.scheduler = BackgroundScheduler(timezone=self.config.settings.timezone)
        self.scheduler.add_job(lambda: None, "interval", seconds=WAKE_EVERY, id="__wake__")
        log.info("watcher run: started (pid %d, config %s, database %s, %s)", os.getpid(),
                 self.config_path, self.config.settings.database, plural(len(self.config.digests), "digest"))
        self._schedule(self.config, catch_up=set(self.config.digests))
        self.scheduler.start()
        notify("READY=1")
        while True:
            try:
                signum = self._signals.get(timeout=1.0)
            except queue.Empty:
                continue
            if signum == signal.SIGHUP:
                self.reload()
            else:
                return self.stop(signal.Signals(signum).name)

    def stop(self, why: str) -> int:
        """Stop scheduling, let the running cycle end at its next step, exit within STOP_GRACE."""
        log.info("%s: stopping", why)
        notify("STOPPING=1")
        self._stopping.set()
        if self.scheduler:
            self.scheduler.shutdown(wait=False)
        self._queue.put(None)
        if self._runner:
            self._runner.join(STOP_GRACE)
            if self._runner.is_alive():
                log.warning("the running cycle did not stop within %.0fs; exiting anyway: what it had "
                            "not delivered stays for the next run", STOP_GRACE)
                logging.shutdown()
                os._exit(0)
        self.close()
        log.info("stopped")
        return 0

    def reload(self) -> None:
        """SIGHUP: load the config again; keep the running one when the new one is invalid."""
        notify("RELOADING=1")
        try:
            new = load_config(self.config_path)
            if new.settings.database != self.config.settings.database:
                raise ConfigError("the database cannot change on reload (restart watcher for that)",
                                  path=str(self.config_path), key="watcher.database")
        except ConfigError as e:
            log.error("reload failed, still running the previous config: %s", e)
            notify("READY=1")
            return
        old = self.config
        changed = {n for n, d in new.digests.items()
                   if n not in old.digests or _schedule_key(old.digests[n]) != _schedule_key(d)}
        self.config = new
        try:
            self._schedule(new, catch_up=changed)  # reads the database before changing any job
        except WatcherError as e:
            self.config = old
            log.error("reload failed, still running the previous config: %s", e)
            notify("READY=1")
            return
        configure(self.log_level, daemon=True, config=new)
        log.info("config reloaded from %s (%s)", self.config_path, plural(len(new.digests), "digest"))
        notify("READY=1")

    # --- scheduling -------------------------------------------------------------------------

    def _last_success(self, config: Config) -> dict[str, datetime | None]:
        with Store.open(config.settings.database) as store:
            return store.last_successes(config.digests)

    def _schedule(self, config: Config, catch_up: set[str]) -> None:
        """(Re)create one job per digest; queue the digests of ``catch_up`` that missed a run.
        Reads the database first: when that fails, no job has changed."""
        now = self.clock()
        last = self._last_success(config)
        due = due_digests(config, last, now, only=catch_up)
        due_names = {c.name for c in due}
        for job in self.scheduler.get_jobs():
            if job.id != "__wake__":
                job.remove()
        tz = config.settings.timezone
        for name, dcfg in config.digests.items():
            anchor = now if name in due_names else (last.get(name) or now)
            self.scheduler.add_job(self._fire, trigger_for(dcfg, tz, anchor), args=[name], id=name,
                                   name=f"digest {name}", max_instances=1, coalesce=True,
                                   misfire_grace_time=None, replace_existing=True)
        for c in due:
            if c.missed:
                log.info("digest %s: missed its run at %s; running it now", c.name,
                         c.missed.astimezone(tz).isoformat(timespec="minutes"))
            else:
                log.info("digest %s: has never run; running it now", c.name)
            self._queue.put(c.name)

    def _fire(self, name: str) -> None:
        """The APScheduler job: queue the digest for the runner (never blocks)."""
        log.debug("digest %s: fired", name)
        self._queue.put(name)

    # --- the runner -------------------------------------------------------------------------

    def _run_queue(self) -> None:
        while True:
            name = self._queue.get()
            if name is None or self._stopping.is_set():
                return
            names = [name]
            deadline = time.monotonic() + GATHER
            while (left := deadline - time.monotonic()) > 0:
                try:
                    more = self._queue.get(timeout=left)
                except queue.Empty:
                    break
                if more is None:
                    return
                if more not in names:
                    names.append(more)
            self.run_digests(names)

    def run_digests(self, names: list[str]) -> None:
        """The job: one cycle (fetch every source once, deliver each named digest). Errors are
        logged and stored; the daemon carries on."""
        config = self.config
        names = [n for n in names if n in config.digests]  # a reload may have removed some
        if not names or self._stopping.is_set():
            return
        started = time.monotonic()
        log.info("cycle: %s", ", ".join(names))
        try:
            for attempt in range(1, len(self.lock_retries) + 2):
                try:
                    report = run_once(config, Cycle(now=self.clock(), kind="run", stop=self._stopping.is_set,
                                                    clock=self.clock), Fetch(), Deliver(digests=names))
                    break
                except DatabaseLocked as e:  # another program's write outlasted the wait: soon again,
                    if attempt > len(self.lock_retries):  # not at the next firing (often tomorrow)
                        raise
                    delay = self.lock_retries[attempt - 1]
                    log.warning("cycle for %s: %s; trying again in %gs (retry %d of %d)",
                                ", ".join(names), e, delay, attempt, len(self.lock_retries))
                    if self._stopping.wait(delay):
                        return
        except WatcherError as e:
            log.error("cycle for %s failed: %s", ", ".join(names), e)
            return
        except Exception as e:  # a bug must not end the daemon; the next firing tries again
            log.error("cycle for %s crashed: %s: %s", ", ".join(names), type(e).__name__, e,
                      exc_info=e)
            return
        finally:
            self.cycles += 1
        failed = [s.name for s in report.sources if s.error] + list(report.digests) + \
            [f"{c.digest}->{c.channel}" for c in report.channels if c.error]
        sent = sum(1 for c in report.channels if c.sent)
        log.info("cycle done in %.1fs: %s, %s%s", time.monotonic() - started,
                 plural(len(report.sources), "source"), plural(sent, "delivery", "deliveries"),
                 f"; failed: {', '.join(failed)}" if failed else "")


def run_daemon(config: Config, log_level: str = "info") -> int:
    """``watcher run``: open, serve, close. Returns the exit status."""
    daemon = Daemon(config.path, log_level=log_level)
    daemon.open(config)
    try:
        return daemon.serve()
    finally:
        daemon.close()


__all__ = ["Daemon", "run_daemon", "notify"]
