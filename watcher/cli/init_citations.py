"""``watcher init --cite ID… --orcid ORCID``: "alert me when my papers are cited" in one command
(docs/openalex.md).

The starter config gains an ``openalex`` source following the given works (DOIs, arXiv ids,
OpenAlex ids) and, with ``--orcid``, every work OpenAlex lists for that person, asked once now
(:func:`watcher.sources.openalex.works_of`); a profile ``cited`` whose query is ``cites:*``; and a
digest ``citations`` of it, in the formats and through the channels of the config's first digest
(the rich formats carry each card's reason).
"""

from __future__ import annotations

import json
import tomllib
from datetime import datetime

from ..errors import InputError, SourceError

MAX_SEEDED = 2000  # works one ORCID may seed; a list past it is cut, and said so


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string


def citations_config(text: str, cites: list[tuple[str, str | None]], *, mailto: str | None = None,
                     url: str | None = None) -> str:
    """``text`` (a starter config) with the citation alert of ``cites`` ((key, title or None)
    of each followed work) appended; ``url`` (``--openalex-url``), when given, is the source's
    ``url``: the API the works were listed from is the one asked every run."""
    digests = tomllib.loads(text).get("digest") or {}
    first = next(iter(digests.values()), {})
    channels, formats = first.get("channels") or [], first.get("formats") or []
    lines = ["", "# New works citing yours, from OpenAlex (written by watcher init --cite/--orcid).",
             "# Every card says which of yours it cites; add authors = [\"<ORCID>\"] for new works",
             "# by people you follow, and query by:* in a profile.",
             "[source.citations]", 'type = "openalex"', "cites = ["]
    for key, title in cites:
        lines.append(f"  {_toml(key)}," + (f"  # {' '.join(title.split())[:100]}" if title else ""))
    lines += ["]", f"mailto = {_toml(mailto)}" if mailto else '# mailto = "you@example.org"   # OpenAlex\'s polite pool',
              *([f"url = {_toml(url)}"] if url else []),
              "", "[profile.cited]", 'title = "New citations"', 'query = "cites:*"', "",
              "[digest.citations]", 'profiles = ["cited"]', 'every = "1d"',
              *([f"formats = [{', '.join(_toml(f) for f in formats)}]"] if formats else []),
              f"channels = [{', '.join(_toml(c) for c in channels)}]", ""]
    return text.rstrip("\n") + "\n" + "\n".join(lines)


def seed(cites: tuple[str, ...], orcid: str | None, *, mailto: str | None, url: str | None,
         user_agent: str, now: datetime, timeout: float = 30.0) -> list[tuple[str, str | None]]:
    """The followed works of ``--cite`` values and of the works of ``--orcid``, each once;
    InputError for a value that names no work or person, or an ORCID OpenAlex knows no work of;
    SourceError when OpenAlex cannot be asked (exit 1: not a usage error)."""
    from ..formats.openalex import author_ref, work_ref

    out: dict[str, str | None] = {}
    for value in cites:
        key = work_ref(value)
        if key is None:
            raise InputError(f"--cite {value!r}: not a DOI, arXiv id (arxiv:2106.09685), PubMed id "
                             "(pmid:29456894) or OpenAlex work id (W2741809807)")
        out.setdefault(key, None)
    if orcid is not None:
        author = author_ref(orcid)
        if author is None:
            raise InputError(f"--orcid {orcid!r}: not an ORCID such as 0000-0002-1825-0097 "
                             "(whose last character checks the others: a typo?)")
        from ..sources import SourceContext, make_source, source_config
        from ..sources.openalex import works_of

        source = make_source(source_config(name="openalex", type="openalex", url=url, timeout=timeout,
                                           authors=(author,), mailto=mailto),
                             SourceContext(now=now, user_agent=user_agent))
        try:
            works = works_of(source, author)
        except SourceError as e:
            said = str(e).replace("the source's url", "--openalex-url" if url else "--openalex-url (default "
                                  "https://api.openalex.org)")  # init has no source yet: its option
            raise SourceError(f"--orcid {orcid}: listing the works failed: {said}") from None
        if not works:
            raise InputError(f"--orcid {orcid}: OpenAlex lists no work of this ORCID; check it, "
                             "or name your works with --cite")
        for key, title in works[:MAX_SEEDED]:
            out.setdefault(key, title)
    return list(out.items())
