"""``/feeds/{digest}.atom``: the Atom feed the digest's ``feed`` channel wrote (docs/web.md).

A feed reader cannot log in. Without a password (loopback, the default) the feed is as open as
every other page. With a password the feed answers a logged-in session, or a request carrying
the digest's feed key (``?key=…``, an HMAC of the digest's name under the web secret): the
digest pages show that private URL to the logged-in reader, to paste into a feed reader.
Rotating the secret (``[web].secret_env``) changes every key; without ``secret_env`` the secret
is random per process and the keys change at each restart.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..deliver.feed import feed_file, read_feed
from .pages import not_found, state, threaded, url

log = logging.getLogger("watcher")

PUBLIC = ("/feeds/",)  # the route itself checks the session or the key
MEDIA_TYPE = "application/atom+xml; charset=utf-8"
_PURPOSE = b"watcher.feed:"  # keeps these keys apart from any other use of the secret


def feed_key(secret: str, digest: str) -> str:
    """The key that opens ``digest``'s feed without a login."""
    return hmac.new(secret.encode(), _PURPOSE + digest.encode(), hashlib.sha256).hexdigest()[:32]


def feed_link(request: Request, digest: str) -> str | None:
    """The link to ``digest``'s feed for this reader (with the key when a password is set), or
    None when the digest has no feed file yet."""
    st = state(request)
    path = feed_file(st.config, digest)
    if path is None or not path.is_file():
        return None
    key = feed_key(st.secret, digest) if st.password is not None else None
    return url(request, f"/feeds/{quote(digest, safe='')}.atom", key=key)


def _allowed(request: Request, digest: str) -> bool:
    from .auth import logged_in

    if logged_in(request):
        return True
    sent = request.query_params.get("key", "")
    return bool(sent) and hmac.compare_digest(sent.encode(), feed_key(state(request).secret, digest).encode())


@threaded
def feed(request: Request):  # reads a file: a worker thread
    digest = request.path_params["digest"]
    if not _allowed(request, digest):
        raise HTTPException(403, "this feed needs a login, or its private link (with ?key=) "
                                 "from the digest's page")
    st = state(request)
    if digest not in st.config.digests:
        raise not_found(f"no digest named {digest!r}")
    try:
        data = read_feed(st.config, digest)
    except OSError as e:
        log.error("web: feed of %s: cannot read it: %s", digest, e.strerror or e)
        raise HTTPException(503, f"the feed of {digest!r} cannot be read ({e.strerror or e})") from e
    if data is None:
        if feed_file(st.config, digest) is not None:
            raise not_found(f"digest {digest!r} has no feed yet: its feed channel writes it at "
                            "the first delivery with papers")
        raise not_found(f"digest {digest!r} has no feed: add a channel of type \"feed\" to it")
    return Response(data, media_type=MEDIA_TYPE)


routes = [Route("/feeds/{digest}.atom", feed, methods=["GET", "HEAD"])]
