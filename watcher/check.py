"""``watcher check``: everything that can be checked without sending anything."""

from __future__ import annotations

import os

import jinja2

from .config import Config
from .render import TEMPLATE_NAMES, environment


CHANNEL_FORMATS = {"email": ("text", "html"), "slack": ("slack",), "webhook": ("json",)}


def formats_in_use(config: Config) -> set[str]:
    """Every format some digest or channel of ``config`` renders."""
    used = set()
    for d in config.digests.values():
        used.update(d.formats)
        for ch in d.channels:
            used.update(CHANNEL_FORMATS.get(config.channels[ch].type, ()))
    return used


def check_config(config: Config) -> tuple[list[str], str]:
    """Problems found (each one line, naming file and key) and a summary when there are none.

    The config itself was validated when loaded; this adds the templates (they must compile),
    the secrets (the named environment variables must be set), example files and the database
    folder. Secret values are never printed.
    """
    where = str(config.path)
    problems = []
    templates_dir = config.settings.templates_dir
    if templates_dir and not templates_dir.is_dir():
        problems.append(f"{where}: watcher.templates_dir: {templates_dir} is not a folder")
    env = environment(str(templates_dir) if templates_dir else None)
    for fmt in sorted(formats_in_use(config)):
        name = TEMPLATE_NAMES[fmt]
        try:
            env.get_template(name)
        except jinja2.TemplateNotFound:
            if fmt not in ("text", "json"):
                problems.append(f"template {name}: not found")
        except jinja2.TemplateSyntaxError as e:
            problems.append(f"template {e.filename or name}: line {e.lineno}: {e.message}")
    for ch in config.channels.values():
        for key in ("password_env", "webhook_url_env", "url_env"):
            var = getattr(ch, key)
            if var and not os.environ.get(var):
                problems.append(f"{where}: channel.{ch.name}.{key}: environment variable {var} is not set")
    for p in config.profiles.values():
        for ex in p.examples:
            path = p.base_dir / ex
            if ("/" in ex or ex.endswith(".txt")) and not path.exists():
                problems.append(f"{where}: profile.{p.name}.examples: {path} does not exist")
    db_dir = config.settings.database.parent
    if not db_dir.exists():
        problems.append(f"{where}: watcher.database: folder {db_dir} does not exist")
    elif not os.access(db_dir, os.W_OK):
        problems.append(f"{where}: watcher.database: folder {db_dir} is not writable")
    summary = (f"{where}: OK — {len(config.sources)} sources, {len(config.profiles)} profiles, "
               f"{len(config.digests)} digests, {len(config.channels)} channels")
    return problems, summary
