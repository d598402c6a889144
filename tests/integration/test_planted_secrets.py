"""Each secret watcher is given, planted against a stand-in that echoes it back, appears on no
surface: the log, ``watcher status``, the fetch summary, ``/status``, the static site's
status.html, the state file and the database (docs/security-limits.md: secrets are masked where an error is
stored, not only where it is logged)."""

from __future__ import annotations

import base64
import bz2
from urllib.parse import quote

from starlette.testclient import TestClient

from helpers import run_cli as run_watcher  # in process: the surfaces are what is checked, not the process
from httpserver import Reply, server  # noqa: F401
from test_echoed_secrets import EchoingSmtp

from watcher.config import load_config
from watcher.masking import forms
from watcher.web import create_app

PUBMED_KEY = "pm+Key/0123456789abcdef"  # URL-encoded in the request's URL
LIST_TOKEN = "lt0k3n-abcdefghij0123"
HOOK_TOKEN = "HkT0kenABCDEFGH0123456789"
SMTP_PASSWORD = "correct horse battery staple"
WEB_PASSWORD = "web-password-long-enough"
WEB_SECRET = "web-signing-secret-0123456789"

CONFIG = """
[watcher]
database = "watcher.db"

[source.pm]
type = "pubmed"
url = "{base}/eutils/"
term = "grpo"
api_key_env = "T_PUBMED_KEY"

[source.ls]
type = "listing"
url_env = "T_LIST_URL"

[profile.p]
query = "GRPO"

[digest.d]
profiles = ["p"]
channels = ["hook", "mail"]
every = "6h"
send_empty = true

[channel.hook]
type = "webhook"
url_env = "T_HOOK_URL"

[channel.mail]
type = "email"
host = "127.0.0.1"
port = {smtp}
security = "none"
username = "watcher-bot"
password_env = "T_SMTP_PW"
from = "watcher@example.org"
to = ["me@example.org"]

[web]
secret_env = "T_WEB_SECRET"
password_env = "T_WEB_PW"
"""


def planted_forms() -> dict[str, set[str]]:
    secrets = {s: forms(s) for s in (PUBMED_KEY, LIST_TOKEN, HOOK_TOKEN, SMTP_PASSWORD, WEB_PASSWORD, WEB_SECRET)}
    secrets[SMTP_PASSWORD].add(base64.b64encode(f"\0watcher-bot\0{SMTP_PASSWORD}".encode()).decode())
    return secrets


def assert_clean(surface: str, text: bytes | str):
    data = text.encode() if isinstance(text, str) else text
    for secret, shapes in planted_forms().items():
        for shape in shapes:
            at = data.find(shape.encode())
            assert at < 0, (surface, secret, shape, data[max(0, at - 300):at + 50])


def test_every_planted_secret_stays_off_every_surface(server, tmp_path):  # noqa: F811
    # PubMed: an error status; the stored error names the URL, which holds the api_key
    server.route("/eutils/esearch.fcgi", Reply(status=500, body=b"busy"))
    # the listing: redirected to a URL carrying the same token, which then fails
    server.route("/list", Reply(status=302, headers={"Location": f"/list2?token={LIST_TOKEN}&x=1"}))
    server.route("/list2", Reply(status=503, body=LIST_TOKEN.encode()))
    # the webhook answers its own token as the whole body
    server.route(f"/hook/{HOOK_TOKEN}", Reply(status=400, body=HOOK_TOKEN.encode()))
    env = {"T_PUBMED_KEY": PUBMED_KEY, "T_LIST_URL": server.url(f"/list?token={LIST_TOKEN}"),
           "T_HOOK_URL": server.url(f"/hook/{HOOK_TOKEN}"), "T_SMTP_PW": SMTP_PASSWORD,
           "T_WEB_PW": WEB_PASSWORD, "T_WEB_SECRET": WEB_SECRET,
           "WATCHER_HTTP_RETRIES": "0"}
    with EchoingSmtp() as smtp:
        (tmp_path / "config.toml").write_text(CONFIG.format(base=server.base, smtp=smtp.port))
        once = run_watcher("--log-level", "debug", "once", cwd=tmp_path, env=env)
        fetch = run_watcher("--log-level", "debug", "fetch", cwd=tmp_path, env=env)
        test_deliver = run_watcher("test-deliver", "mail", cwd=tmp_path, env=env)
    # the stand-ins did get the secrets: each was planted
    assert server.hits("/eutils/esearch.fcgi")[0].query["api_key"] == PUBMED_KEY
    assert server.hits("/list2")[0].query["token"] == LIST_TOKEN
    assert server.hits(f"/hook/{HOOK_TOKEN}")
    assert once.returncode == 1 and b"source pm" in once.stderr and b"channel hook" in once.stderr, once.stderr
    assert b"refused with HTTP 400: Bad Request" in once.stderr
    assert b"login as watcher-bot refused (535" in test_deliver.stderr, test_deliver.stderr
    status = run_watcher("status", cwd=tmp_path, env=env)
    site = run_watcher("site", str(tmp_path / "site"), cwd=tmp_path, env=env)
    assert site.returncode == 0, site.stderr
    saved = run_watcher("state", "save", str(tmp_path / "state.db.gz"), cwd=tmp_path, env=env)
    assert saved.returncode == 0, saved.stderr
    app = create_app(load_config(tmp_path / "config.toml"), tmp_path / "watcher.db")
    with TestClient(app, base_url="http://127.0.0.1") as web:
        page = web.get("/status")
    assert page.status_code == 200 and "HTTP 500" in page.text, page.text
    surfaces = {
        "once log": once.stdout + once.stderr, "fetch summary": fetch.stdout + fetch.stderr,
        "test-deliver": test_deliver.stdout + test_deliver.stderr,
        "status": status.stdout + status.stderr, "/status": page.text,
        "site status.html": (tmp_path / "site" / "status.html").read_bytes(),
        "state file": bz2.decompress((tmp_path / "state.db.gz").read_bytes()),
        "database": (tmp_path / "watcher.db").read_bytes(),
    }
    assert b"HTTP 500" in surfaces["status"] and b"***" in surfaces["status"], surfaces["status"]
    for surface, text in surfaces.items():
        assert_clean(surface, text)
    assert quote(PUBMED_KEY, safe="") in "".join(planted_forms()[PUBMED_KEY])


def test_an_error_stored_before_masking_is_masked_when_shown(tmp_path):
    """A database of an earlier version kept PubMed's key in a stored error: `watcher status`
    (and so /status and the site, which show the same text) masks it."""
    import sqlite3

    from watcher.store import Store

    (tmp_path / "config.toml").write_text(CONFIG.format(base="http://127.0.0.1:9", smtp=9))
    Store.open(tmp_path / "watcher.db").close()
    with sqlite3.connect(tmp_path / "watcher.db") as conn:
        conn.execute("INSERT INTO sources (name, last_attempt, last_error, last_error_at, failures) "
                     "VALUES ('pm', '2025-04-12T00:00:00Z', ?, '2025-04-12T00:00:00Z', 1)",
                     (f"GET https://eutils/esearch.fcgi?api_key={quote(PUBMED_KEY, safe='')}: HTTP 500",))
    status = run_watcher("status", cwd=tmp_path, env={"T_PUBMED_KEY": PUBMED_KEY})
    assert status.returncode == 0 and b"api_key=***: HTTP 500" in status.stdout, status.stdout
    assert_clean("status", status.stdout + status.stderr)
