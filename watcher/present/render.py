"""Rendering a Digest into each FORMAT with Jinja2 (docs/formats.md).

Every format is a template in ``templates/`` (``digest.txt``, ``digest.md``, ``digest.html``,
``digest.slack.json``, ``digest.json``). Templates come from the user's ``templates_dir`` first
and the shipped folder after, so a user can override any one of them. HTML autoescapes; the
other formats escape explicitly through the filters below (``md``, ``mrkdwn``, ``one_line``).

Paper fields are untrusted: they only ever reach a template as data, never as template source,
so Jinja syntax inside a title stays text; each format neutralises its own markup.

A template sees ``digest``, ``matches`` (all new papers), ``full`` (those shown in full),
``overflow`` (those listed as titles with links because a size limit left no room),
``hidden`` (how many did not fit even as titles) and ``updated`` (revised versions of papers
delivered before). Without limits ``full`` is ``matches``.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timezone
from functools import lru_cache
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import RenderError
from ..formats.text import one_line
from ..formats.text import utc_stamp as _utc_stamp
from ..formats.xmlsafe import gc_paused
from .latex import title_text
from .links import RATING_LABELS
from ..models import Digest, Match
from .tldr import stored_excerpt, tldr_of
from ..util.text import plural, shorten

if TYPE_CHECKING:  # Jinja2 loads when a digest is rendered, not when a channel's module is read
    import jinja2

# The rich formats show the TL;DR and the abstract cut to this many characters (docs/channels.md); the
# full abstract is a click away, and the text format keeps it whole.
ABSTRACT_CHARS = 240

TEMPLATE_NAMES = {"text": "digest.txt", "markdown": "digest.md", "html": "digest.html",
                  "slack": "digest.slack.json", "json": "digest.json",
                  "email": "email.txt"}  # the e-mail's text part (not a digest format of its own)
EXTENSIONS = {"text": "txt", "markdown": "md", "html": "html", "slack": "slack.json", "json": "json",
              "email": "email.txt"}


def shipped_templates_dir() -> Path:
    """The default templates: ``watcher/templates`` in a wheel, ``templates/`` in a checkout."""
    here = Path(__file__).resolve().parent.parent  # watcher/present/render.py -> watcher/
    installed = here / "templates"
    return installed if installed.is_dir() else here.parent / "templates"


# --- filters: each format's escaping and the small shortenings the templates share ----------

def safe_url(url: str | None) -> str:
    """``url`` when it is an http(s) URL without spaces, quotes or brackets, else "" (so never
    ``javascript:``); parentheses are percent-encoded so a Markdown link cannot end early."""
    if not url or not re.match(r"https?://[^\s<>\"'`|\\{}^\[\]]+$", url, re.I):
        return ""
    return url.replace("(", "%28").replace(")", "%29")


def paper_url(m: Match, links=None) -> str:
    """Where a paper's title links: its abstract page (arXiv, else the listing's link), else,
    for a paper without either, its page in the web inbox when the digest has links; "" when
    there is nowhere to go."""
    return safe_url(m.paper.abs_url) or (safe_url(links.paper(m)["web"]) if links else "")


def authors(names: list[str], limit: int = 6) -> str:
    """Authors joined by commas; past ``limit`` names the first ``limit`` and "et al."."""
    names = [one_line(n) for n in names]
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + " et al."


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_MD_LINE_START = re.compile(r"^(#|[-+]\s|\d+[.)]\s)")


def md(text: str) -> str:
    """Markdown-inert text on one line: emphasis, code, link and table characters
    backslash-escaped, HTML brackets as entities, a leading heading/list marker escaped."""
    text = one_line(str(text)).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _MD_LINE_START.sub(r"\\\1", text)


_SLACK_BROADCAST = re.compile(r"@(?=(channel|here|everyone)\b)", re.I)


def mrkdwn(text: str) -> str:
    """Slack-inert text: ``& < >`` escaped (so ``<!channel>``, ``<@U…>`` and ``<url|x>`` stay
    text) and a bare ``@channel`` / ``@here`` broken with a zero-width space."""
    text = one_line(str(text)).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SLACK_BROADCAST.sub("@\u200b", text)


def slack_link(url: str | None, label: str) -> str:
    """A Slack ``<url|label>`` link with an escaped label, or just the label for a bad URL."""
    url = safe_url(url)
    label = mrkdwn(label).replace("|", "\u2223")
    return f"<{url}|{label}>" if url else label


def utc_stamp(dt: datetime | None) -> str:
    """``YYYY-MM-DD HH:MM:SS`` in UTC, or "" (the text format's Date: line)."""
    return _utc_stamp(dt)


def day(dt: datetime | None) -> str:
    """``YYYY-MM-DD`` in UTC, or ""."""
    return _utc_stamp(dt)[:10]


def dated(paper, show=date.isoformat) -> str:
    """The one date a card shows, labelled: ``announced 2025-04-12`` (the day a listing put it
    out, what a digest files it under), else ``submitted 2025-04-10``; "" when none is known.
    ``show`` writes the day (the web's: ``Sat 12 Apr 2025``)."""
    if paper.announced:
        return f"announced {show(paper.announced)}"
    return f"submitted {show(paper.published.astimezone(timezone.utc).date())}" if paper.published else ""


def abstract_excerpt(m: Match) -> str:
    """What the rich formats show of ``m``'s abstract under its TL;DR."""
    return stored_excerpt(m.paper.abstract or "", tldr_of(m), ABSTRACT_CHARS)


def match_json(m: Match, links=None) -> dict:
    """One paper of the json format: docs/formats.md's paper object plus score, reasons, profile and
    the TL;DR (docs/channels.md), and ``links`` when the digest has them."""
    out = m.paper.to_json()
    out.update(score=round(m.score, 4), reasons=list(m.reasons), profile=m.profile, tldr=tldr_of(m))
    if links is not None:
        out["links"] = links.paper(m)
    return out


def papers_json(matches: list[Match], links=None) -> str:
    """The json format's array (with rating links when ``links`` is given)."""
    return json.dumps([match_json(m, links) for m in matches], ensure_ascii=False, indent=2)


def to_json(value, indent: int | None = None) -> str:
    """``value`` as JSON text (the Slack template builds its blocks as data, then this)."""
    return json.dumps(value, ensure_ascii=False, indent=indent)


_MENTION = re.compile(r"@(?=(?:everyone|here|channel)\b)|<(?=[@!#]|https?:|mailto:)", re.I)
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")  # not allowed in XML 1.0 (controls are
# already gone: Paper cleans them)


def inert(text: str) -> str:
    """Mentions broken with a zero-width space: ``@everyone``, ``@here``, ``@channel``, and the
    ``<@U…>``, ``<!channel>``, ``<#C…>`` and ``<https://…|label>`` forms chat services expand."""
    return _MENTION.sub(lambda m: m.group(0) + "\u200b", str(text))


def chat(value, limit: int = 300) -> str:
    """A piece of a chat message (the apprise templates): one line, at most ``limit``
    characters, mentions broken (:func:`inert`)."""
    return inert(shorten(one_line(str(value)), limit))


def xml_text(value) -> str:
    """Text for an XML document (the Atom feed): one line, without the characters XML 1.0
    does not allow."""
    return _NOT_XML.sub("", one_line(str(value)))


GLOBALS = {"slack_link": slack_link, "plural": plural, "ABSTRACT_CHARS": ABSTRACT_CHARS,
           "RATING_LABELS": RATING_LABELS}
FILTERS = {"safe_url": safe_url, "paper_url": paper_url, "shorten": shorten, "authors": authors, "md": md,
           "mrkdwn": mrkdwn, "slack_link": slack_link, "one_line": one_line,
           "utc_stamp": utc_stamp, "day": day, "papers_json": papers_json, "plural": plural,
           "json": to_json, "tldr": tldr_of, "excerpt": abstract_excerpt, "dated": dated,
           "title_text": title_text, "inert": inert, "chat": chat, "atom_text": xml_text}


@lru_cache(maxsize=8)
def environment(user_dir: str | None = None) -> jinja2.Environment:
    """The Jinja2 environment over the user folder (if any) then the shipped templates."""
    import jinja2

    dirs = [user_dir] if user_dir else []
    dirs.append(str(shipped_templates_dir()))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(dirs),
        autoescape=jinja2.select_autoescape(["html", "htm"], default_for_string=False),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.do"],
    )
    env.filters.update(FILTERS)
    env.globals.update(GLOBALS)
    return env


def macros(name: str, user_dir: str | Path | None = None):
    """The macros of template ``name`` (the user's folder first, then the shipped one), to call
    from Python: the apprise channel's blocks, an Atom entry's content. RenderError when the
    template is missing or fails to compile; a macro that fails when called raises
    jinja2.TemplateError (:func:`call_macro`)."""
    import jinja2

    try:
        return environment(str(user_dir) if user_dir else None).get_template(name).module
    except jinja2.TemplateSyntaxError as e:
        raise RenderError(f"template {e.filename or name}: line {e.lineno}: {e.message}") from e
    except jinja2.TemplateError as e:
        raise RenderError(f"template {name}: {e}") from e


def call_macro(name: str, macro: str, user_dir: str | Path | None, *args) -> str:
    """``macro(*args)`` of template ``name`` as text; RenderError naming the template when it
    fails."""
    import jinja2

    try:
        return str(getattr(macros(name, user_dir), macro)(*args))
    except jinja2.TemplateError as e:
        raise RenderError(f"template {name}: {macro}: {e}") from e


def render(digest: Digest, fmt: str, user_dir: str | Path | None = None, *,
           full_limit: int | None = None, list_limit: int | None = None) -> str:
    """``digest`` rendered as ``fmt`` (one of text, markdown, html, slack, json, or email: the
    e-mail's text part, with the TL;DR, a shortened abstract and the links).

    ``full_limit`` shows only the first N papers in full and lists the rest as titles with
    links (the e-mail size budget); ``list_limit`` caps that list, the remainder becoming a
    count. Raises :class:`RenderError` when a (user) template is
    missing or fails.
    """
    import jinja2

    name = TEMPLATE_NAMES[fmt]
    matches = digest.matches
    full = matches if full_limit is None else matches[:full_limit]
    rest = matches[len(full):]
    overflow = rest if list_limit is None else rest[:list_limit]
    try:
        template = environment(str(user_dir) if user_dir else None).get_template(name)
        # Rendering leaves no reference cycles, but its allocations set off full collections
        # that walk every live object, the whole digest included: pause the collector.
        with gc_paused():
            return template.render(digest=digest, matches=matches, full=full, overflow=overflow,
                                   hidden=len(rest) - len(overflow), updated=digest.updated)
    except jinja2.TemplateSyntaxError as e:
        raise RenderError(f"template {e.filename or name}: line {e.lineno}: {e.message}") from e
    except jinja2.TemplateError as e:
        raise RenderError(f"template {name}: {e}") from e
