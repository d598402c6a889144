"""Does rating teach the digest? A simulated reader over the real corpus, one day after another.

    python benchmarks/eval_feedback.py [--topics rag,robot-learning,visual-generation]
                                       [--judgements FILE --query Q] [--cold N] [--days N]
                                       [--set NAME=VALUE] [--json]

Each corpus day (30 weekday listings, benchmarks/data/) is stored as that day's news, then the
digest is built and "delivered" by watcher's own pipeline (``pipeline.deliver_digest`` through a
``stdout`` channel, the ledger recording what was shown); the reader rates every paper shown, up
when the judgements call it relevant, down otherwise (``ratings.apply_rating``, as ``watcher
rate`` does), and the next day follows. Precision, recall and F1 count the papers shown against
the relevant papers of the days, over all days and over the last 10 days.

For each topic (default: the three judged ones, data/relevance.README.md; each with one plain
query, TOPICS, fixed before anything was tuned), in one go:

* ``query``: the profile query alone, never rated (the baseline);
* ``query+ratings``: the same query, the reader rating every day;
* ``cold+ratings``: no query; before day 1 the reader has rated up the first N relevant papers
  of the corpus (``--cold``, default 30; they are then history, not news, and are left out of
  the counts), and goes on rating every day;
* ``cold``: the same N liked papers, never rated again (what the likes alone do).

Targets, per topic: query+ratings cuts the baseline's false positives by at least 15% with
recall at most 2 points lower and F1 not lower; cold+ratings reaches F1 >= 0.80 over the last
10 days. Exit status 1 when a target is missed. ``--set`` overrides a constant of
:mod:`watcher.learn` (``choose_learner.py`` uses it to choose them); ``--judgements`` and
``--query`` run any other topic.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from corpus import corpus_days  # noqa: E402
from watcher import formats  # noqa: E402
from watcher.config import parse_config  # noqa: E402
from watcher.pipeline import Cycle, Deliver, deliver_digest  # noqa: E402
from watcher.ratings import apply_rating  # noqa: E402
from watcher.store import Store, iso  # noqa: E402

# One plain query per topic, fixed before anything was tuned: the broad reference queries of the
# judgements' README (data/relevance.README.md), as a reader would write them.
TOPICS = {
    "rag": '"retrieval-augmented" OR RAG OR "retrieval augmented"',
    "robot-learning": 'robot OR robotic OR manipulation OR embodied OR "vision-language-action" OR VLA '
                      'OR grasping OR locomotion OR humanoid',
    "visual-generation": 'diffusion OR "flow matching" OR "text-to-image" OR "text-to-video" '
                         'OR "image generation" OR "video generation" OR "image editing"',
}
LAST = 10  # the "last days" window


@dataclass
class Tally:
    """Per day: papers shown, relevant among them, relevant in the day."""

    days: list[tuple[int, int, int]] = field(default_factory=list)

    def scores(self, last: int | None = None) -> dict:
        days = self.days[-last:] if last else self.days
        shown = sum(d[0] for d in days)
        hit = sum(d[1] for d in days)
        relevant = sum(d[2] for d in days)
        p = hit / shown if shown else 0.0
        r = hit / relevant if relevant else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return {"shown": shown, "tp": hit, "fp": shown - hit, "relevant": relevant,
                "precision": p, "recall": r, "f1": f}


def config_for(query: str | None, tmp: Path, extra: dict | None = None):
    profile = {"title": "Topic", "max_papers": 200, **(extra or {})}  # extra: eval_zotero.py's examples
    if query:
        profile["query"] = query
    data = {
        "watcher": {"database": str(tmp / "eval.db")},
        "profile": {"topic": profile},
        "digest": {"daily": {"profiles": ["topic"], "channels": ["sink"], "every": "1d",
                             "lookback": "1d"}},
        "channel": {"sink": {"type": "stdout"}},
    }
    return parse_config(data, tmp / "config.toml")


def day_papers() -> list[tuple[date, list]]:
    out = []
    for name, data in corpus_days():
        day = date.fromisoformat(name[:10])
        papers = formats.read(data, name).papers
        for p in papers:
            p.announced = p.announced or day
        out.append((day, papers))
    return out


def simulate(days, judged: dict[str, int], query: str | None, rate: bool, liked: list[str],
             tmp: Path, *, profile: dict | None = None, prepare=None) -> Tally:
    """One reader over all days; returns the daily tally. ``profile``: more keys of the profile;
    ``prepare(config, store)``: called once the database is open, before day 1."""
    config = config_for(query, tmp, profile)
    dcfg = config.digests["daily"]
    tally = Tally()
    (tmp / "eval.db").unlink(missing_ok=True)
    with Store.open(tmp / "eval.db") as store:
        if prepare:
            prepare(config, store)
        if liked:  # the reader's liked papers: history before day 1, rated up
            first = datetime.combine(days[0][0] - timedelta(days=1), datetime.min.time(), timezone.utc)
            wanted = set(liked)
            store.upsert([p for _, ps in days for p in ps if p.key in wanted], first, backfill=True)
            for key in liked:
                apply_rating(store, "up", "topic", key, "benchmark", profiles=config.profiles, now=first)
        for day, papers in days:
            now = datetime.combine(day, datetime.min.time(), timezone.utc) + timedelta(hours=21)
            counts = store.upsert(papers, now)
            new = set(counts.new)
            reports = deliver_digest(config, store, dcfg, Cycle(now=now), Deliver(stdout=io.StringIO()))
            assert not any(r.error for r in reports), reports
            shown = [r["paper"] for r in store.db.query(
                "SELECT paper FROM deliveries WHERE digest = 'daily' AND delivered_at = ?", [iso(now)])]
            relevant = sum(1 for k in new if judged.get(k))
            hits = sum(1 for k in shown if judged.get(k))
            tally.days.append((len(shown), hits, relevant))
            if rate:
                for key in shown:
                    apply_rating(store, "up" if judged.get(key) else "down", "topic", key,
                                 "benchmark", profiles=config.profiles, now=now)
    return tally


def line(name: str, s: dict) -> str:
    return (f"{name:<22} shown {s['shown']:4d}  fp {s['fp']:3d}  relevant {s['relevant']:3d}  "
            f"P {s['precision']:.3f}  R {s['recall']:.3f}  F1 {s['f1']:.3f}")


def read_judgements(path: Path) -> dict[str, int]:
    judged = {}
    for row in path.read_text().splitlines():
        if row.strip():
            item = json.loads(row)
            judged[item["id"]] = int(item["relevant"])
    return judged


def set_constants(pairs: list[str]) -> None:
    """``NAME=VALUE`` overrides of :mod:`watcher.learn`'s constants (for choosing them)."""
    from watcher import learn

    for pair in pairs:
        name, _, value = pair.partition("=")
        if not hasattr(learn, name) or not name.isupper():
            raise SystemExit(f"eval_feedback: no constant {name!r} in watcher.learn")
        setattr(learn, name, type(getattr(learn, name))(value))


def run_topic(name: str, judged: dict, query: str, days, cold: int, only: list[str]) -> dict:
    """The runs of one topic: ``run name -> Tally``."""
    import tempfile

    seen: set = set()
    order = [p.key for _, ps in days for p in ps if not (p.key in seen or seen.add(p.key))]
    liked = [k for k in order if judged.get(k)][:cold]
    runs = {
        "query": (query, False, []),
        "query+ratings": (query, True, []),
        "cold+ratings": (None, True, liked),
        "cold": (None, False, liked),
    }
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in only:
            q, rate, likes = runs[run]
            results[run] = simulate(days, judged, q, rate, likes, Path(tmp))
    return results


def judge(results: dict) -> dict:
    """The targets of one topic: figures and whether each is met (None: not run)."""
    out = {}
    if "query" in results and "query+ratings" in results:
        base, rated = results["query"].scores(), results["query+ratings"].scores()
        out["fp_cut"] = 1 - rated["fp"] / base["fp"] if base["fp"] else 0.0
        out["recall_change"] = (rated["recall"] - base["recall"]) * 100
        out["f1_change"] = rated["f1"] - base["f1"]
        out["ratings_met"] = (out["fp_cut"] >= 0.15 and out["recall_change"] >= -2.0
                              and out["f1_change"] >= 0)
    if "cold+ratings" in results:
        out["cold_f1"] = results["cold+ratings"].scores(LAST)["f1"]
        out["cold_met"] = out["cold_f1"] >= 0.80
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default=",".join(TOPICS),
                    help=f"comma-separated, of {', '.join(TOPICS)} (default: all)")
    ap.add_argument("--judgements", help="another topic: its judgements (JSON Lines) ...")
    ap.add_argument("--query", help="... and its query")
    ap.add_argument("--cold", type=int, default=30, help="liked papers of the cold start")
    ap.add_argument("--only", default="query,query+ratings,cold+ratings,cold")
    ap.add_argument("--days", type=int, help="only the first N days (a smoke test; targets not judged)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a constant of watcher.learn (to choose them)")
    ap.add_argument("--json", action="store_true", help="also print each topic's figures as JSON")
    args = ap.parse_args()

    set_constants(args.set)
    if args.judgements:
        if not args.query:
            ap.error("--judgements needs --query")
        topics = {Path(args.judgements).stem: (Path(args.judgements), args.query)}
    else:
        names = args.topics.split(",")
        unknown = [n for n in names if n not in TOPICS]
        if unknown:
            ap.error(f"unknown topic {unknown[0]!r} (one of {', '.join(TOPICS)})")
        topics = {n: (HERE / "data" / f"{n}.jsonl", TOPICS[n]) for n in names}
    days = day_papers()[: args.days] if args.days else day_papers()
    only = args.only.split(",")
    ok = True
    started = time.perf_counter()
    for name, (path, query) in topics.items():
        judged = read_judgements(path)
        results = run_topic(name, judged, query, days, args.cold, only)
        print(f"== {name}: {len(days)} days, {sum(judged.values())} relevant; query: {query}")
        for label, last in (("all days", None), (f"last {LAST} days", LAST)):
            print(f"-- {label}")
            for run, tally in results.items():
                print(line(run, tally.scores(last)))
        figures = judge(results)
        if args.json:
            print("json " + json.dumps({"topic": name, **figures, **{
                run: t.scores() for run, t in results.items()}, "cold_last": results[
                    "cold+ratings"].scores(LAST) if "cold+ratings" in results else None}))
        if args.days:
            print(f"({args.days} days only: targets not judged)")
            continue
        if "ratings_met" in figures:
            ok &= figures["ratings_met"]
            print(f"ratings: false positives cut {figures['fp_cut']:.1%} (target >= 15%), recall "
                  f"{figures['recall_change']:+.1f} points (target >= -2), F1 {figures['f1_change']:+.3f} "
                  f"(target >= 0): {'met' if figures['ratings_met'] else 'MISSED'}")
        if "cold_met" in figures:
            ok &= figures["cold_met"]
            print(f"cold start from {args.cold} liked papers, F1 over the last {LAST} days: "
                  f"{figures['cold_f1']:.3f} (target >= 0.80): {'met' if figures['cold_met'] else 'MISSED'}")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
