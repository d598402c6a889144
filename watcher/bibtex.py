"""BibTeX in and out (bibtexparser): the reading list as a ``.bib`` file for LaTeX and Zotero,
and a ``.bib`` file of papers one likes as a profile's ``examples``.

Written entries follow arXiv's own "Export BibTeX citation": ``@misc`` with ``title``,
``author`` (``Last, First and ...``), ``year``, ``eprint``, ``archivePrefix = {arXiv}``,
``primaryClass``, ``url``, plus ``doi`` and ``abstract`` when known. Non-ASCII letters and
LaTeX's special characters are encoded for LaTeX (``{\\"u}``, ``\\&``), so the file works with
classic BibTeX as well as biber, and Zotero imports it as it is.
"""

from __future__ import annotations

import re

from .errors import InputError
from .models import Paper, parse_arxiv_id
from .text import name_key

_SPECIAL = re.compile(r"([&%$#_])")
_ARXIV_IN = re.compile(r"(?:arxiv[:./ ]*|abs/|arXiv\.)(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?",
                       re.IGNORECASE)


def write(papers: list[Paper]) -> str:
    """The papers as BibTeX entries, one ``@misc`` each, with unique citation keys."""
    import bibtexparser
    from bibtexparser.model import Entry, Field

    library = bibtexparser.Library()
    used: set[str] = set()
    for paper in papers:
        fields = [("title", "{" + _latex(paper.title) + "}")]  # braces keep the title's case
        if paper.authors:
            fields.append(("author", " and ".join(_latex(_name(a)) for a in paper.authors)))
        if paper.published:
            fields.append(("year", str(paper.published.year)))
        if paper.arxiv_id:
            fields += [("eprint", paper.arxiv_id), ("archivePrefix", "arXiv")]
            if paper.primary_category or paper.categories:
                fields.append(("primaryClass", paper.primary_category or paper.categories[0]))
        if paper.doi:
            fields.append(("doi", paper.doi))
        url = paper.abs_url or paper.url
        if url:
            fields.append(("url", url))
        if paper.abstract:
            fields.append(("abstract", _latex(paper.abstract)))
        key = _key(paper, used)
        library.add(Entry("misc", key, [Field(k, v) for k, v in fields]))  # the writer adds {}
    return bibtexparser.write_string(library)


def read(data: bytes, origin: str) -> list[Paper]:
    """The entries of a ``.bib`` file as papers: title, authors, abstract, year and the arXiv id
    (from ``eprint``, an arXiv ``doi`` or ``url``, or ``journal`` / ``note`` text); LaTeX is
    decoded. An InputError names the file when it holds no entry."""
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    library = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    papers = []
    for entry in library.entries:
        f = {k.lower(): str(v).strip() for k, v in entry.fields_dict.items()
             for k, v in [(k, v.value)]}
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
        authors = [_unname(a) for a in re.split(r"\s+and\s+", f.get("author", "")) if a.strip()]
        papers.append(Paper(title=title, arxiv_id=ident, authors=authors,
                            abstract=" ".join(f.get("abstract", "").split()),
                            doi=f.get("doi") or None))
    if not papers:
        raise InputError(f"{origin}: no BibTeX entry with a title")
    return papers


_MATH = re.compile(r"(\$[^$]+\$)")


def _latex(text: str) -> str:
    """Plain text for LaTeX: its special characters escaped, non-ASCII letters encoded; math as
    arXiv titles write it (``F$^3$Set``, ``$\\textit{Can}$``) is kept when its braces balance."""
    from pylatexenc.latexencode import unicode_to_latex

    out = []
    for i, part in enumerate(_MATH.split(text)):
        if i % 2 and _balanced(part) and not re.search(r"[%#&]", part):
            out.append(part)
            continue
        part = _SPECIAL.sub(r"\\\1", part.replace("\\", "/").replace("{", "(").replace("}", ")"))
        out.append(unicode_to_latex(part, non_ascii_only=True, unknown_char_policy="replace"))
    return "".join(out)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _name(author: str) -> str:
    """``First Middle Last`` as ``Last, First Middle`` (unambiguous for BibTeX)."""
    parts = author.split()
    return f"{parts[-1]}, {' '.join(parts[:-1])}" if len(parts) > 1 else author


def _unname(author: str) -> str:
    author = " ".join(author.replace("{", "").replace("}", "").split())
    if "," in author:
        last, _, first = author.partition(",")
        return f"{first.strip()} {last.strip()}".strip()
    return author


def _key(paper: Paper, used: set[str]) -> str:
    key = name_key(paper.authors[0]) if paper.authors else None
    last = re.sub(r"[^a-z]", "", key[0]) if key else ""
    word = next((w for w in re.findall(r"[A-Za-z]+", paper.title) if len(w) > 3), "paper")
    year = str(paper.published.year) if paper.published else ""
    base = f"{last or 'anon'}{year}{word.lower()}"
    key, n = base, 1
    while key in used:
        n += 1
        key = f"{base}{chr(ord('a') + n - 2)}" if n <= 27 else f"{base}{n}"
    used.add(key)
    return key


__all__ = ["write", "read"]
