"""The ``apprise`` channel: the digest through apprise to Telegram, Discord, Teams, Matrix, ntfy,
Gotify, Mattermost, e-mail and the 100+ other services it knows (docs/channels.md).

The apprise URLs come from the environment variable ``urls_env`` names (they hold tokens), one
or more separated by spaces, commas or new lines. apprise is an optional extra:
``pip install apprise`` (the extra ``[apprise]`` of a clone's install); without it ``watcher check`` and the channel say so.

**Markup.** Each service gets the markup it takes (apprise's ``notify_format`` for it, or the
URL's own ``?format=``): plain text, Markdown or HTML, drawn from the digest by the templates
``apprise.txt``, ``apprise.md`` and ``apprise.html`` (a ``templates_dir`` may replace them) with
every paper field escaped for that markup, and mentions (``@everyone``, ``@here``, ``<@…>``,
``<!channel>``) broken so that a title cannot ping anybody. watcher hands apprise the body in
the service's own format, so apprise converts nothing.

**Limits.** Papers are packed whole into messages within the service's message length
(``body_maxlen``, the title included where the service puts it into the body); a digest that does
not fit one message goes out as several, in order, marked "part i of n". A single paper longer
than a service's limit (SMS) is split by apprise itself. Every paper is delivered.

**Ledger.** The channel counts as delivered only when every URL accepted every part. When one of
several URLs fails, the others are still sent to, then the channel fails: nothing enters the
ledger, and the next run sends the whole digest again to every URL — the URLs that worked get
it twice. To keep services apart (one failing never repeats another), give each its own
``[channel.NAME]``.

**Answers.** A service's answer is read up to 1 MB, as the webhook's and the summarizer's are
(:data:`watcher.util.wire.ANSWER_BYTES`), each request and its answer take at most the channel's
``timeout`` in all, and a redirect is never followed (the webhook's rules): apprise's services
talk through ``requests``, whose exchanges follow these rules while this channel sends
(:func:`_capped`); a longer or later answer, or a redirect, fails the URL (not retried).

**Secrets.** An apprise URL is never shown: errors name it by position and scheme only
(``URL 2 of 3 (tgram://…)``), and apprise's own log lines are kept out of watcher's log.
"""

from __future__ import annotations

import contextvars
import logging
import re
from contextlib import contextmanager
from urllib.parse import parse_qsl, urlsplit

from ..errors import DeliveryError, RenderError
from ..formats.text import one_line
from ..util.wire import ANSWER_BYTES, shut_down
from ..models import Digest, Match
from ..present.render import call_macro, inert, plural
from ..kinds import Kind, option, options
from .base import Channel, remember_secret, secret_env, split_urls

INSTALL_HINT = "apprise is not installed; install it beside watcher with: pip install 'apprise>=1.9'"
DEFAULT_MAXLEN = 32768


# --- the bodies (pure) -------------------------------------------------------------------------

# The blocks come from the templates apprise.html, apprise.md and apprise.txt (the user's
# ``templates_dir`` first): ``paper``, ``updated`` and ``empty`` macros, with the shared filters.
TEMPLATES = {"html": "apprise.html", "markdown": "apprise.md", "text": "apprise.txt"}
UPDATED_LIMIT = 20  # revised papers listed by title; more become a count


def paper_block(m: Match, fmt: str, links=None, user_dir=None) -> str:
    """One paper in ``fmt`` (``text``, ``markdown`` or ``html``): title (linked), authors and
    date, TL;DR, reasons, and the rating links when the digest has them (a chat or push
    reader has no other way to give feedback)."""
    return call_macro(TEMPLATES[fmt], "paper", user_dir, m, links)


def updated_block(digest: Digest, fmt: str, limit: int = UPDATED_LIMIT, user_dir=None) -> str | None:
    """The revised papers delivered before, as one block of titles (at most ``limit``)."""
    if not digest.updated:
        return None
    return call_macro(TEMPLATES[fmt], "updated", user_dir, digest, limit)


def blocks(digest: Digest, fmt: str, user_dir=None) -> list[str]:
    """The digest as blocks that are never split across messages."""
    if not digest.matches:
        out = [call_macro(TEMPLATES[fmt], "empty", user_dir, digest)]
    else:
        out = [paper_block(m, fmt, digest.links, user_dir) for m in digest.matches]
    extra = updated_block(digest, fmt, user_dir=user_dir)
    return out + ([extra] if extra else [])


def title(digest: Digest) -> str:
    """``LLM-RL — 2025-04-12: 12 new papers`` (plain text; services escape titles themselves)."""
    what = plural(len(digest.matches), "new paper") if digest.matches else "no new papers"
    return inert(one_line(f"{digest.title} — {digest.date.isoformat()}: {what}"))


def pack(parts: list[str], limit: int, separator: str) -> list[str]:
    """``parts`` joined into as few messages of at most ``limit`` characters as keep each part
    whole (a part longer than ``limit`` is a message of its own)."""
    messages, current = [], ""
    for part in parts:
        candidate = f"{current}{separator}{part}" if current else part
        if current and len(candidate) > limit:
            messages.append(current)
            current = part
        else:
            current = candidate
    if current:
        messages.append(current)
    return messages


SEPARATORS = {"html": "<br><br>", "markdown": "\n\n", "text": "\n\n"}


def messages(digest: Digest, fmt: str, body_maxlen: int, title_maxlen: int,
             user_dir=None) -> list[tuple[str, str]]:
    """(title, body) of every message for a service of these limits, in order."""
    head = title(digest)
    limit = body_maxlen if body_maxlen > 0 else DEFAULT_MAXLEN
    if title_maxlen <= 0:  # the service puts the title into the body
        limit -= len(head) + len(" (part 99 of 99)") + 4
    bodies = pack(blocks(digest, fmt, user_dir), max(limit, 1), SEPARATORS[fmt])
    n = len(bodies)
    return [(head if n == 1 else f"{head} (part {i} of {n})", body) for i, body in enumerate(bodies, 1)]


# --- URLs --------------------------------------------------------------------------------------

def mask(url: str) -> str:
    """How an apprise URL is shown: its scheme only (``tgram://…``)."""
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]{0,31})://", url)
    return f"{m.group(1).lower()}://…" if m else "(not a URL)"


def scrub(text: str, url: str) -> str:
    """``text`` (an apprise log line) without the URL or any part of it that may be a token."""
    pieces = {url}
    try:
        parts = urlsplit(url)
        pieces.update(x for x in (parts.username, parts.password) if x)
        pieces.update(s for s in re.split(r"[/:@]", parts.netloc + parts.path) if s)
        pieces.update(v for _, v in parse_qsl(parts.query) if v)
    except ValueError:
        pass
    for piece in sorted((p for p in pieces if len(p) >= 4 and not re.fullmatch(r"[\d.]+", p)),
                        key=len, reverse=True):
        text = text.replace(piece, "***")
    return " ".join(text.split())


class _Exchange:
    """The rules of the requests apprise's services make while this channel sends to one URL
    (:func:`_capped`): each answer read up to ``limit`` bytes (``cut`` once one was longer),
    each request and its answer within ``deadline`` seconds in all (``timed_out`` once one
    took longer: its sockets are shut down, as :mod:`watcher.util.http` does), and no redirect
    followed (``redirect``: the status of the one not followed)."""

    def __init__(self, limit: int, deadline: float):
        self.limit, self.deadline = limit, deadline
        self.cut = self.timed_out = False
        self.redirect: int | None = None
        self.end = float("inf")
        self.sockets: list = []

    def fire(self) -> None:
        self.timed_out = True
        for sock in self.sockets:
            shut_down(sock)

    def late(self) -> bool:
        import time

        return self.timed_out or time.monotonic() > self.end


# the rules in force while this channel sends (None: not sending, requests left as they are)
_CAP: contextvars.ContextVar[_Exchange | None] = contextvars.ContextVar("apprise_exchange", default=None)


class _CappedBody:
    """A ``requests`` response's raw body that stops (ChunkedEncodingError, which apprise's
    services catch as a failed request) once more than the exchange's limit came out of it,
    or its deadline passed."""

    def __init__(self, raw, cap: _Exchange):
        self._raw, self._cap = raw, cap

    def stream(self, amt=None, decode_content=None):
        import requests

        size = 0
        for chunk in self._raw.stream(amt, decode_content=decode_content):
            size += len(chunk)
            if size > self._cap.limit:
                self._cap.cut = True
                self._raw.close()
                raise requests.exceptions.ChunkedEncodingError(f"an answer of more than {self._cap.limit:,} bytes")
            if self._cap.late():  # a body without a length ends where the deadline cut it
                self._cap.timed_out = True
                self._raw.close()
                raise requests.exceptions.ChunkedEncodingError("past the deadline")
            yield chunk
        if self._cap.late():
            self._cap.timed_out = True
            raise requests.exceptions.ChunkedEncodingError("past the deadline")

    def __getattr__(self, name):
        return getattr(self._raw, name)


def _install_cap() -> None:
    """Make every ``requests`` exchange follow the rules of :class:`_Exchange` while
    :data:`_CAP` is set (installed once per process; outside this channel's sending, nothing
    changes): answers capped, a total deadline, no redirect followed."""
    import threading
    import time

    import requests.adapters
    import requests.sessions
    import urllib3.util.connection

    send = requests.adapters.HTTPAdapter.send
    if getattr(send, "watcher_capped", False):
        return

    def capped_send(self, request, *args, **kw):
        response = send(self, request, *args, **kw)
        cap = _CAP.get()
        if cap is not None and response.raw is not None:
            response.raw = _CappedBody(response.raw, cap)
        return response

    session_send = requests.sessions.Session.send

    def bounded_send(self, request, **kw):
        cap = _CAP.get()
        if cap is None:
            return session_send(self, request, **kw)
        kw["allow_redirects"] = False  # as the webhook channel: a digest is never posted elsewhere
        given = kw.get("timeout")
        given = given if isinstance(given, tuple) else (given, given)
        kw["timeout"] = tuple(min(t, cap.deadline) if isinstance(t, (int, float)) and t > 0 else cap.deadline
                              for t in given)
        cap.end = time.monotonic() + cap.deadline
        timer = threading.Timer(cap.deadline, cap.fire)
        timer.daemon = True
        timer.start()
        try:
            response = session_send(self, request, **kw)  # the body too: read before it returns
        finally:
            timer.cancel()
        if response.is_redirect:
            cap.redirect = response.status_code
        return response

    connect = urllib3.util.connection.create_connection

    def recorded_connection(*args, **kw):
        sock = connect(*args, **kw)
        cap = _CAP.get()
        if cap is not None:
            cap.sockets.append(sock)
        return sock

    capped_send.watcher_capped = True
    requests.adapters.HTTPAdapter.send = capped_send
    requests.sessions.Session.send = bounded_send
    urllib3.util.connection.create_connection = recorded_connection


@contextmanager
def _capped(limit: int = ANSWER_BYTES, deadline: float = 30.0):
    """While in this block, the requests of apprise's services follow :class:`_Exchange`'s
    rules (answers capped at ``limit`` bytes, ``deadline`` seconds each, no redirect); yields
    the exchange, which says what was cut."""
    _install_cap()
    cap = _Exchange(limit, deadline)
    token = _CAP.set(cap)
    try:
        yield cap
    finally:
        _CAP.reset(token)


def _apprise():
    try:
        import apprise
    except ImportError:
        raise DeliveryError(INSTALL_HINT) from None
    logging.getLogger("apprise").propagate = False  # its lines may hold URLs; we report ourselves
    return apprise


def url_problem(url: str) -> str | None:
    """Why apprise cannot use ``url`` (an unknown service, or malformed for its service), else
    None. DeliveryError when apprise is not installed."""
    apprise = _apprise()
    from apprise.manager_plugins import NotificationManager

    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", url)
    if not m:
        return "is not a URL (apprise URLs look like ntfy://host/topic, tgram://token/chat_id)"
    scheme = m.group(1).lower()
    if scheme not in NotificationManager():
        return f"names an unknown service ({scheme}://); see apprise's list of services"
    with apprise.LogCapture(level=logging.DEBUG, fmt="%(message)s"):
        plugin = apprise.Apprise.instantiate(url, suppress_exceptions=True)
    if plugin is None:
        return f"is malformed for its service ({scheme}://); check it against apprise's documentation"
    return None


class AppriseChannel(Channel):
    """Sends the digest to every apprise URL in ``urls_env``."""

    def formats(self) -> tuple[str, ...]:
        """None: each service's body is built from the digest in its own markup."""
        return ()

    def urls(self) -> list[str]:
        """The URLs (each registered as a secret); DeliveryError when there are none."""
        urls = split_urls(secret_env(self.cfg, "urls_env"))
        for url in urls:
            remember_secret(url)
        if not urls:
            raise DeliveryError(f"channel {self.cfg.name}: {self.cfg.options.urls_env} holds no apprise URL")
        return urls

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Send to every URL (all parts, in order); DeliveryError naming the URLs that failed."""
        name = self.cfg.name
        try:
            apprise = _apprise()
        except DeliveryError as e:
            raise DeliveryError(f"channel {name}: {e}") from e
        urls = self.urls()
        failed = []
        for i, url in enumerate(urls, 1):
            who = f"URL {i} of {len(urls)} ({mask(url)})"
            problem = url_problem(url)
            if problem:
                failed.append(f"{who} {problem}")
                continue
            error = self._send_one(apprise, url, digest)
            if error:
                failed.append(f"{who}: {error}")
        if failed:
            sent = len(urls) - len(failed)
            also = (f"; the other {plural(sent, 'URL')} got it and will get it again on the next run"
                    if sent else "")
            raise DeliveryError(f"channel {name}: " + "; ".join(failed) + also)

    def _send_one(self, apprise, url: str, digest: Digest) -> str | None:
        """Send every part to one URL; the reason it failed, or None."""
        with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as log, \
                _capped(deadline=self.cfg.timeout) as cap:
            plugin = apprise.Apprise.instantiate(url, suppress_exceptions=True)
            fmt = (plugin.resolve_format(None) if hasattr(plugin, "resolve_format")
                   else plugin.notify_format)
            fmt = getattr(fmt, "value", str(fmt))
            fmt = fmt if fmt in SEPARATORS else "text"
            try:
                parts = messages(digest, fmt, plugin.body_maxlen, plugin.title_maxlen, self.ctx.templates_dir)
            except RenderError as e:  # a user's template: this URL fails, saying which
                return str(e)
            for k, (head, body) in enumerate(parts, 1):
                try:
                    ok = plugin.notify(body=body, title=head, body_format=fmt,
                                       overflow=apprise.OverflowMode.SPLIT)
                except Exception as e:  # noqa: BLE001 - a plugin's bug fails this URL only
                    ok, detail = False, f"{type(e).__name__}: {e}"
                else:
                    detail = ""
                if not ok and cap.cut:
                    return f"an answer of more than {cap.limit:,} bytes (not retried: it may have been accepted)"
                if not ok and cap.timed_out:
                    return (f"no answer within {cap.deadline:g} s, its timeout (not retried: it may have "
                            "been accepted)")
                if not ok and cap.redirect:
                    return (f"answered HTTP {cap.redirect}, a redirect; not followed (a digest is only "
                            "posted where the URL says)")
                if not ok:
                    lines = [ln for ln in log.getvalue().splitlines() if ln.strip()]
                    reason = scrub(detail or (lines[-1] if lines else "refused"), url)
                    where = f"part {k} of {len(parts)} " if len(parts) > 1 else ""
                    return f"{where}not accepted ({reason})"
        return None


def check_apprise(config, where: str, ch) -> list[str]:
    """For ``watcher check``: apprise must be installed, and every URL in ``urls_env`` must name
    a service apprise knows, in a form it accepts. URLs are shown by position and scheme only
    (they hold tokens)."""
    import os

    key = f"{where}: channel.{ch.name}"
    try:
        import apprise  # noqa: F401
    except ImportError:
        return [f"{key}.type: {INSTALL_HINT}"]
    value = os.environ.get(ch.options.urls_env or "")
    if not value:
        return []  # said above: the variable is not set
    urls = split_urls(value)
    if not urls:
        return [f"{key}.urls_env: {ch.options.urls_env} holds no apprise URL"]
    problems = []
    for i, url in enumerate(urls, 1):
        problem = url_problem(url)
        if problem:
            problems.append(f"{key}.urls_env: URL {i} of {len(urls)} ({mask(url)}) {problem}")
    return problems


@options
class AppriseOptions:
    urls_env: str = option(secret=True, help="the variable holding the apprise URLs, separated by "
                                             "white space")


KIND = Kind("apprise", AppriseChannel, AppriseOptions, check=check_apprise)


__all__ = ["AppriseChannel", "messages", "pack", "paper_block", "url_problem", "mask",
           "INSTALL_HINT"]
