"""Minimal readers for the evaluation inputs: the corpus JSONL and the text digest (SPEC §5).

Only for the scripts in benchmarks/; the product's readers live in watcher.sources.
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone
from pathlib import Path

from watcher.models import Paper


def _open(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def read_corpus(paths) -> list[Paper]:
    """Papers of corpus files (lines {"id","categories","authors","title","comment","summary"}),
    each id once (first listing wins)."""
    seen: dict[str, Paper] = {}
    for path in paths:
        with _open(Path(path)) as f:
            for line in f:
                d = json.loads(line)
                if d["id"] in seen:
                    continue
                seen[d["id"]] = Paper(
                    title=" ".join(d["title"].split()), arxiv_id=d["id"], authors=d["authors"],
                    abstract=" ".join(d["summary"].split()), categories=d["categories"],
                    primary_category=d["categories"][0] if d["categories"] else None,
                    comment=d.get("comment"),
                )
    return list(seen.values())


def read_digest(path) -> list[Paper]:
    """Papers of a text digest: header line, blank, then title / Authors+Date / abstract blocks."""
    with _open(Path(path)) as f:
        blocks = f.read().split("\n\n")[1:]
    papers = []
    for title, meta, abstract in zip(blocks[0::3], blocks[1::3], blocks[2::3]):
        authors_line, _, date_line = meta.partition("\n")
        published = datetime.strptime(date_line.removeprefix("Date:"), "%Y-%m-%d %H:%M:%S")
        papers.append(Paper(
            title=title, authors=[a.strip() for a in authors_line.removeprefix("Authors:").split(",")],
            abstract=abstract, published=published.replace(tzinfo=timezone.utc),
        ))
    return papers
