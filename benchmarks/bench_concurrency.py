"""Two writers, one database, and no page that stalls the server: the figures.

    PYTHONPATH=. python benchmarks/bench_concurrency.py [--papers 50000] [--profiles 300]
        [--load-seconds 10] [--stress-seconds 60] [--keep DIR]

1. Builds a large database as ``bench_web.py`` does (``--papers`` papers over a year, 30
   delivered digests) with ``--profiles`` generated profiles added to the shipped config
   (``profilegen.make_scale_profiles``: the corpus's own vocabulary), and starts
   ``python -m watcher serve`` on it as a real process.
2. The slowest pages alone: a search that scans (a checked query with a category nobody has),
   a search whose 25 results each get rating buttons for every profile they belong to (the
   first compiles every profile's matcher), a profile page with a query preview.
3. ``/healthz`` every 50 ms for ``--load-seconds`` while three clients request those slow
   pages back to back: its latencies (target: the slowest under 100 ms).
4. Another process takes the write lock, holds it 2 s and commits: a 👍 posted to the server
   meanwhile, and ``watcher rate`` run meanwhile, each succeed after waiting (the seconds
   waited are printed; both must be about 2).
5. ``stress.py`` for ``--stress-seconds``: the daemon's cycles, ``watcher rate`` processes and the
   web inbox on one database at once; every rating and paper recorded once.

Prints ``name value unit`` lines; the healthz bound and the outcomes are judged, the absolute
page times are not (they vary threefold between machines).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import httpx  # noqa: E402

from bench_web import build, served  # noqa: E402
from corpus import read_corpus  # noqa: E402
from profilegen import make_scale_profiles  # noqa: E402
from stress import run_stress  # noqa: E402

SLOW = {
    "search_scan": "/search?q=au%3ALevine&cat=q-bio.SC",
    "search_buttons": "/search?q=learning",
    "profile_preview": "/profiles/{profile}?preview=%22reinforcement+learning%22+OR+agent*",
}
HOLD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE sources SET last_attempt = last_attempt")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
print("committed", time.time(), flush=True)
"""


def pct(values: list[float], p: float) -> float:
    """The ``p``-th percentile of ``values`` (nearest rank)."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float("nan")


def add_profiles(config: Path, n: int) -> None:
    """Append ``n`` generated profiles (their queries) to ``config``."""
    tables = []
    for k, prof in enumerate(make_scale_profiles(read_corpus(), n)):
        if prof.query:
            tables.append(f"\n[profile.p{k}]\nquery = {json.dumps(prof.query)}\n")
    config.write_text(config.read_text() + "".join(tables))


def timed_get(client: httpx.Client, url: str) -> tuple[float, int]:
    started = time.perf_counter()
    r = client.get(url)
    return (time.perf_counter() - started) * 1000, r.status_code


def healthz_under_load(base: str, seconds: float) -> tuple[list[float], dict[str, list[float]], list[str]]:
    """/healthz latencies (ms) while three clients request the slow pages back to back."""
    stop = threading.Event()
    slow: dict[str, list[float]] = {name: [] for name in SLOW}
    errors: list[str] = []

    def hammer(offset: int) -> None:
        names = list(SLOW)
        with httpx.Client(base_url=base, timeout=60) as c:
            i = offset
            while not stop.is_set():
                name = names[i % len(names)]
                ms, status = timed_get(c, SLOW[name])
                slow[name].append(ms)
                if status != 200:
                    errors.append(f"{name}: {status}")
                i += 1

    clients = [threading.Thread(target=hammer, args=(k,)) for k in range(3)]
    for t in clients:
        t.start()
    health = []
    with httpx.Client(base_url=base, timeout=30) as c:
        time.sleep(0.5)  # the slow pages are running
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ms, status = timed_get(c, "/healthz")
            health.append(ms)
            if status != 200:
                errors.append(f"healthz: {status}")
            time.sleep(0.05)
    stop.set()
    for t in clients:
        t.join(120)
    return health, slow, errors


def hold_lock(db: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def committed(proc: subprocess.Popen) -> float:
    word, when = proc.stdout.readline().split()
    proc.wait(30)
    return float(when)


def rating_waits(base: str, config: Path, folder: Path, db: Path, profile: str) -> dict[str, float]:
    """A 👍 to the server and ``watcher rate``, each while another process holds the write
    lock for 2 s: (status or exit code, seconds it took, whether it finished after the commit)."""
    out = {}
    with httpx.Client(base_url=base, timeout=60, follow_redirects=False) as c:
        page = c.get("/search?q=learning")
        token = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        key = re.search(r'name="paper" value="([^"]+)"', page.text).group(1)
        holder = hold_lock(db, 2.0)
        started = time.perf_counter()
        r = c.post("/rate", data={"csrf": token, "action": "up", "profile": "llm-rl", "paper": key,
                                  "next": "/"})
        done = time.time()
        out["rate_web_status"] = float(r.status_code)
        out["rate_web_s"] = time.perf_counter() - started
        out["rate_web_after_commit"] = float(done >= committed(holder))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    holder = hold_lock(db, 2.0)
    started = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), "rate", "down", key,
                        "--profile", profile], env=env, cwd=folder, capture_output=True, text=True)
    done = time.time()
    out["rate_cli_exit"] = float(r.returncode)
    out["rate_cli_s"] = time.perf_counter() - started
    out["rate_cli_after_commit"] = float(done >= committed(holder))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=50_000)
    ap.add_argument("--profiles", type=int, default=300)
    ap.add_argument("--load-seconds", type=float, default=10.0)
    ap.add_argument("--stress-seconds", type=float, default=60.0)
    ap.add_argument("--keep", metavar="DIR", help="build in DIR and keep it; reuse it when there")
    args = ap.parse_args(argv)
    figures: list[tuple[str, float, str, str | None]] = []
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "config.toml"
        if not (folder / "web.db").exists():
            build(folder, args.papers)
            add_profiles(config, args.profiles)
        else:
            print(f"# reusing {folder}")
        names = re.findall(r"^\[profile\.([\w-]+)\]", config.read_text(), re.M)
        generated = next(n for n in names if re.fullmatch(r"p\d+", n))
        for name in SLOW:
            SLOW[name] = SLOW[name].format(profile=generated)
        print(f"# {len(names)} profiles")
        with served(config, folder) as (server, base):
            with httpx.Client(base_url=base, timeout=120) as c:
                for name, path in SLOW.items():
                    ms, status = timed_get(c, path)
                    figures.append((f"{name}_first_ms", ms, "ms", None))
                    ms, status = timed_get(c, path)
                    figures.append((f"{name}_ms", ms, "ms", None))
                    if status != 200:
                        print(f"# {name}: status {status}")
                figures.append(("healthz_idle_ms", min(timed_get(c, "/healthz")[0] for _ in range(20)), "ms", None))
            health, slow, errors = healthz_under_load(base, args.load_seconds)
            figures += [("healthz_under_load_p50_ms", pct(health, 50), "ms", None),
                        ("healthz_under_load_p95_ms", pct(health, 95), "ms", None),
                        ("healthz_under_load_max_ms", max(health), "ms", "<= 100")]
            figures += [(f"{name}_under_load_p50_ms", statistics.median(v), "ms", None)
                        for name, v in slow.items() if v]
            figures.append(("slow_page_errors", float(len(errors)), "", "== 0"))
            waits = rating_waits(base, config, folder, folder / "web.db", generated)
        figures += [("rate_web_status", waits["rate_web_status"], "", "== 303"),
                    ("rate_web_waited_s", waits["rate_web_s"], "s", None),
                    ("rate_web_after_commit", waits["rate_web_after_commit"], "", "== 1"),
                    ("rate_cli_exit", waits["rate_cli_exit"], "", "== 0"),
                    ("rate_cli_s", waits["rate_cli_s"], "s", None),
                    ("rate_cli_after_commit", waits["rate_cli_after_commit"], "", "== 1")]
        data = ROOT / "tests" / "data"
        shutil.rmtree(folder / "stress", ignore_errors=True)  # a kept folder's last run
        out = run_stress(folder / "stress", args.stress_seconds, data / "corpus-2025-04-09.jsonl.gz",
                         data / "corpus-2025-04-10.jsonl.gz")
        ok = (not out.problems and sorted(out.recorded_ratings) == sorted(out.expected_ratings)
              and len(out.stored_ids) == len(set(out.stored_ids)) == len(out.expected_papers)
              and set(out.runs) == {"ok"})
        figures += [("stress_s", out.seconds, "s", None), ("stress_daemon_cycles", float(out.cycles), "", None),
                    ("stress_web_ratings", float(out.web_ratings), "", None),
                    ("stress_web_reads", float(out.web_reads), "", None),
                    ("stress_cli_ratings", float(out.cli_ratings), "", None),
                    ("stress_problems", float(len(out.problems)), "", "== 0"),
                    ("stress_all_recorded_once", float(ok), "", "== 1")]
    missed = []
    for name, value, unit, target in figures:
        mark = ""
        if target:
            op, bound = target.split()
            met = value <= float(bound) if op == "<=" else value == float(bound)
            mark = f"  (target {target}{' ' + unit if unit else ''}: {'met' if met else 'MISSED'})"
            if not met:
                missed.append(name)
        print(f"{name} {value:.1f} {unit}{mark}".rstrip() if unit or mark else f"{name} {value:.1f}")
    for problem in out.problems[:5]:
        print(f"# stress problem: {problem}")
    print(f"# load average {os.getloadavg()[0]:.2f}")
    print("targets: all met" if not missed else f"targets missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
