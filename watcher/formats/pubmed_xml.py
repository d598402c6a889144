"""NCBI E-utilities answers: esearch JSON (the search's count and history) and efetch's
``PubmedArticleSet`` XML (the records).

esearch (``retmode=json``, ``usehistory=y``)::

    {"header": {...}, "esearchresult": {"count": "3", "retmax": "0", "retstart": "0",
     "querykey": "1", "webenv": "MCID_…", "idlist": [], …}}

An ``ERROR`` in ``esearchresult`` or a top-level ``error`` (a rate limit, a bad key) is an
InputError naming it.

efetch (``db=pubmed&retmode=xml``): one ``PubmedArticle`` per record, read with the streaming,
DTD-refusing reader of :mod:`watcher.formats.xmlsafe` (PubMed's own answers carry a DOCTYPE
line, which is dropped first: it declares nothing the records need). Kept: the PMID, the title
(inline markup such as ``<i>`` flattened), the abstract (a structured abstract keeps its labels:
``BACKGROUND: … METHODS: …``), the authors (``ForeName LastName``, or a collective name), the
journal's title, the DOI (``ArticleIdList``, else ``ELocationID``), the PMCID, the publication
date and the day the record entered PubMed (``entrez``) as ``announced``. A ``PubmedBookArticle``
or a record without title is skipped with a warning.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import date, datetime, timezone

from ..errors import InputError
from ..models import Paper, normalize_doi
from . import Listing, load_json, no_paper_at_all, skip_entry
from .xmlsafe import gc_paused, iter_ends

_DOCTYPE = re.compile(rb"<!DOCTYPE\s+PubmedArticleSet[^>\[]*>", re.I)
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}


def sniff(head: str) -> bool:
    """An efetch answer: a ``PubmedArticleSet`` document."""
    return head.lstrip("\ufeff \t\r\n").startswith("<") and "<PubmedArticleSet" in head


def parse_esearch(data: bytes, origin: str) -> dict:
    """The ``esearchresult`` of an esearch JSON answer: ``count`` (int), ``webenv``,
    ``querykey`` and ``idlist``; InputError for anything else or an error answer."""
    doc = load_json(data, origin)
    if isinstance(doc, dict) and doc.get("error"):
        raise InputError(f"{origin}: E-utilities answered: {doc['error']}")
    result = doc.get("esearchresult") if isinstance(doc, dict) else None
    if not isinstance(result, dict):
        raise InputError(f"{origin}: expected an esearch JSON answer (esearchresult)")
    if result.get("ERROR"):
        raise InputError(f"{origin}: PubMed search failed: {result['ERROR']}")
    try:
        count = int(result.get("count"))
    except (TypeError, ValueError):
        raise InputError(f"{origin}: esearch answer without a count") from None
    ids = result.get("idlist") if isinstance(result.get("idlist"), list) else []
    return {"count": count, "webenv": result.get("webenv"), "querykey": result.get("querykey"),
            "idlist": [str(i) for i in ids]}


def _text(elem: ET.Element | None) -> str:
    return " ".join("".join(elem.itertext()).split()) if elem is not None else ""


def _pub_date(elem: ET.Element | None) -> date | None:
    """A ``PubDate`` / ``ArticleDate`` / ``PubMedPubDate``: Year, Month (number or name), Day;
    a ``MedlineDate`` ("2026 Mar-Apr") gives its year and first month."""
    if elem is None:
        return None
    year, month, day = _text(elem.find("Year")), _text(elem.find("Month")), _text(elem.find("Day"))
    if not year and (medline := _text(elem.find("MedlineDate"))):
        parts = medline.replace("-", " ").split()
        year = parts[0] if parts else ""
        month = parts[1] if len(parts) > 1 else ""
    try:
        m = int(month) if month.isdigit() else _MONTHS.get(month[:3].lower(), 1)
        return date(int(year), m, int(day) if day.isdigit() else 1)
    except ValueError:
        return None


def _abstract(article: ET.Element) -> str:
    parts = []
    for node in article.findall("Abstract/AbstractText"):
        text = _text(node)
        label = node.get("Label")
        if text:
            parts.append(f"{label.strip().upper()}: {text}" if label else text)
    return " ".join(parts)


def _authors(article: ET.Element) -> list[str]:
    out = []
    for a in article.findall("AuthorList/Author"):
        if a.get("ValidYN", "Y") != "Y":
            continue
        last, fore = _text(a.find("LastName")), _text(a.find("ForeName")) or _text(a.find("Initials"))
        name = f"{fore} {last}".strip() if last else _text(a.find("CollectiveName"))
        if name:
            out.append(name)
    return out


def record_to_paper(record: ET.Element, where: str) -> Paper:
    """One ``PubmedArticle`` as a Paper; InputError when it has no PMID or no title."""
    citation = record.find("MedlineCitation")
    article = citation.find("Article") if citation is not None else None
    pmid = _text(citation.find("PMID")) if citation is not None else ""
    title = _text(article.find("ArticleTitle")) if article is not None else ""
    if not pmid or not title:
        raise InputError(f"{where}: record has no PMID or no title")
    ids = {(i.get("IdType") or "").lower(): _text(i)
           for i in record.findall("PubmedData/ArticleIdList/ArticleId")}
    doi = normalize_doi(ids.get("doi")) or next(
        (normalize_doi(_text(e)) for e in article.findall("ELocationID")
         if e.get("EIdType") == "doi"), None)
    journal = _text(article.find("Journal/Title")) or _text(article.find("Journal/ISOAbbreviation"))
    printed = _pub_date(article.find("Journal/JournalIssue/PubDate"))
    online = _pub_date(article.find("ArticleDate"))
    first = online or printed
    entrez = next((_pub_date(d) for d in record.findall("PubmedData/History/PubMedPubDate")
                   if d.get("PubStatus") in ("entrez", "pubmed")), None)
    authors, abstract = _authors(article), _abstract(article)
    origins = {"title": "pubmed", "authors": "pubmed:list", "journal": "pubmed:named",
               "abstract": "pubmed:full"}
    return Paper(
        title=title.removesuffix(".") if not title.endswith("..") else title,
        authors=authors,
        abstract=abstract,
        published=datetime(first.year, first.month, first.day, tzinfo=timezone.utc) if first else None,
        doi=doi,
        pmid=pmid,
        pmcid=ids.get("pmc") or None,
        journal=journal or None,
        venues=[journal] if journal else [],
        url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
        announced=entrez,
        source="pubmed",
        origins={k: v for k, v in origins.items() if k == "title" or (k == "journal" and journal)
                 or (k == "authors" and authors) or (k == "abstract" and abstract)},
    )


def parse(data: bytes, origin: str, today: date | None = None) -> Listing:
    """Parse an efetch ``PubmedArticleSet``; InputError when it is not one (an HTML or JSON
    error page, a truncated answer) or when no record is an article."""
    data = _DOCTYPE.sub(b"", data[:4096], count=1) + data[4096:]
    listing = Listing()
    tags = {"PubmedArticle", "PubmedBookArticle"}
    with gc_paused():
        for n, record in enumerate(iter_ends(data, origin, "a PubMed efetch answer",
                                             ("PubmedArticleSet",), tags), start=1):
            if record.tag == "PubmedBookArticle":
                skip_entry(listing, origin, InputError(f"record {n}: a book, not an article"))
                continue
            try:
                listing.papers.append(record_to_paper(record, f"record {n}"))
            except InputError as e:
                skip_entry(listing, origin, e)
    return no_paper_at_all(listing, origin)
