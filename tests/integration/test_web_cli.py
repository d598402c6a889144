"""`watcher serve` and `[web].serve` in `watcher run`, as a user starts them."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from deliverkit import free_port

from conftest import REPO, run_watcher
from helpers import run_cli
from webkit import sample_setup


def env(**extra) -> dict:
    out = dict(os.environ)
    out["PYTHONPATH"] = str(REPO) + os.pathsep + out.get("PYTHONPATH", "")
    out.pop("WATCHER_CONFIG", None)
    out.update(extra)
    return out


@contextmanager
def started(args: list[str], cwd: Path, **extra):
    """``python -m watcher ARGS`` running in the background; yields (process, first stdout
    lines up to the URL)."""
    proc = subprocess.Popen([sys.executable, "-m", "watcher", *args], cwd=cwd, env=env(**extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def read_url(proc) -> tuple[str, list[str]]:
    lines = []
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if "open http://" in line:
            return line.split("open ", 1)[1].split()[0], lines
    raise AssertionError(f"no URL printed: {lines} {proc.stderr.read()}")


def wait_ok(url: str) -> httpx.Response:
    """GET ``url`` once the server answers, and (for up to 60 s) until it is not 503: a new
    daemon's database appears with its first cycle."""
    deadline = time.monotonic() + 60
    while True:
        try:
            r = httpx.get(url, timeout=30)
            if r.status_code != 503 or time.monotonic() > deadline:
                return r
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.1)


@pytest.fixture
def sample_dir(tmp_path):
    """The shipped config and the sample's database after `watcher once --sample`."""
    sample_setup(tmp_path)
    return tmp_path


def test_serve_after_once_sample_prints_the_url_and_serves_the_sample_digest(sample_dir):
    port = free_port()
    with started(["serve", "--listen", f"127.0.0.1:{port}"], sample_dir) as proc:
        url, lines = read_url(proc)
        assert url == f"http://127.0.0.1:{port}/"
        assert any("sample database" in line for line in lines)
        r = wait_ok(url)
        assert r.status_code == 200 and "LLM-RL" in r.text and "2025-04-12" in r.text
        assert wait_ok(url + "healthz").text == "ok"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0


def test_serve_sample_before_once_sample_names_the_command_that_makes_it(tmp_path):
    """A newcomer who runs `serve --sample` first: the log line and the 503 page say to run
    `watcher once --sample` (not `watcher once`, which writes another database)."""
    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    port = free_port()
    hint = "no sample database yet (run 'watcher once --sample' first)"
    with started(["serve", "--sample", "--listen", f"127.0.0.1:{port}"], tmp_path) as proc:
        url, _ = read_url(proc)
        r = httpx.get(url, timeout=30)  # it listens before it prints the URL
        assert r.status_code == 503 and hint.replace("'", "&#39;") in r.text
        assert run_cli("once", "--sample", cwd=tmp_path).returncode == 0
        assert wait_ok(url).status_code == 200
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        assert hint in proc.stderr.read()


def test_serve_refuses_a_public_address_without_a_password_and_an_unset_password(sample_dir):
    r = run_cli("serve", "--listen", "0.0.0.0:8080", cwd=sample_dir)
    assert r.returncode == 2 and b"not a loopback address" in r.stderr and b"Traceback" not in r.stderr
    r = run_cli("serve", "--listen", "127.0.0.1:99999", cwd=sample_dir)
    assert r.returncode == 2 and b"--listen" in r.stderr
    cfg = sample_dir / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[web]\nlisten = "0.0.0.0:8080"\npassword_env = "WATCHER_TEST_PW"\n')
    r = run_cli("serve", cwd=sample_dir, env={"WATCHER_TEST_PW": ""})
    assert r.returncode == 2 and b"WATCHER_TEST_PW is not set" in r.stderr


def test_serve_says_when_the_address_is_taken(sample_dir):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        r = run_watcher("serve", "--listen", f"127.0.0.1:{s.getsockname()[1]}", cwd=sample_dir)  # a process: it would serve
    assert r.returncode == 1 and b"cannot listen on" in r.stderr and b"Traceback" not in r.stderr


def test_run_with_web_serve_serves_the_inbox_in_the_same_process(tmp_path):
    port = free_port()
    (tmp_path / "config.toml").write_text(f"""
[watcher]
database = "watcher.db"
timezone = "UTC"

[profile.llm-rl]
title = "LLM-RL"
query = "GRPO"

[digest.daily]
profiles = ["llm-rl"]
schedule = "30 21 * * sun-thu"
channels = ["archive"]

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"

[web]
listen = "127.0.0.1:{port}"
serve = true
""")
    with started(["run"], tmp_path) as proc:
        r = wait_ok(f"http://127.0.0.1:{port}/healthz")
        assert (r.status_code, r.text) == (200, "ok")
        assert wait_ok(f"http://127.0.0.1:{port}/").status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        assert "web inbox on http://127.0.0.1:" in proc.stderr.read()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze is not installed (apt-get install systemd)")
def test_the_web_unit_passes_systemd_analyze_verify_and_is_hardened(tmp_path):
    text = (REPO / "deploy" / "watcher-web.service").read_text()
    assert "ExecStart=/usr/local/bin/watcher --config /etc/watcher/config.toml serve" in text
    for setting in ("DynamicUser=yes", "StateDirectory=watcher", "NoNewPrivileges=yes",
                    "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
                    "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "CapabilityBoundingSet=",
                    "SystemCallFilter=@system-service", "RestartPreventExitStatus=2"):
        assert setting in text.splitlines(), setting
    fake = tmp_path / "bin" / "watcher"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    unit = tmp_path / "watcher-web.service"
    unit.write_text(text.replace("/usr/local/bin/watcher", str(fake)))
    proc = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True,
                          timeout=60)
    problems = [line for line in (proc.stdout + proc.stderr).splitlines()
                if str(tmp_path) in line or "watcher" in line]
    assert proc.returncode == 0 and not problems, proc.stdout + proc.stderr


@pytest.mark.slow  # a benchmark script
def test_the_web_benchmark_runs_and_prints_its_figures():
    """benchmarks/bench_web.py at a tiny size, so that it keeps working (its figures are not
    judged here: timings are for the benchmark run, not the tests)."""
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_web.py"), "--papers", "1500",
                        "--requests", "60", "--concurrency", "4"], env=env(), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for name in ("web_search_p50_ms", "web_search_p95_ms", "web_inbox_p50_ms", "web_inbox_p95_ms",
                 "web_rss_mb", "web_server_cpu_ms_per_request"):
        assert f"\n{name} " in "\n" + r.stdout, name
    assert "\nweb_errors 0.0" in "\n" + r.stdout, r.stdout


def test_serve_follows_config_edits_and_sighup_and_names_its_database(sample_dir):
    """A running `watcher serve` reads the config again when the file changes, and on SIGHUP
    even when its time and size say nothing changed; /status names the database it serves."""
    port = free_port()
    cfg = sample_dir / "config.toml"
    with started(["serve", "--listen", f"127.0.0.1:{port}"], sample_dir) as proc:
        url, _ = read_url(proc)
        status = wait_ok(url + "status")
        assert str(sample_dir / "watcher-sample.db") in status.text, status.text[status.text.find("<h1>"):][:300]
        assert httpx.get(url + "profiles/grpo", timeout=30).status_code == 404
        cfg.write_text(cfg.read_text() + '\n[profile.grpo]\nquery = "GRPO"\n')
        assert httpx.get(url + "profiles/grpo", timeout=30).status_code == 200  # the edit is served
        cfg.write_text(cfg.read_text() + "\n[profile.broken\n")  # an invalid edit: the last good one stays
        assert httpx.get(url + "profiles/grpo", timeout=30).status_code == 200
        # the same size and time as before: only SIGHUP says to read it again
        text = cfg.read_text().replace("\n[profile.broken\n", "\n").replace('[profile.grpo]', '[profile.ppox]')
        stamp = cfg.stat()
        cfg.write_text(text + " " * (stamp.st_size - len(text.encode())))
        os.utime(cfg, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        assert httpx.get(url + "profiles/ppox", timeout=30).status_code == 404
        proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while httpx.get(url + "profiles/ppox", timeout=30).status_code != 200:
            assert time.monotonic() < deadline, "SIGHUP did not make serve read the config again"
            time.sleep(0.1)
        assert proc.poll() is None  # SIGHUP does not stop it
        # the edits above kept `database = "watcher.db"`: serving the sample's is no news; a
        # database really changed is, once (a restart serves it)
        cfg.write_text(cfg.read_text().replace('database = "watcher.db"', 'database = "other.db"'))
        assert httpx.get(url + "status", timeout=30).status_code == 200
        cfg.write_text(cfg.read_text() + "\n# another edit\n")
        assert httpx.get(url + "status", timeout=30).status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        err = proc.stderr.read()
        assert "cannot be used, still serving the previous one" in err
        warned = [line for line in err.splitlines() if "names another database" in line]
        assert len(warned) == 1 and "other.db" in warned[0] and "watcher-sample.db" in warned[0], err


def test_run_with_web_serve_serves_the_daemons_database_not_the_sample(sample_dir):
    """Right after `once --sample` only the sample database exists; `serve` shows it, but the
    daemon's own inbox serves the daemon's database (the one its digests' rating links name)."""
    port = free_port()
    cfg = sample_dir / "config.toml"
    (sample_dir / "papers.jsonl").write_text("")  # no network: a local listing, empty
    text = re.sub(r"\[source\.[^]]+\]\n(?:[^\[\n][^\n]*\n)*", "", cfg.read_text())
    cfg.write_text(text + '\n[source.local]\ntype = "listing"\npath = "papers.jsonl"\n'
                   + f'\n[web]\nlisten = "127.0.0.1:{port}"\nserve = true\n')
    assert "arxiv" not in cfg.read_text().split("[profile")[0]
    with started(["run"], sample_dir) as proc:
        status = wait_ok(f"http://127.0.0.1:{port}/status")
        assert str(sample_dir / "watcher.db") in status.text
        assert "watcher-sample.db" not in status.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
