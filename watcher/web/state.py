"""What every request of one web app shares: the config, the database, the secrets, caches."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
import secrets
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlparse

from ..matching.compile import Compiled
from ..config import Config, load_config
from ..errors import ConfigError, StoreError
from ..cycle.selections import decided_by, decided_now
from ..store import Store
from ..util.turns import taking_turns

log = logging.getLogger("watcher")


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library: musl, macOS)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def give_back_memory() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; nothing
    elsewhere). The work beside the pages frees what it read when it ends, but the C library
    keeps those pages for the thread's arena: at 300,000 papers, trimming after each such
    work keeps ``serve``'s peak at 132 MB instead of 172 MB over the bench's page set."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _stamp(path) -> tuple | None:
    """What says a file changed: its modification time and size (None when it cannot be read)."""
    try:
        st = Path(path).stat()
    except (OSError, TypeError):
        return None
    return st.st_mtime_ns, st.st_size


def page_deadline() -> float:
    """Seconds a page's statements may run (2; ``$WATCHER_WEB_DEADLINE`` for tests, whose
    machine may be too loaded to answer in 2 s, or that want to reach the deadline sooner)."""
    try:
        return max(0.0, float(os.environ.get("WATCHER_WEB_DEADLINE", "2")))
    except ValueError:
        return 2.0


class Bounded:
    """A cache of at most ``size`` entries (the least recently used goes first), safe to use
    from any thread: every read and write holds its lock, which is never held while a value
    is computed (two threads may compute the same value; the last one kept wins)."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key, value):
        """Keep ``value`` under ``key`` and return it."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


@dataclass
class WebState:
    """The app's shared state (``request.app.state.web``).

    ``password`` None means no login (loopback without ``password_env``). ``secret`` signs the
    session cookie: ``secret_env``'s value, else a random one per process (sessions then end
    with the process). ``prefix`` is the path of ``base_url`` (``/papers`` behind a proxy that
    serves watcher under ``https://example.org/papers``), put in front of every link.
    ``static`` marks the app that ``watcher site`` crawls into static files: no rating buttons
    (no server to record them), and the search page loads the client-side search.
    """

    config: Config
    database: Path
    password: str | None = None
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    static: bool = False
    db_timeout: float = 2.0
    # seconds a page's statements may run (watcher.web.pages.reading)
    query_timeout: float = field(default_factory=page_deadline)
    stopping: threading.Event = field(default_factory=threading.Event)  # set when the server stops
    write_timeout: float = 10.0  # a rating waits this long for the daemon's write to end
    matchers: Compiled = field(default_factory=Compiled)
    # caches, one per purpose, each bounded and locked (pages run in several worker threads)
    inbox_pages: "Bounded" = field(default_factory=lambda: Bounded(16))  # rendered inbox pages
    charts: "Bounded" = field(default_factory=lambda: Bounded(64))  # days counted beside a page, not recorded
    previews: "Bounded" = field(default_factory=lambda: Bounded(128))  # a draft's best matches of a day
    fingerprints: "Bounded" = field(default_factory=lambda: Bounded(64))  # what decides a profile (decided_by)
    flights_lock: threading.Lock = field(default_factory=threading.Lock)  # guards background
    background: dict = field(default_factory=dict)  # key -> the thread working it out (see beside)
    background_turn: threading.Lock = field(default_factory=threading.Lock)  # one works at a time
    serving_now: int = 0  # the views running that are not waiting for work beside them (see pause)
    served_all: threading.Condition = field(default_factory=threading.Condition)  # serving_now fell to 0
    throttle: object = None  # the login Throttle (watcher.web.auth), made by create_app

    config_stamp: tuple | None = None  # the config file's (mtime, size) when it was read
    reload_asked: bool = False  # SIGHUP: read the config again at the next request
    reload_lock: threading.Lock = field(default_factory=threading.Lock)
    config_serial: int = 0  # one more at each reading of the config: a key for what it shapes
    file_database: Path | None = None  # the database the config file named at its last reading

    def __post_init__(self):
        self.config_stamp = _stamp(self.config.path)
        if self.file_database is None:  # given when the config served is not the file's (--sample)
            self.file_database = self.config.settings.database

    def follow(self) -> Config:
        """The config, read again first when its file changed since (``watcher serve`` follows
        edits; SIGHUP asks for it whatever the file's time says). An invalid new config is
        logged and the running one kept; the database served and the address listened on
        never change (a restart does that)."""
        stamp = _stamp(self.config.path)
        if stamp == self.config_stamp and not self.reload_asked:
            return self.config
        with self.reload_lock:
            if stamp == self.config_stamp and not self.reload_asked:
                return self.config
            self.reload_asked, self.config_stamp = False, stamp
            try:
                new = load_config(self.config.path)
            except ConfigError as e:
                log.error("web: the config changed but cannot be used, still serving the previous one: %s", e)
                return self.config
            old = self.config
            if new.settings.database != self.file_database:
                log.warning("web: the config names another database (%s); still serving %s until a restart",
                            new.settings.database, self.database)
            self.file_database = new.settings.database
            self.config = replace(new, settings=replace(new.settings, database=old.settings.database),
                                  web=replace(new.web, host=old.web.host, port=old.web.port, hosts=old.web.hosts))
            self.config_serial += 1
            log.info("web: config read again from %s", self.config.path)
            return self.config

    @property
    def prefix(self) -> str:
        base = self.config.web.base_url
        return urlparse(base).path.rstrip("/") if base else ""

    @property
    def https(self) -> bool:
        return bool(self.config.web.base_url and self.config.web.base_url.startswith("https://"))

    def running(self, key) -> bool:
        """Whether work beside the pages for ``key`` is under way (:meth:`beside`)."""
        with self.flights_lock:
            thread = self.background.get(key)
        return thread is not None and thread.is_alive()

    def beside(self, key, work) -> threading.Thread:
        """The thread working out ``key``: ``work()`` started in a thread of its own unless one
        for ``key`` still runs (a page waits for it as long as it may, and a reload finds what
        it kept). At most one per key, and one working at a time (``background_turn``: the
        others wait their turn), so the memory they take is one computation's, not one per
        profile page visited while they run (at 300,000 papers, ten at once took 200 MB more);
        and each waits for the pages being served before it starts and between its steps
        (:meth:`pause`). Daemon threads, so a server stops without them."""
        with self.flights_lock:
            running = self.background.get(key)
            if running is not None and running.is_alive():
                return running
            for done in [k for k, t in self.background.items() if not t.is_alive()]:  # a draft's key each
                del self.background[done]

            def run():
                try:
                    with self.background_turn, taking_turns(self.pause):
                        try:
                            self.pause()
                            work()
                        finally:
                            give_back_memory()
                except Exception:  # noqa: BLE001 - a page says "still working" and the log says why
                    log.exception("web: working out %s failed", key)

            thread = self.background[key] = threading.Thread(target=run, name=f"watcher-{key}", daemon=True)
            thread.start()
            return thread

    def served(self, view):
        """``view`` counted among the pages being served while it runs (see :meth:`pause`)."""

        @functools.wraps(view)
        def run(*args, **kw):
            self._serving(1)
            try:
                return view(*args, **kw)
            finally:
                self._serving(-1)

        return run

    @contextmanager
    def waiting(self):
        """A page waiting for work beside it: not counted as served meanwhile (it takes no
        turn of the interpreter; the work it waits for must not wait for it)."""
        self._serving(-1)
        try:
            yield
        finally:
            self._serving(1)

    def _serving(self, step: int) -> None:
        with self.served_all:
            self.serving_now += step
            if self.serving_now <= 0:
                self.served_all.notify_all()

    def pause(self) -> None:
        """Between two steps of work beside the pages (a step of papers read, and within a
        learner's fit or a batch's scoring each small step: :mod:`watcher.util.turns`): wait
        while pages are being served, up to a page's deadline each time: the pages' threads
        have the interpreter (one thread of Python code beside them takes it 5 ms at a time).
        The pages go first; a stream of pages slows the work, never stops it. Called for every
        paper scored: with no page being served it returns without taking the lock."""
        if self.serving_now <= 0 and not self.stopping.is_set():
            return
        with self.served_all:
            self.served_all.wait_for(lambda: self.serving_now <= 0 or self.stopping.is_set(), page_deadline())

    def decided_by(self, name: str, store) -> str:
        """What decides profile ``name``'s selection now (:func:`watcher.cycle.selections.decided_by`),
        read without fitting its learner (a fit takes seconds at 2,000 ratings: the profile
        page compares it with the record and leaves the fit to the work beside it); kept
        as long as a compiled matcher would be."""
        key = self.matchers.key(self.config, name, store)
        kept = self.matchers.ready(self.config, name, store, key=key)
        if kept is not None:
            return decided_by(kept)
        found = self.fingerprints.get((name, key))
        return found if found is not None else self.fingerprints.put((name, key), decided_now(self.config, name, store))

    def compiled(self, name: str, store):
        """The compiled matcher of profile ``name`` when it is kept and current, else None."""
        return self.matchers.ready(self.config, name, store)

    def judging(self, name: str, store):
        """The matcher a page judges stored papers with when it must not wait for a learner's
        fit (the rating buttons of a search, a paper, the reading list: which profiles a paper
        belongs to): the profile's compiled matcher when it is kept and current, else the
        profile without its ratings (no fit: at 300,000 papers a rated profile's took seconds,
        and the first search after ``serve`` started fitted every rated profile on its request:
        503), its fit started beside the pages so the next page has it."""
        kept = self.compiled(name, store)
        if kept is not None:
            return kept
        self.fitted_beside(name)
        return self.matcher(name, store, ratings=False)

    def fit_rated_beside(self) -> None:
        """Start fitting every rated profile's learner beside the pages (:meth:`fitted_beside`,
        one at a time, the pages first): when ``serve`` starts, so that a paper's page and the
        rating buttons find them fitted (a fit takes a second or more at 2,000 ratings). A
        database not there yet, or unreadable, leaves it to the pages."""
        try:
            with Store.open(self.database, readonly=True) as store:
                rated = store.rating_counts()
        except StoreError:
            return
        for name in self.config.profiles:
            if rated.get(name):
                self.fitted_beside(name)

    def fitted_beside(self, name: str) -> threading.Thread:
        """The work beside the pages (:meth:`beside`) compiling profile ``name`` as the digests
        do, its learner fitted, and keeping it (:meth:`compiled` has it once done)."""
        def fit():
            with Store.open(self.database, readonly=True) as own:
                self.matcher(name, own)

        return self.beside(("fit", name), fit)

    def matcher(self, name: str, store, ratings: bool = True):
        """The compiled matcher of profile ``name``, as the digests compile it
        (:func:`watcher.matching.compile.compile_profile`: examples, ratings; ``ratings`` False: without
        them), kept until the config, the database's papers or ratings, or an example file
        change."""
        return self.matchers.matcher(self.config, name, store, ratings)
