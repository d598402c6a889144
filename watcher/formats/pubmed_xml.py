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
journal's name (:func:`journal_name`), the DOI (``ArticleIdList``, else ``ELocationID``), the PMCID, the publication
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
# A quarterly's ``<Season>``: the month its issue is dated by ("2016 Winter" is issue 12 of
# Vnitrni lekarstvi, entered in PubMed in February 2017; "1990 Spring" entered in April 1990).
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}

# How PubMed's markup in titles and abstracts reads as text (the misreadings each fixes were
# seen in real efetch answers, tests/data/pubmed/real/):
# - emphasis that the publisher's conversion glued to its neighbours ("at the<i>TERT</i>gene",
#   "by<i>in-situ</i>QCM"): a word of two letters or more in it is a word of its own; one letter
#   (a symbol: "10<i>μ</i>m") stays joined;
#   one after a word's end (".<i>Approach</i>", "The<i>μ</i>-XRF") starts a new word too;
_EMPHASIS = {"i", "b", "u", "em"}
_STOPS = ".,;:"
_LAST_WORD = re.compile(r"[^\W\d_]+$")
# - a sub- or superscript joins its neighbours ("SnO<sub>2</sub>", "BL<sub>R</sub>Ts"), except
#   a lower-case word or a parenthesis glued after it ("SnO<sub>2</sub>thin films");
_SCRIPTS = {"sub", "sup"}
_GLUED_AFTER_SCRIPT = re.compile(r"^(?:[a-z]{3,}\b|\()")
# - MathML is a formula, not words: its pieces are joined (scripts written before their base,
#   "³He"), an accent over a letter is a combining mark ("V̇O2max"), only ``mtext`` spaces count.
_ACCENTS = {".": "\u0307", "\u02d9": "\u0307", "^": "\u0302", "~": "\u0303", "\u00af": "\u0304",
            "\u2192": "\u20d7"}
# - a title PubMed only has in the original language ("[Not Available]." and a
#   ``VernacularTitle``) is that title (with none, the placeholder stays); a translated title is
#   written in brackets ("[…].").
_NO_TITLE = "[Not Available]"
_BRACKETS = re.compile(r"[\[\]]")
# A journal's title as the NLM catalogue writes it is in sentence case, with a qualifier that
# tells apart journals of one name ("Journal of magnetic resonance (San Diego, Calif. : 1997)",
# "Social justice (San Francisco, Calif.)"); the journal's own name is "Journal of Magnetic
# Resonance", as its own feed and the DOI's metadata spell it. So the qualifier goes and, for an
# article in English, each word in lower case gets its capital but the short words inside a
# name (and Latin "et": "Biochimica et Biophysica Acta"); a word with a capital already ("eLife",
# "PloS") stays. Other languages keep sentence case, as their journals do ("Sante mentale au
# Quebec", "Vnitrni lekarstvi"). What follows " : " is the name's subtitle in the catalogue's
# punctuation (ISBD "other title information": "European spine journal : official publication
# of the European Spine Society, …", "Brain : a journal of neurology", "CMAJ : Canadian Medical
# Association journal = …"); the journal is "European Spine Journal", so it goes too.
_QUALIFIER = re.compile(r"\s*\([^()]*\)$")
_SUBTITLE = re.compile(r"\s+:\s.*$", re.S)
_MINOR = frozenset("a an and as at but by for from in into nor of on or over per the to upon via with et".split())
_CAPITAL = re.compile(r"[a-z]")


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


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _math(elem: ET.Element) -> str:
    """A MathML formula as one run of text (see the rules above)."""
    name, kids = _local(elem.tag), list(elem)
    if name == "mtext":
        return "".join(elem.itertext())
    if not kids:
        return (elem.text or "").strip()
    if name == "mover" and len(kids) == 2 and (accent := _ACCENTS.get(_math(kids[1]))):
        return _math(kids[0]) + accent
    if name == "mmultiscripts":
        names = [_local(k.tag) for k in kids]
        cut = names.index("mprescripts") if "mprescripts" in names else len(kids)
        return "".join(map(_math, kids[cut + 1:])) + "".join(map(_math, kids[:cut]))
    return "".join(map(_math, kids))


def _flat(elem: ET.Element | None) -> str:
    """A title's or an abstract's text with its inline markup read as words (see above)."""
    if elem is None:
        return ""
    out: list[str] = []

    def before(inner: str) -> bool:
        """Whether emphasis glued to the text before it starts a word of its own."""
        done = "".join(out)
        if not done or not inner[:1].isalpha():
            return False
        if done[-1] in _STOPS:
            return True
        word = _LAST_WORD.search(done)
        return word is not None and (_letters(inner) >= 2 or len(word[0]) >= 2)

    def walk(node: ET.Element) -> None:
        out.append(node.text or "")
        for kid in node:
            name, tail = _local(kid.tag), kid.tail or ""
            if name == "math":
                out.append(_math(kid))
            elif name in _EMPHASIS:
                inner = "".join(kid.itertext())
                out.append((" " if before(inner) else "") + inner)
                ends_word = inner[-1:].isalnum() or inner[-1:] in _STOPS  # "<i>Approach.</i>Fabricated"
                if (tail[:1].isalpha() and _letters(inner) >= 2 and ends_word) or (
                        _letters(inner) < 2 and _GLUED_AFTER_SCRIPT.match(tail)):
                    out.append(" ")
            else:
                walk(kid)
                if name in _SCRIPTS and _GLUED_AFTER_SCRIPT.match(tail):
                    out.append(" ")
            out.append(tail)

    walk(elem)
    return " ".join("".join(out).split())


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def _title(article: ET.Element) -> str:
    title = _flat(article.find("ArticleTitle"))
    if not title or title.rstrip(".") == _NO_TITLE:
        # a record with no title in any language keeps PubMed's placeholder: it is still a record
        return _flat(article.find("VernacularTitle")) or title
    inner = title.rstrip(".")[1:-1]
    if title.startswith("[") and title.rstrip(".").endswith("]") and not _BRACKETS.search(inner):
        return inner  # not "[18F]FDG uptake … [11C]"
    return title


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
        if not month:
            month = str(_SEASONS.get(_text(elem.find("Season")).lower(), ""))
        m = int(month) if month.isdigit() else _MONTHS.get(month[:3].lower(), 1)
        return date(int(year), m, int(day) if day.isdigit() else 1)
    except ValueError:
        return None


def _abstract(article: ET.Element) -> str:
    parts = []
    for node in article.findall("Abstract/AbstractText"):
        text = _flat(node)
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
    title = _title(article) if article is not None else ""
    if not pmid or not title:
        raise InputError(f"{where}: record has no PMID or no title")
    ids = {(i.get("IdType") or "").lower(): _text(i)
           for i in record.findall("PubmedData/ArticleIdList/ArticleId")}
    doi = normalize_doi(ids.get("doi")) or next(
        (normalize_doi(_text(e)) for e in article.findall("ELocationID")
         if e.get("EIdType") == "doi"), None)
    journal = (journal_name(_text(article.find("Journal/Title")), _languages(article))
               or _text(article.find("Journal/ISOAbbreviation")))
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


def journal_name(title: str, languages: set[str]) -> str:
    """The journal's name from its NLM ``title``, for an article in ``languages`` (ISO 639-2
    codes: "eng"); see _QUALIFIER above."""
    name = _QUALIFIER.sub("", title).strip() or title.strip()
    name = _SUBTITLE.sub("", name).strip() or name
    if languages and "eng" not in languages:
        return name
    words, start = [], True
    for word in name.split(" "):
        if word.islower() and (start or word not in _MINOR):
            word = _CAPITAL.sub(lambda m: m.group().upper(), word, count=1)
        words.append(word)
        start = word.endswith((".", ":"))
    return " ".join(words)


def _languages(article) -> set[str]:
    return {_text(e).lower() for e in article.findall("Language") if _text(e)}


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
