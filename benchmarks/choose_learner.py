"""How the rating learner's constants were chosen: leave one topic out.

    python benchmarks/choose_learner.py [--days N]

Runs ``eval_feedback``'s simulated reader (its own functions, the whole pipeline) on the three
judged topics for each candidate setting of :mod:`watcher.matching.learn`'s constants in SETTINGS. Then, for
each topic in turn, picks the setting that does best on the *other two* (most targets met, then
the higher mean F1 of the rated runs) and reports how that setting does on the topic left out.
The setting shipped is the one picked most often (ties: the first of SETTINGS); the README's table
comes from ``eval_feedback.py`` with it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from eval_feedback import TOPICS, HERE, day_papers, judge, read_judgements, run_topic, set_constants

# candidate settings (not a full product: each costs a full simulation of the three topics)
SETTINGS = [
    {"MODEL_AGREE": "2", "KEEP_QUANTILE": "0.05"},
    {"MODEL_AGREE": "2", "KEEP_QUANTILE": "0.02"},
    {"MODEL_AGREE": "1", "KEEP_QUANTILE": "0.05"},
    {"MODEL_AGREE": "0", "KEEP_QUANTILE": "0.05"},
    {"MODEL_AGREE": "2", "KEEP_QUANTILE": "0.035"},  # added after the first four had run
    {"MODEL_AGREE": "2", "KEEP_QUANTILE": "0.05", "NO_QUERY_F1": "1"},  # added after the first five
]


LINE = re.compile(r"setting \d+ (\{.*\}) ([\w-]+): FP cut (-?[\d.]+)%, recall ([-+][\d.]+), "
                  r"F1 ([-+][\d.]+), cold F1 ([\d.]+)")


def figures_line(k: int, setting: dict, topic: str, f: dict) -> str:
    return (f"setting {k} {json.dumps(setting)} {topic}: FP cut {f['fp_cut']:.1%}, recall "
            f"{f['recall_change']:+.1f}, F1 {f['f1_change']:+.3f}, cold F1 {f['cold_f1']:.3f}")


def read_lines(path: Path) -> dict[tuple[str, str], dict]:
    """Figures printed by an earlier run (``--from``): ``(setting as JSON, topic) -> figures``."""
    out = {}
    for line in path.read_text().splitlines():
        if m := LINE.match(line):
            cut, recall, f1, cold = (float(g) for g in m.groups()[2:])
            out[json.dumps(json.loads(m.group(1))), m.group(2)] = {
                "fp_cut": cut / 100, "recall_change": recall, "f1_change": f1, "cold_f1": cold,
                "ratings_met": cut >= 15 and recall >= -2 and f1 >= 0, "cold_met": cold >= 0.80}
    return out


def merit(rows: list[dict]) -> tuple:
    """Targets met on the topics, then the sum of the rated runs' F1 gains and cold start F1s."""
    met = sum(bool(f["ratings_met"]) + bool(f["cold_met"]) for f in rows)
    return (met, sum(f["f1_change"] + f["cold_f1"] for f in rows))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int)
    ap.add_argument("--from", dest="earlier", type=Path, metavar="FILE",
                    help="reuse the figures an earlier run printed (saved to FILE) for the settings it ran")
    args = ap.parse_args()
    days = day_papers()[: args.days] if args.days else day_papers()
    earlier = read_lines(args.earlier) if args.earlier else {}
    judged = {t: read_judgements(HERE / "data" / f"{t}.jsonl") for t in TOPICS}
    base: dict = {}
    table: dict[tuple[int, str], dict] = {}
    started = time.perf_counter()
    for k, setting in enumerate(SETTINGS):
        set_constants([f"{n}={v}" for n, v in setting.items()])
        for t in TOPICS:
            f = earlier.get((json.dumps(setting), t))
            if f is None:
                if t not in base:
                    base[t] = run_topic(t, judged[t], TOPICS[t], days, 30, ["query"])["query"]
                runs = run_topic(t, judged[t], TOPICS[t], days, 30, ["query+ratings", "cold+ratings"])
                runs["query"] = base[t]
                f = judge(runs)
            table[k, t] = f
            print(figures_line(k, setting, t, f), flush=True)
    picks = []
    for held in TOPICS:
        train = [t for t in TOPICS if t != held]
        best = max(range(len(SETTINGS)), key=lambda k: (merit([table[k, t] for t in train]), -k))
        picks.append(best)
        f = table[best, held]
        print(f"left out {held}: picked setting {best} {json.dumps(SETTINGS[best])} on {', '.join(train)}; "
              f"on {held}: FP cut {f['fp_cut']:.1%}, recall {f['recall_change']:+.1f} points, "
              f"F1 {f['f1_change']:+.3f}, cold F1 {f['cold_f1']:.3f}")
    chosen = max(set(picks), key=lambda k: (picks.count(k), -k))
    print(f"chosen (picked most often): setting {chosen} {json.dumps(SETTINGS[chosen])} "
          f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
