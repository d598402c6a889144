"""LaTeX to plain text, the one way watcher reads LaTeX in what it shows (pylatexenc): arXiv
titles and abstracts carry ``Pok\\'emon``, ``$\\alpha$``, ``\\textbf{RL}``; every card (web,
e-mail, Markdown, Slack, apprise, Atom), the BibTeX export and the TL;DR show them decoded.

The matcher's words (:mod:`watcher.util.text`) fold LaTeX on their own, faster and only as far as
words need (accents and commands dropped): matching runs over every stored paper, a card over
a few.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata
from functools import lru_cache

_UNESCAPED = re.compile(r"(?<!\\)([%&#])")  # in plain text (HF titles): text, not LaTeX
_MATH = re.compile(r"(?<!\\)\$\$?((?:[^$\\]|\\.)*)\$\$?")
_OPERATOR = re.compile(r"\s*([×≈≤≥≠±·→←∼])\s*")
# Macros an abstract carries that say nothing in plain text (a citation, a reference, a
# footnote, spacing, a colour), and two whose last argument is the text (a link, coloured text).
_DROPPED = ("cite", "citep", "citet", "citealp", "ref", "eqref", "autoref", "cref", "Cref", "label",
            "footnote", "url", "vspace", "hspace", "color")


def _second_argument(n, l2tobj) -> str:
    """The text of a macro's second argument (``\\href{url}{text}``, ``\\textcolor{red}{text}``),
    or nothing when an abstract cut it off (``\\href{url}`` at the end of a piece): pylatexenc's
    ``"%(2)s"`` raised KeyError there and took the whole digest down with it."""
    args = n.nodeargd.argnlist if n.nodeargd and n.nodeargd.argnlist else []
    return l2tobj._groupnodecontents_to_text(args[1]) if len(args) > 1 and args[1] is not None else ""


@functools.cache
def _converter():
    """pylatexenc's parser context and converter, with :data:`_DROPPED`, ``\\href`` and
    ``\\textcolor`` added to its defaults."""
    from pylatexenc import latex2text, latexwalker, macrospec

    parsing = latexwalker.get_default_latex_context_db()
    parsing.add_context_category("watcher", prepend=True, macros=[
        macrospec.MacroSpec("href", "{{"), macrospec.MacroSpec("textcolor", "{{"),
        *[macrospec.MacroSpec(name, "*[{") for name in _DROPPED]])
    texts = latex2text.get_default_latex_context_db()
    texts.add_context_category("watcher", prepend=True, macros=[
        latex2text.MacroTextSpec("href", simplify_repl=_second_argument),
        latex2text.MacroTextSpec("textcolor", simplify_repl=_second_argument),
        *[latex2text.MacroTextSpec(name, discard=True) for name in _DROPPED]])
    return parsing, latex2text.LatexNodes2Text(latex_context=texts, math_mode="text")


def _decode(source: str) -> str:
    from pylatexenc import latexwalker

    parsing, converter = _converter()
    nodes, _, _ = latexwalker.LatexWalker(source, latex_context=parsing,
                                          tolerant_parsing=True).get_latex_nodes()
    return converter.nodelist_to_text(nodes)


_GROUP = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"  # a braced group, three levels deep
# What pylatexenc changes in running text: an accent and its letter, a macro with its arguments,
# a braced group, a brace left over, TeX's dashes, quotes and non-breaking space. The text
# between them is what it is (pylatexenc walks a text one character at a time: given only
# these pieces it decodes an abstract in under a millisecond instead of twenty).
_LATEX_PIECE = re.compile(r"\\[`'^\"~=.](?:" + _GROUP + r"|[A-Za-z])"
                          r"|\\(?:[A-Za-z]+\*?|.)(?:\s*(?:\[[^\[\]{}]*\]|" + _GROUP + r"))*"
                          r"|" + _GROUP + r"|[{}]|-{2,3}|``|''|~")


def _decode_text(text: str) -> str:
    """Running text (no math) decoded: each piece of :data:`_LATEX_PIECE` by pylatexenc."""
    out, last = [], 0
    for m in _LATEX_PIECE.finditer(text):
        out += [text[last:m.start()], _decode(m.group(0))]
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def to_text(text: str) -> str:
    """``text`` with its LaTeX decoded to plain text on one line (pylatexenc): accents and
    symbols as characters (``Pok\\'emon`` -> ``Pokémon``, ``$\\alpha$`` -> ``α``), formatting
    commands reduced to their text (``\\textbf{RL}`` -> ``RL``), citations, references and
    footnotes dropped, inline math as text with its operators drawn tight (``$\\sim 3\\times$``
    -> ``∼3×``), TeX quotes and dashes as typographic ones. ``%``, ``&`` and ``#`` not escaped
    are text (a Hugging Face title is not LaTeX), and so is a lone ``$``.

    >>> to_text(r"We reach $92.5\\%$ on \\textbf{MATH} with $\\sim 3\\times$ fewer tokens~\\cite{x}.")
    'We reach 92.5% on MATH with ∼3× fewer tokens.'
    """
    text = " ".join(str(text).split())
    source = _UNESCAPED.sub(r"\\\1", text)
    if len(re.findall(r"(?<!\\)\$", source)) % 2:  # a lone dollar is money, not math
        source = re.sub(r"(?<!\\)\$", r"\\$", source)
    parts, last = [], 0
    for m in _MATH.finditer(source):
        parts.append(_decode_text(source[last:m.start()]))
        parts.append(" ".join(_OPERATOR.sub(r"\1", _decode("$" + m.group(1) + "$")).split()))
        last = m.end()
    parts.append(_decode_text(source[last:]))
    out = unicodedata.normalize("NFKC", "".join(parts))
    out = re.sub(r"\s+([,.;:!?)])", r"\1", out)
    return " ".join(re.sub(r"\(\s+", "(", out).split())


def plain_text(text: str) -> str:
    """What a title or abstract says, with its LaTeX decoded (:func:`to_text`): ``Pok\\'emon``
    -> ``Pokémon``, ``\\textbf{RL}`` -> ``RL``, ``50\\%`` -> ``50%``, ``$\\alpha$`` -> ``α``.
    Unknown macros (``\\input``, ``\\write18``) are dropped; text that is not LaTeX at all
    (``R&D at 100%``) or that does not parse is kept as it is."""
    _failures.count = 0
    try:
        decoded = to_text(text)
    except Exception:  # pylatexenc's own parse errors: keep the text as it came
        decoded = None
    if decoded is None or _failures.count:
        decoded = text
    return " ".join(unicodedata.normalize("NFKC", decoded).split())


class _Failures(logging.Filter, threading.local):
    """Counts, in this thread, pylatexenc's warnings (a macro whose arguments are missing
    decodes to ``%s``), and keeps them out of watcher's log: the text is then kept as it came."""

    count = 0

    def filter(self, record):
        self.count += 1
        return False


_failures = _Failures()
for _name in ("pylatexenc.latex2text", "pylatexenc.latexwalker", "pylatexenc._util"):
    logging.getLogger(_name).addFilter(_failures)


@lru_cache(maxsize=4096)
def title_text(title: str) -> str:
    """A title as a card shows it: :func:`plain_text`, memoised (pages show the same titles
    again and again); a title without LaTeX's marks is kept as it is."""
    title = str(title or "")
    if not _MARKS.search(title):
        return title
    return plain_text(title)


_MARKS = re.compile(r"[\\$]")


__all__ = ["plain_text", "title_text"]
