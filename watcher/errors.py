"""The exception tree of watcher, written down in one place.

    WatcherError                 anything watcher reports to a user in one line
    ├── ConfigError              bad config file or bad usage (exit 2)
    │   ├── ConfigErrors         several of them in one file, reported together
    │   └── QuerySyntaxError     a profile query that does not parse
    ├── InputError               an input listing that cannot be read (exit 2 for convert)
    │   ├── TooManyValues        JSON that would parse into more than a listing holds
    │   ├── ArxivApiError        the arXiv API's error feed
    │   ├── BadItem              a Zotero item whose fields are not what a paper needs
    │   ├── BadLink              a rating link that is not ours (forged, altered, another secret)
    │   │   └── ExpiredLink      ... one of ours, past its expiry
    │   └── RatingError          a rating that cannot be recorded (nothing changed)
    ├── SourceError              a source failed to fetch or parse (stored, exit 1)
    │   ├── HttpStatusError      the server answered an error status (status and body kept)
    │   └── ZoteroError          a Zotero request failed (status kept)
    ├── DeliveryError            a channel refused or failed a delivery (stored, exit 1)
    │   ├── RenderError          a template is missing or failed (fails that channel only)
    │   └── PartialDelivery      a split digest's later part failed; the earlier parts count
    ├── StoreError               the database cannot be opened or written
    │   ├── LockBusy             another process holds watcher's lock (a second daemon)
    │   ├── Interrupted          a statement the web's deadline stopped (not the database's fault)
    │   ├── NotAWatcherDatabase  a restored state file SQLite cannot read as a watcher database
    │   └── DatabaseUnavailable  ... at all: locked, read-only, damaged, full (stops a cycle)
    │       └── DatabaseLocked   ... because another program held the write lock past the wait
    └── TooLarge                 an answer longer than its cap (callers say whose, as a
                                 SourceError or DeliveryError of their own)

These are the errors callers catch across modules. A module's own errors stay beside it: those
that never leave it are private (a leading underscore: ``util.http._EncodingRefused``,
``deliver.email._StepTimedOut``, ``present.summarize._Failure`` ...); those that leave it derive
from a class here (``formats.arxiv_oai.OaiError``, ``util.http.InwardRedirect``,
``cli.statebranch.StateError``). Two exceptions outside this tree are signals, not errors, and
never reach a user: ``util.http.Retry`` (one try of :func:`watcher.util.http.with_retries` failed, try
again) and ``web.pages.TooSlow`` (Starlette's 503 answer of a page stopped at its deadline).
``tests/unit/test_errors.py`` keeps it so.

Every message is meant for a person: it says what failed and, where it can, what to check.
Secrets never go into messages. A message printed or stored is cut to MAX_ERROR characters (one
may quote what a server sent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .masking import redact

if TYPE_CHECKING:
    from .models import Paper

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
        from a multi-line TOML string shows only its offending line, tabs as spaces). A line
        longer than :data:`CARET_WIDTH` shows the part around the problem, cut ends marked
        ``…``, so that the caret stays in sight on a phone's error box and is not moved by a
        terminal's wrapping."""
        start = self.query.rfind("\n", 0, self.position) + 1
        end = self.query.find("\n", self.position)
        line = self.query[start:end if end >= 0 else len(self.query)]
        line = "".join(" " if c.isspace() else c for c in line)
        column = self.position - start
        if len(line) > CARET_WIDTH:
            left = max(0, column - CARET_WIDTH // 2)
            right = left + CARET_WIDTH
            line = ("…" if left else "") + line[left:right] + ("…" if right < len(line) else "")
            column = column - left + (1 if left else 0)
        return f"{line}\n{' ' * column}^"


CARET_WIDTH = 60  # characters of a query's line QuerySyntaxError.caret shows at most (a phone shows ~36)


class InputError(WatcherError):
    """An input listing (file, URL, stdin) that is empty, binary, malformed or of unknown format."""


class TooManyValues(InputError):
    """JSON that would parse into more objects, arrays or values than allowed
    (:func:`watcher.formats.bound_json`)."""


class ArxivApiError(InputError):
    """The arXiv API answered with its error feed; ``str()`` carries the API's own message."""


class BadItem(InputError):
    """A Zotero item whose fields are not what a paper needs (a creator's name that is a list):
    the item is skipped and counted, the sync goes on (:mod:`watcher.zotero.client`)."""


class BadLink(InputError):
    """A token that is not one of ours: forged, truncated, altered, or signed with another secret."""


class ExpiredLink(BadLink):
    """One of our tokens, past its expiry (LINK_DAYS after its digest); ``asked``: what it
    asked for (its signature holds: the page can name the paper and link to it)."""

    def __init__(self, message: str, asked: object = None):  # a watcher.present.links.LinkRating
        super().__init__(message)
        self.asked = asked


class RatingError(InputError):
    """A rating that cannot be recorded (unknown action, paper or profile); nothing changed."""


class SourceError(WatcherError):
    """A source could not be fetched or its response could not be parsed."""


class HttpStatusError(SourceError):
    """The server answered with an error status; ``status`` and ``body`` are kept so a source
    can read an error document (the arXiv API answers 400 with an Atom error feed)."""

    def __init__(self, message: str, status: int, body: bytes):
        super().__init__(message)
        self.status = status
        self.body = body


class ZoteroError(SourceError):
    """A Zotero request that failed; ``status`` is the HTTP status (0: no answer)."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(redact(message))  # an answer that echoed the key shows *** (docs/security-limits.md)
        self.status = status


class DeliveryError(WatcherError):
    """A channel could not deliver a digest."""


class RenderError(DeliveryError):
    """A template (shipped or the user's) is missing, does not compile or failed to render.
    It fails the delivery it belongs to, so other channels still go out."""


class PartialDelivery(DeliveryError):
    """Some parts of a split digest were accepted, a later one failed: ``delivered`` are the
    papers the accepted parts showed (and only those may be recorded; the pipeline records
    them, so the next run sends the rest). E-mail and Slack split digests."""

    def __init__(self, message: str, delivered: list[Paper]):
        super().__init__(message)
        self.delivered = delivered


class StoreError(WatcherError):
    """The SQLite database could not be opened, read or written."""


class LockBusy(StoreError):
    """A lock of :mod:`watcher.cycle.lock` is held by another process (the message names it)."""


class Interrupted(StoreError):
    """A statement its connection's progress handler stopped (SQLITE_INTERRUPT: the web's
    deadline, its client gone, the server stopping), never a problem of the database."""


class NotAWatcherDatabase(StoreError):
    """A restored file SQLite cannot read as a watcher database; its text is SQLite's."""


class DatabaseUnavailable(StoreError):
    """The database cannot be used at all (locked past the timeout, read-only, damaged, full,
    cannot be opened): a cycle stops there, since nothing after it could be recorded. Any other
    StoreError fails only the step it came from."""


class DatabaseLocked(DatabaseUnavailable):
    """Another program held the database's write lock for longer than this one would wait.
    Passing: the daemon tries the cycle again within the same firing (a few times, logged)."""


class TooLarge(WatcherError):
    """An answer longer than the limit of :func:`watcher.util.http.read_capped` (nothing more of it
    was read); ``declared`` is the size its Content-Length gave (None: it was streamed past the
    limit). Callers turn it into an error of what they were doing (a source's, a channel's)."""

    def __init__(self, message: str, declared: int | None = None):
        super().__init__(message)
        self.declared = declared
