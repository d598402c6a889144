"""What a source's ``url`` means, for every source: **the address of the service, before the
paths watcher adds** (docs/sources.md gives an example per source). Each kind declares its rule
in its module (``URL = (default base, paths added, old ending)``, its ``KIND``'s ``url``). Pure: no I/O.

The default of each, and what watcher adds to it, are in docs/configuration.md
(``[source.NAME]``); ``arxiv-rss`` (the feed of its categories), ``feed`` and ``listing`` (the
document itself) add nothing.

A config written when ``url`` was the whole endpoint for ``arxiv`` and ``hf-daily``
(``…/api/query``, ``…/api/daily_papers``) keeps working: that ending is recognised and taken off
(:func:`base`), and ``watcher check`` says in one line what to write instead (:func:`legacy_note`).
"""

from __future__ import annotations


Rule = tuple  # (default base, the paths watcher adds, the ending an old full-endpoint url had or None)


def base(rule: Rule, url: str | None) -> str:
    """The service's address for a source of the kind whose ``url`` rule is ``rule`` and whose
    config says ``url`` (None: the default), without a trailing slash; an old full-endpoint
    spelling loses its ending."""
    default, _, old_ending = rule
    chosen = (url or default).rstrip("/")
    if url and old_ending and chosen.endswith(old_ending):
        chosen = chosen[: -len(old_ending)]
    return chosen


def endpoint(rule: Rule, url: str | None, path: str) -> str:
    """``path`` (one of the service's: "/query", "/works", "esearch.fcgi") under the source's
    base."""
    return base(rule, url) + ("/" + path.lstrip("/") if path else "")


def asked(cfg, rule: Rule | None) -> str | None:
    """What a source will ask, as ``watcher check`` says it: the base and the paths added
    (``rule``: its kind's ``url``, None for a kind that adds nothing)."""
    if rule:
        _, paths, _ = rule
        return base(rule, cfg.url) + paths.replace("{server}", getattr(cfg.options, "server", None) or "biorxiv")
    if cfg.type == "arxiv-rss":
        from .arxiv_rss import RSS_URL

        return cfg.url or RSS_URL + "+".join(cfg.options.categories)
    path = getattr(cfg.options, "path", None)
    return getattr(cfg, "url", None) or (str(path) if path else None)


def legacy_note(cfg, rule: Rule | None) -> str | None:
    """One line when ``cfg.url`` is spelt the old way (the whole endpoint): what to write."""
    if not rule or not cfg.url:
        return None
    _, _, old_ending = rule
    if old_ending and cfg.url.rstrip("/").endswith(old_ending):
        return (f"source.{cfg.name}.url: {cfg.url!r} names the whole endpoint; url is the service's "
                f"address, before the paths watcher adds ({old_ending}): write "
                f"url = \"{base(rule, cfg.url)}\" (read so now)")
    return None
