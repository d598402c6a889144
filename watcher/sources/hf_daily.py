"""The ``hf-daily`` source: Hugging Face Daily Papers, one ``?date=YYYY-MM-DD`` per day.

Each run asks for every day from the last successful fetch to today (so missed days are caught
up), re-asking the last day and yesterday so that their upvotes refresh; the first run reaches
back ``first_fetch``; ``watcher fetch --since DAY`` starts at DAY. Each paper keeps upvotes,
organisation, GitHub repo and AI keywords, and ``announced`` = the Daily Papers day. A paper
already stored from arXiv merges with it (same arXiv id) and gains these fields.
"""

from __future__ import annotations

from datetime import date, timedelta

from ..formats import hf_json
from ..kinds import Kind, first_fetch, options
from . import urls
from .base import FetchResult, Source
from .common import first_day, http_client, name_papers, parse_listing

REFRESH_DAYS = 1  # also re-ask this many days before the last one fetched (upvotes grow)


# what `url` means (watcher.sources.urls): the default base, the paths watcher adds, an old ending
URL = ("https://huggingface.co/api", "/daily_papers", "/daily_papers")

class HfDailySource(Source):
    """Daily Papers for each day since the last fetch, today included."""

    def days(self, state: dict) -> list[date]:
        """The days this run asks for, oldest first."""
        today = self.ctx.now.date()
        first = first_day(self, state, timedelta(days=REFRESH_DAYS))
        return [first + timedelta(days=i) for i in range((today - first).days + 1)]

    def fetch(self, state: dict) -> FetchResult:
        """Fetch every day; a failing day fails the run (state stays, the next run repeats).
        Progress counts the days."""
        url = urls.endpoint(URL, self.cfg.url, "/daily_papers")
        client = http_client(self)
        papers = {}
        days = self.days(state)
        with self.ctx.progress(f"source {self.name}", total=len(days), unit="days") as progress:
            for day in days:
                response = client.get(url, params={"date": day.isoformat()}, timeout=self.cfg.timeout)
                listing = parse_listing(self, hf_json, response.content, response.url, today=day)
                for paper in listing.papers:
                    paper.announced = day
                    papers[paper.key] = paper  # a later day's listing has fresher upvotes
                progress.advance()
        found = list(papers.values())
        name_papers(self, found)
        return FetchResult(papers=found, state={**state, "last_day": self.ctx.now.date().isoformat()})


@options
class HfDailyOptions:
    first_fetch: timedelta | None = first_fetch()


KIND = Kind("hf-daily", HfDailySource, HfDailyOptions, url=URL)
