"""The profile query language (docs/profiles.md): parse once into a small tree (pure, no I/O).

Grammar, loosest binding first (operators are upper-case, as on arXiv)::

    query   := or_expr
    or_expr := and_expr ("OR" and_expr)*
    and_expr:= unary (("AND" | "ANDNOT" | nothing) unary)*     # juxtaposition means AND
    unary   := "NOT" unary | primary
    primary := [field ":"] ( "(" or_expr ")" | "quoted phrase" | word )
    field   := ti | abs | au | cat | jr | doi | cites | by | all

A bare word or phrase searches ``all`` (title, abstract and authors). Words and phrases are
normalised by :mod:`watcher.util.text`, so ``fine-tuning`` is the phrase ``fine tuning`` and ``LLMs``
matches ``LLM``. A trailing ``*`` makes a word a prefix (``reinforc*``). ``cat:`` takes an
arXiv category (``cat:cs.CL``: primary or cross-listed there) or an archive (``cat:cs``, or the
wildcard ``cat:cs.*``: any cs category; no other wildcard in a category), or a bioRxiv /
medRxiv subject (``cat:neuroscience``, ``cat:cell_biology``). ``au:`` takes a name
(``au:Levine``, ``au:"S. Levine"``, arXiv's ``au:levine_s``). ``jr:`` takes a journal or
preprint server, the whole name (``jr:biorxiv``, ``jr:arxiv``, ``jr:"Nature Neuroscience"``;
case and punctuation do not matter) or its start (``jr:nature*``); ``doi:`` a DOI
(``doi:10.1038/s41593-026-02114-7``) or its start (``doi:10.1101/*``: every bioRxiv and medRxiv
preprint). ``cites:`` takes a followed work (``cites:10.1038/s41586-021-03819-2``,
``cites:arxiv:2106.09685``, ``cites:W2741809807``) or ``cites:*``, any followed work; ``by:``
(or ``orcid:``) a followed author (``by:0000-0002-1825-0097``, ``by:A5023888391``) or ``by:*``.
Both match what an ``openalex`` source recorded of a paper (docs/openalex.md). A bare word
starting with ``-`` is refused: ``NOT`` excludes, a minus does not.

Parentheses and NOTs nest at most :data:`MAX_DEPTH` deep (``((((x))))`` is 4, ``NOT NOT x`` is
2); deeper queries are refused, so that no query can exhaust the stack of the parser or of
the matchers that walk its tree.

Problems raise :class:`~watcher.errors.QuerySyntaxError` whose ``position`` points at the
offending character, for the CLI's caret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import QuerySyntaxError
from ..models import normalize_doi, title_fingerprint
from ..util.text import fold, name_key, stem, words
from ..formats.openalex import author_ref, work_ref

FIELDS = ("ti", "abs", "au", "cat", "jr", "doi", "cites", "by", "all")
ALIASES = {"orcid": "by"}  # docs/openalex.md writes orcid:0000-0002-1825-0097
OPERATORS = ("AND", "OR", "ANDNOT", "NOT")
MIN_PREFIX = 3  # letters before a wildcard
MAX_DEPTH = 50  # nested parentheses and NOTs

_TOKEN = re.compile(r'\s*(?:(?P<open>\()|(?P<close>\))|(?P<quote>")|(?P<word>[^\s()"]+))')


@dataclass(frozen=True)
class Term:
    """A word or phrase searched in one field. ``words`` are normalised; a word ending in
    ``*`` is a prefix. For ``au`` the single item of ``words`` is unused and ``name`` holds the
    folded name; for ``cat`` ``words`` holds the lower-cased category."""

    field: str
    words: tuple[str, ...]
    text: str  # as typed, for reasons
    position: int
    name: tuple[str, tuple[str, ...]] | None = None

    def display(self, field: str | None = None) -> str:
        """``ti: "GRPO"``: where it matched and what the user typed."""
        return f'{field or self.field}: "{self.text}"'

    def syntax(self) -> str:
        """The term in query syntax, e.g. ``ti:survey`` or ``"world model"``."""
        text = f'"{self.text}"' if " " in self.text else self.text
        return text if self.field == "all" else f"{self.field}:{text}"


@dataclass(frozen=True)
class And:
    """All items match."""

    items: tuple


@dataclass(frozen=True)
class Or:
    """At least one item matches."""

    items: tuple


@dataclass(frozen=True)
class Not:
    """The item does not match."""

    item: object


@dataclass(frozen=True)
class Query:
    """A parsed query: the tree ``root`` and the source ``text``."""

    root: object
    text: str

    def positive_terms(self) -> list[Term]:
        """The terms that count towards a match (those not under a NOT), in query order."""
        out: list[Term] = []

        def walk(node, negated: bool) -> None:
            if isinstance(node, Term):
                if not negated and node not in out:
                    out.append(node)
            elif isinstance(node, Not):
                walk(node.item, not negated)
            else:
                for item in node.items:
                    walk(item, negated)

        walk(self.root, False)
        return out


def terms(query: Query) -> list[Term]:
    """Every term of ``query``, those under a NOT too, in query order."""
    out: list[Term] = []

    def walk(node) -> None:
        if isinstance(node, Term):
            out.append(node)
        else:
            for item in (node.item,) if isinstance(node, Not) else node.items:
                walk(item)

    walk(query.root)
    return out


def parse_query(text: str) -> Query:
    """Parse ``text`` into a :class:`Query`; raise QuerySyntaxError (with position) if it is
    not a valid query."""
    return _Parser(text).parse()


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = self._lex(text)
        self.i = 0
        self.depth = 0  # open parentheses and NOTs around the current token

    def nest(self, tok: tuple[str, str, int]) -> None:
        """Enter a ( or NOT at ``tok``; refuse nesting deeper than MAX_DEPTH."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"nested too deeply (at most {MAX_DEPTH} parentheses and NOTs)", tok[2])

    def fail(self, problem: str, position: int) -> QuerySyntaxError:
        return QuerySyntaxError(problem, self.text, position)

    def _lex(self, text: str) -> list[tuple[str, str, int]]:
        """Tokens as ``(kind, value, position)``; kind is ( ) phrase word op field."""
        out, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:  # only trailing whitespace is left
                break
            kind = m.lastgroup or ""  # never empty: every alternative of _TOKEN is a named group
            start = m.start(kind)
            if kind == "quote":
                end = text.find('"', start + 1)
                if end < 0:
                    raise self.fail("unclosed quote", start)
                out.append(("phrase", text[start + 1:end], start))
                pos = end + 1
                continue
            pos = m.end()
            value = m.group(kind)
            if kind in ("open", "close"):
                out.append((value, value, start))
            elif value in OPERATORS:
                out.append(("op", value, start))
            elif value.lower() in ("and", "or", "not", "andnot"):
                raise self.fail(f"operators are upper-case: write {value.upper()}, or quote "
                                f'"{value}" to search for the word', start)
            elif re.match(r"[A-Za-z]+:", value):
                field, _, rest = value.partition(":")
                field = ALIASES.get(field.lower(), field)
                if field.lower() not in FIELDS:
                    raise self.fail(f"unknown field {field}: (known: {', '.join(FIELDS)})", start)
                out.append(("field", field.lower(), start))
                if rest:
                    out.append(("word", self._word(rest, start + len(field) + 1, field + ":"),
                                start + len(field) + 1))
            else:
                out.append(("word", self._word(value, start), start))
        return out

    def _word(self, value: str, start: int, field: str = "") -> str:
        """A bare word; one that starts with ``-`` is refused: folded, ``-survey`` would search
        for ``survey``, the opposite of what a web search's minus asks for."""
        if len(value) > 1 and value[0] == "-" and value[1].isalnum():
            raise self.fail(f"a leading - does not exclude a word here: write NOT {field}{value[1:]}, or quote "
                            f'"{value}" to search for it', start)
        return value

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def parse(self) -> Query:
        if not self.tokens:
            raise self.fail("empty query", 0)
        root = self.or_expr("all")
        tok = self.peek()
        if tok:  # only a stray ")" can stop or_expr early
            raise self.fail("unexpected ) without a matching (", tok[2])
        return Query(root, self.text)

    def or_expr(self, field: str):
        items = [self.and_expr(field)]
        while (tok := self.peek()) and tok[:2] == ("op", "OR"):
            self.i += 1
            self.operand(field, tok, check_only=True)
            items.append(self.and_expr(field))
        return items[0] if len(items) == 1 else Or(tuple(items))

    def and_expr(self, field: str):
        items = [self.unary(field)]
        while (tok := self.peek()) and tok[0] != ")" and tok[:2] != ("op", "OR"):
            if tok[:2] == ("op", "AND"):
                self.i += 1
                items.append(self.operand(field, tok))
            elif tok[:2] == ("op", "ANDNOT"):
                self.i += 1
                items.append(Not(self.operand(field, tok)))
            else:
                items.append(self.unary(field))
        return items[0] if len(items) == 1 else And(tuple(items))

    def operand(self, field: str, op: tuple[str, str, int], check_only: bool = False):
        """The term after operator ``op`` (or only check that there is one)."""
        tok = self.peek()
        if tok is None or tok[0] == ")" or tok[:2] in (("op", "OR"), ("op", "AND"), ("op", "ANDNOT")):
            raise self.fail(f"{op[1]} needs a term after it", op[2])
        return None if check_only else self.unary(field)

    def unary(self, field: str):
        tok = self.peek()
        if tok and tok[:2] == ("op", "NOT"):
            self.i += 1
            self.nest(tok)
            node = Not(self.operand(field, tok))
            self.depth -= 1
            return node
        return self.primary(field)

    def primary(self, field: str):
        tok = self.peek()
        if tok is None:
            raise self.fail("a term is missing at the end", len(self.text))
        kind, value, pos = tok
        if kind == "field":
            self.i += 1
            nxt = self.peek()
            if nxt is None or nxt[0] in (")", "op", "field"):
                raise self.fail(f"{value}: needs a word, phrase or ( after it", pos)
            return self.primary(value)
        if kind == "op":
            raise self.fail(f"{value} needs a term before it", pos)
        if kind == ")":
            raise self.fail("unexpected ) without a matching (", pos)
        self.i += 1
        if kind == "(":
            if (nxt := self.peek()) and nxt[0] == ")":
                raise self.fail("empty parentheses", pos)
            self.nest(tok)
            node = self.or_expr(field)
            self.depth -= 1
            if not (close := self.peek()) or close[0] != ")":
                raise self.fail("( is never closed", pos)
            self.i += 1
            return node
        return self.term(field, value, pos + (kind == "phrase"), kind == "phrase")

    def venue_or_doi(self, field: str, value: str, pos: int) -> Term:
        """``jr:`` and ``doi:`` terms: a whole name (a title fingerprint) or DOI, lower case; a
        trailing ``*`` makes it a prefix."""
        text = value.strip()
        prefix = text.endswith("*")
        text = text.rstrip("*").strip()
        if "*" in text:
            raise self.fail(f"{field}: takes a * only at the end", pos)
        key: str | None
        if field == "jr":
            key = title_fingerprint(text)
            if not key:
                raise self.fail("jr: needs a journal or server name, such as biorxiv", pos)
        else:
            key = text.lower() if prefix else normalize_doi(text)
            for lead in ("https://doi.org/", "http://doi.org/", "doi:"):
                key = key.removeprefix(lead) if key else key
            if not key or not key.startswith("10."):
                raise self.fail("doi: takes a DOI such as 10.1038/s41586-024-07000-1 (or 10.1101/*)",
                                pos)
        return Term(field, (key + "*" if prefix else key,), value, pos)

    def followed(self, field: str, value: str, pos: int) -> Term:
        """``cites:`` and ``by:`` terms: a followed work's or author's key
        (:mod:`watcher.formats.openalex`), ``*`` for any, or a key's start and ``*``."""
        text = value.strip()
        key: str | None
        if text == "*" or (text.endswith("*") and len(text) > 1 and "*" not in text[:-1]):
            stem = text[:-1]  # keys are upper-case OpenAlex ids and ORCIDs, else lower-case DOIs
            key = (stem.upper() if field == "by" or re.fullmatch(r"[Ww]\d*", stem) else stem.lower()) + "*"
        else:
            key = (work_ref if field == "cites" else author_ref)(text)
        if not key:
            raise self.fail("cites: takes a DOI, arxiv:2106.09685, an OpenAlex id W… or *"
                            if field == "cites" else
                            "by: takes an ORCID such as 0000-0002-1825-0097, an OpenAlex id A… or *",
                            pos)
        return Term(field, (key,), value, pos)

    def term(self, field: str, value: str, pos: int, phrase: bool) -> Term:
        if not value.strip():
            raise self.fail("empty phrase", pos - 1)
        star = value.find("*")
        if star >= 0 and field != "cat":
            for m in re.finditer(r"\*", value):
                after = value[m.end():m.end() + 1]
                if after and not after.isspace():
                    raise self.fail("* can only end a word (as in reinforc*)", pos + m.start())
            if field == "au":
                raise self.fail("au: takes a name, not a wildcard", pos + star)
        if field in ("jr", "doi"):
            return self.venue_or_doi(field, value, pos)
        if field in ("cites", "by"):
            return self.followed(field, value, pos)
        if field == "cat":
            cat = value.strip().lower()
            if cat.endswith(".*"):
                cat = cat[:-2]
            if "*" in cat or " " in cat:
                raise self.fail("cat: takes a category like cs.CL or an archive like cs", pos)
            return Term("cat", (cat.replace("_", " "),), value, pos)
        if field == "au":
            raw = value
            if "_" in value and " " not in value:  # arXiv style levine_s
                last, *given = value.split("_")
                raw = " ".join(given + [last])
            key = name_key(raw)
            if key is None:
                raise self.fail("au: needs a name", pos)
            return Term("au", (key[0],), value, pos, name=key)
        out: list[str] = []
        for chunk in value.split():
            prefix = chunk.endswith("*")
            if not prefix:
                parts = words(chunk.rstrip("*"))
            else:
                parts = re.findall(r"[a-z0-9]+", fold(chunk.rstrip("*")))
                if not parts or len(parts[-1]) < MIN_PREFIX:
                    raise self.fail(f"a wildcard needs at least {MIN_PREFIX} letters before *",
                                    pos)
                parts = [stem(p) for p in parts[:-1]] + [parts[-1] + "*"]
            out.extend(parts)
        if not out:
            raise self.fail(f"nothing to search for in {value!r}", pos)
        return Term(field, tuple(out), value, pos)
