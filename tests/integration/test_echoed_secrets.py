"""Secrets that the other side echoes back (docs/web.md, "Security"): a webhook's error page quoting
its URL, an SMTP server quoting the base64 of AUTH PLAIN, a listing URL carrying an API key;
and answers too large to read (a webhook's)."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from helpers import RawServer, run_cli
from httpserver import Reply, server  # noqa: F401

from watcher.deliver import httppost
from watcher.errors import DeliveryError
from watcher.util.logs import SecretFilter
from watcher.masking import forms, redact, remember

SECRET = "s3cr3t/token+with=odd&chars"


@pytest.mark.parametrize("user", ["a", "ab", "abc", "watcher-bot"])
def test_every_form_of_a_secret_is_masked_in_logs_and_stored_errors(user):
    """The password inside AUTH PLAIN's base64 (after any user name: every alignment), the
    URL-encoded value, the value itself: none survives the log filter or redact()."""
    remember(SECRET)
    plain = base64.b64encode(f"\0{user}\0{SECRET}".encode()).decode()
    echoed = [f"535 5.7.8 AUTH PLAIN {plain} rejected", f"Cannot POST /hook?token={quote(SECRET, safe='')}",
              f"got {SECRET} back", f"url {base64.urlsafe_b64encode(SECRET.encode()).decode()}"]
    log_filter = SecretFilter([SECRET])
    for text in echoed:
        for masked in (log_filter.mask(text), redact(text)):
            assert "***" in masked
            for form in forms(SECRET):
                assert form not in masked, (text, form)


def test_a_webhooks_error_page_quoting_its_url_is_kept_to_the_status_line(server):  # noqa: F811
    server.route("/hook", Reply(status=404, body=f"Cannot POST /hook?token={quote(SECRET, safe='')}".encode()))
    url = server.url("/hook") + "?token=" + quote(SECRET, safe="")
    with httppost.client(5, "watcher-test") as http, pytest.raises(DeliveryError) as e:
        httppost.post_json(http, url, {"x": 1}, who="channel hook: webhook")
    message = str(e.value)
    assert "HTTP 404: Not Found" in message
    assert "token" not in message and "Cannot POST" not in message


def test_a_webhooks_answer_is_read_up_to_1_mb(server):  # noqa: F811
    server.route("/hook", Reply(stream=lambda: (b"x" * 65536 for _ in range(200))))  # 12.5 MB, no length
    with httppost.client(5, "watcher-test") as http, pytest.raises(DeliveryError, match="more than 1,048,576 bytes"):
        httppost.post_json(http, server.url("/hook"), {"x": 1}, who="channel hook: webhook")
    server.route("/declared", Reply(body=b"x" * (2 << 20)))
    with httppost.client(5, "watcher-test") as http, pytest.raises(DeliveryError, match="2,097,152 bytes"):
        httppost.post_json(http, server.url("/declared"), {"x": 1}, who="channel hook: webhook")
    assert len(server.hits("/declared")) == 1  # not retried: it may have been accepted


def one_digest_config(source: str, channel: str) -> str:
    """A config of one source, one profile (GRPO) and one digest sent through one channel."""
    return f"""
[watcher]
database = "watcher.db"

[source.src]
{source}

[profile.p]
query = "GRPO"

[digest.d]
profiles = ["p"]
channels = ["out"]
every = "6h"
send_empty = true

[channel.out]
{channel}
"""


LISTING_CONFIG = one_digest_config('type = "listing"\nurl_env = "WATCHER_TEST_LISTING_URL"', 'type = "stdout"')


def test_a_listing_url_from_url_env_never_shows_its_key(server, tmp_path):  # noqa: F811
    server.route("/list", Reply(status=500, body=b"internal error"))
    key = "k3y-" + "9" * 20
    url = server.url("/list") + "?apikey=" + key
    (tmp_path / "config.toml").write_text(LISTING_CONFIG)
    env = {"WATCHER_TEST_LISTING_URL": url, "WATCHER_HTTP_RETRIES": "0"}
    r = run_cli("--log-level", "debug", "once", cwd=tmp_path, env=env)
    assert r.returncode == 1 and b"source src" in r.stderr
    assert server.hits("/list") and server.hits("/list")[0].query["apikey"] == key
    status = run_cli("status", cwd=tmp_path, env=env)
    database = (tmp_path / "watcher.db").read_bytes()
    for output in (r.stdout, r.stderr, status.stdout, status.stderr, database):
        assert key.encode() not in output
    assert b"***" in r.stderr
    unset = run_cli("once", cwd=tmp_path, env={"WATCHER_TEST_LISTING_URL": ""})
    assert unset.returncode == 1 and b"WATCHER_TEST_LISTING_URL is not set" in unset.stderr
    check = run_cli("check", cwd=tmp_path, env={"WATCHER_TEST_LISTING_URL": ""})
    assert b"source.src.url_env" in check.stdout + check.stderr


def test_url_and_url_env_together_are_refused(tmp_path):
    (tmp_path / "config.toml").write_text(LISTING_CONFIG.replace('url_env =', 'url = "https://x.example/l"\nurl_env ='))
    r = run_cli("check", cwd=tmp_path)
    assert r.returncode == 2 and b"url or url_env, not both" in r.stderr



class EchoingSmtp(RawServer):
    """A mail server that refuses every login and quotes the AUTH command it got (as a
    careless server or proxy might): ``535 5.7.8 AUTH PLAIN <base64> rejected``."""

    def answer(self, conn):
        with conn, conn.makefile("rwb") as f:
            f.write(b"220 echo ESMTP\r\n")
            f.flush()
            for line in f:
                command = line.strip().decode("latin-1")
                if command.upper().startswith(("EHLO", "HELO")):
                    f.write(b"250-echo\r\n250 AUTH PLAIN\r\n")
                elif command.upper().startswith("AUTH"):
                    f.write(f"535 5.7.8 {command} rejected\r\n".encode())
                elif command.upper().startswith("QUIT"):
                    f.write(b"221 bye\r\n")
                    f.flush()
                    break
                else:
                    f.write(b"250 ok\r\n")
                f.flush()


MAIL_CONFIG = one_digest_config('type = "listing"\npath = "listing.txt"', """type = "email"
host = "127.0.0.1"
port = PORT
security = "none"
username = "watcher-bot"
password_env = "WATCHER_TEST_SMTP_PW"
from = "watcher@example.org"
to = ["me@example.org"]""")


def test_an_smtp_server_quoting_auth_plain_shows_the_password_nowhere(tmp_path):
    password = "correct horse battery staple"
    echoed = base64.b64encode(f"\0watcher-bot\0{password}".encode()).decode()
    (tmp_path / "listing.txt").write_text("")
    with EchoingSmtp() as smtp:
        (tmp_path / "config.toml").write_text(MAIL_CONFIG.replace("PORT", str(smtp.port)))
        env = {"WATCHER_TEST_SMTP_PW": password}
        r = run_cli("--log-level", "debug", "once", cwd=tmp_path, env=env)
        status = run_cli("status", cwd=tmp_path, env=env)
    assert r.returncode == 1 and b"login as watcher-bot refused (535" in r.stderr, r.stderr
    database = (tmp_path / "watcher.db").read_bytes()
    for output in (r.stdout, r.stderr, status.stdout, status.stderr, database):
        assert password.encode() not in output and echoed.encode() not in output
        for form in forms(password):
            assert form.encode() not in output, form
