"""Progress of long work (docs/deployment.md): a bar on a terminal, a log line at most every 30 s elsewhere.

Work that may take minutes (a backfill of many pages 3 s apart, a large ``convert``) asks
:func:`start` for a :class:`Progress` and advances it; it never learns where progress goes::

    with start("source oai", unit="papers") as progress:
        for page in pages:
            progress.set_total(page.total)     # once known (None: unknown)
            progress.advance(len(page.papers))

:func:`start` decides once, from stderr: on a terminal, a tqdm bar on stderr with counts, rate
and time left, drawn only after ``delay`` seconds (quick work shows nothing) and erased when the
work ends; anywhere else (the journal, cron, a pipe), a log line on the ``watcher.util.progress``
logger at level info (shown unless ``--log-level error``) at most every ``interval`` seconds, the first one ``interval`` after the start, and a
last one when work that logged progress ends. Stdout is never written: it is data for
``convert`` and ``--to json``. Sources get the factory through their context
(:attr:`watcher.sources.SourceContext.progress`), so tests inject ``interval`` and ``clock``.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Callable, Protocol, TextIO

INTERVAL = 30.0  # seconds between two log lines
DELAY = 1.0  # seconds of work before a bar appears

log = logging.getLogger("watcher.progress")  # shown at the default log level (see watcher.util.logs)


class Progress:
    """Progress that shows nothing (the base of the others): counts what is done."""

    def __init__(self, label: str, total: int | None = None, unit: str = "items"):
        self.label = label
        self.total = total
        self.unit = unit
        self.done = 0

    def set_total(self, total: int | None) -> None:
        """How much there is to do, once known (None: still unknown)."""
        self.total = total

    def advance(self, n: int = 1) -> None:
        """``n`` more items are done."""
        self.done += n

    def close(self, failed: bool = False) -> None:
        """The work ended (``failed``: it stopped on an error)."""

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(failed=exc_type is not None)


class ProgressFactory(Protocol):
    """What sources and ``convert`` are given: :func:`start` or a stand-in with other settings."""

    def __call__(self, label: str, *, total: int | None = None, unit: str = "items") -> Progress: ...


class LogProgress(Progress):
    """A log line at most every ``interval`` seconds of ``clock``, and one at the end if any."""

    def __init__(self, label: str, total: int | None = None, unit: str = "items", *,
                 interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic):
        super().__init__(label, total, unit)
        self.interval = interval
        self.clock = clock
        self.started = self.last = clock()
        self.lines = 0

    def advance(self, n: int = 1) -> None:
        """Count ``n``; log a line when ``interval`` has passed since the last one."""
        super().advance(n)
        now = self.clock()
        if now - self.last >= self.interval:
            self.last = now
            self.lines += 1
            log.info("%s", self.line(now))

    def line(self, now: float) -> str:
        """``LABEL: 1,200 of 4,800 papers (25%), about 3 min left`` (or ``… so far``)."""
        if not self.total:
            return f"{self.label}: {self.done:,} {self.unit} so far"
        text = f"{self.label}: {self.done:,} of {self.total:,} {self.unit} ({self.done * 100 // self.total}%)"
        if 0 < self.done < self.total:
            left = (now - self.started) * (self.total - self.done) / self.done
            text += f", about {duration(left)} left"
        return text

    def close(self, failed: bool = False) -> None:
        """Say that work which logged progress has ended (or stopped on an error, which the
        work itself reports)."""
        if self.lines:
            self.lines = 0
            log.info("%s: %s, %s %s in %s", self.label, "stopped" if failed else "done",
                     f"{self.done:,}", self.unit, duration(self.clock() - self.started))


class BarProgress(Progress):
    """A tqdm bar on ``stream`` (a terminal): counts, rate and time left; erased at the end."""

    def __init__(self, label: str, total: int | None = None, unit: str = "items", *,
                 stream: TextIO, delay: float = DELAY):
        super().__init__(label, total, unit)
        from tqdm import tqdm

        # a terminal that reports no size (a bare pseudo-terminal) would get no bar from tqdm
        width = {"dynamic_ncols": True} if _columns(stream) else {"ncols": 80, "nrows": 24}
        self.bar = tqdm(total=total, desc=label, unit=f" {unit}", file=stream, delay=delay,
                        leave=False, mininterval=0.2, **width)
        self._clear = _ClearBar(self.bar)
        self._handlers = [h for h in logging.getLogger().handlers
                          if getattr(h, "stream", None) is stream]
        for handler in self._handlers:  # a log line is written on a clean line, not after the bar
            handler.addFilter(self._clear)

    def set_total(self, total: int | None) -> None:
        """Change the bar's total; it is redrawn on the next advance."""
        super().set_total(total)
        self.bar.total = total

    def advance(self, n: int = 1) -> None:
        """Move the bar on by ``n``."""
        super().advance(n)
        self.bar.update(n)

    def close(self, failed: bool = False) -> None:
        """Erase the bar and stop clearing it before log lines."""
        for handler in self._handlers:
            handler.removeFilter(self._clear)
        self._handlers = []
        self.bar.close()


class _ClearBar(logging.Filter):
    def __init__(self, bar):
        super().__init__()
        self.bar = bar

    def filter(self, record: logging.LogRecord) -> bool:
        self.bar.clear()
        return True


def start(label: str, *, total: int | None = None, unit: str = "items", stream: TextIO | None = None,
          interval: float = INTERVAL, clock: Callable[[], float] = time.monotonic,
          delay: float = DELAY) -> Progress:
    """The progress of one piece of work: a bar when ``stream`` (stderr) is a terminal, else
    rate-limited log lines (see the module docstring)."""
    stream = stream if stream is not None else sys.stderr
    if is_terminal(stream):
        return BarProgress(label, total, unit, stream=stream, delay=delay)
    return LogProgress(label, total, unit, interval=interval, clock=clock)


def silent(label: str, *, total: int | None = None, unit: str = "items") -> Progress:
    """Progress that shows nothing (a :class:`ProgressFactory`)."""
    return Progress(label, total, unit)


def is_terminal(stream) -> bool:
    """True when ``stream`` is an open terminal."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def _columns(stream) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


def duration(seconds: float) -> str:
    """``45 s``, ``3 min``, ``1 h 05 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"
