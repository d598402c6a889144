"""Text normalisation shared by the query language and the matcher (pure, no I/O).

Matching is whole-word over *normalised tokens*:

* LaTeX markup is dropped (``Pok\\'emon`` -> ``pokemon``, ``$Q$``-function -> ``q function``,
  ``\\textbf{RL}`` -> ``rl``, ``\\textbf{Di}ffusion`` -> ``diffusion``) and accents are folded
  (``Blüml`` -> ``bluml``, ``M{\\"u}ller`` -> ``muller``);
* case is folded; apostrophes vanish (``LLM's`` -> ``llms``);
* every other non-alphanumeric character separates words, so hyphen and space are the same
  (``fine-tuning`` and ``fine tuning`` both give ``fine tuning``);
* simple plurals are reduced (``LLMs`` -> ``llm``, ``policies`` -> ``policy``).

A field is stored as ``" tok tok tok "`` (a space on both ends), so a phrase is a substring
test for ``" a b "``.
"""

from __future__ import annotations

import re
import unicodedata

_LATEX_ACCENT = re.compile(r"\\(?:[`'^\"~=.]\{?\s*|[uvHcdbk](?:\{\s*|\s+))([a-zA-Z])\}?")
_LATEX_CMD = re.compile(r"\\[a-zA-Z]+\*?")
_WORD = re.compile(r"[a-z0-9]+")
# ASCII text splits faster by str.translate + split than by _WORD.findall (same words).
_SEPARATORS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isdigit()
                             and not ("a" <= chr(c) <= "z")})
# Words ending in s that are not plurals (or whose plural would collide); the static site's
# search (templates/web/static/search.js) reads the same list from its page.
NOT_PLURAL = _NOT_PLURAL = frozenset(
    "this has was is its his yes thus plus less bias gas lens news series species "
    "analysis basis hypothesis synthesis thesis axis chaos atlas canvas corpus status "
    "campus virus bonus focus consensus versus various previous across always perhaps "
    "mas gans its ours yours does goes".split()
)


def fold(text: str) -> str:
    """Lower-case ASCII-ish text: LaTeX markup dropped, accents folded, apostrophes removed."""
    if "\\" in text:
        text = _LATEX_ACCENT.sub(r"\1", text)
        text = _LATEX_CMD.sub(" ", text)
        # a group's braces join what they touch: \textbf{Di}ffusion, M{\"u}ller (not "di ffusion")
        text = text.replace("{", "").replace("}", "")
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c)).replace("\u2019", "")
    return text.replace("'", "").casefold()


def stem(word: str) -> str:
    """Reduce a simple plural: ``llms`` -> ``llm``, ``policies`` -> ``policy``, ``boxes``
    stays ``boxe`` (both sides of a comparison are stemmed alike, so that is harmless)."""
    if len(word) <= 3 or word[-1] != "s" or word in _NOT_PLURAL:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


_STEMS: dict[str, str] = {}


def words(text: str) -> list[str]:
    """The normalised (folded, split, singular) words of ``text``."""
    text = fold(text)
    found = text.translate(_SEPARATORS).split() if text.isascii() else _WORD.findall(text)
    out: list = list(map(_STEMS.get, found))  # a known word costs one C-level lookup
    if None in out:
        if len(_STEMS) > 500_000:  # bound the memory of long-running daemons
            _STEMS.clear()
        for k, s in enumerate(out):
            if s is None:
                out[k] = _STEMS[found[k]] = stem(found[k])
    return out


def field_text(text: str) -> str:
    """``text`` as a space-padded string of normalised words, for phrase tests."""
    return " " + " ".join(words(text)) + " "


# --- author names ---------------------------------------------------------------------------

_NAME_SPLIT = re.compile(r"[^a-z]+")


def name_key(name: str) -> tuple[str, tuple[str, ...]] | None:
    """``(surname, given names)`` of an author, folded: ``"S. Levine"`` ->
    ``("levine", ("s",))``; ``"Levine, Sergey"`` -> ``("levine", ("sergey",))``.

    Returns None for a name without letters.
    """
    text = fold(name)
    if "," in text:
        last, _, first = text.partition(",")
        text = f"{first} {last}"
    parts = [p for p in _NAME_SPLIT.split(text) if p]
    if not parts:
        return None
    return parts[-1], tuple(parts[:-1])


def same_person(wanted: tuple[str, tuple[str, ...]], actual: tuple[str, tuple[str, ...]]) -> bool:
    """Whether author ``actual`` can be the person ``wanted`` names (both from :func:`name_key`).

    Surnames must be equal; each given name of ``wanted`` must equal the one at the same place in
    ``actual`` or be its initial (``S. Levine`` = ``Sergey Levine``, ``Sergey Levine`` =
    ``S. Levine``). A bare surname matches everyone of that surname.
    """
    if wanted[0] != actual[0]:
        return False
    for want, have in zip(wanted[1], actual[1]):
        if want == have:
            continue
        if len(want) == 1 and have.startswith(want):
            continue
        if len(have) == 1 and want.startswith(have):
            continue
        return False
    return True


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters plus "…"."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,;:.") + "…"


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 paper``, ``2 papers`` (``words``, when given, is the plural: ``2 tries``): every
    count in words, in digests, logs and messages."""
    return f"{n} {word}" if n == 1 else f"{n} {words or word + 's'}"
