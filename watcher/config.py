"""config.toml -> frozen dataclasses, validated against declared rules (docs/configuration.md).

Every section declares its keys in a table of ``key: (type, default)`` (a source or channel
kind's come from its options class, :mod:`watcher.kinds`); a key that is not
declared, a value of the wrong type, a missing required key, a digest naming a profile or channel
nobody defined, an unparseable schedule or query all raise :class:`ConfigError` naming the file,
the key and the problem. Relative paths resolve against the config file's folder. Secrets are
never read here: ``password_env`` and friends name environment variables read at delivery time.
"""

from __future__ import annotations

import math
import os
import re
import string
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from . import __version__
from .errors import ConfigError, ConfigErrors, QuerySyntaxError
from .categories import category_problem, nearest
from .util.hosts import is_loopback, is_loopback_url  # noqa: F401 (the web reads them here)
from .kinds import REQUIRED, SUMMARIZER_KINDS, ChannelConfig, SourceConfig, fields_of, key_of, secret_keys
from .models import parse_arxiv_id
from .subjects import ALL as SUBJECTS_ALL, subject
from .util.text import shorten

FORMATS = ("text", "markdown", "html", "slack", "json")


def __getattr__(name: str):
    """The kinds' tables, read from their registries (watcher.sources, watcher.deliver) when
    first asked for: importing config stays light (the kinds' modules load httpx, Jinja2)."""
    if name not in ("SOURCE_TYPES", "CHANNEL_TYPES", "FORMAT_CHANNELS", "_SOURCE_KEYS", "_CHANNEL_KEYS"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from .deliver import KINDS as channels
    from .sources import KINDS as sources

    tables = {
        "SOURCE_TYPES": lambda: tuple(sources),  # each kind declares itself in its module
        "CHANNEL_TYPES": lambda: tuple(channels),
        "FORMAT_CHANNELS": lambda: tuple(n for n, k in channels.items() if k.writes_formats),
        "_SOURCE_KEYS": lambda: {n: k.keys for n, k in sources.items()},
        "_CHANNEL_KEYS": lambda: {n: k.keys for n, k in channels.items()},
    }
    return tables[name]()


_DURATION_RE = re.compile(r"(\d+)\s*([wdhms])")
_UNIT_SECONDS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
# A century: reaches back past arXiv's start (1991) for lookback, yet far from where date
# arithmetic overflows (99999999d used to crash `once` and `status` with OverflowError).
MAX_DURATION = timedelta(days=36500)
CRON_HORIZON = timedelta(days=5 * 366)  # a cron line must fire at least once within this
# An arXiv category (cs.LG, math.AG, hep-ex, astro-ph.CO, q-bio.NC, cond-mat.str-el) or a whole
# archive (cs, hep-th); permissive about case, strict about spaces and punctuation.
_CATEGORY_RE = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*(?:\.[A-Za-z]+(?:-[A-Za-z]+)*)?")


def parse_duration(text: str) -> timedelta:
    """``"3d"``, ``"6h"``, ``"1h30m"``, ``"10s"`` -> timedelta; ValueError otherwise."""
    compact = text.replace(" ", "")
    if not compact or _DURATION_RE.sub("", compact):
        raise ValueError(f"not a duration like '3d', '6h', '30m' or '10s': {text!r}")
    seconds = sum(int(amount) * _UNIT_SECONDS[unit] for amount, unit in _DURATION_RE.findall(compact))
    if seconds <= 0:
        raise ValueError(f"duration must be positive: {text!r}")
    if seconds > MAX_DURATION.total_seconds():
        raise ValueError(f"duration {text!r} is longer than the maximum of {MAX_DURATION.days}d")
    return timedelta(seconds=seconds)


@dataclass(frozen=True)
class Settings:
    """The ``[watcher]`` table."""

    database: Path
    timezone: ZoneInfo
    user_agent: str
    templates_dir: Path | None = None
    state_ratings: bool = False  # `watcher state save` keeps the ratings and the saved list
    keep: timedelta = timedelta(days=400)  # papers never delivered, rated or saved are pruned after this


@dataclass(frozen=True)
class Profile:
    """A ``[profile.NAME]`` table: what one topic matches (see :mod:`watcher.matching.match`)."""

    name: str
    title: str
    query: str | None = None
    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    exclude: str | None = None
    examples: tuple[str, ...] = ()
    min_score: float = 0.0
    max_papers: int = 30
    base_dir: Path = Path(".")
    zotero: object = None  # watcher.zotero.client.Library: examples read from a Zotero library (docs/zotero.md)
    save_to_zotero: str | None = None  # a collection of that library that Save also adds to
    max_recall_loss: float = 0.02  # what removals by its ratings may cost of what it selects and the reader likes (docs/ratings.md)


@dataclass(frozen=True)
class DigestConfig:
    """A ``[digest.NAME]`` table. Exactly one of ``schedule`` (cron or ``"arxiv"``) or ``every``."""

    name: str
    profiles: tuple[str, ...]
    channels: tuple[str, ...]
    schedule: str | None = None
    every: timedelta | None = None
    formats: tuple[str, ...] = ("text",)
    send_empty: bool = False
    lookback: timedelta = timedelta(days=3)
    title: str | None = None
    order: str = "date"  # "date": newest first; "score": best match first


MIN_PASSWORD = 12  # characters of the web password; `watcher serve` and `watcher check` refuse fewer


@dataclass(frozen=True)
class WebConfig:
    """The ``[web]`` table (docs/web.md): the web inbox and the links digests carry.

    ``base_url`` is the public address (no trailing slash); digests carry links only when it
    and the secret are set. Secrets are named by ``*_env`` keys and read when needed."""

    host: str = "127.0.0.1"
    port: int = 8080
    base_url: str | None = None
    secret_env: str | None = None
    password_env: str | None = None
    serve: bool = False
    hosts: tuple[str, ...] = ()  # more names the inbox answers to (the Host header), lower case
    proxy: bool = False  # a reverse proxy in front: its X-Forwarded-For (from loopback) is the client

    @property
    def listen(self) -> str:
        """``HOST:PORT`` as written in the config (IPv6 hosts in brackets)."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def loopback(self) -> bool:
        """True when ``host`` only listens on this machine."""
        return is_loopback(self.host)


@dataclass(frozen=True)
class SummarizerConfig:
    """The ``[summarizer]`` table (docs/channels.md): how the one-sentence TL;DR per paper is made."""

    type: str = "extractive"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    max_per_day: int = 200
    timeout: float = 30.0


@dataclass(frozen=True)
class Config:
    """The whole config file."""

    path: Path
    settings: Settings
    sources: dict[str, SourceConfig] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)
    digests: dict[str, DigestConfig] = field(default_factory=dict)
    channels: dict[str, ChannelConfig] = field(default_factory=dict)
    web: WebConfig = field(default_factory=WebConfig)
    summarizer: SummarizerConfig = field(default_factory=SummarizerConfig)

    @property
    def base_dir(self) -> Path:
        """The folder that relative paths in the config resolve against."""
        return self.path.parent

    def secret_vars(self) -> dict[str, str]:
        """Every environment variable the config names as holding a secret, by the key that
        names it (``channel.me.password_env`` -> ``WATCHER_SMTP_PASSWORD``): what ``check``
        wants set and what the log masks."""

        out = {}
        for family, parts in (("channel", self.channels), ("source", self.sources)):
            for part in parts.values():  # the keys its kind's options mark secret
                for key in secret_keys(type(part.options) if part.options is not None else None):
                    if getattr(part.options, key):
                        out[f"{family}.{part.name}.{key}"] = getattr(part.options, key)
        for key in ("secret_env", "password_env"):
            if getattr(self.web, key):
                out[f"web.{key}"] = getattr(self.web, key)
        if self.summarizer.api_key_env:
            out["summarizer.api_key_env"] = self.summarizer.api_key_env
        for p in self.profiles.values():
            if p.zotero is not None and p.zotero.api_key_env:
                out[f"profile.{p.name}.zotero.api_key_env"] = p.zotero.api_key_env
        return out


# --- declared rules: key -> (python type, default or REQUIRED) ----------------------------

_WATCHER_KEYS = {
    "database": (str, "watcher.db"),
    "timezone": (str, "UTC"),
    "user_agent": (str, f"watcher/{__version__}"),
    "templates_dir": (str, None),
    "state_ratings": (bool, False),
    "keep": (str, "400d"),
}
_SOURCE_COMMON = {"type": (str, REQUIRED), "url": (str, None), "timeout": (float, 30.0)}
_PROFILE_KEYS = {
    "title": (str, None),
    "query": (str, None),
    "authors": (list, []),
    "categories": (list, []),
    "exclude": (str, None),
    "examples": (list, []),
    "min_score": (float, 0.0),
    "max_papers": (int, 30),
    "zotero": (dict, None),
    "save_to_zotero": (str, None),
    "max_recall_loss": (str, "2%"),
}
_DIGEST_KEYS = {
    "profiles": (list, REQUIRED),
    "channels": (list, REQUIRED),
    "schedule": (str, None),
    "every": (str, None),
    "formats": (list, ["text"]),
    "send_empty": (bool, False),
    "lookback": (str, "3d"),
    "title": (str, None),
    "order": (str, "date"),
}
_WEB_KEYS = {
    "listen": (str, "127.0.0.1:8080"),
    "base_url": (str, None),
    "secret_env": (str, None),
    "password_env": (str, None),
    "serve": (bool, False),
    "hosts": (list, []),
    "proxy": (bool, False),
}
SUMMARIZER_TYPES = tuple(SUMMARIZER_KINDS)
_SUMMARIZER_KEYS = {
    "type": (str, "extractive"),
    "base_url": (str, None),
    "model": (str, None),
    "api_key_env": (str, None),
    "max_per_day": (int, 200),
    "timeout": (float, 30.0),
}
_CHANNEL_COMMON = {"type": (str, REQUIRED), "timeout": (float, 30.0)}
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
               list: "a list", dict: "a table"}


class _Reader:
    """Checks one table against its declared keys, raising ConfigError with file and key;
    :meth:`each` keeps the problem of one part and goes on with the next (``errors``)."""

    def __init__(self, path: Path):
        self.path = path
        self.errors: list[ConfigError] = []

    def each(self, parse, items) -> dict:
        """``name -> parse(name, table)`` of each ``(name, table)`` of ``items``; a part with a
        problem is left out and its ConfigError kept, so every part's problem is reported."""
        out = {}
        for name, table in items:
            try:
                out[name] = parse(name, table)
            except ConfigError as e:
                self.keep(e)
        return out

    def keep(self, e: ConfigError) -> None:
        self.errors.extend(e.errors if isinstance(e, ConfigErrors) else [e])

    def first(self, parse, fallback):
        """``parse()``, else (its problem kept) ``fallback()``: the rest of the file is still checked."""
        try:
            return parse()
        except ConfigError as e:
            self.keep(e)
            return fallback()

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(problem, path=str(self.path), key=key)

    def table(self, where: str, data: object, rules: dict) -> dict:
        """The table's values by ``rules`` (key -> (type, default)); every unknown, missing or
        mistyped key of it is reported (:class:`ConfigErrors` when more than one)."""
        if not isinstance(data, dict):
            raise self.fail(where, f"expected a table, got {_kind(data)}")
        problems = []
        for key in data:
            if key not in rules:
                known = ", ".join(sorted(rules)) or "none"
                problems.append(self.fail(f"{where}.{key}", f"unknown key{_did_you_mean(key, rules)} "
                                                            f"(known keys: {known})"))
        out = {}
        for key, (typ, default) in rules.items():
            if key not in data:
                if default is REQUIRED:
                    problems.append(self.fail(f"{where}.{key}", "required key is missing"))
                out[key] = tuple(default) if isinstance(default, list) else default
                continue
            try:
                out[key] = self.value(f"{where}.{key}", data[key], typ)
            except ConfigError as e:
                problems.append(e)
        if problems:
            raise ConfigErrors.of(problems)
        return out

    def value(self, key: str, value: object, typ: type) -> object:
        ok = isinstance(value, typ) and not (typ is int and isinstance(value, bool))
        if typ is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not ok:
            raise self.fail(key, f"expected {_TYPE_NAMES[typ]}, got {_kind(value)}")
        if typ is list:
            for n, item in enumerate(value, start=1):
                if not isinstance(item, str):
                    raise self.fail(key, f"expected a list of strings, but item {n} is {_kind(item)}")
            return tuple(value)
        return value

    def duration(self, key: str, text: str) -> timedelta:
        try:
            return parse_duration(text)
        except ValueError as e:
            raise self.fail(key, str(e)) from e

    def timeout(self, key: str, seconds: float) -> float:
        if not (math.isfinite(seconds) and seconds > 0):
            raise self.fail(key, f"must be a positive number of seconds, got {seconds}")
        return seconds

    def category(self, key: str, value: str, archive_wildcard: bool) -> str:
        text = value.removesuffix(".*") if archive_wildcard else value
        if archive_wildcard and subject(value) in SUBJECTS_ALL:
            return value  # a profile may name a bioRxiv / medRxiv subject too
        if not _CATEGORY_RE.fullmatch(text):
            if archive_wildcard:  # a profile's: the nearest arXiv category or subject
                raise self.fail(key, category_problem(value))
            example = "cs.LG, hep-ex, astro-ph.CO" + (" or cs.*" if archive_wildcard else "")
            raise self.fail(key, f"{value!r} is not an arXiv category (like {example})")
        return value

    def choice(self, key: str, value: str, choices: tuple[str, ...], hint: dict[str, str] | None = None) -> str:
        """``value`` when it is one of ``choices``; else a ConfigError with the nearest one, or
        what ``hint`` says of that value (``{"rss": "feed"}``: a word that means another choice)."""
        if value not in choices:
            meant = (hint or {}).get(value.lower())
            near = f"; did you mean {meant}?" if meant else _did_you_mean(value, choices)
            raise self.fail(key, f"{value!r} is not one of {', '.join(choices)}{near}")
        return value

    # the shared checks a kind's validation (watcher.kinds) uses, without importing this module
    def env_name(self, key: str, value: str | None) -> str | None:
        return _env_name(self, key, value)

    def http_url(self, key: str, url: str, example: str = "https://example.org/hook") -> None:
        _check_http_url(self, key, url, example)

    def address(self, key: str, value: str) -> None:
        _check_address(self, key, value)

    def path_template(self, key: str, template: str, allowed: tuple[str, ...]) -> None:
        _check_path_template(self, key, template, allowed)


def _kind(value: object) -> str:
    for typ, name in _TYPE_NAMES.items():
        if isinstance(value, typ) and not (typ is int and isinstance(value, bool)):
            return name
    return type(value).__name__


def find_config(explicit: str | os.PathLike | None = None) -> Path:
    """The config path as docs/cli.md gives it: ``--config``, ``$WATCHER_CONFIG``, ``./config.toml``,
    ``~/.config/watcher/config.toml``. Raises ConfigError when none exists."""
    if explicit:
        return Path(explicit)
    if os.environ.get("WATCHER_CONFIG"):
        return Path(os.environ["WATCHER_CONFIG"])
    candidates = [Path("config.toml"), Path.home() / ".config" / "watcher" / "config.toml"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"no config file found (looked at {looked}); pass --config PATH, or write one "
                      "here with 'watcher init'")


def load_config(path: str | os.PathLike) -> Config:
    """Read and validate a config file. Raises ConfigError (one line) on any problem."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as e:
        raise ConfigError("file not found", path=str(path)) from e
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", path=str(path)) from e
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        raise ConfigError("not UTF-8 text", path=str(path)) from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid TOML: {e}{_quoted_line(text, str(e))}", path=str(path)) from e
    return parse_config(data, path)


# what a control character in a secret's value most likely is, said in its error
_CONTROL_HINTS = {"\r": "a carriage return (\\r): a file saved with Windows line endings? Save it "
                         "with Unix (LF) line endings, or set the variable again",
                  "\n": "a line break (\\n): set the variable to the value alone"}


def secret_value_errors(config: Config) -> list[ConfigError]:
    """One error per secret (:meth:`Config.secret_vars`) whose value holds a control character
    (``\\r``, ``\\n``, a tab, NUL …), naming the key and the variable, never the value. Such a
    value is refused, not cleaned: no HTTP header, SMTP login or URL can carry it, and a value
    watcher changed would be a secret the user never set (docs/security-limits.md). White space
    between the URLs of a list (``urls_env``) separates them and is allowed."""
    import unicodedata

    errors = []
    for key, var in config.secret_vars().items():
        value = os.environ.get(var, "")
        if key.endswith(".urls_env"):
            value = " ".join(value.split())
        bad = next((ch for ch in value if unicodedata.category(ch) == "Cc"), None)
        if bad is not None:
            what = _CONTROL_HINTS.get(bad, f"the control character U+{ord(bad):04X}")
            errors.append(ConfigError(f"environment variable {var} holds {what}", path=str(config.path), key=key))
    return errors


def _quoted_line(text: str, error: str) -> str:
    """``: <the line>`` that a TOML error's "(at line N, column M)" points at, so that the
    message names the key ("Cannot overwrite a value" says nothing of which): a key's line up to
    its ``=`` (a value is never echoed: it could be a secret put there by mistake), a table's
    header whole; "" without one."""

    found = re.search(r"at line (\d+)", error)
    lines = text.splitlines()
    if not found or not 0 < int(found.group(1)) <= len(lines):
        return ""
    line = lines[int(found.group(1)) - 1].strip()
    key, eq, _ = line.partition("=")
    line = f"{key.strip()} = …" if eq and not line.startswith("[") else line
    return f": {shorten(line, 80)}" if line else ""


def parse_config(data: dict, path: Path) -> Config:
    """Validate the parsed TOML ``data`` of the file at ``path`` into a :class:`Config`."""
    r = _Reader(path)
    base = path.parent
    sections = {"watcher", "source", "profile", "digest", "channel", "web", "summarizer"}
    for key in data:
        if key not in sections:
            r.errors.append(r.fail(key, f"unknown section{_did_you_mean(key, sections)} "
                                        f"(known: {', '.join(sorted(sections))})"))
    w = r.first(lambda: r.table("watcher", data.get("watcher", {}), _WATCHER_KEYS),
                lambda: r.table("watcher", {}, _WATCHER_KEYS))
    tz = r.first(lambda: _timezone(r, w["timezone"]), lambda: timezone.utc)
    r.first(lambda: _check_watcher(r, w), lambda: None)
    settings = Settings(
        database=_resolve(base, w["database"] or "watcher.db"),
        timezone=tz,
        user_agent=w["user_agent"],
        templates_dir=_resolve(base, w["templates_dir"]) if w["templates_dir"] else None,
        state_ratings=w["state_ratings"],
        keep=r.first(lambda: r.duration("watcher.keep", w["keep"]), lambda: timedelta(days=400)),
    )
    sources = r.each(lambda name, t: _source(r, name, t, base), _named(r, data, "source"))
    profiles = r.each(lambda name, t: _profile(r, name, t, base), _named(r, data, "profile"))
    channels = r.each(lambda name, t: _channel(r, name, t), _named(r, data, "channel"))
    declared = {s: set(data[s]) if isinstance(data.get(s), dict) else set() for s in ("profile", "channel")}
    digests = r.each(lambda name, t: _digest(r, name, t, declared, channels, tz), _named(r, data, "digest"))
    web = r.first(lambda: _web(r, data.get("web", {})), lambda: None)
    summarizer = r.first(lambda: _summarizer(r, data.get("summarizer", {})), lambda: None)
    if r.errors:
        raise ConfigErrors.of(r.errors)
    return Config(path, settings, sources, profiles, digests, channels, web, summarizer)


def _timezone(r: _Reader, name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise r.fail("watcher.timezone", f"unknown time zone {name!r}") from e


def _check_watcher(r: _Reader, w: dict) -> None:
    if not w["user_agent"].strip():
        raise r.fail("watcher.user_agent", "must not be empty (servers want a contact address)")
    _check_header_value(r, "watcher.user_agent", w["user_agent"])
    if not w["database"].strip():
        raise r.fail("watcher.database", "must not be empty (a file name such as watcher.db)")
    if Path(w["database"]).name in ("", ".", "..") or w["database"].rstrip().endswith(("/", "\\")):
        raise r.fail("watcher.database", f"{w['database']!r} names a folder, not a file (a file name such as watcher.db)")


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6) -> (host, port); ValueError says what is wrong."""
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([^\s:\[\]]+):(\d{1,5})", text.strip())
    if not m:
        raise ValueError(f"{text!r} is not HOST:PORT (like 127.0.0.1:8080 or [::1]:8080)")
    host = m.group(1) or m.group(3)
    port = int(m.group(2) or m.group(4))
    if not 1 <= port <= 65535:
        raise ValueError(f"port {port} is not between 1 and 65535")
    return host, port


def _check_header_value(r: _Reader, key: str, value: str) -> None:
    """A value sent as an HTTP header: printable ASCII only (a newline or a non-ASCII letter
    would make every request fail later, as a "network error")."""
    bad = next((c for c in value if not (" " <= c <= "~")), None)
    if bad is not None:
        what = "a control character" if bad.isascii() or not bad.isprintable() else "a non-ASCII character"
        raise r.fail(key, f"contains {what} ({bad!r}); an HTTP header takes printable ASCII only")


def _check_address(r: _Reader, key: str, value: str) -> None:
    """One e-mail address, parsed as the e-mail channel's From/To header will be."""
    from email.headerregistry import HeaderRegistry

    example = "like ann@example.org or Ann <ann@example.org>"
    try:
        header = HeaderRegistry()("To", value)
        addresses, defects = header.addresses, header.defects
    except Exception:  # the stdlib parser raises IndexError, ValueError … on some broken input
        addresses, defects = (), ("unparseable",)
    if len(addresses) > 1 and not defects:
        raise r.fail(key, f"{value!r} holds {len(addresses)} addresses; give one address per item")
    if len(addresses) != 1 or defects or not (addresses[0].username and addresses[0].domain):
        raise r.fail(key, f"{value!r} is not an e-mail address ({example})")
    if not addresses[0].addr_spec.isascii():
        raise r.fail(key, f"{value!r}: a non-ASCII address cannot be sent (SMTPUTF8 is not supported)")


def _check_http_url(r: _Reader, key: str, url: str, example: str = "https://example.org/hook",
                    *, bare: bool = False) -> None:
    """An http(s) URL with a host (webhook endpoints, the summarizer's and the web's base
    URLs); ``bare``: without a query or fragment (a base that paths are added to)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok or any(c.isspace() for c in url) or (bare and any(c in url for c in "?#")):
        raise r.fail(key, f"{url!r} is not an http(s) URL such as {example}")


def _env_name(r: _Reader, key: str, value: str | None) -> str | None:
    """A ``*_env`` key: the name of an environment variable. Its value is never echoed: a
    secret pasted here by mistake must not reach the error message (docs/security-limits.md)."""
    if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        raise r.fail(key, "must name an environment variable (letters, digits, _), "
                          "not hold the secret itself")
    return value


def _web(r: _Reader, t: object) -> WebConfig:
    w = r.table("web", t, _WEB_KEYS)
    try:
        host, port = parse_listen(w["listen"])
    except ValueError as e:
        raise r.fail("web.listen", str(e)) from e
    base_url = w["base_url"]
    if base_url is not None:
        _check_http_url(r, "web.base_url", base_url, "https://papers.example.org", bare=True)
        base_url = base_url.rstrip("/")
    secret_env = _env_name(r, "web.secret_env", w["secret_env"])
    password_env = _env_name(r, "web.password_env", w["password_env"])
    if base_url and not secret_env:
        raise r.fail("web.secret_env", "required with web.base_url (it signs the links in digests)")
    if not is_loopback(host) and not password_env:
        raise r.fail("web.password_env", f"required when web.listen ({w['listen']}) is not a loopback address")
    for name in w["hosts"]:
        if not re.fullmatch(r"[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]", name):
            raise r.fail("web.hosts", f"{name!r} is not a host name (such as papers.lan or 192.168.1.5; "
                                      "IPv6 in brackets, no port)")
    return WebConfig(host=host, port=port, base_url=base_url, secret_env=secret_env,
                     password_env=password_env, serve=w["serve"],
                     hosts=tuple(h.lower() for h in w["hosts"]), proxy=w["proxy"])


def _summarizer(r: _Reader, t: object) -> SummarizerConfig:
    s = r.table("summarizer", t, _SUMMARIZER_KEYS)
    kind = r.choice("summarizer.type", s["type"], SUMMARIZER_TYPES)
    for key in SUMMARIZER_KINDS[kind].needs:
        if not s[key]:
            raise r.fail(f"summarizer.{key}", f"required with type = \"{kind}\"")
    if s["base_url"] is not None:
        _check_http_url(r, "summarizer.base_url", s["base_url"], "http://127.0.0.1:11434/v1")
    if s["max_per_day"] < 0:
        raise r.fail("summarizer.max_per_day", f"must be 0 or more, got {s['max_per_day']}")
    return SummarizerConfig(
        type=kind, base_url=s["base_url"].rstrip("/") if s["base_url"] else None,
        model=s["model"], api_key_env=_env_name(r, "summarizer.api_key_env", s["api_key_env"]),
        max_per_day=s["max_per_day"], timeout=r.timeout("summarizer.timeout", s["timeout"]),
    )


def _named(r: _Reader, data: dict, section: str) -> list[tuple[str, dict]]:
    """The ``[section.NAME]`` tables; what is not a table is a problem kept in ``r``."""
    tables = data.get(section, {})
    if not isinstance(tables, dict):
        r.errors.append(r.fail(section, f"expected tables like [{section}.NAME], got {_kind(tables)}"))
        return []
    out = []
    for name, table in tables.items():
        if isinstance(table, dict):
            out.append((name, table))
        else:
            r.errors.append(r.fail(f"{section}.{name}", f"expected a table, got {_kind(table)}"))
    return out


# what people call a journal's feed: the source type that reads one ("rss" is nearest to arxiv-rss,
# which reads only arXiv's)
SOURCE_TYPE_WORDS = {"rss": "feed", "atom": "feed", "journal": "feed", "toc": "feed", "journal-feed": "feed"}


def unknown_name(kind: str, value: str, names) -> str:
    """The one line for a digest, profile or channel named on the command line that the config
    does not define: ``no digest named 'daly'; did you mean daily? (defined: daily, weekly)``."""
    names = list(names)
    return (f"no {kind} named {value!r}{_did_you_mean(value, names)} "
            f"(defined: {', '.join(names) or 'none'})")


def _did_you_mean(value: str, names) -> str:
    """``; did you mean NAME?`` for the name closest to ``value`` (the rule of every category
    check, :func:`watcher.categories.nearest`), or "" when none is close."""

    near = nearest(value, {n.lower(): n for n in names})
    return f"; did you mean {near}?" if near else ""


def _resolve(base: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p


def _source(r: _Reader, name: str, t: dict, base: Path) -> SourceConfig:
    where = f"source.{name}"
    typ = r.value(f"{where}.type", t.get("type", ""), str) if "type" in t else None
    if typ is None:
        raise r.fail(f"{where}.type", "required key is missing")
    from .sources import KINDS

    kind = KINDS[r.choice(f"{where}.type", typ, tuple(KINDS), SOURCE_TYPE_WORDS)]
    v = r.table(where, t, _SOURCE_COMMON | kind.keys)
    if v.get("url_env") and v.get("url"):
        raise r.fail(f"{where}.url_env", "give url or url_env, not both")
    v.update(_options(r, where, kind.options, v, base))
    if kind.validate:  # the kind's own rules, in its module
        v.update(kind.validate(r, where, v) or {})
    r.timeout(f"{where}.timeout", v["timeout"])
    url = v.get("url")
    if url and not url.startswith(("http://", "https://", "file://")):
        url = _resolve(base, url).as_uri() if kind.local_url else url
    return SourceConfig(name=name, type=typ, url=url, timeout=v["timeout"], options=_made(kind.options, v))


def _made(cls: type, v: dict):
    """The options class ``cls`` of the table's values ``v`` (by key: ``from`` is ``sender``)."""
    from dataclasses import fields


    return cls(**{f.name: v[key_of(f)] for f in fields(cls)})


def _options(r: _Reader, where: str, cls: type, v: dict, base: Path) -> dict:
    """The values of a kind's keys that its options class's fields convert: a secret's
    variable checked as a name, a duration parsed, a path resolved against the config's
    folder (an empty duration or path is the field's default)."""
    from dataclasses import MISSING


    out = {}
    for f, _, conversion in fields_of(cls):
        key = key_of(f)
        value = v[key]
        if f.metadata.get("secret"):
            out[key] = _env_name(r, f"{where}.{key}", value)
        elif conversion and isinstance(value, str):
            if not value:
                out[key] = None if f.default is MISSING else f.default
            else:
                out[key] = (r.duration(f"{where}.{key}", value) if conversion == "duration"
                            else _resolve(base, value))
    return out


def _profile(r: _Reader, name: str, t: dict, base: Path) -> Profile:
    where = f"profile.{name}"
    v = r.table(where, t, _PROFILE_KEYS)
    # no query, authors or examples: the profile selects what its ratings teach (watcher.matching.learn)
    if v["max_papers"] < 1:
        raise r.fail(f"{where}.max_papers", "must be at least 1")
    for key, leave_out in (("query", "a profile without one selects by its authors, examples and ratings"),
                           ("exclude", "without it nothing is excluded")):
        if v[key] is not None and not v[key].strip():  # never a caret under nothing
            raise r.fail(f"{where}.{key}", f"is empty: write a query such as '\"protein design\" AND "
                                           f"diffusion', or leave the key out ({leave_out})")
        if v[key]:
            _check_query(r, f"{where}.{key}", v[key])
    for category in v["categories"]:
        r.category(f"{where}.categories", category, archive_wildcard=True)
    for example in v["examples"]:
        _check_example(r, f"{where}.examples", example, base)
    from .zotero.client import check_save_to, library_from

    library = library_from(r, f"{where}.zotero", v["zotero"], _env_name) if v["zotero"] is not None else None
    check_save_to(r, where, v["save_to_zotero"], library)
    max_loss = _share(r, f"{where}.max_recall_loss", v["max_recall_loss"])
    return Profile(
        name=name, title=v["title"] or name, query=v["query"], authors=v["authors"],
        categories=v["categories"], exclude=v["exclude"], examples=v["examples"],
        min_score=v["min_score"], max_papers=v["max_papers"], base_dir=base,
        zotero=library, save_to_zotero=v["save_to_zotero"], max_recall_loss=max_loss,
    )


def _share(r: _Reader, key: str, value: str) -> float:
    """A percentage such as ``"2%"`` or ``"0.5%"`` as a share (0.02), from 0% to 100%."""
    text = value.strip().removesuffix("%").strip()
    try:
        share = float(text) / 100 if value.strip().endswith("%") and text else None
    except ValueError:
        share = None
    if share is None or not 0 <= share <= 1:
        raise r.fail(key, f"{value!r} is not a percentage from 0% to 100% (write it like \"2%\" or \"0.5%\")")
    return share


def _check_example(r: _Reader, key: str, example: str, base: Path) -> None:
    """An example is an arXiv id (looked up in the store) or a listing file next to the config."""

    if (base / example).is_file() or parse_arxiv_id(example):
        return
    if (base / example).exists():
        raise r.fail(key, f"{example!r}: {base / example} is not a file")
    raise r.fail(key, f"{example!r} is neither an arXiv id (like 2504.07615) nor an existing file "
                      f"({base / example} does not exist)")


def _check_query(r: _Reader, key: str, text: str) -> None:
    from .matching.query import parse_query  # the matcher's parser is the one authority on syntax

    try:
        parse_query(text)
    except QuerySyntaxError as e:
        raise QuerySyntaxError(e.problem, e.query, e.position, path=str(r.path), key=key) from e


def _digest(r, name, t, declared: dict[str, set], channels, tz) -> DigestConfig:
    """``declared``: the names of the profiles and channels the file defines (one with a
    problem of its own is still defined: that problem is reported once, under its own key);
    ``channels``: those that are valid."""
    where = f"digest.{name}"
    v = r.table(where, t, _DIGEST_KEYS)
    if not v["profiles"]:
        raise r.fail(f"{where}.profiles", "needs at least one profile")
    for p in v["profiles"]:
        if p not in declared["profile"]:
            raise r.fail(f"{where}.profiles", f"no [profile.{p}] is defined{_did_you_mean(p, declared['profile'])}")
    if not v["channels"]:
        raise r.fail(f"{where}.channels", "needs at least one channel")
    for c in v["channels"]:
        if c not in declared["channel"]:
            raise r.fail(f"{where}.channels", f"no [channel.{c}] is defined{_did_you_mean(c, declared['channel'])}")
    for f in v["formats"]:
        r.choice(f"{where}.formats", f, FORMATS)
    from .matching.order import ORDERS
    from .deliver import KINDS

    r.choice(f"{where}.order", v["order"], tuple(ORDERS))
    valid = [c for c in v["channels"] if c in channels]  # a channel with a problem: reported as its own
    for c in valid:  # what the channel's kind asks of a digest sent through it
        in_digest = KINDS[channels[c].type].in_digest
        if in_digest:
            in_digest(r, channels[c], name, v["formats"])
    writers = [f"{c} ({channels[c].type})" for c in valid if KINDS[channels[c].type].writes_formats]
    if not v["formats"] and writers:  # they would write nothing, yet record the papers
        raise r.fail(f"{where}.formats", f"is empty, but {'channels' if len(writers) > 1 else 'channel'} "
                                         f"{', '.join(writers)} write{'' if len(writers) > 1 else 's'} the "
                                         f"digest's formats: give at least one of {', '.join(FORMATS)}")
    if v["schedule"] and v["every"]:
        raise r.fail(f"{where}.every", "give either schedule or every, not both")
    if not (v["schedule"] or v["every"]):
        raise r.fail(f"{where}.schedule", "required: a cron expression, \"arxiv\", or every = \"6h\"")
    if v["schedule"] and v["schedule"] != "arxiv":
        from .util.schedule import crontab_trigger

        try:
            trigger = crontab_trigger(v["schedule"], tz)
        except ValueError as e:  # a single word was meant as the one keyword, "arxiv"
            keyword = (f' nor "arxiv"{_did_you_mean(v["schedule"], ["arxiv"])}'
                       if len(v["schedule"].split()) == 1 else "")
            raise r.fail(f"{where}.schedule", f"not a cron expression ({e}){keyword}") from e
        now = datetime.now(timezone.utc)
        first = trigger.get_next_fire_time(None, now)
        if first is None or first > now + CRON_HORIZON:
            raise r.fail(f"{where}.schedule", f"{v['schedule']!r} never fires in the next 5 years "
                                              f"(check day of month against month)")
    return DigestConfig(
        name=name, profiles=v["profiles"], channels=v["channels"], schedule=v["schedule"],
        every=r.duration(f"{where}.every", v["every"]) if v["every"] else None,
        formats=v["formats"], send_empty=v["send_empty"],
        lookback=r.duration(f"{where}.lookback", v["lookback"]), title=v["title"], order=v["order"],
    )


def _check_path_template(r: _Reader, key: str, template: str, allowed: tuple[str, ...]) -> None:
    """Format a file or feed channel's path with dummy values, as its send will for real."""
    known = ", ".join("{" + f + "}" for f in allowed)
    if not template.strip():
        raise r.fail(key, "must not be empty")
    if template.endswith(("/", os.sep)):
        raise r.fail(key, f"ends in {template[-1]}: it must name a file, not a folder (known fields: {known})")
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
        for f in fields:
            if f not in allowed:
                raise r.fail(key, f"unknown field {{{f}}} (known fields: {known})")
        template.format(digest="d", date="2000-01-01", ext="txt", format="text")
    except (ValueError, IndexError, KeyError, AttributeError) as e:
        raise r.fail(key, f"not a path template ({e}; known fields: {known})") from e


def _channel(r: _Reader, name: str, t: dict) -> ChannelConfig:
    where = f"channel.{name}"
    if "type" not in t:
        raise r.fail(f"{where}.type", "required key is missing")
    typ = r.value(f"{where}.type", t["type"], str)
    from .deliver import KINDS

    kind = KINDS[r.choice(f"{where}.type", typ, tuple(KINDS))]
    v = r.table(where, t, _CHANNEL_COMMON | kind.keys)
    r.timeout(f"{where}.timeout", v["timeout"])
    if kind.validate:  # the kind's own rules, in its module
        v.update(kind.validate(r, where, v) or {})
    v.update(_options(r, where, kind.options, v, Path(".")))  # its secrets name variables
    return ChannelConfig(name=name, type=typ, timeout=v["timeout"], options=_made(kind.options, v))
