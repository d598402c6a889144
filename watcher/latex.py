"""LaTeX to plain text, the one way watcher reads LaTeX in what it shows (pylatexenc): arXiv
titles and abstracts carry ``Pok\\'emon``, ``$\\alpha$``, ``\\textbf{RL}``; every card (web,
e-mail, Markdown, Slack, apprise, Atom), the BibTeX export and the TL;DR show them decoded.

The matcher's words (:mod:`watcher.text`) fold LaTeX on their own, faster and only as far as
words need (accents and commands dropped): matching runs over every stored paper, a card over
a few.
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache

_UNESCAPED = re.compile(r"(?<!\\)([%&#])")  # in plain text (HF titles): text, not LaTeX


def plain_text(text: str) -> str:
    """What a title or abstract says, with its LaTeX decoded (pylatexenc): ``Pok\\'emon`` ->
    ``Pokémon``, ``\\textbf{RL}`` -> ``RL``, ``50\\%`` -> ``50%``, ``$\\alpha$`` -> ``α``.
    Unknown macros (``\\input``, ``\\write18``) are dropped; text that is not LaTeX at all
    (``R&D at 100%``) or that does not parse is kept as it is."""
    import unicodedata

    from pylatexenc.latex2text import LatexNodes2Text

    source = _UNESCAPED.sub(r"\\\1", text)
    if len(re.findall(r"(?<!\\)\$", source)) % 2:  # a lone dollar is money, not math
        source = re.sub(r"(?<!\\)\$", r"\\$", source)
    _failures.count = 0
    try:
        decoded = LatexNodes2Text(math_mode="text").latex_to_text(source)
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
logging.getLogger("pylatexenc.latex2text").addFilter(_failures)

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
