"""The ``listing`` source: a listing in any supported format (the seed text digest, an HF Daily
Papers page, JSON, or any arXiv/HF format) from a URL (``http``, ``https``, ``file://``) or a
path, fetched conditionally (ETag / Last-Modified) and gunzipped when compressed."""

from __future__ import annotations

import os
from pathlib import Path

from .. import formats
from ..errors import InputError, SourceError
from ..masking import remember
from ..kinds import Kind, option, options
from .base import FetchResult, Source
from .common import conditional_get, name_papers, parse_failure


class ListingSource(Source):
    """A listing file or URL; its papers are filed under the listing's own date if it has one."""

    @property
    def url(self) -> str:
        """The ``url``, else the value of ``url_env`` (a secret: masked wherever it could
        show), else the ``path`` as a ``file://`` URL."""
        if self.cfg.url:
            return self.cfg.url
        if self.cfg.options.url_env:
            value = os.environ.get(self.cfg.options.url_env, "").strip()
            if not value:
                raise SourceError(f"[source.{self.name}] url_env: environment variable "
                                  f"{self.cfg.options.url_env} is not set")
            remember(value)
            return value
        if self.cfg.options.path is None:
            raise SourceError(f"[source.{self.name}] needs url or path")
        return self.cfg.options.path.resolve().as_uri()

    def fetch(self, state: dict) -> FetchResult:
        """Fetch and parse the listing (format detected from its content)."""
        response, validators = conditional_get(self, self.url, state)
        if response.not_modified:
            return FetchResult(papers=[], state=state, not_modified=True)
        try:
            listing = formats.read(response.content, response.url, today=self.ctx.now.date())
        except InputError as e:
            raise parse_failure(self, e) from e
        for paper in listing.papers:
            paper.announced = paper.announced or listing.date
        name_papers(self, listing.papers)
        new_state = dict(validators)
        return FetchResult(papers=listing.papers, state=new_state)


def _validate(r, where: str, v: dict) -> None:
    if not (v.get("url") or v.get("path") or v.get("url_env")):
        raise r.fail(f"{where}.url", "a listing source needs url, url_env or path")


@options
class ListingOptions:
    path: Path | None = option(None, help="a listing file, relative to the config's folder")
    url_env: str | None = option(None, secret=True, help="the variable holding a URL that carries a key "
                                                         "(`?apikey=…`), instead of `url`")


KIND = Kind("listing", ListingSource, ListingOptions, _validate,
            local_url=True, no_backfill="a listing is read whole, as it is")
