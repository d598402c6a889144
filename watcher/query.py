"""Profile query language (interim: terms, "phrases", AND, OR; replaced by the full parser)."""

from __future__ import annotations

import re

from .errors import QuerySyntaxError

_TOKEN = re.compile(r'\s*("([^"]*)"|\(|\)|[^\s()"]+)')


def parse_query(text: str):
    """Parse ``text`` into a list of OR-groups of AND-terms (interim form)."""
    pos, groups, current = 0, [], []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                raise QuerySyntaxError("unclosed quote", text, text.index('"', pos))
            break
        tok = m.group(1)
        if tok == "OR":
            groups.append(current)
            current = []
        elif tok not in ("AND", "(", ")"):
            current.append((m.group(2) if m.group(2) is not None else tok).lower())
        pos = m.end()
    groups.append(current)
    return [g for g in groups if g]
