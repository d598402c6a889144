"""The ``email`` channel: one multipart/alternative message (text + HTML) over SMTP.

Security ``starttls`` (default, port 587), ``tls`` (implicit TLS, 465) or ``none`` (25); the
server's certificate is verified against the system's CAs. With ``username`` set it logs in with
the password from the environment variable ``password_env`` names.

Size (SPEC §6): the whole message stays under ``max_bytes`` (100 KB). When the full digest does
not fit, the message is rendered again showing fewer papers in full and listing the rest as
titles with links (the largest number of full entries that fits, found by bisection).

Every recipient is checked (RCPT) before the message is sent: if the server refuses any, the
transaction is reset and DeliveryError raised, so nobody receives a copy that the ledger would
not record (a re-send would otherwise repeat it for the recipients that accepted).
"""

from __future__ import annotations

import smtplib
import socket
import ssl
from datetime import datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, getaddresses, make_msgid, parseaddr

from ..errors import DeliveryError
from ..models import Digest
from ..render import plural, render
from .base import Channel, secret_env


def subject(digest: Digest) -> str:
    """``LLM-RL — 2025-04-12: 12 new papers`` on one line (no header injection possible)."""
    what = plural(len(digest.matches), "new paper") if digest.matches else "no new papers"
    return " ".join(f"{digest.title} — {digest.date.isoformat()}: {what}".split())


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
            msg["From"] = cfg.sender
            msg["To"] = ", ".join(cfg.to)
        except (ValueError, IndexError) as e:
            raise DeliveryError(f"channel {cfg.name}: bad address in from/to ({e})") from None
        msg["Date"] = format_datetime((now or datetime.now()).astimezone())
        msg["Message-ID"] = make_msgid("watcher", domain=_domain(cfg.sender))
        msg["Auto-Submitted"] = "auto-generated"
        msg["X-Mailer"] = "watcher"
        if not digest.matches and digest.empty_reason:  # the text format has no place for it;
            # an e-mail's text part is no file to read back, so it says why (as the HTML does)
            text += "\n\n" + " ".join(f"No new papers today: {digest.empty_reason}.".split())
        msg.set_content(text, subtype="plain", charset="utf-8", cte="quoted-printable")
        msg.add_alternative(html, subtype="html", charset="utf-8", cte="quoted-printable")
        return msg

    def fit(self, digest: Digest, rendered: dict[str, str]) -> bytes:
        """The message as bytes, under ``max_bytes``: the full digest when it fits, else the most
        full entries that fit with the rest as titles, else titles only (as many as fit)."""
        limit = self.cfg.max_bytes
        tdir = self.ctx.templates_dir
        # The text part mirrors the HTML (TL;DR, shortened abstract): it is read, not kept
        # as a listing; files and stdout keep the seed format with whole abstracts.
        text = render(digest, "text", tdir, brief=True)
        data = self.build(digest, text, rendered["html"]).as_bytes()
        if len(data) < limit:
            return data

        def attempt(full: int, listed: int | None = None) -> bytes:
            parts = {f: render(digest, f, tdir, full_limit=full, list_limit=listed, brief=True)
                     for f in ("text", "html")}
            return self.build(digest, parts["text"], parts["html"]).as_bytes()

        n = len(digest.matches)
        best = _largest(0, n - 1, lambda k: len(attempt(k)) < limit)
        if best is not None:
            return attempt(best)
        listed = _largest(0, n, lambda k: len(attempt(0, k)) < limit)
        if listed is None:
            raise DeliveryError(f"channel {self.cfg.name}: even an e-mail without papers is over "
                                f"max_bytes = {limit}; raise max_bytes")
        return attempt(0, listed)

    # --- sending ------------------------------------------------------------------------

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Connect, secure, log in, check every recipient, send; DeliveryError otherwise."""
        cfg = self.cfg
        password = secret_env(cfg, "password_env") if cfg.username else None
        data = self.fit(digest, rendered)
        sender = parseaddr(cfg.sender)[1]
        recipients = [addr for _, addr in getaddresses(list(cfg.to)) if addr]
        if not sender or not recipients:
            raise DeliveryError(f"channel {cfg.name}: no usable address in from/to")
        where = f"channel {cfg.name}: SMTP {cfg.host}:{cfg.port}"
        try:
            with self._connect() as smtp:
                if password is not None:
                    smtp.login(cfg.username, password)
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
        except smtplib.SMTPAuthenticationError as e:
            raise DeliveryError(f"{where}: login as {cfg.username} refused ({e.smtp_code} "
                                f"{_text(e.smtp_error)})") from None
        except smtplib.SMTPNotSupportedError as e:
            raise DeliveryError(f"{where}: server does not support {e} (check security)") from None
        except smtplib.SMTPResponseException as e:
            raise DeliveryError(f"{where}: {e.smtp_code} {_text(e.smtp_error)}{_later(e.smtp_code)}") from None
        except smtplib.SMTPServerDisconnected:
            raise DeliveryError(f"{where}: the server closed the connection before it accepted the "
                                "message; the next run sends it again") from None
        except ssl.SSLCertVerificationError as e:
            raise DeliveryError(f"{where}: TLS certificate not trusted ({e.verify_message})") from None
        except ssl.SSLError as e:
            raise DeliveryError(f"{where}: TLS failed ({e.reason or e}); check security/port") from None
        except (socket.timeout, TimeoutError):
            raise DeliveryError(f"{where}: timed out after {cfg.timeout:g}s") from None
        except smtplib.SMTPException as e:
            raise DeliveryError(f"{where}: {e}") from None
        except OSError as e:
            raise DeliveryError(f"{where}: {e.strerror or e}") from None

    def _connect(self) -> smtplib.SMTP:
        cfg = self.cfg
        context = ssl.create_default_context()
        if cfg.security == "tls":
            smtp = smtplib.SMTP_SSL(cfg.host, cfg.port, timeout=cfg.timeout, context=context)
        else:
            smtp = smtplib.SMTP(cfg.host, cfg.port, timeout=cfg.timeout)
        try:
            smtp.ehlo()
            if cfg.security == "starttls":
                if not smtp.has_extn("starttls"):
                    raise DeliveryError(f"channel {cfg.name}: SMTP {cfg.host}:{cfg.port} does not "
                                        "offer STARTTLS (security = \"starttls\")")
                smtp.starttls(context=context)
                smtp.ehlo()
        except BaseException:
            smtp.close()
            raise
        return smtp


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


def _domain(sender: str | None) -> str | None:
    addr = parseaddr(sender or "")[1]
    return addr.rpartition("@")[2] or None if "@" in addr else None


def _later(code: int) -> str:
    """The hint for a temporary (4xx) SMTP refusal."""
    return "; a temporary refusal, the next run tries again" if 400 <= code < 500 else ""


def _text(reply: bytes | str) -> str:
    if isinstance(reply, bytes):
        reply = reply.decode("utf-8", "replace")
    return " ".join(reply.split())


__all__ = ["EmailChannel", "subject"]
