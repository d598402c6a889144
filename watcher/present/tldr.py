"""The extractive TL;DR: one sentence of the abstract that says what the paper does (docs/channels.md).

Pure and deterministic, no model, no network: :func:`extractive_tldr` cleans the abstract of
LaTeX (math kept as plain text, commands dropped, ``\\textbf{x}`` -> ``x``), splits it into
sentences (not at "e.g.", "et al.", "Fig. 2" or "3.5"), and picks the sentence that states the
contribution: the first one with a strong cue ("we propose", "this paper introduces", "we
present" ...), else a weaker cue ("we show", "we study"), else the first sentence that is
not background, else the first. A leading connective clause ("To address this, we propose X")
is dropped, and a sentence longer than :data:`MAX_CHARS` is cut at a clause boundary or a
word, with "…".

:func:`tldr_of` is what every renderer and channel calls: the TL;DR the pipeline computed
(``Match.tldr``, maybe a model's), else this one. :func:`stored_tldrs` is the same choice for
stored papers (the web inbox): the model's TL;DR kept in the database, else this one, memoised.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .latex import to_text
from ..util.text import shorten

MAX_CHARS = 200

# --- LaTeX ---------------------------------------------------------------------------------

def clean_latex(text: str) -> str:
    """``text`` with LaTeX markup turned into plain text, on one line (:func:`watcher.present.latex.to_text`,
    on pylatexenc); text without LaTeX only gets TeX's quotes and non-breaking spaces read.

    >>> clean_latex(r"We reach $92.5\\%$ on \\textbf{MATH} with $\\sim 3\\times$ fewer tokens~\\cite{x}.")
    'We reach 92.5% on MATH with ∼3× fewer tokens.'
    """
    text = " ".join(str(text).split())
    text = text.replace("``", "\u201c").replace("''", "\u201d")  # TeX quotes, LaTeX or not
    if "\\" not in text and "$" not in text:  # no LaTeX: braces and dashes are text; a tilde
        # between words ("Fig.~2", "et al.~[3]") is LaTeX's non-breaking space all the same
        return re.sub(r"(?<=[A-Za-z.,])~(?=[A-Za-z0-9(\[])", " ", text)
    return to_text(text)


# --- sentences -----------------------------------------------------------------------------

# Words after which a period does not end a sentence.
_ABBREV = {"e.g", "i.e", "et al", "al", "etc", "vs", "cf", "fig", "figs", "eq", "eqs", "sec",
           "no", "approx", "resp", "ref", "refs", "dr", "prof", "mr", "ms", "st", "viz", "ca",
           "incl", "w.r.t", "wrt", "a.k.a", "u.s", "ph.d", "e.t.c", "tab", "appx", "ch", "vol"}
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'\u201d)\]]*\s+(?=[\"'\u201c(\[]*[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """``text`` split into sentences (abbreviations, initials and decimals do not split)."""
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        before = text[start:m.start()].rstrip("\"'\u201d)]")
        last = before.rsplit(None, 1)[-1] if before.split() else ""
        word = last.rstrip(".!?").lstrip("(\"'\u201c[").lower()
        if before.endswith(".") and (word in _ABBREV or re.fullmatch(r"[a-z]", word)
                                     or before.lower().endswith("et al.")):
            continue
        out.append(text[start:m.start()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


# --- choosing ------------------------------------------------------------------------------

_SUBJECT = r"(?:we|this (?:paper|work|study|article|letter|thesis|report|note)|here,? we|in this (?:paper|work|study|article|letter),? we|our (?:work|paper|approach|method|framework|study))"
_STRONG = re.compile(
    rf"\b{_SUBJECT}\s+(?:\w+ly\s+)?(?:propos|present|introduc|develop|design|build|built|construct|"
    r"formulat|devis|releas|establish|deriv|contribut|describ|offer|put forward|puts forward|"
    r"creat|provid|address|tackl|leverag|extend)\w*\b", re.I)
_WEAK = re.compile(
    rf"\b{_SUBJECT}\s+(?:\w+ly\s+)?(?:show|stud|investigat|explor|examin|analy[sz]|demonstrat|"
    r"evaluat|find|found|prove|proving|argu|focus|consider|aim|seek|sought|revisit|benchmark|"
    r"compar|characteri[sz]|appl|use|conduct|perform|measur|assess|quantif|test|identif|report|"
    r"reveal|uncover|highlight|discuss|review|survey|curat|collect|train|fine-tun|pre-?train)\w*\b", re.I)
_NAMED = re.compile(r"\b(?:we|this paper|this work)\b.{0,40}?\b(?:called|named|dubbed|termed)\b", re.I)
_BACKGROUND = re.compile(
    r"^(?:recent|recently|despite|although|while|however|large language models|llms|in recent|"
    r"over the past|with the|as |the (?:rapid|recent|success|emergence|growing|increasing)|"
    r"existing|current|traditional|conventional|many|most|prior|previous)", re.I)
_LEAD_IN = re.compile(  # "To address this, we ..." / "Drawing on X, this paper ..."
    r"^[A-Z][^.;:!?]{0,100}?,\s+(?=(?:we|this (?:paper|work|study|article|letter)|our)\b)")
_CONNECTIVE_LEAD = re.compile(  # "To this end we propose" / "Thus we show": the "we" stands alone
    r"^(?:to (?:this|that) end|thus|hence|therefore|consequently|accordingly|in response|"
    r"motivated by (?:this|these)(?: \w+)?|inspired by (?:this|these)(?: \w+)?)\s*,?\s+(?=we\b)", re.I)
_AND_STRONG = re.compile(
    rf"\b{_SUBJECT}\s+[^.;:,]{{0,40}}?\band\s+(?:\w+ly\s+)?(?:propos|present|introduc|develop|"
    r"design|build|release|construct|formulat|devis|creat|provid)\w*\b", re.I)


# Words after which a mid-sentence "we ..." still opens the main clause ("To this end we
# propose"); after any other word it is a relative clause ("datasets we curated").
_CONNECTIVES = {"end", "paper", "work", "study", "article", "letter", "here", "thus", "hence",
                "then", "therefore", "also", "first", "second", "third", "finally", "further",
                "and", "so", "now", "instead", "specifically", "moreover", "additionally",
                "furthermore", "consequently", "accordingly", "next", "lastly", "overall", "that",
                "this", "paper,", "i.e.", "e.g.", "addition", "particular", "contrast", "short",
                "summary", "sum", "response", "practice", "turn", "doing", "result"}


def _main_clause(sentence: str, start: int) -> bool:
    prefix = sentence[:start].rstrip()
    if not prefix or prefix[-1] in ",;:(—–-\u201c\"'":
        return True
    return prefix.rsplit(None, 1)[-1].lower() in _CONNECTIVES


_DANGLING_START = re.compile(  # opens by pointing back at what came before
    r"^(?:these|those|such|it|its|they|their|them|both|then|thus|hence|therefore|however|"
    r"moreover|furthermore|additionally|also|besides|finally|specifically|similarly|likewise|"
    r"consequently|accordingly|nevertheless|nonetheless|instead|in addition|in particular|"
    r"in contrast|as a result|to this end|this (?!(?:paper|work|study|article|letter|thesis|"
    r"report|note|survey|review|tutorial|position paper)\b))\b", re.I)
_DANGLING_REF = re.compile(  # "these two approaches", "such methods", "the latter" in the middle
    r"\b(?:these|those|such(?! as\b)|the (?:former|latter|above|aforementioned)|aforementioned)\b"
    r"|\bthis (?!(?:paper|work|study|article|letter|thesis|report|note|survey|review|tutorial|"
    r"end|way|setting|context|domain|field|area)\b)(?:\w+ )?(?:problem|issue|gap|challenge|"
    r"limitation|question|approach|method|idea|phenomenon|task|setting|observation|insight|"
    r"finding|bottleneck|trade-off|tradeoff|shortcoming|drawback|difficulty|line|direction)s?\b", re.I)


def stands_alone(sentence: str) -> bool:
    """Whether ``sentence`` reads alone: it does not open with, or lean on, a reference to what
    the abstract said before it ("These two approaches ...", "we close this gap")."""
    s = _lead_dropped(sentence)
    return not (_DANGLING_START.match(s) or _DANGLING_REF.search(s))


def _lead_dropped(sentence: str) -> str:
    """``sentence`` without a lead-in clause before its "we ..." ("To address this, we" ->
    "we"; "To this end we" -> "we")."""
    return _CONNECTIVE_LEAD.sub("", _LEAD_IN.sub("", sentence, count=1), count=1)


def _ranked(sents: list[str]) -> list[str]:
    """The sentences in the order they are tried: contribution cues first (strong, "and
    introduce", named, weak), then those that are not background, then the rest."""
    out: list[str] = []
    for pattern in (_STRONG, _AND_STRONG, _NAMED, _WEAK):
        out += [s for s in sents if s not in out
                and any(_main_clause(s, m.start()) for m in pattern.finditer(s))]
    out += [s for s in sents if s not in out and not _BACKGROUND.match(s)]
    return out + [s for s in sents if s not in out]


def choose(sents: list[str], limit: int = MAX_CHARS) -> str:
    """The sentence that states what the paper does (see the module docstring): the first in
    cue order that is whole within ``limit`` and stands alone; else the first whole one; else
    the first that stands alone (to be cut); else the first."""
    ranked = _ranked(sents)
    fits = [s for s in ranked if len(_lead_dropped(s)) <= limit]
    for group in ([s for s in fits if stands_alone(s)], fits, [s for s in ranked if stands_alone(s)], ranked):
        if group:
            return group[0]
    return ""


def tighten(sentence: str, limit: int = MAX_CHARS) -> str:
    """Drop a lead-in clause before "we ...", capitalise, and cut to ``limit`` characters."""
    s = _lead_dropped(sentence)
    s = s[:1].upper() + s[1:]
    if len(s) <= limit:
        return s
    window = s[:limit - 1]
    cut = -1
    for sep in ("; ", " — ", ", which ", ", where ", ", while ", ", and ", ", by ", ", achieving ",
                ", enabling ", ", allowing ", ", using ", ", with ", ", "):
        i = window.rfind(sep)
        if i >= limit * 0.5:
            cut = i
            break
    if cut < 0:
        cut = window.rfind(" ")
        if cut < limit * 0.5:
            cut = limit - 1
    return s[:cut].rstrip(" ,;:.(–—") + "…"


def extractive_tldr(abstract: str, limit: int = MAX_CHARS) -> str:
    """One sentence of ``abstract`` that says what the paper does, at most ``limit`` characters;
    "" when there is no abstract (many journal feeds list titles only: the title again under
    itself would say nothing, so every format leaves the TL;DR out)."""
    text = clean_latex(abstract or "")
    sents = sentences(text)
    if not sents:
        return ""
    out = tighten(choose(sents, limit), limit)
    if not out.endswith((".", "?", "!", ")", '"', "\u201d", "…")) and len(out) < limit:
        out += "."  # the abstract's last sentence, without its period
    return out


def tldr_quality(tldrs: list[str]) -> dict[str, float]:
    """Shares of ``tldrs`` (the benchmark's figures): ``whole`` ends a sentence (not cut with
    "…"), ``alone`` stands alone (:func:`stands_alone`), ``good`` both and no LaTeX ``~``,
    ``cut``, ``dangling`` and ``tilde`` (a ``~`` left over)."""
    n = len(tldrs) or 1
    cut = [t.endswith("…") for t in tldrs]
    alone = [stands_alone(t) for t in tldrs]
    tilde = ["~" in t for t in tldrs]
    return {"whole": 1 - sum(cut) / n, "alone": sum(alone) / n, "cut": sum(cut) / n,
            "dangling": 1 - sum(alone) / n, "tilde": sum(tilde) / n,
            "good": sum(not c and a and not t for c, a, t in zip(cut, alone, tilde)) / n}


def excerpt(abstract: str, tldr: str, limit: int) -> str:
    """The abstract, its LaTeX read as the TL;DR's is (``Pok\\'emon`` is Pokémon), cut to
    ``limit`` characters at a word, shown under the TL;DR; when the abstract opens with the
    TL;DR's sentence, the excerpt starts after it (no repeat), and an abstract that is nothing
    but that sentence has no excerpt ("")."""
    text = clean_latex(abstract or "")
    head = tldr.removesuffix("…")[:60].lower()
    sents = sentences(text)
    if sents and head and head in sents[0].lower():  # "In this paper, we …" too
        if len(sents) == 1:
            return ""
        text = text[text.index(sents[1]):]
    return shorten(text, limit)


def tldr_of(match) -> str:
    """The TL;DR of a :class:`~watcher.models.Match` on one line: the one the pipeline set,
    else the extractive one."""
    if getattr(match, "tldr", None):
        return " ".join(str(match.tldr).split())
    return _memo(match.paper.abstract or "")


MEMO_SIZE = 2048  # TL;DRs and excerpts kept (each holds its abstract, ~1.5 KB): web pages show
# the same papers again and again


@lru_cache(maxsize=MEMO_SIZE)
def _memo(abstract: str) -> str:
    return extractive_tldr(abstract)


def stored_tldrs(papers, cached: dict[str, str | None]) -> dict[str, str]:
    """Paper key -> TL;DR for stored ``papers``: the model's TL;DR in ``cached`` (what
    :meth:`~watcher.store.Store.tldr_cached` read, the summarizer's cache) when there is one,
    else the extractive TL;DR — the one a digest carried. The extractive ones are memoised by
    abstract (about 0.1 ms each; a page of 30 cards would pay 3 ms every view)."""
    out = {}
    for p in papers:
        model = cached.get(p.key)
        out[p.key] = " ".join(model.split()) if model else _memo(p.abstract or "")
    return out


@lru_cache(maxsize=MEMO_SIZE)
def stored_excerpt(abstract: str, tldr: str, limit: int) -> str:
    """:func:`excerpt`, memoised for the web pages and the digest templates (it splits the whole
    abstract into sentences: about 0.1 ms a paper, and a template asks twice)."""
    return excerpt(abstract, tldr, limit)
