"""A local stand-in for the Zotero Web API v3: one user library held in memory, answering as
the documented API does (tests/data/zotero/SOURCES.md): versions, 304, ``since``,
``format=versions``, paging with ``Link`` headers, ``q`` title search, ``POST /items`` with
write tokens, ``PATCH /items/{key}`` with ``If-Unmodified-Since-Version``, ``GET
/keys/current``; and faults a test scripts (``script``: the next answers of a method, such as a
429 with ``Retry-After``; ``backoff``: a ``Backoff`` header on answers; ``down``: connections
reset, as when Zotero cannot be reached; ``before_patch``: another device's change, for 412;
``stall``: an Event every answer waits for, as a Zotero that hangs).

    lib = ZoteroServer(user=1234567, keys={"sekret": {"library": True, "write": True}})
    lib.add(item, collections=["ABCD2345"])
    lib.url -> "http://127.0.0.1:PORT"
"""

from __future__ import annotations

import json
import random
import re
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from helpers import QuietHTTPServer

DATA = Path(__file__).resolve().parent.parent / "data" / "zotero"
KEY_CHARS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"


def data(name: str):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


class ZoteroServer:
    """See the module docstring."""

    def __init__(self, user: int = 1234567, keys: dict | None = None, public: bool = False):
        self.user = user
        self.keys = keys or {}
        self.public = public  # a public library is read without a key
        self.version = 0
        self.items: dict[str, dict] = {}
        self.collections: set[str] = set()
        self.tokens: dict[str, dict] = {}
        self.requests: list[tuple[str, str, dict]] = []  # (method, path with query, headers)
        self.scripted: dict[str, list] = {}
        self.backoff: str | None = None
        self.down = False
        self.lose_answer = 0  # the next N writes are made, then their answers lost (reset)
        self.max_limit = 100  # the API's largest page
        self.before_patch = None
        self.stall: threading.Event | None = None  # every answer waits for it (at most 60 s)
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"lib": self})
        self.httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- the library ------------------------------------------------------------------------

    def new_key(self) -> str:
        while (key := "".join(random.choice(KEY_CHARS) for _ in range(8))) in self.items:
            pass
        return key

    def add(self, data_: dict, collections=(), key: str | None = None) -> str:
        """Add an item (its ``data``) to the library, in ``collections``; its key."""
        with self.lock:
            return self._add(dict(data_), list(collections), key)

    def _add(self, d: dict, collections: list, key: str | None = None) -> str:
        self.version += 1
        key = key or d.get("key") or self.new_key()
        self.collections.update(collections)
        d.update(key=key, version=self.version,
                 collections=list(dict.fromkeys([*d.get("collections", []), *collections])))
        d.setdefault("tags", [])
        d.setdefault("relations", {})
        self.items[key] = d
        return key

    def touch(self, key: str, **changes) -> None:
        """Change an item as another device would (a new version)."""
        with self.lock:
            self.version += 1
            self.items[key].update(changes, version=self.version)

    def remove_from(self, key: str, collection: str) -> None:
        with self.lock:
            self.version += 1
            d = self.items[key]
            d.update(collections=[c for c in d["collections"] if c != collection], version=self.version)

    def in_collection(self, collection: str) -> list[dict]:
        return [d for d in self.items.values() if collection in d.get("collections", [])]

    def wrap(self, d: dict) -> dict:
        """An item as the API answers it (``key``, ``version``, ``library``, ``links``, ``meta``,
        ``data``), after the shape of tests/data/zotero/pyzotero_item.json."""
        prefix = f"{self.url}/users/{self.user}"
        return {"key": d["key"], "version": d["version"],
                "library": {"type": "user", "id": self.user, "name": "stand-in"},
                "links": {"self": {"href": f"{prefix}/items/{d['key']}", "type": "application/json"}},
                "meta": {"numChildren": 0}, "data": d}

    def script(self, method: str, *answers) -> None:
        """The next answers to ``method`` requests: (status, headers[, body]), before the real ones."""
        self.scripted.setdefault(method, []).extend(answers)


class _Handler(BaseHTTPRequestHandler):
    lib: ZoteroServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PATCH(self):
        self._handle("PATCH")

    def _reset(self) -> None:
        """Reset the connection without an answer (RST), as a dead server or network does."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.shutdown(socket.SHUT_RDWR)
        self.connection.close()
        self.close_connection = True

    def _send(self, status: int, body=None, headers: dict | None = None) -> None:
        raw = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        headers = dict(headers or {})
        headers.setdefault("Last-Modified-Version", str(self.lib.version))
        if self.lib.backoff:
            headers["Backoff"] = self.lib.backoff
        if raw:
            headers.setdefault("Content-Type", "application/json")
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _handle(self, method: str) -> None:
        lib = self.lib
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        lib.requests.append((method, self.path, headers))
        if lib.stall is not None:
            lib.stall.wait(60)
        if lib.down:
            return self._reset()
        if lib.scripted.get(method):
            status, extra, *body = lib.scripted[method].pop(0)
            return self._send(status, body[0] if body else b"Rate limit exceeded" if status == 429 else b"", extra)
        if headers.get("zotero-api-version") != "3":
            return self._send(400, b"Zotero-API-Version 3 expected")
        parts = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(parts.query).items()}
        key = headers.get("zotero-api-key")
        access = lib.keys.get(key) if key else None
        if parts.path == "/keys/current":
            if access is None:
                return self._send(403, b"Forbidden")
            return self._send(200, {"key": key, "userID": lib.user, "username": "stand-in",
                                    "access": {"user": access}})
        prefix = f"/users/{lib.user}"
        if not parts.path.startswith(prefix + "/"):
            return self._send(404, b"Not found")
        if key and access is None or not (lib.public or (access or {}).get("library")):
            return self._send(403, b"Forbidden")
        if method != "GET" and not (access or {}).get("write"):
            return self._send(403, b"Write access denied")
        path = parts.path[len(prefix):]
        with lib.lock:
            if method == "GET":
                return self._get(path, q, headers)
            if method == "POST" and path == "/items":
                if lib.lose_answer:
                    lib.lose_answer -= 1
                    self._post(raw, headers, send=False)
                    return self._reset()
                return self._post(raw, headers)
            if method == "PATCH" and (m := re.fullmatch(r"/items/(\w{8})", path)):
                return self._patch(m.group(1), raw, headers)
        return self._send(405, b"Method not allowed")

    def _get(self, path: str, q: dict, headers: dict) -> None:
        lib = self.lib
        if (m := re.fullmatch(r"/items/(\w{8})", path)):
            d = lib.items.get(m.group(1))
            return self._send(200, lib.wrap(d), {"Last-Modified-Version": str(d["version"])}) if d \
                else self._send(404, b"Not found")
        if (m := re.fullmatch(r"/collections/(\w{8})/items(/top)?", path)):
            if m.group(1) not in lib.collections:
                return self._send(404, b"Collection not found")
            items = lib.in_collection(m.group(1))
        elif path in ("/items", "/items/top"):
            items = list(lib.items.values())
        else:
            return self._send(404, b"Not found")
        since = headers.get("if-modified-since-version")
        if since is not None and int(since) >= lib.version:
            return self._send(304)
        items = [d for d in items if d.get("itemType") not in ("note", "attachment")] \
            if path.endswith("/top") else items
        if "tag" in q:
            items = [d for d in items if any(t.get("tag") == q["tag"] for t in d.get("tags", []))]
        if "itemKey" in q:
            keys = q["itemKey"].split(",")
            items = [d for d in items if d["key"] in keys]
        if "since" in q:
            items = [d for d in items if d["version"] > int(q["since"])]
        if "q" in q:
            items = [d for d in items if q["q"].lower() in d.get("title", "").lower()]
        if q.get("format") == "versions":  # not paged
            return self._send(200, {d["key"]: d["version"] for d in items})
        items.sort(key=lambda d: d["key"])
        start, limit = int(q.get("start", 0)), min(lib.max_limit, int(q.get("limit", 25)))
        page = items[start:start + limit]
        out = {"Total-Results": str(len(items))}
        if start + limit < len(items):
            base = f"{lib.url}/users/{lib.user}{path}"
            rest = "&".join(f"{k}={v}" for k, v in q.items() if k not in ("start", "limit"))
            last = (len(items) - 1) // limit * limit
            out["Link"] = (f'<{base}?{rest}&limit={limit}&start={start + limit}>; rel="next", '
                           f'<{base}?{rest}&limit={limit}&start={last}>; rel="last"')
        return self._send(200, [lib.wrap(d) for d in page], out)

    def _post(self, raw: bytes, headers: dict, send: bool = True) -> None:
        lib = self.lib
        token = headers.get("zotero-write-token")
        if token and token in lib.tokens:
            return self._send(412, b"Write token already used")
        stale = headers.get("if-unmodified-since-version")
        if stale is not None and int(stale) < lib.version:
            return self._send(412, b"Library has been modified since specified version")
        try:
            objects = json.loads(raw)
        except ValueError:
            return self._send(400, b"Invalid JSON")
        out = {"successful": {}, "success": {}, "unchanged": {}, "failed": {}}
        for i, d in enumerate(objects):
            if not isinstance(d, dict) or "itemType" not in d:
                out["failed"][str(i)] = {"key": "", "code": 400, "message": "'itemType' property not provided"}
                continue
            key = lib._add(dict(d), d.get("collections", []))
            out["successful"][str(i)] = lib.wrap(lib.items[key])
            out["success"][str(i)] = key
        if token:
            lib.tokens[token] = out
        return self._send(200, out) if send else None

    def _patch(self, key: str, raw: bytes, headers: dict) -> None:
        lib = self.lib
        if lib.before_patch:
            hook, lib.before_patch = lib.before_patch, None
            lib.version += 1
            hook(lib)
        d = lib.items.get(key)
        if d is None:
            return self._send(404, b"Not found")
        if int(headers.get("if-unmodified-since-version", -1)) != d["version"]:
            return self._send(412, b"Item has been modified since specified version")
        lib.version += 1
        d.update(json.loads(raw), version=lib.version)
        lib.collections.update(d.get("collections", []))
        return self._send(204)


@pytest.fixture
def zotero():
    lib = ZoteroServer(keys={"read-key-0123": {"library": True, "files": True, "notes": True},
                             "write-key-4567": {"library": True, "notes": True, "write": True}})
    yield lib
    lib.close()
