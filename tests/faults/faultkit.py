"""What the fault tests share: an SMTP server whose faults the test switches at will, a scripted
Slack stand-in that remembers which posts it accepted, a database pre-filled with the seed
papers, ``watcher once`` / ``status`` (in process), and the checks every fault test ends with
(no secret anywhere, every paper delivered exactly once per channel).

Servers listen on 127.0.0.1 only and stop with their ``with`` block; every loop here is bounded.
"""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from deliverkit import HookServer, MailServer, Received, Reply, free_port, seed_papers
from helpers import run_cli_text

from watcher.store import Store

# Known secrets: no output, log line or stored error may ever contain them.
SMTP_PASSWORD = "pw-Zq7-SECRET-smtp"
SLACK_PATH = "/services/T0SECRET/B0SECRET/xoxSECRETTOKEN42"
WRONG_PASSWORD = "wrong-pw-SECRET-too"
SECRETS = (SMTP_PASSWORD, WRONG_PASSWORD, "xoxSECRETTOKEN42", "T0SECRET/B0SECRET")
SMTP_USER = "watcher-bot"

ABS = re.compile(r"https://arxiv\.org/abs/(\d{4}\.\d{5})")


# --- SMTP with faults ------------------------------------------------------------------------

class _FaultHandler:
    """aiosmtpd handler whose behaviour follows ``server.fault``."""

    def __init__(self, server: "FaultySmtp"):
        self.server = server

    async def handle_RCPT(self, srv, session, envelope, address, rcpt_options):
        if self.server.fault == "550-rcpt" and address in self.server.refuse:
            return "550 5.1.1 <%s>: mailbox unavailable" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, srv, session, envelope):
        if self.server.fault == "451-data":
            return "451 4.3.0 Temporary local problem, try again later"
        if self.server.fault == "drop-data":  # the line goes dead before the message is taken
            srv.transport.close()
            return "250 never seen by the client"
        self.server.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                             envelope.original_content or envelope.content))
        return "250 2.0.0 Ok: queued"


class FaultySmtp(MailServer):
    """A :class:`deliverkit.MailServer` (with login) whose ``fault`` the test switches:
    ``None`` (accept), ``"421-connect"`` (greets with 421 and hangs up), ``"451-data"``,
    ``"550-rcpt"`` (refuses the addresses in ``refuse``), ``"drop-data"`` (closes the connection
    at DATA), ``"auth"`` (handled by giving watcher a wrong password, see :func:`env`)."""

    fault: str | None = None

    def __enter__(self) -> "FaultySmtp":
        self.port = self.port or free_port()
        self._controller = None
        self._greeter = None
        self.set_fault(self.fault)
        return self

    def _start_smtp(self) -> None:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult, LoginPassword

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = isinstance(auth_data, LoginPassword) and (
                auth_data.login.decode(), auth_data.password.decode()) == self.login
            return AuthResult(success=ok, handled=False)

        self._controller = Controller(_FaultHandler(self), hostname="127.0.0.1", port=self.port,
                                      server_hostname="localhost", authenticator=authenticator,
                                      auth_required=True, auth_require_tls=False)
        self._controller.start()

    def set_fault(self, fault: str | None) -> None:
        """Switch the fault; "421-connect" swaps the SMTP server for a greeter on the same port."""
        if fault == "421-connect":
            if self._controller:
                self._controller.stop()
                self._controller = None
            if not self._greeter:
                self._greeter = Greeter421(self.port).start()
        else:
            if self._greeter:
                self._greeter.stop()
                self._greeter = None
            if not self._controller:
                self._start_smtp()
        self.fault = fault

    def __exit__(self, *exc) -> None:
        if self._greeter:
            self._greeter.stop()
        if self._controller:
            self._controller.stop()

    def ids_by_recipient(self) -> dict[str, list[str]]:
        """arXiv ids in the HTML part of every accepted message, per recipient (repeated once
        per message that carries them; the HTML links each paper twice, counted once)."""
        out: dict[str, list[str]] = {}
        for got in self.received:
            html = got.message.get_payload()[1].get_content()
            for rcpt in got.rcpt_tos:
                out.setdefault(rcpt, []).extend(sorted(set(ABS.findall(html))))
        return out


class Greeter421:
    """A listener that answers every connection with ``421`` and closes it (a server refusing
    service at connect time). Accept loop with a timeout; ``stop`` ends it."""

    def __init__(self, port: int):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(8)
        self.sock.settimeout(0.05)
        self.stopping = threading.Event()
        self.connections = 0

    def start(self) -> "Greeter421":
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return self

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            with conn:
                try:
                    conn.sendall(b"421 4.3.2 Service not available, closing transmission channel\r\n")
                except OSError:
                    pass

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(2)
        self.sock.close()


# --- Slack stand-in --------------------------------------------------------------------------

class SlackStandIn(HookServer):
    """A :class:`deliverkit.HookServer` at a secret-looking path that also notes whether it
    accepted each post (2xx without hanging past the client's timeout)."""

    def __init__(self, script=None, default=None, timeout: float = 2.0):
        super().__init__(script, default, path=SLACK_PATH)
        self.timeout = timeout
        self.answers: list[Reply] = []

    def __enter__(self) -> "SlackStandIn":
        super().__enter__()
        owner = self
        handler = self.httpd.RequestHandlerClass
        original = handler.do_POST

        def do_POST(self):  # note the reply the base handler is about to use
            with owner.lock:
                reply = owner.script[0] if owner.script else owner.default
                owner.answers.append(reply)
            original(self)

        handler.do_POST = do_POST
        return self

    def accepted(self) -> list[dict]:
        """The JSON bodies the server took (a 2xx answered in time)."""
        return [r["json"] for r, a in zip(self.requests, self.answers)
                if 200 <= a.status < 300 and a.hang < self.timeout]

    def ids(self) -> list[str]:
        """arXiv ids in the accepted posts (with repeats)."""
        return [i for p in self.accepted() for b in p["blocks"] if b["type"] == "section"
                for i in ABS.findall(b["text"]["text"])]


# --- a database with the seed papers, and the config around it --------------------------------

def seed_database(db: Path, now: datetime | None = None) -> list[str]:
    """Store the 30 seed papers (ids 2504.07800…) as announced today; return their ids."""
    now = now or datetime.now(timezone.utc)
    papers = [replace(p, arxiv_id=f"2504.{7800 + i:05d}", version=1, announced=now.date(),
                      categories=["cs.LG"], published=now - timedelta(hours=2))
              for i, p in enumerate(seed_papers())]
    with Store.open(db) as store:
        store.upsert(papers, now - timedelta(minutes=5))
    return [p.arxiv_id for p in papers]


CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"
user_agent = "watcher-faults (mailto:test@example.org)"
{sources}
[profile.all]
title = "All"
query = 'the OR a OR of OR learning OR model'
max_papers = 100

[digest.daily]
profiles = ["all"]
schedule = "30 21 * * *"
formats = ["text", "html", "json"]
channels = [{channels}]

[channel.me]
type = "email"
host = "127.0.0.1"
port = {smtp_port}
security = "none"
username = "{user}"
password_env = "FAULTS_SMTP_PASSWORD"
from = "watcher <watcher@example.org>"
to = ["me@example.org", "lab@example.org", "boss@example.org"]
timeout = 3

[channel.lab]
type = "slack"
webhook_url_env = "FAULTS_SLACK_WEBHOOK"
timeout = 1

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"
"""


@dataclass
class Setup:
    """A test's folder, config, the ids it stored, and the environment for watcher."""

    folder: Path
    config: Path
    ids: list[str]
    env: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)

    @property
    def db(self) -> Path:
        return self.folder / "watcher.db"

    def watcher(self, *args: str):
        """``watcher --config … --log-level debug ARGS`` (in process: what is tested is what it
        says, stores and sends, not the process); the result is kept for the secret check."""
        r = run_cli_text("--config", str(self.config), "--log-level", "debug", *args,
                         cwd=self.folder, env=self.env)
        self.outputs.append(r)
        return r

    def status(self) -> str:
        r = self.watcher("status")
        assert r.returncode == 0, r.stderr
        return r.stdout

    def archive_ids(self) -> list[str]:
        """Ids in the file channel's json files (it never fails: the reference)."""
        return [p["arxiv_id"] for f in sorted((self.folder / "digests").glob("*.json"))
                for p in json.loads(f.read_text(encoding="utf-8"))]


def setup(tmp_path: Path, *, smtp_port: int = 1, slack_url: str = "http://127.0.0.1:1/x",
          channels=("me", "lab", "archive"), sources: str = "", seed: bool = True,
          password: str = SMTP_PASSWORD) -> Setup:
    """Write the config (and seed the database) in ``tmp_path``."""
    text = (CONFIG.replace("{smtp_port}", str(smtp_port)).replace("{user}", SMTP_USER)
            .replace("{channels}", ", ".join(f'"{c}"' for c in channels))
            .replace("{sources}", sources).replace("{{", "{").replace("}}", "}"))
    config = tmp_path / "config.toml"
    config.write_text(text, encoding="utf-8")
    ids = seed_database(tmp_path / "watcher.db") if seed else []
    env = {"FAULTS_SMTP_PASSWORD": password, "FAULTS_SLACK_WEBHOOK": slack_url, "WATCHER_DB_TIMEOUT": "2"}
    return Setup(tmp_path, config, ids, env)


def stored_texts(db: Path) -> str:
    """Every error text and run detail the database keeps (where a secret could leak)."""
    if not db.exists():
        return ""
    conn = sqlite3.connect(db)
    try:
        parts = []
        for table, cols in (("sources", "last_error, state"), ("channels", "last_error"),
                            ("digests", "last_error"), ("runs", "detail")):
            try:
                parts += [str(v) for row in conn.execute(f"SELECT {cols} FROM {table}") for v in row]
            except sqlite3.Error:
                pass
        return "\n".join(parts)
    finally:
        conn.close()


def assert_no_secret(s: Setup) -> None:
    """No secret in any output of this test's watcher runs nor in the database."""
    seen = "\n".join((r.stdout or "") + (r.stderr or "") for r in s.outputs) + stored_texts(s.db)
    for secret in SECRETS:
        assert secret not in seen, f"secret {secret!r} leaked"


def assert_no_traceback(r) -> None:
    assert "Traceback" not in r.stderr, r.stderr[-3000:]


def assert_exactly_once(ids: list[str], expected: list[str], what: str) -> None:
    doubles = sorted({i for i in ids if ids.count(i) > 1})
    assert not doubles, f"{what}: delivered twice: {doubles}"
    assert sorted(ids) == sorted(expected), f"{what}: missing {sorted(set(expected) - set(ids))}"
