"""Login, the session and CSRF tokens (SPEC §7 Security).

The session is Starlette's signed cookie (itsdangerous; HttpOnly, SameSite=Lax, Secure when
``base_url`` is https). With a password (``[web].password_env``) every page but the public
ones needs a logged-in session: :class:`AuthGate` sends a browser to ``/login`` and answers
anything else with 403. Failed logins are slowed down per client address (a growing wait
before the answer). Every POST form carries :func:`csrf_token`; :func:`checked_form` refuses
a POST without the session's token (403), so another site cannot submit a form for the user.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import time

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.routing import Route

from .guard import MAX_BODY
from .pages import page, state, url

log = logging.getLogger("watcher")

PUBLIC = ("/login", "/healthz", "/static/")
SLOW_BASE = 0.5  # seconds the first failed login waits; each further failure doubles it
SLOW_MAX = 8.0


def csrf_token(request: Request) -> str:
    """The session's CSRF token (made on first use); every POST form carries it as ``csrf``."""
    session = request.scope.get("session")
    if session is None:
        return ""
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


async def checked_form(request: Request):
    """The form of a POST whose ``csrf`` field is the session's token; else 403."""
    form = await request.form(max_files=0, max_fields=20, max_part_size=MAX_BODY)  # no uploads
    sent = str(form.get("csrf", ""))
    expected = request.session.get("csrf", "")
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise HTTPException(403, "the form has expired or came from another site; reload the page and try again")
    return form


def logged_in(request: Request) -> bool:
    """True when no login is needed or the session has logged in."""
    if state(request).password is None:
        return True
    return bool(request.scope.get("session", {}).get("auth"))


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
        if logged_in(request) or is_public(scope["path"], self.public):
            return await self.app(scope, receive, send)
        if scope["method"] in ("GET", "HEAD"):
            target = scope["path"] + (f"?{scope['query_string'].decode('latin-1')}" if scope["query_string"] else "")
            response = RedirectResponse(url(request, "/login", next=target), status_code=303)
        else:
            response = PlainTextResponse("log in first", status_code=403)
        await response(scope, receive, send)


class Throttle:
    """Failed logins per client address: each one doubles the wait before the next answer."""

    def __init__(self):
        self.failures: dict[str, tuple[int, float]] = {}

    def delay(self, who: str) -> float:
        count, last = self.failures.get(who, (0, 0.0))
        if count and time.monotonic() - last > 3600:  # an hour without failures forgives
            self.failures.pop(who, None)
            return 0.0
        return min(SLOW_MAX, SLOW_BASE * 2 ** (count - 1)) if count else 0.0

    def failed(self, who: str) -> None:
        count, _ = self.failures.get(who, (0, 0.0))
        self.failures[who] = (count + 1, time.monotonic())
        if len(self.failures) > 10_000:  # bounded memory under a flood of addresses
            self.failures.pop(next(iter(self.failures)))

    def succeeded(self, who: str) -> None:
        self.failures.pop(who, None)


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
    who = request.client.host if request.client else "?"
    throttle: Throttle = st.cache.setdefault("throttle", Throttle())
    wait = throttle.delay(who)
    if wait:
        await asyncio.sleep(wait)
    sent = str(form.get("password", ""))
    if hmac.compare_digest(sent.encode(), st.password.encode()):
        throttle.succeeded(who)
        request.session.clear()
        request.session["auth"] = True
        csrf_token(request)  # a new one for the new session
        return RedirectResponse(url(request, target), status_code=303)
    throttle.failed(who)
    log.warning("web: failed login from %s", who)
    return page(request, "login.html", status_code=401, next=target, error="Wrong password.")


async def logout(request: Request):
    """POST (with the CSRF token): end the session."""
    await checked_form(request)
    request.session.clear()
    return RedirectResponse(url(request, "/login" if state(request).password else "/"), status_code=303)


routes = [
    Route("/login", login, methods=["GET", "POST"]),
    Route("/logout", logout, methods=["POST"]),
]
