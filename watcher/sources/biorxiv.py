"""The ``biorxiv`` source: the bioRxiv / medRxiv details API, day interval by day interval.

Each run asks for every posting since it last looked, reaching back for late postings::

    since = ctx.since                                   # watcher fetch --since (backfill)
         or state["last_day"] - OVERLAP                 # the last day fetched, less 14 days
         or now - first_fetch                           # the very first run
    for each category (or once, without ?category=):
        cursor = 0
        GET {url}/details/{server}/{since}/{today}/{cursor}[?category=neuro_science]
        ... cursor += the page's count, until cursor reaches the page's total

A record is one version of a preprint: the store merges a v2 into the paper it already holds
(an update, never a new paper), and a record's ``published`` DOI ties the preprint to its
journal version (docs/design.md). The overlap re-reads a few days, which identity makes free: records
already stored are unchanged, a late posting is new when it comes. A page that fails (HTTP,
malformed JSON) fails the run and the state stays, so the next run asks again; nothing of a
failed run is stored.
"""

from __future__ import annotations

from datetime import timedelta

from ..errors import SourceError
from ..formats import biorxiv_json
from .arxiv import OVERLAP as ARXIV_OVERLAP
from ..kinds import Kind, first_fetch, option, options
from ..categories import nearest
from ..subjects import SUBJECTS, subject
from . import urls
from .base import FetchResult, Source
from ..util.paging import Paging
from .common import first_day, http_client, name_papers, parse_listing

# as far back as the arXiv source reaches (two weeks): a posting that reaches the API's
# interval late (moderation, a holiday backlog) is still asked for; identity makes it free
OVERLAP = ARXIV_OVERLAP
MAX_PAGES = 2000  # 200,000 records: far beyond any interval; a server that never ends stops
MAX_RECORDS = 100_000  # records of one run, every category together (a month of bioRxiv is ~5,000)
MAX_RUN_BYTES = 256 * 1024 * 1024  # the answers of one run, all pages together


# what `url` means (watcher.sources.urls): the default base, the paths watcher adds, an old ending
URL = ("https://api.biorxiv.org", "/details/{server}/{from}/{to}/{cursor}", None)

class BiorxivSource(Source):
    """Every posting of the server (in the categories, when given) since the last run."""

    def interval(self, state: dict):
        """The first and last day this run asks for."""
        return first_day(self, state, OVERLAP), self.ctx.now.date()

    def fetch(self, state: dict) -> FetchResult:
        """Fetch every page of the interval, per category; progress counts records."""
        first, last = self.interval(state)
        server = self.cfg.options.server or "biorxiv"
        base = urls.base(URL, self.cfg.url)
        url = f"{base}/details/{server}/{first.isoformat()}/{last.isoformat()}"
        papers: dict = {}
        paging = Paging(f"source {self.name}: the bioRxiv API", SourceError, pages=MAX_PAGES,
                        items=MAX_RECORDS, size=MAX_RUN_BYTES, unit="records")
        with self.ctx.progress(f"source {self.name}", unit="records") as progress:
            for category in self.cfg.options.categories or (None,):
                for paper in self._interval(url, category, progress, paging):
                    papers.setdefault(paper.key, []).append(paper)
        found = [p for versions in papers.values()
                 for p in sorted(versions, key=lambda p: p.version or 0)]
        name_papers(self, found)
        return FetchResult(papers=found, state={**state, "last_day": last.isoformat()})

    def _interval(self, url: str, category: str | None, progress, paging: Paging):
        params = {"category": category.replace(" ", "_")} if category else None
        client = http_client(self)
        cursor, total = 0, None
        while True:
            paging.next_page()
            response = client.get(f"{url}/{cursor}", params=params, timeout=self.cfg.timeout)
            listing = parse_listing(self, biorxiv_json, response.content, response.url)
            paging.took(len(response.content), len(listing.papers) + len(listing.skipped))
            if listing.total is not None and total is None:
                total = listing.total
                progress.set_total(total)
            count = len(listing.papers) + len(listing.skipped)
            progress.advance(count)
            if count == 0 and total and cursor < total:  # never fewer papers without a word
                raise SourceError(f"{response.url}: the bioRxiv API returned no record at cursor "
                                  f"{cursor} of {total}; the next run will try again")
            yield from listing.papers
            cursor += count
            if count == 0 or total is None or cursor >= total:
                return


def _validate(r, where: str, v: dict) -> dict:
    r.choice(f"{where}.server", v["server"], tuple(SUBJECTS))
    return {"categories": tuple(_subject(r, f"{where}.categories", c, v["server"]) for c in v["categories"])}


def _subject(r, key: str, value: str, server: str) -> str:
    """A bioRxiv / medRxiv subject of ``server`` (see :mod:`watcher.subjects`), as the server
    writes it."""
    name = subject(value)
    if name not in SUBJECTS[server]:
        near = nearest(name, {s: s for s in SUBJECTS[server]})
        raise r.fail(key, f"{value!r} is not a {server} subject" + (
            f"; did you mean {near}?" if near else
            f" (such as {', '.join(repr(s) for s in SUBJECTS[server][:3])}; see the server's "
            "subject list)"))
    return name


@options
class BiorxivOptions:
    server: str = option("biorxiv", help="`biorxiv` or `medrxiv`")
    categories: tuple[str, ...] = option((), help="the server's subject names such as `neuroscience`, "
                                                 "`cell biology` (default: every subject)")
    first_fetch: timedelta | None = first_fetch()


KIND = Kind("biorxiv", BiorxivSource, BiorxivOptions, _validate, url=URL)
