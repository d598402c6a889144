"""Searching the stored papers: SQLite FTS5 narrows, the profile query language decides.

A search is a query in the profile query language (docs/profiles.md: ``GRPO``, ``ti:survey``,
``au:Levine AND cat:cs.LG``, ...) and returns exactly the papers a profile with that query
selects. The ``papers_fts`` index holds the matcher's own normalised words
(:func:`watcher.matching.index.search_text`: LaTeX, accents, ligatures, apostrophes and plurals folded
as the matcher folds them, categories as whole tokens, no stemmer of its own), so
:func:`fts_expression` can turn the query's tree into an FTS5 expression that matches at least
every paper the query matches (a ``NOT`` or an unknown field is left out: every paper is then a
candidate). The index returns those candidates newest first (or best first, bm25), and the
query itself, run by the same code as the profiles (:mod:`watcher.matching.index`), keeps the papers it
really matches: every candidate is checked, so the index only decides where to look. Candidates
are checked in growing chunks until a page is full, so the first page of a search costs a few
dozen checks, never a scan of every paper. A check reads each candidate's title and abstract
words as the store keeps them beside the paper (the same :func:`~watcher.matching.index.search_text`
the index holds, computed by every write) rather than normalising the text again, and looks
the query's few words up in each paper of the chunk rather than indexing the chunk
(:meth:`watcher.matching.index.Batch.postings`).
"""

from __future__ import annotations

import re
from copy import copy
from dataclasses import dataclass, field
from datetime import date

from ..errors import QuerySyntaxError
from ..matching.index import paper_vector, prepare, prepare_doc, similarity
from ..models import Paper
from ..matching.query import And, Not, Or, Query, Term, parse_query
from ..store import Store

MAX_SCAN = 20_000  # candidates checked at most for one page; past it the page says so
MAX_CHUNK = 100  # candidates checked between two looks at the caller's deadline (``check``)
MAX_TERMS = 32  # words, phrases and names in one search
MAX_TERM_CHARS = 200  # characters of one word or phrase
ORDERS = ("newest", "relevance")  # what run_search's ``order`` takes, the default first
RANKED = 2_000  # best match first ranks the newest this many candidates, never every match
MAX_FTS_DEPTH = 16  # nested parentheses FTS5's parser takes safely (its stack holds ~100 items)

_TOKEN = re.compile(r"[a-z0-9]+")
_COLUMNS = {"ti": "search_title", "abs": "search_abstract", "au": "search_authors",
            "cat": "search_categories", "all": "{search_title search_abstract search_authors}"}


def _term(term: Term) -> str | None:
    column = _COLUMNS.get(term.field)
    if column is None:  # a field the index does not hold: every paper is a candidate
        return None
    if term.field == "cat":  # one token, dots and hyphens kept (tokenchars)
        return f'{column} : "{term.words[0]}"' if re.fullmatch(r"[a-z0-9.\-]+", term.words[0]) else None
    if term.field == "au":  # the surname, as name_key folded it
        return f'{column} : "{term.words[0]}"' if _TOKEN.fullmatch(term.words[0]) else None
    if any(not _TOKEN.fullmatch(w.rstrip("*")) for w in term.words):
        return None
    if not any(w.endswith("*") for w in term.words[:-1]):
        last = term.words[-1]
        return f'{column} : "{" ".join(term.words).rstrip("*")}"' + ("*" if last.endswith("*") else "")
    # a prefix inside a phrase: FTS5 cannot say it; each word on its own is a superset
    return f"{column} : (" + " AND ".join(f'"{w.rstrip("*")}"' + ("*" if w.endswith("*") else "")
                                          for w in term.words) + ")"


def _translate(node) -> str | None:
    if isinstance(node, Term):
        return _term(node)
    if isinstance(node, Not):
        return None
    if isinstance(node, And):
        parts = [expr for item in node.items if not isinstance(item, Not)
                 if (expr := _translate(item)) is not None]
        return " AND ".join(f"({p})" for p in parts) if parts else None
    if isinstance(node, Or):
        parts = [_translate(i) for i in node.items]
        if any(expr is None for expr in parts):
            return None
        return " OR ".join(f"({p})" for p in parts)
    return None


def fts_expression(node) -> str | None:
    """An FTS5 expression matching at least every paper the query tree ``node`` matches (None:
    no narrowing possible, every paper is a candidate). A query nested deeper than FTS5's
    parser takes is not narrowed."""
    expr = _translate(node)
    depth = deepest = 0
    for ch in expr or "":  # phrases hold only word characters: every parenthesis is syntax
        depth += (ch == "(") - (ch == ")")
        deepest = max(deepest, depth)
    return None if deepest > MAX_FTS_DEPTH else expr


@dataclass
class Filters:
    """What narrows a search besides the query: filing dates, a category, a profile's matcher."""

    day_from: date | None = None
    day_to: date | None = None
    category: str | None = None
    matcher: object | None = None  # a ProfileMatcher: only papers it selects


@dataclass
class Results:
    """One page of a search. ``more``: a next page exists; ``capped``: the search stopped after
    MAX_SCAN candidates, so later pages may be missing."""

    papers: list[Paper] = field(default_factory=list)
    more: bool = False
    capped: bool = False
    scanned: int = 0
    total: int | None = None  # how many papers the search selects in all; None: more than this page shows

    @property
    def at_least(self) -> int:
        """How many papers the search is known to select: ``total``, else up to this page's end and one more."""
        return self.total if self.total is not None else self.first + len(self.papers)

    first: int = 0  # how many papers come before this page


def run_search(store: Store, query: Query | None, filters: Filters, *, offset: int = 0,
               limit: int = 25, order: str = "newest", max_scan: int = MAX_SCAN,
               check=lambda: None) -> Results:
    """One page (``offset``, ``limit``) of the stored papers that ``query`` (None: every
    paper) and ``filters`` select; ``order`` is ``newest`` (last stored first) or
    ``relevance`` (bm25 over the newest RANKED candidates, when the query narrows through the
    index). A query checked again stops after ``max_scan`` candidates (``capped``).
    ``check()`` is called before each chunk of candidates is checked (at most MAX_CHUNK): it
    raises to stop a search past its caller's deadline (the web's). Only the page's own
    papers are kept; those before it are counted."""
    expr = fts_expression(query.root) if query else None
    exact = query is None and filters.matcher is None  # no query: every paper of the filters
    out = Results()
    want = offset + limit + 1
    # exact: the index alone decides, one page straight from SQLite
    candidates = store.search_candidates(expr, day_from=filters.day_from, day_to=filters.day_to,
                                         category=filters.category, order=order, ranked=RANKED,
                                         page=(limit + 1, offset) if exact else None)
    if exact:
        out.papers = [p for p, _ in candidates.fetch()]
        out.scanned = len(out.papers)
        out.more = len(out.papers) > limit
        out.papers = out.papers[:limit]
        out.first = offset
        candidates.close()
        if not out.more:  # every paper of the filters was seen
            out.total = offset + len(out.papers) if out.papers or not offset else None
        else:  # SQLite counts what the filters select
            out.total = candidates.count()
        return out
    page: list[Paper] = []  # the papers from ``offset`` on; those before it are only counted
    passed = 0
    chunk = min(want, MAX_CHUNK)  # most candidates usually pass: the first chunk is a page's worth
    while passed < want and out.scanned < max_scan:
        check()
        found = candidates.fetch(min(chunk, max_scan - out.scanned))  # with the words the index holds of each
        if not found:
            break
        out.scanned += len(found)
        new = _keep([p for p, _ in found], query, filters, [words for _, words in found])
        page.extend(new[max(0, offset - passed):])
        passed += len(new)
        # the next chunk: what the page still lacks at the rate seen so far, plus a quarter
        # (a doubling chunk checked up to twice the candidates a page needed); doubling while
        # nothing passes; never more than MAX_CHUNK between two looks at the deadline
        missing = want - passed
        chunk = min(MAX_CHUNK, max(8, min(2 * chunk, -(-missing * out.scanned * 5 // (4 * passed))))
                    if passed else 2 * chunk)
    else:
        out.capped = passed < want and out.scanned >= max_scan
    candidates.close()
    out.papers = page[:limit]
    out.more = len(page) > limit
    out.first = offset
    if not out.more and not out.capped:  # every match was seen
        out.total = passed if page or not offset else None
    return out


# What each field of the query language reads of a paper (see index.prepare_doc)
_READS = {"ti": ("title",), "abs": ("abstract",), "au": ("authors",),
          "cat": ("categories", "primary_category"),
          "all": ("title", "abstract", "authors"),
          "jr": ("venues", "journal", "journal_ref", "arxiv_id"), "doi": ("dois",),
          "cites": ("cites",), "by": ("followed",)}
_BLANK = {"title": "", "abstract": "", "authors": [], "categories": [], "primary_category": None}


def _reads(node) -> set[str]:
    """The Paper fields the query tree ``node`` looks at."""
    if isinstance(node, Term):
        return set(_READS.get(node.field, _BLANK))  # a field of its own: read everything
    if isinstance(node, Not):
        return _reads(node.item)
    return set().union(*(_reads(item) for item in node.items))


def _lean(papers: list[Paper], query: Query) -> list[Paper]:
    """Copies of ``papers`` without the text ``query`` never reads, when that saves normalising
    text (the authors' names for a ``ti:`` query; a title and an abstract when their stored
    words are missing); the papers themselves when it would save only their categories. The
    query matches a copy exactly when it matches the paper."""
    blank = {k: v for k, v in _BLANK.items() if k not in _reads(query.root)}
    if not blank.keys() & {"title", "abstract", "authors"}:
        return papers
    out = []
    for p in papers:
        p = copy(p)
        for name, value in blank.items():
            setattr(p, name, value)
        out.append(p)
    return out


def _keep(papers: list[Paper], query: Query | None, filters: Filters, words: list[dict]) -> list[Paper]:
    """The ``papers`` that ``query`` and ``filters`` select, checked by the query language;
    ``words``: their normalised words as the store keeps them (``search_title``,
    ``search_abstract``), which the check reads rather than normalising the text again."""
    batch = prepare(_lean(papers, query) if query and filters.matcher is None else papers, words)
    keep = set(batch.evaluate(query.root)) if query else set(range(len(papers)))
    if filters.matcher is not None and keep:
        keep &= set(filters.matcher.score_batch(batch))
    return [p for i, p in enumerate(papers) if i in keep]


def parse_search(text: str) -> Query | None:
    """The query of a search box (QuerySyntaxError when malformed, or past MAX_TERMS terms
    or a term past MAX_TERM_CHARS characters: a search's cost grows with both); None when
    empty."""
    if not text.strip():
        return None
    query = parse_query(text)
    terms = []

    def walk(node):
        if isinstance(node, Term):
            terms.append(node)
        elif isinstance(node, Not):
            walk(node.item)
        else:
            for item in node.items:
                walk(item)

    walk(query.root)
    for term in terms:
        if len(term.text) > MAX_TERM_CHARS:
            raise QuerySyntaxError(f"a word or phrase of a search may have at most {MAX_TERM_CHARS} "
                                   f"characters (this one has {len(term.text)})", text, term.position)
    if len(terms) > MAX_TERMS:
        raise QuerySyntaxError(f"a search may have at most {MAX_TERMS} words, phrases and names "
                               f"(this one has {len(terms)})", text, terms[MAX_TERMS].position)
    return query


SIMILAR_SHOWN = 0.08  # below this cosine, papers share a few words, not a topic (on the
# sample: 0.11-0.15 for two talking-head generators or two RLHF reward papers, 0.05-0.06 for a
# RAG system beside 3D detection): a paper page lists none rather than those


def similar_papers(store: Store, paper: Paper, weight, limit: int = 5,
                   floor: float = SIMILAR_SHOWN) -> list[tuple[Paper, float]]:
    """Stored papers most like ``paper``: candidates sharing its rarest title and abstract
    words (FTS5, bm25), ranked by the cosine similarity the profiles' examples use; none
    below ``floor``."""
    vector = paper_vector(prepare_doc(paper), weight)
    words = sorted(vector, key=lambda w: (-vector[w], w))[:12]  # ties by word: the same on every run
    tokens = [t for w in words for t in _TOKEN.findall(w)]
    if not tokens:
        return []
    expr = " OR ".join(f'"{t}"' for t in dict.fromkeys(tokens))
    found = store.similar_candidates(expr, paper.key)  # with the words the index holds of each
    candidates = [p for p, _ in found]
    if not candidates:
        return []
    scores = similarity(prepare(candidates, [words for _, words in found]), vector, weight)
    best = sorted(scores.items(), key=lambda kv: (-kv[1], candidates[kv[0]].key))[:limit]
    return [(candidates[i], s) for i, s in best if s > 0 and s >= floor]


__all__ = ["ORDERS", "fts_expression", "run_search", "parse_search", "similar_papers", "Filters", "Results"]
