"""``watcher check``: everything that can be checked without sending anything."""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path

from ..categories import category_problems
from ..config import MIN_PASSWORD, Config
from ..present.links import secret_problem
from ..deliver.base import folder_problem
from ..errors import DeliveryError
from ..present.render import TEMPLATE_NAMES, render


def check_config(config: Config) -> tuple[list[str], str]:
    """Problems found (each one line, naming file and key) and a summary when there are none.

    The config itself was validated when loaded; this adds the templates (each must render the sample digest),
    the secrets (the named environment variables must be set, but for the optional ones of
    :func:`optional_secret_notes`, which ``check`` notes) and whether the database can be
    created and written (:func:`database_problem`). Secret values are never printed.
    """
    where = str(config.path)
    problems = []
    templates_dir = config.settings.templates_dir
    if templates_dir and not templates_dir.is_dir():
        problems.append(f"{where}: watcher.templates_dir: {templates_dir} is not a folder")
    problems += check_templates(str(templates_dir) if templates_dir else None)
    optional = optional_secret_notes(config)
    problems += [f"{where}: {key}: environment variable {var} is {'empty' if var in os.environ else 'not set'}"
                 for key, var in config.secret_vars().items()
                 if not os.environ.get(var) and key not in optional]
    problems += web_password_problems(config)
    problems += placeholder_lines(config)[0]
    problems += category_problems(config)
    problems += example_file_problems(config)
    from ..deliver import KINDS

    for ch in config.channels.values():  # what each channel's kind adds, from its module
        if KINDS[ch.type].check:
            problems += KINDS[ch.type].check(config, where, ch)
    from ..zotero.sync import access_problems  # docs/zotero.md: what each Zotero key may do

    problems += access_problems(config)
    problem = database_problem(config.settings.database)
    if problem:
        problems.append(f"{where}: watcher.database: {problem}")
    from ..util.text import plural

    summary = (f"{where}: OK — {plural(len(config.sources), 'source')}, "
               f"{plural(len(config.profiles), 'profile')}, {plural(len(config.digests), 'digest')}, "
               f"{plural(len(config.channels), 'channel')}")
    return problems, summary


def example_file_problems(config: Config) -> list[str]:
    """Each profile's ``examples`` files read as a run reads them (an empty or broken .bib, a
    file of no known format): the load only asks that they exist, and a run then fails its
    digests on every cycle. arXiv ids are looked up by the run, not here."""
    import dataclasses

    from ..errors import InputError
    from ..matching.compile import example_papers

    out = []
    for p in config.profiles.values():
        files = tuple(e for e in p.examples if (p.base_dir / e).is_file())
        if not files:
            continue
        try:
            example_papers(dataclasses.replace(p, examples=files), lambda _ident: None)
        except InputError as e:
            out.append(f"{config.path}: profile.{p.name}.examples: {e}")
    return out


def unloaded_category_errors(path: Path) -> list:
    """The unknown categories of a config file that does not load (its other mistakes are the
    load's ConfigErrors), as ConfigErrors of their own keys: ``check`` then says every mistake
    in one run, not these only once the rest is fixed. None when the TOML itself is invalid."""
    import tomllib
    from types import SimpleNamespace

    from ..categories import keyed_category_problems
    from ..errors import ConfigError
    from ..sources import KINDS

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []

    def text(value):
        return value if isinstance(value, str) else None

    def strings(value):
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def arxiv(typ) -> bool:  # the kind's options say its categories are arXiv's
        kind = KINDS.get(typ) if isinstance(typ, str) else None
        return bool(kind and getattr(kind.options, "arxiv_categories", False))

    def tables(section):
        found = data.get(section)
        return {n: t for n, t in found.items() if isinstance(t, dict)} if isinstance(found, dict) else {}

    view = SimpleNamespace(
        sources={n: SimpleNamespace(type=t.get("type"), options=SimpleNamespace(
            categories=strings(t.get("categories")), query=text(t.get("query")),
            arxiv_categories=arxiv(t.get("type"))))
            for n, t in tables("source").items()},
        profiles={n: SimpleNamespace(categories=strings(t.get("categories")), query=text(t.get("query")),
                                     exclude=text(t.get("exclude"))) for n, t in tables("profile").items()})
    return [ConfigError(problem, path=str(path), key=key) for key, problem in keyed_category_problems(view)]


def optional_secret_notes(config: Config) -> dict[str, str]:
    """The secrets a source runs without, by key, each with what ``check`` says when its
    variable is unset (a note, not a problem): a PubMed source without its API key is read at
    the keyless rate (:data:`watcher.sources.pubmed.RATE`), an OpenAlex one asked without: each
    kind's options class says what, in the ``unset`` of the key's :func:`~watcher.kinds.option`."""
    from dataclasses import fields

    notes = {}
    for s in config.sources.values():
        for f in fields(s.options) if s.options is not None else ():
            var = getattr(s.options, f.name)
            if f.metadata.get("secret") and f.metadata.get("unset") and var and not os.environ.get(var):
                notes[f"source.{s.name}.{f.name}"] = (f"{config.path}: source.{s.name}.{f.name}: {var} is "
                                                      f"not set: {f.metadata['unset']}")
    return notes


# The example config's placeholders (smtp.example.org, me@example.org, you@example.org): a
# domain reserved for examples (RFC 2606), where no server and no mailbox answers.
_PLACEHOLDER = re.compile(r"(?:^|[@./\s<(:])(?:[\w-]+\.)*example\.org\b", re.I)


def placeholder_lines(config: Config) -> tuple[list[str], list[str]]:
    """For ``watcher check``: (problems, notes), one line per channel that still holds the
    example config's placeholders. A server that does not exist (``host`` or ``url``) in a
    channel a digest delivers through is a problem: every delivery would fail; addresses at the
    example's domain, or an unused channel, are a note: mail to them reaches nobody."""
    where = config.path
    used = {c for d in config.digests.values() for c in d.channels}
    problems, notes = [], []
    for ch in config.channels.values():
        opts = ch.options
        keys = [key for key, value in (("host", getattr(opts, "host", None)), ("username", getattr(opts, "username", None)),
                                       ("from", getattr(opts, "sender", None)), ("to", ", ".join(getattr(opts, "to", ()))),
                                       ("url", getattr(opts, "url", None)))
                if value and _PLACEHOLDER.search(value)]
        if not keys:
            continue
        line = (f"{where}: channel.{ch.name}: {', '.join(keys)} still "
                f"{'hold' if len(keys) > 1 else 'holds'} the example's placeholder (example.org): "
                "put your own there")
        if ch.name not in used:
            notes.append(line + " (no digest uses this channel yet)")
        elif {"host", "url"} & set(keys):
            problems.append(line + f" before a digest delivers through {ch.name}")
        else:
            notes.append(line + ": mail to it reaches nobody")
    return problems, notes


def source_url_lines(config: Config) -> list[str]:
    """For ``watcher check``: the URL each source will ask (``url`` is the service's address,
    before the paths watcher adds: :mod:`watcher.sources.urls`), and one line for a ``url``
    spelt the old way (the whole endpoint) saying what to write."""
    from ..masking import redact, remember_url
    from ..sources import KINDS, urls

    where = config.path
    lines = []
    for s in config.sources.values():
        if s.url:  # a url's credentials (a mirror's user:password@, an api_key=) are said masked
            remember_url(s.url)
        rule = KINDS[s.type].url if s.type in KINDS else None
        asked = urls.asked(s, rule)
        if asked:
            lines.append(f"{where}: source.{s.name} ({s.type}) asks {asked}")
        if note := urls.legacy_note(s, rule):
            lines.append(f"{where}: {note}")
    return [redact(line) for line in lines]


def idle_notes(config: Config) -> list[str]:
    """For ``watcher check``: what a valid config would never do (no source: nothing fetched; no
    digest: nothing delivered; a profile no digest names: its papers go nowhere), one line each."""
    where = config.path
    notes = []
    if not config.sources:
        notes.append(f"{where}: no [source.NAME]: nothing will be fetched ('watcher init' writes an "
                     "example config)")
    if not config.digests:
        notes.append(f"{where}: no [digest.NAME]: nothing will be delivered (a digest names profiles "
                     "and channels)")
    named = {p for d in config.digests.values() for p in d.profiles}
    notes += [f"{where}: profile.{name}: in no digest's profiles: its papers are delivered nowhere"
              for name in config.profiles if name not in named]
    return notes


def followed_notes(config: Config) -> list[str]:
    """For ``watcher check``: one line per ``cites:``/``by:`` term of a profile's query or
    exclude that names a work (an author) no ``openalex`` source follows: such a term matches
    nothing, since a paper records only the followed works it cites (docs/openalex.md)."""
    from ..formats.openalex import matches_ref
    from ..matching.query import parse_query, terms

    follows = {"cites": [k for s in config.sources.values() for k in getattr(s.options, "cites", ())],
               "by": [k for s in config.sources.values() for k in getattr(s.options, "authors", ())]}
    what = {"cites": ("a work", "cites"), "by": ("an author", "authors")}
    out = []
    for p in config.profiles.values():
        for key in ("query", "exclude"):
            text = getattr(p, key)
            for term in terms(parse_query(text)) if text else ():
                if term.field in follows and not any(matches_ref(k, term.words[0]) for k in follows[term.field]):
                    thing, where = what[term.field]
                    out.append(f"{config.path}: profile.{p.name}.{key}: {term.field}:{term.words[0]} names "
                               f"{thing} no openalex source follows, so it matches nothing (add it to a "
                               f"source's {where})")
    return out


def web_password_problems(config: Config) -> list[str]:
    """A web password or link secret shorter than ``watcher serve`` takes (one unset or empty
    is said with the other secrets)."""
    out = []
    var = config.web.password_env
    value = os.environ.get(var) if var else None
    if value and len(value) < MIN_PASSWORD:
        out.append(f"{config.path}: web.password_env: the password in {var} is shorter than "
                   f"{MIN_PASSWORD} characters")
    if os.environ.get(config.web.secret_env or "") and (problem := secret_problem(config.web)):
        out.append(f"{config.path}: web.secret_env: {problem}")
    return out


def database_problem(db: Path) -> str | None:
    """Why ``once`` could not create or write the database ``db``, or None.

    A missing folder is fine: the first run creates it (and its parents), so the nearest
    existing folder above it must be writable instead (:func:`folder_problem`)."""
    if db.is_dir():
        return f"{db} is a folder, not a database file"
    if db.exists():
        if not os.access(db, os.W_OK):
            return f"{db} is not writable"
        if not os.access(db.parent, os.W_OK | os.X_OK):
            return f"folder {db.parent} is not writable (the lock and SQLite's journal go there)"
        return None
    return folder_problem(db.parent)


def check_templates(templates_dir: str | None) -> list[str]:
    """Render every format's template (the user's where present) with the test-deliver sample
    digest, and the apprise and Atom entry templates; one problem line per template that
    fails, or whose Slack/JSON output does not parse."""
    import json

    from ..deliver.slack import split_messages
    from .testdeliver import sample_digest

    digest = sample_digest(datetime.now(timezone.utc), timezone.utc)
    problems = []
    for fmt, name in TEMPLATE_NAMES.items():
        try:
            out = render(digest, fmt, templates_dir)
            if fmt == "slack":
                split_messages(json.loads(out))
            elif fmt == "json":
                json.loads(out)
        except DeliveryError as e:
            problems.append(str(e))
        except ValueError as e:
            problems.append(f"template {name}: output is not valid {fmt} JSON ({e})")
    from ..deliver.apprise_channel import TEMPLATES, blocks
    from ..deliver.feed import entry_html

    drawn = [(TEMPLATES[fmt], lambda fmt=fmt: blocks(digest, fmt, templates_dir)) for fmt in TEMPLATES]
    drawn.append(("feed_entry.html", lambda: [entry_html(m, digest.links, templates_dir) for m in digest.matches]))
    for _, draw in drawn:  # the apprise channel's blocks and the Atom entries' content
        try:
            draw()
        except DeliveryError as e:
            problems.append(str(e))
    return problems
