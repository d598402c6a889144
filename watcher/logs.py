"""Logging to stderr: one line per event, journald-friendly, secrets masked.

Under systemd (``$JOURNAL_STREAM`` names our stderr) each line starts with a syslog priority
prefix such as ``<6>`` so that journald records the level, and carries no timestamp (journald
adds its own). Elsewhere lines read ``watcher: LEVEL: message``, with a timestamp in front for
the daemon. Values of the environment variables that the config names as secrets
(``password_env`` …) are replaced by ``***`` in every line, whatever logged them.
"""

from __future__ import annotations

import logging
import os
import re
import sys

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


class _JournalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record).replace("\n", " | ")
        return f"<{_PRIORITY.get(record.levelno, 6)}>{text}"


class _LineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return super().format(record).replace("\n", " | ")


class SecretFilter(logging.Filter):
    """Masks the given secret values in every record's message."""

    def __init__(self, secrets=()):
        super().__init__()
        self.secrets: list[str] = []
        self.set(secrets)

    def set(self, secrets) -> None:
        """Replace the values to mask (longest first; values under 4 characters are ignored)."""
        self.secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        masked = text
        for secret in self.secrets:
            masked = masked.replace(secret, "***")
        if "@" in masked:  # a password in a URL (a source's url, logged by httpx at debug level)
            masked = _USERINFO.sub(r"\1***@", masked)
        if masked != text:
            record.msg, record.args = masked, None
        return True


_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@")


_secrets = SecretFilter()


def configure(level: str, daemon: bool = False, stream=None) -> None:
    """Send watcher's log to stderr at ``level``, in the format described above."""
    stream = stream or sys.stderr
    handler = logging.StreamHandler(stream)
    if under_journald(stream):
        handler.setFormatter(_JournalFormatter("%(message)s"))
    elif daemon:
        handler.setFormatter(_LineFormatter("%(asctime)s watcher[%(process)d]: %(levelname)s: %(message)s",
                                            "%Y-%m-%dT%H:%M:%S%z"))
    else:
        handler.setFormatter(_LineFormatter("watcher: %(levelname)s: %(message)s"))
    handler.addFilter(_secrets)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # APScheduler's own chatter ("Added job", "Running job") only when debugging.
    logging.getLogger("apscheduler").setLevel(logging.DEBUG if level.lower() == "debug" else logging.WARNING)


def mask_secrets_of(config) -> None:
    """Mask the current values of every secret the config names (``*_env`` keys)."""
    names = set()
    for ch in config.channels.values():
        names.update(n for n in (ch.password_env, ch.webhook_url_env, ch.url_env,
                                 getattr(ch, "urls_env", None)) if n)
    summarizer = getattr(config, "summarizer", None)
    if summarizer is not None and summarizer.api_key_env:
        names.add(summarizer.api_key_env)
    values = [os.environ.get(n, "") for n in names]
    _secrets.set([*values, *(url for v in values for url in re.split(r"[\s,]+", v) if url)])
