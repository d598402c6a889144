"""Fourth round of attacks (TESTING.md, "Fourth round"), each against a real local part: the app
through ASGI, the real command line, the Zotero stand-in (tests/integration/test_secret_spellings.py)."""

from __future__ import annotations

import json
import warnings

from helpers import run_cli as run_watcher  # in process: the pages and the log are what is checked
from httpserver import Reply, server  # noqa: F401
from webkit import app_for, hostile_setup

from watcher.store import Store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


def test_a_message_number_past_sqlites_integers_is_a_404(tmp_path):
    config, db, _ = hostile_setup(tmp_path)
    issue = "/digests/daily/2025-04-12/archive"
    with TestClient(app_for(config, db), raise_server_exceptions=False) as web:
        assert web.get(issue).status_code == 200
        for number in ("2", str(2**63 - 1), str(2**63), str(2**63) + ".json", str(2**64), "9" * 5000):
            r = web.get(f"{issue}/{number}")
            assert r.status_code == 404, (number[:30], r.status_code, r.text[:300])
        # a body length past any integer SQLite or the guard compares: refused, not a 500
        r = web.post("/login", content=b"x", headers={"content-length": "9" * 5000})
        assert r.status_code == 413, r.text[:300]


def test_an_over_long_identifier_is_dropped_with_a_warning_not_kept_or_cut(server, tmp_path):  # noqa: F811
    """A listing's paper with a DOI of 100,008 characters, a URL of 3,010 and a PMID of 600 is
    stored by its title (every other field kept), and ``once`` says what it dropped; a paper
    with a real DOI next to it keeps its DOI as its identity."""
    listing = [{"title": "A paper of hostile identifiers", "abstract": "GRPO", "doi": "10.1234/" + "x" * 100_000,
                "url": "https://example.org/" + "a" * 2_990, "pmid": "1" * 600, "authors": ["Ann Author"],
                "published": "2025-01-02T00:00:00Z"},
               {"title": "A paper of a real DOI", "abstract": "GRPO", "doi": "https://doi.org/10.1038/S41586-024-07000-1",
                "published": "2025-01-02T00:00:00Z"}]
    server.route("/list.json", Reply(body=json.dumps(listing).encode(), headers={"Content-Type": "application/json"}))
    (tmp_path / "config.toml").write_text(f'[watcher]\ndatabase = "watcher.db"\n\n[source.ls]\ntype = "listing"\n'
                                          f'url = "{server.url("/list.json")}"\n')
    once = run_watcher("once", cwd=tmp_path)
    assert once.returncode == 0, once.stderr
    [line] = [l for l in once.stderr.decode().splitlines() if "dropped" in l]
    assert ("paper 'A paper of hostile identifiers': dropped its doi of 100,008 characters, its pmid of 600 "
            "characters, its url of 3,010 characters: an identifier is kept whole or not at all") in line, line
    with Store.open(tmp_path / "watcher.db") as store:
        keys = [r[0] for r in store.db.execute("SELECT key FROM papers ORDER BY key")]
    assert len(keys) == 2 and keys[0] == "doi:10.1038/s41586-024-07000-1" and keys[1].startswith("title:"), keys
    stored = (tmp_path / "watcher.db").read_bytes()
    assert b"x" * 500 not in stored and b"a" * 2_000 not in stored and b"1" * 500 not in stored


def test_the_published_site_names_no_folder_of_the_machine(server, tmp_path):  # noqa: F811
    listing = [{"title": "A paper about GRPO", "abstract": "GRPO", "arxiv_id": "2501.00001",
                "published": "2025-01-02T00:00:00Z"}]
    server.route("/list.json", Reply(body=json.dumps(listing).encode(), headers={"Content-Type": "application/json"}))
    (tmp_path / "config.toml").write_text(f'[watcher]\ndatabase = "watcher.db"\n\n[source.ls]\ntype = "listing"\n'
                                          f'url = "{server.url("/list.json")}"\n')
    assert run_watcher("once", cwd=tmp_path).returncode == 0
    site = run_watcher("site", str(tmp_path / "site"), cwd=tmp_path)
    assert site.returncode == 0, site.stderr
    status = (tmp_path / "site" / "status.html").read_text()
    assert "<code>watcher.db</code>" in status and "<code>config.toml</code>" in status and "database watcher.db" in status
    for folder in {str(tmp_path), str(tmp_path.resolve())}:
        for page in (tmp_path / "site").rglob("*"):
            if page.is_file():
                assert folder.encode() not in page.read_bytes(), page


def test_a_request_body_never_finished_is_one_log_line_not_a_traceback(tmp_path, capfd):
    import io
    import socket
    import threading
    import time
    from dataclasses import replace

    from watcher.config import load_config
    from watcher.util.logs import configure
    from watcher.web.serve import Plan, bind, server as web_server

    (tmp_path / "config.toml").write_text('[watcher]\ndatabase = "w.db"\n')
    Store.open(tmp_path / "w.db").close()
    config = load_config(tmp_path / "config.toml")
    log = io.StringIO()
    configure("info", daemon=True, stream=log, config=config)
    web = replace(config.web, host="127.0.0.1", port=0)
    sock = bind(web)
    srv = web_server(config, Plan(web, tmp_path / "w.db", "a-long-enough-password", None), sock, read_timeout=0.5)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(400):
        if srv.started:
            break
        time.sleep(0.05)
    slow = []
    try:
        for _ in range(3):  # a login form whose body stops after 10 of its 100 bytes
            c = socket.create_connection(("127.0.0.1", sock.getsockname()[1]))
            c.sendall(b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n"
                      b"Content-Type: application/x-www-form-urlencoded\r\n\r\npassword=x")
            c.settimeout(30)
            slow.append(c)
        for c in slow:
            while c.recv(65536):  # closed by the server after its read timeout
                pass
        time.sleep(0.3)
    finally:
        for c in slow:
            c.close()
        srv.should_exit = True
        thread.join(10)
        sock.close()
        configure("warning")
    lines = log.getvalue().splitlines()
    assert [l.split("INFO: ", 1)[1] for l in lines] == \
        ["web: POST /login: the client went away before sending its whole request"] * 3, lines
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err + log.getvalue() and "ClientDisconnect" not in out + err, err
