"""BibTeX in and out (bibtexparser): the reading list as a ``.bib`` file for LaTeX and Zotero,
and a ``.bib`` file of papers one likes as a profile's ``examples``.

Written entries follow arXiv's own "Export BibTeX citation": ``@misc`` with ``title``,
``author`` (``Last, First and ...``), ``year``, ``eprint``, ``archivePrefix = {arXiv}``,
``primaryClass``, ``url``, plus ``doi`` and ``abstract`` when known; ``year`` also for papers
known only from listings (the announce day, else the arXiv id's). A paper published in a
journal, or announced by bioRxiv, medRxiv or a journal's feed, is an ``@article`` with its
``journal`` (the journal, else the server, as bioRxiv's own export writes) and ``doi``. Keys are
``{last name}{year}{first title word}`` (``king2025pokemon``), authors ``von Last, Jr, First``
as bibtexparser's own name parser splits them.

Nothing of a title's or abstract's LaTeX is copied: it is decoded to plain text (pylatexenc:
``Pok\\'emon`` -> Pokémon, ``$\\alpha$`` -> α; unknown macros such as ``\\input`` dropped), and
every character is encoded anew (``{\\"u}``, ``{\\&}``, ``{\\textbackslash}``), so no field can
run TeX (no ``\\input``, ``\\write18`` or ``^^`` survives), the file works with classic BibTeX as
well as biber, and Zotero imports it as it is.
"""

from __future__ import annotations

import functools
import logging
import re

from ..errors import InputError
from .latex import plain_text
from ..models import Paper, parse_arxiv_id
from ..util.text import fold

_SPECIAL = re.compile(r"([&%$#_])")
_ARXIV_IN = re.compile(r"(?:arxiv[:./ ]*|abs/|arXiv\.)(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?",
                       re.IGNORECASE)


def write(papers: list[Paper]) -> str:
    """The papers as BibTeX entries, one ``@misc`` (``@article`` with a journal) each, with
    unique citation keys."""
    import bibtexparser
    from bibtexparser.model import Entry, Field

    library = bibtexparser.Library()
    used: set[str] = set()
    for paper in papers:
        names = [_name_parts(a) for a in paper.authors]
        fields = [("title", "{" + _latex(paper.title) + "}")]  # braces keep the title's case
        if names:
            fields.append(("author", " and ".join(_latex_name(n) for n in names)))
        year = paper_year(paper)
        if year:
            fields.append(("year", str(year)))
        if paper.arxiv_id:
            fields += [("eprint", paper.arxiv_id), ("archivePrefix", "arXiv")]
            if paper.primary_category or paper.categories:
                fields.append(("primaryClass", _latex(paper.primary_category or paper.categories[0])))
        journal = paper.venue if paper.venue != "arXiv" else None  # a journal, bioRxiv, PubMed's
        if journal:
            fields.append(("journal", _latex(journal)))
        if paper.doi:
            fields.append(("doi", _latex(paper.doi)))
        # only a web address: a listing's ``javascript:`` or ``data:`` link is no paper's URL
        # (a reference manager or a LaTeX PDF makes the url field a link one clicks)
        url = next((u.strip() for u in (paper.abs_url, paper.url)
                    if u and re.match(r"https?://[^\s]", u.strip(), re.I)), None)
        if url:
            fields.append(("url", _url(url)))
        if paper.abstract:
            fields.append(("abstract", _latex(paper.abstract)))
        key = _key(paper, names, year, used)
        library.add(Entry("article" if journal else "misc", key,  # the writer adds {}
                          [Field(k, v) for k, v in fields]))
    return bibtexparser.write_string(library)


def paper_year(paper: Paper) -> int | None:
    """The year to cite: the first version's, else the day a listing announced the paper, else
    the one its arXiv id names (``2504.07615``: 2025; ``hep-th/9901001``: 1999)."""
    if paper.published:
        return paper.published.year
    if paper.announced:
        return paper.announced.year
    m = re.fullmatch(r"(?:[a-z-]+(?:\.[A-Z]{2})?/)?(\d\d)\d\d[.\d]*", paper.arxiv_id or "")
    if m:  # arXiv began in 1991; ids name the year in two digits
        yy = int(m.group(1))
        return 1900 + yy if yy >= 91 else 2000 + yy
    return None


def read(data: bytes, origin: str) -> list[Paper]:
    """The entries of a ``.bib`` file as papers: title, authors, abstract, year and the arXiv id
    (from ``eprint``, an arXiv ``doi`` or ``url``, or ``journal`` / ``note`` text); LaTeX is
    decoded. An InputError names the file when it holds no entry."""
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors, SplitNameParts

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    library = bibtexparser.parse_string(text, append_middleware=[
        LatexDecodingMiddleware(), SeparateCoAuthors(), SplitNameParts()])
    papers = []
    for entry in library.entries:
        f = {k.lower(): v.value for k, v in entry.fields_dict.items()}
        names = f.pop("author", [])
        f = {k: str(v).strip() for k, v in f.items()}
        # pylatexenc decodes {\\textasciicircum} as the modifier letter circumflex
        f = {k: v.replace("\u02c6", "^") for k, v in f.items()}
        title = " ".join(f.get("title", "").replace("{", "").replace("}", "").split())
        if not title:
            continue
        ident = None
        for where in ("eprint", "doi", "url", "journal", "note", "howpublished"):
            value = f.get(where, "")
            found = parse_arxiv_id(value) if where == "eprint" else None
            if not found and (m := _ARXIV_IN.search(value)):
                found = parse_arxiv_id(m.group(1))
            if found:
                ident = found[0]
                break
        authors = [_unname(n) for n in (names if isinstance(names, list) else [])]
        papers.append(Paper(title=title, arxiv_id=ident, authors=authors,
                            abstract=" ".join(f.get("abstract", "").split()),
                            doi=f.get("doi") or None))
    failed = library.failed_blocks  # bibtexparser's own warnings are quieted: said here, once
    lines = sorted(b.start_line + 1 for b in failed if b.start_line is not None)
    skipped = (f"{len(failed)} block{'s' if len(failed) != 1 else ''} not readable as BibTeX"
               + (f" (the first at line {lines[0]})" if lines else "")) if failed else ""
    if not papers:
        raise InputError(f"{origin}: no BibTeX entry with a title" + (f"; {skipped}" if skipped else ""))
    if skipped:
        logging.getLogger("watcher").warning("%s: %s, skipped", origin, skipped)
    return papers


_SUFFIX = re.compile(r",?\s+(Jr\.?|Sr\.?|II|III|IV|V|2nd|3rd)$")
# an author that is a group, as arXiv lists them ("Kimi Team", "LG AI Research", "Inclusion AI")
_GROUP = re.compile(r"\b(Team|Collaboration|Consortium|Group|Lab|Labs|Laboratory|Research|AI|Inc|Ltd|LLC|"
                    r"Institute|University|Foundation|Corporation|Committee|Project|Initiative)\b\.?")


def _latex(text: str) -> str:
    """``text`` for a BibTeX field that cannot run TeX: its LaTeX decoded to plain text
    (:func:`plain_text`), then every character encoded anew by pylatexenc, so that the field
    holds only letters, escaped specials (``\\%``, ``\\{``, ``{\\textbackslash}``,
    ``{\\textasciicircum}``) and pylatexenc's accent and symbol macros; no ``\\input``,
    ``\\write18`` or ``^^`` of the source can survive."""
    return _encoder().unicode_to_latex(plain_text(text))


@functools.cache
def _encoder():
    """pylatexenc's encoder of every special character, with braces as text macros: BibTeX
    counts the braces of ``\\{`` as well, so a lone one would end the field."""
    from pylatexenc.latexencode import RULE_DICT, UnicodeToLatexConversionRule, UnicodeToLatexEncoder

    braces = UnicodeToLatexConversionRule(RULE_DICT, {ord("{"): "\\textbraceleft",
                                                      ord("}"): "\\textbraceright"})
    return UnicodeToLatexEncoder(conversion_rules=[braces, "defaults"], non_ascii_only=False,
                                 unknown_char_policy=_unknown, replacement_latex_protection="braces-all")


def _unknown(char: str) -> str:
    """A character LaTeX has no macro for (CJK, a combining mark left over): ``?``, or nothing
    for a mark (classic pdflatex stops at a character it does not know)."""
    import unicodedata

    return "" if unicodedata.combining(char) else "?"


class _Quiet(logging.Filter):
    """pylatexenc warns about each such character: the export says it with ``?``, not the log."""

    def filter(self, record):
        return False


logging.getLogger("pylatexenc.latexencode._unicode_to_latex_encoder").addFilter(_Quiet())
logging.getLogger("bibtexparser.splitter").addFilter(_Quiet())  # read() says what it could not parse


def _url(url: str) -> str:
    """A URL for BibTeX: the characters that could start TeX (``\\ { } ^ ~ $``) and spaces
    percent-encoded, as a URL may write any character."""
    return re.sub(r"[\\{}^~$\s]", lambda m: "%%%02X" % ord(m.group(0)), url)


def _name_parts(author: str):
    """An author (``Martin Luther King Jr.``, ``Ludwig van Beethoven``, ``King, Jr., Martin``)
    as bibtexparser's NameParts (first, von, last, jr), split by bibtexparser's own parser
    after its LaTeX is decoded; a trailing ``Jr.``/``III`` is the ``jr`` part. A group
    (``Kimi Team``, ``LG AI Research``: _GROUP) is one literal last name, braced when written."""
    from bibtexparser.middlewares.names import NameParts, parse_single_name_into_parts

    name = plain_text(author).replace("{", "").replace("}", "")
    if _GROUP.search(name) and " " in name.strip():  # "Kimi Team": one literal name, not Team, Kimi
        return NameParts(last=[" ".join(name.split())])
    jr = []
    if name.count(",") < 2 and (m := _SUFFIX.search(name)) and len(name[: m.start()].split()) > 1:
        jr, name = [m.group(1)], name[: m.start()]
    try:
        parts = parse_single_name_into_parts(name.strip(" ,"), strict=False)
    except Exception:  # bibtexparser refuses a few shapes (a lone comma): one literal last name
        parts = NameParts(last=[name])
    if jr and not parts.jr:
        parts.jr = jr
    return parts


def _latex_name(parts) -> str:
    """``von Last, Jr, First`` (unambiguous for BibTeX), each part encoded by :func:`_latex`."""
    from bibtexparser.middlewares.names import NameParts

    if not (parts.first or parts.von or parts.jr) and len(parts.last) == 1 and " " in parts.last[0]:
        return "{" + _latex(parts.last[0]) + "}"  # a group's name: braced, BibTeX splits nothing
    return NameParts(first=[_latex(p) for p in parts.first], von=[_latex(p) for p in parts.von],
                     last=[_latex(p) for p in parts.last], jr=[_latex(p) for p in parts.jr]
                     ).merge_last_name_first


def _unname(parts) -> str:
    """bibtexparser's NameParts as the name reads: ``Martin Luther King Jr.``."""
    words = [*parts.first, *parts.von, *parts.last, *parts.jr]
    return " ".join(" ".join(words).replace("{", "").replace("}", "").split())


def _key(paper: Paper, names: list, year: int | None, used: set[str]) -> str:
    """``{first author's last name}{year}{first word of the title}`` in ASCII letters, as
    Google Scholar makes them (``king2025pokemon``); a letter tells apart keys made twice."""
    last = re.sub(r"[^a-z]", "", fold(" ".join(names[0].last))) if names else ""
    words = [fold(w) for w in re.findall(r"\w+", plain_text(paper.title))]
    word = next((w for w in (re.sub(r"[^a-z]", "", w) for w in words) if len(w) > 3
                 and w not in _STOP), "paper")
    base = f"{last or 'anon'}{year or ''}{word}"
    key, n = base, 1
    while key in used:
        n += 1
        key = f"{base}{chr(ord('a') + n - 2)}" if n <= 27 else f"{base}{n}"
    used.add(key)
    return key


_STOP = {"about", "from", "into", "that", "their", "there", "these", "this", "through", "towards",
         "toward", "what", "when", "where", "which", "with", "without", "your"}


__all__ = ["write", "read", "paper_year", "plain_text"]
