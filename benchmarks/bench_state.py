"""The no-server state at a year's size: how big ``watcher state save`` makes the file, how long
saving and restoring take, and how big the state branch's remote grows over many saves.

    PYTHONPATH=. python benchmarks/bench_state.py [--papers 300000] [--digests 365]
        [--keep /work/bench-data/state-300k] [--saves 30] [--branch-papers 20000]

1. Builds (or reuses, with ``--keep``) a database the way :mod:`bench_web` does: the real corpus
   of ``benchmarks/data/`` repeated with distinct synthetic ids up to ``--papers`` papers over
   365 announcement days, stored with ``Store.upsert``, and ``--digests`` daily digests of the
   shipped config's profile delivered on the last days (``record_delivery`` with the issue, so
   every message keeps its papers as sent).
2. Runs ``watcher state save`` and ``watcher state restore`` on it as a user would (a real
   process each) and times them.
3. Through a real local bare git remote, runs ``--saves`` scheduled save/restore rounds of a
   smaller store (``--branch-papers`` papers, a day's papers and a digest added each round),
   then ``git gc --prune=now`` on the remote and reads ``git count-objects -v``.

4. The saved state with its papers' text all distinct (:func:`distinct_text`): its bytes a
   paper under gzip, bzip2 and xz.

Prints ``name value unit`` lines with the targets: ``state_file_mb <= 5``, ``state_save_s <= 10``,
``state_remote_ratio <= 3`` (the remote's size over one state file's).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import date, datetime, time as dtime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import read_corpus  # noqa: E402
from watcher.config import load_config  # noqa: E402
from watcher.matching.assemble import assemble  # noqa: E402
from watcher.matching.compile import compile_profiles  # noqa: E402
from watcher.store import Store  # noqa: E402

LAST_DAY = date(2026, 9, 30)
DAYS = 365


def synthetic(n: int, days: int = DAYS, last_day: date = LAST_DAY, offset: int = 0) -> list:
    """``n`` papers of the real corpus with distinct ids, spread over ``days`` days up to
    ``last_day``, oldest first (as bench_web builds them)."""
    base = read_corpus()
    papers = []
    for j in range(n):
        i = j + offset
        p = base[i % len(base)]
        day = last_day - timedelta(days=(j * days) // n)
        papers.append(replace(p, arxiv_id=f"{p.arxiv_id}.{i // len(base)}" if i >= len(base) else p.arxiv_id,
                              announced=day))
    papers.reverse()
    return papers


def write_config(folder: Path) -> Path:
    config_path = folder / "config.toml"
    config_path.write_text((ROOT / "config.toml").read_text().replace(
        'database = "watcher.db"', 'database = "state.db"'))
    return config_path


def build(folder: Path, n: int, digests: int) -> Path:
    """config.toml and a database of ``n`` papers with ``digests`` delivered daily digests."""
    config_path = write_config(folder)
    config = load_config(config_path)
    papers = synthetic(n)
    started = time.perf_counter()
    with Store.open(config.settings.database) as store:
        for start in range(0, n, 5000):
            chunk = papers[start:start + 5000]
            store.upsert(chunk, datetime.combine(chunk[-1].announced, dtime(6), timezone.utc))
        deliver_days(config, store, papers, digests)
        stored = store.count_papers()
    size = Path(config.settings.database).stat().st_size / 1e6
    print(f"# built {stored} papers, {digests} digests in {time.perf_counter() - started:.1f} s ({size:.0f} MB)",
          flush=True)
    return config_path


def deliver_days(config, store: Store, papers: list, digests: int) -> None:
    dcfg = config.digests["daily"]
    matchers = compile_profiles(config, dcfg.profiles, lookup=store.get)
    by_day: dict[date, list] = {}
    for p in papers:
        by_day.setdefault(p.announced, []).append(p)
    last = max(by_day)
    for k in range(digests, 0, -1):
        day = last - timedelta(days=k - 1)
        now = datetime.combine(day, dtime(21, 30), timezone.utc)
        digest = assemble("daily", "LLM-RL", day, by_day.get(day, []), matchers, now)
        store.record_delivery("daily", "archive", digest.papers, now, issue=digest)


def kept_or_built(tmp: str, keep: str | None, papers: int, digests: int) -> Path:
    """The config of the database: ``keep``'s when it holds one, else built there (or in ``tmp``)."""
    if keep and (Path(keep) / "state.db").exists():
        print(f"# reusing {keep}", flush=True)
        return Path(keep) / "config.toml"
    folder = Path(keep or tmp)
    folder.mkdir(parents=True, exist_ok=True)
    return build(folder, papers, digests)


def watcher(*args: str, cwd: Path) -> tuple[float, float]:
    """Run ``watcher ARGS`` as a user would (a new process); its wall time and CPU time (user
    and system: what an idle machine's wall time is near) in seconds."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "watcher", *args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    took = time.perf_counter() - started
    if r.returncode != 0:
        raise SystemExit(f"watcher {' '.join(args)} failed: {r.stderr.strip()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def remote_growth(folder: Path, papers: int, saves: int, per_day: int) -> tuple[int, int, int]:
    """``saves`` scheduled rounds on a store of ``papers`` papers, ``per_day`` new ones and a
    digest each round, each saved to a branch of a bare local remote: (remote bytes after
    ``git gc --prune=now``, the last state file's bytes, commits on the branch)."""
    from watcher.cli import statebranch, statefile

    remote, work = folder / "remote.git", folder / "work"
    git("init", "-q", "--bare", str(remote), cwd=folder)
    work.mkdir()
    git("init", "-q", cwd=work)
    git("remote", "add", "origin", str(remote), cwd=work)
    config = load_config(write_config(work))
    db, packed = config.settings.database, work / "state.gz"
    everything = synthetic(papers + saves * per_day, days=DAYS + saves, last_day=LAST_DAY + timedelta(days=saves))
    history, rounds = everything[:papers], everything[papers:]
    with Store.open(db) as store:
        for start in range(0, papers, 5000):
            chunk = history[start:start + 5000]
            store.upsert(chunk, datetime.combine(chunk[-1].announced, dtime(6), timezone.utc))
        deliver_days(config, store, history, 30)
    for k in range(saves):
        day = rounds[k * per_day:(k + 1) * per_day]
        with Store.open(db) as store:
            store.upsert(day, datetime.combine(day[-1].announced, dtime(6), timezone.utc))
            deliver_days(config, store, day, 1)
        statefile.save(db, packed)
        statebranch.push("origin", "watcher-state", packed, f"state {k}", work)
    git("gc", "-q", "--prune=now", cwd=remote)
    counts = dict(line.split(": ") for line in git("count-objects", "-v", cwd=remote).splitlines())
    commits = int(git("rev-list", "--count", "watcher-state", cwd=remote))
    return (int(counts["size"]) + int(counts["size-pack"])) * 1024, packed.stat().st_size, commits


def distinct_text(saved: Path, folder: Path) -> tuple[int, int, int, int]:
    """The saved state ``saved`` with its papers' text made distinct (the benchmark's store
    repeats 7,258 real papers, which flatters a compressor with a long window): its first
    7,258 papers get the corpus's texts, the others go. (papers, then its bytes under gzip -9,
    bzip2 -9 (what ``save`` writes) and xz -6.)"""
    import bz2
    import gzip
    import json
    import lzma
    import sqlite3

    from watcher.cli import statefile

    db = folder / "distinct.db"
    statefile.unpack(saved, db)
    base = read_corpus()
    conn = sqlite3.connect(db)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f'DROP TRIGGER "{name}"')  # the file's full-text index is empty: made on restore
    keys = [k for (k,) in conn.execute("SELECT key FROM papers ORDER BY rowid")]
    n = min(len(keys), len(base))
    conn.executemany("UPDATE papers SET title = ?, authors = ?, abstract = ? WHERE key = ?",
                     [(base[i].title, json.dumps(base[i].authors, ensure_ascii=False), base[i].abstract, keys[i])
                      for i in range(n)])
    conn.executemany("DELETE FROM papers WHERE key = ?", [(k,) for k in keys[n:]])
    conn.commit()
    conn.execute("VACUUM")
    conn.close()
    raw = db.read_bytes()
    return n, len(gzip.compress(raw, 9)), len(bz2.compress(raw, 9)), len(lzma.compress(raw))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--papers", type=int, default=300_000)
    ap.add_argument("--digests", type=int, default=365)
    ap.add_argument("--keep", help="build the database there once and reuse it (outside the repository)")
    ap.add_argument("--saves", type=int, default=30, help="scheduled saves of the remote-growth figure")
    ap.add_argument("--branch-papers", type=int, default=20_000, help="papers of the remote-growth store")
    ap.add_argument("--per-day", type=int, default=1_000, help="new papers per scheduled save")
    args = ap.parse_args(argv)
    failed = []
    with tempfile.TemporaryDirectory(prefix="bench-state-") as tmp:
        config = kept_or_built(tmp, args.keep, args.papers, args.digests)
        out = Path(tmp) / "watcher.db.gz"
        watcher("--config", str(config), "state", "save", str(out), cwd=Path(tmp))  # migrates once (m016)
        save_s, save_cpu = watcher("--config", str(config), "state", "save", str(out), cwd=Path(tmp))
        size_mb = out.stat().st_size / 1e6
        from watcher.cli import statefile

        started = time.perf_counter()  # the same save without the process's start (imports: ~1 s)
        statefile.save(load_config(config).settings.database, Path(tmp) / "again.gz")
        inprocess_s = time.perf_counter() - started
        restored = Path(tmp) / "restored"
        restored.mkdir()
        write_config(restored)
        restore_s, restore_cpu = watcher("--config", str(restored / "config.toml"), "state", "restore", str(out), cwd=restored)
        with Store.open(restored / "state.db", readonly=True) as store:
            kept, seen = store.count_papers(), store.seen_count()
        with Store.open(load_config(config).settings.database, readonly=True) as store:
            stored = store.count_papers()
        print(f"# {stored} papers stored; the state keeps {kept} of them and {seen} seen keys", flush=True)
        figures = [("state_file_mb", size_mb, "MB", "<= 5", size_mb <= 5),
                   ("state_save_s", save_s, "s", "<= 10", save_s <= 10),
                   ("state_save_cpu_s", save_cpu, "s", "", True),
                   ("state_save_in_process_s", inprocess_s, "s", "", True),
                   ("state_restore_s", restore_s, "s", "", True),
                   ("state_restore_cpu_s", restore_cpu, "s", "", True),
                   ("state_bytes_per_paper", out.stat().st_size / stored, "B", "", True)]
        for name, value, unit, target, _ in figures:
            print(f"{name} {value:.2f} {unit}" + (f"  (target {target})" if target else ""), flush=True)
        n, gz, bz, xz = distinct_text(out, Path(tmp))
        print(f"state_distinct_bytes_per_paper {bz / n:.0f} B  ({n} papers of distinct text: "
              f"{bz / 1e6:.2f} MB bzip2, gzip {gz / 1e6:.2f} MB, xz {xz / 1e6:.2f} MB; bzip2/gzip {bz / gz:.2f})",
              flush=True)
        growth = Path(tmp) / "growth"
        growth.mkdir()
        remote, one, commits = remote_growth(growth, args.branch_papers, args.saves, args.per_day)
        ratio = remote / one
        print(f"state_remote_mb_after_{args.saves}_saves {remote / 1e6:.2f} MB  (one state: {one / 1e6:.2f} MB, "
              f"{commits} commit{'s' * (commits != 1)}; store of {args.branch_papers} papers + {args.per_day}/save)")
        print(f"state_remote_ratio {ratio:.2f} x  (target <= 3)")
        figures.append(("state_remote_ratio", ratio, "x", "<= 3", ratio <= 3))
        failed = [name for name, _, _, _, ok in figures if not ok]
    if failed:
        print(f"# missed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__" and sys.argv[1:2] == ["--build-only"]:
    folder = Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    build(folder, int(sys.argv[3]), int(sys.argv[4]))
elif __name__ == "__main__":
    sys.exit(main())
