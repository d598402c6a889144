"""The shipped sample listings (``watcher/samples/``), read instead of the network by
``watcher once --sample``. Each file is a real captured listing in a supported format; a file
named with a date (``corpus-2025-04-11.jsonl.gz``) files its papers under that date."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from functools import cache
from pathlib import Path

from .. import formats
from ..models import Paper, title_fingerprint
from .base import FetchResult, Source

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples"


IDS_SUFFIX = ".arxiv-ids.tsv"  # beside a listing that names papers by title alone: their arXiv ids


def sample_files() -> list[Path]:
    """The sample listing files, in name order."""
    return sorted(p for p in SAMPLES_DIR.iterdir()
                  if p.is_file() and p.name != "README.md" and not p.name.endswith(IDS_SUFFIX))


def _known_ids(path: Path) -> dict[str, str]:
    """title fingerprint -> arXiv id, from the ``NAME.arxiv-ids.tsv`` beside listing ``NAME.*``
    (``id<TAB>title`` lines; ``#`` comments)."""
    ids = path.with_name(path.name.split(".", 1)[0] + IDS_SUFFIX)
    if not ids.exists():
        return {}
    rows = (line.split("\t", 1) for line in ids.read_text("utf-8").splitlines()
            if line.strip() and not line.startswith("#"))
    return {title_fingerprint(title): arxiv_id.strip() for arxiv_id, title in rows}


def read_samples() -> list[Paper]:
    """Every paper of every sample file, ``announced`` filled from the listing or file date
    (fresh copies: ``--sample`` reads them twice, for today's date and for the fetch)."""
    return [replace(p) for p in _parsed_samples()]


@cache
def _parsed_samples() -> tuple[Paper, ...]:
    papers: list[Paper] = []
    for path in sample_files():
        listing = formats.read(path.read_bytes(), path.name)
        formats.file_dated(listing, path.name)
        known = _known_ids(path)
        for p in listing.papers:
            p.source, p.sources = "sample", ["sample"]
            if not p.arxiv_id and not p.url and (found := known.get(p.fingerprint)):
                p.arxiv_id = found  # its arXiv page: every paper of the sample has a link
        papers.extend(listing.papers)
    return tuple(papers)


def sample_today(papers: list[Paper]) -> date:
    """The newest date in the sample: what ``--sample`` takes as today."""
    return max(p.day for p in papers if p.day)


class SampleSource(Source):
    """A source that returns the shipped samples."""

    def fetch(self, state: dict) -> FetchResult:
        """All sample papers (the store reports them unchanged after the first run)."""
        return FetchResult(papers=read_samples(), state=state)
