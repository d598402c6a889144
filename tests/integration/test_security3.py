"""Security, third round: bounded decompression, a total deadline per source request, no
redirect inwards (to a private or loopback address). Real local servers throughout."""

from __future__ import annotations

import bz2
import gzip
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import REPO
from helpers import QuietHTTPServer, RawServer, fast_client
from httpserver import Reply, server  # noqa: F401

from watcher import formats
from watcher.errors import DeliveryError, InputError, SourceError


# --- 1. bounded decompression ------------------------------------------------------------

def gzip_bomb(unpacked_mb: int = 1024) -> bytes:
    """About 1 MB of gzip that unpacks to ``unpacked_mb`` MB of zeros (16 MB members, joined:
    a valid multi-member gzip file, made in a fraction of a second)."""
    member = gzip.compress(b"\0" * (16 << 20), compresslevel=9, mtime=0)
    return member * (unpacked_mb // 16)


def test_gunzip_stops_at_its_limit_and_reads_ordinary_gzip():
    assert formats.gunzip(gzip.compress(b"hello") + gzip.compress(b" world"), "x") == b"hello world"
    with pytest.raises(InputError, match="unpacks to more than 1,000 bytes"):
        formats.gunzip(gzip.compress(b"a" * 1001), "x", limit=1000)
    with pytest.raises(InputError, match="broken gzip"):
        formats.gunzip(gzip.compress(b"a" * 5000)[:-20], "x")


# The peak resident memory of this process alone, in KiB: Linux's VmHWM, which starts afresh at
# exec. (ru_maxrss does not: it keeps the resident size of the parent the process was forked
# from, a test worker that has grown to hundreds of MB, so it would measure the worker.)
PEAK = """
import resource, sys
from watcher.cli import cli
try:
    cli(sys.argv[1:], prog_name="watcher")
except SystemExit as e:
    code = e.code
try:
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("PEAK", peak, code, file=sys.stderr)
"""


def peak_run(args, cwd, env=None):
    """Run watcher in a subprocess; its exit code, stderr and peak memory (MB)."""
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full.pop("WATCHER_CONFIG", None)
    r = subprocess.run([sys.executable, "-c", PEAK, *args], cwd=cwd, env=full, capture_output=True,
                       timeout=120)
    line = [x for x in r.stderr.decode().splitlines() if x.startswith("PEAK ")][-1].split()
    return line[2], r.stderr.decode(), int(line[1]) / 1024


@pytest.mark.slow  # four real processes each unpacking a 1 GB gzip bomb to its bound, their memory peaks measured
def test_a_gzip_bomb_fails_convert_and_a_source_in_one_line_under_200_mb(server, tmp_path):  # noqa: F811
    bomb = gzip_bomb()
    server.route("/bomb.txt.gz", Reply(body=bomb))
    # the same bomb sent as Content-Encoding: httpx unpacks it, the wire limit counts what it gives
    server.route("/encoded", Reply(body=gzip.compress(b"\0" * (128 << 20), mtime=0),
                                   headers={"Content-Encoding": "gzip"}))
    (tmp_path / "bomb.gz").write_bytes(bomb)
    for args in (["convert", server.url("/bomb.txt.gz")], ["convert", str(tmp_path / "bomb.gz")],
                 ["convert", server.url("/encoded")]):
        code, err, peak = peak_run(args, tmp_path, {"WATCHER_HTTP_RETRIES": "0"})
        assert code == "2" and ("unpacks to more than" in err or "larger than the limit" in err), err
        assert "Traceback" not in err and peak < 200, (args, peak)
    (tmp_path / "config.toml").write_text(f"""
[watcher]
database = "watcher.db"
[source.big]
type = "listing"
url = "{server.url('/bomb.txt.gz')}"
[source.wide]
type = "listing"
url = "{server.url('/encoded')}"
""")
    code, err, peak = peak_run(["fetch"], tmp_path, {"WATCHER_HTTP_RETRIES": "0"})
    assert code == "1" and peak < 200, (err, peak)
    failed = [x for x in err.splitlines() if "failed:" in x]
    assert any("source big" in x and "unpacks to more than 67,108,864 bytes" in x for x in failed), err
    assert any("source wide" in x and "larger than the limit" in x for x in failed), err
    assert "Traceback" not in err


def test_a_json_listing_of_millions_of_empty_objects_is_refused_under_200_mb(tmp_path):
    """30 MB of ``[{"title":"t"},{},{},…]``: parsed, 7.5 million dicts (about 1 GB); refused
    before the parse, in one line."""
    (tmp_path / "many.json").write_bytes(b'[{"title":"t"}' + b",{}" * (10 << 20) + b"]")
    code, err, peak = peak_run(["convert", str(tmp_path / "many.json")], tmp_path)
    assert code == "2" and "more than 1,000,000 objects and arrays" in err, err
    assert "Traceback" not in err and peak < 200, peak
    with pytest.raises(InputError, match="objects and arrays"):
        formats.load_json(b"[" + b"[]," * 1_000_001 + b"[]]", "x")
    assert formats.load_json(b'{"a": [1, 2, {"b": []}]}', "x") == {"a": [1, 2, {"b": []}]}


# --- 6. a total deadline per source request ------------------------------------------------

class DripServer(RawServer):
    """Answers each request one byte every ``every`` seconds, the headers too
    (``where="headers"``) or only the body (``where="body"``), for ``total`` bytes; ``sent``
    counts what it got out before the client hung up."""

    def __init__(self, where: str, every: float = 0.3, total: int = 60):
        self.where, self.every, self.total = where.removesuffix("-unsized"), every, total
        self.sized = not where.endswith("-unsized")  # else no Content-Length: the body ends when the connection does
        self.sent = 0
        super().__init__()

    def answer(self, conn):
        with conn:
            conn.recv(65536)
            body = b"x" * self.total
            head = (f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n" if self.sized
                    else "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n").encode()
            if self.where == "body":
                conn.sendall(head)
            data = (head if self.where == "headers" else b"") + body
            try:
                for i in range(len(data)):
                    conn.sendall(data[i:i + 1])
                    self.sent += 1
                    time.sleep(self.every)
            except OSError:
                return


@pytest.mark.parametrize("where", ["headers", "body", "body-unsized"])
def test_a_dripping_server_costs_about_timeout_per_try_not_per_byte(where):
    """With no Content-Length too: the body cut at the deadline is a timeout, never a short
    body taken as whole (QA: 12 of 30 papers stored, the last abstract cut mid-sentence)."""
    drip = DripServer(where, every=0.15)  # 60+ bytes, one every 0.15 s: 9 s or more to the end
    try:
        client = fast_client(timeout=0.5, retries=1)
        started = time.monotonic()
        with pytest.raises(SourceError, match="timed out .*2 tries"):
            client.get(f"http://127.0.0.1:{drip.port}/feed")
        took = time.monotonic() - started
    finally:
        drip.close()
    assert took < 9, took  # two tries of about 0.5 s each; read to its end, one try alone takes 9 s
    assert drip.sent < 40  # the server was cut off, not read to its end


# --- 9. no redirect inwards --------------------------------------------------------------

def outside_address() -> str | None:
    """An address of this machine that is not loopback (the test's stand-in for a remote
    source), else None."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def test_a_redirect_to_a_loopback_address_is_not_followed():
    from http.server import BaseHTTPRequestHandler

    from watcher.util.http import _reach

    assert _reach("127.0.0.1") == _reach("localhost") == _reach("::1") == 2
    assert _reach("10.0.0.8") == _reach("192.168.1.1") == _reach("169.254.169.254") == 1
    assert _reach("93.184.216.34") == 0
    outside = outside_address()
    if outside is None:
        pytest.skip("this machine has no address but loopback")
    seen = []

    class Handler(BaseHTTPRequestHandler):  # on every address: its loopback one is the target
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append(self.path)
            port = self.server.server_address[1]
            where = {"/feed": f"http://127.0.0.1:{port}/admin", "/moved": "/admin"}.get(self.path)
            self.send_response(302 if where else 200)
            if where:
                self.send_header("Location", where)
            self.send_header("Content-Length", "0" if where else "8")
            self.end_headers()
            if not where:
                self.wfile.write(b"internal")

    wide = QuietHTTPServer(("0.0.0.0", 0), Handler)
    port = wide.server_address[1]
    threading.Thread(target=wide.serve_forever, args=(0.02,), daemon=True).start()
    try:
        client = fast_client()
        with pytest.raises(SourceError, match="redirected to http://127.0.0.1:.*loopback.*not followed"):
            client.get(f"http://{outside}:{port}/feed")
        # a redirect within the same host is still followed
        assert client.get(f"http://{outside}:{port}/moved").content == b"internal"
        assert seen == ["/feed", "/moved", "/admin"]
    finally:
        wide.shutdown()
        wide.server_close()


# --- 7. the site writes only inside its folder; identifiers validated where read -------------

def test_a_doi_or_pmid_with_a_path_out_is_no_identifier():
    from watcher.models import Paper, normalize_doi

    assert normalize_doi("10.1234/../../../etc/x") is None
    assert normalize_doi("https://doi.org/10.1234/./x") is None
    assert normalize_doi("10.1234/a..b/c") == "10.1234/a..b/c"  # dots inside a segment are fine
    paper = Paper(title="t", doi="10.1234/../../x", pmid="../../1", dois=["10.5555/.."])
    assert paper.doi is None and paper.pmid is None and paper.dois == []
    assert Paper(title="t", pmid=" 12345 ").pmid == "12345"


def test_the_site_writes_only_inside_its_folder_whatever_the_keys(tmp_path):
    from pathlib import PurePosixPath

    from watcher.cli.site import _write, file_for

    for target in ("/papers/doi:10.1234/../../../../escaped", "/papers/pmid:..%2F..%2F..%2Fx",
                   "/papers/doi:10.1/..\\..\\..\\x", "/../../status", "/feeds/../../daily.atom"):
        name = file_for(target, True)
        assert ".." not in PurePosixPath(name).parts and not name.startswith("/"), (target, name)
        out = tmp_path / "out"
        _write(out / name, b"x", out)
        assert (out / name).resolve().is_relative_to(out.resolve())
    with pytest.raises(InputError, match="outside the site's folder"):
        _write(tmp_path / "out" / ".." / "status.html", b"x", tmp_path / "out")
    assert not (tmp_path / "status.html").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


# --- 8. every channel's answer is capped ------------------------------------------------------

def test_an_apprise_service_answering_without_end_fails_at_1_mb(server, monkeypatch):  # noqa: F811
    pytest.importorskip("apprise")
    from deliverkit import sample_digest

    from watcher.deliver import channel_config
    from watcher.deliver import DeliveryContext, make_channel

    sent = []

    def endless():
        for _ in range(300):  # 19 MB, no Content-Length
            sent.append(1)
            yield b"x" * 65536

    server.route("/hook", Reply(stream=endless))
    server.route("/small", Reply(body=b"{}"))
    monkeypatch.setenv("T_APPRISE", f"json://127.0.0.1:{server.httpd.server_address[1]}/hook")
    channel = make_channel(channel_config(name="phone", type="apprise", urls_env="T_APPRISE"), DeliveryContext())
    with pytest.raises(DeliveryError, match=r"URL 1 of 1 \(json://…\): an answer of more than 1,048,576 bytes"):
        channel.send(sample_digest(2), {})
    assert len(sent) < 200  # cut off, not read to its end
    # an ordinary answer is read as before, and outside the channel nothing is capped
    monkeypatch.setenv("T_APPRISE", f"json://127.0.0.1:{server.httpd.server_address[1]}/small")
    channel.send(sample_digest(2), {})
    import requests

    assert len(requests.get(server.url("/hook"), timeout=10).content) == 300 * 65536


# --- 4. every web request bounded, SQL and Python alike; deep pages a clear 400 -----------------

def many_papers(db, n: int):
    """A store of ``n`` papers (none matching ``zzzzqqq``)."""
    from datetime import datetime, timezone

    from watcher.models import Paper
    from watcher.store import Store

    now = datetime(2025, 4, 12, tzinfo=timezone.utc)
    with Store.open(db) as store:
        store.upsert([Paper(title=f"Paper number {i} on reinforcement learning", abstract="words " * 20,
                            arxiv_id=f"2504.{i:05d}", version=1) for i in range(n)], now)


def test_the_check_after_sqlite_stops_when_the_caller_says_so(tmp_path):
    from watcher.services.search import MAX_CHUNK, Filters, parse_search, run_search
    from watcher.store import Store

    many_papers(tmp_path / "w.db", 1200)
    calls = []

    class Late(Exception):
        pass

    def check():
        calls.append(1)
        if len(calls) == 2:
            raise Late

    with Store.open(tmp_path / "w.db") as store:
        query = parse_search("NOT zzzzqqq")
        with pytest.raises(Late):  # page 40 needs 1,001 candidates checked: stopped at the 2nd look
            run_search(store, query, Filters(), offset=39 * 25, limit=25, check=check)
        assert len(calls) == 2 and MAX_CHUNK < 1001
        # the page's papers are those a whole run finds, kept without every one before it
        full = run_search(store, query, Filters(), offset=0, limit=1200)
        deep = run_search(store, query, Filters(), offset=1000, limit=25)
        assert [p.key for p in deep.papers] == [p.key for p in full.papers[1000:1025]] and deep.more
        assert len(full.papers) == 1200


def test_a_page_deeper_than_the_bound_is_a_clear_400(tmp_path):
    from starlette.testclient import TestClient
    from webkit import app_for

    from watcher.config import load_config

    many_papers(tmp_path / "w.db", 30)
    (tmp_path / "config.toml").write_text('[watcher]\ndatabase = "w.db"\n')
    app = app_for(load_config(tmp_path / "config.toml"), tmp_path / "w.db")
    with TestClient(app) as web:
        ok = web.get("/search.json", params={"q": "NOT zzzzqqq", "page": "40"})
        assert ok.status_code == 200 and ok.json()["papers"] == []
        for path in ("/search.json", "/search"):
            deep = web.get(path, params={"q": "NOT zzzzqqq", "page": "800"})
            assert deep.status_code == 400, deep.text
            assert "page 800: a list shows at most 40 pages" in deep.text
        assert web.get("/search", params={"page": "99999999999999999999"}).status_code == 400
        # past its deadline, a search is stopped in its Python checks too (its statements here
        # are too short for SQLite's progress handler ever to look)
        app.state.web.query_timeout = 0.0
        late = web.get("/search.json", params={"q": "NOT zzzzqqq"})
        assert late.status_code == 503 and "this page was stopped" in late.text, late.text


# --- 5. slowloris: a request must arrive whole within the read timeout ------------------------

def test_connections_that_never_finish_their_request_are_closed(tmp_path):
    import httpx

    from watcher.config import load_config
    from watcher.web.serve import Plan, bind, server as web_server

    many_papers(tmp_path / "w.db", 3)
    (tmp_path / "config.toml").write_text('[watcher]\ndatabase = "w.db"\n')
    config = load_config(tmp_path / "config.toml")
    from dataclasses import replace
    from pathlib import Path

    web = replace(config.web, host="127.0.0.1", port=0)
    sock = bind(web)
    srv = web_server(config, Plan(web, Path(tmp_path / "w.db"), None, None), sock, read_timeout=0.5)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    port = sock.getsockname()[1]
    for _ in range(400):
        if srv.started:
            break
        time.sleep(0.05)
    slow = []
    try:
        starts = [b"", b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ",  # headers never ended
                  b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
                  b"Content-Type: application/x-www-form-urlencoded\r\n\r\npassword=x"]  # body never ended
        for i in range(30):
            c = socket.create_connection(("127.0.0.1", port))
            c.sendall(starts[i % 3])
            c.settimeout(30)
            slow.append(c)
        # the server still answers everyone else meanwhile
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
        for c in slow:  # each one is closed by the server (an empty read), not left open
            data = b""
            while True:
                chunk = c.recv(65536)
                if not chunk:
                    break
                data += chunk
            assert not data.startswith(b"HTTP/1.1 200"), data
        # a keep-alive connection whose next request stalls halfway is closed too
        c = socket.create_connection(("127.0.0.1", port))
        c.settimeout(30)
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while b"\r\n\r\n" not in first:  # the whole first answer, however the server splits it
            first += c.recv(65536)
        head, _, body = first.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")))
        while len(body) < length:
            body += c.recv(65536)
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127")
        assert c.recv(65536) == b""
        c.close()
    finally:
        for c in slow:
            c.close()
        srv.should_exit = True
        thread.join(10)
        sock.close()


def test_every_unit_raises_its_file_handle_limit():
    for unit in sorted((REPO / "deploy").glob("*.service")):
        limits = [int(line.split("=", 1)[1]) for line in unit.read_text().splitlines()
                  if line.startswith("LimitNOFILE=")]
        assert limits and limits[0] >= 8192, unit.name


# --- 3. the state file holds only what a run needs ----------------------------------------------

def test_the_state_file_keeps_no_ratings_sessions_password_or_errors_unless_asked(tmp_path):
    import sqlite3

    from helpers import run_cli as run_watcher  # in process: what is checked is the file, not the process
    from test_site import SAVED
    from webkit import sample_setup

    sample_setup(tmp_path)  # the shipped config.toml and `watcher once --sample`'s database
    assert run_watcher("rate", "save", SAVED, "--sample", cwd=tmp_path).returncode == 0
    assert run_watcher("rate", "up", SAVED, "--profile", "llm-rl", "--sample", cwd=tmp_path).returncode == 0
    db = tmp_path / "watcher-sample.db"
    salt, fingerprint, leak = b"SALT-0123456789abcdef", b"FPRINT-0123456789abcdef", "LEAKED-IN-AN-ERROR-42"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE web_sessions SET salt = ?, fingerprint = ?", (salt, fingerprint))
        conn.execute("INSERT OR REPLACE INTO sources (name, last_error, last_error_at, failures) "
                     "VALUES ('x', ?, '2025-04-12T00:00:00Z', 1)", (f"GET https://h/?k={leak}: HTTP 500",))
        ledger = conn.execute("SELECT count(*) FROM deliveries").fetchone()[0]
    (tmp_path / "sample.toml").write_text((tmp_path / "config.toml").read_text().replace(
        'database = "watcher.db"', 'database = "watcher-sample.db"'))
    r = run_watcher("--config", "sample.toml", "state", "save", "s.gz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert b"left out of it: 1 rating and 1 saved paper (set state_ratings = true under [watcher]" in r.stdout
    raw = bz2.decompress((tmp_path / "s.gz").read_bytes())
    for secret in (salt, fingerprint, leak.encode()):
        assert secret not in raw, secret
    (tmp_path / "s.db").write_bytes(raw)
    with sqlite3.connect(tmp_path / "s.db") as conn:
        assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == ledger > 0
        assert conn.execute("SELECT count(*) FROM ratings").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM saved").fetchone()[0] == 0
        assert conn.execute("SELECT salt, fingerprint FROM web_sessions").fetchone() == (None, None)
        assert "not kept" in conn.execute("SELECT last_error FROM sources WHERE name = 'x'").fetchone()[0]
    # the original is untouched; with the option, ratings and the saved list are kept
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM ratings").fetchone()[0] == 1
    r = run_watcher("--config", "sample.toml", "state", "save", "r.gz", "--with-ratings", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "r.db").write_bytes(bz2.decompress((tmp_path / "r.gz").read_bytes()))
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("SELECT count(*) FROM ratings").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM saved").fetchone()[0] == 1
        assert conn.execute("SELECT salt FROM web_sessions").fetchone() == (None,)
    # the config's state_ratings decides the default (a CI run's save keeps them too);
    # --without-ratings overrides it
    (tmp_path / "kept.toml").write_text((tmp_path / "sample.toml").read_text().replace(
        'database = "watcher-sample.db"', 'database = "watcher-sample.db"\nstate_ratings = true'))
    for extra, name, kept in (([], "k.gz", 1), (["--without-ratings"], "w.gz", 0)):
        r = run_watcher("--config", "kept.toml", "state", "save", name, *extra, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert (b"left out of it" in r.stdout) == (not kept)
        (tmp_path / "x.db").unlink(missing_ok=True)
        (tmp_path / "x.db").write_bytes(bz2.decompress((tmp_path / name).read_bytes()))
        with sqlite3.connect(tmp_path / "x.db") as conn:
            assert conn.execute("SELECT count(*) FROM ratings").fetchone()[0] == kept


# --- 9. the smaller ones: file parts, a logged-in session during a guessing attack, bib URLs -----

def test_a_logged_in_session_stays_in_while_someone_guesses(tmp_path, monkeypatch):
    from starlette.testclient import TestClient
    from webkit import app_for, csrf_of

    from watcher.config import load_config

    many_papers(tmp_path / "w.db", 3)
    (tmp_path / "config.toml").write_text('[watcher]\ndatabase = "w.db"\n')
    app = app_for(load_config(tmp_path / "config.toml"), tmp_path / "w.db", password="a long enough password")
    with TestClient(app, follow_redirects=False) as owner, TestClient(app, follow_redirects=False) as guesser:
        token = csrf_of(owner.get("/login"))
        assert owner.post("/login", data={"csrf": token, "password": "a long enough password",
                                           "next": "/search"}).status_code == 303
        # a guess is being checked (the throttle's queue holds the address every test client has)
        app.state.web.throttle.pending.add("testclient")
        token = csrf_of(guesser.get("/login"))
        assert guesser.post("/login", data={"csrf": token, "password": "guess"}).status_code == 429
        assert owner.get("/search").status_code == 200  # the owner's pages answer
        token = csrf_of(owner.get("/search"))
        again = owner.post("/login", data={"csrf": token, "password": "", "next": "/search"})
        assert again.status_code == 303 and again.headers["location"].endswith("/search")


def test_a_rating_link_post_with_a_file_part_is_a_400(tmp_path, monkeypatch):
    from dataclasses import replace as dc_replace

    from starlette.testclient import TestClient
    from webkit import app_for

    from watcher.config import load_config
    from watcher.present.links import make_token
    from watcher.store import Store

    many_papers(tmp_path / "w.db", 3)
    (tmp_path / "config.toml").write_text('[watcher]\ndatabase = "w.db"\n[profile.p]\nquery = "learning"\n')
    monkeypatch.setenv("T_LINK_SECRET", "a secret only the server knows")
    config = load_config(tmp_path / "config.toml")
    config = dc_replace(config, web=dc_replace(config.web, base_url="http://testserver", secret_env="T_LINK_SECRET"))
    app = app_for(config, tmp_path / "w.db")
    with TestClient(app, follow_redirects=False) as c:
        for action in ("save", "up", "rate"):
            token = make_token("a secret only the server knows", action, "p", "2504.00001")
            r = c.post(f"/r/{token}", data={"action": "up"}, files={"upload": ("x.txt", b"x" * 100)})
            assert r.status_code == 400, (action, r.status_code, r.text)
        ok = c.post(f"/r/{make_token('a secret only the server knows', 'save', 'p', '2504.00001')}")
        assert ok.status_code == 200
    with Store.open(tmp_path / "w.db", readonly=True) as store:
        assert store.db.execute("SELECT count(*) FROM ratings").fetchone()[0] == 0


def test_saved_bib_never_keeps_a_javascript_url(tmp_path):
    from datetime import datetime, timezone

    from starlette.testclient import TestClient
    from webkit import app_for

    from watcher.present.bibtex import write
    from watcher.config import load_config
    from watcher.models import Paper
    from watcher.services.ratings import apply_rating
    from watcher.store import Store

    hostile = [Paper(title="A paper with a hostile link", url=u, doi=f"10.1234/x{i}")
               for i, u in enumerate(["javascript:alert(document.cookie)", " JaVaScRiPt:alert(1)",
                                      "data:text/html,<script>alert(1)</script>", "vbscript:x"])]
    fine = Paper(title="A paper with a web link", url="https://example.org/p?a=1&b={x}", doi="10.1234/ok")
    text = write(hostile + [fine])
    assert "javascript" not in text.lower() and "data:" not in text and "vbscript" not in text
    assert "url = {https://example.org/p?a=1&b=%7Bx%7D}" in text
    db = tmp_path / "w.db"
    with Store.open(db) as store:
        store.upsert(hostile, datetime(2025, 4, 12, tzinfo=timezone.utc))
        for p in hostile:
            apply_rating(store, "save", None, p.key, "test", profiles=())
    (tmp_path / "config.toml").write_text('[watcher]\ndatabase = "w.db"\n')
    with TestClient(app_for(load_config(tmp_path / "config.toml"), db)) as web:
        bib = web.get("/saved.bib")
    assert bib.status_code == 200 and bib.text.count("@misc") == 4, bib.text
    assert "javascript" not in bib.text.lower() and "url =" not in bib.text


def test_a_webhook_dripping_its_answer_fails_after_about_its_timeout():
    from watcher.deliver import httppost

    drip = DripServer("body", every=0.15)  # 60 bytes, one every 0.15 s: 9 s to the end
    try:
        with httppost.client(0.5, "watcher-test") as http, pytest.raises(
                DeliveryError, match="timed out waiting for an answer"):
            httppost.post_json(http, f"http://127.0.0.1:{drip.port}/hook", {"x": 1}, who="channel hook: webhook")
    finally:
        drip.close()
    assert drip.sent < 40  # cut off, not read to its end


@pytest.mark.parametrize("opener", ["bz2", "gzip", "lzma"])
def test_a_state_file_that_unpacks_without_end_is_not_restored(tmp_path, opener):
    """Whichever of the formats a state file is read in (bzip2 as saved, gzip as saved before,
    xz), the same bound on what it unpacks to."""
    import lzma

    from watcher.cli import statefile

    packed = tmp_path / "bomb.db.gz"
    # 304 MB of zeros in a few hundred KB: 19 streams of 16 MB each, one after the other (each
    # format reads a file of joined streams as one, so packing one stream is enough)
    packed.write_bytes({"bz2": bz2.compress, "gzip": gzip.compress, "lzma": lzma.compress}[opener](
        b"\0" * (16 << 20)) * 19)
    with pytest.raises(InputError, match="unpacks to more than 268,435,456 bytes"):
        statefile.restore(packed, tmp_path / "watcher.db")
    assert not (tmp_path / "watcher.db").exists()
    assert sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file()) < 50 << 20  # nothing left behind


def test_numbers_of_thousands_of_digits_are_no_internal_error():
    """Python refuses to read an integer of more than 4,300 digits (ValueError): an arXiv
    version, an upvote or an author count that long is no number watcher reads, never a bug."""
    from watcher import formats

    digits = "9" * 5000
    from pathlib import Path

    DATA = Path(__file__).parent.parent / "data"
    rss = (DATA / "arxiv_rss_NEW_rss2_cs.LG+cs.AI+cs.CL+stat.ML_2026-09-24_trimmed_laya-reader.xml").read_bytes()
    bad = rss.replace(b"<link>https://arxiv.org/abs/2609.26811</link>",
                      b"<link>https://arxiv.org/abs/2609.26811v" + digits.encode() + b"</link>", 1)
    assert bad != rss
    before = formats.read(rss, "rss").papers
    try:
        after = formats.read(bad, "rss").papers
    except InputError:
        after = None  # refused in one line: fine too
    assert after is None or len(after) <= len(before)
    page = (DATA / "hf-daily-papers-page.txt").read_text()
    bad = page.replace("  • 8 authors", f"  • {digits} authors", 1).replace("May 30, 2025 4", f"May 30, 2025 {digits}", 1)
    assert bad != page
    with pytest.raises(InputError) as refused:  # no line the page's shape allows: refused, quoting a little
        formats.read(bad.encode(), "hf")
    assert len(str(refused.value)) < 200 and "\n" not in str(refused.value)
    bad = page.replace("  • 8 authors", f"  • {digits} authors", 1)  # an author count: it is a line's shape
    read = formats.read(bad.encode(), "hf").papers
    assert read and all((p.author_count or 0) < 10**9 for p in read)


@pytest.mark.slow  # parses two million elements under tracemalloc
def test_xml_is_bounded_by_what_it_parses_into():
    """Not only bytes: elements outside any record are dropped as they end (15 million empty
    ones took 1.4 GB), nesting stops at 100 deep, and a feed for feedparser (which builds the
    whole document) holds at most 500,000 tags; each refusal is one line."""
    import tracemalloc

    from watcher import formats

    junk = b"<OAI-PMH xmlns='http://www.openarchives.org/OAI/2.0/'><ListRecords>" + b"<a/>" * 2_000_000 \
        + b"</ListRecords></OAI-PMH>"
    tracemalloc.start()
    try:
        try:
            formats.read(junk, "oai", format="arxiv-oai")
        except InputError:
            pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak  # the 8 MB document, not two million elements kept
    deep = b"<OAI-PMH xmlns='http://www.openarchives.org/OAI/2.0/'>" + b"<a>" * 5000 + b"</a>" * 5000 + b"</OAI-PMH>"
    with pytest.raises(InputError, match="nested more than 100 elements deep"):
        formats.read(deep, "oai", format="arxiv-oai")
    feed = b"<rss version='2.0'><channel><title>T</title>" + b"<a/>" * 600_000 + b"</channel></rss>"
    with pytest.raises(InputError, match="more than 500,000 tags"):
        formats.read(feed, "feed", format="journal-feed")


def test_one_paper_is_bounded_whatever_its_listing_says():
    """A listing's paper of 100,000 authors and a title of 200,000 characters is read as a
    paper of 3,000 names (author_count the whole), a title of 2,000 characters and an abstract
    of 50,000: what the digests and pages show of it stays bounded."""
    import json

    from watcher import formats

    listing = json.dumps([{"title": "T" * 200_000, "authors": [f"Author {i}" for i in range(100_000)],
                           "abstract": "word " * 40_000, "arxiv_id": "2501.00001",
                           "published": "2025-01-02T00:00:00Z"}]).encode()
    [paper] = formats.read(listing, "big.json").papers
    assert len(paper.authors) == 3_000 and paper.author_count == 100_000
    assert len(paper.title) == 2_000 and paper.title.endswith("…")
    assert len(paper.abstract) == 50_000
