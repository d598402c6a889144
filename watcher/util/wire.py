"""What a channel needs of the network without an HTTP client (a channel module loads no httpx
until it sends: reading a config reads every channel kind's module, docs/performance.md,
"watcher status"): a socket shut down at a deadline, the cap on an answer."""

from __future__ import annotations

import socket

ANSWER_BYTES = 1024 * 1024  # the answers of the summarizer and of webhooks: a sentence, a word


def shut_down(sock: socket.socket | None) -> None:
    """Shut ``sock`` down both ways (a deadline passed): whatever read or write is blocked on
    it returns at once, in any thread."""
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
