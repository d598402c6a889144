"""The app factory: the page areas, the middleware and the error pages.

Adding an area of pages is a module with ``routes`` (and, for pages that need no login,
``PUBLIC`` path prefixes) plus its name in :data:`AREAS`.
"""

from __future__ import annotations

import importlib
import logging
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from ..config import Config
from ..errors import InputError, StoreError
from ..present.render import shipped_templates_dir
from . import sessions
from .auth import PUBLIC, AuthGate, Throttle
from .guard import RequestGuard, trusted_hosts
from .pages import environment, json_page, page, wants_json
from .state import WebState
from ..matching.docfreq import default_doc_freq

log = logging.getLogger("watcher")

AREAS = ("auth", "inbox", "digests", "papers", "search", "profiles", "status", "feeds", "ratings")

CSP = ("default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY"),
           (b"cache-control", b"no-store")]


class SecurityHeaders:
    """ASGI middleware: the Content-Security-Policy (no script at all, styles only from the
    app's own stylesheet) and its companions on every response."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    (k, v) for k, v in HEADERS if k not in names]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _http_error(request: Request, exc: HTTPException):
    if wants_json(request):
        return json_page({"error": exc.detail}, exc.status_code)
    titles = {404: "Not found", 403: "Forbidden", 405: "Method not allowed", 400: "Bad request",
              410: "Link expired", 413: "Too large", 429: "Too many requests", 503: "Unavailable"}
    return page(request, "error.html", status_code=exc.status_code,
                title=titles.get(exc.status_code, "Error"), message=exc.detail)


def _unavailable(request: Request, exc: Exception):
    log.error("web: %s %s: 503: %s", request.method, request.url.path, exc)
    return page(request, "error.html", status_code=503, title="Database unavailable",
                message=str(exc))


def _config_problem(request: Request, exc: InputError):
    """A problem of the config a page needs (an example file removed since the start): said
    in words, as ``watcher check`` would say it."""
    log.error("web: %s %s: %s", request.method, request.url.path, exc)
    return page(request, "error.html", status_code=500, title="Configuration problem",
                message=f"{exc}; fix the config (watcher check) and reload the page")


# Pages run in worker threads (SQLite is blocking), at most THREADS at once. Past a few, the
# interpreter lock serialises them anyway and each thread's waits for it grow: with 20 clients
# on 2 cores (bench_web.py) 8 threads gave p95 137 ms for searches, 4 gave 103-106, 3 gave
# 94-97 and 20% more requests a second; /healthz has threads of its own (status.HEALTH_THREADS).
THREADS = 3


def warm_up() -> None:
    """What every first request would otherwise pay for, done once before the first: each web
    template compiled (0.3-1 s in all) and the matcher's table of word frequencies read."""
    env = environment()
    for name in env.list_templates(filter_func=lambda n: n.endswith(".html")):
        env.get_template(name)
    default_doc_freq()


@asynccontextmanager
async def lifespan(app):
    """At start: at most THREADS pages at once (each holds a connection and its own memory
    arena; past a few, the interpreter lock serialises them anyway); the templates compiled
    (:func:`warm_up`); the rated profiles' learners fitted beside the pages
    (:meth:`~watcher.web.state.WebState.fit_rated_beside`); with a password, a new one ends every
    session made with the old one."""
    anyio.to_thread.current_default_thread_limiter().total_tokens = THREADS
    web = app.state.web
    await anyio.to_thread.run_sync(warm_up)
    if not web.static and web.database.exists():
        await anyio.to_thread.run_sync(web.fit_rated_beside)
    if web.password is not None and web.database.exists():
        try:
            await anyio.to_thread.run_sync(sessions.password_check, web.database, web.password,
                                           web.write_timeout)
        except StoreError as e:
            log.error("web: %s", e)
    yield


def create_app(config: Config, database: Path | None = None, *, password: str | None = None,
               secret: str | None = None, static: bool = False, configured: Path | None = None) -> Starlette:
    """The web inbox over ``database`` (default: the config's). ``password`` None: no login;
    ``secret`` signs the session cookie (default: random per process); ``static``: the pages
    as ``watcher site`` publishes them (:class:`WebState`); ``configured``: the database the
    config file names, when ``config`` is not the file's (the sample's)."""
    web = WebState(config, Path(database or config.settings.database), password, static=static,
                   file_database=configured)
    if secret:
        web.secret = secret
    web.throttle = Throttle()
    routes, public = [], list(PUBLIC)
    for name in AREAS:
        module = importlib.import_module(f".{name}", __package__)
        routes.extend(module.routes)
        public.extend(getattr(module, "PUBLIC", ()))
    static = shipped_templates_dir() / "web" / "static"
    routes.append(Mount("/static", StaticFiles(directory=str(static)), name="static"))
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(trusted_hosts, web=config.web),
            Middleware(RequestGuard, web=config.web),
            Middleware(SessionMiddleware, secret_key=web.secret, session_cookie="watcher_session",
                       same_site="lax", https_only=web.https, path=web.prefix or "/"),
            Middleware(AuthGate, public=tuple(dict.fromkeys(public))),
        ],
        exception_handlers={HTTPException: _http_error, StoreError: _unavailable, InputError: _config_problem},
        lifespan=lifespan,
    )
    app.state.web = web
    return app
