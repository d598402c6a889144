"""Build watcher/data/doc_freq.txt.gz, the document-frequency table the matcher's idf uses.

    python benchmarks/build_doc_freq.py CORPUS.jsonl... > /dev/null

Counts, for each normalised word (watcher.util.text.words), how many papers' title + abstract hold
it. Words in fewer than MIN_DF papers are left out (the matcher treats them as rare).
"""

from __future__ import annotations

import gzip
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import read_corpus  # noqa: E402
from watcher.util.text import words  # noqa: E402

MIN_DF = 3
OUT = Path(__file__).resolve().parent.parent / "watcher" / "data" / "doc_freq.txt.gz"


def main(paths: list[str]) -> None:
    papers = read_corpus(paths)
    df: Counter[str] = Counter()
    for p in papers:
        df.update(set(words(p.title)) | set(words(p.abstract)))
    lines = [f"# papers {len(papers)}"] + [f"{w} {n}" for w, n in sorted(df.items()) if n >= MIN_DF]
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode())
    print(f"{OUT}: {len(papers)} papers, {len(lines) - 1} words", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
