"""Real local servers and sample digests for the delivery tests.

* :class:`MailServer` — an aiosmtpd SMTP server on 127.0.0.1 that keeps every message it
  accepted (envelope and parsed message); optional STARTTLS / implicit TLS with a self-signed
  certificate made by the ``openssl`` CLI, optional login, recipients it refuses.
* :class:`HookServer` — an ``http.server`` in a thread standing in for Slack or a webhook: it
  records each request and answers from a script (``200 ok``, ``429`` with Retry-After, ``500``,
  ``400 invalid_blocks``, or hanging past the client's timeout).
* :func:`sample_digest` — a Digest built from the seed digest in ``tests/data`` with arXiv ids,
  categories, upvotes and reasons filled in deterministically.
* :func:`ledger` — the papers the delivery ledger of a folder's ``watcher.db`` holds.
"""

from __future__ import annotations

import email
import email.policy
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import date
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from helpers import QuietHTTPServer
from watcher import formats
from watcher.models import Digest, Match

REPO = Path(__file__).resolve().parent.parent.parent
DATA = Path(__file__).resolve().parent.parent / "data"
SEED_DIGEST = DATA / "llm-rl-2025-04-12.txt"
GOLDEN = Path(__file__).resolve().parent.parent / "golden"

INJECTION_TITLE = ("<script>alert(1)</script> <!channel> <@U123> hi\r\nBcc: victim@evil.example "
                   "[x](javascript:alert(2)) <https://evil.example|click> *bold* {{ 7*7 }}")
INJECTION_ABSTRACT = "Before {{ 7*7 }} {% if true %}jinja{% endif %} <img src=x onerror=alert(3)> & after"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- sample data -----------------------------------------------------------------------------

def seed_papers():
    """The 30 papers of the seed digest (title, authors, date, abstract)."""
    return formats.read(SEED_DIGEST.read_bytes(), "seed").papers


def sample_digest(n: int = 4, *, updated: int = 1, title: str = "LLM-RL") -> Digest:
    """A deterministic digest of the first ``n`` seed papers (ids, categories, upvotes on some,
    reasons) and ``updated`` revised papers."""
    papers = seed_papers()
    out = []
    for i, p in enumerate(papers[: n + updated]):
        p = replace(p, arxiv_id=f"2504.{7600 + i:05d}", version=1 + i % 3,
                    categories=["cs.CL", "cs.LG"] if i % 2 else ["cs.LG"],
                    primary_category="cs.CL" if i % 2 else "cs.LG",
                    upvotes=17 + i if i % 2 == 0 else None)
        out.append(Match(p, 3.0 - i / 10, ['all: "reinforcement learning"', "category cs.LG"], "llm-rl"))
    return Digest(name="daily", title=title, date=date(2025, 4, 12), matches=out[:n],
                  updated=out[n:])


def injection_digest() -> Digest:
    """A digest whose first paper carries every injection attempt of the test plan."""
    d = sample_digest(2, updated=0)
    evil = d.matches[0].paper
    d.matches[0] = Match(replace(evil, title=INJECTION_TITLE, abstract=INJECTION_ABSTRACT,
                                 authors=["<b>Mallory</b>", "Eve\r\nBcc: x@evil.example"],
                                 url="javascript:alert(4)", arxiv_id=None),
                         1.0, ["<@U999> reason"], "llm-rl")
    return d


# --- SMTP --------------------------------------------------------------------------------------

def make_cert(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1/localhost (``openssl`` CLI): (cert, key)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key


@dataclass
class Received:
    """One message the SMTP server accepted."""

    mail_from: str
    rcpt_tos: list[str]
    data: bytes

    @property
    def message(self) -> email.message.EmailMessage:
        """The message parsed with the default (modern) policy."""
        return email.message_from_bytes(self.data, policy=email.policy.default)


class _Handler:
    def __init__(self, server: "MailServer"):
        self.server = server

    async def handle_RCPT(self, srv, session, envelope, address, rcpt_options):
        if address in self.server.refuse:
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, srv, session, envelope):
        self.server.data_commands += 1
        if self.server.data_commands in self.server.refuse_data:
            return "451 4.3.0 try again later"
        self.server.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                             envelope.original_content or envelope.content))
        return "250 Message accepted for delivery"


@dataclass
class MailServer:
    """An aiosmtpd server; use as a context manager. ``mode`` is none, starttls or tls."""

    mode: str = "none"
    cert: tuple[Path, Path] | None = None
    login: tuple[str, str] | None = None
    refuse: set[str] = field(default_factory=set)
    refuse_data: set[int] = field(default_factory=set)  # the DATA commands (1, 2, ...) to refuse
    received: list[Received] = field(default_factory=list)
    data_commands: int = 0
    port: int = 0

    def __enter__(self) -> "MailServer":
        import ssl

        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult, LoginPassword

        kwargs = {}
        if self.cert:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(*map(str, self.cert))
            if self.mode == "starttls":
                kwargs.update(tls_context=ctx, require_starttls=True)
            elif self.mode == "tls":
                kwargs.update(ssl_context=ctx)
        if self.login:
            def authenticator(server, session, envelope, mechanism, auth_data):
                ok = isinstance(auth_data, LoginPassword) and (
                    auth_data.login.decode(), auth_data.password.decode()) == self.login
                return AuthResult(success=ok, handled=False)  # handled=False: answer 535

            kwargs.update(authenticator=authenticator, auth_required=True,
                          auth_require_tls=self.mode != "none")
        self.port = free_port()
        self._controller = Controller(_Handler(self), hostname="127.0.0.1", port=self.port,
                                      server_hostname="localhost", **kwargs)
        self._controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self._controller.stop()


# --- HTTP --------------------------------------------------------------------------------------

@dataclass
class Reply:
    """One scripted answer: status, body, headers; ``hang`` seconds of silence first."""

    status: int = 200
    body: str = "ok"
    headers: dict = field(default_factory=dict)
    hang: float = 0.0


class HookServer:
    """A local HTTP server recording POSTs. ``script`` answers requests in order; when it runs
    out, ``default`` answers. Use as a context manager; ``url`` is its address."""

    def __init__(self, script: list[Reply] | None = None, default: Reply | None = None,
                 path: str = "/services/T000/B000/SECRETTOKEN"):
        self.script = list(script or [])
        self.default = default or Reply()
        self.requests: list[dict] = []
        self.path = path
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        """The URL to configure (it contains a fake secret token)."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{self.path}"

    @property
    def payloads(self) -> list:
        """The JSON bodies received, in order."""
        return [r["json"] for r in self.requests]

    def __enter__(self) -> "HookServer":
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with owner.lock:
                    reply = owner.script.pop(0) if owner.script else owner.default
                    owner.requests.append({"path": self.path, "headers": dict(self.headers),
                                           "json": json.loads(body or b"null"), "time": time.monotonic()})
                if reply.hang:
                    time.sleep(reply.hang)
                data = reply.body.encode()
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --- the CLI ---------------------------------------------------------------------------------

def run_watcher(*args: str, cwd: Path | None = None, env: dict | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``python -m watcher ARGS`` from this checkout as a user would (text output)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("WATCHER_CONFIG", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "watcher", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def ledger(folder: Path) -> list[str]:
    """The key of every delivery the ledger of ``folder / "watcher.db"`` records, sorted."""
    with sqlite3.connect(folder / "watcher.db") as conn:
        return sorted(r[0] for r in conn.execute("SELECT paper FROM deliveries"))


class HtmlCollector(HTMLParser):
    """Collects the tags, attributes and text of an HTML document (to prove markup inert)."""

    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)
