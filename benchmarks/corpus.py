"""Loading the evaluation inputs (corpus JSON Lines, text digests) through watcher's own readers.

Only for the scripts in benchmarks/; gzipped files are read transparently.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from watcher import formats
from watcher.convert import dedupe
from watcher.models import Paper


def read_file(path) -> list[Paper]:
    """The papers of one listing file in any supported format (``.gz`` allowed)."""
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return formats.read(data, path.name).papers


def read_corpus(paths) -> list[Paper]:
    """Papers of several listing files, each paper once (first listing wins)."""
    return dedupe([p for path in paths for p in read_file(path)])


read_digest = read_file
