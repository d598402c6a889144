"""Daemon memory: idle RSS of ``watcher run`` (the bar: < 60 MB) and RSS growth over 1,000
cycles (the bar: RSS after 1,000 cycles within 10 % of RSS after 10).

    PYTHONPATH=. python benchmarks/bench_daemon.py [--cycles 1000]

1. Idle: starts ``python -m watcher run`` as a real process on a config with three digests
   (cron, "arxiv" and every = "1h") and the 30 papers of the shipped sample digest in its
   database; the catch-up cycle delivers them, then the daemon sits idle. VmRSS is read from
   /proc after it has been idle for 3 s.
2. Growth: one cycle per second is too slow for 1,000 cycles, so this runs the daemon's own job
   function, :meth:`watcher.cycle.daemon.Daemon.run_digests` (the whole cycle: write lock, open the
   store, fetch sources, match, render, deliver to a file channel, record), back to back in
   this process, with one new paper stored before each cycle so that every cycle delivers a
   digest. The daemon's clock moves one day per cycle, as for a daily digest running 1,000
   days, so each digest file gets its own date. (``--same-day`` keeps the real clock: 1,000
   files of one digest on one day make the file channel probe ``-2`` … ``-N`` names for each
   new file, O(N²) stat calls in all, and that churn alone grows RSS by ~13 %; it is a
   benchmark artefact, not the daemon's.) When the ``listing`` source is available it is
   configured too, so every cycle also fetches and parses the sample listing. VmRSS after cycle
   10 and after the last cycle (both after ``gc.collect()``).

Prints ``daemon_rss_mb VALUE MB`` and ``daemon_rss_growth_pct VALUE %``.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from watcher import formats  # noqa: E402
from watcher.cycle.daemon import Daemon  # noqa: E402
from watcher.sources import KINDS  # noqa: E402
from watcher.store import Store  # noqa: E402

SAMPLE = ROOT / "watcher" / "samples" / "llm-rl-2025-04-12.txt"

CONFIG = """
[watcher]
database = "watcher.db"
timezone = "Europe/Berlin"
{source}
[profile.llm-rl]
title = "LLM-RL"
query = '("reinforcement learning" OR RLHF OR GRPO OR reasoning) AND (LLM OR "language model" OR model)'

[digest.bench]
profiles = ["llm-rl"]
{schedule}
channels = ["archive"]
formats = ["text", "markdown"]
lookback = "5000d"

[digest.nightly]
profiles = ["llm-rl"]
schedule = "30 21 * * sun-thu"
channels = ["archive"]

[digest.arxiv]
profiles = ["llm-rl"]
schedule = "arxiv"
channels = ["archive"]

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"
"""


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of a process, from /proc (MB = 2**20 bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc (Linux only)")


def listing_available() -> bool:
    """True when the ``listing`` source type is registered."""
    return "listing" in KINDS


def write_config(folder: Path, schedule: str) -> Path:
    source = f'\n[source.lab]\ntype = "listing"\nurl = "{SAMPLE.as_uri()}"\n' if listing_available() else ""
    path = folder / "config.toml"
    path.write_text(textwrap.dedent(CONFIG.format(source=source, schedule=schedule)))
    return path


def sample_papers():
    return formats.read(SAMPLE.read_bytes(), str(SAMPLE)).papers


def idle_rss(folder: Path, settle: float = 3.0) -> float:
    """Start ``watcher run``, wait for its catch-up cycle and ``settle`` seconds, read its RSS."""
    config = write_config(folder, 'every = "1h"')
    with Store.open(folder / "watcher.db") as store:
        store.upsert(sample_papers(), datetime.now(timezone.utc))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = folder / "daemon.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "watcher", "--config", str(config), "run"],
                                cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 30
            while log.read_text().count("cycle done") < 1:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"the daemon did not finish its first cycle:\n{log.read_text()}")
                time.sleep(0.1)
            time.sleep(settle)
            return rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(15)


def growth(folder: Path, cycles: int, same_day: bool = False) -> tuple[float, float, float]:
    """RSS after 10 and after ``cycles`` cycles of the daemon's job, and seconds per cycle."""
    config = write_config(folder, 'every = "1h"')
    base = sample_papers()
    today = [datetime.now(timezone.utc)]

    def clock() -> datetime:
        return datetime.now(timezone.utc) if same_day else today[0]

    daemon = Daemon(config, clock=clock)
    daemon.open()
    try:
        with Store.open(folder / "watcher.db") as store:
            store.upsert(base, clock())
        rss10 = 0.0
        started = time.perf_counter()
        for i in range(1, cycles + 1):
            today[0] += timedelta(days=1)
            fresh = replace(base[i % len(base)], title=f"{base[i % len(base)].title} (part {i})")
            with Store.open(folder / "watcher.db") as store:
                store.upsert([fresh], clock())
            daemon.run_digests(["bench"])
            if i == 10:
                gc.collect()
                rss10 = rss_mb()
        elapsed = time.perf_counter() - started
        gc.collect()
        delivered = len(list((folder / "digests").glob("bench-*.txt")))
        if delivered != cycles:
            raise RuntimeError(f"{delivered} digests for {cycles} cycles: the cycles did not deliver")
        return rss10, rss_mb(), elapsed / cycles
    finally:
        daemon.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=1000, help="cycles for the growth figure")
    parser.add_argument("--same-day", action="store_true",
                        help="keep the real clock (all digests on one day; see above)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        idle = idle_rss(Path(tmp))
    with tempfile.TemporaryDirectory() as tmp:
        rss10, rss_n, per_cycle = growth(Path(tmp), max(args.cycles, 11), args.same_day)
    pct = (rss_n - rss10) / rss10 * 100
    print(f"# idle daemon after its catch-up cycle; growth: RSS {rss10:.1f} MB after 10 cycles, "
          f"{rss_n:.1f} MB after {args.cycles} ({per_cycle * 1000:.0f} ms per cycle, "
          f"{'one day' if args.same_day else 'one day per cycle'}; "
          f"listing source {'on' if listing_available() else 'unavailable'})")
    print(f"daemon_rss_mb {idle:.1f} MB")
    print(f"daemon_rss_growth_pct {pct:.1f} %")


if __name__ == "__main__":
    main()
