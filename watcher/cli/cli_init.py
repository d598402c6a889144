"""No server of one's own (docs/github-actions.md): ``watcher init``, ``watcher state save|restore``,
``watcher site``.

Registered on the ``watcher`` group by :mod:`watcher.cli`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .clikit import SAMPLE_HELP, Context, handle_errors, pass_ctx, reading_config
from ..util.text import plural


@click.command()
@click.argument("folder", default=".", metavar="[DIR]", type=click.Path(path_type=Path))
@click.option("--github", "github", is_flag=True,
              help="Also a GitHub Actions workflow (daily, the database kept on a branch) and a "
                   "README for the repository.")
@click.option("--gitlab", "gitlab", is_flag=True,
              help="Also a .gitlab-ci.yml (run by a daily pipeline schedule, the database kept on "
                   "a branch) and a README for the repository.")
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
@click.option("--cite", "cites", multiple=True, metavar="ID",
              help="Alert on new works citing this work (a DOI, arxiv:ID, pmid:ID or OpenAlex W… id); "
                   "repeatable. See docs/openalex.md.")
@click.option("--orcid", metavar="ORCID",
              help="Alert on new works citing any work OpenAlex lists for this ORCID (listed once, now).")
@click.option("--mailto", metavar="EMAIL", help="Your address for OpenAlex's polite pool (with --cite/--orcid).")
@click.option("--openalex-url", metavar="URL", help="The OpenAlex API to list the works from and to ask every run: the citation "
                   "source's url (default https://api.openalex.org).")
@handle_errors
def init(folder: Path, github, gitlab, force, cites, orcid, mailto, openalex_url) -> None:
    """Write a commented starter config.toml into DIR (default: here).

    The starter holds a commented e-mail channel and [web] (the links in e-mails); init
    prints the next three steps.

    With --github, a repository that runs watcher daily on GitHub Actions with no server of
    your own: the config (delivering by e-mail), .github/workflows/watcher.yml, a README
    saying which secrets to set, and the wheel of this watcher (wheels/), which the workflow
    installs (no package index needs to carry watcher) with its dependencies at the versions
    installed here (wheels/constraints.txt). With --gitlab, the same for GitLab CI
    (.gitlab-ci.yml).
    Refuses to overwrite an existing file unless --force. --github and --gitlab exclude
    each other.

    With --cite (repeatable) or --orcid, the config also alerts on new works citing those
    works, or every work of that ORCID (from OpenAlex): a source "citations", a profile
    "cited" (query cites:*) and a daily digest "citations".
    """
    from .init_files import files_for, write_files

    if github and gitlab:
        raise click.UsageError("--github and --gitlab cannot be used together: choose the CI "
                               "that runs the repository")
    kind = "github" if github else "gitlab" if gitlab else None

    if (mailto or openalex_url) and not (cites or orcid):
        raise click.UsageError("--mailto and --openalex-url go with --cite or --orcid (the citation "
                               "alert they configure)")
    files = files_for(kind)
    if cites or orcid:  # "alert me when my papers are cited" (docs/openalex.md)
        from .init_citations import citations_config, seed
        from ..models import now_utc

        followed = seed(cites, orcid, mailto=mailto, url=openalex_url, now=now_utc(),
                        user_agent=f"watcher (mailto:{mailto})" if mailto else "watcher")
        files["config.toml"] = citations_config(files["config.toml"], followed, mailto=mailto,
                                                   url=openalex_url)
        click.echo(f"following {plural(len(followed), 'work')} for new citations")
    written = write_files(folder, files, force)
    for path in written:
        click.echo(f"wrote {path}")
    where = "" if folder == Path(".") else f"cd {folder} && "
    if kind:  # the secrets are the CI's: a local check gets stand-ins, as the README's command does
        from ..config import load_config

        names = dict.fromkeys(load_config(folder / "config.toml").secret_vars().values())
        stand_ins = "".join(f"{name}=x " for name in names)
        click.echo(f"next: read {folder / 'README.md'}, edit config.toml, then {where}{stand_ins}watcher check"
                   + (" (stand-in secrets: the real ones are the repository's)" if names else ""))
    elif cites or orcid:  # the sample has no citations: the first real run is the next step
        click.echo(f"next: {where}watcher check, then watcher once (the citations digest); "
                   "see docs/openalex.md")
    else:
        click.echo("next:\n"
                   f"  1. {where}watcher once --sample    # a digest from the shipped sample, no network\n"
                   "  2. edit config.toml: your [profile.*] query (preview it: watcher serve, then the "
                   "profile's page); uncomment [channel.mail] and [web], add \"mail\" to the digest's channels\n"
                   "  3. export WATCHER_SMTP_PASSWORD=... WATCHER_SECRET=...; watcher check && "
                   "watcher test-deliver mail && watcher once")


@click.group()
def state() -> None:
    """Keep the database between runs that have no disk of their own (a CI job).

    `save FILE` writes a consistent compressed copy of the database; `restore FILE` puts it back.
    With --git-branch, FILE also goes to / comes from that branch of a git remote: one file,
    one commit per save, the working tree untouched.
    """


def git_branch(what: str):
    """The --git-branch option, its help saying what the command does with the branch."""
    return click.option("--git-branch", metavar="BRANCH", help=f"Also {what} this branch (e.g. watcher-state).")
GIT_REMOTE = click.option("--git-remote", metavar="REMOTE", default="origin", show_default=True,
                          help="The git remote (a name or URL) of --git-branch.")


@state.command("save")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--with-ratings/--without-ratings", default=None,
              help="Keep the ratings and the saved list in FILE too, or leave them out; by default "
                   "as the config's [watcher] state_ratings says (false: left out, since on a public "
                   "repository's branch anyone can read them).")
@git_branch("push FILE to")
@GIT_REMOTE
@pass_ctx
@handle_errors
def state_save(ctx: Context, file: Path, with_ratings, git_branch, git_remote) -> None:
    """Write a compressed copy of the database to FILE (nothing when there is no database yet): the
    papers, the ledger and the sources' state; never the web password's fingerprint or the
    stored errors, and the ratings and saved list only with [watcher] state_ratings = true in
    the config (or --with-ratings)."""
    from datetime import timedelta

    from .statefile import save

    db = ctx.config.settings.database
    if git_branch:  # a remote or branch git would read as an option: refused before anything
        from .statebranch import check_names

        check_names(git_remote, git_branch, Path.cwd())
    keep = ctx.config.settings.state_ratings if with_ratings is None else with_ratings
    lookback = max((d.lookback for d in ctx.config.digests.values()), default=timedelta(days=3))
    left_out = save(db, file, keep_ratings=keep, lookback=lookback)
    if left_out is None:
        click.echo(f"no database {db} to save yet: no run has created it (nothing saved)")
        return
    click.echo(f"saved {db} to {file} ({file.stat().st_size} bytes)")
    if any(left_out):
        ratings, saved = left_out
        click.echo(f"left out of it: {ratings} rating{'s' * (ratings != 1)} and {saved} saved "
                   f"paper{'s' * (saved != 1)} (set state_ratings = true under [watcher] in "
                   f"{ctx.config.path.name}, or pass --with-ratings, to keep them)")
    if git_branch:
        from datetime import datetime, timezone

        from .statebranch import push

        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        commit = push(git_remote, git_branch, file, f"watcher state saved {stamp}", Path.cwd())
        click.echo(f"committed it to branch {git_branch} ({commit[:12]})" if commit
                   else f"the database did not change: branch {git_branch} kept as it was")


@state.command("restore")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--force", is_flag=True, help="Replace an existing database.")
@git_branch("fetch FILE from")
@GIT_REMOTE
@pass_ctx
@handle_errors
def state_restore(ctx: Context, file: Path, force, git_branch, git_remote) -> None:
    """Put the database saved in FILE back; when there is no FILE (or no --git-branch yet),
    say that this run starts afresh."""
    from .statefile import restore

    config = ctx.config
    db = config.settings.database
    fetched = True
    if git_branch:
        from .statebranch import fetch

        fetched = fetch(git_remote, git_branch, file, Path.cwd())
    # without the branch, never an older FILE lying about: the branch is the state
    if fetched and restore(file, db, force):
        click.echo(f"restored {db} from {file}" + (f" (branch {git_branch})" if git_branch else ""))
        return
    missing = f"{file} does not exist" if fetched else f"no branch {git_branch} on the remote yet"
    from ..util.progress import duration

    def span(d):
        days, rest = divmod(d.lookback.total_seconds(), 86400)
        return plural(int(days), "day") if days and not rest else duration(d.lookback.total_seconds())

    reach = ", ".join(f"{name} {span(d)}" for name, d in config.digests.items())
    click.echo(f"no saved state ({missing}): starting afresh; each digest's first "
               f"run reaches back its lookback ({reach or 'no digests'})")


@click.command()
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--sample", is_flag=True, help=SAMPLE_HELP)
@pass_ctx
@handle_errors
def site(ctx: Context, folder: Path, sample) -> None:
    """Write the web inbox as static files into DIR: inbox, digests, papers, profiles, feeds,
    the saved list with its BibTeX and a search that runs in the browser.

    Links are relative, so DIR opens from file:// or any static host (GitHub Pages). No rating
    buttons (there is no server to record them) and none of your ratings (the site is meant
    to be published). DIR must be new, empty or an earlier site.
    """
    from .site import build_site
    from ..store import require_database

    config = reading_config(ctx, sample)
    require_database(config.settings.database)
    report = build_site(config, folder)
    for page, link, status in report.broken:
        click.echo(f"watcher: broken link on {page}: {link} answered {status}", err=True)
    click.echo(f"wrote {plural(report.pages, 'page')}, {plural(report.files, 'other file')} and a search "
               f"index of {plural(report.papers, 'paper')} to {folder}; open {folder / 'index.html'}")
    sys.exit(1 if report.broken else 0)
