"""arXiv's category list (``watcher/data/arxiv_categories.txt``) and the check that names a
category missing from it with the nearest known one (``cs.LGG``: did you mean cs.LG?).

Used by ``watcher check`` for every category a config names: a source's ``categories`` and the
``cat:`` terms of an arXiv ``query``, a profile's ``categories`` and the ``cat:`` terms of its
query. Loading a config does not refuse an unknown category (arXiv adds some now and then): the
check says so, and exits 2 like any other problem it finds.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from pathlib import Path

from .subjects import ALL as SUBJECTS_ALL, subject

_CAT_TERM = re.compile(r"\bcat:\s*([A-Za-z][A-Za-z.\-_*]*)", re.I)


@lru_cache(maxsize=1)
def known() -> dict[str, str]:
    """Every known category and archive, lower-cased -> as arXiv writes it."""
    path = Path(__file__).resolve().parent / "data" / "arxiv_categories.txt"
    names = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    return {n.lower(): n for n in names}


def nearest(text: str, names: dict[str, str]) -> str | None:
    """The name in ``names`` (lower-cased -> as written) closest to ``text``, or None when none
    is close: the "did you mean" of every category and subject check."""
    near = difflib.get_close_matches(text.lower(), list(names), n=1, cutoff=0.7)
    return names[near[0]] if near else None


def query_categories(query: str | None) -> list[str]:
    """The categories a query's ``cat:`` terms name (arXiv API query or profile query)."""
    return _CAT_TERM.findall(query or "")


def category_problem(value: str, subjects_ok: bool = True) -> str | None:
    """Why ``value`` is not a category a profile (``subjects_ok``: a bioRxiv / medRxiv subject
    is one too) or an arXiv source can name, with the nearest known one (:func:`nearest`);
    None when it is one. What ``watcher check`` says of a profile's categories, and the web's
    search and query preview of theirs. A profile's nearest may be a subject, written as the
    value was: ``_`` for a space unless it has one (``cat:cell_biolgy``: did you mean
    cell_biology?)."""
    text = value.strip().removesuffix(".*")
    names = known()
    if text.lower() in names or (subjects_ok and subject(text) in SUBJECTS_ALL):
        return None
    what = "an arXiv category"
    if subjects_ok:
        written = [s if " " in text else s.replace(" ", "_") for s in SUBJECTS_ALL]
        names = {**names, **{s: s for s in written}}
        what = "an arXiv category or bioRxiv/medRxiv subject"
    near = nearest(text, names)
    hint = f"; did you mean {near}?" if near else " (see arxiv.org/category_taxonomy)"
    return f"{value!r} is not {what}{hint}"


def query_category_problems(query: str | None, subjects_ok: bool = True) -> list[str]:
    """:func:`category_problem` of each ``cat:`` term of ``query``."""
    return [p for v in query_categories(query) if (p := category_problem(v, subjects_ok))]


def category_problems(config) -> list[str]:
    """One line per category of ``config`` that arXiv does not know (bioRxiv / medRxiv subjects
    of a profile, and the sources of other services, are left alone)."""
    return [f"{config.path}: {key}: {problem}" for key, problem in keyed_category_problems(config)]


def keyed_category_problems(config) -> list[tuple[str, str]]:
    """:func:`category_problems` as ``(key, problem)`` pairs. ``config`` needs only ``sources``
    (``type``, and ``options`` with ``categories`` and ``query``) and ``profiles``
    (``categories``, ``query``, ``exclude``): ``watcher check`` also asks it of a file that
    does not load. A source's are checked when its kind's options say they are arXiv's
    (``arxiv_categories``)."""
    out = []

    def check(key: str, values, subjects_ok: bool) -> None:
        for value in values:
            problem = category_problem(value, subjects_ok)
            if problem:
                out.append((key, problem))

    for name, src in config.sources.items():
        if getattr(src.options, "arxiv_categories", False):
            check(f"source.{name}.categories", getattr(src.options, "categories", ()), False)
            out += [(f"source.{name}.query", p)
                    for p in query_category_problems(getattr(src.options, "query", None), False)]
    for name, prof in config.profiles.items():
        check(f"profile.{name}.categories", prof.categories, True)
        out += [(f"profile.{name}.{key}", p) for key in ("query", "exclude")
                for p in query_category_problems(getattr(prof, key))]
    return out


__all__ = ["category_problem", "category_problems", "keyed_category_problems", "query_category_problems", "known", "nearest", "query_categories"]
