"""What every request of one web app shares: the config, the database, the secrets, caches."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from ..compile import Compiled
from ..config import Config


@dataclass
class WebState:
    """The app's shared state (``request.app.state.web``).

    ``password`` None means no login (loopback without ``password_env``). ``secret`` signs the
    session cookie: ``secret_env``'s value, else a random one per process (sessions then end
    with the process). ``prefix`` is the path of ``base_url`` (``/papers`` behind a proxy that
    serves watcher under ``https://example.org/papers``), put in front of every link.
    ``static`` marks the app that ``watcher site`` crawls into static files: no rating buttons
    (no server to record them), and the search page loads the client-side search.
    """

    config: Config
    database: Path
    password: str | None = None
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    static: bool = False
    db_timeout: float = 2.0
    query_timeout: float = 2.0  # seconds a page's statements may run (watcher.web.pages.reading)
    stopping: threading.Event = field(default_factory=threading.Event)  # set when the server stops
    write_timeout: float = 10.0  # a rating waits this long for the daemon's write to end
    matchers: Compiled = field(default_factory=Compiled)
    cache: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    throttle: object = None  # the login Throttle (watcher.web.auth), made by create_app

    @property
    def prefix(self) -> str:
        base = self.config.web.base_url
        return urlparse(base).path.rstrip("/") if base else ""

    @property
    def https(self) -> bool:
        return bool(self.config.web.base_url and self.config.web.base_url.startswith("https://"))

    def matcher(self, name: str, store):
        """The compiled matcher of profile ``name``, as the digests compile it
        (:func:`watcher.compile.compile_profile`: examples, ratings), kept until the config,
        the database's papers or ratings, or an example file change."""
        return self.matchers.matcher(self.config, name, store)
