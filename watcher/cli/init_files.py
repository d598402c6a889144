"""``watcher init [DIR]``: a starter config, and with ``--github`` or ``--gitlab`` a repository
that runs watcher on a schedule with no server of one's own (docs/github-actions.md).

The starter config is the example config shipped with watcher (``config.toml`` of a checkout,
``watcher/data/config.toml`` in a wheel), so an install without a clone (``pip install`` of a
wheel or a git URL, pipx) can start with ``watcher init`` then ``watcher once --sample``. The
repository files are templates in ``watcher/data/init/``, plus the wheel of the running
watcher (:mod:`watcher.cli.wheel`), which the CI installs: a first run needs no package index that
carries watcher. The scheduled variant's config is that same example with the few edits a
scheduled run needs (:func:`scheduled_config`), never a second copy of it.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import __version__
from ..errors import ConfigError, InputError
from .wheel import DIST_NAME, build_wheel, shipped_config_path, wheel_name

HERE = Path(__file__).resolve().parent.parent
INIT_TEMPLATES = HERE / "data" / "init"
STATE_BRANCH = "watcher-state"
SOURCE_URL = "https://YOUR-GIT-HOST/YOU/watcher"  # a placeholder: the git URL of the clone you keep (watcher has no public home)
CI_FILES = {"github": (".github/workflows/watcher.yml", "github-workflow.yml"),  # kind -> (file, template)
            "gitlab": (".gitlab-ci.yml", "gitlab-ci.yml")}

# The e-mail channel a scheduled run delivers through: the example's commented [channel.mail],
# uncommented, under this note (the password comes from the CI's secrets).
MAIL_NOTE = ("# The digest's e-mail: edit host, username, from and to; the password is the secret\n"
             "# WATCHER_SMTP_PASSWORD of the repository (its README says where to set it).\n")

# (what the example says, what a scheduled run needs): each must be found exactly once.
SCHEDULED_EDITS = (
    ('schedule = "30 21 * * sun-thu"',
     '# "arxiv": due once after each arXiv announcement; the workflow runs daily and\n'
     '# `watcher once --due` delivers only the digests whose schedule fired since their last run.\n'
     'schedule = "arxiv"'),
    ('channels = ["archive"]', 'channels = ["mail"]'),
    ('user_agent = "watcher (mailto:you@example.org)"\n',
     'user_agent = "watcher (mailto:you@example.org)"\n'
     '# Whether the state branch keeps your ratings and saved list (`watcher state save`): set it\n'
     '# to true to rate in a clone between runs (README.md). Anyone who can read the repository\n'
     '# can then read them: leave it false in a public one.\n'
     'state_ratings = false\n'
     '# Papers never delivered, rated or saved are pruned after this long (what was seen stays\n'
     '# known, so a paper listed again is not new): docs/configuration.md.\n'
     'keep = "400d"\n'),
)


def starter_config() -> str:
    """The text of the commented starter config (the shipped example)."""
    return shipped_config_path().read_text(encoding="utf-8")


def scheduled_config(text: str) -> str:
    """The starter config as a scheduled CI run uses it: the digest due after each arXiv
    announcement and delivered by e-mail (the example's ``[channel.mail]``, uncommented)."""
    for old, new in SCHEDULED_EDITS:
        if text.count(old) != 1:
            raise ConfigError(f"the example config no longer holds {old!r} once; "
                              "update watcher.cli.init_files.SCHEDULED_EDITS")
        text = text.replace(old, new)
    return _uncomment_mail(text)


def _uncomment_mail(text: str) -> str:
    """``text`` with the commented ``[channel.mail]`` table of the example made a table, from
    its header to the first bare ``#`` line, under :data:`MAIL_NOTE` instead of the
    paragraph that tells how to uncomment it."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip() == "# [channel.mail]"]
    intro = [i for i, line in enumerate(lines) if line.startswith("# Your digest by e-mail:")]
    if len(starts) != 1 or len(intro) != 1 or intro[0] > starts[0]:
        raise ConfigError("the example config no longer holds its commented [channel.mail] once; "
                          "update watcher.cli.init_files.scheduled_config")
    end = next(i for i in range(starts[0], len(lines)) if lines[i].rstrip() == "#")
    table = [line[2:] for line in lines[starts[0]:end]]
    return "".join(lines[:intro[0]] + [MAIL_NOTE] + table + lines[end:])


def _template(name: str) -> str:
    text = (INIT_TEMPLATES / name).read_text(encoding="utf-8")
    for part in ("STATE", "LINKS"):  # the parts every CI's README shares
        text = text.replace(f"@{part}_README@", (INIT_TEMPLATES / f"README-{part.lower()}.md").read_text(encoding="utf-8"))
    return (text.replace("@VERSION@", __version__).replace("@STATE_BRANCH@", STATE_BRANCH)
            .replace("@WHEEL@", wheel_path()).replace("@SOURCE_URL@", SOURCE_URL)
            .replace("@CONSTRAINTS@", CONSTRAINTS))


def wheel_path() -> str:
    """Where in the repository ``init --github`` / ``--gitlab`` puts the wheel the CI installs."""
    return f"wheels/{wheel_name()}"


CONSTRAINTS = "wheels/constraints.txt"  # the versions of watcher's dependencies the CI installs
INSTALLERS = ("pip", "setuptools", "wheel")  # the CI's own (sqlite-utils asks for pip): never pinned


def pinned_dependencies() -> str:
    """The text of :data:`CONSTRAINTS`: ``name==version`` of every distribution the running
    watcher depends on, directly or not, as installed here (pip itself and a requirement that
    only an extra asks for are left out; one not installed here, e.g. for another Python, is left to pip).
    The CI installs watcher's wheel under these constraints, so a run gets the packages this
    watcher runs with, never whatever release is newest on the day (docs/security-limits.md).
    The versions, not hashes: a hash names one file of the package index, which ``init``
    does not ask."""
    import importlib.metadata
    import re

    def canonical(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    def requirements(dist) -> list[str]:
        return [re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r).group() for r in dist.requires or []
                if not re.search(r"""\bextra\s*==""", r.partition(";")[2])]

    pinned: dict[str, str] = {}
    todo = requirements(importlib.metadata.distribution(DIST_NAME))
    while todo:
        name = canonical(todo.pop())
        if name in pinned or name in (canonical(DIST_NAME), *INSTALLERS):
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        pinned[name] = dist.version
        todo += requirements(dist)
    lines = [f"{name}=={version}\n" for name, version in sorted(pinned.items())]
    return ("# The versions of watcher's dependencies that `watcher init` found installed with the\n"
            "# watcher it ran: the CI installs watcher under these (pip install -c). Write them again\n"
            "# with `watcher init --force` after upgrading, or edit one to take another release.\n"
            + "".join(lines))


def files_for(kind: str | None) -> dict[str, str | bytes]:
    """The files ``watcher init`` writes (relative path -> text, or bytes for the wheel) for
    ``kind``: None (the starter config only), ``"github"`` (a repository run by GitHub
    Actions) or ``"gitlab"`` (by GitLab CI), with a ``.gitignore`` of what the README's steps
    make in the folder (the venv, the database, the site) so that ``git add -A`` commits none."""
    if kind is None:
        return {"config.toml": starter_config()}

    ci_file, template = CI_FILES[kind]
    return {"config.toml": scheduled_config(starter_config()), ci_file: _template(template),
            "README.md": _template(f"{kind}-README.md"), wheel_path(): build_wheel(),
            CONSTRAINTS: pinned_dependencies(),
            ".gitignore": (INIT_TEMPLATES / "gitignore").read_text(encoding="utf-8")}


def write_files(folder: Path, files: dict[str, str | bytes], force: bool = False) -> list[Path]:
    """Write ``files`` under ``folder`` (created when missing). Without ``force`` nothing is
    written when any of them exists (InputError naming them): never half a repository."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder} is not a folder")
    targets = [folder / rel for rel in files]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        verb = "exists" if len(existing) == 1 else "exist"
        raise InputError(f"{', '.join(existing)} already {verb}; pass --force to overwrite")
    for target, text in zip(targets, files.values()):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    return targets
