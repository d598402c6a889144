"""The exception tree of watcher, written down in one place.

    WatcherError                 anything watcher reports to a user in one line
    ├── ConfigError              bad config file or bad usage (exit 2)
    │   └── QuerySyntaxError     a profile query that does not parse
    ├── InputError               an input listing that cannot be read (exit 2 for convert)
    ├── SourceError              a source failed to fetch or parse (stored, exit 1)
    ├── DeliveryError            a channel refused or failed a delivery (stored, exit 1)
    │   └── RenderError          a template is missing or failed (fails that channel only)
    └── StoreError               the database cannot be opened or written
        └── DatabaseUnavailable  ... at all: locked, read-only, damaged, full (stops a cycle)
            └── DatabaseLocked   ... because another program held the write lock past the wait

Every message is meant for a person: it says what failed and, where it can, what to check.
Secrets never go into messages. A message printed or stored is cut to MAX_ERROR characters (one
may quote what a server sent).
"""

from __future__ import annotations

MAX_ERROR = 1000  # characters of an error line printed or stored


class WatcherError(Exception):
    """Base class: a failure watcher can explain in one line."""


class ConfigError(WatcherError):
    """A config file or command line that watcher cannot accept.

    ``path`` and ``key`` name where the problem is; ``str()`` gives the one-line message
    ``config.toml: digest.daily.schedule: not a cron expression ...``.
    """

    def __init__(self, problem: str, *, path: str | None = None, key: str | None = None):
        self.problem = problem
        self.path = path
        self.key = key
        parts = [p for p in (path, key) if p]
        super().__init__(": ".join(parts + [problem]))


class ConfigErrors(ConfigError):
    """Several problems in one config file, each a :class:`ConfigError` of its own (``errors``):
    a user fixes them all in one go, not one per run. ``str()`` is one line (for a log),
    the problems joined by "; "; the command line prints each on a line of its own."""

    def __init__(self, errors: list[ConfigError]):
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.problem, path=first.path, key=first.key)
        self.args = ("; ".join(str(e) for e in self.errors),)

    @staticmethod
    def of(errors: list[ConfigError]) -> ConfigError:
        """The error to raise for ``errors`` (at least one): itself when alone, else all of them."""
        return errors[0] if len(errors) == 1 else ConfigErrors(errors)


class QuerySyntaxError(ConfigError):
    """A profile query that does not parse; ``position`` is the offending character offset."""

    def __init__(self, problem: str, query: str, position: int, **kw):
        self.query = query
        self.position = position
        super().__init__(problem, **kw)

    def caret(self) -> str:
        """The query's line that holds the problem and a caret under it, for display (a query
        from a multi-line TOML string shows only its offending line, tabs as spaces)."""
        start = self.query.rfind("\n", 0, self.position) + 1
        end = self.query.find("\n", self.position)
        line = self.query[start:end if end >= 0 else len(self.query)]
        line = "".join(" " if c.isspace() else c for c in line)
        return f"{line}\n{' ' * (self.position - start)}^"


class InputError(WatcherError):
    """An input listing (file, URL, stdin) that is empty, binary, malformed or of unknown format."""


class SourceError(WatcherError):
    """A source could not be fetched or its response could not be parsed."""


class DeliveryError(WatcherError):
    """A channel could not deliver a digest."""


class RenderError(DeliveryError):
    """A template (shipped or the user's) is missing, does not compile or failed to render.
    It fails the delivery it belongs to, so other channels still go out."""


class StoreError(WatcherError):
    """The SQLite database could not be opened, read or written."""


class DatabaseUnavailable(StoreError):
    """The database cannot be used at all (locked past the timeout, read-only, damaged, full,
    cannot be opened): a cycle stops there, since nothing after it could be recorded. Any other
    StoreError fails only the step it came from."""


class DatabaseLocked(DatabaseUnavailable):
    """Another program held the database's write lock for longer than this one would wait.
    Passing: the daemon tries the cycle again within the same firing (a few times, logged)."""
