"""What every request of one web app shares: the config, the database, the secrets, caches."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from ..config import Config


@dataclass
class WebState:
    """The app's shared state (``request.app.state.web``).

    ``password`` None means no login (loopback without ``password_env``). ``secret`` signs the
    session cookie: ``secret_env``'s value, else a random one per process (sessions then end
    with the process). ``prefix`` is the path of ``base_url`` (``/papers`` behind a proxy that
    serves watcher under ``https://example.org/papers``), put in front of every link.
    """

    config: Config
    database: Path
    password: str | None = None
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    db_timeout: float = 2.0
    write_timeout: float = 10.0  # a rating waits this long for the daemon's write to end
    matchers: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def prefix(self) -> str:
        base = self.config.web.base_url
        return urlparse(base).path.rstrip("/") if base else ""

    @property
    def https(self) -> bool:
        return bool(self.config.web.base_url and self.config.web.base_url.startswith("https://"))

    def signature(self) -> tuple:
        """Changes whenever the database does (size and time of the file and its WAL): a
        key for what is worth keeping between requests."""
        out = []
        for path in (self.database, self.database.with_name(self.database.name + "-wal")):
            try:
                st = path.stat()
                out.append((st.st_ino, st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    def matcher(self, name: str, store):
        """The compiled matcher of profile ``name``: examples resolved through ``store``, and
        learning from the profile's ratings as the digests do (built again only when those
        ratings change)."""
        from ..pipeline import matchers_for

        rated = tuple(store.db.execute(
            "SELECT count(*), max(rated_at), total(value = 'up') FROM ratings WHERE profile = ?",
            [name]).fetchone())
        with self.lock:
            if name not in self.matchers or self.matchers[name][0] != rated:
                self.matchers[name] = (rated, matchers_for(self.config, [name], store.get, store)[0])
            return self.matchers[name][1]
