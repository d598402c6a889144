"""Hugging Face Daily Papers API JSON (``/api/daily_papers?date=YYYY-MM-DD``).

A JSON array of items ``{"paper": {...}, "publishedAt", "title", ...}``. Every field-set
generation seen since 2024 is read (fields only ever got added):

* 2024: ``paper.{id, authors[{name, hidden}], publishedAt, title, summary, upvotes}``;
* 2025-01: ``submittedBy``, ``paper.discussionId``;
* 2025-04: ``paper.{submittedOnDailyAt, githubRepo}``;
* 2025-09: ``paper.{ai_summary, ai_keywords}``;
* 2026: ``organization`` (item and paper), ``paper.{githubStars, projectPage}``.

Kept: upvotes, organisation (its full name), GitHub repo, AI keywords, author count, and
``announced`` = the day the paper was put on Daily Papers (a source fetching ``?date=D``
overrides it with D). Also accepted: an archive wrapper ``{"data": [...]}``. ``[]`` (a day
without papers) is an empty listing; anything else that is not such JSON is an InputError.
An item that is not a paper (no title, not an object) is skipped with a warning, like a broken
arXiv entry; when no item at all is a paper the file is an InputError.
"""

from __future__ import annotations

import re
from datetime import date

from ..errors import InputError
from ..models import Paper, clean_text, parse_arxiv_id, parse_iso
from . import Listing, load_json, read_entries


# the key "paper": (a value "paper", say a keyword or a comment, is not the API's layout)
PAPER_KEY = re.compile(r'"paper"\s*:')
_EMPTY_ARCHIVE = re.compile(r'\{\s*"data"\s*:\s*\[\s*\]\s*\}\s*')  # {"data": []}: a day without papers


def sniff(head: str) -> bool:
    """A JSON array (or ``{"data": [...]}``) whose items have a ``"paper"`` object."""
    stripped = head.lstrip()
    if _EMPTY_ARCHIVE.fullmatch(stripped):
        return True
    if stripped.startswith("["):
        return bool(PAPER_KEY.search(stripped[:2000])) and stripped[1:].lstrip().startswith("{")
    return stripped.startswith("{") and '"data"' in stripped[:400] and bool(PAPER_KEY.search(stripped[:4000]))



def _org(*candidates) -> str | None:
    for org in candidates:
        if isinstance(org, dict) and (org.get("fullname") or org.get("name")):
            return " ".join(str(org.get("fullname") or org.get("name")).split())
        if isinstance(org, str) and org.strip():
            return org.strip()
    return None


def item_to_paper(item: object, where: str) -> Paper:
    """One API item as a Paper; InputError naming the item when it is not a paper."""
    if not isinstance(item, dict):
        raise InputError(f"{where}: not an object")
    paper = item.get("paper")
    if not isinstance(paper, dict):
        raise InputError(f'{where}: no "paper" object (not a Daily Papers item)')
    raw_title = paper.get("title") or item.get("title")
    if not isinstance(raw_title, str) or not clean_text(raw_title).strip():
        raise InputError(f"{where}: item has no title")
    raw_id = str(paper.get("id") or "")
    ident = parse_arxiv_id(raw_id)
    people = paper.get("authors") if isinstance(paper.get("authors"), list) else []
    authors = [" ".join(str(a.get("name", "")).split()) for a in people
               if isinstance(a, dict) and not a.get("hidden")]
    daily = parse_iso(paper.get("submittedOnDailyAt")) or parse_iso(item.get("publishedAt"))
    upvotes = paper.get("upvotes")
    keywords = paper.get("ai_keywords") if isinstance(paper.get("ai_keywords"), list) else []
    repo = paper.get("githubRepo") if isinstance(paper.get("githubRepo"), str) else None
    return Paper(
        title=" ".join(raw_title.split()),
        arxiv_id=ident[0] if ident else None,
        version=ident[1] if ident else None,
        authors=[a for a in authors if a],
        abstract=" ".join(str(paper.get("summary") or item.get("summary") or "").split()),
        published=parse_iso(paper.get("publishedAt")),
        url=f"https://huggingface.co/papers/{raw_id}" if raw_id else None,
        upvotes=upvotes if isinstance(upvotes, int) and not isinstance(upvotes, bool) else None,
        announced=daily.date() if daily else None,
        author_count=len(people) or None,
        organization=_org(item.get("organization"), paper.get("organization")),
        github_repo=repo or None,
        ai_keywords=[str(k) for k in keywords if isinstance(k, str)],
        source="hf-daily",
    )


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse a daily_papers response; InputError for invalid JSON or when no item is a paper
    (single items that are not papers are skipped with a warning)."""
    doc = load_json(data, origin)
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if not isinstance(doc, list):
        what = "an error object" if isinstance(doc, dict) and "error" in doc else type(doc).__name__
        detail = f": {doc['error']}" if isinstance(doc, dict) and "error" in doc else ""
        raise InputError(f"{origin}: expected a JSON array of daily papers, got {what}{detail}")
    return read_entries(Listing(), origin, enumerate(doc, start=1),
                        lambda numbered: item_to_paper(numbered[1], f"item {numbered[0]}"))
