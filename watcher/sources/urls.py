"""What a source's ``url`` means, for every source: **the address of the service, before the
paths watcher adds** (docs/sources.md gives an example per source). Pure: no I/O.

=============  ========================================  =====================================
type           url (default)                             watcher asks
=============  ========================================  =====================================
arxiv          https://export.arxiv.org/api              {url}/query?search_query=…
hf-daily       https://huggingface.co/api                {url}/daily_papers?date=…
biorxiv        https://api.biorxiv.org                   {url}/details/{server}/{from}/{to}/{cursor}
pubmed         https://eutils.ncbi.nlm.nih.gov/entrez/eutils   {url}/esearch.fcgi, {url}/efetch.fcgi
openalex       https://api.openalex.org                  {url}/works?filter=…
arxiv-oai      https://oaipmh.arxiv.org/oai              {url}?verb=ListRecords… (OAI-PMH's base URL)
arxiv-rss      https://rss.arxiv.org/rss/{categories}    {url} (the feed: nothing added)
feed, listing  (required)                                {url} (the document: nothing added)
=============  ========================================  =====================================

A config written when ``url`` was the whole endpoint for ``arxiv`` and ``hf-daily``
(``…/api/query``, ``…/api/daily_papers``) keeps working: that ending is recognised and taken off
(:func:`base`), and ``watcher check`` says in one line what to write instead (:func:`legacy_note`).
"""

from __future__ import annotations

# type -> (default base, path watcher adds, the ending an old full-endpoint url had)
RULES: dict[str, tuple[str, str, str | None]] = {
    "arxiv": ("https://export.arxiv.org/api", "/query", "/query"),
    "hf-daily": ("https://huggingface.co/api", "/daily_papers", "/daily_papers"),
    "biorxiv": ("https://api.biorxiv.org", "/details/{server}/{from}/{to}/{cursor}", None),
    "pubmed": ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils", "/esearch.fcgi, then /efetch.fcgi", None),
    "openalex": ("https://api.openalex.org", "/works", None),
    "arxiv-oai": ("https://oaipmh.arxiv.org/oai", "", None),
}


def base(type_: str, url: str | None) -> str:
    """The service's address for a source of ``type_`` whose config says ``url`` (None: the
    default), without a trailing slash; an old full-endpoint spelling loses its ending."""
    default, _, old_ending = RULES[type_]
    chosen = (url or default).rstrip("/")
    if url and old_ending and chosen.endswith(old_ending):
        chosen = chosen[: -len(old_ending)]
    return chosen


def endpoint(type_: str, url: str | None, path: str) -> str:
    """``path`` (one of the service's: "/query", "/works", "esearch.fcgi") under the source's
    base."""
    return base(type_, url) + ("/" + path.lstrip("/") if path else "")


def asked(cfg) -> str | None:
    """What a source will ask, as ``watcher check`` says it: the base and the paths added."""
    if cfg.type in RULES:
        _, paths, _ = RULES[cfg.type]
        return base(cfg.type, cfg.url) + paths.replace("{server}", getattr(cfg.options, "server", None) or "biorxiv")
    if cfg.type == "arxiv-rss":
        from .arxiv_rss import RSS_URL

        return cfg.url or RSS_URL + "+".join(cfg.options.categories)
    path = getattr(cfg.options, "path", None)
    return getattr(cfg, "url", None) or (str(path) if path else None)


def legacy_note(cfg) -> str | None:
    """One line when ``cfg.url`` is spelt the old way (the whole endpoint): what to write."""
    if cfg.type not in RULES or not cfg.url:
        return None
    _, _, old_ending = RULES[cfg.type]
    if old_ending and cfg.url.rstrip("/").endswith(old_ending):
        return (f"source.{cfg.name}.url: {cfg.url!r} names the whole endpoint; url is the service's "
                f"address, before the paths watcher adds ({old_ending}): write "
                f"url = \"{base(cfg.type, cfg.url)}\" (read so now)")
    return None
