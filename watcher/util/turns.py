"""Turns for work done beside others in one process: a long computation (a learner's fit,
the matching of a window of papers) calls :func:`take_turn` between its small steps, and a
thread that runs it beside a web server's pages says what that does (:func:`taking_turns`:
the web's work waits while pages are being served, :meth:`watcher.web.state.WebState.pause`),
so the pages keep the interpreter instead of sharing it step for step with seconds of fitting.
Anywhere else :func:`take_turn` does nothing."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterator

_local = threading.local()


def take_turn() -> None:
    """Between two small steps of a long computation: what this thread's :func:`taking_turns`
    says (nothing outside one)."""
    hook = getattr(_local, "hook", None)
    if hook is not None:
        hook()


@contextmanager
def taking_turns(hook: Callable[[], None]) -> Iterator[None]:
    """Within it, :func:`take_turn` in this thread calls ``hook()``."""
    outer = getattr(_local, "hook", None)
    _local.hook = hook
    try:
        yield
    finally:
        _local.hook = outer
