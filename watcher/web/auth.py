"""Login, the session and CSRF tokens (docs/web.md "Security").

The session is Starlette's signed cookie (itsdangerous; HttpOnly, SameSite=Lax, Secure when
``base_url`` is https). With a password (``[web].password_env``) every page but the public
ones needs a logged-in session: :class:`AuthGate` sends a browser to ``/login`` and answers
anything else with 403. A session counts only while its generation is the database's
(:mod:`.sessions`: logout and a new password end every session). Password checks are slowed
by :class:`Throttle`. Every POST form carries :func:`csrf_token`; :func:`checked_form` refuses
a POST without the session's token (403), so another site cannot submit a form for the user.

:func:`csrf_token`, :func:`logged_in` and :func:`current_generation` live in :mod:`.pages`
(every page is rendered with them), so that pages need not import this module.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import time
from contextlib import asynccontextmanager

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.routing import Route

from ..errors import StoreError
from . import sessions
from .guard import MAX_BODY
from .pages import csrf_token, current_generation, in_thread, logged_in, page, state, url

log = logging.getLogger("watcher")

PUBLIC = ("/login", "/healthz", "/static/")
LOGIN_QUEUE = 4  # password checks waiting at once, from all clients together; more get 429


async def bounded_form(request: Request):
    """The form of a POST: a few fields, no file part (a multipart upload is a 400)."""
    return await request.form(max_files=0, max_fields=20, max_part_size=MAX_BODY)


async def checked_form(request: Request):
    """The form of a POST whose ``csrf`` field is the session's token; else 403."""
    form = await bounded_form(request)
    sent = str(form.get("csrf", ""))
    expected = request.session.get("csrf", "")
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise HTTPException(403, "the form has expired or came from another site; reload the page and try again")
    return form


def is_public(path: str, public: tuple[str, ...]) -> bool:
    """True for the paths that need no login (``/login``, ``/healthz``, static files, and the
    prefixes other areas declare, e.g. signed links)."""
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in public)


class AuthGate:
    """ASGI middleware (inside the session middleware): with a password, a request without a
    logged-in session gets the login page (GET/HEAD: a redirect) or 403."""

    def __init__(self, app, public: tuple[str, ...]):
        self.app = app
        self.public = public

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        request = Request(scope)
        try:  # the session's generation is read in a worker thread, never on the event loop
            allowed = (is_public(scope["path"], self.public) or state(request).password is None
                       or await in_thread(logged_in, request))
        except (StoreError, HTTPException) as e:  # the generation cannot be read: no session counts
            log.error("web: %s", e)
            return await PlainTextResponse(f"unavailable: {e}", status_code=503)(scope, receive, send)
        if allowed:
            return await self.app(scope, receive, send)
        if scope["method"] in ("GET", "HEAD"):
            target = scope["path"] + (f"?{scope['query_string'].decode('latin-1')}" if scope["query_string"] else "")
            response = RedirectResponse(url(request, "/login", next=target), status_code=303)
        else:
            response = PlainTextResponse("log in first", status_code=403)
        await response(scope, receive, send)


class Throttle:
    """Password checks, from every client together: one at a time, each after a wait that
    doubles with every failure since the last success (0, base, 2 base, 4 base … 60 base;
    base is 1 s, ``WATCHER_LOGIN_DELAY`` for tests). A check counts as a failure from the
    moment it starts waiting, so parallel guesses cannot share one wait; a client gets one
    check at a time, and at most LOGIN_QUEUE wait at once: past that, 429 at once. Whatever
    address a guess claims, five checks take at least 15 base seconds (31 base for six)."""

    def __init__(self, base: float | None = None):
        self.base = base if base is not None else float(os.environ.get("WATCHER_LOGIN_DELAY", "1.0"))
        self.failures = 0
        self.last = 0.0
        self.pending: set[str] = set()
        self.turn = asyncio.Lock()

    def delay(self) -> float:
        if self.failures and time.monotonic() - self.last > 3600:  # an hour without failures forgives
            self.failures = 0
        return min(60 * self.base, self.base * 2 ** (self.failures - 1)) if self.failures else 0.0

    @asynccontextmanager
    async def check(self, who: str):
        """``async with throttle.check(client):`` the password check, when its turn came."""
        if who in self.pending:
            raise HTTPException(429, "a login from your address is being checked; wait for its answer")
        if len(self.pending) >= LOGIN_QUEUE:
            raise HTTPException(429, "too many logins at once; try again in a minute")
        self.pending.add(who)
        try:
            async with self.turn:
                wait = self.delay()
                self.failures += 1  # counted before the wait; a success takes it back
                self.last = time.monotonic()
                await asyncio.sleep(wait)
                yield self
        finally:
            self.pending.discard(who)

    def succeeded(self) -> None:
        self.failures = 0


def safe_next(target: str | None) -> str:
    """A local path to return to after login (never another site)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


async def login(request: Request):
    """GET: the login form. POST: check the password (slowed after failures)."""
    st = state(request)
    target = safe_next(request.query_params.get("next"))
    if st.password is None:
        return RedirectResponse(url(request, target), status_code=303)
    if request.method == "GET":
        return page(request, "login.html", next=target, error=None)
    form = await checked_form(request)
    target = safe_next(str(form.get("next", "/")))
    if await in_thread(logged_in, request):
        # a session already logged in stays in: it never waits behind the slowed checks of
        # someone guessing the password (the owner is not locked out by the guesser)
        return RedirectResponse(url(request, target), status_code=303)
    who = request.client.host if request.client else "?"  # a proxy's client only with [web].proxy
    sent = str(form.get("password", ""))
    async with st.throttle.check(who) as throttle:
        right = hmac.compare_digest(sent.encode(), st.password.encode())
        if right:
            throttle.succeeded()
    if right:
        gen = await in_thread(current_generation, request)
        request.session.clear()
        request.session.update(auth=True, gen=gen)
        csrf_token(request)  # a new one for the new session
        return RedirectResponse(url(request, target), status_code=303)
    log.warning("web: failed login from %s", who)
    return page(request, "login.html", status_code=401, next=target, error="Wrong password.")


async def logout(request: Request):
    """POST (with the CSRF token): end the session, and every other one (a new generation)."""
    await checked_form(request)
    st = state(request)
    if st.password is not None and st.database.exists():
        try:
            await in_thread(sessions.end_all, st.database, st.write_timeout)
        except StoreError as e:
            raise HTTPException(503, f"could not end the sessions ({e}); try again") from e
    request.session.clear()
    return RedirectResponse(url(request, "/login" if state(request).password else "/"), status_code=303)


routes = [
    Route("/login", login, methods=["GET", "POST"]),
    Route("/logout", logout, methods=["POST"]),
]
