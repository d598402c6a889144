"""One line per event: the HTTP libraries' per-request lines stay at debug."""

from __future__ import annotations

import re

from conftest import DATA, MINIMAL_CONFIG
from helpers import run_cli
from httpserver import Reply, server  # noqa: F401
from test_daemon import daemons, wait_for  # noqa: F401

DIGEST = (DATA / "llm-rl-2025-04-12.txt").read_bytes()


def config_with_listing(write_config, url: str, every: str | None = None):
    text = MINIMAL_CONFIG.replace("[profile.llm-rl]", f'[source.lab]\ntype = "listing"\nurl = "{url}"\n\n'
                                                      "[profile.llm-rl]")
    if every:
        text = text.replace('schedule = "30 21 * * sun-thu"', f'every = "{every}"')
    return write_config(text)


def test_fetch_at_info_logs_the_event_not_each_request(server, write_config, tmp_path):
    server.route("/digest.txt", Reply(body=DIGEST))
    cfg = config_with_listing(write_config, server.url("/digest.txt"))
    r = run_cli("--config", str(cfg), "--log-level", "info", "fetch", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode().splitlines() == ["watcher: INFO: source lab: 30 new, 0 updated, 0 unchanged"]
    debug = run_cli("--config", str(cfg), "--log-level", "debug", "fetch", cwd=tmp_path)
    assert debug.returncode == 0, debug.stderr
    assert b"HTTP Request: GET " + server.url("/digest.txt").encode() in debug.stderr  # still there to debug


def test_the_daemon_log_has_one_line_per_fetch(server, write_config, tmp_path, daemons):
    server.route("/digest.txt", Reply(body=DIGEST))
    config_with_listing(write_config, server.url("/digest.txt"), every="1h")
    d = daemons(tmp_path)
    wait_for(lambda: "source lab: 30 new" in d.log, 60, "the fetch in the log")
    wait_for(lambda: "cycle done" in d.log, 60, "the end of the cycle in the log")
    rc, _ = d.stop()
    assert rc == 0, d.log
    assert "HTTP Request" not in d.log and "httpx" not in d.log, d.log
    assert len(server.requests) == 1 and d.log.count("source lab:") == 1
    # counts of one in words that agree (not "1 digests", "1 sources")
    assert ", 1 digest)" in d.log and re.search(r"cycle done in [\d.]+s: 1 source, \d+ deliver", d.log), d.log
    assert not re.search(r"\b1 (digests|sources|deliveries|papers)\b", d.log), d.log
