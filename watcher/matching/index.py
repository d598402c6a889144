"""Prepared papers: normalised text computed once, and an inverted index over a batch (pure).

:func:`prepare` turns papers into a :class:`Batch`. Each query term is then looked up once per
batch (a set of paper positions per field) instead of once per paper, so scoring many profiles
against many papers costs about one set operation per query node, plus a phrase check on the
few papers that hold all of a phrase's words.
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..util.turns import take_turn
from ..models import Paper, title_fingerprint
from .query import Not, Or, Term
from ..util.text import field_text, name_key, same_person
from ..formats.openalex import entries

CENTROID_WORDS = 300  # a centroid of examples keeps its heaviest words (watcher.matching.match, watcher.matching.learn)
SIMILAR_ONE = 0.12  # the similarity threshold of a single example (a prior for a few)
_SETS = ("categories", "venues", "dois", "cites", "followed")  # Doc fields that are sets of whole values, not text
_SET_OF = {"jr": "venues", "doi": "dois", "cites": "cites", "by": "followed"}  # field -> Doc set
SCAN_DOCS = 512  # a batch this small looks a word up by reading its papers' fields ...
SCANS = 8  # ... for this many words of a field; the next one indexes the field (see postings)



@dataclass(slots=True)
class Doc:
    """One paper's normalised fields (see :mod:`watcher.util.text`)."""

    paper: Paper
    title: str  # " tok tok "
    abstract: str
    authors: str  # " sergey levine , haozhan shen "
    names: tuple  # name_key() of each author
    categories: frozenset[str]  # "cs.cl" and its archive "cs"
    venues: frozenset[str] = frozenset()  # "biorxiv", "nature neuroscience" (title_fingerprint)
    dois: frozenset[str] = frozenset()
    cites: frozenset[str] = frozenset()  # keys of the followed works it cites (cites:)
    followed: frozenset[str] = frozenset()  # keys of the followed authors who wrote it (by:)


@dataclass(slots=True)
class Hit:
    """Where a term matched in one paper: in the title, in the abstract (how often), in the
    author list or in the categories."""

    title: bool = False
    abstract: int = 0
    author: bool = False
    category: bool = False


def prepare_doc(paper: Paper, stored: dict | None = None) -> Doc:
    """Normalise one paper's searchable fields. ``stored``: the paper's :func:`search_text` as
    the store keeps it beside the paper (every write computes it again), whose title and
    abstract words are these fields' words as they are: normalising an abstract again is most of
    a search's check of a candidate. A column missing or NULL there is normalised here."""
    names = tuple(k for k in (name_key(a) for a in paper.authors) if k)
    authors = " " + " , ".join(" ".join((*given, last)) for last, given in names) + " "
    cats: set[str] = set()
    for c in (*paper.categories, paper.primary_category or ""):
        if c:
            c = c.lower()
            cats.update((c, c.split(".")[0]))
    venues = {title_fingerprint(v) for v in (*paper.venues, paper.journal, paper.journal_ref) if v}
    if paper.arxiv_id:
        venues.add("arxiv")
    title = abstract = None
    if stored:
        title, abstract = stored.get("search_title"), stored.get("search_abstract")
    return Doc(paper, field_text(paper.title) if title is None else f" {title} ",
               field_text(paper.abstract or "") if abstract is None else f" {abstract} ", authors,
               names, frozenset(cats), frozenset(venues), frozenset(paper.dois),
               _entry_keys(paper.cites), _entry_keys(paper.followed))


def _entry_keys(values) -> frozenset[str]:
    """The keys of a paper's ``cites`` or ``followed`` entries (``key|title``)."""
    return frozenset(key for key, _ in entries(values)) if values else frozenset()


def search_text(paper: Paper) -> dict[str, str]:
    """What the full-text index holds of ``paper``: exactly the normalised words the matcher
    sees (:func:`prepare_doc`), one column per field — ``search_title``, ``search_abstract``,
    ``search_authors`` (each author's given names and surname) and ``search_categories``
    (each category and its archive as one token, ``cs.lg cs``). So a word the matcher finds
    is a word the index finds: no stemmer of its own, LaTeX, accents, ligatures and
    apostrophes folded alike."""
    doc = prepare_doc(paper)
    return {"search_title": doc.title.strip(), "search_abstract": doc.abstract.strip(),
            "search_authors": " ".join(" ".join((*given, last)) for last, given in doc.names),
            "search_categories": " ".join(sorted(doc.categories))}


class Batch:
    """Papers prepared for matching, with per-field word -> positions indexes.

    Term lookups are cached, so many profiles sharing terms pay for each term once.
    """

    def __init__(self, papers: Iterable[Paper], stored: Sequence[dict | None] | None = None):
        papers = list(papers)
        self.docs = []
        for p, w in zip(papers, stored or [None] * len(papers), strict=True):
            take_turn()  # beside a server's pages: they go first (util.turns)
            self.docs.append(prepare_doc(p, w))
        self.all = frozenset(range(len(self.docs)))
        self._index: dict[str, dict[str, list[int]]] = {}
        self._hits: dict[tuple, dict[int, Hit]] = {}
        self._sets: dict[tuple[str, str], set[int]] = {}
        self._scans: dict[str, int] = defaultdict(int)
        self._sorted: dict[str, list[str]] = {}
        self._keys: dict[tuple, set[int]] = {}
        self._authored: dict[tuple, dict[int, list[int]]] = {}
        self._surnames: dict[str, list[tuple]] | None = None
        self._norms: tuple = (None, [])

    def __len__(self) -> int:
        return len(self.docs)

    def index(self, field: str) -> dict[str, list[int]]:
        """``word -> positions`` (ascending) for field ``title``, ``abstract``, ``authors``,
        ``categories``, ``venues`` or ``dois``. Lists, not sets: building is the matcher's biggest fixed cost, and only
        the few words a query asks for become sets (:meth:`postings`)."""
        if field not in self._index:
            idx: dict[str, list[int]] = defaultdict(list)
            for i, doc in enumerate(self.docs):
                value = getattr(doc, field)
                for word in value if field in _SETS else set(value.split()):
                    idx[word].append(i)
            self._index[field] = dict(idx)
        return self._index[field]

    def norms(self, weight, title_boost: float = 0.0) -> list[float]:
        """Per paper, the length of its word vector (see :func:`paper_vector`) under ``weight``
        and ``title_boost``; cached for the last pair asked."""
        if self._norms[0] != (weight, title_boost):
            squares = [0.0] * len(self.docs)
            title, abstract = self.index("title"), self.index("abstract")
            boosted = (1.0 + title_boost) ** 2
            for word in title.keys() | abstract.keys():
                w = weight(word)
                if w:  # common words weigh 0: their long postings are skipped
                    w *= w
                    in_title = title.get(word, ())
                    for i in in_title:
                        squares[i] += w * boosted
                    if in_title:
                        titled = set(in_title)
                        for i in abstract.get(word, ()):
                            if i not in titled:
                                squares[i] += w
                    else:
                        for i in abstract.get(word, ()):
                            squares[i] += w
            self._norms = ((weight, title_boost), [math.sqrt(x) for x in squares])
        return self._norms[1]

    def postings(self, field: str, word: str) -> set[int]:
        """Papers whose ``field`` holds ``word`` (a trailing ``*`` makes it a prefix); cached,
        not to be modified."""
        key = (field, word)
        found = self._sets.get(key)
        if found is None and self._scannable(field, word):
            self._scans[field] += 1
            found = self._sets[key] = self._scan(field, word)
        if found is None:
            idx = self.index(field)
            if word.endswith("*"):
                found = set()
                for w in self._completions(field, word[:-1]):
                    found.update(idx[w])
            else:
                found = set(idx.get(word, ()))
            self._sets[key] = found
        return found

    def _scannable(self, field: str, word: str) -> bool:
        """Whether :meth:`postings` reads the papers' ``field`` for ``word`` rather than indexing
        the field: a small batch (a search's chunk of candidates) asked for a few words costs
        one substring test per paper and word, where the index costs a split and a list append
        per word of every paper — most of a search's check. A big batch, or a field asked for
        many words (many profiles), is indexed once as before."""
        stem = word[:-1] if word.endswith("*") else word
        return (field not in self._index and len(self.docs) <= SCAN_DOCS and self._scans[field] < SCANS
                and (field in _SETS or bool(stem) and " " not in stem))  # a text field's words: no spaces

    def _scan(self, field: str, word: str) -> set[int]:
        """The papers whose ``field`` holds ``word`` (``word*``: a word starting with it), read
        from each paper: what the field's index gives, as a text field is its words between
        single spaces (``" tok tok "``) and a set field holds whole values."""
        docs = self.docs
        if field in _SETS:
            if word.endswith("*"):
                stem = word[:-1]
                return {i for i, doc in enumerate(docs) if any(v.startswith(stem) for v in getattr(doc, field))}
            return {i for i, doc in enumerate(docs) if word in getattr(doc, field)}
        needle = " " + word[:-1] if word.endswith("*") else f" {word} "
        return {i for i, doc in enumerate(docs) if needle in getattr(doc, field)}

    def _completions(self, field: str, stem: str) -> list[str]:
        """The words of ``field`` that start with ``stem``, found by bisection in the sorted
        vocabulary (a scan of every word cost each wildcard term a pass over the vocabulary)."""
        vocabulary = self._sorted.get(field)
        if vocabulary is None:
            vocabulary = self._sorted[field] = sorted(self.index(field))
        start = bisect.bisect_left(vocabulary, stem)
        end = start
        while end < len(vocabulary) and vocabulary[end].startswith(stem):
            end += 1
        return vocabulary[start:end]

    def authored(self, name: tuple[str, tuple[str, ...]]) -> dict[int, list[int]]:
        """The papers with an author who can be ``name`` (a :func:`~watcher.util.text.name_key`,
        see :func:`~watcher.util.text.same_person`), each with the positions of those authors among
        its ``names``; cached, not to be modified."""
        found = self._authored.get(name)
        if found is None:
            if self._surnames is None:  # surname -> (paper, author position, name key)
                self._surnames = defaultdict(list)
                for i, doc in enumerate(self.docs):
                    for k, actual in enumerate(doc.names):
                        self._surnames[actual[0]].append((i, k, actual))
            found = {}
            for i, k, actual in self._surnames.get(name[0], ()):
                if same_person(name, actual):
                    found.setdefault(i, []).append(k)
            self._authored[name] = found
        return found

    def _field_hits(self, field: str, words: tuple[str, ...]) -> set[int]:
        sets = sorted((self.postings(field, w) for w in words), key=len)
        found = set(sets[0]).intersection(*sets[1:]) if sets else set()
        if len(words) == 1 or not found:
            return found
        if any(w.endswith("*") for w in words):
            parts = [re.escape(w[:-1]) + "[a-z0-9]*" if w.endswith("*") else re.escape(w)
                     for w in words]
            rx = re.compile(" " + " ".join(parts) + " ")
            return {i for i in found if rx.search(getattr(self.docs[i], field))}
        phrase = " " + " ".join(words) + " "
        return {i for i in found if phrase in getattr(self.docs[i], field)}

    def hits(self, term: Term) -> dict[int, Hit]:
        """Every paper the term matches, and where."""
        key = (term.field, term.words, term.name)
        if key in self._hits:
            return self._hits[key]
        out: dict[int, Hit] = {}
        if term.field == "cat":
            for i in self.index("categories").get(term.words[0], ()):
                out[i] = Hit(category=True)
        elif term.field in ("jr", "doi", "cites", "by"):  # a whole value, or a prefix of one (*)
            for i in self.postings(_SET_OF[term.field], term.words[0]):
                out[i] = Hit(category=True)
        elif term.field == "au":
            for i in self.authored(term.name):  # type: ignore[arg-type]  # an au term has its name
                out[i] = Hit(author=True)
        else:
            if term.field in ("ti", "all"):
                for i in self._field_hits("title", term.words):
                    out[i] = Hit(title=True)
            if term.field in ("abs", "all"):
                phrase = " " + " ".join(term.words) + " "
                prefix = any(w.endswith("*") for w in term.words)
                for i in self._field_hits("abstract", term.words):
                    tf = 1 if prefix else self.docs[i].abstract.count(phrase)
                    out.setdefault(i, Hit()).abstract = max(tf, 1)
            if term.field == "all":
                for i in self._field_hits("authors", term.words):
                    out.setdefault(i, Hit()).author = True
        self._hits[key] = out
        return out

    def matching(self, term: Term) -> set[int]:
        """The positions of the papers ``term`` matches (the keys of :meth:`hits`); cached, not
        to be modified."""
        key = (term.field, term.words, term.name)
        found = self._keys.get(key)
        if found is None:
            found = self._keys[key] = set(self.hits(term))
        return found

    def evaluate(self, node, within: set[int] | None = None) -> set[int]:
        """The positions of the papers that match the query tree ``node``; with ``within``, only
        those among ``within`` (the same answer intersected with it, for the cost of
        ``within`` rather than of the whole batch)."""
        if isinstance(node, Term):
            found = self.matching(node)
            return set(found) if within is None else found & within
        if isinstance(node, Or):
            out: set[int] = set()
            for item in node.items:
                out |= self.evaluate(item, within)
            return out
        if isinstance(node, Not):
            return set(self.all if within is None else within) - self.evaluate(node.item, within)
        positive = [it for it in node.items if not isinstance(it, Not)]
        negative = [it.item for it in node.items if isinstance(it, Not)]
        if positive:
            out = self.evaluate(positive[0], within)
            for item in positive[1:]:
                if not out:
                    break
                out &= self.evaluate(item, out)
        else:
            out = set(self.all if within is None else within)
        for item in negative:
            if not out:
                break
            out -= self.evaluate(item, out)
        return out


def prepare(papers: Iterable[Paper] | Batch, stored: list[dict] | None = None) -> Batch:
    """A :class:`Batch` for ``papers`` (a Batch is returned as it is); ``stored``: each
    paper's stored :func:`search_text` (see :func:`prepare_doc`)."""
    return papers if isinstance(papers, Batch) else Batch(papers, stored)


def paper_vector(doc: Doc, weight, title_boost: float = 0.0) -> dict[str, float]:
    """How :func:`similarity` sees a paper: each distinct word of title and abstract weighs
    ``weight(word)`` (0 drops it), times ``1 + title_boost`` when it is in the title; unit
    length (empty without a weighted word)."""
    take_turn()
    title = set(doc.title.split())
    out = {}
    for word in title | set(doc.abstract.split()):
        if w := weight(word):
            out[word] = w * (1.0 + title_boost) if word in title else w
    return _unit(out)


def example_vector(doc: Doc, weight, title_boost: float = 0.0) -> dict[str, float]:
    """An example paper as a query vector: like :func:`paper_vector`, but a word repeated in
    the abstract weighs more (``1 + ln(count)``), as it says more about what the example is
    about; unit length."""
    take_turn()
    title = set(doc.title.split())
    counts: dict[str, int] = defaultdict(int)
    for word in doc.abstract.split():
        counts[word] += 1
    out = {}
    for word in title | counts.keys():
        if w := weight(word):
            n = counts.get(word, 0)
            out[word] = w * ((1.0 + math.log(n)) if n else 1.0) + (w * title_boost if word in title else 0.0)
    return _unit(out)


def centroid(vectors: list[dict[str, float]], size: int) -> dict[str, float]:
    """The mean of ``vectors`` (Rocchio), cut to its ``size`` heaviest words, unit length."""
    return top_words(vector_sum(vectors), size)


def vector_sum(vectors: list[dict[str, float]]) -> dict[str, float]:
    """The word-wise sum of ``vectors``."""
    total: dict[str, float] = defaultdict(float)
    for vector in vectors:
        for word, w in vector.items():
            total[word] += w
    return dict(total)


def top_words(vector: dict[str, float], size: int) -> dict[str, float]:
    """The ``size`` heaviest words of ``vector`` (ties by word), as a unit vector."""
    take_turn()
    return _unit(dict(heapq.nlargest(size, vector.items(), key=lambda kv: (kv[1], kv[0]))))


def _unit(vector: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(w * w for w in vector.values()))
    return {word: w / norm for word, w in vector.items()} if norm else {}


class Nearest:
    """Many unit vectors indexed by word: the dot products of a vector with each of them at the
    cost of its words' postings, not of a cosine with every one (a profile with 600 liked
    papers names the closest of them for each paper it selects)."""

    def __init__(self, vectors: list[dict[str, float]]):
        self.count = len(vectors)
        postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for k, vector in enumerate(vectors):
            for word, w in vector.items():
                postings[word].append((k, w))
        self.postings = dict(postings)

    def dots(self, vector: dict[str, float]) -> list[float]:
        """The dot product of ``vector`` with each of the vectors, in their order."""
        out = [0.0] * self.count
        postings = self.postings
        for word, x in vector.items():
            for k, w in postings.get(word, ()):
                out[k] += x * w
        return out


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    """The dot product of two unit vectors."""
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(word, 0.0) for word, w in a.items())


def similarity(batch: Batch, vector: dict[str, float], weight, floor: float = 0.0,
               title_boost: float = 0.0) -> dict[int, float]:
    """Cosine similarity of each paper of ``batch``, seen as :func:`paper_vector` under
    ``weight`` and ``title_boost``, to ``vector`` (``word -> weight``).

    Only papers sharing a word with ``vector``, and with a similarity of at least ``floor``,
    are returned.
    """
    norms = batch.norms(weight, title_boost)
    vector_norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
    acc: dict[int, float] = defaultdict(float)
    for word, v in vector.items():
        take_turn()
        w = weight(word)
        if not w:
            continue
        v *= w
        in_title = batch.postings("title", word)
        for i in in_title | batch.postings("abstract", word):
            acc[i] += v
        if title_boost:
            v *= title_boost
            for i in in_title:
                acc[i] += v
    out = {i: s / (vector_norm * norms[i]) for i, s in acc.items() if norms[i]}
    return {i: s for i, s in out.items() if s >= floor} if floor else out
