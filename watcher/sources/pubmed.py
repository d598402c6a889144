"""The ``pubmed`` source: NCBI E-utilities, esearch then efetch, by entry date since the last run.

::

    since = ctx.since or state["last_day"] - OVERLAP or now - first_fetch
    GET {url}/esearch.fcgi?db=pubmed&term=TERM&datetype=edat&mindate=SINCE&maxdate=TODAY
                         &usehistory=y&retmax=0&retmode=json            -> count, WebEnv, query_key
    for retstart in 0, BATCH, 2*BATCH, ... < count:
        GET {url}/efetch.fcgi?db=pubmed&WebEnv=…&query_key=…&retstart=…&retmax=BATCH&retmode=xml

The search runs once on NCBI's side and the records are fetched from its history server in
batches, so a search of thousands of records costs count / BATCH requests. NCBI allows three
requests a second without an API key and ten with one (``api_key_env`` names the variable that
holds it): the source paces itself accordingly. The entry date (``edat``) is when a record
entered PubMed; the run reaches back OVERLAP days, and identity makes the overlap free. A
failing request or a malformed answer fails the run; nothing of it is stored.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta

from ..errors import InputError, SourceError
from ..formats import pubmed_xml
from ..masking import remember
from ..kinds import Kind, first_fetch, option, options
from . import urls
from .base import FetchResult, Source
from ..util.paging import Paging
from ..util.text import plural
from .common import first_day, http_client, name_papers, parse_failure, parse_listing

BATCH = 200  # records per efetch (NCBI suggests at most a few hundred for XML); a page of more is refused
MAX_RECORDS = 30_000  # records of one run (all of PubMed adds ~5,000 a day)
MAX_RUN_BYTES = 512 * 1024 * 1024  # the answers of one run, all pages together (~8 KB a record)
OVERLAP = timedelta(days=2)  # records indexed with an entry date a day or two back
RATE = {False: 3.0, True: 10.0}  # requests a second, without / with an API key


# what `url` means (watcher.sources.urls): the default base, the paths watcher adds, an old ending
URL = ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils", "/esearch.fcgi, then /efetch.fcgi", None)

class PubmedSource(Source):
    """Every PubMed record matching ``term`` that entered PubMed since the last run."""

    def __init__(self, cfg, ctx):
        super().__init__(cfg, ctx)
        self.api_key = os.environ.get(cfg.options.api_key_env) if cfg.options.api_key_env else None
        if self.api_key:
            remember(self.api_key)  # it is in every request's URL: masked in every stored error
        self.interval_s = 1.0 / RATE[bool(self.api_key)]
        self._last = None

    def _get(self, endpoint: str, params: dict):
        """One E-utilities request, no sooner than the allowed rate after the previous one."""
        if self._last is not None:
            wait = self.interval_s - (time.monotonic() - self._last)
            if wait > 0:
                time.sleep(wait)
        url = urls.endpoint(URL, self.cfg.url, endpoint)
        params = {"db": "pubmed", "tool": "watcher", **params}
        if self.api_key:
            params["api_key"] = self.api_key
        try:
            return http_client(self).get(url, params=params, timeout=self.cfg.timeout)
        finally:
            self._last = time.monotonic()

    def fetch(self, state: dict) -> FetchResult:
        """Search, then fetch every record in batches; progress counts records."""
        today = self.ctx.now.date()
        first = first_day(self, state, OVERLAP)
        response = self._get("esearch.fcgi", {
            "term": self.cfg.options.term, "datetype": "edat", "mindate": first.strftime("%Y/%m/%d"),
            "maxdate": today.strftime("%Y/%m/%d"), "usehistory": "y", "retmax": 0,
            "retmode": "json"})
        try:
            search = pubmed_xml.parse_esearch(response.content, response.url)
        except InputError as e:
            raise parse_failure(self, e) from e
        count = search["count"]
        if count and not (search["webenv"] and search["querykey"]):
            raise SourceError(f"{response.url}: esearch found {plural(count, 'record')} but gave no "
                              "history (WebEnv); the next run will try again")
        if count > MAX_RECORDS:
            raise SourceError(f"source {self.name}: PubMed found {count:,} records, more than the "
                              f"{MAX_RECORDS:,} one run reads; narrow the term")
        papers = []
        paging = Paging(f"source {self.name}: PubMed", SourceError, pages=MAX_RECORDS // BATCH + 1,
                        items=MAX_RECORDS, size=MAX_RUN_BYTES, per_page=BATCH, unit="records")
        with self.ctx.progress(f"source {self.name}", total=count, unit="records") as progress:
            for start in range(0, count, BATCH):
                paging.next_page()
                response = self._get("efetch.fcgi", {
                    "WebEnv": search["webenv"], "query_key": search["querykey"],
                    "retstart": start, "retmax": BATCH, "retmode": "xml"})
                listing = parse_listing(self, pubmed_xml, response.content, response.url)
                paging.took(len(response.content), len(listing.papers) + len(listing.skipped))
                if not (listing.papers or listing.skipped):  # never fewer records without a word
                    raise SourceError(f"{response.url}: efetch returned no record at {start} of "
                                      f"{count} (the search history may have expired); the next "
                                      "run will try again")
                papers += listing.papers
                progress.advance(len(listing.papers) + len(listing.skipped))
        name_papers(self, papers)
        return FetchResult(papers=papers, state={**state, "last_day": today.isoformat()})


def _validate(r, where: str, v: dict) -> None:
    if not v["term"].strip():
        raise r.fail(f"{where}.term", "must not be empty (a PubMed query such as CRISPR[tiab])")


@options
class PubmedOptions:
    term: str = option(help="a PubMed query, e.g. a saved search (not empty)")
    api_key_env: str | None = option(
        None, secret=True, help="the variable holding an NCBI API key",
        unset=f"PubMed is read at {RATE[False]:g} requests a second ({RATE[True]:g} with an NCBI API key)")
    first_fetch: timedelta | None = first_fetch()


KIND = Kind("pubmed", PubmedSource, PubmedOptions, _validate, url=URL)
