"""The web inbox under load: search and inbox latency (p50/p95), errors and the server's memory
with 100,000 stored papers.

    PYTHONPATH=. python benchmarks/bench_web.py [--papers 100000] [--requests 2000] [--concurrency 20]

1. Builds a database the way watcher fills one: the real corpus of ``benchmarks/data/``
   repeated with distinct synthetic ids up to ``--papers`` papers, spread over 365 announcement
   days, stored with ``Store.upsert`` (so the FTS5 index is filled by its triggers), and 30
   daily digests of the shipped config's profile delivered on the last 30 days (the matcher
   picks each day's papers; ``record_delivery`` keeps the issue).
2. Starts ``python -m watcher serve`` on a free loopback port as a real process.
3. Sends ``--requests`` requests, ``--concurrency`` at a time, from this process (httpx):
   half to ``/`` (the inbox: the latest digest, 30 papers with reasons), half to ``/search``
   with a rotating set of queries (words, phrases, fields, booleans, a category filter, a
   second page). Loopback only; it stops by itself after the last request.
4. Reads the server's peak resident memory (VmHWM in /proc) and stops it.

``--pages N`` times every page instead (cold: a ``serve`` of its own per page, then N warm
requests); ``--days`` spreads the papers over fewer days (7: a first week).

Prints ``name value unit`` lines with the targets: ``web_search_p95_ms <= 100``,
``web_inbox_p95_ms <= 100``, ``web_errors = 0``, ``web_rss_mb <= 120``. The client shares the
machine's cores with the server, so the latencies include some of its own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import date, datetime, time as dtime, timedelta, timezone
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import httpx  # noqa: E402

from corpus import read_corpus  # noqa: E402
from spread import spread  # noqa: E402
from watcher.matching.assemble import assemble  # noqa: E402
from watcher.config import load_config  # noqa: E402
from watcher.matching.compile import compile_profiles  # noqa: E402
from watcher.store import Store  # noqa: E402

QUERIES = ["GRPO", "reinforcement learning", "ti:survey", "diffusion", "au:Levine",
           '"language model" AND cat:cs.CL', "transformer*", "graph neural network",
           "RLHF OR DPO", "ti:benchmark ANDNOT cat:cs.CV", "agents", "quantum"]
LAST_DAY = date(2026, 9, 30)
DAYS = 365


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build(folder: Path, n: int, days: int = DAYS) -> Path:
    """config.toml and a database of ``n`` papers over ``days`` days with 30 delivered digests
    (as many as there are days, when fewer); returns the config."""
    config_path = folder / "config.toml"
    config_path.write_text((ROOT / "config.toml").read_text().replace(
        'database = "watcher.db"', 'database = "web.db"'))
    config = load_config(config_path)
    # oldest first, as they would have arrived
    papers = [p for _, day in spread(read_corpus(), n, LAST_DAY, days) for p in day]
    started = time.perf_counter()
    with Store.open(config.settings.database) as store:
        for day_start in range(0, n, 5000):
            chunk = papers[day_start:day_start + 5000]
            store.upsert(chunk, datetime.combine(chunk[-1].announced, dtime(6), timezone.utc))
        dcfg = config.digests["daily"]
        matchers = compile_profiles(config, dcfg.profiles, lookup=store.get)
        by_day: dict[date, list] = {}
        for p in papers:
            by_day.setdefault(p.announced, []).append(p)
        for k in range(min(30, days), 0, -1):
            day = LAST_DAY - timedelta(days=k - 1)
            now = datetime.combine(day, dtime(21, 30), timezone.utc)
            digest = assemble("daily", "LLM-RL", day, by_day.get(day, []), matchers, now)
            store.record_delivery("daily", "archive", digest.papers, now, issue=digest)
        stored = store.count_papers()
    size = Path(config.settings.database).stat().st_size / 1e6
    print(f"# built {stored} papers, 30 digests in {time.perf_counter() - started:.1f} s ({size:.0f} MB)")
    return config_path


@contextmanager
def served(config: Path, folder: Path, env: dict | None = None,
           start_timeout: float = 120) -> Iterator[tuple[subprocess.Popen, str]]:
    """``python -m watcher serve`` over ``config`` on a free loopback port, as a real process,
    once its /healthz answers (within ``start_timeout`` s): (the process, its base URL). ``env``:
    the server's environment (default: this one, with this checkout first on PYTHONPATH).
    Stopped with SIGTERM at the end."""
    port = free_port()
    env = env or dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    server = subprocess.Popen([sys.executable, "-m", "watcher", "--config", str(config), "serve",
                               "--listen", f"127.0.0.1:{port}"], env=env, cwd=folder,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError(f"watcher serve did not start: {server.stderr.read() if server.poll() is not None else ''}")
            time.sleep(0.2)
        yield server, base
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()


def rss_peak_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of process ``pid`` in MB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            key, kb = line.split()[:2]
            values[key] = int(kb) / 1024
    return values["VmRSS:"], values["VmHWM:"]


async def load(base: str, requests: int, concurrency: int) -> dict[str, list]:
    """``requests`` GETs, ``concurrency`` at a time; latencies (s) per kind and the errors."""
    out: dict[str, list] = {"inbox": [], "search": [], "errors": []}
    todo = iter(range(requests))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        async def worker() -> None:
            for i in todo:
                if i % 2:
                    q = QUERIES[(i // 2) % len(QUERIES)]
                    params = {"q": q}
                    if i % 10 == 3:
                        params["page"] = "2"
                    if i % 14 == 5:
                        params["cat"] = "cs.LG"
                    kind, path = "search", "/search"
                else:
                    kind, path, params = "inbox", "/", {}
                started = time.perf_counter()
                try:
                    r = await client.get(path, params=params)
                    ok = r.status_code == 200 and r.content.rstrip().endswith(b"</html>")
                except httpx.HTTPError as e:
                    ok, r = False, e
                out[kind].append(time.perf_counter() - started)
                if not ok:
                    out["errors"].append(f"{path} {params}: {getattr(r, 'status_code', r)}")

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000 if values else float("nan")


def kept_or_built(tmp: str, keep: str | None, papers: int, days: int = DAYS) -> tuple[str, Path]:
    """(folder, config) of the database: ``keep``'s when it holds one, else built there (or
    in ``tmp``) with ``papers`` papers."""
    if keep and (Path(keep) / "web.db").exists():
        print(f"# reusing {keep}")
        return keep, Path(keep) / "config.toml"
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        tmp = keep
    return tmp, build(Path(tmp), papers, days)


def verdict(missed: list[str], errors: list[str], strict: bool) -> int:
    """The last lines (a few errors, the targets met or missed) and the exit code."""
    for e in errors[:5]:
        print(f"# error: {e}")
    print("targets: all met" if not missed else f"targets missed: {', '.join(missed)}")
    return 1 if missed and strict else 0


def print_figures(figures, digits: int = 1) -> list[str]:
    """Print ``name value unit`` per figure ``(name, value, unit, target or None)`` with the
    target met or missed beside it; the names of the missed ones."""
    missed = []
    for name, value, unit, target in figures:
        mark = ""
        if target is not None:
            ok = value <= target
            mark = f"  (target <= {target:g}{' ' + unit if unit else ''}: {'met' if ok else 'MISSED'})"
            if not ok:
                missed.append(name)
        print(f"{name} {value:.{digits}f} {unit}{mark}")
    return missed


def pages(base: str, day: date) -> list[str]:
    """Every page the inbox serves a reader (and its JSON twin), with the newest issue's date
    ``day`` and a paper of it: what ``--pages`` times."""
    r = httpx.get(base + "/index.json", timeout=60)
    data = r.json() if r.status_code == 200 else {}
    key = next((p["key"] for i in data.get("issues", []) for m in i.get("messages", [])
                for p in m.get("papers", [])), None) or _any_key(data)
    preview = "&".join(["preview=" + "%22reward+model%22+OR+GRPO+OR+ti%3Aagent", "days=30"])
    out = ["/", "/index.json", "/profiles/llm-rl", "/profiles/llm-rl.json",
           f"/profiles/llm-rl?{preview}", f"/profiles/llm-rl.json?{preview}",
           "/search?q=GRPO", "/search?q=reinforcement+learning&page=2", "/search?q=diffusion&cat=cs.LG",
           "/search?q=transformer*&order=relevance", "/search?q=ti%3Asurvey&from=2026-09-01",
           "/search.json?q=agents", f"/digests/daily/{day}", f"/digests/daily/{day}/archive/1",
           "/digests", "/status", "/status.json", "/saved", "/saved.json"]
    if key:
        out += [f"/papers/{key}", f"/papers/{key}.json"]
    return out


def _any_key(data) -> str | None:
    """A paper key anywhere in the inbox's JSON twin (its shape differs by version)."""
    if isinstance(data, dict):
        if isinstance(data.get("key"), str) and "title" in data:
            return data["key"]
        data = list(data.values())
    if isinstance(data, list):
        for item in data:
            if found := _any_key(item):
                return found
    return None


def time_pages(config: Path, folder: Path, warm: int) -> list[tuple]:
    """Each page cold (the first request after ``serve`` starts: a server of its own per page)
    and warm (p95 of ``warm`` more requests); the figures, and the server's peak RSS."""
    figures, peaks = [], []
    with served(config, folder) as (server, base):
        urls = pages(base, LAST_DAY)
    for path in urls:
        with served(config, folder) as (server, base):
            started = time.perf_counter()
            r = httpx.get(base + path, timeout=60)
            cold = time.perf_counter() - started
            times = []
            for _ in range(warm):
                started = time.perf_counter()
                httpx.get(base + path, timeout=60)
                times.append(time.perf_counter() - started)
            peaks.append(rss_peak_mb(server.pid)[1])
        print(f"# {path}: {r.status_code}, cold {cold * 1000:.0f} ms, warm p95 {pct(times, 95):.0f} ms")
        figures += [(f"page_cold_ms[{path}]", cold * 1000, "ms", 1000.0),
                    (f"page_warm_p95_ms[{path}]", pct(times, 95), "ms", 200.0)]
        if r.status_code != 200:
            figures.append((f"page_status[{path}]", float(r.status_code), "", 200.0))
    figures.append(("web_pages_rss_mb", max(peaks), "MB", 150.0))
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=100_000)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--keep", metavar="DIR", help="build the database in DIR and keep it; reuse it when "
                                                   "it is there (for repeated runs)")
    ap.add_argument("--days", type=int, default=DAYS, help="days the papers are spread over (365; 7 for a first week)")
    ap.add_argument("--pages", type=int, metavar="N", default=0,
                    help="instead of the load: time every page cold (a fresh server each) and N times warm")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        tmp, config = kept_or_built(tmp, args.keep, args.papers, args.days)
        if args.pages:
            missed = print_figures(time_pages(config, Path(tmp), args.pages))
            print(f"# load average {os.getloadavg()[0]:.2f}")
            return verdict(missed, [], args.strict)
        with served(config, Path(tmp)) as (server, base):
            asyncio.run(load(base, 40, 4))  # warm-up: templates compiled, matchers built
            started, cpu0, client0 = time.perf_counter(), cpu_seconds(server.pid), time.process_time()
            result = asyncio.run(load(base, args.requests, args.concurrency))
            wall = time.perf_counter() - started
            server_cpu = cpu_seconds(server.pid) - cpu0
            client_cpu = time.process_time() - client0
            rss, peak = rss_peak_mb(server.pid)
    figures = [
        ("web_search_p50_ms", pct(result["search"], 50), "ms", None),
        ("web_search_p95_ms", pct(result["search"], 95), "ms", 100.0),
        ("web_inbox_p50_ms", pct(result["inbox"], 50), "ms", None),
        ("web_inbox_p95_ms", pct(result["inbox"], 95), "ms", 100.0),
        ("web_errors", float(len(result["errors"])), "", 0.0),
        ("web_rss_mb", peak, "MB", 120.0),
        ("web_server_cpu_ms_per_request", server_cpu / args.requests * 1000, "ms", None),
    ]
    missed = print_figures(figures)
    print(f"# {args.requests} requests, {args.concurrency} concurrent, {wall:.1f} s "
          f"({args.requests / wall:.0f} req/s); CPU of the server {server_cpu:.1f} s, of this client "
          f"{client_cpu:.1f} s; server RSS at the end {rss:.1f} MB; "
          f"load average {os.getloadavg()[0]:.2f}")
    return verdict(missed, result["errors"], args.strict)


if __name__ == "__main__":
    sys.exit(main())
