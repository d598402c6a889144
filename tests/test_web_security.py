"""The attacks on `watcher serve` of a security review, each refused (README "Security"):
another site's name (DNS rebinding), forms posted from another site, oversized uploads,
login guessing, sessions replayed after logout, and slow searches."""

from __future__ import annotations

import asyncio
import re
import warnings
from dataclasses import replace
from html import unescape

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from webkit import app_for, sample_setup

from watcher.web.guard import MAX_BODY


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return sample_setup(tmp_path_factory.mktemp("websec"))


def csrf_of(response) -> str:
    return unescape(re.search(r'name="csrf" value="([^"]+)"', response.text).group(1))


# --- the Host header (DNS rebinding) --------------------------------------------------------

def test_a_request_for_another_sites_name_gets_400_and_nothing_is_recorded(sample):
    config, db = sample
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        home = c.get("/")
        assert home.status_code == 200
        token = csrf_of(home)
        evil = {"host": "rebind.attacker.example:8080"}
        assert c.get("/", headers=evil).status_code == 400
        assert c.get("/search?q=GRPO", headers=evil).status_code == 400
        r = c.post("/rate", headers=evil, data={"csrf": token, "action": "save", "paper": "2504.07615"})
        assert r.status_code == 400
        assert "2504.07615" not in c.get("/saved").text
        for name in ("127.0.0.1:8080", "localhost:8080", "[::1]:8080", "localhost"):
            assert c.get("/healthz", headers={"host": name}).status_code == 200, name


def test_the_listen_address_base_urls_host_and_the_configured_hosts_are_answered(sample):
    config, db = sample
    web = replace(config.web, host="192.168.1.5", base_url="https://papers.example.org/w",
                  secret_env="X", hosts=("inbox.lan",))
    with TestClient(app_for(replace(config, web=web), db, secret="s")) as c:
        for name in ("192.168.1.5:8080", "papers.example.org", "inbox.lan", "INBOX.lan:80"):
            assert c.get("/healthz", headers={"host": name}).status_code == 200, name
        assert c.get("/healthz", headers={"host": "other.lan"}).status_code == 400


def test_the_config_refuses_a_hosts_entry_that_is_not_a_name(tmp_path):
    from watcher.config import load_config
    from watcher.errors import ConfigError

    path = tmp_path / "c.toml"
    path.write_text('[web]\nhosts = ["inbox.lan:8080/x"]\n')
    with pytest.raises(ConfigError, match="web.hosts"):
        load_config(path)


# --- forms posted from another site ---------------------------------------------------------

def test_a_form_posted_from_another_origin_is_refused_even_with_the_csrf_token(sample):
    config, db = sample
    with TestClient(app_for(config, db), follow_redirects=False) as c:
        token = csrf_of(c.get("/"))
        form = {"csrf": token, "action": "save", "paper": "2504.07615", "next": "/"}
        for headers in ({"origin": "http://attacker.example"}, {"origin": "null"},
                        {"referer": "http://attacker.example/page"}):
            r = c.post("/rate", headers=headers, data=form)
            assert r.status_code == 403, headers
            assert "another site" in r.text
        assert "2504.07615" not in c.get("/saved").text
        same = c.post("/rate", headers={"origin": "http://testserver"}, data=form)
        assert same.status_code == 303
        assert "2504.07615" in c.get("/saved").text
        form["action"] = "unsave"
        assert c.post("/rate", headers={"referer": "http://testserver/search?q=x"}, data=form).status_code == 303


# --- request bodies -------------------------------------------------------------------------

def _asgi(app, method: str, path: str, headers: list[tuple[bytes, bytes]], chunks):
    """Send one request straight to the ASGI app; returns (status, chunks the app read)."""
    read = []
    sent = {}
    source = iter(chunks)

    async def receive():
        chunk = next(source, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        read.append(len(chunk))
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message):
        if message["type"] == "http.response.start":
            sent["status"] = message["status"]

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
             "root_path": "", "headers": [(b"host", b"127.0.0.1:8080"), *headers],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8080)}
    asyncio.run(app(scope, receive, send))
    return sent["status"], read


def test_a_50_mb_upload_to_login_is_refused_at_once_without_reading_it(sample):
    config, db = sample
    app = app_for(config, db, password="a long enough password")
    endless = (b"x" * (1 << 20) for _ in range(50))
    status, read = _asgi(app, "POST", "/login", [
        (b"content-type", b"multipart/form-data; boundary=b"),
        (b"content-length", str(50 << 20).encode())], endless)
    assert status == 413
    assert read == []  # not one byte of it was read


def test_a_body_without_a_length_is_cut_off_past_the_cap(sample):
    config, db = sample
    app = app_for(config, db, password="a long enough password")
    endless = (b"password=" + b"x" * 8192 for _ in range(10_000))
    status, read = _asgi(app, "POST", "/login",
                         [(b"content-type", b"application/x-www-form-urlencoded")], endless)
    assert status == 413
    assert sum(read) <= MAX_BODY + 8192 + 9


def test_a_file_in_a_form_is_refused(sample):
    config, db = sample
    with TestClient(app_for(config, db, password="a long enough password"), follow_redirects=False) as c:
        token = csrf_of(c.get("/login"))
        r = c.post("/login", data={"csrf": token, "password": "x"}, files={"upload": ("a.txt", b"hello")})
        assert r.status_code == 400
