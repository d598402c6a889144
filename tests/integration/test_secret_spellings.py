"""A secret in every spelling a message can give it (docs/security-limits.md, "Secrets"): a
Zotero key read from an env file with Windows line endings (``KEY\\r``) is refused in one line
naming its variable, before anything is sent; httpx's ``Illegal header value b'KEY\\r'`` (the
audit's leak) is masked where the error is stored; a key echoed back by the Zotero stand-in
``repr``-escaped, as bytes, JSON-escaped, HTML-escaped and URL-encoded shows on no surface
(``watcher status``, ``/status``, ``/status.json``, the site's status.html, the state file, the
database); and a source URL holding a comma masks nothing but its real secrets."""

from __future__ import annotations

import bz2
import html
import json
from datetime import datetime, timezone
from urllib.parse import quote

from starlette.testclient import TestClient

from conftest import run_watcher  # a real process, for the log as `python -m watcher` writes it
from helpers import run_cli  # in process, where what is checked is the surfaces, not the process
from httpserver import Reply, server  # noqa: F401
from test_zotero import make_config
from zoteroserver import zotero  # noqa: F401

from watcher.zotero import sync as zotsync
from watcher.config import load_config
from watcher.masking import forms
from watcher.store import Store
from watcher.web import create_app

NOW = datetime(2025, 4, 12, tzinfo=timezone.utc)


def spellings(secret: str) -> set[str]:
    """How a message may spell ``secret``, written here (not taken from the code under test)."""
    return {secret, secret.strip(), repr(secret)[1:-1], repr(secret.encode())[2:-1], json.dumps(secret)[1:-1],
            quote(secret, safe=""), html.escape(secret)}


def assert_clean(surface: str, text: bytes | str, secret: str) -> None:
    data = text.encode() if isinstance(text, str) else text
    for shape in spellings(secret) | forms(secret):
        at = data.find(shape.encode())
        assert at < 0, (surface, shape, data[max(0, at - 200):at + 50])


def test_a_key_ending_in_a_carriage_return_is_refused_in_one_line_naming_its_variable(tmp_path, zotero):  # noqa: F811
    make_config(tmp_path, zotero, extra="")
    env = {"ZOTERO_TEST_KEY": "read-key-0123\r"}
    for command in (["check"], ["once"], ["status"]):
        r = run_cli(*command, cwd=tmp_path, env=env)
        [line] = r.stderr.decode().splitlines()
        assert r.returncode == 2 and line.startswith("watcher: "), (command, r.stderr)
        assert ("profile.mine.zotero.api_key_env: environment variable ZOTERO_TEST_KEY holds a carriage "
                "return (\\r): a file saved with Windows line endings?") in line, line
        assert b"read-key" not in r.stdout + r.stderr
    assert zotero.requests == []  # refused before anything was sent
    assert not (tmp_path / "watcher.db").exists()
    # a tab or a NUL anywhere is refused too; a list of apprise URLs may be split across lines
    for value, says in (("read\tkey-0123", "control character U+0009"), ("read-key\n", "a line break (\\n)")):
        r = run_cli("check", cwd=tmp_path, env={"ZOTERO_TEST_KEY": value})
        assert r.returncode == 2 and says in r.stderr.decode() and b"read" not in r.stderr.replace(b"watcher", b""), r.stderr


def test_httpx_illegal_header_value_is_masked_where_the_error_is_stored(tmp_path, zotero, monkeypatch):  # noqa: F811
    """The library path that bypasses the command line's refusal (a program using watcher's
    modules) still never stores the key: ``b'read-key-0123\\r'`` is one of its spellings."""
    key = "read-key-0123\r"
    monkeypatch.setenv("ZOTERO_TEST_KEY", key)
    config = make_config(tmp_path, zotero, extra="")
    with Store.open(tmp_path / "watcher.db") as store:
        [error] = zotsync.sync(config, store, NOW).values()
    assert "Illegal header value b'***'" in error, error
    app = create_app(load_config(tmp_path / "config.toml"), tmp_path / "watcher.db")
    with TestClient(app, base_url="http://127.0.0.1") as web:
        page, data = web.get("/status"), web.get("/status.json")
    assert "Illegal header value" in page.text and "Illegal header value" in data.text
    for surface, text in {"error": error, "/status": page.text, "/status.json": data.text,
                          "database": (tmp_path / "watcher.db").read_bytes()}.items():
        assert_clean(surface, text, key)
        assert "read-key-0123" not in (text if isinstance(text, str) else text.decode("latin-1")), surface


KEY = 'rd"k\\ey/0123\'x'  # a key whose every spelling differs from the others


def test_a_key_echoed_in_every_spelling_stays_off_every_surface(tmp_path, zotero):  # noqa: F811
    spelt = [KEY, repr(KEY), repr(KEY.encode()), json.dumps(KEY), quote(KEY, safe=""), html.escape(KEY)]
    assert len(spellings(KEY)) == 5  # each differs from the others (but its str and bytes reprs: ASCII)
    zotero.script("GET", (403, {}, ("Invalid key " + " ".join(spelt)).encode()))
    make_config(tmp_path, zotero, extra="")
    env = {"ZOTERO_TEST_KEY": KEY}
    once = run_cli("--log-level", "debug", "once", cwd=tmp_path, env=env)
    assert [h["zotero-api-key"] for _, _, h in zotero.requests][:1] == [KEY]  # planted: it was sent
    status = run_cli("status", cwd=tmp_path, env=env)
    assert b"HTTP 403: Invalid key ***" in status.stdout, status.stdout + status.stderr
    site = run_cli("site", str(tmp_path / "site"), cwd=tmp_path, env=env)
    saved = run_cli("state", "save", str(tmp_path / "state.db.gz"), cwd=tmp_path, env=env)
    assert site.returncode == 0 and saved.returncode == 0, site.stderr + saved.stderr
    app = create_app(load_config(tmp_path / "config.toml"), tmp_path / "watcher.db")
    with TestClient(app, base_url="http://127.0.0.1") as web:
        page, data = web.get("/status"), web.get("/status.json")
    assert "HTTP 403: Invalid key ***" in data.text and "HTTP 403: Invalid key ***" in page.text
    surfaces = {"once log": once.stdout + once.stderr, "status": status.stdout + status.stderr,
                "/status": page.text, "/status.json": data.text,
                "site status.html": (tmp_path / "site" / "status.html").read_bytes(),
                "state file": bz2.decompress((tmp_path / "state.db.gz").read_bytes()),  # a bzip2 file (docs/performance.md)
                "database": (tmp_path / "watcher.db").read_bytes()}
    for surface, text in surfaces.items():
        assert_clean(surface, text, KEY)


def test_a_source_url_with_a_comma_masks_only_its_secrets(server, tmp_path):  # noqa: F811
    server.route("/list", Reply(status=500, body=b"busy"))
    url = server.url("/list?cats=physics,check&api_key=abcdef012345")
    (tmp_path / "config.toml").write_text(f'[watcher]\ndatabase = "watcher.db"\n\n[source.ls]\ntype = "listing"\n'
                                          f'url = "{url}"\n')
    once = run_watcher("once", cwd=tmp_path, env={"WATCHER_HTTP_RETRIES": "0"})
    status = run_watcher("status", cwd=tmp_path)
    for text in (once.stderr.decode(), status.stdout.decode()):
        assert "/list?cats=physics,check&api_key=***" in text, text
        assert "abcdef012345" not in text and "***,***" not in text


def test_every_kind_of_secret_is_checked_and_a_list_of_urls_may_span_lines(tmp_path):
    """The SMTP password and a webhook URL ending in ``\\r`` are refused like the Zotero key,
    each on its own line; an apprise ``urls_env`` whose URLs are separated by line breaks
    (``\\r\\n`` too) is a list, not a refused value."""
    (tmp_path / "config.toml").write_text('''
[watcher]
database = "watcher.db"

[channel.mail]
type = "email"
host = "127.0.0.1"
username = "me"
password_env = "T_SMTP_PW"
from = "watcher@example.org"
to = ["me@example.org"]

[channel.hook]
type = "webhook"
url_env = "T_HOOK_URL"

[channel.push]
type = "apprise"
urls_env = "T_APPRISE"
''')
    env = {"T_SMTP_PW": "correct horse battery staple\r", "T_HOOK_URL": "https://hooks.example.org/T0/B0/XYZ\r",
           "T_APPRISE": "json://127.0.0.1:9/a\r\njson://127.0.0.1:9/b\r\n"}
    r = run_cli("check", cwd=tmp_path, env=env)
    lines = r.stderr.decode().splitlines()
    assert r.returncode == 2 and len(lines) == 2, lines
    assert "channel.mail.password_env: environment variable T_SMTP_PW holds a carriage return" in lines[0] + lines[1]
    assert "channel.hook.url_env: environment variable T_HOOK_URL holds a carriage return" in lines[0] + lines[1]
    assert b"horse" not in r.stderr and b"XYZ" not in r.stderr and b"T_APPRISE" not in r.stderr
