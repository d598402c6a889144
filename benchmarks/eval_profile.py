"""Evaluate a profile against the real corpus and a seed digest of its topic.

    PYTHONPATH=. python benchmarks/eval_profile.py [--config config.toml] [--profile llm-rl]
        [--corpus DIR] [--seed FILE]... [--show-kept N] [--query Q] [--examples FILE]

Prints, per seed digest, how many of its papers the profile keeps, and the share of the corpus
it keeps. The bar for llm-rl: every seed paper kept, at most 7% of the corpus. The corpus and
seed default to the copies in the repository (benchmarks/data/, tests/data/); gzipped files work
too. ``--examples FILE`` also scores an examples-only profile ("more like these" of the papers
of FILE, e.g. the seed digest) over the corpus and counts how many of its papers the profile
keeps too (a proxy for its precision).
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
import tomllib
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from corpus import read_corpus, read_digest  # noqa: E402
from watcher.config import Profile, parse_config  # noqa: E402
from watcher.matching.match import ProfileMatcher, prepare  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(HERE.parent / "config.toml"))
    ap.add_argument("--profile", default="llm-rl", help="profile name in the config")
    ap.add_argument("--corpus", help="folder of corpus files (default: benchmarks/data/)")
    ap.add_argument("--seed", action="append")
    ap.add_argument("--query", help="try another query instead of the file's")
    ap.add_argument("--show-kept", type=int, default=0, help="print N kept corpus titles")
    ap.add_argument("--show-lowest", type=int, default=0, help="print the N lowest-scored kept")
    ap.add_argument("--examples", help="also score an examples-only profile of this digest file")
    args = ap.parse_args()

    path = Path(args.config)
    config = parse_config(tomllib.loads(path.read_text()), path)
    profile = config.profiles[args.profile]
    if args.query:
        profile = replace(profile, query=args.query)
    matcher = ProfileMatcher(profile)
    corpus = read_corpus(sorted(glob.glob(f"{args.corpus}/*.jsonl*")) if args.corpus else None)
    seeds = args.seed or [str(HERE.parent / "tests" / "data" / "llm-rl-2025-04-12.txt")]

    for seed in seeds:
        papers = read_digest(seed)
        kept = matcher.score_batch(prepare(papers))
        print(f"seed {Path(seed).name}: kept {len(kept)}/{len(papers)}")
        for i, p in enumerate(papers):
            if i not in kept:
                print(f"  MISSED {p.title[:90]!r}: {matcher.explain(p).reasons}")

    t0 = time.perf_counter()
    kept = matcher.score_batch(prepare(corpus))
    took = time.perf_counter() - t0
    share = len(kept) / len(corpus)
    print(f"corpus: kept {len(kept)}/{len(corpus)} = {100 * share:.2f}% ({took:.2f} s)")
    ranked = sorted(kept.values(), key=lambda m: -m.score)
    for m in ranked[: args.show_kept]:
        print(f"  {m.score:7.2f} {m.paper.title[:100]}")
    for m in ranked[len(ranked) - args.show_lowest:] if args.show_lowest else []:
        print(f"  {m.score:7.2f} {m.paper.title[:90]} {m.reasons[:4]}")

    if args.examples:
        alike = ProfileMatcher(Profile(name="examples", title="Examples", examples=(args.examples,)),
                               read_digest(args.examples))
        found = alike.score_batch(prepare(corpus))
        both = len(found.keys() & kept.keys())
        print(f"examples-only ({Path(args.examples).name}): kept {len(found)}/{len(corpus)}, "
              f"{both} of them ({100 * both / max(len(found), 1):.0f}%) kept by {args.profile} too")


if __name__ == "__main__":
    main()
