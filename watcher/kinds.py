"""What a source or channel kind declares about itself (see docs/design.md, "Adding a kind").

Each module under :mod:`watcher.sources` (and :mod:`watcher.deliver`) ends with one
:class:`Kind`: the ``type`` a config table names, its keys as ``key: (type, default)`` with
:data:`REQUIRED` for a key without default, and ``validate(r, where, v)``, which checks the
kind's own table (``v``, the values the keys declared, already of the right types) with the
config reader ``r`` and returns the values it changed. The registries
(:data:`watcher.sources.KINDS`, :data:`watcher.deliver.KINDS`) list one line per kind; :mod:`watcher.config` reads them and
names no kind. This module imports nothing of watcher's, so every layer may use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Callable

REQUIRED = object()  # marks a key without default


@dataclass(frozen=True)
class Kind:
    """One kind of ``[source.NAME]`` or ``[channel.NAME]`` table."""

    name: str  # the ``type`` a config table names
    cls: type  # what the table becomes (a Source or a Channel)
    keys: dict  # key -> (python type, default or REQUIRED), besides the family's common keys
    validate: Callable | None = None  # (reader, "source.NAME", values) -> changed values or None
    first_fetch: timedelta | None = timedelta(days=3)  # sources: how far back without first_fetch
    local_url: bool = False  # sources: a url that is not http(s) or file:// is a file beside the config
    optional_secret: str | None = None  # sources: what `check` notes when api_key_env is unset
    no_backfill: str | None = None  # sources: why `fetch --since` cannot reach back
    writes_formats: bool = False  # channels: writes the digest's own formats (file, stdout)
    in_digest: Callable | None = None  # channels: (reader, channel, digest name, formats) -> None
    check: Callable | None = None  # channels: what `watcher check` adds, (config, file, channel) -> problem lines
