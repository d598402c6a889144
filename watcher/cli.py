"""The ``watcher`` command line (SPEC §3).

Exit status: 0 all good; 1 the run finished but a source or channel failed (said on stderr);
2 bad usage or bad config (one line naming the file, key and problem; never a traceback).
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import sys
from datetime import date, datetime, timezone

import click

from . import __version__
from .config import FORMATS, Config, find_config, load_config
from .errors import ConfigError, InputError, QuerySyntaxError, StoreError, WatcherError

log = logging.getLogger("watcher")


def fail(message: str, code: int) -> None:
    """Print ``watcher: message`` on stderr and exit with ``code``."""
    click.echo(f"watcher: {message}", err=True)
    sys.exit(code)


def handle_errors(fn):
    """Turn watcher's errors into one-line messages and exit codes."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except QuerySyntaxError as e:
            click.echo(f"watcher: {e}\n{e.caret()}", err=True)
            sys.exit(2)
        except (ConfigError, InputError) as e:
            fail(str(e), 2)
        except (StoreError, WatcherError) as e:
            fail(str(e), 1)
        except sqlite3.Error as e:  # any command reading a locked, read-only or damaged database
            from .store import database_error

            ctx = args[0] if args and isinstance(args[0], Context) else None
            db = ctx._config.settings.database if ctx and ctx._config else "the database"
            fail(str(database_error(db, e)), 1)
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper


class Context:
    """Lazily loaded config, shared by the subcommands."""

    def __init__(self, config_path: str | None, log_level: str = "warning", log_level_given: bool = False):
        self.config_path = config_path
        self.log_level = log_level
        self.log_level_given = log_level_given
        self._config: Config | None = None

    @property
    def config(self) -> Config:
        """The validated config (ConfigError when missing or invalid)."""
        if self._config is None:
            self._config = load_config(find_config(self.config_path))
            from .logs import mask_secrets_of

            mask_secrets_of(self._config)
        return self._config


pass_ctx = click.make_pass_decorator(Context)


def now_utc() -> datetime:
    """The wall clock, aware UTC."""
    return datetime.now(timezone.utc)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="watcher")
@click.option("--config", "config_path", metavar="PATH", envvar=None,
              help="Config file (else $WATCHER_CONFIG, else ./config.toml, else "
                   "~/.config/watcher/config.toml).")
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
              help="How much to log on stderr.")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, log_level: str) -> None:
    """watcher: every morning, the new arXiv and Hugging Face papers that match your profiles.

    Fetches new listings, stores unseen papers in SQLite, scores them against the profiles
    in config.toml and delivers digests by e-mail, Slack, webhook or file.

    Exit status: 0 all good; 1 a source or channel failed; 2 bad usage or bad config.
    """
    from .logs import configure

    configure(log_level)
    given = ctx.get_parameter_source("log_level") is not click.core.ParameterSource.DEFAULT
    ctx.obj = Context(config_path, log_level, given)


def _report_cycle(report, sample_stdout: bool) -> int:
    """Print the sample digest when asked; the exit status. Failures were logged as they happened."""
    if sample_stdout:
        shown = set()
        for c in report.channels:
            if c.sent and c.digest not in shown and c.rendered:
                shown.add(c.digest)
                click.echo(c.rendered.get("text") or next(iter(c.rendered.values())))
    return 0 if report.ok else 1


def _check_digests(config: Config, names: tuple[str, ...]) -> None:
    for name in names:
        if name not in config.digests:
            known = ", ".join(config.digests) or "none"
            raise ConfigError(f"no digest named {name!r} (defined: {known})", path=str(config.path))


@cli.command()
@click.option("--digest", "digests", multiple=True, metavar="NAME", help="Only this digest (repeatable).")
@click.option("--due", is_flag=True, help="Only digests whose schedule fired since their last run.")
@click.option("--dry-run", is_flag=True,
              help="Print each digest once, in each format its channels send, on stdout (a "
                   "'==>' banner per format and 'no new papers' notes go to stderr); send and "
                   "record nothing. A digest shows the union of what its channels would get.")
@click.option("--sample", is_flag=True,
              help="Read the shipped sample listings instead of the network, with the sample's "
                   "newest date as today, into a separate sample database.")
@pass_ctx
@handle_errors
def once(ctx: Context, digests, due, dry_run, sample) -> None:
    """One full cycle now: fetch all sources, store, build and deliver digests."""
    from .pipeline import Cycle, run_once, sample_now

    config = ctx.config
    _check_digests(config, digests)
    if sample and log.getEffectiveLevel() > logging.INFO:
        log.setLevel(logging.INFO)
    now = sample_now(config) if sample else now_utc()
    selected = list(digests) or list(config.digests)
    if due:
        from .schedule import due_digests

        from .pipeline import open_store

        with open_store(config, sample) as store:
            selected = [n for n in due_digests(config, store, now) if n in selected]
    cycle = Cycle(now=now, digests=selected, dry_run=dry_run, sample=sample,
                  clock=None if sample else now_utc)
    report = run_once(config, cycle)
    sys.exit(_report_cycle(report, sample and not dry_run))


@cli.command()
@pass_ctx
@handle_errors
def run(ctx: Context) -> None:
    """The daemon: fire each digest on its schedule until stopped.

    Catches up, at start, every digest whose scheduled time passed without a successful run.
    SIGTERM / SIGINT stop it cleanly (within 10 s); SIGHUP reloads the config (an invalid one is
    logged and the running config kept). A second `watcher run` on the same database refuses to
    start (exit 2, like bad usage: restarting it would not help). Logs one line per event on
    stderr (level info unless --log-level says otherwise).
    """
    from .daemon import run_daemon
    from .lock import LockBusy
    from .logs import configure

    configure(ctx.log_level if ctx.log_level_given else "info", daemon=True)
    config = ctx.config
    try:
        code = run_daemon(config)
    except LockBusy as e:
        fail(str(e), 2)
    sys.exit(code)


@cli.command()
@click.option("--source", "sources", multiple=True, metavar="NAME", help="Only this source (repeatable).")
@click.option("--since", metavar="DATE", help="Backfill from this date (sources that support it).")
@pass_ctx
@handle_errors
def fetch(ctx: Context, sources, since) -> None:
    """Fetch and store only; print new / updated / unchanged per source."""
    from .pipeline import Cycle, fetch_sources, open_store

    config = ctx.config
    for name in sources:
        if name not in config.sources:
            raise ConfigError(f"no source named {name!r} (defined: {', '.join(config.sources) or 'none'})",
                              path=str(config.path))
    since_dt = None
    if since:
        since_dt = datetime.combine(_parse_date(since, "--since"), datetime.min.time(), timezone.utc)
    cycle = Cycle(now=now_utc(), sources=list(sources) or None, since=since_dt)
    from .lock import write_lock

    with write_lock(config.settings.database, "watcher fetch") as lock:
        lock.acquire(cycle.lock_wait)
        cycle.now = now_utc()  # read once locked: stamps never run behind an earlier writer's
        with open_store(config) as store:
            reports = fetch_sources(config, store, cycle)
    failed = False
    for r in reports:
        if r.error:
            failed = True
            click.echo(f"{r.name}: failed: {r.error}")
        else:
            click.echo(f"{r.name}: {r.new} new, {r.updated} updated, {r.unchanged} unchanged")
    sys.exit(1 if failed else 0)


def _parse_date(text: str, what: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a date (YYYY-MM-DD)", param_hint=what) from None


@cli.command()
@click.argument("name")
@click.option("--to", "fmt", type=click.Choice(FORMATS),
              help="With --dry-run: print only this format (--to json: one JSON array).")
@click.option("--since", metavar="DATE", help="Take papers filed on or after DATE, ignoring the last run.")
@click.option("--dry-run", is_flag=True,
              help="Print the digest once per format on stdout instead of sending it; record nothing.")
@pass_ctx
@handle_errors
def digest(ctx: Context, name, fmt, since, dry_run) -> None:
    """Build one digest now from the database and deliver it (or print it).

    With --dry-run the digest is built once, not once per channel: from the union of the papers
    its channels would get (a paper already delivered through one channel still shows while
    another has not had it), and printed once in each format its channels send, or only in
    --to FORMAT, so that `--dry-run --to json | python -m json.tool` works. Banners go to
    stderr; when there is nothing to send stdout stays empty and stderr says
    "digest NAME: no new papers (reason)".
    """
    from .pipeline import Cycle, run_once

    config = ctx.config
    _check_digests(config, (name,))
    cycle = Cycle(now=now_utc(), digests=[name], dry_run=dry_run, clock=now_utc,
                  since_day=_parse_date(since, "--since") if since else None,
                  print_format=fmt if dry_run else None)
    if fmt and not dry_run:
        raise click.UsageError("--to goes with --dry-run (channels send their own formats)")
    if dry_run:  # prints what would be sent: never creates a database to print nothing from
        from .store import require_database

        require_database(config.settings.database)
    report = run_once(config, cycle, fetch=False)
    sys.exit(_report_cycle(report, False))


@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--profile", metavar="NAME", help="Keep only papers matching this profile, best first.")
@click.option("--limit", type=click.IntRange(min=1), help="With --profile: at most N papers.")
@click.option("--to", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--title", help="The listing's title (default: the first input's, or the profile's).")
@click.option("--date", "day", metavar="D", help="The listing's date YYYY-MM-DD (default: the first input's).")
@pass_ctx
@handle_errors
def convert(ctx: Context, inputs, profile, limit, fmt, title, day) -> None:
    """Read listings (paths, -, URLs) in any supported format and print them as one listing.

    The format of each input is detected from its content. No database is used.
    Year-less dates on a Hugging Face page take the year of --date when given.
    """
    from .convert import convert_inputs

    when = _parse_date(day, "--date") if day else None
    if limit and not profile:
        raise click.UsageError("--limit goes with --profile")
    config = ctx.config if profile else None
    out = convert_inputs(inputs, config=config, profile=profile, limit=limit, fmt=fmt,
                         title=title, day=when, stdin=sys.stdin.buffer)
    sys.stdout.write(out)
    sys.stdout.flush()


@cli.command()
@pass_ctx
@handle_errors
def check(ctx: Context) -> None:
    """Validate the config, templates and channel settings; send nothing."""
    from .check import check_config

    problems, summary = check_config(ctx.config)
    for p in problems:
        click.echo(f"watcher: {p}", err=True)
    if problems:
        sys.exit(2)
    click.echo(summary)
    from .links import link_notes
    from .ratings import orphan_notes

    for note in orphan_notes(ctx.config) + link_notes(ctx.config):
        click.echo(note)


@cli.command()
@pass_ctx
@handle_errors
def status(ctx: Context) -> None:
    """Show sources (last fetch, errors, counts) and digests (last run, next fire, deliveries)."""
    from .status import status_text

    click.echo(status_text(ctx.config, now_utc()))


@cli.command()
@click.argument("paper")
@click.option("--profile", required=True, metavar="NAME", help="The profile to score against.")
@pass_ctx
@handle_errors
def explain(ctx: Context, paper, profile) -> None:
    """The score of one stored paper (arXiv id or title) and the reasons."""
    from .pipeline import matchers_for, open_store
    from .store import require_database

    config = ctx.config
    if profile not in config.profiles:
        raise ConfigError(f"no profile named {profile!r} (defined: {', '.join(config.profiles)})",
                          path=str(config.path))
    require_database(config.settings.database)
    with open_store(config) as store:
        found = store.find(paper)
        if found is None:
            raise InputError(f"{paper}: no such paper in {config.settings.database}")
        matcher = matchers_for(config, [profile], store.get, store)[0]
        m = matcher.explain(found)
        selected = matcher.score(found) is not None
    click.echo(f"{found.title}")
    click.echo(f"{found.abs_url or found.key}")
    click.echo(f"profile {profile}: score {m.score:.2f} ({'selected' if selected else 'not selected'})")
    for reason in m.reasons:
        click.echo(f"  - {reason}")


@cli.command("test-deliver")
@click.argument("channel")
@pass_ctx
@handle_errors
def test_deliver(ctx: Context, channel) -> None:
    """Send a small sample digest through one channel."""
    from .testdeliver import send_test_digest

    config = ctx.config
    if channel not in config.channels:
        raise ConfigError(f"no channel named {channel!r} (defined: {', '.join(config.channels) or 'none'})",
                          path=str(config.path))
    send_test_digest(config, channel, now_utc())
    click.echo(f"sent a test digest through channel {channel}")


from . import cli_ratings  # noqa: E402,F401  (registers rate, ratings, saved)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="watcher")


if __name__ == "__main__":
    main()
