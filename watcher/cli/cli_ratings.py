"""The rating commands (docs/ratings.md): ``watcher rate``, ``watcher ratings``, ``watcher saved``.

Registered on the ``watcher`` group by :mod:`watcher.cli`. Every change goes through
:func:`watcher.services.ratings.apply_rating`, as the web inbox's buttons and the digests' links do.
"""

from __future__ import annotations

import json

import click

from .clikit import SAMPLE_HELP, Context, handle_errors, pass_ctx, reading_config, sample_hint
from ..config import unknown_name
from ..errors import ConfigError, RatingError
from ..models import now_utc
from ..services.ratings import ACTIONS, PROFILE_ACTIONS


@click.command()
@click.argument("action", type=click.Choice(ACTIONS))
@click.argument("papers", nargs=-1, required=True, metavar="PAPER...")
@click.option("--profile", metavar="NAME",
              help="The profile the rating is for (up/down/clear; needed when a paper belongs to several).")
@click.option("--sample", is_flag=True, help=SAMPLE_HELP)
@pass_ctx
@handle_errors
def rate(ctx: Context, action, papers, profile, sample) -> None:
    """Rate stored papers (arXiv ids or titles): up, down, clear (per profile), save, unsave
    (the reading list; save also adds the paper to a profile's save_to_zotero collection). Up-rated papers teach their profile "more like this", down-rated ones
    "not this". Nothing is recorded unless every paper and the profile are known; clear also
    takes a profile no longer in the config that still has ratings."""
    from ..models import unique_papers
    from ..services.ratings import apply_rating, current, find_paper, owners_of
    from ..store import Store, require_database

    from ..services.ratings import ratings as all_ratings

    config = reading_config(ctx, sample)
    require_database(config.settings.database)
    with Store.open(config.settings.database) as store:
        known = list(config.profiles)
        if action == "clear" and profile is not None and profile not in known and all_ratings(store, profile):
            known.append(profile)  # a removed profile's ratings (check lists them) can be cleared
        if profile is not None and profile not in known:
            raise RatingError(unknown_name("profile", profile, config.profiles))
        # all checked before anything is recorded; a paper named twice (by id and title) is rated once
        try:
            found = unique_papers(find_paper(store, text) for text in papers)
        except RatingError as e:
            raise RatingError(f"{e}{sample_hint(ctx, config)}") from None
        owners: dict[str, list[str]] = {}
        if action in PROFILE_ACTIONS and profile is None:
            if action == "clear":  # the profiles that hold a rating of the paper
                rated, _ = current(store, [p.key for p in found])
                owners = {p.key: held for p in found if (held := sorted(n for n, k in rated if k == p.key))}
            rest = [p for p in found if p.key not in owners]
            if rest:  # one batch for all of them, each profile compiled with its ratings
                owners |= owners_of(config, store, rest)
        plan = [(None if action not in PROFILE_ACTIONS else profile or _profile_of(config, paper, owners[paper.key]),
                 paper.key) for paper in found]
        now = now_utc()
        with store.writing():  # all or nothing, waiting for another writer's lock
            done = [apply_rating(store, action, name, key, "cli", profiles=known, now=now)
                    for name, key in plan]
    for applied in done:
        click.echo(str(applied))
    if action == "save":  # Save also adds the paper to Zotero (docs/zotero.md); queued when it cannot
        from ..zotero.sync import after_save

        with Store.open(config.settings.database) as store:
            note = after_save(config, store, now)
        if note:
            click.echo(note)


def _profile_of(config, paper, owners: list[str]) -> str:
    """The one profile ``paper`` belongs to (``owners``: :func:`watcher.services.ratings.owners_of`'s
    answer for it: the only profile, else the profiles it was delivered under, else the
    profiles that select it now); several or none: a RatingError."""
    names = list(config.profiles)
    if len(owners) == 1:
        return owners[0]
    label = paper.arxiv_id or paper.title
    if owners:
        raise RatingError(f"{label} belongs to several profiles ({', '.join(owners)}): "
                          "say which with --profile")
    raise RatingError(f"{label} belongs to no profile yet: say which with --profile "
                      f"({', '.join(names)})")


@click.command()
@click.option("--profile", metavar="NAME", help="Only this profile's ratings.")
@click.option("--to", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: one rating a line; json: one array.")
@click.option("--sample", is_flag=True, help=SAMPLE_HELP)
@pass_ctx
@handle_errors
def ratings(ctx: Context, profile, fmt, sample) -> None:
    """Every rating: paper, profile, value, when, from where (for backup and scripts).
    Ratings of profiles no longer in the config are listed too."""
    from ..services.ratings import ratings as all_ratings
    from ..store import Store, require_database

    config = reading_config(ctx, sample)
    require_database(config.settings.database)
    with Store.open(config.settings.database) as store:
        rows = all_ratings(store, profile)
        if profile is not None and profile not in config.profiles and not rows:
            raise ConfigError(unknown_name("profile", profile, config.profiles) + " and no ratings for it",
                              path=str(config.path))
    if fmt == "json":
        click.echo(json.dumps([r.to_json() for r in rows], ensure_ascii=False, indent=2))
        return
    from ..formats.text import one_line
    from ..store import local_text

    if not rows:  # said on stderr: stdout stays the (empty) list for a script
        whose = f" for profile {profile}" if profile else ""
        click.echo(f"no ratings yet{whose} (rate with 'watcher rate up|down PAPER' or a digest's "
                   "rating links)", err=True)
    for r in rows:  # the time in the config's time zone, as status shows times
        gone = "" if r.profile in config.profiles else " (profile no longer in the config)"
        click.echo(f"{local_text(r.rated_at, config.settings.timezone)}  {r.value:<4}  {r.profile}  "
                   f"{r.arxiv_id or r.paper}  {one_line(r.title or '')}  [{r.source}]{gone}")


@click.command()
@click.option("--to", "fmt", type=click.Choice(["text", "json", "bibtex", "markdown"]), default="text",
              show_default=True, help="The format of the list (bibtex: entries for a reference manager).")
@click.option("--sample", is_flag=True, help=SAMPLE_HELP)
@pass_ctx
@handle_errors
def saved(ctx: Context, fmt, sample) -> None:
    """The reading list (papers saved with 'watcher rate save' or from a digest), oldest first;
    --to bibtex writes a .bib for LaTeX and Zotero."""
    from ..services.ratings import export_saved
    from ..services.ratings import saved as saved_papers
    from ..store import Store, require_database

    config = reading_config(ctx, sample)
    require_database(config.settings.database)
    with Store.open(config.settings.database) as store:
        items = saved_papers(store)
    click.echo(export_saved(items, fmt), nl=not fmt == "bibtex")
