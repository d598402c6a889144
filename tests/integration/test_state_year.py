"""The no-server state over many scheduled runs (docs/github-actions.md): each run restores the
state from a real local bare git remote, fetches, delivers, and saves it back; papers arrive,
are delivered, revised and listed again after their rows were left out of the state or pruned.
Also: what the default state never holds, git arguments that are never options, and the
retention's pruning (docs/configuration.md ``keep``)."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import sqlite3
import subprocess
import sys
from datetime import date, datetime, time, timedelta, timezone
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import run_cli
from watcher.cli import statebranch, statefile
from watcher.config import load_config
from watcher.errors import InputError
from watcher.models import Paper, now_utc
from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once
from watcher.cycle.retention import prune_cutoff, upkeep_due, vacuum_worth
from watcher.store import Store
from watcher.cycle.upkeep import upkeep

CONFIG = """[watcher]
database = "watcher.db"
keep = "6d"

[source.day]
type = "listing"
path = "listing.json"

[profile.tf]
query = "transformer"

[digest.daily]
profiles = ["tf"]
channels = ["archive"]
every = "1d"
formats = ["text"]

[channel.archive]
type = "file"
path = "digests/{digest}-{date}.{ext}"
"""


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def words(i: int) -> str:
    h = hashlib.sha256(str(i).encode()).hexdigest()
    return " ".join(h[k:k + 6] for k in range(0, 24, 6))


def record(i: int, day: date, version: int = 1, kind: str = "new") -> dict:
    """Paper ``i`` as a listing of ``day`` names it: even ones match the profile."""
    topic = "Transformer" if i % 2 == 0 else "Gardening"
    return {"arxiv_id": f"2601.{i:05d}v{version}", "title": f"{topic} study {words(i)}",
            "authors": [f"Ann Author{i}"], "abstract": f"{topic} {words(i + 7)} {words(i + 9)}",
            "announced": day.isoformat(), "announce_type": kind, "categories": ["cs.LG"]}


def bare_remote(tmp_path: Path) -> tuple[Path, Path]:
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    git("remote", "add", "origin", str(remote), cwd=work)
    (work / "config.toml").write_text(CONFIG)
    return remote, work


def remote_bytes(remote: Path) -> int:
    git("gc", "-q", "--prune=now", cwd=remote)
    counts = dict(line.split(": ") for line in git("count-objects", "-v", cwd=remote).splitlines())
    return (int(counts["size"]) + int(counts["size-pack"])) * 1024


@pytest.mark.slow
def test_thirty_scheduled_runs_through_a_git_branch_deliver_each_paper_once(tmp_path):
    remote, work = bare_remote(tmp_path)
    config = load_config(work / "config.toml")
    db, packed = config.settings.database, work / "state" / "watcher.db.gz"
    first_day = now_utc().date() - timedelta(days=30)
    delivered: list[str] = []  # every new paper of every digest, in order
    updated: list[str] = []
    listed_new: dict[str, date] = {}
    revised_delivered, relisted = set(), set()
    sizes = []
    for k in range(30):
        day = first_day + timedelta(days=k)
        # a fresh runner: no database, the state fetched from the branch
        db.unlink(missing_ok=True)
        packed.unlink(missing_ok=True)
        if statebranch.fetch("origin", "watcher-state", packed, work):
            assert statefile.restore(packed, db)
        new = [record(k * 6 + j, day) for j in range(6)]
        listing = list(new)
        listed_new.update({f"2601.{k * 6 + j:05d}": day for j in range(6)})
        if k >= 8:  # papers of 8 days ago again: a matched (delivered) one and an unmatched one revised,
            old = (k - 8) * 6  # two unmatched ones listed as they were (left out of the state since)
            listing += [record(old, day, 2, "replace"), record(old + 1, day, 2, "replace"),
                        record(old + 3, day, 1, "replace"), record(old + 5, day, 1, "new")]
            revised_delivered.add(f"2601.{old:05d}")
            relisted |= {f"2601.{old + n:05d}" for n in (1, 3, 5)}
        (work / "listing.json").write_text(json.dumps(listing))
        now = datetime.combine(day, time(21, 30), timezone.utc)
        report = run_once(config, Cycle(now=now), Fetch(), Deliver())
        assert report.ok, report
        for c in report.channels:
            if c.sent and c.issue is not None:
                delivered += [p.key for p in c.issue.papers]
                updated += [m.paper.key for m in c.issue.updated]
        statefile.save(db, packed, lookback=config.digests["daily"].lookback)
        sizes.append(packed.stat().st_size)
        statebranch.push("origin", "watcher-state", packed, f"state {day}", work)

    matched = {key for key in listed_new if int(key.split(".")[1]) % 2 == 0}
    assert len(delivered) == len(set(delivered))  # nothing delivered twice
    assert set(delivered) == matched  # nothing missed, nothing unmatched
    assert not relisted & set(delivered)  # listed again after leaving the state: not new
    assert sorted(updated) == sorted(revised_delivered)  # a revision of a delivered paper: an update, once
    # one commit, no history: the remote holds about one state
    assert git("rev-list", "--count", "watcher-state", cwd=remote).strip() == "1"
    assert remote_bytes(remote) <= 3 * max(sizes)
    assert max(sizes) < 4 * min(s for s in sizes[5:])  # the state does not grow with the days

    # the last state restored: every message of every issue as it was sent
    def as_sent(path):
        with sqlite3.connect(path) as conn:
            return conn.execute("SELECT message, position, paper, paper_sent, tldr FROM message_papers "
                                "ORDER BY message, position").fetchall()

    sent = as_sent(db)
    assert sent and all(row[3] for row in sent)
    db.unlink()
    assert statebranch.fetch("origin", "watcher-state", packed, work) and statefile.restore(packed, db)
    assert as_sent(db) == sent  # each paper as its message sent it, byte for byte
    with Store.open(db) as store:
        found = store.db.execute("SELECT count(*) FROM papers_fts WHERE papers_fts MATCH 'transformer'").fetchone()[0]
        assert found == store.db.execute("SELECT count(*) FROM papers WHERE title LIKE 'Transformer%'").fetchone()[0]
        assert found >= len(delivered)  # the full-text index, made again on restore
        shown = []
        for issue in store.issues("daily"):
            full = store.issue("daily", issue.day)
            for message in full.messages:
                assert all(m.as_sent and m.since is None or m.since for m in message.matches)
                assert all(m.as_sent for m in message.matches)
                shown += [m.paper.key for m in message.matches]
        assert sorted(shown) == sorted(delivered)
        assert store.upkeep_state().last_run.date().isoformat() == (first_day + timedelta(days=29)).isoformat()  # once ran it
        assert store.count_papers() <= len(delivered) + 12  # what a later run needs, not every paper seen
        assert all(store.is_seen(key) for key in set(listed_new) - matched - {
            r[0] for r in store.db.execute("SELECT key FROM papers")})


def test_a_pruned_paper_listed_again_is_not_new_and_its_revision_is_an_update(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    config = load_config(tmp_path / "config.toml")
    day = date(2026, 1, 5)
    listing = [Paper.from_json({k: v for k, v in record(i, day).items() if k != "announce_type"}
                               | {"arxiv_id": f"2601.{i:05d}", "version": 1, "announced": day.isoformat()})
               for i in range(6)]
    stored = datetime.combine(day, time(8), timezone.utc)
    with Store.open(config.settings.database) as store:
        store.upsert(listing, stored)
        store.record_delivery("daily", "archive", [listing[0]], stored + timedelta(hours=1))  # the ledger names it
        assert store.record_rating("up", "tf", listing[2].key, stored.isoformat(), "web")
        assert store.record_rating("save", None, listing[4].key, stored.isoformat(), "web")
        assert upkeep(config, store, stored + timedelta(days=1)) == {"pruned": 0, "vacuumed": False}
        assert upkeep(config, store, stored + timedelta(days=1, hours=2)) is None  # not due again
        later = stored + timedelta(days=8)
        done = upkeep(config, store, later)
        kept = {r[0] for r in store.db.execute("SELECT key FROM papers")}
        assert kept >= {listing[0].key, listing[4].key} and listing[1].key not in kept
        assert done["pruned"] == 6 - len(kept)
        assert store.upkeep_state().total_pruned == done["pruned"]
        assert not store.db.execute("SELECT count(*) FROM paper_ids WHERE paper NOT IN (SELECT key FROM papers)"
                                    ).fetchone()[0]
        fts = store.db.execute("SELECT count(*) FROM papers_fts").fetchone()[0]
        assert fts == len(kept)
        again = store.upsert([listing[1], listing[3]], later)
        assert again.new == [] and again.unchanged == 2
        revised = store.upsert([replace(listing[1], version=2)], later)
        assert revised.new == [] and revised.updated == [listing[1].key]
        assert store.upsert([replace(listing[1], version=2)], later).unchanged == 1


def test_the_upkeep_waits_for_another_process_that_holds_the_write_lock(tmp_path):
    """``PRAGMA optimize`` outside a transaction may ``ANALYZE`` without waiting for another
    writer's lock ("database is locked" at once): the upkeep after a cycle failed that cycle
    whenever the web or ``watcher rate`` was writing at that moment."""
    (tmp_path / "config.toml").write_text(CONFIG)
    config = load_config(tmp_path / "config.toml")
    stored = datetime(2026, 1, 5, 8, tzinfo=timezone.utc)
    with Store.open(config.settings.database) as store:
        store.upsert([Paper.from_json(record(i, stored.date()) | {"arxiv_id": f"2601.{i:05d}"})
                      for i in range(4)], stored)
        list(store.db.query("SELECT key FROM papers WHERE source = 'arxiv' AND key > '2601'"))  # a hint to analyze
        holder = subprocess.Popen(
            [sys.executable, "-c", "import sqlite3, sys, time\n"
             "d = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
             "d.execute('BEGIN IMMEDIATE'); d.execute('DELETE FROM waits'); print('held', flush=True)\n"
             "time.sleep(1.5); d.execute('COMMIT')", str(config.settings.database)],
            stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline() == "held\n"
            assert upkeep(config, store, stored + timedelta(days=1)) == {"pruned": 0, "vacuumed": False}
        finally:
            holder.wait(30)
        assert holder.returncode == 0
        assert store.upkeep_state().last_run.date().isoformat() == "2026-01-06"


def test_the_upkeep_decisions():
    now = datetime(2026, 5, 1, tzinfo=timezone.utc)
    assert upkeep_due(None, now) and upkeep_due(now - timedelta(days=1), now)
    assert not upkeep_due(now - timedelta(hours=3), now)
    assert upkeep_due(now + timedelta(hours=3), now)  # a clock set back
    ago = now - timedelta(days=400)
    assert prune_cutoff(now, timedelta(days=400), None) == (ago, ago.date())
    old = now - timedelta(days=500)
    assert prune_cutoff(now, timedelta(days=400), old) == (old, ago.date())  # a channel that failed for longer
    assert not vacuum_worth(10_000, 100) and vacuum_worth(10_000, 3_000) and not vacuum_worth(100_000, 3_000)


PRIVATE = {
    "liked": "like 2601.00002 (you liked)",
    "zotero_title": "Zotero Private Library Title Qwxz",
    "zotero_abstract": "private-abstract-marker-zq",
    "zotero_error": "zotero-error-marker: key=zk-123",
    "save_error": "zotero-save-error-marker",
    "source_error": "source-error-marker ?apikey=sk-1",
    "salt": b"salt-marker-bytes",
    "fingerprint": b"fingerprint-marker-bytes",
    "run_detail": "run-detail-marker",
}


def test_the_default_state_holds_nothing_private(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG)
    config = load_config(tmp_path / "config.toml")
    now = now_utc()
    papers = [Paper.from_json({k: v for k, v in record(i, now.date()).items() if k != "announce_type"}
                              | {"arxiv_id": f"2601.{i:05d}", "version": 1}) for i in range(4)]
    with Store.open(config.settings.database) as store:
        store.upsert(papers, now)
        from watcher.models import Digest, Match

        issue = Digest("daily", "T", now.date(), matches=[
            Match(papers[0], 3.0, ["matches transformer", PRIVATE["liked"]], "tf", None)])
        store.record_delivery("daily", "archive", [papers[0]], now, issue=issue)
        with store.writing():
            db = store.db
            db.execute("INSERT INTO ratings (profile, paper, value, rated_at, source) VALUES ('tf', ?, 'up', ?, 'web')",
                       [papers[2].key, now.isoformat()])
            db.execute("INSERT INTO saved (paper, saved_at, source) VALUES (?, ?, 'web')", [papers[3].key, now.isoformat()])
            db.execute("INSERT INTO zotero_places (place, version, items, last_error) VALUES ('lib', 5, 1, ?)",
                       [PRIVATE["zotero_error"]])
            db.execute("INSERT INTO zotero_items (place, item, version, paper) VALUES ('lib', 'I1', 5, ?)",
                       [json.dumps({"title": PRIVATE["zotero_title"], "abstract": PRIVATE["zotero_abstract"]})])
            db.execute("INSERT INTO zotero_saves (target, paper, token, state, last_error) VALUES ('lib', ?, 'tok', "
                       "'failed', ?)", [papers[3].key, PRIVATE["save_error"]])
            db.execute("UPDATE web_sessions SET salt = ?, fingerprint = ?", [PRIVATE["salt"], PRIVATE["fingerprint"]])
            db.execute("INSERT INTO sources (name, last_error) VALUES ('day', ?)", [PRIVATE["source_error"]])
            db.execute("INSERT INTO runs (kind, started, detail) VALUES ('once', ?, ?)", [now.isoformat(),
                                                                                          PRIVATE["run_detail"]])
    remote, work = bare_remote(tmp_path)
    packed = work / "s.gz"
    r = run_cli("--config", str(tmp_path / "config.toml"), "state", "save", str(packed),
                "--git-branch", "watcher-state", cwd=work)
    assert r.returncode == 0, r.stderr
    assert b"left out of it: 1 rating and 1 saved paper" in r.stdout
    blob = subprocess.run(["git", "show", f"watcher-state:{statebranch.FILE}"], cwd=remote, check=True,
                          capture_output=True).stdout
    raw = bz2.decompress(blob)
    for name, marker in PRIVATE.items():
        needle = marker if isinstance(marker, bytes) else marker.encode()
        assert needle not in raw, name
    copy = tmp_path / "branch.db"
    copy.write_bytes(raw)
    with sqlite3.connect(copy) as conn:
        for table in ("ratings", "saved", "zotero_items", "zotero_saves", "zotero_places"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
        assert conn.execute("SELECT salt, fingerprint FROM web_sessions").fetchone() == (None, None)
        reasons = conn.execute("SELECT reasons FROM message_papers").fetchone()[0]
        assert json.loads(reasons) == ["matches transformer"]  # what the profile matched stays
        assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 1
    # asked for: the ratings, saved list and Zotero library are kept, their errors still not
    r = run_cli("--config", str(tmp_path / "config.toml"), "state", "save", str(packed), "--with-ratings", cwd=work)
    assert r.returncode == 0, r.stderr
    raw = bz2.decompress(packed.read_bytes())
    assert PRIVATE["zotero_title"].encode() in raw and PRIVATE["liked"].encode() in raw
    for name in ("zotero_error", "save_error", "source_error", "salt", "fingerprint", "run_detail"):
        marker = PRIVATE[name]
        assert (marker if isinstance(marker, bytes) else marker.encode()) not in raw, name


@pytest.mark.parametrize("args", [
    ("--git-branch", ".", "--git-remote", "--upload-pack=touch {marker};"),
    ("--git-branch", "main", "--git-remote", "--receive-pack=touch {marker};"),
    ("--git-branch", "--upload-pack=touch {marker};"),
    ("--git-branch", "a..b"),
])
def test_git_arguments_are_never_options(tmp_path, args):
    _, work = bare_remote(tmp_path)
    marker = tmp_path / "pwned"
    args = tuple(a.format(marker=marker) for a in args)
    (work / "watcher.db").write_bytes(b"")
    for command in ("save", "restore"):
        r = run_cli("--config", str(work / "config.toml"), "state", command, str(work / "x.gz"), *args, cwd=work)
        assert r.returncode == 2, r.stderr
        assert len(r.stderr.decode().strip().splitlines()) == 1 and b"Traceback" not in r.stderr
        assert not marker.exists()


def test_a_branch_another_run_moved_is_never_overwritten(tmp_path):
    remote, work = bare_remote(tmp_path)
    (work / "a.gz").write_bytes(gzip.compress(b"first"))
    assert statebranch.push("origin", "watcher-state", work / "a.gz", "one", work)
    other = tmp_path / "other"
    git("clone", "-q", str(remote), str(other), cwd=tmp_path)
    assert statebranch.fetch("origin", "watcher-state", other / "got.gz", other)
    (other / "b.gz").write_bytes(gzip.compress(b"second"))
    theirs = statebranch.push("origin", "watcher-state", other / "b.gz", "two", other)
    (work / "c.gz").write_bytes(gzip.compress(b"third"))
    with pytest.raises(statebranch.StateError, match="is not the state this clone fetched"):
        statebranch.push("origin", "watcher-state", work / "c.gz", "three", work)
    assert git("rev-parse", "watcher-state", cwd=remote).strip() == theirs
    # a clone that never fetched the branch does not replace it either
    fresh = tmp_path / "fresh"
    git("init", "-q", str(fresh), cwd=tmp_path)
    with pytest.raises(statebranch.StateError):
        statebranch.push(str(remote), "watcher-state", work / "c.gz", "four", fresh)
    assert git("rev-parse", "watcher-state", cwd=remote).strip() == theirs


def test_a_push_not_recorded_here_loses_nothing(tmp_path):
    """The push went through, then the run died before it recorded the new commit: the next
    save here is refused (never a state older than the remote's over it), and after a restore
    it goes through; the remote kept the newer state all along."""
    remote, work = bare_remote(tmp_path)
    (work / "a.gz").write_bytes(gzip.compress(b"first"))
    first = statebranch.push("origin", "watcher-state", work / "a.gz", "one", work)
    (work / "b.gz").write_bytes(gzip.compress(b"second"))
    second = statebranch.push("origin", "watcher-state", work / "b.gz", "two", work)
    for ref in (statebranch.LOCAL_REF, statebranch._lease_ref("watcher-state")):  # as if update-ref failed
        git("update-ref", ref, first, cwd=work)
    (work / "c.gz").write_bytes(gzip.compress(b"third"))
    with pytest.raises(statebranch.StateError, match="is not the state this clone fetched"):
        statebranch.push("origin", "watcher-state", work / "c.gz", "three", work)
    assert git("rev-parse", "watcher-state", cwd=remote).strip() == second
    assert statebranch.fetch("origin", "watcher-state", work / "got.gz", work)
    assert gzip.decompress((work / "got.gz").read_bytes()) == b"second"
    third = statebranch.push("origin", "watcher-state", work / "c.gz", "three", work)
    assert git("rev-parse", "watcher-state", cwd=remote).strip() == third
    assert git("rev-list", "--count", "watcher-state", cwd=remote).strip() == "1"


def test_a_state_file_is_bzip2_and_an_older_gzip_one_restores_the_same(tmp_path):
    """``save`` writes bzip2 (docs/performance.md: the papers' text is most of the file);
    a file saved before, gzip, restores to the same database; a file of neither is one line."""
    (tmp_path / "config.toml").write_text(CONFIG)
    config = load_config(tmp_path / "config.toml")
    day = date(2026, 1, 5)
    listing = [Paper.from_json(record(i, day) | {"arxiv_id": f"2601.{i:05d}"}) for i in range(4)]
    stored = datetime.combine(day, time(8), timezone.utc)
    with Store.open(config.settings.database) as store:
        store.upsert(listing, stored)
        store.record_delivery("daily", "archive", listing[:2], stored + timedelta(hours=1))
    packed = tmp_path / "s.gz"
    statefile.save(config.settings.database, packed)
    assert packed.read_bytes()[:3] == b"BZh"
    raw = bz2.decompress(packed.read_bytes())
    old = tmp_path / "old.gz"
    old.write_bytes(gzip.compress(raw))
    for name, source in (("new.db", packed), ("old.db", old)):
        assert statefile.restore(source, tmp_path / name)
        with Store.open(tmp_path / name, readonly=True) as store:
            assert store.count_papers() == 2
            assert {r[0] for r in store.db.execute("SELECT paper FROM deliveries")} == {p.key for p in listing[:2]}
            assert all(store.is_seen(p.key) for p in listing[2:])
    (tmp_path / "neither.gz").write_bytes(b"PK\x03\x04" + b"\0" * 100)
    with pytest.raises(InputError, match="not a saved watcher database"):
        statefile.restore(tmp_path / "neither.gz", tmp_path / "neither.db")


def test_the_seen_set_is_packed_in_a_state_file_and_whole_again_on_restore(tmp_path):
    """A month of arXiv ids (some revised, a DOI and a title key among them) takes a few bytes
    an id in the saved file's seen-set, and restore gives back every ident and version."""
    from watcher.store.files import build_state, complete_state

    (tmp_path / "config.toml").write_text(CONFIG)
    config = load_config(tmp_path / "config.toml")
    idents = [(f"2501.{n:05d}", 3 if n % 97 == 0 else 1) for n in range(1, 20001)]
    idents += [("doi:10.1101/2025.01.05.631234", None), ("title:a paper without any id", None),
               ("doi:10.1000/a\\tb\\\\", None), ("doi:10.1000/a\tb\nc", None)]  # escapes and what they spell
    with Store.open(config.settings.database) as store, store.writing():
        store.db.conn.executemany("INSERT INTO seen (ident, version) VALUES (?, ?)", idents)
    built = tmp_path / "built.db"
    build_state(config.settings.database, built)
    with sqlite3.connect(built) as conn:
        assert conn.execute("SELECT count(*) FROM seen").fetchone()[0] == 0
        (text,) = conn.execute("SELECT idents FROM seen_packed").fetchone()
    assert len(text.encode()) < 8 * len(idents)  # as rows: about 30 bytes an ident before compression
    assert len(bz2.compress(text.encode())) < len(idents)  # under a byte an ident in the file
    complete_state(built)
    with sqlite3.connect(built) as conn:
        assert sorted(conn.execute("SELECT ident, version FROM seen")) == sorted(idents)
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'seen_packed'").fetchone()
