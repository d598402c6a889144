"""Test helpers: recorded inputs from ``tests/data`` and a fast HTTP client."""

from __future__ import annotations

import gzip
import socket
import threading
from datetime import datetime, timezone
from pathlib import Path

from watcher.http import HttpClient
from watcher.sources.base import SourceContext

DATA = Path(__file__).resolve().parent / "data"
UA = "watcher-test (mailto:test@example.org)"


def data(name: str) -> bytes:
    """The bytes of a recorded input (``.gz`` copies are decompressed)."""
    path = DATA / name
    if not path.exists():
        path = DATA / (name + ".gz")
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


class Sleeps(list):
    """A ``sleep`` that records the delays asked for and sleeps only a token amount."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def fast_client(**kw) -> HttpClient:
    """An HttpClient with tiny delays: retries and Retry-After are recorded, not slept."""
    options = dict(timeout=0.5, min_interval=0.0, retries=3, backoff=0.001, max_backoff=0.01,
                   retry_after_cap=120, sleep=Sleeps())
    options.update(kw)
    return HttpClient(UA, **options)


def context(client: HttpClient, now: datetime | None = None, since: datetime | None = None):
    """A SourceContext with this client and a fixed clock."""
    now = now or datetime(2026, 4, 13, 12, 0, tzinfo=timezone.utc)
    return SourceContext(now=now, http=client, user_agent=UA, since=since)


def mailed_links_config(smtp_port: int | str, base_url: str = "https://papers.example.org") -> str:
    """A config of one RAG profile over the listing ``day.jsonl.gz``, digested daily to an e-mail
    channel at 127.0.0.1:``smtp_port`` with rating links to ``base_url`` (secret: WATCHER_TEST_SECRET)."""
    return f"""
[watcher]
database = "watcher.db"

[source.day]
type = "listing"
path = "day.jsonl.gz"

[profile.mine]
query = '"retrieval-augmented" OR RAG OR "retrieval augmented"'

[digest.daily]
profiles = ["mine"]
every = "1d"
channels = ["mail"]

[channel.mail]
type = "email"
host = "127.0.0.1"
port = {smtp_port}
security = "none"
from = "watcher <bot@example.org>"
to = ["me@example.org"]

[web]
base_url = "{base_url}"
secret_env = "WATCHER_TEST_SECRET"
"""


class RawServer:
    """A plain TCP server on 127.0.0.1 for protocol misbehaviour no HTTP library writes (a
    server dripping bytes, an SMTP server quoting AUTH): each connection is handed to
    ``answer(conn)`` in a thread of its own; a context manager, or call ``close()``."""

    def __init__(self, host: str = "127.0.0.1"):
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
