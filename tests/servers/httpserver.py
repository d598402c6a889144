"""A real local HTTP server for source tests, with scripted replies and faults.

Usage (the ``server`` fixture is imported by the test modules that need it)::

    server.route("/api/query", Reply(body=b"..."))                 # same reply every time
    server.route("/x", Reply(status=503), Reply(status=503), Reply(body=b"ok"))  # in order,
                                                                    # the last one repeats
    server.route("/page", lambda req: Reply(body=render(req.query)))  # computed from the request
    server.route("/details/*", handler)          # every path under /details/
    server.url("/api/query")  ->  "http://127.0.0.1:PORT/api/query"
    server.requests  ->  [Request(path, query, headers, at), ...]

Faults a Reply can carry: ``"reset"`` (connection reset before any answer), ``"truncate"``
(Content-Length promises the whole body, half is sent, then the connection closes),
``"stall"`` (sleep ``delay`` seconds before answering, to trigger client timeouts); and
``stream=`` a body produced lazily chunk by chunk (a 200 MB answer that never sits in memory).
"""

from __future__ import annotations

import gzip
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

import pytest

from helpers import QuietHTTPServer


@dataclass
class Reply:
    """One scripted answer."""

    body: bytes = b""
    status: int = 200
    headers: dict = field(default_factory=dict)
    fault: str | None = None
    delay: float = 0.0
    gzip: bool = False
    stream: object = None  # a callable giving an iterator of chunks, written lazily until the
    #                        client hangs up (no Content-Length unless ``headers`` gives one)


@dataclass
class Request:
    """One request the server saw."""

    path: str
    query: dict
    headers: dict
    at: float


class Server:
    """The scripted server; see the module docstring."""

    def __init__(self):
        self.routes: dict[str, list] = {}
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"server_state": self})
        self.httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str) -> str:
        """The full URL of ``path``."""
        return self.base + path

    def route(self, path: str, *replies) -> None:
        """Script the replies of ``path`` (Reply objects or callables taking the Request)."""
        self.routes[path] = list(replies)

    def hits(self, path: str) -> list[Request]:
        """The requests made to ``path``."""
        return [r for r in self.requests if r.path == path]

    def next_reply(self, request: Request) -> Reply:
        with self.lock:
            self.requests.append(request)
            script = self.routes.get(request.path)
            if script is None:  # a route ending in "/*" takes every path under it
                script = next((v for k, v in self.routes.items() if k.endswith("/*")
                               and request.path.startswith(k[:-1])), None)
            if not script:
                return Reply(status=404, body=b"<html><body>Not Found</body></html>",
                             headers={"Content-Type": "text/html"})
            item = script.pop(0) if len(script) > 1 else script[0]
        return item(request) if callable(item) else item

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    server_state: Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        request = Request(parts.path, query, {k.lower(): v for k, v in self.headers.items()},
                          time.monotonic())
        reply = self.server_state.next_reply(request)
        if reply.fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if reply.fault == "stall" or reply.delay:
            time.sleep(reply.delay)
        if reply.stream is not None:
            self._stream(reply)
            return
        body = gzip.compress(reply.body) if reply.gzip else reply.body
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.gzip:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            if reply.fault == "truncate":
                self.send_header("Connection", "close")
            self.end_headers()
            if reply.fault == "truncate":
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_POST(self) -> None:
        """Read the posted body, then answer as a GET of the same path would."""
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.do_GET()

    def _stream(self, reply: Reply) -> None:
        self.close_connection = True
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in reply.stream():
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass


@pytest.fixture
def server():
    """A running scripted server, shut down after the test."""
    s = Server()
    try:
        yield s
    finally:
        s.close()
