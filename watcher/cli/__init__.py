"""The ``watcher`` command line (docs/cli.md).

Exit status: 0 all good; 1 the run finished but a source, digest or channel failed (said on
stderr), or the database could not be used, or the output could not be written (a full disk),
or watcher hit a bug (one line; the traceback with --log-level debug); 2 bad usage or bad config
(one line naming the file, key and problem; never a traceback), or a file or folder named that
cannot be written (read-only, a path through a file).
"""

from __future__ import annotations

import logging
import shutil
import sys
from datetime import date, datetime, timezone

import click

from .. import __version__
from . import cli_init, cli_ratings
from .clikit import (SAMPLE_HELP, Context, _drop_stdout, fail, handle_errors, pass_ctx, reading_config,
                     sample_hint, write_failed)
from ..config import FORMATS, Config, unknown_name
from ..errors import ConfigError, InputError
from ..formats import READERS as READER_NAMES
from ..models import now_utc

log = logging.getLogger("watcher")


class _Commands(click.Group):
    """The ``watcher`` group: a reader that stops early (``watcher ... | head``) ends the
    command quietly, as the Python docs recommend for SIGPIPE (stdout to devnull, exit 1)."""

    def invoke(self, ctx: click.Context):
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()  # here, where a full disk is one line, not at exit
        except BrokenPipeError:
            _drop_stdout()
            sys.exit(1)
        except OSError as e:  # the output of --help or of a command, written at the end
            write_failed(e)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="watcher")
@click.option("--config", "config_path", metavar="PATH", envvar=None,
              help="Config file (else $WATCHER_CONFIG, else ./config.toml, else "
                   "~/.config/watcher/config.toml).")
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
              help="How much to log on stderr.")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, log_level: str) -> None:
    """watcher: every morning, the new papers that match your profiles (arXiv, Hugging Face,
    bioRxiv, medRxiv, PubMed, any journal's feed, OpenAlex's citation graph).

    Fetches new listings, stores unseen papers in SQLite, scores them against the profiles
    in config.toml and delivers digests by e-mail, Slack, webhook, apprise, Atom feed or file.

    Exit status: 0 all good; 1 a source, digest or channel failed; 2 bad usage or bad config.
    """
    given = ctx.get_parameter_source("log_level") is not click.core.ParameterSource.DEFAULT
    ctx.obj = Context(config_path, log_level, given)
    ctx.obj.configure_logging()


def _report_cycle(report, sample_stdout: bool, digests: list[str] | None = None) -> int:
    """Print the sample digest when asked: the whole of it (as its channels sent it) for a
    pipe or a file, each paper's title and TL;DR on a terminal. With ``digests`` (a real run)
    and stderr a terminal, one line per digest on stderr — a cron job stays silent, and so
    does a run whose log already says it (--log-level info). The exit status. Failures were
    logged as they happened."""
    from ..present.summary import brief, digest_lines, skim

    shown = set()
    if sample_stdout:
        for c in report.channels:
            if c.sent and c.digest not in shown and c.rendered and c.issue and c.issue.matches:
                shown.add(c.digest)
                if len(shown) > 1:
                    click.echo("")
                if sys.stdout.isatty():
                    click.echo(skim(c.issue, c.files, shutil.get_terminal_size().columns))
                else:  # a pipe or a file: a line per paper and where the whole digest is
                    click.echo(brief(c.issue, c.files))
    if sample_stdout and not shown and digests and not sys.stderr.isatty():
        for line in digest_lines(report, digests):  # piped, a run that brought nothing says so
            click.echo(line, err=True)
    elif digests is not None and sys.stderr.isatty() and log.getEffectiveLevel() > logging.INFO:
        for line in digest_lines(report, digests):
            click.echo(line, err=True)
    return 0 if report.ok else 1


def _check_digests(config: Config, names: tuple[str, ...]) -> None:
    for name in names:
        if name not in config.digests:
            raise ConfigError(unknown_name("digest", name, config.digests), path=str(config.path))


@cli.command()
@click.option("--digest", "digests", multiple=True, metavar="NAME", help="Only this digest (repeatable).")
@click.option("--due", is_flag=True, help="Only digests whose schedule fired since their last run; "
                                          "when none is due, nothing is fetched either.")
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
    from ..cycle.pipeline import Cycle, Deliver, DryRun, Fetch, open_store, run_once, sample_config, sample_now

    config = ctx.config
    _check_digests(config, digests)
    if sample:  # at the chosen log level (a terminal gets the skim and a line per digest)
        config = ctx.used = sample_config(config)
    now = sample_now(config) if sample else now_utc()
    selected = list(digests) or list(config.digests)
    if due:
        from ..util.schedule import due_digests

        with open_store(config) as store:
            last = store.last_runs(config.digests)
        selected = [d.name for d in due_digests(config, last, now, only=selected)]
    cycle = Cycle(now=now, clock=None if sample else now_utc)
    # --due under a timer every 15 minutes: no digest due, no source fetched
    fetch = None if due and not selected else Fetch()
    report = run_once(config, cycle, fetch, Deliver(digests=selected, dry_run=DryRun() if dry_run else None))
    sys.exit(_report_cycle(report, sample and not dry_run, None if dry_run else selected))


@cli.command()
@pass_ctx
@handle_errors
def run(ctx: Context) -> None:
    """The daemon: fire each digest on its schedule until stopped.

    Catches up, at start, every digest whose scheduled time passed without a successful run.
    SIGTERM / SIGINT stop it cleanly (within 10 s); SIGHUP reloads the config (an invalid one is
    logged and the running config kept). A second `watcher run` on the same database refuses to
    start (exit 2, like bad usage: restarting it would not help). Logs one line per event on
    stderr (level info unless --log-level says otherwise). With [web].serve = true in the
    config it also serves the web inbox (as `watcher serve` does) in the same process.
    """
    from ..cycle.daemon import run_daemon
    from ..errors import LockBusy

    ctx.log_level = ctx.log_level if ctx.log_level_given else "info"
    ctx.daemon_log = True
    ctx.configure_logging()
    config = ctx.config
    from ..web.serve import background

    try:
        with background(config):  # [web].serve = true: the web inbox in this process too
            code = run_daemon(config, ctx.log_level)
    except LockBusy as e:
        fail(str(e), 2)
    sys.exit(code)


@cli.command()
@click.option("--source", "sources", multiple=True, metavar="NAME", help="Only this source (repeatable).")
@click.option("--since", metavar="DATE",
              help="Backfill from this date, not a future one: arxiv, arxiv-oai and hf-daily sources "
                   "reach back; arxiv-rss and listing sources cannot and are skipped, saying so.")
@pass_ctx
@handle_errors
def fetch(ctx: Context, sources, since) -> None:
    """Fetch and store only; print new / updated / unchanged per source.

    Long fetches (a --since backfill, page after page) show progress on stderr: a bar on a
    terminal, else a log line at most every 30 s.
    """
    from ..cycle.pipeline import Cycle, Fetch, run_once

    config = ctx.config
    for name in sources:
        if name not in config.sources:
            raise ConfigError(f"no source named {name!r} (defined: {', '.join(config.sources) or 'none'})",
                              path=str(config.path))
    since_dt = None
    skipped = []
    if since is not None:
        since_dt = datetime.combine(_since_day(config, since), datetime.min.time(), timezone.utc)
        sources, skipped = _backfill_sources(config, sources)
    report = run_once(config, Cycle(now=now_utc(), kind="fetch", clock=now_utc),
                      Fetch(sources=list(sources) or None, since=since_dt))
    for line in skipped:
        click.echo(line)
    for r in report.sources:
        if r.error:
            click.echo(f"{r.name}: failed, nothing fetched (its error is on stderr)")  # not said twice
        elif r.not_modified:
            click.echo(f"{r.name}: not modified since the last fetch")
        else:
            click.echo(f"{r.name}: {r.new} new, {r.updated} updated, {r.unchanged} unchanged")
    sys.exit(0 if report.ok else 1)


def _since_day(config: Config, text: str, now: datetime | None = None) -> date:
    """``fetch --since`` and ``digest --since``: a date, not after today (``now``'s day,
    default the clock's; a --sample digest's is the sample's) in the configured time zone."""
    day = _parse_date(text, "--since")
    today = (now or now_utc()).astimezone(config.settings.timezone).date()
    if day > today:
        fail(f"--since {day} is in the future (today is {today} in {config.settings.timezone.key})", 2)
    return day


def _backfill_sources(config: Config, names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The sources a ``fetch --since`` backfills, and a report line for each one left out
    because its type cannot reach back. Naming such a source, or having no other, is a
    usage error (exit 2)."""
    from ..sources import NO_BACKFILL

    def why(name: str) -> str:
        typ = config.sources[name].type
        return f"source {name} ({typ}) cannot backfill: {NO_BACKFILL[typ]}"

    for name in names:
        if config.sources[name].type in NO_BACKFILL:
            fail(f"--since: {why(name)}; fetch it without --since", 2)
    if names:
        return list(names), []
    able = [n for n in config.sources if config.sources[n].type not in NO_BACKFILL]
    if config.sources and not able:
        fail(f"--since: no source can backfill ({'; '.join(why(n) for n in config.sources)}); "
             "arxiv, arxiv-oai and hf-daily sources can", 2)
    return able, [f"{n}: skipped ({config.sources[n].type} cannot backfill: "
                  f"{NO_BACKFILL[config.sources[n].type]})" for n in config.sources if n not in able]


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
@click.option("--sample", is_flag=True,
              help="From the sample database of 'watcher once --sample', with the sample's newest "
                   "date as today.")
@pass_ctx
@handle_errors
def digest(ctx: Context, name, fmt, since, dry_run, sample) -> None:
    """Build one digest now from the database and deliver it (or print it).

    With --dry-run the digest is built once, not once per channel: from the union of the papers
    its channels would get (a paper already delivered through one channel still shows while
    another has not had it), and printed once in each format its channels send, or only in
    --to FORMAT, so that `--dry-run --to json | python -m json.tool` works. Banners go to
    stderr; when there is nothing to send stdout stays empty and stderr says
    "digest NAME: no new papers (reason)".
    """
    from ..cycle.pipeline import Cycle, Deliver, DryRun, run_once, sample_config, sample_now

    config = ctx.config
    _check_digests(config, (name,))
    if sample:
        config = sample_config(config)
    if fmt and not dry_run:
        raise click.UsageError("--to goes with --dry-run (channels send their own formats)")
    cycle = (Cycle(now=sample_now(config), kind="digest") if sample
             else Cycle(now=now_utc(), kind="digest", clock=now_utc))
    deliver = Deliver(digests=[name], since_day=_since_day(config, since, cycle.now) if since is not None else None,
                      dry_run=DryRun(print_format=fmt) if dry_run else None)
    if dry_run or sample:  # never creates a database to print nothing from
        from ..store import require_database

        if not config.settings.database.exists() and (hint := sample_hint(ctx, config)):
            raise InputError(f"{config.settings.database}: no database yet{hint}")
        require_database(config.settings.database)
    report = run_once(config, cycle, None, deliver)
    sys.exit(_report_cycle(report, False, None if dry_run else [name]))


@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--profile", metavar="NAME", help="Keep only papers matching this profile, best first.")
@click.option("--limit", type=click.IntRange(min=1), help="With --profile: at most N papers.")
@click.option("--to", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="The format to write the papers in (on stdout).")
@click.option("--title", help="The listing's title (default: the first input's, or the profile's).")
@click.option("--date", "day", metavar="D", help="The listing's date YYYY-MM-DD (default: the first input's own, else a date in its "
                   "file name, else its newest paper's, else today).")
@click.option("--from", "kind", type=click.Choice(list(READER_NAMES)), metavar="KIND",
              help="Read every input as this format instead of detecting it: "
                   + ", ".join(READER_NAMES) + ".")
@pass_ctx
@handle_errors
def convert(ctx: Context, inputs, profile, limit, fmt, title, day, kind) -> None:
    """Read listings (paths, -, URLs) in any supported format and print them as one listing.

    The format of each input is detected from its content (--from names it when detection
    cannot: a journal's feed that reads as something else). No database is used.
    Year-less dates on a Hugging Face page take the year of --date when given.
    Many inputs show progress on stderr (a bar on a terminal); stdout is only the listing.
    """
    from .convert import convert_inputs

    when = _parse_date(day, "--date") if day else None
    if limit and not profile:
        raise click.UsageError("--limit goes with --profile")
    config = ctx.config if profile else None
    out = convert_inputs(inputs, config=config, profile=profile, limit=limit, fmt=fmt,
                         title=title, day=when, stdin=sys.stdin.buffer, kind=kind)
    sys.stdout.write(out)
    sys.stdout.flush()


@cli.command()
@pass_ctx
@handle_errors
def check(ctx: Context) -> None:
    """Validate the config, templates and channel settings; send nothing."""
    from .check import check_config, unloaded_category_errors
    from ..errors import ConfigErrors

    try:
        config = ctx.config
    except ConfigError as e:  # every mistake in one run: the categories too, though it does not load
        from ..config import find_config

        more = unloaded_category_errors(find_config(ctx.config_path))
        if more:
            raise ConfigErrors([*(e.errors if isinstance(e, ConfigErrors) else [e]), *more]) from e
        raise
    problems, summary = check_config(config)
    for p in problems:
        click.echo(f"watcher: {p}", err=True)
    if problems:
        sys.exit(2)
    from .check import followed_notes, idle_notes, optional_secret_notes, placeholder_lines, source_url_lines
    from ..present.links import link_notes
    from ..services.ratings import orphan_notes

    notes = orphan_notes(ctx.config) + link_notes(ctx.config)  # reads the database: may fail (exit 1)
    notes += optional_secret_notes(ctx.config).values()
    notes += followed_notes(ctx.config) + idle_notes(ctx.config) + placeholder_lines(ctx.config)[1]
    click.echo(summary)
    for note in source_url_lines(ctx.config) + notes:
        click.echo(note)


@cli.command()
@click.option("--sample", is_flag=True, help=SAMPLE_HELP)
@pass_ctx
@handle_errors
def status(ctx: Context, sample) -> None:
    """Show sources (last fetch, errors, counts) and digests (last run, next fire, deliveries)."""
    from ..cycle.status import status_text

    click.echo(status_text(reading_config(ctx, sample), now_utc()))


@cli.command()
@click.argument("paper", required=False)
@click.option("--profile", metavar="NAME", help="The profile to score against (default: every profile).")
@click.option("--sample", is_flag=True, help=SAMPLE_HELP)
@pass_ctx
@handle_errors
def explain(ctx: Context, paper, profile, sample) -> None:
    """The score of one stored paper (arXiv id or title) and the reasons, per profile, computed
    now, then the messages that delivered it with the score and reasons recorded then; without
    PAPER, the papers of the last 30 days that each profile's ratings added or removed, each
    with the rating that decided it, after what the ratings' check on themselves found."""
    from ..matching.compile import compile_profile, explain_paper, what_ratings_changed
    from ..store import Store, require_database

    config = reading_config(ctx, sample)
    if profile is not None and profile not in config.profiles:
        raise ConfigError(unknown_name("profile", profile, config.profiles), path=str(config.path))
    names = [profile] if profile is not None else list(config.profiles)
    require_database(config.settings.database)
    with Store.open(config.settings.database) as store:
        if paper is None:
            blocks = []
            for name in names:
                rated = compile_profile(config, name, store)
                blocks.append(ratings_changed_text(name, *what_ratings_changed(config, name, store, rated=rated),
                                                   sum(map(len, store.rated_papers(name))),
                                                   rated.feedback.checked() if rated.feedback else []))
        else:
            found = store.find(paper)
            if found is None:
                from ..services.ratings import suggestions

                raise InputError(f"{paper}: no such paper in {config.settings.database}"
                                 f"{suggestions(store, paper)}{sample_hint(ctx, config)}")
            explained = [(name, *explain_paper(config, name, store, found)) for name in names]
            every = store.paper_messages(found.key)
            sent = [r for r in every if profile is None or r.profile == profile]
            elsewhere = sorted({r.profile or "-" for r in every} - {r.profile or "-" for r in sent})
    if paper is None:
        click.echo("\n".join(blocks))
        return
    from ..identity import describe_origins

    click.echo(f"{found.title}")
    click.echo(f"{found.abs_url or found.key}")
    if origins := describe_origins(found):
        click.echo(f"read from: {origins}")
    for name, m, selected, without in explained:
        click.echo(f"profile {name}: score {m.score:.2f} ({'selected' if selected else 'not selected'}), "
                   "computed now with the profile and its ratings as they are")
        for reason in m.reasons:
            click.echo(f"  - {reason}")
        if without is not None:
            click.echo(f"  (without the ratings: {'selected' if without else 'not selected'})")
    click.echo("\n".join(delivery_record_text(sent, profile, elsewhere, config.settings.timezone)))


def delivery_record_text(sent: list, profile: str | None = None, elsewhere=(), tz=timezone.utc) -> list[str]:
    """``watcher explain PAPER``: the messages that delivered the paper (docs/record.md), each with
    when and where it went and the score and reasons recorded then
    (:meth:`~watcher.store.Store.paper_messages`); with ``--profile``, those under it, and
    the other profiles it was delivered under (``elsewhere``) are named. Times in ``tz`` (the
    config's), as ``watcher status`` and the web show them."""
    from ..store.rows import local

    if not sent:
        if profile is None:
            return ["delivered: never"]
        return [f"delivered under profile {profile}: never" + (
            f" (delivered under {', '.join(elsewhere)}: 'watcher explain' without --profile lists it)"
            if elsewhere else "")]
    lines = ["delivered (as recorded when sent):"]
    for r in sent:
        number = f" message {r.number}" if r.number > 1 else ""
        version = f"version {r.version}, " if r.version else ""
        score = f", score {r.score:.2f}" if r.score is not None else ""
        what = "" if r.kind == "new" else f" ({r.kind})"
        lines.append(f"  {local(r.sent_at, tz) if r.sent_at else ''}: digest {r.digest} of {r.day} via {r.channel}"
                     f"{number}{what}: {version}profile {r.profile or '-'}{score}")
        lines.extend(f"    - {reason}" for reason in r.reasons)
    return lines


def ratings_changed_text(profile: str, start, end, changed, rated: int, checked=()) -> str:
    """``watcher explain --profile NAME``: what the ratings added and removed, one line each,
    after what the ratings' check on themselves found (``checked``, one ``why:`` line each)."""
    from ..formats.text import one_line
    from ..util.text import plural

    added = sum(1 for c in changed if c.added)
    head = (f"profile {profile}: {plural(rated, 'rating')}; over {start} to {end}"
            f" they added {plural(added, 'paper')} and removed {len(changed) - added}, besides the rated papers")
    lines = [head, *(f"  why: {why}" for why in checked)]
    for c in changed:
        paper = c.match.paper
        named = paper.arxiv_id or paper.doi  # what `watcher explain` takes; else the title alone
        lines.append(f"  {'+ added  ' if c.added else '- removed'} {named + '  ' if named else ''}"
                     f"{one_line(paper.title)}  ({c.rating})")
    return "\n".join(lines)


@cli.command()
@click.option("--listen", metavar="HOST:PORT",
              help="Address to listen on (default: [web].listen, else 127.0.0.1:8080).")
@click.option("--sample", is_flag=True,
              help="Serve the sample database of 'watcher once --sample' (the default when only "
                   "that one exists).")
@pass_ctx
@handle_errors
def serve(ctx: Context, listen, sample) -> None:
    """The web inbox: read, search and revisit every digest in a browser.

    Prints the URL to open. Loopback only unless [web].password_env is set (then it asks for
    that password). Reads the config again when the file changes, and on SIGHUP. Stops on
    Ctrl-C / SIGTERM.
    """
    from ..web.serve import serve as run_server

    if log.getEffectiveLevel() > logging.INFO:
        log.setLevel(logging.INFO)
    # the config as the file says: serve picks the database (the sample's when asked or when
    # only it exists) and tells a later edit of the file's database from that choice
    sys.exit(run_server(ctx.config, listen, sample, echo=lambda s: click.echo(s)))


@cli.command("test-deliver")
@click.argument("channel")
@pass_ctx
@handle_errors
def test_deliver(ctx: Context, channel) -> None:
    """Send a small sample digest through one channel."""
    from .testdeliver import send_test_digest

    config = ctx.config
    if channel not in config.channels:
        raise ConfigError(unknown_name("channel", channel, config.channels), path=str(config.path))
    files = send_test_digest(config, channel, now_utc())
    where = f": wrote {', '.join(str(f) for f in files)}" if files else ""
    click.echo(f"sent a test digest through channel {channel}{where}")
    from ..present.links import link_notes, links_for, links_missing

    # its papers are the shipped samples, never stored here: no rating link could be recorded
    if not getattr(config.channels[channel].options, "writes_formats", False):  # file, stdout: no links
        if links_for(config) is not None:
            click.echo("  (its papers are samples, not in your database, so it has no rating links; "
                       "your digests have them)")
        else:
            for note in [n for n in link_notes(config) if f": channel.{channel} (" in n] + [links_missing(config)]:
                if note:
                    click.echo(note)


for command in (cli_init.init, cli_init.state, cli_init.site,
                cli_ratings.rate, cli_ratings.ratings, cli_ratings.saved):
    cli.add_command(command)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="watcher")


if __name__ == "__main__":
    main()
