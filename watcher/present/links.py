"""Signed one-click rating links in digests (docs/ratings.md "Links in digests").

A link is ``{base_url}/r/{token}``; the token names the action (``up``, ``down``, ``save``),
the profile, the paper and the day it expires, and is signed with the secret of
``[web].secret_env``. It is compact, so that a digest's links cost little of an e-mail's size:
``u2gk~llm-rl~2504.07615~Xq3…`` — the action's letter and the expiry (days since 2000, base
36), the profile and the paper as they are (base64url after ``_`` when they hold other
characters; a paper without an arXiv id by its short key), and an HMAC-SHA256 over all that
with a purpose-bound prefix, cut to 48 bits (a guesser would have to send a web server 2^47
requests on average); the payload is readable, only signed. Tokens of the
older, longer form (itsdangerous) still verify. A forged, truncated or altered token does not
verify; rotating the secret invalidates every link made with the old one. Digests carry links only when ``[web].base_url``
is set and the secret's environment variable holds a value.

Verifying a token says only *what* the link asks for. Recording it is
:func:`watcher.services.ratings.apply_rating` (the web inbox's ``POST /r/{token}``, after ``GET`` showed
a confirmation page: mail scanners fetch links), which refuses a paper or profile that no
longer exists.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from urllib.parse import quote

from itsdangerous import BadData, URLSafeSerializer

from ..errors import BadLink, ExpiredLink
from ..models import short_key
from ..util.hosts import is_loopback_url

LINK_ACTIONS = ("up", "down", "save")  # what a click records
RATE = "rate"  # a link that asks which of them (the e-mail's one link per paper)
LINK_DAYS = 183  # a rating link works for about six months after its digest
_SALT = "watcher.rate"  # keeps these signatures apart from any other use of the secret


@dataclass(frozen=True)
class LinkRating:
    """What a verified token asks for."""

    action: str
    profile: str
    paper: str  # the paper's key (its arXiv id without version, or ``title:…``), or its
    # short_key (``h.…``) in a compact token: Store.get_short finds it


_EPOCH = date(2000, 1, 1)  # expiry days count from here
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # written as is; anything else in base64url
_SIG_BYTES = 6  # 48 bits: 2^48 guesses at a web server are out of reach


MIN_SECRET = 16  # characters of [web] secret_env's value (it signs rating links, sessions, feed keys)
MAKE_SECRET = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


def secret_problem(web) -> str | None:
    """Why the value of ``[web] secret_env`` (``web``: the config's WebConfig) cannot sign
    links and sessions: unset, empty, or shorter than MIN_SECRET (a guessable key forges
    ratings); None when it can, or when no secret is named. The one rule of ``serve``,
    ``check`` and the digests' links."""
    var = web.secret_env
    if not var:
        return None
    value = os.environ.get(var)
    if value is None:
        return f"environment variable {var} is not set"
    if not value:
        return f"environment variable {var} is empty"
    if len(value) < MIN_SECRET:
        return f"the secret in {var} is shorter than {MIN_SECRET} characters (make one: {MAKE_SECRET})"
    return None


def make_token(secret: str, action: str, profile: str, paper: str, issued: date | None = None) -> str:
    """A signed, URL-safe, compact token for ``action`` on ``paper`` (a key) in ``profile``,
    valid for LINK_DAYS days from ``issued`` (default today by the wall clock, UTC: what a
    digest's links use, whatever day a --sample run takes for today)."""
    if action not in (*LINK_ACTIONS, RATE):
        raise ValueError(f"no link for action {action!r}")
    expires = (issued or _today()) + timedelta(days=LINK_DAYS)
    payload = f"{action[0]}{_base36((expires - _EPOCH).days)}~{_field(profile)}~{_field(short_key(paper))}"
    return f"{payload}~{_signature(secret, payload)}"


def _field(text: str) -> str:
    if _PLAIN.fullmatch(text):
        return text
    return "_" + base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def _unfield(text: str) -> str:
    if not text.startswith("_"):
        return text
    data = text[1:]
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)).decode("utf-8")


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def _signature(secret: str, payload: str) -> str:
    mac = hmac.new(secret.encode("utf-8"), f"{_SALT}:{payload}".encode("utf-8"), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:_SIG_BYTES]).decode("ascii").rstrip("=")


def _compact(secret: str, token: str) -> list[str]:
    """``[action, profile, paper, expires]`` of a compact token; BadLink when it is not ours."""
    payload, _, sig = token.rpartition("~")
    if not hmac.compare_digest(sig.encode(), _signature(secret, payload).encode()):
        raise BadLink("this link is not valid (altered, incomplete, or from before the secret "
                      "changed)")
    head, profile, paper = payload.split("~")  # signed by us: three fields
    action = {a[0]: a for a in (*LINK_ACTIONS, RATE)}[head[0]]
    expires = _EPOCH + timedelta(days=int(head[1:], 36))
    return [action, _unfield(profile), _unfield(paper), expires.isoformat()]


def _today() -> date:
    return datetime.now(timezone.utc).date()


def verify_token(secret: str, token: str, today: date | None = None) -> LinkRating:
    """The rating a token asks for; BadLink when it is not ours, ExpiredLink (a BadLink) when
    its time is over (nothing to record). Both token forms verify: the compact one and the
    older itsdangerous one."""
    if "~" in token:
        data = _compact(secret, token)
    else:
        try:
            data = URLSafeSerializer(secret, salt=_SALT).loads(token)
        except BadData:
            raise BadLink("this link is not valid (altered, incomplete, or from before the secret "
                          "changed)") from None
    if (not isinstance(data, list) or len(data) not in (3, 4) or not all(isinstance(x, str) for x in data)
            or data[0] not in (*LINK_ACTIONS, RATE)):
        raise BadLink("this link is not valid")
    asked = LinkRating(*data[:3])
    if len(data) == 3:  # signed by us before links carried their expiry: of unknown age
        raise ExpiredLink("this link is from before rating links expired; rate the paper from "
                          "its page in the inbox", asked)
    try:
        expires = date.fromisoformat(data[3])
    except ValueError:
        raise BadLink("this link is not valid") from None
    if expires < (today or _today()):
        raise ExpiredLink(f"this link expired on {expires.isoformat()} (rating links work for "
                          f"{LINK_DAYS} days); rate the paper from its page in the inbox", asked)
    return asked


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
        self.issued = issued  # the rating links expire LINK_DAYS after it (None: today, UTC)

    def message(self, channel: str, number: int) -> "Links":
        """These links for message ``number`` of the day through ``channel``: its "view in
        browser" opens exactly what that message showed."""
        return Links(self.base_url, self._secret, (channel, number), self.issued)

    def rate(self, action: str, profile: str, paper_key: str) -> str:
        """``{base_url}/r/{token}``."""
        return f"{self.base_url}/r/{make_token(self._secret, action, profile, paper_key, self.issued)}"

    def ask(self, match) -> str:
        """One link per paper whose page asks which of up / down / save (the e-mail's: a click
        to open it and one to choose, as with three links, for a third of the bytes)."""
        return self.rate(RATE, match.profile, match.paper.key)

    def paper(self, match) -> dict[str, str]:
        """``{"up", "down", "save", "web"}`` for a :class:`~watcher.models.Match`."""
        key = match.paper.key
        out = {a: self.rate(a, match.profile, key) for a in LINK_ACTIONS}
        out["web"] = f"{self.base_url}/papers/{quote(match.paper.arxiv_id or short_key(key), safe='')}"
        return out

    def profile(self, name: str) -> str:
        """The profile's page in the web inbox (its chart and query preview)."""
        return f"{self.base_url}/profiles/{quote(name, safe='')}#preview"

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


RICH_FORMATS = ("html", "markdown", "slack", "json")  # the digest formats that carry links


def link_notes(config) -> list[str]:
    """For ``watcher check``: one line per channel whose digests would go out without rating
    links, and without any link for a paper that has no page of its own (a listing that gave
    none), because ``[web] base_url`` (and ``secret_env``) is not set — naming the keys to set.
    A channel that only writes the text format (which carries no links) is left out; an unset
    secret variable is a problem of its own (:func:`watcher.cli.check.check_config`)."""
    web = config.web
    if web.base_url:
        off = base_url_off_listen(web)
        return [f"{config.path}: {off}"] if off else []
    keys = "web.base_url" if web.secret_env else "web.base_url and web.secret_env"
    notes = []
    for ch in config.channels.values():
        if getattr(ch.options, "writes_formats", False):  # it writes the digests' own formats: those it is given
            formats = {f for d in config.digests.values() if ch.name in d.channels for f in d.formats}
            if not formats & set(RICH_FORMATS):
                continue
        notes.append(f"{config.path}: channel.{ch.name} ({ch.type}): its digests carry no rating "
                     f"links, and no link for a paper without a page of its own: set {keys}")
    return notes


def base_url_off_listen(web) -> str | None:
    """Why the links of a ``base_url`` on this machine would reach nothing: its port is not
    the one ``watcher serve`` listens on (``[web] listen``); None when they agree or
    ``base_url`` names another machine (a reverse proxy may map any port there)."""
    from urllib.parse import urlsplit

    if not is_loopback_url(web.base_url):
        return None
    parts = urlsplit(web.base_url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port out of range: the config's own check says so
        return None
    if port == web.port:
        return None
    return (f"web.base_url ({web.base_url}) is this machine's port {port}, but watcher serve listens "
            f"on {web.listen} (web.listen): the digests' paper and rating links would reach nothing; "
            "give both the same port")


def links_missing(config) -> str | None:
    """Why this config's digests go out without the links its ``[web]`` table asks for: the
    secret's environment variable is unset though ``base_url`` and ``secret_env`` are set (a
    degraded digest: it is still delivered, and the cycle says why at error level); None when
    the links are there or were never asked for."""
    web = config.web
    if web.base_url and (problem := secret_problem(web)):
        return f"{problem} (web.secret_env): delivered without rating links and without 'View in browser'"
    return None


def links_for(config, issued: date | None = None) -> Links | None:
    """The links of this config's digests (made on day ``issued``, default today: they expire
    LINK_DAYS later), or None when ``[web].base_url`` or the secret (the value of
    ``[web].secret_env``) is missing."""
    web = config.web
    if not web.base_url or not web.secret_env or secret_problem(web):
        return None
    return Links(web.base_url, os.environ[web.secret_env], issued=issued)


__all__ = ["issue_path", "BadLink", "ExpiredLink", "LINK_DAYS", "LinkRating", "Links", "LINK_ACTIONS", "links_for", "make_token",
           "verify_token", "verify_link", "RATE", "link_notes", "base_url_off_listen", "links_missing", "digest_page", "feed_url",
           "RATING_LABELS"]
