"""arXiv OAI-PMH ``ListRecords`` responses with ``metadataPrefix=arXiv``.

Each ``<record>`` carries an ``<arXiv>`` element: id, created (first version's day), updated,
authors as keyname/forenames/suffix, title, space-separated categories (primary first), comments,
journal-ref, doi, abstract. Deleted records are skipped. The ``resumptionToken`` (None when this
is the last page) is kept on the listing as ``next_token`` and ``completeListSize`` as ``total``.
An OAI ``<error>`` is an InputError (:class:`OaiError`), except ``noRecordsMatch``, which is
simply an empty listing.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper, parse_arxiv_id
from . import Listing, no_paper_at_all, skip_entry
from .xmlsafe import gc_paused, is_xml, iter_ends, text

OAI = "{http://www.openarchives.org/OAI/2.0/}"
AX = "{http://arxiv.org/OAI/arXiv/}"
_RECORD, _ERROR, _TOKEN, _RESPONSE_DATE = (
    OAI + n for n in ("record", "error", "resumptionToken", "responseDate"))
_TAGS = {_RECORD, _ERROR, _TOKEN, _RESPONSE_DATE}


class OaiError(InputError):
    """The OAI-PMH server answered with an error; ``code`` is the OAI error code."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


def sniff(head: str) -> bool:
    """An OAI-PMH response."""
    return is_xml(head) and "<OAI-PMH" in head


def _day(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value[:10]).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _author(elem) -> str:
    parts = [text(elem.find(AX + "forenames")), text(elem.find(AX + "keyname")),
             text(elem.find(AX + "suffix"))]
    return " ".join(p for p in parts if p)


def record_to_paper(record) -> Paper | None:
    """One ``<record>`` as a Paper; None for a deleted record."""
    header = record.find(OAI + "header")
    if header is not None and header.get("status") == "deleted":
        return None
    meta = record.find(f"{OAI}metadata/{AX}arXiv")
    if meta is None:
        ident = text(header.find(OAI + "identifier")) if header is not None else "?"
        raise InputError(f"record {ident} has no arXiv metadata (metadataPrefix=arXiv?)")
    raw_id = text(meta.find(AX + "id"))
    ident = parse_arxiv_id(raw_id)
    title = text(meta.find(AX + "title"))
    if ident is None or not title:
        raise InputError(f"record {raw_id or '(no id)'} has no arXiv id or no title")
    authors = [_author(a) for a in meta.iter(AX + "author")]
    categories = text(meta.find(AX + "categories")).split()
    created = text(meta.find(AX + "created"))
    updated = text(meta.find(AX + "updated"))
    return Paper(
        title=title,
        arxiv_id=ident[0],
        version=ident[1],
        authors=[a for a in authors if a],
        abstract=text(meta.find(AX + "abstract")),
        published=_day(created) if created else None,
        updated=_day(updated) if updated else None,
        categories=categories,
        primary_category=categories[0] if categories else None,
        comment=text(meta.find(AX + "comments")) or None,
        journal_ref=text(meta.find(AX + "journal-ref")) or None,
        doi=text(meta.find(AX + "doi")) or None,
        url=f"https://arxiv.org/abs/{ident[0]}",
        author_count=len(authors),
        source="arxiv-oai",
    )


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse one ListRecords page; OaiError for an OAI error, InputError for non-OAI content."""
    listing = Listing()
    with gc_paused():
        for elem in iter_ends(data, origin, "an OAI-PMH response", (OAI + "OAI-PMH",), _TAGS):
            if elem.tag == _RECORD:
                try:
                    paper = record_to_paper(elem)
                except InputError as e:
                    skip_entry(listing, origin, e)
                    continue
                if paper is not None:
                    listing.papers.append(paper)
            elif elem.tag == _ERROR:
                code = elem.get("code") or "unknown"
                if code == "noRecordsMatch":
                    continue
                raise OaiError(f"{origin}: OAI-PMH error {code}: {text(elem)}", code)
            elif elem.tag == _TOKEN:
                listing.next_token = (elem.text or "").strip() or None
                size = elem.get("completeListSize")
                listing.total = int(size) if size and size.isdigit() else None
            elif elem.tag == _RESPONSE_DATE:
                listing.date = _day(elem.text or "").date() if _day(elem.text or "") else None
    return no_paper_at_all(listing, origin)
