"""Loading the evaluation inputs (corpus JSON Lines, text digests) through watcher's own readers.

Only for the scripts in benchmarks/; gzipped files are read transparently. Without paths, the
corpus is the copy shipped in ``benchmarks/data/`` (30 day files concatenated, see its README).
"""

from __future__ import annotations

import gzip
import json
from datetime import date
from pathlib import Path

from watcher import formats
from watcher.identity import merge_batch as dedupe
from watcher.models import Paper

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus.jsonl.gz"
CORPUS_FILES = DATA / "corpus-files.tsv"


def corpus_days() -> list[tuple[str, bytes]]:
    """The shipped corpus as its original day files: ``(file name, bytes)``, bytes unchanged."""
    lines = gzip.decompress(CORPUS.read_bytes()).splitlines(keepends=True)
    days, pos = [], 0
    for row in CORPUS_FILES.read_text().splitlines():
        name, count = row.split("\t")
        days.append((name, b"".join(lines[pos:pos + int(count)])))
        pos += int(count)
    if pos != len(lines):
        raise ValueError(f"{CORPUS_FILES} covers {pos} lines, {CORPUS} has {len(lines)}")
    return days


def corpus_records() -> list[dict]:
    """Every line of the shipped corpus as a dict, in file order (duplicate lines kept)."""
    return [json.loads(line) for _, data in corpus_days() for line in data.splitlines() if line.strip()]


def read_file(path) -> list[Paper]:
    """The papers of one listing file in any supported format (``.gz`` allowed)."""
    path = Path(path)
    return formats.read(path.read_bytes(), path.name).papers


def read_corpus(paths=None) -> list[Paper]:
    """Papers of several listing files (default: the shipped corpus, each paper ``announced`` on
    its file's date), each paper once (first listing wins)."""
    if paths is None:
        papers = []
        for name, data in corpus_days():
            for p in formats.read(data, name).papers:
                p.announced = p.announced or date.fromisoformat(name[:10])
                papers.append(p)
        return dedupe(papers)
    return dedupe([p for path in paths for p in read_file(path)])


read_digest = read_file
