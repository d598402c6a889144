"""What a source or channel kind declares about itself (see docs/design.md, "Adding a kind").

Each module under :mod:`watcher.sources` (and :mod:`watcher.deliver`) ends with one
:class:`Kind`: the ``type`` a config table names, its keys, and ``validate(r, where, v)``,
which checks the kind's own table (``v``, the values the keys declared, already of the right
types) with the config reader ``r`` and returns the values it changed. A source kind's keys are
one frozen options class (``@options``), each field an :func:`option` carrying its type,
default, whether it names a secret and its help text: config reads the table by it
(:func:`keys_of`), masks and checks the secrets it marks, ``watcher check`` says what an unset
optional secret costs, and the docs' key table of the kind is :func:`key_table` of it (a test
holds the docs to it). Channel kinds declare theirs the same way; :class:`SourceConfig` and
:class:`ChannelConfig` keep only the keys their whole family has. The registries
(:data:`watcher.sources.KINDS`, :data:`watcher.deliver.KINDS`) list one line per kind; :mod:`watcher.config` reads them and
names no kind. This module imports nothing of watcher's, so every layer may use it.
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from collections.abc import MutableMapping
from typing import Callable, Iterator

REQUIRED = object()  # marks a key without default


def options(cls: type) -> type:
    """A kind's options class: a frozen, keyword-only dataclass of :func:`option` fields."""
    return dataclass(frozen=True, kw_only=True)(cls)


def option(default=REQUIRED, *, help: str, secret: bool = False, unset: str | None = None,
           key: str | None = None):
    """One key of a kind's options class. ``default``: its value when the table leaves it out
    (:data:`REQUIRED`: it must be given); ``help``: what it is, for the docs' key table;
    ``secret``: it names an environment variable holding a secret (checked as a variable's
    name, wanted set by ``watcher check``, its value masked in every log line); ``unset``: for
    a secret the kind runs without, what ``check`` notes when the variable is unset; ``key``:
    the table's key when it is no Python name (``from``; the field is then ``sender``)."""
    meta = {"help": help, "secret": secret, "unset": unset, "key": key}
    if default is REQUIRED:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=tuple(default) if isinstance(default, list) else default, metadata=meta)


def first_fetch(default: timedelta | None = timedelta(days=3), *, help: str | None = None):
    """The ``first_fetch`` key most sources have: how far back the very first fetch reaches."""
    return option(default, help=help or "how far back the very first fetch reaches (later "
                                        "fetches start where the last one ended)")


# what a field's annotation is read as from TOML: (python type a table gives, conversion)
_READS = {str: (str, None), int: (int, None), float: (float, None), bool: (bool, None),
          tuple: (list, None), timedelta: (str, "duration"), Path: (str, "path")}


def _reads(annotation) -> tuple[type, str | None]:
    """``str | None`` -> (str, None), ``tuple[str, ...]`` -> (list, None), ``timedelta | None``
    -> (str, "duration"), ``Path | None`` -> (str, "path")."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    annotation = typing.get_origin(annotation) or annotation
    return _READS[annotation]


def fields_of(cls: type) -> list[tuple[dataclasses.Field, type, str | None]]:
    """Each field of an options class with the type a table gives it and its conversion."""
    hints = typing.get_type_hints(cls)
    return [(f, *_reads(hints[f.name])) for f in dataclasses.fields(cls)]


def key_of(f: dataclasses.Field) -> str:
    """The table's key of an options field (its name, but for an aliased one such as ``from``)."""
    return f.metadata.get("key") or f.name


def keys_of(cls: type) -> dict:
    """An options class as ``key: (type, default or REQUIRED)``, what the config reader checks."""
    return {key_of(f): (typ, REQUIRED if f.default is dataclasses.MISSING else f.default)
            for f, typ, _ in fields_of(cls)}


def secret_keys(cls: type | None) -> tuple[str, ...]:
    """The fields of an options class that name a secret's variable."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("secret")) if cls else ()


def key_table(cls: type) -> str:
    """The docs' Markdown table of an options class's keys: key, type, default, what it is."""
    words = {str: "string", int: "integer", float: "number", bool: "true/false", list: "list of strings"}
    if not dataclasses.fields(cls):
        return "No keys but the ones every kind of its family has.\n"
    rows = ["| key | type | default | what it is |", "|---|---|---|---|"]
    for f, typ, conversion in fields_of(cls):
        kind = ("name of an environment variable holding a secret" if f.metadata.get("secret") else
                {"duration": "duration (`3d`, `12h`)", "path": "path"}.get(conversion or "", words[typ]))
        if f.default is dataclasses.MISSING:
            default = "required"
        elif f.default is None or f.default == ():
            default = "—"
        elif isinstance(f.default, timedelta):
            default = f"`{_duration(f.default)}`"
        else:
            default = f"`{str(f.default).lower() if isinstance(f.default, bool) else f.default}`"
        what = f.metadata["help"] + (f"; when it is unset, `watcher check` says so and the source runs: "
                                     f"{f.metadata['unset']}" if f.metadata.get("unset") else "")
        rows.append(f"| `{key_of(f)}` | {kind} | {default} | {what} |")
    return "\n".join(rows) + "\n"


def _duration(value: timedelta) -> str:
    seconds = int(value.total_seconds())
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@dataclass(frozen=True)
class Kind:
    """One kind of ``[source.NAME]`` or ``[channel.NAME]`` table."""

    name: str  # the ``type`` a config table names
    cls: type  # what the table becomes (a Source or a Channel)
    keys: dict | type  # an options class (sources), or key -> (python type, default or REQUIRED),
    # besides the family's common keys
    validate: Callable | None = None  # (reader, "source.NAME", values) -> changed values or None
    local_url: bool = False  # sources: a url that is not http(s) or file:// is a file beside the config
    url: tuple | None = None  # sources: (default base, the paths watcher adds, an old full-endpoint
    # ending or None): what ``url`` means for it (watcher.sources.urls)
    no_backfill: str | None = None  # sources: why `fetch --since` cannot reach back
    writes_formats: bool = False  # channels: writes the digest's own formats (file, stdout)
    in_digest: Callable | None = None  # channels: (reader, channel, digest name, formats) -> None
    check: Callable | None = None  # channels: what `watcher check` adds, (config, file, channel) -> problem lines
    options: type | None = None  # the options class ``keys`` was given as (set from it)

    def __post_init__(self) -> None:
        if isinstance(self.keys, type):  # an options class: the table's keys are its fields
            object.__setattr__(self, "options", self.keys)
            object.__setattr__(self, "keys", keys_of(self.keys))
            # a channel's options say whether it writes the digest's own formats
            object.__setattr__(self, "writes_formats", getattr(self.options, "writes_formats", self.writes_formats))


class Registry(MutableMapping):
    """A family's kinds by ``type``, in the order error messages name them: each kind's module
    is imported when its kind is first asked for, so reading a config loads the modules of the
    kinds it names, not every kind's (their parsers and templates; docs/performance.md,
    "watcher status"). The names are known without importing anything; iterating names
    imports nothing, reading a kind imports its module."""

    def __init__(self, package: str, modules: dict[str, str]):
        self._package = package
        self._modules = dict(modules)  # type -> the module (in ``package``) that declares it
        self._kinds: dict[str, Kind] = {}

    def __getitem__(self, name: str) -> Kind:
        if name not in self._kinds:
            kind = importlib.import_module(f"{self._package}.{self._modules[name]}").KIND
            if kind.name != name:
                raise LookupError(f"{self._package}.{self._modules[name]} declares {kind.name!r}, not {name!r}")
            self._kinds[name] = kind
        return self._kinds[name]

    def __setitem__(self, name: str, kind: Kind) -> None:  # a test's stand-in for a kind
        self._modules.setdefault(name, "")
        self._kinds[name] = kind

    def __delitem__(self, name: str) -> None:
        del self._modules[name]
        self._kinds.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._modules

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


@dataclass(frozen=True)
class SourceConfig:
    """A ``[source.NAME]`` table: the keys every source has, and ``options``, the instance of
    its kind's options class (:mod:`watcher.kinds`) holding the rest. ``url`` overrides the
    endpoint of any source type. :func:`watcher.sources.source_config` makes one from keys."""

    name: str
    type: str
    url: str | None = None
    timeout: float = 30.0
    options: object = None

    @property
    def first_fetch(self) -> timedelta | None:
        """How far back the first fetch reaches: the kind's ``first_fetch`` (None: a feed's
        every item), three days for a kind without the key."""
        return getattr(self.options, "first_fetch", timedelta(days=3))


@dataclass(frozen=True)
class ChannelConfig:
    """A ``[channel.NAME]`` table: the keys every channel has, and ``options``, the instance of
    its kind's options class holding the rest (secrets are named by ``*_env`` keys, read when
    sending). :func:`watcher.deliver.channel_config` makes one from keys."""

    name: str
    type: str
    timeout: float = 30.0
    options: object = None


@dataclass(frozen=True)
class SummarizerKind:
    """One ``[summarizer] type``: the keys it cannot run without, and whether it asks a model
    (``watcher.present.summarize``: the model's TL;DRs, cached in the store; else the extractive
    TL;DR alone)."""

    name: str
    needs: tuple[str, ...] = ()
    model: bool = False


# the summarizer kinds, in the order error messages name them (pure data: config and
# watcher.present.summarize both read it, and neither names a kind)
SUMMARIZER_KINDS: dict[str, SummarizerKind] = {k.name: k for k in (
    SummarizerKind("extractive"),
    SummarizerKind("openai", needs=("base_url", "model"), model=True),
)}
