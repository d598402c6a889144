"""`watcher fetch --since`: a future date is refused; a source that cannot backfill says so."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from conftest import MINIMAL_CONFIG
from helpers import run_cli
from helpers import data
from httpserver import Reply, server  # noqa: F401


def sources_config(write_config, server, *names: str):
    tables = {
        "oai": f'[source.oai]\ntype = "arxiv-oai"\nurl = "{server.url("/oai")}"\n',
        "rss": f'[source.rss]\ntype = "arxiv-rss"\ncategories = ["cs.LG"]\nurl = "{server.url("/rss")}"\n',
        "lab": f'[source.lab]\ntype = "listing"\nurl = "{server.url("/lab.txt")}"\n',
    }
    server.route("/oai", Reply(body=data("oai_ListRecords_arxiv-physics-hep-th.xml")))
    server.route("/rss", Reply(status=404))
    server.route("/lab.txt", Reply(status=404))
    return write_config("".join(tables[n] + "\n" for n in names) + MINIMAL_CONFIG)


@pytest.mark.parametrize("days", [2, 4000])
def test_a_future_since_is_refused_in_one_line(write_config, tmp_path, server, days):
    cfg = sources_config(write_config, server, "oai")
    today = datetime.now(timezone.utc).date()
    future = today + timedelta(days=days)
    r = run_cli("--config", str(cfg), "fetch", "--since", future.isoformat(), cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode() == f"watcher: --since {future} is in the future (today is {today} in UTC)\n"
    assert r.stdout == b""
    assert server.requests == [] and sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_today_is_not_the_future(write_config, tmp_path, server):
    cfg = sources_config(write_config, server, "oai")
    r = run_cli("--config", str(cfg), "fetch", "--since", (datetime.now(timezone.utc).date() - timedelta(days=1)).isoformat(),
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_a_named_source_that_cannot_backfill_is_refused(write_config, tmp_path, server):
    cfg = sources_config(write_config, server, "oai", "rss")
    r = run_cli("--config", str(cfg), "fetch", "--source", "rss", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr == (b"watcher: --since: source rss (arxiv-rss) cannot backfill: the feed holds only the "
                        b"latest announcement; fetch it without --since\n")
    assert server.requests == []


def test_since_over_all_sources_skips_those_that_cannot_backfill_and_says_so(write_config, tmp_path, server):
    cfg = sources_config(write_config, server, "rss", "oai", "lab")
    r = run_cli("--config", str(cfg), "fetch", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[:2] == ["rss: skipped (arxiv-rss cannot backfill: the feed holds only the latest announcement)",
                         "lab: skipped (listing cannot backfill: a listing is read whole, as it is)"]
    assert len(lines) == 3 and lines[2].startswith("oai: ") and " new, " in lines[2]
    assert [r.path for r in server.requests] == ["/oai"]
    assert server.requests[0].query["from"] == "2025-04-01"


def test_since_with_no_source_able_to_backfill_is_refused(write_config, tmp_path, server):
    cfg = sources_config(write_config, server, "rss")
    r = run_cli("--config", str(cfg), "fetch", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "--since: no source can backfill (source rss (arxiv-rss) cannot backfill" in err
    assert server.requests == []


def test_digest_since_is_refused_in_the_future_as_fetch_since_is(tmp_path):
    """One rule for both: `digest --since` past today (the sample's day with --sample) is the
    same one-line refusal, exit 2, before anything is read or written."""
    import shutil

    from conftest import REPO

    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    today = datetime.now(timezone.utc).date()
    future = today + timedelta(days=4000)
    r = run_cli("digest", "daily", "--dry-run", "--since", future.isoformat(), cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().startswith(f"watcher: --since {future} is in the future (today is ")
    r = run_cli("digest", "daily", "--sample", "--dry-run", "--since", "2025-04-13", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode() == ("watcher: --since 2025-04-13 is in the future (today is 2025-04-12 in "
                                 "Europe/Berlin)\n")
    r = run_cli("digest", "daily", "--sample", "--dry-run", "--since", "2025-04-12", cwd=tmp_path)
    assert "in the future" not in r.stderr.decode()  # the sample's today is not the future
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]
