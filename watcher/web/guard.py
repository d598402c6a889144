"""What every request passes before any page (docs/web.md "Security"): the name it asks for (Host),
where a form it posts comes from (Origin / Referer), and how large its body may be.

* **Host.** Starlette's ``TrustedHostMiddleware`` answers 400 to a request for any name but
  the loopback names, the listen address, ``base_url``'s host and ``[web].hosts``: a page of
  another site whose name was made to point at 127.0.0.1 (DNS rebinding) reads nothing.
* **Same origin.** A POST whose ``Origin`` (else ``Referer``) names another site than the one
  it was sent to is refused (403) before its form is read; a request without either (not a
  browser) still needs the session's CSRF token.
* **Body size.** No request body may exceed :data:`MAX_BODY`: a ``Content-Length`` above it
  is refused at once (413, nothing read), a body without one is cut off when it passes it.
* **A client that leaves.** A GET's page learns it (``scope["watcher.gone"]``) and its
  statements stop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import PlainTextResponse

from ..config import WebConfig

MAX_BODY = 64 * 1024  # the largest form of the inbox (a login, a rating button) is under 1 KB
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
WILDCARDS = ("0.0.0.0", "::", "")


def host_name(host: str) -> str:
    """A host as the Host header names it (IPv6 in brackets), lower case."""
    host = host.lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_hosts(web: WebConfig) -> list[str]:
    """The names the inbox answers to: loopback, the listen address (unless it is a wildcard),
    ``base_url``'s host and ``[web].hosts``."""
    names = list(LOOPBACK_NAMES)
    if web.host not in WILDCARDS:
        names.append(host_name(web.host))
    if web.base_url and urlsplit(web.base_url).hostname:
        names.append(host_name(urlsplit(web.base_url).hostname))
    names.extend(host_name(h) for h in web.hosts)
    return list(dict.fromkeys(names))


def trusted_hosts(app, web: WebConfig):
    """``app`` behind the Host check."""
    return TrustedHostMiddleware(app, allowed_hosts=allowed_hosts(web), www_redirect=False)


def same_origin(headers: Headers, web: WebConfig) -> bool:
    """True when the request's ``Origin`` (else its ``Referer``) is the site it was sent to
    (its Host) or ``base_url``'s, or when it carries neither."""
    origin = headers.get("origin") or headers.get("referer")
    if origin is None:
        return True
    try:
        netloc = urlsplit(origin).netloc.lower()
    except ValueError:
        return False
    if not netloc:  # "Origin: null": a sandboxed frame, a data: URL, a redirect from elsewhere
        return False
    if netloc == headers.get("host", "").lower():
        return True
    return bool(web.base_url) and netloc == urlsplit(web.base_url).netloc.lower()


class RequestGuard:
    """ASGI middleware: the same-origin check of POSTs and the body size cap."""

    def __init__(self, app, web: WebConfig, max_body: int = MAX_BODY):
        self.app = app
        self.web = web
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        scope["watcher.arrived"] = time.monotonic()  # a page's statements end 2 s after this
        headers = Headers(scope=scope)
        if scope["method"] not in ("GET", "HEAD", "OPTIONS") and not same_origin(headers, self.web):
            response = PlainTextResponse("refused: this form was sent from another site", status_code=403)
            return await response(scope, receive, send)
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or len(length) > 18 or int(length) > self.max_body):
            response = PlainTextResponse(f"refused: a request body may hold at most {self.max_body // 1024} KB",
                                         status_code=413, headers={"connection": "close"})
            return await response(scope, receive, send)
        if scope["method"] in ("GET", "HEAD"):
            return await self._watched(scope, receive, send)
        received = 0

        async def limited():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise HTTPException(413, f"a request body may hold at most {self.max_body // 1024} KB")
            return message

        await self.app(scope, limited, send)

    async def _watched(self, scope, receive, send):
        """A GET or HEAD (pages never read its body) with ``scope["watcher.gone"]``, set the
        moment its client disconnects: the page's SQLite statements then stop
        (:func:`watcher.web.pages.reading`) instead of running for nobody."""
        gone, left = threading.Event(), asyncio.Event()
        scope["watcher.gone"] = gone

        async def watch():
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()
            left.set()

        watcher = asyncio.ensure_future(watch())
        first = True

        async def body():
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": b"", "more_body": False}
            await left.wait()
            return {"type": "http.disconnect"}

        try:
            await self.app(scope, body, send)
        finally:
            watcher.cancel()
