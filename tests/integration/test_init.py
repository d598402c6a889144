"""``watcher init [DIR]``: a starter config written in an empty folder outside the repository,
as a user who installed watcher with pip or pipx (no clone, no config.toml) starts."""

from __future__ import annotations

import bz2
import gzip
import os
import re
import sqlite3
import tomllib

import pytest

from conftest import REPO
from helpers import run_cli
from watcher.cli.init_files import scheduled_config, shipped_config_path, starter_config


def test_init_writes_the_starter_config_that_check_accepts_and_the_sample_runs_on(tmp_path):
    r = run_cli("init", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    written = tmp_path / "config.toml"
    assert written.read_text() == (REPO / "config.toml").read_text()  # the shipped example, comments and all
    assert "wrote config.toml" in r.stdout.decode() and "watcher once --sample" in r.stdout.decode()
    check = run_cli("check", cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert b"OK" in check.stdout
    once = run_cli("once", "--sample", cwd=tmp_path)
    assert once.returncode == 0, once.stderr
    assert (tmp_path / "digests" / "daily-2025-04-12.txt").exists()


def test_init_into_a_new_folder(tmp_path):
    r = run_cli("init", "my/papers", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "my" / "papers" / "config.toml").is_file()
    assert "cd my/papers && watcher once --sample" in r.stdout.decode()
    assert run_cli("--config", "my/papers/config.toml", "check", cwd=tmp_path).returncode == 0


def test_init_never_overwrites_without_force(tmp_path):
    (tmp_path / "config.toml").write_text("# mine\n")
    r = run_cli("init", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.decode() == "watcher: config.toml already exists; pass --force to overwrite\n"
    assert (tmp_path / "config.toml").read_text() == "# mine\n"
    r = run_cli("init", "--force", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "config.toml").read_text() == starter_config()


def test_init_github_writes_nothing_when_any_file_exists(tmp_path):
    (tmp_path / "README.md").write_text("my repository\n")
    r = run_cli("init", "--github", cwd=tmp_path)
    assert r.returncode == 2
    assert b"README.md already exists; pass --force" in r.stderr and b"Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]  # not half a repository


@pytest.mark.slow  # a git workflow: init, add, commit and status in the folder init --github wrote
def test_init_github_ignores_what_its_readme_makes_in_the_folder(tmp_path):
    """The README sets up .venv and restores watcher.db in the clone: `git add -A` must commit
    neither (QA); the wheel the workflow installs is committed."""
    import subprocess

    assert run_cli("init", "--github", cwd=tmp_path).returncode == 0
    ignored = (tmp_path / ".gitignore").read_text().splitlines()
    assert {".venv/", "watcher.db*", "_site/"} <= set(ignored)
    assert not any(line.startswith("wheels") for line in ignored)

    def git(*args: str) -> str:
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@x"}
        return subprocess.run(["git", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              check=True).stdout

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "init")
    # what the README has a user run in the clone leaves nothing to commit: databases, their
    # journals and lock files, the state file, the static site
    run_cli("once", "--sample", cwd=tmp_path)  # its mail channel fails here (no SMTP password)
    (tmp_path / "watcher-sample.db").rename(tmp_path / "watcher.db")
    for args in (("rate", "up", "2504.07491", "--profile", "llm-rl"), ("state", "save", "s.db.gz"),
                 ("site", "_site")):
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == 0, (args, r.stderr)
    assert any(p.name.endswith(".lock") for p in tmp_path.iterdir())
    assert git("status", "--porcelain") == ""


def test_init_into_a_file_is_a_one_line_error(tmp_path):
    (tmp_path / "f").write_text("x")
    r = run_cli("init", "f", cwd=tmp_path)
    assert r.returncode == 2
    assert len(r.stderr.decode().strip().splitlines()) == 1 and b"Traceback" not in r.stderr


def test_the_wheel_ships_the_starter_config():
    # pip and pipx install the wheel: the starter config must be inside the package
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    force = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force["config.toml"] == "watcher/data/config.toml"
    assert shipped_config_path().read_text() == (REPO / "config.toml").read_text()


def test_the_github_config_delivers_by_mail_after_each_announcement(tmp_path):
    config = tomllib.loads(scheduled_config(starter_config()))
    assert config["digest"]["daily"]["schedule"] == "arxiv"
    assert config["digest"]["daily"]["channels"] == ["mail"]
    mail = config["channel"]["mail"]
    assert mail["type"] == "email" and mail["password_env"] == "WATCHER_SMTP_PASSWORD"
    assert "password" not in mail


def test_init_github_config_passes_check_once_its_secret_is_set(tmp_path):
    r = run_cli("init", "--github", "repo", cwd=tmp_path)
    assert r.returncode == 0
    repo = tmp_path / "repo"
    # the command the last line says to run next works as written (its stand-in secret set)
    step = r.stdout.decode().splitlines()[-1].split("then cd repo && ", 1)[1].split(" (", 1)[0]
    *assignments, command, verb = step.split()
    assert [command, verb] == ["watcher", "check"] and assignments == ["WATCHER_SMTP_PASSWORD=x"]
    unedited = run_cli(verb, cwd=repo, env=dict(a.split("=", 1) for a in assignments))
    assert unedited.returncode == 2 and b"placeholder" in unedited.stderr  # "edit config.toml" first
    config = repo / "config.toml"
    config.write_text(config.read_text().replace("example.org", "mylab.net"))  # the edit it asks for
    told = run_cli(verb, cwd=repo, env=dict(a.split("=", 1) for a in assignments))
    assert told.returncode == 0, told.stderr
    unset = run_cli("check", cwd=repo, env={"WATCHER_SMTP_PASSWORD": ""})
    assert unset.returncode == 2 and b"WATCHER_SMTP_PASSWORD is empty" in unset.stderr
    ok = run_cli("check", cwd=repo, env={"WATCHER_SMTP_PASSWORD": "x"})
    assert ok.returncode == 0, ok.stderr
    readme = (repo / "README.md").read_text()
    assert "WATCHER_SMTP_PASSWORD" in readme and "Run workflow" in readme and "@" not in readme.replace(
        "me@example.org", "")


def test_state_save_and_restore_round_trip(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    assert run_cli("once", "--sample", cwd=tmp_path).returncode == 0
    cfg = ["--config", "config.toml"]
    (tmp_path / "sample.toml").write_text(
        (tmp_path / "config.toml").read_text().replace('database = "watcher.db"', 'database = "watcher-sample.db"'))
    saved = run_cli("--config", "sample.toml", "state", "save", "state/db.gz", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    with sqlite3.connect(tmp_path / "watcher-sample.db") as conn:
        ledger = conn.execute("SELECT digest, channel, paper FROM deliveries ORDER BY 3").fetchall()
    assert len(ledger) == 30
    assert bz2.decompress((tmp_path / "state" / "db.gz").read_bytes()).startswith(b"SQLite format 3\0")

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "config.toml").write_text((tmp_path / "config.toml").read_text())
    r = run_cli(*cfg, "state", "restore", "../state/db.gz", cwd=fresh)
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(fresh / "watcher.db") as conn:
        assert conn.execute("SELECT digest, channel, paper FROM deliveries ORDER BY 3").fetchall() == ledger
    again = run_cli(*cfg, "state", "restore", "../state/db.gz", cwd=fresh)
    assert again.returncode == 2 and b"already exists; pass --force" in again.stderr


def test_state_restore_without_a_file_says_it_starts_afresh(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    r = run_cli("state", "restore", "nothing.gz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == ("no saved state (nothing.gz does not exist): starting afresh; each "
                                 "digest's first run reaches back its lookback (daily 3 days)\n")
    assert not (tmp_path / "watcher.db").exists()


def test_state_restore_refuses_a_file_that_is_no_database(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    (tmp_path / "bad.gz").write_bytes(gzip.compress(b"not a database at all" * 100))
    r = run_cli("state", "restore", "bad.gz", cwd=tmp_path)
    assert r.returncode == 2 and b"not a saved watcher database" in r.stderr
    assert not (tmp_path / "watcher.db").exists()
    assert r.stderr.count(b"\n") == 1


def test_a_folder_that_cannot_be_written_is_one_line_and_exit_2(tmp_path):
    """A path through a regular file (NotADirectoryError: what a read-only folder is to root,
    whom chmod never stops) is the user's to fix: one line naming it, exit 2, no 'bug'."""
    (tmp_path / "README.md").write_text("mine\n")
    for args in (("init", "README.md/sub"), ("init", "--github", "README.md/sub")):
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.decode() == "watcher: cannot write README.md/sub: not a directory\n"
    assert run_cli("init", "p", cwd=tmp_path).returncode == 0
    assert run_cli("once", "--sample", cwd=tmp_path / "p").returncode == 0
    r = run_cli("site", "../README.md/site", "--sample", cwd=tmp_path / "p")
    assert r.returncode == 2 and r.stderr.decode().endswith(
        "watcher: cannot write ../README.md/site: not a directory\n"), r.stderr
    assert b"bug" not in r.stderr and (tmp_path / "README.md").read_text() == "mine\n"


def test_a_full_disk_or_output_is_one_line_and_exit_1(tmp_path):
    """``> /dev/full``: the output cannot be written (ENOSPC), a failure of the run, not a bug."""
    import subprocess
    import sys

    assert run_cli("init", cwd=tmp_path).returncode == 0
    assert run_cli("once", "--sample", cwd=tmp_path).returncode == 0
    for args in (("status", "--sample"), ("init", "--help"), ("init", "--force")):
        with open("/dev/full", "wb") as full:
            r = subprocess.run([sys.executable, "-m", "watcher", *args], cwd=tmp_path, stdout=full,
                               stderr=subprocess.PIPE, env={**__import__("os").environ,
                                                            "PYTHONPATH": str(REPO)}, timeout=60)
        assert r.returncode == 1, (args, r.stderr)
        assert r.stderr.decode().splitlines()[-1] == \
            "watcher: cannot write the output: no space left on device", (args, r.stderr)
        assert b"bug" not in r.stderr and b"Traceback" not in r.stderr and b"Exception" not in r.stderr


def test_github_and_gitlab_together_is_a_usage_error(tmp_path):
    r = run_cli("init", "--github", "--gitlab", "repo", cwd=tmp_path)
    assert r.returncode == 2
    assert b"--github and --gitlab cannot be used together" in r.stderr
    assert not (tmp_path / "repo").exists()
    assert run_cli("init", "--gitlab", "repo", cwd=tmp_path).returncode == 0
    assert (tmp_path / "repo" / ".gitlab-ci.yml").is_file()


def test_a_read_only_file_system_is_the_users_to_fix(capsys):
    """EROFS (root is stopped by a read-only mount, not by chmod): the same one line, exit 2."""
    import errno

    import pytest

    from watcher.cli import write_failed

    with pytest.raises(SystemExit) as stop:
        write_failed(OSError(errno.EROFS, "Read-only file system", "/tmp/ro/config.toml"))
    assert stop.value.code == 2
    assert capsys.readouterr().err == "watcher: cannot write /tmp/ro/config.toml: read-only file system\n"


# --- installing without a package index (issue: the docs said `pip install watcher-papers`) ---

def invoke(*args, cwd):
    """``watcher ARGS`` in this process (click's runner), in folder ``cwd``."""
    import os

    from click.testing import CliRunner

    from watcher.cli import cli

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, list(args), prog_name="watcher", catch_exceptions=False)
    finally:
        os.chdir(old)


def test_no_install_line_points_at_a_package_index_that_lacks_watcher(tmp_path):
    """README, the starter config's header and what `init --github/--gitlab` write say how to
    install watcher from a clone, a wheel or a git URL, never `pip install watcher-papers`."""
    header = "".join(line for line in starter_config().splitlines(True) if line.startswith("#"))
    assert "pip install 'git+URL'" in header and "pip wheel --no-deps" in header and "pypi.org" not in header
    texts = {"README.md": (REPO / "README.md").read_text(), "config.toml": starter_config()}
    for kind in ("github", "gitlab"):
        assert invoke("init", f"--{kind}", kind, cwd=tmp_path).exit_code == 0
        texts.update({f"{kind}/{p.relative_to(tmp_path / kind)}": p.read_text()
                      for p in (tmp_path / kind).rglob("*") if p.is_file() and p.suffix != ".whl"})
    for name, text in texts.items():
        flat = " ".join(text.split())
        assert not re.search(r"pip[x]? install '?watcher-papers", flat), name
        assert "pypi.org/project/watcher-papers" not in flat, name


def test_the_wheel_init_writes_is_the_running_watcher_and_always_the_same_bytes(tmp_path):
    import zipfile

    from watcher import __version__
    from watcher.cli.wheel import build_wheel, wheel_name

    assert invoke("init", "--github", "repo", cwd=tmp_path).exit_code == 0
    wheel = tmp_path / "repo" / "wheels" / wheel_name()
    assert wheel.read_bytes() == build_wheel()  # no time stamps: a second init changes nothing
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = f"watcher_papers-{__version__}.dist-info"
        assert {f"{info}/METADATA", f"{info}/RECORD", f"{info}/WHEEL", "watcher/cli/__init__.py",
                "watcher/templates/digest.html", "watcher/data/config.toml"} <= names
        assert zf.read("watcher/data/config.toml").decode() == starter_config()
        assert "watcher = watcher.cli:main" in zf.read(f"{info}/entry_points.txt").decode()
        record = zf.read(f"{info}/RECORD").decode().splitlines()
        assert len(record) == len(names) and not any("__pycache__" in n for n in names)


def test_init_names_every_file_that_exists_with_the_verb_agreeing(tmp_path):
    (tmp_path / "README.md").write_text("mine\n")
    one = invoke("init", "--github", cwd=tmp_path)
    assert one.exit_code == 2 and "watcher: README.md already exists; pass --force" in one.output
    (tmp_path / "config.toml").write_text("# mine\n")
    two = invoke("init", "--github", cwd=tmp_path)
    assert two.exit_code == 2 and "config.toml, README.md already exist; pass --force" in two.output


def test_state_save_before_any_run_says_there_is_nothing_yet(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    r = run_cli("state", "save", "state.gz", cwd=tmp_path)
    assert r.returncode == 0 and not (tmp_path / "state.gz").exists()
    assert r.stdout.decode().endswith("watcher.db to save yet: no run has created it (nothing saved)\n")
