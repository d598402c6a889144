"""Paper records as JSON: watcher's own ``--to json`` array, and JSON Lines of paper records
such as the daily-arXiv crawl (``{"id", "title", "summary", "authors", "categories", ...}``) or
the flat Hugging Face export (``paper_publishedAt``, ``upvotes``, ``ai_keywords``); a record of
another layout keeps the ``doi``, ``url``, ``journal``, ``journal_ref``, ``pmid`` and
``updated`` it names (a list written by hand or by another tool).

Hugging Face ``/api/daily_papers`` responses (objects with a ``paper`` member) are not read here
but by :mod:`watcher.formats.hf_json`.
"""

from __future__ import annotations

import json
from datetime import date

from ..errors import InputError
from ..models import Paper, clean_text, parse_arxiv_id, parse_iso
from . import Listing, bound_json, decode_text
from .hf_json import PAPER_KEY

_TITLE_KEYS = ('"title"',)


def sniff(head: str) -> bool:
    """A JSON array of objects with a title, an empty array (``--to json`` of an empty listing,
    an empty Hugging Face day), or JSON Lines whose first line is such an object."""
    stripped = head.lstrip()
    if not stripped.startswith(("[", "{")):
        return False
    if stripped.startswith("[") and stripped[1:].strip() == "]":
        return True
    first = stripped.split("\n", 1)[0]
    if stripped.startswith("{"):
        try:
            obj = json.loads(first)
        except (ValueError, RecursionError):
            return False
        return isinstance(obj, dict) and "title" in obj and "paper" not in obj
    return '"title"' in stripped[:4000] and not PAPER_KEY.search(stripped[:4000])


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse an array or JSON Lines; InputError naming the record that is not a paper."""
    text = decode_text(data, origin).strip()
    bound_json(text, origin)
    if text.startswith("["):
        try:
            records = json.loads(text)
        except (ValueError, RecursionError) as e:  # RecursionError: [[[[… nested past the stack
            raise InputError(f"{origin}: invalid JSON: {e}") from e
        numbered = list(enumerate(records, start=1))
        what = "item"
    else:
        numbered = []
        # split at "\n" only: str.splitlines() would also cut at U+2028 and friends, which JSON
        # allows unescaped inside strings
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                numbered.append((number, json.loads(line)))
            except (ValueError, RecursionError) as e:
                raise InputError(f"{origin}: line {number}: invalid JSON: {e}") from e
        what = "line"
    papers = [record_to_paper(rec, f"{origin}: {what} {n}") for n, rec in numbered]
    return Listing(papers=papers)



def _day(value) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def _str(value) -> str | None:
    """A string field: strings kept, numbers written out, anything else (lists, objects) None."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strings(value) -> list[str]:
    """A list of strings (author objects give their ``name``); other items are skipped."""
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("name")
        text = _str(item)
        if text and text.strip():
            out.append(" ".join(text.split()))
    return out


# watcher's own layout (``--to json``): the type each field must have.
_OWN_TYPES = {"arxiv_id": str, "version": int, "abstract": str, "published": str, "updated": str,
              "primary_category": str, "comment": str, "journal_ref": str, "doi": str, "url": str,
              "announce_type": str, "upvotes": int, "source": str, "announced": str,
              "author_count": int, "organization": str, "github_repo": str, "pmid": str,
              "pmcid": str, "journal": str}
_OWN_LISTS = ("authors", "categories", "ai_keywords", "dois", "venues", "sources")


def _own_layout(rec: dict, where: str) -> Paper:
    for key, kind in _OWN_TYPES.items():
        value = rec.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise InputError(f"{where}: {key} must be a {kind.__name__} or null, not {type(value).__name__}")
    for key in _OWN_LISTS:
        value = rec.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            raise InputError(f"{where}: {key} must be a list of strings")
    clean = {k: v for k, v in rec.items() if v is not None}
    if clean.get("arxiv_id"):
        ident = parse_arxiv_id(clean["arxiv_id"])
        if not ident:
            raise InputError(f"{where}: arxiv_id {clean['arxiv_id']!r} is not an arXiv id")
        clean["arxiv_id"] = ident[0]
        clean.setdefault("version", ident[1])
    try:
        return Paper.from_json(clean)
    except (TypeError, ValueError) as e:
        raise InputError(f"{where}: {e}") from e


def record_to_paper(rec: object, where: str) -> Paper:
    """One JSON record (any of the layouts above) as a Paper; InputError when it has no title
    or (in watcher's own layout) a field of the wrong type. Fields of other layouts that have
    an unexpected type are left unknown."""
    if not isinstance(rec, dict) or not isinstance(rec.get("title"), str) or not clean_text(rec["title"]).strip():
        raise InputError(f"{where}: not a paper record (needs a \"title\" string)")
    if "arxiv_id" in rec or "announce_type" in rec:  # watcher's own layout
        return _own_layout(rec, where)
    ident = parse_arxiv_id(_str(rec.get("id")) or _str(rec.get("abs")) or "")
    categories = _strings(rec.get("categories"))
    return Paper(
        title=" ".join(rec["title"].split()),
        arxiv_id=ident[0] if ident else None,
        version=ident[1] if ident else None,
        authors=_strings(rec.get("authors")),
        abstract=" ".join((_str(rec.get("summary")) or _str(rec.get("abstract")) or "").split()),
        published=parse_iso(rec.get("published")) or parse_iso(rec.get("paper_publishedAt")),
        categories=categories,
        primary_category=categories[0] if categories else None,
        comment=_str(rec.get("comment")),
        url=_str(rec.get("abs")) or _str(rec.get("url")),
        doi=_str(rec.get("doi")),  # a record written by hand or another tool: what it names is kept
        journal=_str(rec.get("journal")),
        journal_ref=_str(rec.get("journal_ref")),
        pmid=_str(rec.get("pmid")),
        updated=parse_iso(rec.get("updated")),
        upvotes=_int(rec.get("upvotes")),
        ai_keywords=_strings(rec.get("ai_keywords")),
        github_repo=_str(rec.get("githubRepo")),
        announced=_day(rec.get("file_date")),
        source="json",
    )
