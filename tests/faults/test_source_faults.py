"""Source faults end to end: ``watcher once`` (the command line, in process) fetches the arXiv
API and Hugging Face Daily Papers from a real local server that misbehaves, beside a healthy
listing source.

After each fault: exit status 1, the source's error in words on stderr and in ``watcher
status``, no traceback, the healthy source's papers delivered (isolation), nothing from the
hostile body anywhere (an external entity's file is never read). After the fault clears, the
next run delivers the faulty source's papers, every paper exactly once. Retry delays are shrunk
through ``$WATCHER_HTTP_*`` and each source's ``timeout`` is 1 s, so the module runs in well
under a minute.
"""

from __future__ import annotations

import json
import re
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import run_cli_text

from httpserver import Reply, server  # noqa: F401  (the fixture)
from faultkit import assert_exactly_once, assert_no_traceback
from watcher.models import Paper
from watcher.formats import text as text_format

pytestmark = pytest.mark.slow  # real watcher processes against faulty servers: the full suite (CI) runs it, not the inner loop

NOW = datetime.now(timezone.utc)
FAST = {"WATCHER_HTTP_RETRIES": "1", "WATCHER_HTTP_BACKOFF": "0.01", "WATCHER_HTTP_MAX_BACKOFF": "0.05",
        "WATCHER_HTTP_RETRY_AFTER_CAP": "5", "WATCHER_DB_TIMEOUT": "2"}
SECRET_FILE_TEXT = "TOP-SECRET-LOCAL-FILE-CONTENT-7d1f"

CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[source.arxiv]
type = "arxiv"
query = "cat:cs.LG"
url = "{base}/api/query"
timeout = 1

[source.hf]
type = "hf-daily"
url = "{base}/api/daily_papers"
timeout = 1

[source.lab]
type = "listing"
path = "lab.txt"

[profile.all]
title = "All"
query = 'paper OR learning OR model'
max_papers = 500

[digest.daily]
profiles = ["all"]
schedule = "30 21 * * *"
formats = ["json"]
channels = ["archive"]

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}-{{format}}.json"
"""


def atom(entries: list[dict], total: int | None = None) -> bytes:
    """An arXiv API Atom page with these entries (keys: id, title, published; None leaves the
    element out)."""
    parts = []
    for e in entries:
        items = []
        if e.get("id") is not None:
            items.append(f"<id>http://arxiv.org/abs/{e['id']}v1</id>")
        items.append(f"<title>{e['title']}</title>")
        items.append(f"<summary>A paper about learning, number {e['title'][-3:]}.</summary>")
        if e.get("published") is not None:
            items.append(f"<published>{e['published']}</published><updated>{e['published']}</updated>")
        items.append("<author><name>A. Author</name></author>")
        items.append('<category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>')
        parts.append("<entry>" + "".join(items) + "</entry>")
    n = len(entries) if total is None else total
    return (f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
 xmlns:arxiv="http://arxiv.org/schemas/atom">
<id>https://arxiv.org/api/x</id><title>arXiv Query</title>
<opensearch:totalResults>{n}</opensearch:totalResults><opensearch:startIndex>0</opensearch:startIndex>
<opensearch:itemsPerPage>{n}</opensearch:itemsPerPage>
""" + "\n".join(parts) + "\n</feed>\n").encode()


def stamp(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


ARXIV_ENTRIES = [{"id": f"2604.{10000 + i}", "title": f"Arxiv paper {i:03d}", "published": stamp(NOW - timedelta(hours=1, minutes=i))}
                 for i in range(12)]
ARXIV_IDS = [e["id"] for e in ARXIV_ENTRIES]
GOOD_ATOM = atom(ARXIV_ENTRIES)


def hf_json(day: str) -> bytes:
    return json.dumps([{"paper": {"id": f"2604.2{day[-2:]}0{i}", "title": f"HF paper {day} {i}",
                                  "summary": "A model paper.", "publishedAt": stamp(NOW - timedelta(days=1)),
                                  "authors": [{"name": "B. Author"}], "upvotes": i}}
                       for i in range(2)]).encode()


def hf_reply(request) -> Reply:
    return Reply(body=hf_json(request.query.get("date", "0000-00-00")), headers={"Content-Type": "application/json"})


LAB_TITLES = [f"Lab paper {i}" for i in range(5)]


def lab_listing() -> str:
    papers = [Paper(title=t, authors=["C. Author"], abstract="A lab paper.", published=NOW - timedelta(hours=3))
              for t in LAB_TITLES]
    return text_format.write("Lab", NOW.date(), papers)


class Env:
    """The folder, config and server of one test; runs watcher and reads what was delivered."""

    def __init__(self, folder: Path, server):
        self.folder, self.server = folder, server
        cfg = CONFIG.replace("{base}", server.base).replace("{{", "{").replace("}}", "}")
        (folder / "config.toml").write_text(cfg, encoding="utf-8")
        (folder / "lab.txt").write_text(lab_listing(), encoding="utf-8")
        self.outputs = []
        self.healthy()

    def healthy(self) -> None:
        self.server.route("/api/query", Reply(body=GOOD_ATOM, headers={"Content-Type": "application/atom+xml"}))
        self.server.route("/api/daily_papers", hf_reply)

    def once(self, *args: str):
        r = run_cli_text("--config", str(self.folder / "config.toml"), "--log-level", "debug", *args, "once",
                         cwd=self.folder, env=FAST)
        self.outputs.append(r)
        assert_no_traceback(r)
        return r

    def status(self) -> str:
        r = run_cli_text("--config", str(self.folder / "config.toml"), "status", cwd=self.folder, env=FAST)
        assert r.returncode == 0, r.stderr
        return r.stdout

    def delivered(self) -> list[dict]:
        return [p for f in sorted((self.folder / "digests").glob("*.json"))
                for p in json.loads(f.read_text(encoding="utf-8"))]

    def delivered_ids(self, prefix: str) -> list[str]:
        return [p["arxiv_id"] for p in self.delivered() if (p["arxiv_id"] or "").startswith(prefix)]

    def delivered_titles(self, prefix: str) -> list[str]:
        return [p["title"] for p in self.delivered() if p["title"].startswith(prefix)]

    def everything_said(self) -> str:
        import sqlite3

        said = "\n".join(r.stdout + r.stderr for r in self.outputs)
        conn = sqlite3.connect(self.folder / "watcher.db")
        try:
            said += "\n".join(str(v) for row in conn.execute("SELECT last_error, state FROM sources") for v in row)
            said += "\n".join(str(v) for row in conn.execute("SELECT title, abstract FROM papers") for v in row)
        finally:
            conn.close()
        return said


def _big(total: int, chunk: int = 1 << 20):
    def gen():
        sent = 0
        block = b"<entry>" + b"x" * (chunk - 16) + b"</entry>\n"
        yield b'<?xml version="1.0"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
        while sent < total:
            yield block
            sent += len(block)
    return gen


def _gzip_bomb(size: int = 512 << 20) -> bytes:
    """A gzip body of about 0.5 MB that inflates to ``size`` bytes of zeros."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * (1 << 20)
    out = [comp.compress(b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><!--')]
    out += [comp.compress(zeros) for _ in range(size >> 20)]
    out.append(comp.flush())
    return b"".join(out)


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE feed [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">
<opensearch:totalResults>1</opensearch:totalResults>
<entry><id>http://arxiv.org/abs/2604.99999v1</id><title>&lol9;</title><summary>x</summary></entry></feed>
"""


def xxe(path: Path) -> bytes:
    return (f"""<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY xxe SYSTEM "file://{path}">]>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">
<opensearch:totalResults>1</opensearch:totalResults>
<entry><id>http://arxiv.org/abs/2604.99998v1</id><title>Leak &xxe;</title><summary>&xxe;</summary>
<published>{stamp(NOW)}</published></entry></feed>
""").encode()


# fault name: (route, replies, words on stderr and in status)
ARXIV_FAULTS = {
    "429 forever": ([Reply(status=429, headers={"Retry-After": "1"})], r"HTTP 429 Too Many Requests \(2 tries\)"),
    "500": ([Reply(status=500, body=b"oops")], r"HTTP 500 Internal Server Error \(2 tries\); the server may be down"),
    "503 far Retry-After": ([Reply(status=503, headers={"Retry-After": "3600"})],
                            r"HTTP 503, the server asks to wait 3600 s; it will be tried again on the next run"),
    "read timeout": ([Reply(body=GOOD_ATOM, fault="stall", delay=8)], r"timed out \(2 tries\)"),
    "accepts, never answers": ([Reply(body=GOOD_ATOM, fault="stall", delay=30)], r"timed out \(2 tries\)"),
    "connection reset": ([Reply(fault="reset")], r"connection broken|network error|cannot connect"),
    "truncated body": ([Reply(body=GOOD_ATOM, fault="truncate")], r"connection broken before the response was complete"),
    "truncated XML": ([Reply(body=GOOD_ATOM[: len(GOOD_ATOM) // 2])], r"not well-formed XML where an arXiv API Atom feed was expected"),
    "HTML instead of XML": ([Reply(body=b"<!DOCTYPE html><html><body>Service Unavailable</body></html>",
                                   headers={"Content-Type": "text/html"})], r"got an HTML page where an arXiv API Atom feed was expected"),
    "200 MB streamed": ([Reply(stream=_big(200 << 20))], r"response is larger than the limit of 67,108,864 bytes"),
    "200 MB declared": ([Reply(stream=_big(200 << 20), headers={"Content-Length": str(200 << 20)})],
                        r"response of 209,715,200 bytes is larger than the limit"),
    # made when its test runs, not when the module is collected (every run collects it, -m "not slow" too)
    "gzip bomb": (lambda: [Reply(body=_gzip_bomb(), headers={"Content-Encoding": "gzip"})], r"larger than the limit of 67,108,864 bytes"),
    "entity expansion bomb": ([Reply(body=BILLION_LAUGHS)], r"XML with a DOCTYPE/DTD is refused"),
    "redirect loop": ([Reply(status=302, headers={"Location": "/api/query"})], r"redirected too many times \(a redirect loop on the server\?\); check the source.s url"),
}


@pytest.mark.parametrize("fault", list(ARXIV_FAULTS))
def test_arxiv_fault_then_recovery(tmp_path, server, fault):
    replies, words = ARXIV_FAULTS[fault]
    env = Env(tmp_path, server)
    server.route("/api/query", *(replies() if callable(replies) else replies))
    failed = env.once()
    assert failed.returncode == 1, failed.stderr
    assert re.search(r"source arxiv failed: .*" + words, failed.stderr), failed.stderr
    status = env.status()
    assert re.search(r"arxiv: last fetch never; 0 papers\n\s+FAILING \(1 in a row\), last failed at \S+: .*" + words, status), status
    # isolation: the other sources were fetched and their papers delivered
    assert_exactly_once(env.delivered_titles("Lab paper"), LAB_TITLES, "lab")
    assert env.delivered_ids("2604.2")
    assert env.delivered_ids("2604.1") == []
    assert "lol" not in env.everything_said().replace("lol9", "")

    env.healthy()
    ok = env.once()
    assert ok.returncode == 0, ok.stderr
    assert env.once().returncode == 0
    assert_exactly_once(env.delivered_ids("2604.1"), ARXIV_IDS, "arxiv")
    assert_exactly_once(env.delivered_titles("Lab paper"), LAB_TITLES, "lab")
    assert "FAILING" not in env.status()


def test_429_and_503_with_short_retry_after_are_waited_out(tmp_path, server):
    env = Env(tmp_path, server)
    server.route("/api/query", Reply(status=429, headers={"Retry-After": "1"}), Reply(body=GOOD_ATOM))
    server.route("/api/daily_papers", Reply(status=503, headers={"Retry-After": "1"}), hf_reply)
    r = env.once()
    assert r.returncode == 0, r.stderr
    for path in ("/api/query", "/api/daily_papers"):
        hits = server.hits(path)
        assert hits[1].at - hits[0].at >= 0.95, f"{path}: Retry-After not honoured"
    assert_exactly_once(env.delivered_ids("2604.1"), ARXIV_IDS, "arxiv")


def test_external_entity_is_never_read(tmp_path, server):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET_FILE_TEXT)
    env = Env(tmp_path, server)
    server.route("/api/query", Reply(body=xxe(secret)))
    failed = env.once()
    assert failed.returncode == 1
    assert "XML with a DOCTYPE/DTD is refused" in failed.stderr
    assert SECRET_FILE_TEXT not in env.everything_said()
    assert SECRET_FILE_TEXT not in "".join(p.read_text() for p in (tmp_path / "digests").glob("*.json"))


def test_hf_invalid_json_and_error_object(tmp_path, server):
    env = Env(tmp_path, server)
    server.route("/api/daily_papers", Reply(body=b'[{"paper": {"id": "2604.1", "title": "cut'))
    failed = env.once()
    assert failed.returncode == 1
    assert re.search(r"source hf failed: .*invalid JSON .*the response may be truncated or an error page", failed.stderr), failed.stderr
    assert_exactly_once(env.delivered_ids("2604.1"), ARXIV_IDS, "arxiv")  # isolation
    server.route("/api/daily_papers", Reply(body=b'{"error": "Invalid date"}'))
    failed = env.once()
    assert failed.returncode == 1 and "expected a JSON array of daily papers, got an error object: Invalid date" in failed.stderr
    assert "FAILING (2 in a row)" in env.status()
    env.healthy()
    assert env.once().returncode == 0
    ids = env.delivered_ids("2604.2")
    assert ids and len(ids) == len(set(ids))


def test_entries_without_dates_are_kept_and_without_ids_are_skipped(tmp_path, server):
    env = Env(tmp_path, server)
    undated = [dict(e, published=None) for e in ARXIV_ENTRIES[:3]]
    idless = [{"id": None, "title": "No id here 001", "published": stamp(NOW)}]
    server.route("/api/query", Reply(body=atom(idless + undated + ARXIV_ENTRIES[3:])))
    r = env.once()
    assert r.returncode == 0, r.stderr
    assert re.search(r"WARNING: .*skipped an entry that is not a paper: entry \(no id\) has no arXiv id", r.stderr)
    assert_exactly_once(env.delivered_ids("2604.1"), ARXIV_IDS, "arxiv")  # the undated ones too
    assert "No id here" not in json.dumps(env.delivered())

    server.route("/api/query", Reply(body=atom(idless * 3, total=3)))  # no entry is a paper: the feed is wrong
    r = env.once()
    assert r.returncode == 1
    assert re.search(r"source arxiv failed: .*has no arXiv id or no title \(and every other entry too\)", r.stderr), r.stderr
    assert_exactly_once(env.delivered_ids("2604.1"), ARXIV_IDS, "arxiv")  # nothing twice


def test_credentials_in_a_source_url_never_show(tmp_path, server):
    env = Env(tmp_path, server)
    cfg = (tmp_path / "config.toml").read_text().replace(f'url = "{server.base}/api/query"',
                                                         f'url = "http://reader:S3CRET-src-pw@127.0.0.1:{server.httpd.server_address[1]}/api/query"')
    (tmp_path / "config.toml").write_text(cfg)
    server.route("/api/query", Reply(status=500, body=b"S3CRET-src-pw echoed back"))
    failed = env.once()
    assert failed.returncode == 1 and "HTTP 500" in failed.stderr
    env.outputs.append(run_cli_text("--config", str(tmp_path / "config.toml"), "status", cwd=tmp_path, env=FAST))
    env.outputs.append(run_cli_text("--config", str(tmp_path / "config.toml"), "check", cwd=tmp_path, env=FAST))
    assert "S3CRET-src-pw" not in env.everything_said()
