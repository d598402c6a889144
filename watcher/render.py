"""Rendering a Digest into each FORMAT with Jinja2 (SPEC §5).

Templates come from the user's ``templates_dir`` first and the shipped ``templates/`` after, so
a user can override any one of them. HTML autoescapes. The text format is the byte-exact seed
format and is written by :func:`watcher.formats.text.write` unless a user template overrides it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import jinja2

from .formats import text as text_format
from .models import Digest

TEMPLATE_NAMES = {"text": "digest.txt", "markdown": "digest.md", "html": "digest.html",
                  "slack": "digest.slack.json", "json": "digest.json"}
EXTENSIONS = {"text": "txt", "markdown": "md", "html": "html", "slack": "slack.json", "json": "json"}


def shipped_templates_dir() -> Path:
    """The default templates: ``watcher/templates`` in a wheel, ``templates/`` in a checkout."""
    here = Path(__file__).resolve().parent
    installed = here / "templates"
    return installed if installed.is_dir() else here.parent / "templates"


@lru_cache(maxsize=8)
def environment(user_dir: str | None = None) -> jinja2.Environment:
    """The Jinja2 environment over the user folder (if any) then the shipped templates."""
    dirs = [user_dir] if user_dir else []
    dirs.append(str(shipped_templates_dir()))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(dirs),
        autoescape=jinja2.select_autoescape(["html", "htm"], default_for_string=False),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


def _user_has(user_dir: str | None, name: str) -> bool:
    return bool(user_dir) and (Path(user_dir) / name).is_file()


def render(digest: Digest, fmt: str, user_dir: str | Path | None = None) -> str:
    """``digest`` rendered as ``fmt`` (one of text, markdown, html, slack, json)."""
    user = str(user_dir) if user_dir else None
    name = TEMPLATE_NAMES[fmt]
    if fmt == "text" and not _user_has(user, name):
        return text_format.write(digest.title, digest.date, digest.papers)
    if fmt == "json" and not _user_has(user, name):
        return json.dumps([_json(m) for m in digest.matches], ensure_ascii=False, indent=2)
    template = environment(user).get_template(name)
    return template.render(digest=digest, matches=digest.matches, updated=digest.updated)


def _json(match) -> dict:
    out = match.paper.to_json()
    out.update(score=round(match.score, 4), reasons=list(match.reasons), profile=match.profile)
    return out
