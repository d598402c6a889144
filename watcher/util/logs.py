"""Logging to stderr: one line per event, journald-friendly, secrets masked.

Under systemd (``$JOURNAL_STREAM`` names our stderr) each line starts with a syslog priority
prefix such as ``<6>`` so that journald records the level, and carries no timestamp (journald
adds its own). Elsewhere lines read ``watcher: LEVEL: message``, with a timestamp in front for
the daemon. Progress lines of long work (:mod:`watcher.util.progress`, level info) are shown at the
default level ``warning`` too; ``error`` hides them. Values of the environment variables that the config names as secrets
(``password_env`` …) are replaced by ``***`` in every line, whatever logged them: configuring
the log from a config (``configure(..., config=config)``) is what sets them, so every entry
point that loads a config masks its secrets.

An error logged with its exception (a bug: ``exc_info``) carries its traceback. The daemon's
log (and journald's) keeps it, joined to the line; on a terminal the line ends with a pointer
to ``--log-level debug`` instead, which shows it there too.
"""

from __future__ import annotations

import logging
import os
import re
import sys

from ..masking import expand, mask, redact, remember, url_list

_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3,
             logging.CRITICAL: 2}


def under_journald(stream=None) -> bool:
    """True when ``stream`` (stderr) is connected to the systemd journal."""
    value = os.environ.get("JOURNAL_STREAM", "")
    dev, _, ino = value.partition(":")
    if not (dev.isdigit() and ino.isdigit()):
        return False
    try:
        st = os.fstat((stream or sys.stderr).fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return st.st_dev == int(dev) and st.st_ino == int(ino)


class _LineFormatter(logging.Formatter):
    """One line per record, tracebacks joined to it (or left out: ``tracebacks=False``), the
    secrets of ``mask`` masked in all of it (a traceback quotes values too)."""

    def __init__(self, fmt: str, datefmt: str | None = None, *, tracebacks: bool = True,
                 mask: "SecretFilter | None" = None):
        super().__init__(fmt, datefmt)
        self.tracebacks = tracebacks
        self.mask = mask

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        hidden = not self.tracebacks and any(saved)
        if hidden:
            record.exc_info = record.exc_text = record.stack_info = None
        try:
            text = super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
        if hidden:
            text += " (a bug in watcher: --log-level debug shows its traceback)"
        if self.mask:
            text = self.mask.mask(text)
        return text.replace("\n", " | ")


class _JournalFormatter(_LineFormatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"<{_PRIORITY.get(record.levelno, 6)}>{super().format(record)}"


class SecretFilter(logging.Filter):
    """Masks the given secret values in every record's message."""

    def __init__(self, secrets=()):
        super().__init__()
        self.secrets: list[str] = []
        self.set(secrets)

    def set(self, secrets) -> None:
        """Replace the values to mask: each in every form it may be echoed in
        (:func:`watcher.masking.forms`: URL-encoded, base64), longest first; values under 4
        characters are ignored."""
        self.secrets = expand(secrets)

    def mask(self, text: str) -> str:
        """``text`` with every secret value, and any password in a URL, replaced by ``***``."""
        text = redact(mask(text, self.secrets))  # and every secret met while running
        if "@" in text:  # a password in a URL (a source's url, logged by httpx at debug level)
            text = _USERINFO.sub(r"\1***@", text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        masked = self.mask(text)
        if masked != text:
            record.msg, record.args = masked, None
        return True


_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@")


def configure(level: str, daemon: bool = False, stream=None, config=None) -> None:
    """Send watcher's log to stderr at ``level``, in the format described above, masking the
    secrets ``config`` names (none before a config is loaded: call again with it)."""
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    secrets = SecretFilter(secret_values(config) if config is not None else ())
    for value in secret_values(config, urls=False) if config is not None else ():
        remember(value)  # masked where an error is stored too (watcher.masking.redact)
    if under_journald(stream):
        handler.setFormatter(_JournalFormatter("%(message)s", mask=secrets))
    elif daemon:
        handler.setFormatter(_LineFormatter("%(asctime)s watcher[%(process)d]: %(levelname)s: %(message)s",
                                            "%Y-%m-%dT%H:%M:%S%z", mask=secrets))
    else:
        handler.setFormatter(_LineFormatter("watcher: %(levelname)s: %(message)s", mask=secrets,
                                            tracebacks=level.lower() == "debug"))
    handler.addFilter(secrets)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # progress of long work (watcher.util.progress, level info) shows at the default level too:
    # a backfill from cron or a timer unit says how far it is; only --log-level error hides it
    progress_level = logging.INFO if root.level <= logging.WARNING else root.level
    logging.getLogger("watcher.progress").setLevel(progress_level)
    # APScheduler's own chatter ("Added job", "Running job") only when debugging.
    logging.getLogger("apscheduler").setLevel(logging.DEBUG if level.lower() == "debug" else logging.WARNING)
    # httpx logs every request at info ("HTTP Request: GET … 200 OK"): one event of ours would
    # be several lines, so the HTTP libraries' lines show only when debugging.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.DEBUG if level.lower() == "debug" else logging.WARNING)


def secret_values(config, urls: bool = True) -> list[str]:
    """The current values of every secret the config names (``*_env`` keys) and, with
    ``urls``, each URL of a list of them (an apprise variable holds several URLs, each a
    secret of its own: :func:`watcher.masking.remember` of a value takes its URLs' parts)."""
    values = [os.environ.get(n, "") for n in set(config.secret_vars().values())]
    return [*values, *(url for v in values if "://" in v for url in url_list(v))] if urls else values
