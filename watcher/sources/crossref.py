"""The ``crossref`` source: new works of journals followed by ISSN, or of publishers by DOI
prefix, from Crossref's REST API (``/works``): for a journal whose publisher serves no usable
feed (ACS, IEEE, APS …). See docs/sources.md, "Journals by ISSN (Crossref)".

Each run::

    since = ctx.since or state["last_day"] - OVERLAP or now - first_fetch
    for each stream: issn (issn:A,issn:B… OR-ed), doi_prefix (prefix:10.1021,…):
        cursor = "*"
        GET {url}/works?filter=<stream>,from-index-date:SINCE,from-created-date:SINCE-OLD
                       &rows=ROWS&cursor=CURSOR&mailto=…
        ... cursor = message.next-cursor, until a page holds no item

``from-index-date`` is the day Crossref last indexed a work: a work registered late, or whose
metadata a publisher sent again (its abstract added), is caught; ``from-created-date`` (the day
its DOI was registered, at most OLD before the window) leaves out the old works of the journal
that Crossref indexes again for a new citation count. Identity by DOI makes a work seen twice one
paper. ``mailto`` puts the requests in Crossref's polite pool: it is sent as a parameter and in
the User-Agent (``watcher/… (mailto:you@example.org)``), as Crossref's etiquette asks.
Requests go through the shared HTTP client (its deadline, size cap, retries honouring
``Retry-After``); a run is bounded in all, every stream together (:func:`run_paging`): pages,
works, bytes and time; a page of more works than ``rows`` asked is refused. A failure or a bound
reached fails the run in one line, nothing of it is kept, and the next run asks again.
"""

from __future__ import annotations

import re
from datetime import timedelta

from ..errors import InputError, SourceError
from ..formats import crossref
from ..kinds import Kind, first_fetch, option, options
from ..util.paging import Paging
from . import urls
from .base import FetchResult, Source
from .common import first_day, http_client, name_papers, parse_failure

OVERLAP = timedelta(days=2)  # works indexed a day or two back
OLD = timedelta(days=30)  # a work registered this long before the window is an old one indexed again
MAX_PAGES = 100  # pages of one run, every stream together (empty pages count too)
MAX_WORKS = 20_000  # works of one run: a year of a large journal
MAX_PAGE_BYTES = 16 * 1024 * 1024  # one page of 1000 works with abstracts and references
MAX_RUN_BYTES = 256 * 1024 * 1024
MAX_SECONDS = 900.0  # one run, every page of every stream
MAX_VALUES = 50  # values OR-ed in one request
_ISSN = re.compile(r"(\d{4})-?(\d{3}[\dXx])")
_PREFIX = re.compile(r"10\.\d{4,9}")

# what `url` means (watcher.sources.urls): the default base, the paths watcher adds, an old ending
URL = ("https://api.crossref.org", "/works", None)


class CrossrefSource(Source):
    """New works of the followed ISSNs and DOI prefixes."""

    def _get(self, params: dict):
        opts = self.cfg.options
        agent = None
        if opts.mailto:
            params = {**params, "mailto": opts.mailto}
            agent = f"{self.ctx.user_agent} (mailto:{opts.mailto})"
        return http_client(self).get(urls.endpoint(URL, self.cfg.url, "/works"), params=params,
                                     timeout=self.cfg.timeout, max_bytes=MAX_PAGE_BYTES, user_agent=agent)

    def streams(self) -> list[str]:
        """The filters this run pages through, one request chain each (values of one name are
        OR-ed by Crossref; an ISSN and a prefix together would be AND-ed, so each has its own)."""
        out = []
        for name, values in (("issn", self.cfg.options.issn), ("prefix", self.cfg.options.doi_prefix)):
            out += [",".join(f"{name}:{v}" for v in values[i:i + MAX_VALUES])
                    for i in range(0, len(values), MAX_VALUES)]
        return out

    def fetch(self, state: dict) -> FetchResult:
        """Page through each stream from ``first_day``; progress counts works."""
        since = first_day(self, state, OVERLAP)
        window = f"from-index-date:{since.isoformat()},from-created-date:{(since - OLD).isoformat()}"
        paging, papers, total = run_paging(self.name), [], 0
        with self.ctx.progress(f"source {self.name}", unit="works") as progress:
            for stream in self.streams():
                params = {"filter": f"{stream},{window}", "rows": self.cfg.options.rows}
                for n, page in enumerate(self.pages(params, paging)):
                    if n == 0 and page.count is not None:
                        total += page.count
                        progress.set_total(total)
                    progress.advance(page.items)
                    papers += page.papers
        name_papers(self, papers)
        return FetchResult(papers=papers, state={**state, "last_day": self.ctx.now.date().isoformat()})

    def pages(self, params: dict, paging: Paging):
        """Each page of ``/works`` with ``params``, by cursor, until a page holds no work (or
        no next cursor), within ``paging``."""
        cursor = "*"
        while True:
            paging.next_page()
            response = self._get({**params, "cursor": cursor})
            try:
                page = crossref.parse_page(response.content, response.url, max_results=self.cfg.options.rows)
            except InputError as e:
                raise parse_failure(self, e) from e
            paging.took(len(response.content), page.items)
            yield page
            if not page.items or not page.next_cursor:
                return
            cursor = page.next_cursor


def run_paging(name: str) -> Paging:
    """The bounds of one run, every stream together (see the module docstring)."""
    return Paging(f"source {name}: Crossref", SourceError, pages=MAX_PAGES, items=MAX_WORKS,
                  size=MAX_RUN_BYTES, seconds=MAX_SECONDS, unit="works")


def issn_of(text: str) -> str | None:
    """An ISSN as ``1234-567X`` when ``text`` is one whose check digit holds, else None."""
    m = _ISSN.fullmatch(text.strip())
    if not m:
        return None
    digits = (m[1] + m[2]).upper()
    total = sum(int(d) * w for d, w in zip(digits[:7], range(8, 1, -1)))
    check = (11 - total % 11) % 11
    return f"{digits[:4]}-{digits[4:]}" if digits[7] == ("X" if check == 10 else str(check)) else None


def _validate(r, where: str, v: dict) -> dict:
    issns, prefixes = [], []
    for value in v["issn"]:
        issn = issn_of(value)
        if issn is None:
            raise r.fail(f"{where}.issn", f"{value!r} is not an ISSN such as 0002-7863 (whose last "
                                          "character checks the others)")
        issns.append(issn)
    for value in v["doi_prefix"]:
        prefix = value.strip().removeprefix("https://doi.org/").rstrip("/")
        if not _PREFIX.fullmatch(prefix):
            raise r.fail(f"{where}.doi_prefix", f"{value!r} is not a DOI prefix such as 10.1021")
        prefixes.append(prefix)
    if not (issns or prefixes):
        raise r.fail(f"{where}.issn", "a crossref source follows something: give issn (journals) "
                                      "or doi_prefix (publishers)")
    if not 1 <= v["rows"] <= 1000:
        raise r.fail(f"{where}.rows", f"must be between 1 and 1000, got {v['rows']}")
    if v["mailto"] is not None:
        r.address(f"{where}.mailto", v["mailto"])
    return {"issn": tuple(dict.fromkeys(issns)), "doi_prefix": tuple(dict.fromkeys(prefixes))}


@options
class CrossrefOptions:
    issn: tuple[str, ...] = option((), help="journals to follow, by ISSN (print or electronic), "
                                            "such as `0002-7863`")
    doi_prefix: tuple[str, ...] = option((), help="publishers to follow, by DOI prefix, such as `10.1021`")
    mailto: str | None = option(None, help="an e-mail address: the requests join Crossref's polite "
                                           "pool (sent as a parameter and in the User-Agent)")
    rows: int = option(100, help="works asked per page (1–1000)")
    first_fetch: timedelta | None = first_fetch()


KIND = Kind("crossref", CrossrefSource, CrossrefOptions, _validate, url=URL)
