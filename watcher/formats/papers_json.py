"""Paper records as JSON: watcher's own ``--to json`` array, and JSON Lines of paper records
such as the daily-arXiv crawl (``{"id", "title", "summary", "authors", "categories", ...}``) or
the flat Hugging Face export (``paper_publishedAt``, ``upvotes``, ``ai_keywords``).

Hugging Face ``/api/daily_papers`` responses (objects with a ``paper`` member) are not read here
but by :mod:`watcher.formats.hf_json`.
"""

from __future__ import annotations

import json
from datetime import date

from ..errors import InputError
from ..models import Paper, parse_arxiv_id, parse_iso
from . import Listing, decode_text

_TITLE_KEYS = ('"title"',)


def sniff(head: str) -> bool:
    """A JSON array of objects with a title, or JSON Lines whose first line is such an object."""
    stripped = head.lstrip()
    if not stripped.startswith(("[", "{")):
        return False
    first = stripped.split("\n", 1)[0]
    if stripped.startswith("{"):
        try:
            obj = json.loads(first)
        except ValueError:
            return False
        return isinstance(obj, dict) and "title" in obj and "paper" not in obj
    return '"title"' in stripped[:4000] and '"paper"' not in stripped[:4000]


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse an array or JSON Lines; InputError naming the record that is not a paper."""
    text = decode_text(data, origin).strip()
    if text.startswith("["):
        try:
            records = json.loads(text)
        except ValueError as e:
            raise InputError(f"{origin}: invalid JSON: {e}") from None
        numbered = list(enumerate(records, start=1))
        what = "item"
    else:
        numbered = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                numbered.append((number, json.loads(line)))
            except ValueError as e:
                raise InputError(f"{origin}: line {number}: invalid JSON: {e}") from None
        what = "line"
    papers = [record_to_paper(rec, f"{origin}: {what} {n}") for n, rec in numbered]
    return Listing(papers=papers)



def record_to_paper(rec: object, where: str) -> Paper:
    """One JSON record (any of the layouts above) as a Paper; InputError when it has no title."""
    if not isinstance(rec, dict) or not isinstance(rec.get("title"), str) or not rec["title"].strip():
        raise InputError(f"{where}: not a paper record (needs a \"title\" string)")
    if "arxiv_id" in rec or "announce_type" in rec:  # watcher's own layout
        try:
            return Paper.from_json(rec)
        except (TypeError, ValueError) as e:
            raise InputError(f"{where}: {e}") from None
    ident = parse_arxiv_id(str(rec.get("id") or rec.get("abs") or ""))
    authors = [a["name"] if isinstance(a, dict) else str(a) for a in rec.get("authors") or []]
    categories = [str(c) for c in rec.get("categories") or []]
    file_date = rec.get("file_date")
    return Paper(
        title=" ".join(rec["title"].split()),
        arxiv_id=ident[0] if ident else None,
        version=ident[1] if ident else None,
        authors=authors,
        abstract=" ".join(str(rec.get("summary") or rec.get("abstract") or "").split()),
        published=parse_iso(rec.get("published") or rec.get("paper_publishedAt")),
        categories=categories,
        primary_category=categories[0] if categories else None,
        comment=rec.get("comment") or None,
        url=rec.get("abs") or None,
        upvotes=rec.get("upvotes"),
        ai_keywords=list(rec.get("ai_keywords") or []),
        github_repo=rec.get("githubRepo") or None,
        announced=date.fromisoformat(file_date[:10]) if isinstance(file_date, str) else None,
        source="json",
    )
