"""The interface of a channel."""

from __future__ import annotations

import logging
import os
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TextIO

from ..errors import DeliveryError
from ..masking import any_secret, redact, remember as remember_secret
from ..models import Digest, Sent


@dataclass
class DeliveryContext:
    """What a channel may use: the config folder (relative paths), the stdout stream, the
    user agent for HTTP channels, the digest's own formats, and the user's templates folder
    (a channel with a size budget, e-mail, renders again with fewer full entries)."""

    base_dir: Path = Path(".")
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    user_agent: str = "watcher"
    formats: tuple[str, ...] = ("text",)
    templates_dir: Path | None = None
    web_url: str | None = None  # [web].base_url: where the web inbox (and its feeds) answer
    now: datetime | None = None  # the cycle's clock: the time a channel writes (a feed's updated)


class Channel:
    """Base class: subclasses say which formats they need and implement :meth:`send`.
    ``sent`` says what a size limit cut of the digest last sent (None: nothing was cut), for
    the record of the message (:meth:`watcher.store.Store.record_message`)."""

    def __init__(self, cfg, ctx: DeliveryContext):
        self.cfg = cfg
        self.ctx = ctx
        self.sent: Sent | None = None

    def formats(self) -> tuple[str, ...]:
        """The formats this channel sends (default: the digest's formats)."""
        return self.ctx.formats

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Deliver; return only once accepted; raise DeliveryError otherwise."""
        raise NotImplementedError


def secret_env(cfg, key: str) -> str:
    """The value of the environment variable that ``cfg.<key>`` names (e.g. ``password_env``).

    DeliveryError naming the variable (never a value) when it is unset or empty. The value is
    registered with :func:`redact` so that no log line of any library can show it.
    """
    var = getattr(cfg.options, key)
    value = os.environ.get(var or "", "")
    if not var or not value:
        raise DeliveryError(f"channel {cfg.name}: environment variable {var} ({key}) is not set")
    remember_secret(value)
    return value


class _RedactingFilter(logging.Filter):
    """Masks secrets in log records of the HTTP libraries (httpx logs each request's URL)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if any_secret():
            message = record.getMessage()
            cleaned = redact(message)
            if cleaned != message:
                record.msg, record.args = cleaned, None
        return True


for _name in ("httpx", "httpcore"):
    logging.getLogger(_name).addFilter(_RedactingFilter())


def split_urls(value: str | None) -> list[str]:
    """The URLs an ``urls_env`` variable holds (apprise): separated by spaces, commas or lines."""
    return [u for u in re.split(r"[\s,]+", value or "") if u]


def path_problems(config, where: str, ch, problems_of) -> list[str]:
    """For ``watcher check``: one line per problem ``problems_of(digest)`` finds with the files a
    file or feed channel writes for each of its digests (:func:`folder_problem`)."""
    problems = []
    for d in config.digests.values():
        if ch.name not in d.channels:
            continue
        for problem in problems_of(d):
            line = f"{where}: channel.{ch.name}.path: {problem}"
            if problem and line not in problems:
                problems.append(line)
    return problems


def folder_problem(folder: Path) -> str | None:
    """Why a file cannot be created in ``folder``, which a run creates with its parents when
    missing (the database's folder, a file or feed channel's), or None: the nearest existing
    folder at or above it must be a folder that a file can be made in (tried, then removed:
    permissions alone do not tell for root or for a folder such as /proc)."""
    import tempfile

    nearest = folder
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        return f"folder {folder} cannot be created: {nearest} is not a folder"
    what = "is not writable" if nearest == folder else f"cannot be created: {nearest} is not writable"
    if not os.access(nearest, os.W_OK | os.X_OK):
        return f"folder {folder} {what}"
    try:
        with tempfile.TemporaryFile(dir=nearest, prefix=".watcher-check."):
            pass
    except OSError as e:
        return f"folder {folder} {what} ({e.strerror})"
    return None
