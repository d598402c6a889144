"""Fourth round of attacks (TESTING.md, "Fourth round"), each against a real local part: the app
through ASGI, the real command line, the Zotero stand-in (tests/test_secret_spellings.py)."""

from __future__ import annotations

import warnings

from webkit import app_for, hostile_setup

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
