"""Matching speed: 100 profiles against 10,000 papers (the bar: at most 2 s on one core).

    PYTHONPATH=. python benchmarks/bench_match.py

The papers are the corpus shipped in benchmarks/data/ repeated (with distinct ids) up to 10,000; the
profiles mix realistic queries with phrases, wildcards, fields, NOT, followed authors, excludes,
category restrictions and, for a few, example papers. Prints ``match_per_s value unit`` lines.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import read_corpus  # noqa: E402
from inputs import distinct_papers  # noqa: E402
from watcher.config import Profile  # noqa: E402
from watcher.matching.match import ProfileMatcher, prepare, select  # noqa: E402

QUERIES = [
    '("reinforcement learning" OR RLHF OR GRPO) AND (LLM OR "language model")',
    'ti:(diffusion OR "flow matching") AND (video OR image*)',
    '"vision-language model" AND (hallucinat* OR grounding)',
    'abs:"3D Gaussian splatting" OR ti:NeRF',
    '(segmentation OR detection) ANDNOT cat:cs.CL',
    'au:"Y. Zhang" OR ti:benchmark',
    '"retrieval-augmented generation" OR RAG',
    '(agent* OR "tool use") AND LLM NOT survey',
    'ti:("chain-of-thought" OR reasoning) AND (math* OR code)',
    '"medical imag*" OR radiology OR (clinical AND LLM)',
]


def make_profiles(papers, n: int = 100) -> list[ProfileMatcher]:
    out = []
    for i in range(n):
        query = QUERIES[i % len(QUERIES)]
        if i >= len(QUERIES):  # vary the queries so that term caches are not all shared
            query = f"({query}) OR ti:{papers[i * 37 % len(papers)].title.split()[0].strip(':,')}"
        profile = Profile(
            name=f"p{i}", title=f"P{i}", query=query,
            authors=("Sergey Levine", "Y. Bengio") if i % 5 == 0 else (),
            exclude="ti:survey" if i % 3 == 0 else None,
            categories=("cs.CV",) if i % 4 == 1 else (),
            min_score=1.0 if i % 2 else 0.0, max_papers=30,
        )
        examples = [papers[i], papers[i + 1]] if i % 10 == 3 else []
        out.append(ProfileMatcher(profile, examples))
    return out


def main() -> None:
    base = read_corpus()
    papers = distinct_papers(base, 10_000)
    matchers = make_profiles(base)
    t0 = time.perf_counter()
    batch = prepare(papers)
    t1 = time.perf_counter()
    matches = select(batch, matchers)
    t2 = time.perf_counter()
    pairs = len(papers) * len(matchers)
    print(f"match_prepare_s {t1 - t0:.3f} s")
    print(f"match_select_s {t2 - t1:.3f} s")
    print(f"match_total_s {t2 - t0:.3f} s  ({len(matchers)} profiles x {len(papers)} papers, "
          f"{len(matches)} selected)")
    print(f"match_per_s {pairs / (t2 - t0):.0f} paper-profile pairs/s")


if __name__ == "__main__":
    main()
