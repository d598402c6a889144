"""The ``email`` channel: one multipart/alternative message (text + HTML) over SMTP.

Security ``starttls`` (default, port 587), ``tls`` (implicit TLS, 465) or ``none`` (25); the
server's certificate is verified against the system's CAs. With ``username`` set it logs in with
the password from the environment variable ``password_env`` names.

Size (docs/email.md): every message stays under ``max_bytes`` (100 KB), and every paper the ledger
records is in a message the server accepted. When the full digest does not fit, it is rendered
again showing fewer papers in full and listing the rest as titles with links (the largest number
of full entries that fits, found by bisection). When even the titles of all papers do not fit,
the digest goes out as several messages, "(part 1 of 3)" ..., each holding a share of the papers
(in full where room is left, else as titles with links), sent in order over one connection. If
part k is refused, :class:`PartialDelivery` says which papers parts 1 .. k-1 showed, so that
only those are recorded and the rest are sent by the next run.

Every recipient is checked (RCPT) before the message is sent: if the server refuses any, the
transaction is reset and DeliveryError raised, so nobody receives a copy that the ledger would
not record (a re-send would otherwise repeat it for the recipients that accepted).
"""

from __future__ import annotations

import re
import smtplib
import socket
import ssl
from dataclasses import replace
from datetime import datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, getaddresses, make_msgid, parseaddr

from ..errors import DeliveryError, PartialDelivery
from ..util.wire import shut_down
from ..present.counts import counts_line
from ..models import Digest, Paper, Sent
from ..present.render import plural, render
from ..kinds import Kind, option, options
from .base import Channel, secret_env


MAX_BYTES = 100_000  # docs/email.md: an e-mail stays under 100 KB, whatever max_bytes says
MAX_REPLY = 64 * 1024  # bytes of one reply of the server (a greeting, EHLO's list): real ones are < 1 KB
DEADLINE_TIMEOUTS = 4  # each step (connect and log in; each message) may take this x the channel's timeout


class _ReplyTooLong(OSError):
    """The server's reply went past MAX_REPLY bytes (smtplib would keep every line)."""


class _StepTimedOut(TimeoutError):
    """A step's total deadline passed (its timer shut the socket down): ``seconds`` of them."""

    def __init__(self, seconds: float):
        super().__init__(f"more than {seconds:g} s in total")


class _CappedReply:
    """The socket's lines as smtplib's ``getreply`` reads them, at most ``left`` bytes."""

    def __init__(self, file):
        self.file, self.left = file, MAX_REPLY

    def readline(self, size: int = -1) -> bytes:
        line = self.file.readline(size)
        self.left -= len(line)
        if self.left < 0:
            raise _ReplyTooLong(f"a reply longer than {MAX_REPLY:,} bytes")
        return line

    def close(self) -> None:
        self.file.close()


class _Bounded:
    """smtplib's client with each reply capped (MAX_REPLY) and a total deadline per step: a
    timer that shuts the socket down when it passes (``arm``), as watcher's HTTP requests have;
    smtplib's own timeout bounds each read only, so a server sending a line every few seconds
    held it forever."""

    expired = False

    def getreply(self):
        if self.file is None:
            self.file = _CappedReply(self.sock.makefile("rb"))
        self.file.left = MAX_REPLY
        return super().getreply()

    def arm(self, seconds: float) -> None:
        import threading

        self.disarm()
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def disarm(self) -> None:
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.cancel()

    def _expire(self) -> None:
        self.expired = True
        shut_down(getattr(self, "sock", None))

    def close(self) -> None:
        self.disarm()
        super().close()


class _SMTP(_Bounded, smtplib.SMTP):
    pass


class _SMTP_SSL(_Bounded, smtplib.SMTP_SSL):
    pass


def subject(digest: Digest) -> str:
    """``LLM-RL — 2025-04-12: 12 new papers`` on one line (no header injection possible);
    with several profiles, what each brought: ``(LLM-RL 10, Robotics 2, Protein design none)``."""
    what = plural(len(digest.matches), "new paper") if digest.matches else "no new papers"
    total = sum(c.papers for c in digest.per_profile)
    if digest.matches and total > len(digest.matches):  # a part of a split digest: of how many
        what = f"{len(digest.matches)} of {plural(total, 'new paper')}"
    per = f" ({counts_line(digest.per_profile)})" if digest.per_profile else ""
    return " ".join(f"{digest.title} — {digest.date.isoformat()}: {what}{per}".split())


def _not_offered(text: str) -> str:
    """smtplib's "SMTP AUTH extension not supported by server." said once, with what to change."""
    what = re.sub(r"\s*extension not supported by server\.?$", "", text).strip() or text
    if what == "SMTP AUTH":
        return ("the server offers no login (SMTP AUTH): leave out username and password_env, or "
                'use security = "starttls" or "tls" (many servers offer login only over TLS)')
    if what == "STARTTLS":
        return 'the server offers no STARTTLS: use security = "tls" (port 465) or "none"'
    return f"the server does not support {what} (check security)"


class EmailChannel(Channel):
    """Sends the digest as an e-mail with a text part and an HTML part."""

    def formats(self) -> tuple[str, ...]:
        """Always text and HTML (multipart/alternative), whatever the digest's formats."""
        return ("text", "html")

    # --- building -----------------------------------------------------------------------

    def build(self, digest: Digest, text: str, html: str, now: datetime | None = None) -> EmailMessage:
        """The message: headers encoded by the SMTP policy (UTF-8 names and subject as RFC 2047
        words), a fresh Message-ID and the Date, the text part first and the HTML part second."""
        cfg = self.cfg
        msg = EmailMessage(policy=SMTP)
        try:
            msg["Subject"] = subject(digest)
            msg["From"] = cfg.options.sender
            msg["To"] = ", ".join(cfg.options.to)
        except (ValueError, IndexError) as e:
            raise DeliveryError(f"channel {cfg.name}: bad address in from/to ({e})") from e
        msg["Date"] = format_datetime((now or datetime.now()).astimezone())
        msg["Message-ID"] = make_msgid("watcher", domain=_domain(cfg.options.sender))
        msg["Auto-Submitted"] = "auto-generated"
        msg["X-Mailer"] = "watcher"
        for header, value in list_headers(digest.name, cfg.name, cfg.options.sender).items():
            msg[header] = value
        if not digest.matches and digest.empty_reason:  # the text format has no place for it;
            # an e-mail's text part is no file to read back, so it says why (as the HTML does)
            text += "\n\n" + " ".join(f"No new papers today: {digest.empty_reason}.".split())
        msg.set_content(text, subtype="plain", charset="utf-8", cte="quoted-printable")
        msg.add_alternative(html, subtype="html", charset="utf-8", cte="quoted-printable")
        return msg

    def fit(self, digest: Digest, rendered: dict[str, str]) -> bytes:
        """The first (usually the only) message of :meth:`messages` as bytes."""
        return self.messages(digest, rendered)[0][0]

    def messages(self, digest: Digest, rendered: dict[str, str]) -> list[tuple[bytes, list[Paper]]]:
        """The messages to send, each under ``max_bytes``, with the papers each one shows: the
        full digest when it fits; else one message with the most full entries that fit and the
        rest as titles with links; else as few parts as hold every paper at least as a title,
        the best papers first: the later parts are packed with titles from the end of the
        digest, so that the first part holds the fewest papers and has the room to show the
        best of them in full (and the updated papers' list)."""
        limit = min(self.cfg.options.max_bytes, MAX_BYTES)
        tdir = self.ctx.templates_dir
        # The text part mirrors the HTML (TL;DR, shortened abstract, links): it is read, not
        # kept as a listing; files and stdout keep the seed format with whole abstracts.
        text = render(digest, "email", tdir)
        data = self.build(digest, text, rendered["html"]).as_bytes()
        self.sent = None
        if len(data) < limit:
            return [(data, digest.papers)]

        def attempt(part: Digest, full: int) -> bytes:
            texts = {f: render(part, f, tdir, full_limit=full) for f in ("email", "html")}
            return self.build(part, texts["email"], texts["html"]).as_bytes()

        def fits(part: Digest, full: int) -> bool:
            return len(attempt(part, full)) < limit

        n = len(digest.matches)
        if n and fits(digest, 0):  # every title fits: one message, as many in full as fit
            full = _largest(0, n - 1, lambda k: fits(digest, k))
            self.sent = Sent({m.paper.key for m in digest.matches[full:]})
            return [(attempt(digest, full), digest.papers)]
        chunks, rest = [], list(digest.matches)
        while rest:  # the last part first: as many of the last papers as fit as titles (with the
            # longest possible label); the part that reaches the first paper carries the updated list
            def last(k: int) -> Digest:
                return _part(digest, rest[-k:], digest.updated if k == len(rest) else [], n, n)

            most = _largest(1, len(rest), lambda k: fits(last(k), 0))
            if most is None:
                raise DeliveryError(f"channel {self.cfg.name}: a single paper's title and link do "
                                    f"not fit in max_bytes = {limit}; raise max_bytes")
            chunks.insert(0, (rest[-most:], last(most).updated))
            rest = rest[:-most]
        if not chunks:  # no papers, only the updated list, and it is too long
            raise DeliveryError(f"channel {self.cfg.name}: even an e-mail without papers is over "
                                f"max_bytes = {limit}; raise max_bytes")
        out, sent = [], Sent(parts=len(chunks))
        for i, (matches, updated) in enumerate(chunks, 1):
            part = _part(digest, matches, updated, i, len(chunks))
            full = _largest(0, len(matches), lambda k: fits(part, k))
            if full is None:
                raise DeliveryError(f"channel {self.cfg.name}: part {i} of {len(chunks)} does not "
                                    f"fit in max_bytes = {limit}; raise max_bytes")
            out.append((attempt(part, full), [m.paper for m in matches]))
            sent.titles_only.update(m.paper.key for m in matches[full:])
        self.sent = sent
        return out

    # --- sending ------------------------------------------------------------------------

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Connect, secure, log in, check every recipient, send; DeliveryError otherwise."""
        cfg = self.cfg
        password = secret_env(cfg, "password_env") if cfg.options.username else None
        messages = self.messages(digest, rendered)
        sender = parseaddr(cfg.options.sender)[1]
        recipients = [addr for _, addr in getaddresses(list(cfg.options.to)) if addr]
        if not sender or not recipients:
            raise DeliveryError(f"channel {cfg.name}: no usable address in from/to")
        where = f"channel {cfg.name}: SMTP {cfg.options.host}:{cfg.options.port}"
        delivered: list[Paper] = []
        sent = 0
        step = DEADLINE_TIMEOUTS * cfg.timeout
        smtp = None
        try:
            with self._connect(step) as smtp:
                if password is not None:
                    smtp.login(cfg.options.username, password)
                for data, papers in messages:
                    smtp.arm(step)
                    self._transaction(smtp, where, sender, recipients, data)
                    sent += 1
                    delivered.extend(papers)
        except DeliveryError as e:
            if sent == len(messages):
                return  # all accepted; only the goodbye failed
            raise _partial(e, delivered, sent + 1, len(messages)) from e
        except (smtplib.SMTPException, ssl.SSLError, OSError) as e:
            if sent == len(messages):
                return
            # the deadline shut the socket: say that
            error = _StepTimedOut(step) if smtp is not None and smtp.expired else e
            raise _partial(self._failure(error, where), delivered, sent + 1, len(messages)) from error

    def _failure(self, e: Exception, where: str) -> DeliveryError:
        """The one-line DeliveryError for an exception of smtplib, ssl or the socket."""
        cfg = self.cfg
        if isinstance(e, smtplib.SMTPAuthenticationError):
            return DeliveryError(f"{where}: login as {cfg.options.username} refused ({e.smtp_code} "
                                 f"{_text(e.smtp_error)})")
        if isinstance(e, smtplib.SMTPNotSupportedError):
            return DeliveryError(f"{where}: {_not_offered(str(e))}")
        if isinstance(e, smtplib.SMTPResponseException):
            return DeliveryError(f"{where}: {e.smtp_code} {_text(e.smtp_error)}{_later(e.smtp_code)}")
        if isinstance(e, smtplib.SMTPServerDisconnected) and isinstance(e.__context__, _ReplyTooLong):
            return DeliveryError(f"{where}: the server sent {e.__context__} (not an SMTP server's "
                                 "answer); nothing more was read")
        if isinstance(e, smtplib.SMTPServerDisconnected):
            return DeliveryError(f"{where}: the server closed the connection before it accepted the "
                                 "message; the next run sends it again")
        if isinstance(e, ssl.SSLCertVerificationError):
            return DeliveryError(f"{where}: TLS certificate not trusted ({e.verify_message})")
        if isinstance(e, ssl.SSLError):
            return DeliveryError(f"{where}: TLS failed ({e.reason or e}); check security/port")
        if isinstance(e, _StepTimedOut):
            return DeliveryError(f"{where}: timed out after {e}")
        if isinstance(e, (socket.timeout, TimeoutError)):
            return DeliveryError(f"{where}: timed out after {cfg.timeout:g}s")
        if isinstance(e, smtplib.SMTPException):
            return DeliveryError(f"{where}: {e}")
        return DeliveryError(f"{where}: {getattr(e, 'strerror', None) or e}")

    @staticmethod
    def _transaction(smtp: smtplib.SMTP, where: str, sender: str, recipients: list[str],
                     data: bytes) -> None:
        """One message: MAIL, a RCPT per recipient (all must pass, else RSET), DATA."""
        code, reply = smtp.mail(sender, _mail_options(smtp, data))
        if code != 250:
            raise DeliveryError(f"{where}: sender {sender} refused ({code} {_text(reply)}){_later(code)}")
        refused = {}
        for rcpt in recipients:
            code, reply = smtp.rcpt(rcpt)
            if code not in (250, 251):
                refused[rcpt] = f"{code} {_text(reply)}"
        if refused:
            smtp.rset()
            detail = "; ".join(f"{r}: {why}" for r, why in refused.items())
            raise DeliveryError(f"{where}: recipients refused, nothing sent ({detail})")
        code, reply = smtp.data(data)
        if code != 250:
            raise DeliveryError(f"{where}: message refused ({code} {_text(reply)}){_later(code)}")

    def _connect(self, deadline: float) -> "_SMTP | _SMTP_SSL":
        """Connected (the greeting read), secured and greeted, within ``deadline`` seconds in
        total (the timer goes on through the login; each message re-arms it)."""
        cfg = self.cfg
        context = ssl.create_default_context()
        if cfg.options.security == "tls":
            smtp = _SMTP_SSL(timeout=cfg.timeout, context=context)
        else:
            smtp = _SMTP(timeout=cfg.timeout)
        try:
            smtp.arm(deadline)
            smtp._host = cfg.options.host  # the TLS server name, which smtplib sets only when it connects itself
            code, greeting = smtp.connect(cfg.options.host, cfg.options.port)
            if code != 220:  # as smtplib's constructor refuses a server that does not greet
                raise smtplib.SMTPConnectError(code, greeting)
            smtp.ehlo()
            if cfg.options.security == "starttls":
                if not smtp.has_extn("starttls"):
                    raise DeliveryError(f"channel {cfg.name}: SMTP {cfg.options.host}:{cfg.options.port} does not "
                                        "offer STARTTLS (security = \"starttls\")")
                smtp.starttls(context=context)
                smtp.ehlo()
        except BaseException as e:
            smtp.close()
            if smtp.expired and isinstance(e, (smtplib.SMTPException, OSError)):
                raise _StepTimedOut(deadline) from e
            raise
        return smtp


def _part(digest: Digest, matches: list, updated: list, i: int, n: int) -> Digest:
    """Part ``i`` of ``n`` of a split digest: its title says so, it holds ``matches``."""
    return replace(digest, title=f"{digest.title} (part {i} of {n})", matches=matches,
                   updated=updated)


def _partial(error: DeliveryError, delivered: list[Paper], i: int, n: int) -> DeliveryError:
    """The error of part ``i`` of ``n``; after accepted parts, a PartialDelivery saying so."""
    if not delivered:
        return error
    done = "part 1 was" if i == 2 else f"parts 1-{i - 1} were"
    return PartialDelivery(f"{error} (part {i} of {n}; {done} sent and recorded, the next run "
                           "sends the rest)", delivered)


def _largest(lo: int, hi: int, fits) -> int | None:
    """The largest k in [lo, hi] with ``fits(k)`` (monotone: fits for small k), or None."""
    if hi < lo or not fits(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _mail_options(smtp: smtplib.SMTP, data: bytes) -> list[str]:
    return [f"SIZE={len(data)}"] if smtp.has_extn("size") else []


def list_headers(digest: str, channel: str, sender: str | None) -> dict[str, str]:
    """RFC 2919 ``List-Id`` and RFC 2369 ``List-Unsubscribe`` for a digest sent to a lab list:
    mail filters and clients group the digest by its list id
    (``<daily.mail.watcher.example.org>``), and "unsubscribe" writes to the sender, who runs
    the list (``<mailto:bot@example.org?subject=unsubscribe%20daily>``)."""
    from urllib.parse import quote

    addr = parseaddr(sender or "")[1]
    domain = _domain(sender) or "localhost"
    parts = [re.sub(r"[^A-Za-z0-9-]+", "-", part).strip("-") or "x" for part in (digest, channel)]
    out = {"List-Id": f"watcher digest {parts[0]} <{'.'.join(parts)}.watcher.{domain}>"}
    if addr:
        out["List-Unsubscribe"] = f"<mailto:{addr}?subject={quote('unsubscribe ' + digest)}>"
    return out


def _domain(sender: str | None) -> str | None:
    addr = parseaddr(sender or "")[1]
    return addr.rpartition("@")[2] or None if "@" in addr else None


def _later(code: int) -> str:
    """The hint for a temporary (4xx) SMTP refusal."""
    return "; a temporary refusal, the next run tries again" if 400 <= code < 500 else ""


def _text(reply: bytes | str) -> str:
    """An SMTP reply kept to its first line, at most 200 characters: servers add detail lines
    that may quote what they were sent (masked anyway, :mod:`watcher.masking`)."""
    if isinstance(reply, bytes):
        reply = reply.decode("utf-8", "replace")
    lines = reply.strip().splitlines() or [""]
    text = " ".join(lines[0].split())
    return text[:200] + "…" if len(text) > 200 or len(lines) > 1 else text


__all__ = ["EmailChannel", "PartialDelivery", "subject"]


def _validate(r, where: str, v: dict) -> dict:
    r.choice(f"{where}.security", v["security"], ("starttls", "tls", "none"))
    if v["port"] is not None and not 1 <= v["port"] <= 65535:
        raise r.fail(f"{where}.port", f"must be between 1 and 65535, got {v['port']}")
    if not 10_000 <= v["max_bytes"] <= 100_000:  # docs/email.md: an e-mail stays under 100 KB
        raise r.fail(f"{where}.max_bytes", f"must be between 10000 and 100000, got {v['max_bytes']}")
    if not v["host"].strip():
        raise r.fail(f"{where}.host", "must not be empty (the SMTP server, such as smtp.example.org)")
    r.address(f"{where}.from", v["from"])
    if not v["to"]:
        raise r.fail(f"{where}.to", "needs at least one recipient")
    for address in v["to"]:
        r.address(f"{where}.to", address)
    if v["username"] and not v["password_env"]:
        raise r.fail(f"{where}.password_env", "a username needs password_env (never a password in the file)")
    return {"port": v["port"] or {"starttls": 587, "tls": 465, "none": 25}[v["security"]]}


@options
class EmailOptions:
    host: str = option(help="the SMTP server, such as `smtp.example.org` (not empty)")
    port: int | None = option(None, help="1–65535 (default by `security`: 587, 465, 25)")
    security: str = option("starttls", help="`starttls`, `tls` or `none`")
    username: str | None = option(None, help="the SMTP login (needs `password_env`)")
    password_env: str | None = option(None, secret=True, help="the variable holding the SMTP password")
    sender: str = option(key="from", help="the From address, such as `Ann <ann@example.org>`")
    to: tuple[str, ...] = option(help="the recipients (at least one), each an address")
    max_bytes: int = option(100_000, help="the largest e-mail (10000–100000): more papers are listed "
                                          "as titles, then sent as several e-mails")


KIND = Kind("email", EmailChannel, EmailOptions, _validate)
