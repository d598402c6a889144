"""The one HTTP client every source uses (docs/sources.md "Politeness").

:class:`HttpClient` wraps one ``httpx.Client`` and adds what the sources need, in one place:

* a total deadline on every request (connect, headers and every read of the body together:
  a server dripping one byte at a time costs ``timeout`` per try, not ``timeout`` per byte)
  and the configured User-Agent;
* at most one request every ``min_interval`` seconds (3 s) to arXiv (all its hosts together);
* retries with exponential backoff and jitter on connection errors, timeouts, broken bodies and
  HTTP 429/500/502/503/504, honouring ``Retry-After`` (seconds or an HTTP date) up to a cap;
* a maximum response size, enforced while streaming (a larger body is an error, never an
  out-of-memory), gzip decoding by httpx, and ``file://`` URLs read from disk;
* conditional GET: give the saved ETag / Last-Modified, get back ``not_modified`` on 304;
* redirects followed here, not by httpx, at most ``max_redirects`` hops, each hop waiting its
  turn like any request (httpx's own following would skip the 3 s gap between hops); never
  from a public address to a private one, nor from either to a loopback address (a remote
  server must not make watcher read a service of the machine it runs on). Shared (100.64/10),
  link-local, reserved, multicast and the clouds' metadata addresses are not public; and the
  address a connection actually reached is checked before anything is sent on it, not only
  what the name resolved to when it was checked (a name may resolve anew: DNS rebinding).

The rules themselves are a :class:`Policy` and :func:`with_retries` is the one retry loop: the
channels (:mod:`watcher.deliver.httppost`) and the summarizer use them with their own settings,
and their own say of what is retried (a channel never retries what may have been accepted).

Every failure is raised as :class:`watcher.errors.SourceError` (or :class:`HttpStatusError`, a
SourceError that keeps the status and body) with a message that says what to check.
"""

from __future__ import annotations

import email.utils
import functools
import ipaddress
import math
import random
import socket
import threading
import time
from dataclasses import dataclass
from datetime import timezone
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..errors import HttpStatusError, InputError, SourceError, TooLarge
from ..masking import remember_url
from .text import plural
from .wire import ANSWER_BYTES, shut_down

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
REDIRECT_LOOP = "redirected too many times (a redirect loop on the server?)"
ARXIV_HOSTS = ("arxiv.org",)  # the host and all its subdomains (export., rss., oaipmh.)
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass
class Response:
    """A finished GET: the body (empty when ``not_modified``) and the validators to save."""

    url: str
    status: int
    content: bytes = b""
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False


def safe_url(url: str) -> str:
    """``url`` without user name or password, for messages and logs."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        parts = parts._replace(netloc=host)
    return urlunsplit(parts)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


@dataclass(frozen=True)
class Policy:
    """How one kind of caller talks HTTP: the sources' GETs, a channel's POSTs, the summarizer.

    ``retries`` (after the first try), ``backoff`` (the first retry's delay, doubled each retry,
    at most ``max_backoff``; with ±50% ``jitter`` or exact), ``retry_after_cap`` (a longer
    ``Retry-After`` fails at once: it is tried again on the next run), ``min_interval`` (seconds
    between requests to one of ``polite_hosts``), ``max_bytes`` (an answer's size cap) and
    ``deadline`` (seconds for a whole exchange, connect and body together).
    """

    retries: int = 4
    backoff: float = 2.0
    max_backoff: float = 60.0
    jitter: bool = True
    retry_after_cap: float = 300.0
    min_interval: float = 0.0
    polite_hosts: tuple[str, ...] = ()
    max_bytes: int = DEFAULT_MAX_BYTES
    deadline: float = 30.0

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` + 1 when the server named no wait."""
        base = min(self.max_backoff, self.backoff * (2 ** retry))
        return base * random.uniform(0.5, 1.5) if self.jitter else base


class Retry(Exception):
    """One try failed in a way its caller retries. ``last`` says how (for the final message),
    ``wait`` is the server's ``Retry-After`` (None: the policy's backoff), ``limit`` lowers the
    number of retries for this failure, ``error`` is the exception it came from, ``info``
    anything the caller's ``give_up`` needs (a status and body)."""

    def __init__(self, last: str, *, wait: float | None = None, limit: int | None = None,
                 error: BaseException | None = None, info=None):
        super().__init__(last)
        self.last = last
        self.wait = wait
        self.limit = limit
        self.error = error
        self.info = info


def with_retries(attempt, policy: Policy, *, give_up, retryable=lambda e: None,
                 too_long=None, sleep=time.sleep):
    """The one retry loop: ``attempt(n)`` (n = 0, 1, …) until it returns, and return that.

    What is retried is the caller's to say, since a channel must not retry what the server may
    already have accepted: ``attempt`` raises :class:`Retry` itself, and ``retryable(e)`` turns
    another exception it raised into a Retry (None: not retried, raised as it is). A Retry whose
    ``wait`` is longer than ``policy.retry_after_cap`` raises ``too_long(retry)``; after the last
    retry, ``give_up(retry, tries)`` is raised. Between tries: the server's wait, else
    ``policy.delay``."""
    n = 0
    while True:
        try:
            return attempt(n)
        except Retry as r:
            retry = r
        except Exception as e:  # noqa: BLE001 - the caller's retryable() decides
            retry = retryable(e)
            if retry is None:
                raise
        if too_long is not None and retry.wait is not None and retry.wait > policy.retry_after_cap:
            raise too_long(retry) from retry.error
        limit = policy.retries if retry.limit is None else min(policy.retries, retry.limit)
        if n >= limit:
            raise give_up(retry, n + 1) from retry.error
        sleep(retry.wait if retry.wait is not None else policy.delay(n))
        n += 1


class HttpClient:
    """A polite, bounded HTTP client; one instance is shared by all sources of a process.

    All delays are parameters so tests can shrink them: ``min_interval`` (per polite host),
    ``backoff`` (first retry delay, doubled each attempt, with ±50% jitter, capped at
    ``max_backoff``), ``retry_after_cap`` (a longer ``Retry-After`` is an error, not a wait).
    """

    def __init__(self, user_agent: str = "watcher", *, timeout: float = 30.0,
                 min_interval: float = 3.0, polite_hosts: tuple[str, ...] = ARXIV_HOSTS,
                 retries: int = 4, backoff: float = 2.0, max_backoff: float = 60.0,
                 retry_after_cap: float = 300.0, max_bytes: int = DEFAULT_MAX_BYTES,
                 max_redirects: int = 5, transport: httpx.BaseTransport | None = None,
                 sleep=time.sleep):
        self.user_agent = user_agent
        self.timeout = timeout
        self.min_interval = min_interval
        self.polite_hosts = polite_hosts
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.retry_after_cap = retry_after_cap
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.sleep = sleep
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()
        # follow_redirects=False: get() follows them itself, so every hop is rate-limited
        self._client = httpx.Client(headers=client_headers(user_agent), follow_redirects=False,
                                    transport=transport, timeout=timeout, verify=tls_context())

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def __enter__(self) -> "HttpClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- politeness ---------------------------------------------------------------------

    def _polite(self, host: str) -> str | None:
        """The polite domain ``host`` belongs to (all of arXiv shares one), else None."""
        for domain in self.polite_hosts:
            if host == domain or host.endswith("." + domain) or domain == "*":
                return domain
        return None

    def _wait_turn(self, host: str) -> None:
        """Sleep until ``min_interval`` has passed since the last request to the same polite
        domain (export.arxiv.org and rss.arxiv.org count as one: arXiv)."""
        domain = self._polite(host)
        if domain is None:
            return
        with self._lock:
            last = self._last.get(domain)
            now = time.monotonic()
            if last is not None and now - last < self.min_interval:
                self.sleep(self.min_interval - (now - last))
            self._last[domain] = time.monotonic()

    def _done(self, host: str) -> None:
        """Count the interval from the end of a request too: a slow connect or body must not
        let the next request reach the server sooner than ``min_interval`` after this one."""
        domain = self._polite(host)
        if domain is not None:
            with self._lock:
                self._last[domain] = time.monotonic()

    @property
    def policy(self) -> Policy:
        """This client's settings as a :class:`Policy` (its attributes may be changed)."""
        return Policy(retries=self.retries, backoff=self.backoff, max_backoff=self.max_backoff,
                      retry_after_cap=self.retry_after_cap, min_interval=self.min_interval,
                      polite_hosts=self.polite_hosts, max_bytes=self.max_bytes,
                      deadline=self.timeout)

    # --- requests -----------------------------------------------------------------------

    def get(self, url: str, *, params: dict | None = None, etag: str | None = None,
            last_modified: str | None = None, timeout: float | None = None,
            max_bytes: int | None = None, user_agent: str | None = None) -> Response:
        """GET ``url`` politely; SourceError (HttpStatusError for error statuses) on failure.
        ``user_agent``: this request's, in place of the client's (a source that adds a contact
        address to it, as Crossref's etiquette asks)."""
        if url.startswith("file://"):
            return self._file(url, max_bytes or self.max_bytes)
        headers = {"User-Agent": user_agent} if user_agent else {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        try:
            request = self._client.build_request("GET", url, params=params, headers=headers,
                                                 timeout=timeout or self.timeout)
        except (httpx.InvalidURL, httpx.UnsupportedProtocol, ValueError) as e:
            raise SourceError(f"{safe_url(url)}: not a usable URL ({e}); check the source's url") from None
        remember_url(str(request.url))  # an api_key=… in it is masked wherever an error shows
        shown = origin = safe_url(str(request.url))
        host = request.url.host
        limit = max_bytes or self.max_bytes
        state = {"request": request, "shown": shown, "host": host, "hops": 0, "reach": None}
        deadline = timeout or self.timeout

        def attempt(n: int) -> Response:
            while True:  # redirect hops are not tries
                request, shown, host = state["request"], state["shown"], state["host"]
                self._wait_turn(host)
                try:
                    status, resp_headers, body, reach = self._send(request, limit, shown, deadline,
                                                                   state["reach"], origin)
                finally:
                    self._done(host)
                state["reach"] = reach
                if status in REDIRECT_STATUSES and resp_headers.get("location"):
                    hops = state["hops"]
                    if hops >= self.max_redirects:
                        raise SourceError(f"GET {origin}: {REDIRECT_LOOP}; check the source's url "
                                          f"({hops} hops, the last to {shown})")
                    request = self._redirected(request, resp_headers["location"], shown, deadline,
                                               state["reach"])
                    remember_url(str(request.url))  # the token a redirect adds (a signed URL)
                    state.update(request=request, shown=safe_url(str(request.url)),
                                 host=request.url.host, hops=hops + 1)
                    continue
                if status == 304:
                    return Response(origin, status, b"", etag, last_modified, not_modified=True)
                if status in RETRY_STATUSES:
                    raise Retry(f"HTTP {status} {_reason(status)}", info=(status, body),
                                wait=parse_retry_after(resp_headers.get("retry-after")))
                if status >= 400:
                    asked = "url and query" if request.url.query else "url"  # a feed has none
                    raise HttpStatusError(f"GET {shown}: HTTP {status} {_reason(status)}; check the "
                                          f"source's {asked}", status, body)
                return Response(origin, status, body, resp_headers.get("etag"),
                                resp_headers.get("last-modified"))

        def retryable(e: Exception) -> Retry | None:
            shown = state["shown"]
            if isinstance(e, (httpx.UnsupportedProtocol, _EncodingRefused)):
                raise SourceError(f"GET {shown}: {e}; check the source's url") from e
            if isinstance(e, (httpx.TransportError, httpx.DecodingError)):
                # a host that does not resolve (no network, a typo) rarely heals in seconds:
                # one more try, not the full backoff
                return Retry(_describe(e), error=e, limit=1 if _unresolvable(e) else None)
            if isinstance(e, httpx.HTTPError):  # too many redirects, invalid headers, ...
                raise SourceError(f"GET {shown}: {_describe(e)}; check the source's url") from e
            return None

        def too_long(r: Retry) -> Exception:
            status, body = r.info
            return HttpStatusError(f"GET {state['shown']}: HTTP {status}, the server asks to wait "
                                   f"{r.wait:.0f} s; it will be tried again on the next run",
                                   status, body)

        def give_up(r: Retry, tries: int) -> Exception:
            shown, counted = state["shown"], plural(tries, 'try', 'tries')
            if r.info is None:
                return SourceError(f"GET {shown}: {r.last} ({counted}); check the "
                                   "network connection and the source's url")
            status, body = r.info
            return HttpStatusError(f"GET {shown}: {r.last} ({counted}); "
                                   "the server may be down or overloaded, try again later",
                                   status, body)

        return with_retries(attempt, self.policy, retryable=retryable, too_long=too_long,
                            give_up=give_up, sleep=self.sleep)

    def _redirected(self, request: httpx.Request, location: str, shown: str,
                    timeout: float, reach: int | None = None) -> httpx.Request:
        """The GET of the next hop (Location resolved against the current URL; same headers).
        Only http(s): a server must never make watcher read a local file; never further in
        than the address the hop before reached (``reach``; None: its name's)."""
        try:
            url = request.url.join(location)
        except (httpx.InvalidURL, ValueError) as e:
            raise SourceError(f"GET {shown}: redirected to an unusable URL ({e})") from None
        if url.scheme not in ("http", "https"):
            raise SourceError(f"GET {shown}: redirected to {safe_url(str(url))}, which is not an "
                              "http(s) URL; check the source's url")
        before = _reach(request.url.host) if reach is None else reach
        if _reach(url.host) > before:
            raise InwardRedirect(f"GET {shown}: redirected to {safe_url(str(url))}, an address "
                                 f"{_REACH_NAMES[_reach(url.host)]} than the source's own; not followed "
                                 "(check the source's url)")
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() in ("if-none-match", "if-modified-since", "user-agent")}
        return self._client.build_request("GET", url, headers=headers, timeout=timeout)

    def _send(self, request: httpx.Request, limit: int, shown: str, deadline: float,
              allowed: int | None = None, origin: str = ""):
        """Send once, streaming the body and stopping as soon as it exceeds ``limit`` or the
        whole exchange takes longer than ``deadline`` seconds. httpx's timeout bounds each
        read; the deadline bounds them all: when it passes, the connection's socket is shut
        down, so a read blocked on a dripping server ends at once. The connection may reach
        an address no further in than ``allowed`` (:class:`_Guard`; None: any): ``(status,
        headers, body, the reach of the address it reached)``."""

        def refuse(address: str, reach: int) -> InwardRedirect:
            return InwardRedirect(f"GET {origin or shown}: redirected to {shown}, which reached {address}, "
                                  f"an address {_REACH_NAMES[reach]} than the source's own; not followed "
                                  "(check the source's url)")

        with _Deadline(deadline, request) as watch:
            guard = _Guard(watch, allowed, refuse)
            request.extensions["trace"] = guard
            response = self._client.send(request, stream=True)
            try:
                guard.check(response.extensions.get("network_stream"))  # a kept-alive connection too
                try:
                    body = read_capped(response, limit, watch)
                except TooLarge as e:
                    size = "" if e.declared is None else f" of {e.declared:,} bytes"
                    raise SourceError(f"GET {shown}: response{size} is larger than the limit "
                                      f"of {limit:,} bytes") from e
                return response.status_code, response.headers, body, guard.reach
            finally:
                response.close()

    def _file(self, url: str, limit: int) -> Response:
        from urllib.request import url2pathname

        path = url2pathname(urlsplit(url).path)
        try:
            with open(path, "rb") as f:
                data = f.read(limit + 1)
        except OSError as e:
            raise SourceError(f"{url}: cannot read: {e.strerror}; check the path") from e
        if len(data) > limit:
            raise SourceError(f"{url}: file is larger than the limit of {limit:,} bytes")
        return Response(url, 200, data)


class _Deadline:
    """The total deadline of one exchange: a timer that, when ``seconds`` pass, shuts down the
    socket of the connection the exchange uses (learnt from httpcore's trace of the connect,
    or from the response), so whatever read is blocked on it returns. Used as a context
    manager: the timer stops at its end, and a transport error the timer caused comes out as
    httpx.ReadTimeout."""

    def __init__(self, seconds: float, request: httpx.Request | None = None):
        self.seconds = seconds
        self.request = request
        self.stream = None
        self.fired = False
        self.end = time.monotonic() + seconds
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def trace(self, event: str, info: dict) -> None:
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            self.stream = info.get("return_value") or self.stream

    def passed(self) -> bool:
        return self.fired or time.monotonic() >= self.end

    def _fire(self) -> None:
        self.fired = True
        shut_down(self.stream.get_extra_info("socket") if self.stream is not None else None)

    def cancel(self) -> None:
        self._timer.cancel()

    def __enter__(self) -> "_Deadline":
        return self

    def __exit__(self, kind, error, tb) -> None:
        self.cancel()
        if isinstance(error, httpx.TransportError) and self.fired:
            raise httpx.ReadTimeout(f"total deadline of {self.seconds:g} s passed",
                                    request=self.request) from None


# How far inside an address is: a redirect may never go further in than where it started.
_REACH_NAMES = {1: "more private", 2: "of the machine itself (loopback), more private"}

# Not public, whatever the Python version's ipaddress says of them: shared address space
# (carrier-grade NAT, 100.64.0.0/10, where Alibaba Cloud's metadata service is), the IETF's
# protocol block (Oracle Cloud's metadata at 192.0.0.192), benchmarking, "this network",
# reserved, link-local (169.254.169.254, the metadata of most clouds), multicast; unique-local,
# site-local and link-local IPv6 (AWS's metadata at fd00:ec2::254).
_NOT_PUBLIC = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "192.0.0.0/24", "198.18.0.0/15", "224.0.0.0/4",
    "240.0.0.0/4", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _inner_address(a):
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo's client, NAT64), else ``a``:
    ``::ffff:127.0.0.1`` and ``64:ff9b::7f00:1`` reach loopback."""
    if a.version == 6:
        if a.ipv4_mapped:
            return a.ipv4_mapped
        if a.sixtofour:
            return a.sixtofour
        if a.teredo:
            return a.teredo[1]
        if a in _NAT64:
            return ipaddress.IPv4Address(int(a) & 0xFFFFFFFF)
    return a


def address_reach(address) -> int:
    """0 for a public address, 1 for any other (private, shared, link-local, reserved,
    multicast, a cloud's metadata service), 2 for loopback (and the unspecified address)."""
    a = _inner_address(ipaddress.ip_address(str(address).split("%")[0]) if isinstance(address, str) else address)
    if a.is_loopback or a.is_unspecified:
        return 2
    if not a.is_global or a.is_private or a.is_link_local or a.is_reserved or a.is_multicast \
            or any(a.version == n.version and a in n for n in _NOT_PUBLIC):
        return 1
    return 0


def _reach(host: str) -> int:
    """:func:`address_reach` of ``host`` itself when it is an IP address, else of every address
    it resolves to (the innermost). A check of the name only: the address a connection
    actually reaches is checked too (:class:`_Guard`), as a name may resolve anew."""
    host = host.strip("[]")
    try:
        addresses = [ipaddress.ip_address(host.split("%")[0])]
    except ValueError:
        if host.lower() == "localhost" or host.lower().endswith(".localhost"):
            return 2
        try:
            addresses = [ipaddress.ip_address(a[4][0].split("%")[0])
                         for a in socket.getaddrinfo(host, None)]
        except (OSError, UnicodeError, ValueError):
            return 0  # unresolvable: the request itself will fail and say so
    return max((address_reach(a) for a in addresses), default=0)


class InwardRedirect(SourceError):
    """A redirect whose connection reached an address further in than the hop before it."""


class _Guard:
    """httpcore's trace of one exchange: passes every event on to the deadline's trace, and
    checks the address each new connection actually reached (the peer of its socket, after
    whatever lookup httpcore made: a name that resolved public when checked may resolve to
    loopback when connected) before anything is sent on it. ``allowed``: the reach the
    connection may have (None: any, the source's own URL); ``reach`` the peer's, once known."""

    def __init__(self, watch: "_Deadline", allowed: int | None, refuse):
        self.watch, self.allowed, self.refuse = watch, allowed, refuse
        self.reach: int | None = None

    def __call__(self, event: str, info: dict) -> None:
        self.watch.trace(event, info)
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            try:
                self.check(stream)
            except InwardRedirect:
                stream.close()  # httpcore never got it: nothing was sent, nothing left open
                raise

    def check(self, stream) -> None:
        """Check the peer of ``stream`` (a connection reused from the pool too)."""
        peer = stream.get_extra_info("server_addr") if stream is not None else None
        if not peer:
            return
        self.reach = address_reach(peer[0])
        if self.allowed is not None and self.reach > self.allowed:
            raise self.refuse(peer[0], self.reach)


def post_capped(client: httpx.Client, url: str, *, limit: int = ANSWER_BYTES,
                deadline: float | None = None, **kw) -> tuple[httpx.Response, bytes]:
    """POST with ``client``: :func:`send_capped`."""
    return send_capped(client, "POST", url, limit=limit, deadline=deadline, **kw)


def send_capped(client: httpx.Client, method: str, url: str, *, limit: int = ANSWER_BYTES,
                deadline: float | None = None, **kw) -> tuple[httpx.Response, bytes]:
    """Send ``method`` with ``client`` and read at most ``limit`` bytes of the answer (after
    decoding): ``(response, body)``; TooLarge past it, whatever the server declares or streams.
    The whole exchange has ``deadline`` seconds (default: the call's ``timeout``, else the
    client's), as a source's GET has (:class:`_Deadline`): httpx.ReadTimeout past it. httpx's
    own exceptions pass through."""
    given = kw.get("timeout")  # this call's own timeout, else the client's
    given = given.read if isinstance(given, httpx.Timeout) else given
    seconds = deadline or given or client.timeout.read or 30.0
    with _Deadline(seconds) as watch, \
            client.stream(method, url, extensions={"trace": watch.trace}, **kw) as response:
        return response, read_capped(response, limit, watch)


# What watcher asks servers to compress with, and reads: one layer of gzip or deflate. httpx
# would add br / zstd when their packages happen to be installed, and would unpack each chunk
# whole (a 64 KB chunk of gzip inside gzip is gigabytes); watcher unpacks itself, DECODE_STEP
# bytes at a time, so the cap holds on what the body expands to.
ACCEPT_ENCODING = "gzip, deflate"
DECODE_STEP = 1 << 16


@functools.cache
def tls_context():
    """The TLS settings every client of the process verifies servers with, made once: httpx's
    own default (certificates checked against certifi's bundle, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` when set), which each new client would otherwise load again (about 0.2 s,
    even for a client that only ever asks ``http://`` URLs). An SSL context is safe to share
    between threads."""
    return httpx.create_ssl_context()


def client_headers(user_agent: str) -> dict[str, str]:
    """The headers of every HTTP client of watcher's: who asks, and the encodings
    :func:`read_capped` reads."""
    return {"User-Agent": user_agent, "Accept-Encoding": ACCEPT_ENCODING}


class _EncodingRefused(httpx.DecodingError):
    """The server compressed its answer in a way watcher did not ask for: asking again gets
    the same answer, so it is not retried."""


def _decoded(response: httpx.Response):
    """The body of a streamed ``response``, unpacked at most DECODE_STEP bytes at a time
    (httpx.DecodingError for an encoding watcher did not ask for, stacked encodings included,
    or a body that is not what it says)."""
    header = response.headers.get("content-encoding", "")
    codings = [c.strip().lower() for c in header.split(",") if c.strip().lower() not in ("", "identity")]
    if not codings:
        yield from response.iter_raw()
        return
    if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise _EncodingRefused(f"content encoding {header!r} is not one watcher reads "
                              f"(it asks for {ACCEPT_ENCODING}, one layer)")
    import zlib

    raw_deflate = False  # deflate: a zlib stream, or (as some servers send it) a raw one
    unpack = zlib.decompressobj(zlib.MAX_WBITS | 16 if codings[0] != "deflate" else zlib.MAX_WBITS)
    try:
        first = True
        for data in response.iter_raw():
            if first and codings[0] == "deflate" and data:
                first = False
                try:
                    out = unpack.decompress(data, DECODE_STEP)
                except zlib.error:
                    raw_deflate = True
                    unpack = zlib.decompressobj(-zlib.MAX_WBITS)
                    out = unpack.decompress(data, DECODE_STEP)
                yield out
                data = unpack.unconsumed_tail
            while data:
                yield unpack.decompress(data, DECODE_STEP)
                data = unpack.unconsumed_tail
        yield unpack.flush()
    except zlib.error as e:
        kind = "raw deflate" if raw_deflate else codings[0]
        raise httpx.DecodingError(f"the body is not valid {kind} ({e})") from None


def read_capped(response: httpx.Response, limit: int, watch: "_Deadline | None" = None) -> bytes:
    """At most ``limit`` bytes of a streamed ``response``'s body (after decoding, which is
    bounded too: :func:`_decoded`); TooLarge past it, whatever the server declares or streams;
    httpx.ReadTimeout once ``watch``'s deadline has passed."""
    if watch is not None:  # the connection to shut down when the deadline passes
        watch.stream = response.extensions.get("network_stream") or watch.stream
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit and "content-encoding" not in response.headers:
        raise TooLarge(f"an answer of {int(declared):,} bytes, more than {limit:,}", int(declared))
    chunks, size = [], 0
    for chunk in _decoded(response):
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"an answer of more than {limit:,} bytes")
        chunks.append(chunk)
        if watch is not None and watch.passed():
            raise httpx.ReadTimeout(f"total deadline of {watch.seconds:g} s passed")
    if watch is not None and watch.passed():  # a body without a length ends where the deadline
        # shut the connection down, as a whole one would: what came is not all there is
        raise httpx.ReadTimeout(f"total deadline of {watch.seconds:g} s passed")
    return b"".join(chunks)


def _reason(status: int) -> str:
    return httpx.codes.get_reason_phrase(status)


def _unresolvable(e: BaseException) -> bool:
    """Did this connection error come from a failed host-name lookup?"""
    seen = 0
    while e is not None and seen < 10:
        if isinstance(e, socket.gaierror):
            return True
        text = str(e)
        if "Name or service not known" in text or "name resolution" in text \
                or "nodename nor servname" in text:
            return True
        e = e.__cause__ or e.__context__
        seen += 1
    return False


def _describe(e: Exception) -> str:
    if isinstance(e, httpx.TimeoutException):
        return "timed out"
    if isinstance(e, httpx.ConnectError):
        return f"cannot connect ({e})"
    if isinstance(e, httpx.RemoteProtocolError):
        return f"connection broken before the response was complete ({e})"
    if isinstance(e, httpx.TooManyRedirects):
        return REDIRECT_LOOP
    if isinstance(e, httpx.DecodingError):
        return f"response body could not be decoded ({e})"
    return f"network error ({e.__class__.__name__}: {e})"


_shared: dict[str, HttpClient] = {}
_shared_lock = threading.Lock()


# Environment overrides of the shared client's delays and limits, for tests that drive real
# watcher processes against local fault servers (a user never needs them).
_ENV_KNOBS = {"WATCHER_HTTP_RETRIES": ("retries", int), "WATCHER_HTTP_BACKOFF": ("backoff", float),
              "WATCHER_HTTP_MAX_BACKOFF": ("max_backoff", float),
              "WATCHER_HTTP_RETRY_AFTER_CAP": ("retry_after_cap", float),
              "WATCHER_HTTP_MAX_BYTES": ("max_bytes", int)}


def _env_options() -> dict:
    import os

    options = {}
    for var, (name, kind) in _ENV_KNOBS.items():
        if os.environ.get(var):
            try:
                options[name] = kind(os.environ[var])
            except ValueError:
                raise SourceError(f"${var}: {os.environ[var]!r} is not a number") from None
    return options


def shared_client(user_agent: str) -> HttpClient:
    """The process-wide client for ``user_agent`` (one rate limit per host for all sources)."""
    with _shared_lock:
        if user_agent not in _shared:
            _shared[user_agent] = HttpClient(user_agent, **_env_options())
        return _shared[user_agent]


def client_for(ctx) -> HttpClient:
    """The client of a :class:`~watcher.sources.SourceContext`: its own, else the shared one."""
    return ctx.http if ctx.http is not None else shared_client(ctx.user_agent)


def fetch_url(url: str, timeout: float = 30.0, user_agent: str = "watcher") -> bytes:
    """GET ``url`` (http, https or file) for ``watcher convert``; InputError on failure."""
    try:
        return shared_client(user_agent).get(url, timeout=timeout).content
    except SourceError as e:  # convert reads a URL, not a source's: its advice says so
        raise InputError(str(e).replace("the source's url", "the URL")) from e
