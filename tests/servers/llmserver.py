"""A local stand-in for an OpenAI-compatible chat-completions endpoint (``POST
/v1/chat/completions``), with faults on demand.

Its answer is deterministic: ``Stand-in TL;DR: <the title>.``, so tests can tell a model's
TL;DR from the extractive one. ``mode`` picks the behaviour of every request: ``ok``, ``429``,
``500``, ``hang`` (no answer for ``hang_seconds``), ``garbage`` (200, not JSON), ``shape``
(JSON without choices), ``long`` (a 1,000-character answer), ``empty``, ``echo-key`` (a 401
whose body repeats the Authorization header, as a careless proxy might), ``huge`` (a 200 MB
chat completion streamed lazily, without Content-Length). Any other POST path is
a notification sink (apprise's ``json://`` target) that answers 200.

Run it by hand for the README's demo::

    python tests/servers/llmserver.py --port 8765
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler

from helpers import QuietHTTPServer


class LlmServer:
    """The stand-in on 127.0.0.1 (port 0: a free one), in a thread; a context manager."""

    def __init__(self, mode: str = "ok", port: int = 0, hang_seconds: float = 30.0,
                 echo: bool = False):
        self.mode = mode
        self.echo = echo
        self.hang_seconds = hang_seconds
        self.requests: list[dict] = []  # {"headers": {...}, "body": {...}}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if self.path.rstrip("/") != "/v1/chat/completions":  # a notification sink too
                    if server.echo:  # (apprise's json:// posts {"title", "message"} here)
                        print(f"notification on {self.path}: {(body or {}).get('title')!r}, "
                              f"{len((body or {}).get('message') or '')} characters", flush=True)
                    return self.answer(200, b'{"ok": true}')
                mode = server.mode
                if mode == "hang":
                    time.sleep(server.hang_seconds)
                    return self.answer(200, b"{}")
                if mode == "429":
                    return self.answer(429, b'{"error": {"message": "rate limited"}}', {"Retry-After": "60"})
                if mode == "500":
                    return self.answer(500, b'{"error": "boom"}')
                if mode == "garbage":
                    return self.answer(200, b"<html>this is not JSON</html>")
                if mode == "shape":
                    return self.answer(200, b'{"object": "chat.completion", "choices": []}')
                if mode == "huge":
                    return self.stream_huge()
                if mode == "echo-key":
                    text = f"invalid key: {self.headers.get('Authorization')}".encode()
                    return self.answer(401, text)
                title = "?"
                try:
                    user = body["messages"][-1]["content"]
                    title = user.split("\n", 1)[0].removeprefix("Title: ")
                except (TypeError, KeyError, IndexError):
                    pass
                content = {"long": "word " * 200, "empty": "  "}.get(mode, f"Stand-in TL;DR: {title}.")
                reply = {"id": "chatcmpl-1", "object": "chat.completion", "model": body and body.get("model"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}]}
                self.answer(200, json.dumps(reply).encode())

            def stream_huge(self, megabytes: int = 200):
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()  # HTTP/1.0: the body ends when the connection closes
                    self.wfile.write(b'{"choices": [{"message": {"content": "')
                    chunk = b"a" * (1 << 20)
                    for _ in range(megabytes):
                        self.wfile.write(chunk)
                    self.wfile.write(b'"}}]}')
                except OSError:  # the client stopped reading
                    pass

            def answer(self, status: int, data: bytes, headers: dict | None = None):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout): nothing to do
                    pass

        self.httpd = QuietHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)  # shutdown() waits one poll

    def __enter__(self) -> "LlmServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def calls(self) -> int:
        """Chat-completion requests received."""
        return sum(1 for r in self.requests if r["path"].rstrip("/") == "/v1/chat/completions")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--mode", default="ok")
    args = parser.parse_args()
    with LlmServer(args.mode, args.port, echo=True) as s:
        print(f"chat-completions stand-in at {s.base_url} (mode {args.mode}); Ctrl-C stops it", flush=True)
        try:
            s.thread.join()
        except KeyboardInterrupt:
            pass
