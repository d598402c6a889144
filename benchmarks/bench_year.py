"""A year of real use, at 300,000 papers (and at 10,000 in the same run, for the growth ratios).

    PYTHONPATH=. python benchmarks/bench_year.py [--papers 300000] [--small 10000] [--cache DIR]

1. Builds, per size, a year of use through watcher's own paths, in a child process that plays
   the daemon: on each of 365 days, that day's papers (the real corpus of ``benchmarks/data/``
   spread over the year with distinct ids, ``spread.py``) stored with ``Store.upsert``, then one
   cycle of the pipeline (``pipeline.run_once``: the OpenAlex citations source fetched from a
   local stand-in, the Zotero collection of one profile synced from a local stand-in, the daily
   digest of 10 profiles built, rendered, sent to two channels (a file archive and an Atom feed)
   and recorded as sent), then that day's share of the 2,000 ratings and 300 saves through
   ``watcher.services.ratings.apply_rating`` on papers the digest delivered (the learner refits from them
   in the next cycle). The 10 profiles: the shipped config.toml's, a broad and a narrow query,
   an author-only one, an example-based one, a Zotero one and four topics. The child's peak
   memory (VmHWM) after the 365 cycles is the daemon's figure. With ``--cache DIR`` the built
   folder is kept (``DIR/year-N``) and reused by the next run; measurements run on a copy.
2. Brings the record of what each profile selects per filing day up to date (the pipeline's
   own function; a year built before that record existed is counted here, as by the first
   cycle after the upgrade: ``record_fill_s``).
3. Times, on that database: every page of ``watcher serve`` (a real process on a loopback port)
   and its JSON twin, cold (the first request after the server started: one start per page)
   and warm (p95 over ``--repeat`` requests); ``watcher once`` with a new day of 2,000 papers
   (a local arXiv stand-in), ``watcher status``, ``watcher explain``, ``watcher digest daily
   --since``, ``watcher state save`` / ``state restore`` (each a CLI process: the database was
   closed before), the learner's refit (in this process) and the peak memory of ``serve``.

Prints ``name value unit`` per figure, with the growth ratio to the small size and the target
(``met`` / ``MISSED``), then ``targets: all met`` or the missed ones. Loopback only; every
request loop is bounded; it stops by itself. A page that answers an error is a figure (its
status is printed), not a crash.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from datetime import date, datetime, time as dtime, timedelta, timezone
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "servers"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

import httpx  # noqa: E402

from bench_web import rss_peak_mb, served  # noqa: E402
from corpus import corpus_records, read_corpus  # noqa: E402
from inputs import HEAD, entry_xml  # noqa: E402
from spread import spread  # noqa: E402

LAST_DAY = date(2026, 9, 30)
DAYS = 365
ZOTERO_KEY_ENV = "WATCHER_BENCH_ZOTERO_KEY"
ZOTERO_KEY = "bench-read-key-0001"
ZOTERO_COLLECTION = "BENCH234"
NEW_DAY = 2000  # the papers of `watcher once`'s new day
SEARCHES = [  # five forms: words, a phrase, a field, a boolean, a filtered second page
    {"q": "reinforcement learning"}, {"q": '"language model"'}, {"q": "au:Levine"},
    {"q": "(RLHF OR DPO) ANDNOT cat:cs.CV"}, {"q": "diffusion", "cat": "cs.CV", "page": "2"}]
PREVIEW = '"graph neural network" OR GNN'  # a new query's preview on a profile page
TOPICS = {  # four topic profiles beside the shipped one
    "robotics": '"robot learning" OR manipulation OR "embodied agent" OR locomotion',
    "vision": '"image generation" OR "text-to-image" OR "video generation" OR "diffusion model"',
    "graphs": '"graph neural network" OR GNN OR "message passing"',
    "rag": '"retrieval-augmented" OR RAG OR "retrieval augmented generation"',
}
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           **{ZOTERO_KEY_ENV: ZOTERO_KEY})
ENV.pop("WATCHER_CONFIG", None)


# --- the stand-ins --------------------------------------------------------------------------

@contextmanager
def stand_ins() -> Iterator[dict]:
    """The local services a year of use talks to: an arXiv API (``once``'s new day), OpenAlex
    (the citations source) and Zotero (one profile's collection). Their URLs by name."""
    from httpserver import Reply, Server
    from openalexserver import OpenalexApi
    from test_zotero import translator_item
    from zoteroserver import ZoteroServer

    records = corpus_records()
    server = Server()
    made = json.loads((ROOT / "tests/data/openalex/works_constructed.json").read_text())
    works = [json.loads((ROOT / "tests/data/openalex/work_W2741809807_state_of_oa.json").read_text())]
    OpenalexApi(works + made["works"], single=made["followed"], page_size=50).mount(server)
    atom = new_day_atom(records)
    server.route("/api/query", lambda request: Reply(atom, headers={"Content-Type": "application/atom+xml"}))
    zotero = ZoteroServer(user=7654321, keys={ZOTERO_KEY: {"library": True}})
    zotero.collections.add(ZOTERO_COLLECTION)
    for p in zotero_examples(read_corpus()):  # the listings' papers carry their day, not a time
        p = replace(p, published=p.published or datetime.combine(p.announced, dtime(), timezone.utc))
        zotero.add(translator_item(p), [ZOTERO_COLLECTION])
    try:
        yield {"arxiv": server.url("/api/query"), "openalex": server.url("/oa"), "zotero": zotero.url,
               "zotero_user": zotero.user}
    finally:
        zotero.close()
        server.httpd.shutdown()


def new_day_atom(records: list[dict]) -> bytes:
    """An arXiv API answer of ``NEW_DAY`` papers never stored (ids 2612.00001…), published in
    the last hours: the new day ``watcher once`` fetches."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    out = [HEAD.format(n=NEW_DAY, total=NEW_DAY, start=0)]
    out += [entry_xml(records[(i * 7) % len(records)], f"2612.{i + 1:05d}", now - timedelta(seconds=10 * i))
            for i in range(NEW_DAY)]
    out.append("</feed>\n")
    return "".join(out).encode()


def zotero_examples(base) -> list:
    """The Zotero collection: 20 corpus papers on reinforcement learning for robots."""
    return [p for p in base if "robot" in p.title.lower() and "reinforcement" in p.abstract.lower()][:20]


# --- the config -----------------------------------------------------------------------------

def write_config(folder: Path, urls: dict, base) -> Path:
    """The shipped config.toml with its arXiv source pointed at the local stand-in, the HF
    source replaced by OpenAlex citations (local), 10 profiles and a daily digest of them all
    to a file archive and an Atom feed."""
    shipped = (ROOT / "config.toml").read_text()
    head, rest = shipped.split("[source.hf]", 1)
    profiles = rest[rest.index("# Reinforcement learning"):rest.index("[digest.daily]")]
    authors = [a for a, _ in Counter(a for p in base for a in p.authors).most_common(3)]
    examples = [p.arxiv_id for p in base if "retrieval-augmented" in p.title.lower()][:5]
    head = head.replace('query = "cat:cs.CL OR cat:cs.LG OR cat:cs.AI OR cat:cs.CV"',
                        'query = "cat:cs.CL OR cat:cs.LG OR cat:cs.AI OR cat:cs.CV"\n'
                        f'url = "{urls["arxiv"]}"\npage_size = 2000\nfirst_fetch = "2d"\ntimeout = 60')
    names = ["llm-rl", "broad", "narrow", "authors", "examples", "zotero", *TOPICS]
    text = [head, f'''[source.citations]
type = "openalex"
url = "{urls["openalex"]}"
cites = ["10.5555/followed-one", "W2029057325"]
authors = ["https://orcid.org/0000-0003-1613-5981"]
mailto = "bench@example.org"
first_fetch = "3650d"
timeout = 10

''', profiles, '''[profile.broad]
query = '"language model" OR LLM OR transformer OR diffusion OR "neural network" OR benchmark'
max_papers = 30

[profile.narrow]
query = 'GRPO AND reasoning'

''', f'[profile.authors]\nauthors = {json.dumps(authors)}\n\n',
            f'[profile.examples]\nexamples = {json.dumps(examples)}\nmax_papers = 20\n\n',
            f'[profile.zotero]\nzotero = {{ library_id = "{urls["zotero_user"]}", api_key_env = "{ZOTERO_KEY_ENV}", '
            f'collection = "{ZOTERO_COLLECTION}", url = "{urls["zotero"]}" }}\nmax_papers = 20\n\n',
            *(f"[profile.{name}]\nquery = '{query}'\nmax_papers = 20\n\n" for name, query in TOPICS.items()),
            f'''[digest.daily]
profiles = {json.dumps(names)}
schedule = "30 21 * * *"
formats = ["text", "html"]
channels = ["archive", "feed"]
lookback = "1d"

[channel.archive]
type = "file"
path = "digests/{{digest}}-{{date}}.{{ext}}"

[channel.feed]
type = "feed"
path = "feeds/{{digest}}.atom"
max_entries = 200
''']
    path = folder / "config.toml"
    path.write_text("".join(text))
    return path


# --- the year -------------------------------------------------------------------------------

def vm_hwm_mb() -> float:
    return rss_peak_mb(os.getpid())[1]


def build_year(folder: Path, n: int, days: int, ratings: int, saves: int, urls: dict,
               cycles: int | None = None) -> dict:
    """A year of use in ``folder`` (see the module docstring); its figures. With ``cycles``
    below ``days``, only the last ``cycles`` days run a cycle (and carry the ratings): the days
    before are history, stored day by day as ``watcher fetch --since`` would, delivered never."""
    from watcher.config import load_config
    from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once
    from watcher.services.ratings import apply_rating
    from watcher.store import Store

    base = read_corpus()
    config = load_config(write_config(folder, urls, base))
    names = list(config.profiles)
    cycles = days if cycles is None else min(cycles, days)
    quiet = days - cycles  # the history days: stored, no cycle
    ingest_s = cycle_s = rate_s = 0.0
    stored = rated = saved = 0
    delivered = 0
    cycle_times = []
    started = time.perf_counter()
    with Store.open(config.settings.database) as store:
        # the example profile's papers are the reader's own, from before the year
        known = {p.arxiv_id: p for p in base}
        examples = [replace(known[e], announced=LAST_DAY - timedelta(days=days)) for e in config.profiles["examples"].examples]
        store.upsert(examples, datetime.combine(LAST_DAY - timedelta(days=days), dtime(6), timezone.utc))
        for d, (day, papers) in enumerate(spread(base, n, LAST_DAY, days)):
            t = time.perf_counter()
            for k in range(0, len(papers), 5000):
                store.upsert(papers[k:k + 5000], datetime.combine(day, dtime(6), timezone.utc))
            ingest_s += time.perf_counter() - t
            stored += len(papers)
            if d < quiet:
                if d % 10 == 0:
                    print(f"# {day}: {stored} papers stored as history; {time.perf_counter() - started:.0f} s; "
                          f"ingest {stored / ingest_s:.0f}/s", flush=True)
                continue
            t = time.perf_counter()
            report = run_once(config, Cycle(now=datetime.combine(day, dtime(21, 30), timezone.utc), kind="run"),
                              Fetch(sources=["citations"]), Deliver(digests=["daily"]))
            cycle_times.append(time.perf_counter() - t)
            cycle_s += cycle_times[-1]
            failed = [c.error for c in report.channels if c.error] + [s.error for s in report.sources if s.error]
            if failed:
                raise RuntimeError(f"day {day}: {failed[0]}")
            matches = next((c.issue.matches for c in report.channels if c.issue is not None), [])
            delivered += len(matches)
            t = time.perf_counter()
            want_rated = ratings * (d + 1 - quiet) // cycles - rated
            want_saved = saves * (d + 1 - quiet) // cycles - saved
            now = datetime.combine(day, dtime(22), timezone.utc)
            for j, m in enumerate(matches[:want_rated]):
                # a reader likes the best-scored half of what a profile sent, not the rest
                action = "up" if j % 3 != 2 else "down"
                apply_rating(store, action, m.profile, m.paper.key, "web", profiles=names, now=now)
                rated += 1
            for m in matches[::-1][:want_saved]:
                apply_rating(store, "save", None, m.paper.key, "web", profiles=names, now=now)
                saved += 1
            rate_s += time.perf_counter() - t
            if d % 10 == 0 or d == days - 1:
                print(f"# {day}: {stored} papers, {delivered} delivered, {rated} ratings, {saved} saved; "
                      f"{time.perf_counter() - started:.0f} s; ingest {stored / ingest_s:.0f}/s; "
                      f"last cycle {cycle_times[-1]:.2f} s; VmHWM {vm_hwm_mb():.0f} MB", flush=True)
        count = store.count_papers()
    return {"papers": count, "days": days, "cycles": cycles, "ratings": rated, "saved": saved, "delivered": delivered,
            "build_s": time.perf_counter() - started, "ingest_per_s": stored / ingest_s,
            "cycle_mean_s": cycle_s / cycles, "cycle_p95_s": pct(cycle_times, 95) / 1000,
            "rate_s": rate_s, "daemon_hwm_mb": vm_hwm_mb(),
            "db_bytes": db_bytes(Path(config.settings.database))}


def db_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def built(cache: Path, n: int, days: int, ratings: int, saves: int, urls: dict, cycles: int | None = None) -> dict:
    """The year in ``cache`` (built by a child process when not there yet); its figures."""
    marker = cache / "built.json"
    if marker.exists():
        figures = json.loads(marker.read_text())
        if figures.get("papers_asked") == n and figures.get("days") == days and (cycles is None or figures.get("cycles") == cycles):
            print(f"# reusing the year of {n} papers in {cache} (built in {figures['build_s']:.0f} s)")
            return figures
    owner = cache / "building.pid"
    if owner.exists() and Path(f"/proc/{owner.read_text().strip()}").exists():
        raise RuntimeError(f"{cache} is being built by process {owner.read_text().strip()}: wait for it")
    if cache.exists():
        shutil.rmtree(cache)
    cache.mkdir(parents=True)
    print(f"# building a year of {n} papers in {cache}", flush=True)
    r = subprocess.run([sys.executable, __file__, "--build-child", str(cache), "--papers", str(n),
                        "--days", str(days), *(["--cycles", str(cycles)] if cycles else []), "--ratings", str(ratings), "--saves", str(saves),
                        "--urls", json.dumps(urls)], env=ENV, cwd=cache)
    if r.returncode or not marker.exists():
        raise RuntimeError(f"building {cache} failed (exit {r.returncode})")
    return json.loads(marker.read_text())


# --- measuring ------------------------------------------------------------------------------

def pct(values: list[float], p: float) -> float:
    """The ``p``-th percentile of ``values`` (seconds) in ms."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] * 1000 if values else float("nan")


def watcher(config: Path, *args: str, cwd: Path, timeout: float = 1800) -> tuple[float, subprocess.CompletedProcess]:
    """``python -m watcher --config CONFIG ARGS`` as a process: (wall seconds, the result)."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), *args], cwd=cwd, env=ENV,
                       capture_output=True, text=True, timeout=timeout)
    return time.perf_counter() - t, r


def pages(config_path: Path, folder: Path) -> list[tuple[str, str, dict]]:
    """(name, path, query) of every page measured, each with its JSON twin."""
    from watcher.config import load_config
    from watcher.store import Store

    config = load_config(config_path)
    with Store.open(config.settings.database, readonly=True) as store:
        [issue] = store.issues("daily", limit=1) or [None]
        saved = store.saved_papers()
    out = [("inbox", "/", {}), ("status", "/status", {}), ("saved", "/saved", {})]
    for name in config.profiles:
        out.append((f"profile_{name}", f"/profiles/{name}", {}))
    out.append(("profile_preview", "/profiles/llm-rl", {"preview": PREVIEW, "days": "30"}))
    for i, q in enumerate(SEARCHES):
        out.append((f"search{i + 1}", "/search", q))
    if saved:
        out.append(("paper", f"/papers/{saved[0][0].key}", {}))
    if issue:
        out.append(("message", f"/digests/daily/{issue.day}/archive/1", {}))
    twins = []
    for name, path, q in out:
        twins.append((name, path, q))
        twin = "/index.json" if path == "/" else path + ".json"
        twins.append((name + "_json", twin, q))
    return twins


def get(client: httpx.Client, path: str, q: dict) -> tuple[float, int]:
    t = time.perf_counter()
    try:
        status = client.get(path, params=q).status_code
    except httpx.HTTPError as e:
        status = type(e).__name__
    return time.perf_counter() - t, status


def measure_pages(config: Path, folder: Path, repeat: int, cold_each: bool) -> dict:
    """Cold (first request after serve started) and warm p95 of every page; serve's VmHWM."""
    todo = pages(config, folder)
    cold, warm, statuses, failed = {}, {}, {}, {}
    if cold_each:
        for name, path, q in todo:
            with served(config, folder, env=ENV, start_timeout=300) as (_, base), httpx.Client(base_url=base, timeout=120) as c:
                cold[name], statuses[name] = get(c, path, q)
    with served(config, folder, env=ENV, start_timeout=300) as (server, base), httpx.Client(base_url=base, timeout=120) as c:
        for name, path, q in todo:
            first, status = get(c, path, q)
            cold.setdefault(name, first)
            statuses.setdefault(name, status)
        for name, path, q in todo:
            times, failed[name] = [], Counter()
            for _ in range(repeat):
                s, status = get(c, path, q)
                times.append(s)
                if status != 200:
                    failed[name][status] += 1
            warm[name] = times
        hwm = rss_peak_mb(server.pid)[1]
    return {"cold": cold, "warm": warm, "statuses": statuses, "failed": failed, "serve_hwm_mb": hwm}


def measure_cli(config: Path, folder: Path) -> dict:
    """The CLI commands on a copy of the year (each a process over a closed database)."""
    from watcher.config import load_config
    from watcher.matching.compile import compile_profiles
    from watcher.store import Store

    out: dict[str, tuple[float, object]] = {}
    cfg = load_config(config)
    with Store.open(cfg.settings.database, readonly=True) as store:
        paper = store.saved_papers()[0][0].arxiv_id if store.saved_papers() else None
        rated = max(cfg.profiles, key=lambda name: len(store.rating_rows(name)))
    for name, args in (("status", ["status"]), ("status_again", ["status"]),
                       ("explain", ["explain", paper or "2604.00001"]),
                       ("digest_since", ["digest", "daily", "--since", str(LAST_DAY - timedelta(days=6))])):
        s, r = watcher(config, *args, cwd=folder)
        out[name] = (s, r.returncode or "ok")
    # the learner's refit: the rated profile compiled with its ratings, in this process
    t = time.perf_counter()
    with Store.open(cfg.settings.database, readonly=True) as store:
        compile_profiles(cfg, [rated], store)
    out["learner_refit"] = (time.perf_counter() - t, f"ok ({rated})")
    state = folder / "state.db.gz"
    s, r = watcher(config, "state", "save", str(state), cwd=folder)
    out["state_save"] = (s, r.returncode or "ok")
    out["state_bytes"] = (state.stat().st_size if state.exists() else float("nan"), "")
    s, r = watcher(config, "state", "restore", str(state), "--force", cwd=folder)
    out["state_restore"] = (s, r.returncode or "ok")
    if r.returncode:
        print(f"# state restore: {r.stderr.strip()[-300:]}")
    s, r = watcher(config, "once", cwd=folder)
    out["once_new_day"] = (s, r.returncode or "ok")
    if r.returncode:
        print(f"# once: {r.stderr.strip()[-300:]}")
    return out


def fill_record(config_path: Path) -> dict:
    """The record of what each profile selects per filing day (the profile pages read it), as the
    year's cycles leave it: a year built before it existed is brought up to date by the
    pipeline's own function, every day lacking a record counted (as the pages and ``watcher
    site`` would in turn; a cycle counts only the days it stored papers of). Its time is a figure
    (on a year built since, only the profiles rated after its last cycle are counted). Every
    profile's days are then checked recorded."""
    from watcher.config import load_config
    from watcher.matching.compile import compile_profile
    from watcher.cycle.selections import CHART_DAYS, outdated_days, record_cycle
    from watcher.store import Store

    cfg = load_config(config_path)
    t = time.perf_counter()
    with Store.open(cfg.settings.database) as store:
        counted = record_cycle(cfg, store, datetime.now(timezone.utc), every_day=True)
        took = time.perf_counter() - t
        start, end = store.recent_days(CHART_DAYS)
        left = {name: len(outdated_days(store, name, compile_profile(cfg, name, store), start, end))
                for name in cfg.profiles}
    if any(left.values()):
        raise RuntimeError(f"the record of matches per day is not up to date: {left}")
    print(f"# the record of matches per day: {sum(counted.values())} profile-days counted in {took:.1f} s")
    return {"record_fill_s": (took, f"s ({sum(counted.values())} profile-days)")}


def measure(n: int, cache_root: Path, work: Path, urls: dict, args) -> dict:
    """Build (or reuse) the year of ``n`` papers and measure it on a copy; every figure by name."""
    figures = built(cache_root / f"year-{n}", n, args.days, args.ratings, args.saves, urls, args.cycles)
    folder = work / f"year-{n}"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(cache_root / f"year-{n}", folder)
    config = write_config(folder, urls, read_corpus())
    result = {"build_s": (figures["build_s"], "s"), "ingest_per_s": (figures["ingest_per_s"], "papers/s"),
              "cycle_mean_s": (figures["cycle_mean_s"], "s"), "cycle_p95_s": (figures["cycle_p95_s"], "s"),
              "db_bytes_per_paper": (figures["db_bytes"] / figures["papers"], "B"),
              "db_mb": (figures["db_bytes"] / 1e6, "MB"),
              "daemon_hwm_mb": (figures["daemon_hwm_mb"], "MB"), "papers": (figures["papers"], ""),
              "cycles": (figures.get("cycles", figures["days"]), ""), "ratings": (figures["ratings"], ""), "saved": (figures["saved"], "")}
    result.update(fill_record(config))
    web = measure_pages(config, folder, args.repeat, not args.no_cold_each)
    statuses, failed = web["statuses"], web["failed"]
    for name in web["cold"]:
        mark = "" if statuses[name] == 200 else f" (answered {statuses[name]})"
        result[f"page_{name}_cold_ms"] = (web["cold"][name] * 1000, "ms" + mark)
        mark = "".join(f" ({k} of {args.repeat} answered {status})" for status, k in failed[name].items())
        result[f"page_{name}_warm_p95_ms"] = (pct(web["warm"][name], 95), "ms" + mark)
    all_warm = [s for times in web["warm"].values() for s in times]
    result["page_cold_max_ms"] = (max(web["cold"].values()) * 1000, "ms")
    result["page_warm_p95_max_ms"] = (max(pct(t, 95) for t in web["warm"].values()), "ms")
    result["page_warm_p95_all_ms"] = (pct(all_warm, 95), "ms")
    search = [s for name, times in web["warm"].items() if name.startswith("search") for s in times]
    result["search_p95_ms"] = (pct(search, 95), "ms")
    result["page_errors"] = (sum(1 for name, s in statuses.items() if s != 200 or failed[name]), "")
    result["serve_hwm_mb"] = (web["serve_hwm_mb"], "MB")
    for name, (value, status) in measure_cli(config, folder).items():
        unit = "B" if name == "state_bytes" else "s"
        result[name + ("" if unit == "B" else "_s")] = (value, unit + ("" if status in ("ok", "") else f" ({status})"))
    result["state_mb"] = (result.pop("state_bytes")[0] / 1e6, "MB")
    if not args.keep_work:
        shutil.rmtree(folder, ignore_errors=True)
    (cache_root / f"year-{n}" / "measured.json").write_text(json.dumps(result, indent=1))
    return result


def measured(n: int, cache_root: Path, work: Path, urls: dict, args) -> dict:
    """The figures of the year of ``n`` papers: measured now, or with ``--reuse-small`` those the
    last run measured on the cached year (for the small size, whose figures do not change)."""
    saved = cache_root / f"year-{n}" / "measured.json"
    if args.reuse_small and saved.exists():
        print(f"# reusing the figures measured on the year of {n} papers ({saved})")
        return {name: tuple(v) for name, v in json.loads(saved.read_text()).items()}
    return measure(n, cache_root, work, urls, args)


# --- the verdict ----------------------------------------------------------------------------

def targets(big: dict, small: dict | None, allarxiv: bool) -> list[tuple[str, float, str, float, str]]:
    """(name, value, unit, bound, '<=' or '>=') of every target at the big size."""
    cold_bound = 2000.0 if allarxiv else 1000.0
    out = [("page_cold_max_ms", big["page_cold_max_ms"][0], "ms", cold_bound, "<="),
           ("page_warm_p95_max_ms", big["page_warm_p95_max_ms"][0], "ms", 200.0, "<="),
           ("status_s", big["status_s"][0], "s", 0.5, "<="),
           ("db_bytes_per_paper", big["db_bytes_per_paper"][0], "B", 3500.0, "<="),
           ("serve_hwm_mb", big["serve_hwm_mb"][0], "MB", 150.0, "<="),
           ("daemon_hwm_mb", big["daemon_hwm_mb"][0], "MB", 150.0, "<="),
           ("state_mb", big["state_mb"][0], "MB", 5.0, "<="),
           ("state_save_s", big["state_save_s"][0], "s", 10.0, "<="),
           ("page_errors", big["page_errors"][0], "", 0.0, "<=")]
    if allarxiv:
        out.append(("search_p95_ms", big["search_p95_ms"][0], "ms", 150.0, "<="))
    if small:
        out.append(("once_new_day_ratio", big["once_new_day_s"][0] / small["once_new_day_s"][0], "x", 1.3, "<="))
        out.append(("ingest_rate_ratio", big["ingest_per_s"][0] / small["ingest_per_s"][0], "x", 2 / 3, ">="))
    return out


def report(big: dict, small: dict | None, n: int, allarxiv: bool) -> list[str]:
    """Print every figure (with its growth over the small size) and the targets; the missed ones."""
    for name, (value, unit) in big.items():
        grow = ""
        if small and name in small and isinstance(small[name][0], (int, float)) and small[name][0]:
            grow = f"  (x{value / small[name][0]:.2f} of {small[name][0]:.4g} at the small size)"
        print(f"{name} {value:.4g} {unit}{grow}")
    missed = []
    print(f"# targets at {n} papers")
    for name, value, unit, bound, op in targets(big, small, allarxiv):
        ok = value <= bound if op == "<=" else value >= bound
        print(f"target {name} {value:.4g} {unit} {op} {bound:.4g}: {'met' if ok else 'MISSED'}")
        if not ok:
            missed.append(name)
    return missed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=300_000)
    ap.add_argument("--small", type=int, default=10_000, help="the size the growth ratios compare to (0: none)")
    ap.add_argument("--days", type=int, default=DAYS)
    ap.add_argument("--cycles", type=int, help="run a cycle on the last N days only, the days before stored as "
                                                "history (default: every day); for a machine that cannot afford a year")
    ap.add_argument("--ratings", type=int, default=2000)
    ap.add_argument("--saves", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=20, help="warm requests per page")
    ap.add_argument("--cache", metavar="DIR", help="keep each built year in DIR/year-N and reuse it")
    ap.add_argument("--build-only", action="store_true", help="build (or find) the years, measure nothing")
    ap.add_argument("--no-cold-each", action="store_true",
                    help="time each page's first request on one server, not one server start per page")
    ap.add_argument("--reuse-small", action="store_true",
                    help="with --cache: the small size's figures from the last run that measured them")
    ap.add_argument("--keep-work", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--build-child", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--urls", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.build_child:  # the daemon's stand-in: builds the year, prints and records its figures
        folder = Path(args.build_child)
        (folder / "building.pid").write_text(str(os.getpid()))
        figures = build_year(folder, args.papers, args.days, args.ratings, args.saves, json.loads(args.urls), args.cycles)
        figures["papers_asked"] = args.papers
        (folder / "built.json").write_text(json.dumps(figures, indent=1))
        print(f"# built {figures['papers']} papers in {figures['build_s']:.0f} s: {json.dumps(figures)}", flush=True)
        return 0
    started = time.perf_counter()
    allarxiv = args.papers >= 2_000_000
    with ExitStack() as stack:
        urls = stack.enter_context(stand_ins())
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-year-")))
        cache = Path(args.cache) if args.cache else tmp / "cache"
        work = cache if args.keep_work else tmp
        sizes = [s for s in (args.small, args.papers) if s]
        if args.build_only:
            for n in sizes:
                built(cache / f"year-{n}", n, args.days, args.ratings, args.saves, urls, args.cycles)
            return 0
        small = measured(args.small, cache, work, urls, args) if args.small else None
        big = measure(args.papers, cache, work, urls, args)
    missed = report(big, small, args.papers, allarxiv)
    print(f"# {time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.2f}")
    print("targets: all met" if not missed else f"targets missed: {', '.join(missed)}")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
