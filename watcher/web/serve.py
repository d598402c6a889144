"""Running the web app: ``watcher serve`` and ``[web].serve`` inside ``watcher run``."""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from ..config import MIN_PASSWORD, Config, WebConfig, is_loopback, is_loopback_url, parse_listen
from ..present.links import secret_problem
from ..cycle.sampledb import reading_config
from ..errors import ConfigError, WatcherError
from ..store import Store
from ..store.connection import no_database
from ..util.text import shorten

log = logging.getLogger("watcher")


@dataclass
class Plan:
    """What to serve: where, which database, and the secrets read from the environment."""

    web: WebConfig
    database: Path
    password: str | None
    secret: str | None
    note: str | None = None  # said once at start (e.g. serving the sample database)
    config: Config | None = None  # the config served (the sample's with --sample), if not the file's


def plan(config: Config, listen: str | None = None, sample: bool = False, daemon: bool = False) -> Plan:
    """Resolve ``--listen``, the database and the secrets; ConfigError (exit 2) when a
    non-loopback address has no password or a named variable is unset. ``daemon``: the web
    inbox of ``watcher run``, which always serves the daemon's own database (never the sample
    one, even before the daemon's first cycle has created its database)."""
    web = config.web
    if listen:
        try:
            host, port = parse_listen(listen)
        except ValueError as e:
            raise ConfigError(f"--listen: {e}") from e
        web = replace(web, host=host, port=port)
        if not is_loopback(host) and not web.password_env:
            raise ConfigError(f"--listen {listen} is not a loopback address: set web.password_env "
                              "(the web inbox then asks for that password)", path=str(config.path))
    password = secret = None
    if web.password_env:
        password = os.environ.get(web.password_env) or None
        if password is None:
            raise ConfigError(f"environment variable {web.password_env} is not set (it holds the web "
                              "password)", path=str(config.path), key="web.password_env")
        if len(password) < MIN_PASSWORD:
            raise ConfigError(f"the password in {web.password_env} is shorter than {MIN_PASSWORD} "
                              "characters", path=str(config.path), key="web.password_env")
    if web.secret_env:
        if problem := secret_problem(web):
            raise ConfigError(f"{problem} (it signs sessions and links)", path=str(config.path),
                              key="web.secret_env")
        secret = os.environ[web.secret_env]
    if web.base_url and password is None and not is_loopback_url(web.base_url):
        log.warning("web.base_url is set but web.password_env is not: behind a reverse proxy every "
                    "request comes from loopback, so anyone who reaches %s can read the inbox",
                    web.base_url)
    if daemon:
        return Plan(web, config.settings.database, password, secret)
    chosen, which = reading_config(config, sample)  # the one rule the reading commands share
    note = f"serving {which}" if which else None
    return Plan(web, chosen.settings.database, password, secret, note, chosen)


def migrate(database: Path) -> None:
    """Bring the database's schema up to date (the search index) before serving; a database
    that cannot be opened now is served anyway (its pages say 503 until it can)."""
    if not database.exists():
        log.warning("web: %s; pages answer 503 until it exists", no_database(database))
        return
    try:
        Store.open(database).close()
    except WatcherError as e:
        log.error("web: %s", e)


def bind(web: WebConfig) -> socket.socket:
    """The listening socket (an address in use is a one-line error, exit 1)."""
    family = socket.AF_INET6 if ":" in web.host else socket.AF_INET
    # IPPROTO_TCP spelled out: asyncio turns Nagle's algorithm off only on sockets that say
    # TCP, and with it on, each response waited ~40 ms for a delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((web.host, web.port))
    except OSError as e:
        sock.close()
        raise WatcherError(f"cannot listen on {web.listen}: {e.strerror}") from e
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def address(web: WebConfig, sock: socket.socket) -> str:
    """The URL to open."""
    port = sock.getsockname()[1]
    host = f"[{web.host}]" if ":" in web.host else web.host
    if host in ("0.0.0.0", "[::]"):
        host = "127.0.0.1" if host == "0.0.0.0" else "[::1]"
    return f"http://{host}:{port}/"


SWITCH_INTERVAL = 0.001  # seconds a thread may keep the interpreter lock while another waits


READ_TIMEOUT = 10.0  # seconds a client has to send a whole request (headers and body)


def guarded_protocol(read_timeout: float):
    """uvicorn's h11 protocol with a read timeout: a connection gets ``read_timeout`` seconds
    from its start, or from the first byte of its next request, to send the whole request;
    one that has not by then is closed. uvicorn itself closes only idle keep-alive
    connections, so a client sending its headers a byte at a time (slowloris) or never, or a
    body it never finishes, kept its connection and a file handle for as long as it liked."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    done = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)

    class Guarded(H11Protocol):
        _read_timer = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state in done:  # the whole request is in
                self._disarm()
            else:
                self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._read_timer is None:
                self._read_timer = self.loop.call_later(read_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._read_timer is not None:
                self._read_timer.cancel()
                self._read_timer = None

        def _too_slow(self) -> None:
            self._read_timer = None
            if self.conn.their_state not in done and not self.transport.is_closing():
                self.transport.close()  # a page waiting for the body sees the client gone

    return Guarded


class QuietDisconnects:
    """The app, with a request whose client went away before sending all of it (a body cut by
    the read timeout of :func:`guarded_protocol`, or a client closing mid-upload) said in one
    info line: Starlette raises ``ClientDisconnect`` for it, which uvicorn logged as an
    "Exception in ASGI application" with a traceback of 40 lines, per connection. ``state``
    is the app's."""

    def __init__(self, app):
        self.app = app
        self.state = app.state

    async def __call__(self, scope, receive, send):
        from starlette.requests import ClientDisconnect

        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            log.info("web: %s %s: the client went away before sending its whole request",
                     scope.get("method"), shorten(scope.get("path", ""), 200))


def server(config: Config, p: Plan, sock: socket.socket, read_timeout: float = READ_TIMEOUT):
    """A uvicorn Server over the app (not started); a client must send each request within
    ``read_timeout`` seconds (:func:`guarded_protocol`)."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):
            """A stop signal ends the server cleanly (exit 0); uvicorn would raise it again
            once stopped, so that the process ended by the signal."""
            super().handle_exit(sig, frame)
            app.state.web.stopping.set()  # statements still running stop now (pages.reading)
            if isinstance(getattr(self, "_captured_signals", None), list):
                self._captured_signals.clear()

    from .app import create_app

    # the app answers to the address it listens on (``--listen`` included)
    app = create_app(replace(p.config or config, web=p.web), p.database, password=p.password, secret=p.secret,
                     configured=config.settings.database)
    proxied = config.web.proxy  # behind a reverse proxy: trust its X-Forwarded-* from loopback
    # log_config=None: uvicorn's own lines go through watcher's log (one line each, secrets
    # masked: watcher.util.logs), not through a format and a stderr handler of uvicorn's
    cfg = uvicorn.Config(QuietDisconnects(app), log_level="warning", log_config=None, access_log=False, lifespan="on",
                         proxy_headers=proxied, forwarded_allow_ips="127.0.0.1,::1" if proxied else None,
                         server_header=False, timeout_graceful_shutdown=5,
                         http=guarded_protocol(read_timeout), timeout_keep_alive=5)
    return Server(cfg)


def serve(config: Config, listen: str | None = None, sample: bool = False, echo=print) -> int:
    """``watcher serve``: bind, say the URL, serve until SIGINT / SIGTERM. Returns 0."""
    p = plan(config, listen, sample)
    migrate(p.database)
    sock = bind(p.web)
    if p.note:
        echo(f"watcher serve: {p.note}")
    echo(f"watcher serve: open {address(p.web, sock)}"
         + (" (log in with the password in $" + p.web.password_env + ")" if p.password else ""))
    srv = server(config, p, sock)
    web = srv.config.app.state.web
    if hasattr(signal, "SIGHUP"):  # read the config again at the next request
        signal.signal(signal.SIGHUP, lambda signum, frame: setattr(web, "reload_asked", True))
    # pages run in worker threads: one computing (the buttons of 300 profiles, a preview) now
    # hands the interpreter lock on every millisecond instead of every 5, so the event loop and
    # /healthz wait less behind it (bench_concurrency.py, paired runs: healthz p95 118 and
    # 99 ms -> 74 and 55 ms, the slow pages no slower)
    sys.setswitchinterval(SWITCH_INTERVAL)
    srv.run(sockets=[sock])
    return 0


@contextmanager
def background(config: Config) -> Iterator[None]:
    """With ``[web].serve = true``: the web inbox in a thread of this process for the duration
    (``watcher run``); otherwise nothing."""
    if not config.web.serve:
        yield
        return
    p = plan(config, daemon=True)
    migrate(p.database)
    sock = bind(p.web)
    srv = server(config, p, sock)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, name="watcher-web",
                              daemon=True)
    thread.start()
    log.info("web inbox on %s", address(p.web, sock))
    try:
        yield
    finally:
        srv.should_exit = True
        srv.config.app.state.web.stopping.set()
        thread.join(6)
        sock.close()
