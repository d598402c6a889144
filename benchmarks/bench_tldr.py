"""How many extractive TL;DRs are a whole sentence that stands alone, on the shipped corpus.

    python benchmarks/bench_tldr.py [--limit N]

One line per figure, ``name value unit``: ``tldr_whole_share`` (not cut mid-sentence with
"…"), ``tldr_alone_share`` (no opening or dangling reference to what the abstract said before:
"These two approaches ...", "we close this gap"), ``tldr_tilde_share`` (a LaTeX ``~`` left
over) and ``tldr_good_share`` (all three right), over every abstract of the corpus
(``benchmarks/data``, 8,751 listing lines; ``--limit`` takes the first N), and the mean length.
Target: ``tldr_good_share`` >= 0.9.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import corpus_records  # noqa: E402

from watcher.present.tldr import extractive_tldr, tldr_quality  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N abstracts")
    args = parser.parse_args(argv)
    rows = [r for r in corpus_records() if r.get("summary")]
    seen, abstracts = set(), []
    for r in rows:  # a paper listed on several days counts once
        if r["id"] not in seen:
            seen.add(r["id"])
            abstracts.append((r["summary"], r.get("title", "")))
    abstracts = abstracts[: args.limit] if args.limit else abstracts
    start = time.perf_counter()
    tldrs = [extractive_tldr(a) for a, _ in abstracts]
    took = time.perf_counter() - start
    q = tldr_quality(tldrs)
    print(f"tldr_papers {len(tldrs)} abstracts")
    for name in ("whole", "alone", "tilde", "good"):
        print(f"tldr_{name}_share {q[name]:.3f} of {len(tldrs)}" + ("  (target >= 0.9)" if name == "good" else ""))
    print(f"tldr_mean_chars {sum(map(len, tldrs)) / max(len(tldrs), 1):.0f} characters")
    print(f"tldr_ms_per_abstract {1000 * took / max(len(tldrs), 1):.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
