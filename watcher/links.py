"""Signed one-click rating links in digests (SPEC §7 "Links in digests").

A link is ``{base_url}/r/{token}``; the token names the action (``up``, ``down``, ``save``),
the profile and the paper, and is signed with the secret of ``[web].secret_env``
(itsdangerous, HMAC-SHA1 over the payload with a purpose-bound key; the payload is readable,
only signed). A forged, truncated or altered token does not verify; rotating the secret
invalidates every link made with the old one. Digests carry links only when ``[web].base_url``
is set and the secret's environment variable holds a value.

Verifying a token says only *what* the link asks for. Recording it is
:func:`watcher.ratings.apply_rating` (the web inbox's ``POST /r/{token}``, after ``GET`` showed
a confirmation page: mail scanners fetch links), which refuses a paper or profile that no
longer exists.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from urllib.parse import quote

from itsdangerous import BadData, URLSafeSerializer

from .errors import InputError

LINK_ACTIONS = ("up", "down", "save")
LINK_DAYS = 183  # a rating link works for about six months after its digest
_SALT = "watcher.rate"  # keeps these signatures apart from any other use of the secret


class BadLink(InputError):
    """A token that is not one of ours: forged, truncated, altered, or signed with another secret."""


class ExpiredLink(BadLink):
    """One of our tokens, past its expiry (LINK_DAYS after its digest)."""


@dataclass(frozen=True)
class LinkRating:
    """What a verified token asks for."""

    action: str
    profile: str
    paper: str  # the paper's key (its arXiv id without version, or ``title:…``)


def make_token(secret: str, action: str, profile: str, paper: str, issued: date | None = None) -> str:
    """A signed, URL-safe token for ``action`` on ``paper`` (a key) in ``profile``, valid for
    LINK_DAYS days from ``issued`` (the digest's day; default today, UTC)."""
    if action not in LINK_ACTIONS:
        raise ValueError(f"no link for action {action!r}")
    expires = (issued or _today()) + timedelta(days=LINK_DAYS)
    return URLSafeSerializer(secret, salt=_SALT).dumps([action, profile, paper, expires.isoformat()])


def _today() -> date:
    return datetime.now(timezone.utc).date()


def verify_token(secret: str, token: str, today: date | None = None) -> LinkRating:
    """The rating a token asks for; BadLink when it is not ours, ExpiredLink (a BadLink) when
    its time is over (nothing to record)."""
    try:
        data = URLSafeSerializer(secret, salt=_SALT).loads(token)
    except BadData:
        raise BadLink("this link is not valid (altered, incomplete, or from before the secret "
                      "changed)") from None
    if (not isinstance(data, list) or len(data) not in (3, 4) or not all(isinstance(x, str) for x in data)
            or data[0] not in LINK_ACTIONS):
        raise BadLink("this link is not valid")
    if len(data) == 3:  # signed by us before links carried their expiry: of unknown age
        raise ExpiredLink("this link is from before rating links expired; rate the paper from "
                          "its page in the inbox")
    try:
        expires = date.fromisoformat(data[3])
    except ValueError:
        raise BadLink("this link is not valid") from None
    if expires < (today or _today()):
        raise ExpiredLink(f"this link expired on {expires.isoformat()} (rating links work for "
                          f"{LINK_DAYS} days); rate the paper from its page in the inbox")
    return LinkRating(*data[:3])


def issue_path(digest: str, day: date | str, channel: str | None = None, number: int = 1) -> str:
    """The web inbox's path of a delivered issue (``/digests/{digest}/{date}``: all its
    messages) or of one message (``.../{channel}``, the channel's first that day;
    ``.../{channel}/{number}`` for a later one)."""
    path = f"/digests/{quote(digest, safe='')}/{day if isinstance(day, str) else day.isoformat()}"
    if channel is not None:
        path += f"/{quote(channel, safe='')}" + (f"/{number}" if number > 1 else "")
    return path


class Links:
    """The links of one digest: per paper up / down / save / web, and the digest's own page:
    with ``message`` (channel, number), the page of exactly that message."""

    def __init__(self, base_url: str, secret: str, message: tuple[str, int] | None = None,
                 issued: date | None = None):
        self.base_url = base_url.rstrip("/")
        self._secret = secret
        self._message = message
        self.issued = issued  # the digest's day: the rating links expire LINK_DAYS after it

    def message(self, channel: str, number: int) -> "Links":
        """These links for message ``number`` of the day through ``channel``: its "view in
        browser" opens exactly what that message showed."""
        return Links(self.base_url, self._secret, (channel, number), self.issued)

    def rate(self, action: str, profile: str, paper_key: str) -> str:
        """``{base_url}/r/{token}``."""
        return f"{self.base_url}/r/{make_token(self._secret, action, profile, paper_key, self.issued)}"

    def paper(self, match) -> dict[str, str]:
        """``{"up", "down", "save", "web"}`` for a :class:`~watcher.models.Match`."""
        key = match.paper.key
        out = {a: self.rate(a, match.profile, key) for a in LINK_ACTIONS}
        out["web"] = f"{self.base_url}/papers/{quote(match.paper.arxiv_id or key, safe='')}"
        return out

    def digest(self, name: str, day: date) -> str:
        """The digest as delivered, in the web inbox ("view in browser"): the message's own page
        (:func:`issue_path`), or the issue's when no message is named (a dry run)."""
        return self.base_url + issue_path(name, day, *(self._message or ()))


def digest_page(base_url: str, name: str, day: date | None = None) -> str:
    """The web inbox's page of one issue of digest ``name``, or of all its issues (``day`` None)."""
    if day is None:
        return f"{base_url.rstrip('/')}/digests?digest={quote(name, safe='')}"
    return base_url.rstrip("/") + issue_path(name, day)


def feed_url(base_url: str, name: str) -> str:
    """Where the web inbox serves digest ``name``'s Atom feed (``/feeds/{digest}.atom``)."""
    return f"{base_url.rstrip('/')}/feeds/{quote(name, safe='')}.atom"


RATING_LABELS = {"up": "More like this", "down": "Less like this", "save": "Save"}


def verify_link(config, token: str) -> LinkRating:
    """What the token of a ``/r/{token}`` link asks for, checked with this config's secret;
    BadLink when it does not verify or when links are off (no base_url or no secret)."""
    links = links_for(config)
    if links is None:
        raise BadLink("rating links are off: [web] base_url or its secret is not set")
    return verify_token(links._secret, token)


def link_notes(config) -> list[str]:
    """For ``watcher check``: why digests carry no rating links, when a secret is named but
    base_url is not set (a missing secret is reported with the other unset variables)."""
    web = config.web
    if web.secret_env and not web.base_url:
        return [f"{config.path}: web.base_url is not set: digests carry no rating links"]
    return []


def links_missing(config) -> str | None:
    """Why this config's digests go out without the links its ``[web]`` table asks for: the
    secret's environment variable is unset though ``base_url`` and ``secret_env`` are set (a
    degraded digest: it is still delivered, and the cycle says why at error level); None when
    the links are there or were never asked for."""
    web = config.web
    if web.base_url and web.secret_env and not os.environ.get(web.secret_env):
        return (f"environment variable {web.secret_env} (web.secret_env) is not set: delivered "
                "without rating links and without 'View in browser'")
    return None


def links_for(config, issued: date | None = None) -> Links | None:
    """The links of this config's digests (made on day ``issued``, default today: they expire
    LINK_DAYS later), or None when ``[web].base_url`` or the secret (the value of
    ``[web].secret_env``) is missing."""
    web = config.web
    secret = os.environ.get(web.secret_env) if web.secret_env else None
    if not web.base_url or not secret:
        return None
    return Links(web.base_url, secret, issued=issued)


__all__ = ["issue_path", "BadLink", "ExpiredLink", "LINK_DAYS", "LinkRating", "Links", "LINK_ACTIONS", "links_for", "make_token",
           "verify_token", "verify_link", "link_notes", "links_missing", "digest_page", "feed_url",
           "RATING_LABELS"]
