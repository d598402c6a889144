"""The GitHub Actions workflow of ``watcher init --github``: actionlint accepts it, and its
steps, run in order as the runner runs them, keep the database between runs on the state
branch — a local bare git repository stands in for GitHub, aiosmtpd for the mail server and a
listing file for the sources."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from conftest import SEED_DIGEST
from helpers import run_cli
from deliverkit import MailServer
from watcher import formats

pytestmark = pytest.mark.slow  # runs the generated workflow's steps in git clones: the full suite (CI) runs it, not the inner loop

ACTIONLINT = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
SECRETS = {"WATCHER_SMTP_PASSWORD": "s3cret", "GITHUB_TOKEN": "ghs_t0ken", "WATCHER_STATE_TOKEN": "glpat-t0ken"}
GIT_ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
          "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}


def init_ci(folder: Path, kind: str = "github") -> Path:
    """``watcher init --KIND FOLDER``; the CI file it wrote."""
    r = run_cli("init", f"--{kind}", str(folder))
    assert r.returncode == 0, r.stderr
    return folder / (".github/workflows/watcher.yml" if kind == "github" else ".gitlab-ci.yml")


def init_github(folder: Path) -> Path:
    return init_ci(folder, "github")


def load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


def actionlint(path: Path) -> subprocess.CompletedProcess:
    if not ACTIONLINT:
        pytest.fail("actionlint is not installed: pip install -e '.[test]' installs it")
    return subprocess.run([ACTIONLINT, "-no-color", str(path)], capture_output=True, text=True, timeout=60)


def test_actionlint_accepts_the_workflow_and_would_refuse_a_broken_one(tmp_path):
    workflow = init_github(tmp_path / "repo")
    r = actionlint(workflow)
    assert r.returncode == 0, r.stdout + r.stderr
    broken = tmp_path / "broken.yml"
    broken.write_text(workflow.read_text().replace("steps.restore.outcome", "steps.restor.outcome"))
    assert actionlint(broken).returncode != 0  # the linter really reads it
    if shutil.which("shellcheck"):  # CI installs it: actionlint then checks every `run:` script too
        unquoted = tmp_path / "unquoted.yml"
        unquoted.write_text(workflow.read_text().replace('watcher state save "$STATE_FILE"',
                                                         "watcher state save $STATE_FILE"))
        assert "SC2086" in actionlint(unquoted).stdout


def test_the_workflow_is_scheduled_serial_least_privileged_and_pinned(tmp_path):
    doc = load(init_github(tmp_path / "repo"))
    assert doc["on"]["schedule"][0]["cron"] and "workflow_dispatch" in doc["on"]
    assert doc["concurrency"] == {"group": "watcher", "cancel-in-progress": False}
    assert doc["permissions"] == {}
    job = doc["jobs"]["digest"]
    assert job["permissions"] == {"contents": "write"}
    for step in job["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
        assert "${{" not in step.get("run", ""), "expressions stay out of scripts (injection)"
        for value in step.get("env", {}).values():
            assert "${{" not in value or re.fullmatch(r"\$\{\{ secrets\.[A-Z_]+ \}\}", value)
    runs = [s.get("run", "") for s in job["steps"]]
    assert runs.index("watcher check") < runs.index("watcher once --due")
    save = next(s for s in job["steps"] if s.get("id") == "save")
    assert save["if"].startswith("always()")  # a failed run still saves its ledger
    # the write token: never kept by the checkout, given only to the steps of the state branch
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False
    assert steps_env(job["steps"]) == {  # each step's secrets, and what the token's steps run
        "fetch": {"GITHUB_TOKEN"}, "install": set(), "restore": set(), "Check the config": {"WATCHER_SMTP_PASSWORD"},
        "Deliver the digests that are due": {"WATCHER_SMTP_PASSWORD"}, "save": set(), "push": {"GITHUB_TOKEN"},
        "site": set(), "upload": set()}
    ids = [s.get("id") for s in job["steps"]]
    assert ids.index("fetch") < ids.index("install")  # git reads the branch before anything is installed
    for step in job["steps"]:
        if "GITHUB_TOKEN" in str(step.get("env", {})):  # git alone: the system's, no config of others
            assert step["run"].startswith("# git alone") and not re.search(r"^\s*(watcher|python) ", step["run"], re.M)
            assert "export PATH=/usr/bin:/bin GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null" in step["run"]
            assert "python" not in step["run"] and "pip" not in step["run"]
        else:
            assert "TOKEN" not in step["run"] if "run" in step else True
    install = next(s for s in job["steps"] if s.get("id") == "install")["run"]
    assert "--constraint wheels/constraints.txt" in install
    pages = doc["jobs"]["pages"]  # optional: only with the repository variable
    assert pages["needs"] == "digest" and pages["if"].endswith("vars.WATCHER_PAGES == 'true'")
    # a failed source still publishes the site of what was delivered (the job fails, to say so)
    assert pages["if"].startswith("always() && needs.digest.outputs.site == 'success'")
    built = [s for s in job["steps"] if s.get("id") in ("site", "upload")]
    assert len(built) == 2 and all(s["if"].startswith("always() && ") for s in built)
    assert pages["permissions"] == {"pages": "write", "id-token": "write"}
    assert all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", s["uses"]) for s in pages["steps"])


def steps_env(steps: list[dict]) -> dict[str, set[str]]:
    """The secrets in each step's environment, by its id (or name)."""
    return {s.get("id") or s.get("name"): {k for k, v in s.get("env", {}).items() if "secrets." in str(v)}
            for s in steps if "uses" not in s or s.get("id")}


def test_the_constraints_pin_every_installed_dependency_of_watcher(tmp_path):
    """What the CI installs is pinned: the constraints name an exact version of each of
    watcher's dependencies, direct or not, as installed with the watcher that ran init."""
    import importlib.metadata

    init_github(tmp_path / "repo")
    lines = [l for l in (tmp_path / "repo" / "wheels" / "constraints.txt").read_text().splitlines()
             if l and not l.startswith("#")]
    pinned = dict(l.split("==") for l in lines)
    assert all(re.fullmatch(r"[a-z0-9-]+", n) and re.fullmatch(r"[\w.+!]+", v) for n, v in pinned.items()), lines
    for name in ("click", "httpx", "httpcore", "h11", "starlette", "anyio", "jinja2", "markupsafe", "uvicorn"):
        assert pinned[name] == importlib.metadata.version(name)
    assert "watcher-papers" not in pinned and "pip" not in pinned and "pytest" not in pinned


# --- running the workflow's steps -----------------------------------------------------------

def git(*args, cwd, env=None):
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, **GIT_ID, **(env or {})}, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def spied(folder: Path, path: str) -> str:
    """A PATH with, in front of ``path``, a ``watcher`` and a ``python`` that write the
    environment they were started with to a file in ``folder`` (named after the program),
    then run the real one: which secrets each program of watcher's and pip's could read."""
    shim = folder / "spy-bin"
    shim.mkdir(parents=True, exist_ok=True)
    for program in ("watcher", "python"):
        (shim / program).write_text(f'#!/bin/sh\nenv > "$(mktemp "{folder}/{program}.XXXXXX")"\n'
                                    f'PATH="{path}" exec {program} "$@"\n')
        (shim / program).chmod(0o755)
    return f"{shim}{os.pathsep}{path}"


def spied_envs(folder: Path) -> dict[str, list[str]]:
    """What :func:`spied` recorded: program -> the environments it ran with."""
    return {program: [f.read_text() for f in folder.glob(f"{program}.*")] for program in ("watcher", "python")}


def run_job(remote: Path, workdir: Path, extra_path: str,
            variables: dict | None = None, spy: Path | None = None) -> list[tuple[str, subprocess.CompletedProcess]]:
    """Check out ``remote`` afresh (as actions/checkout does) and run the job's ``run`` steps in
    order, as the runner does: a failed step skips the later ones but for ``always()`` ones,
    a step for ``vars.WATCHER_PAGES`` runs only when ``variables`` set it. The install step
    runs as written, with pip told to put watcher into a folder of the run's own (and not to
    fetch the dependencies, which ``extra_path``'s Python has): every later step runs the
    watcher the workflow installed, from the wheel in the repository."""
    git("clone", "-q", str(remote), str(workdir), cwd=remote.parent)
    doc = load(workdir / ".github" / "workflows" / "watcher.yml")
    installed = workdir.parent / (workdir.name + "-site")
    path = os.pathsep.join([str(installed / "bin"), extra_path, os.environ["PATH"]])
    env = {**os.environ, **doc["env"], "PATH": spied(spy, path) if spy else path, "PYTHONPATH": str(installed)}
    for name in SECRETS:  # the runner gives a secret only to the steps whose env names it
        env.pop(name, None)
    env.pop("WATCHER_CONFIG", None)
    if variables and "WATCHER_INSTALL" in variables:  # ${{ vars.WATCHER_INSTALL || ... }}
        env["WATCHER_INSTALL"] = variables["WATCHER_INSTALL"]
    else:
        env["WATCHER_INSTALL"] = re.fullmatch(r"\$\{\{ vars\.WATCHER_INSTALL \|\| '(.+)' \}\}", doc["env"]["WATCHER_INSTALL"]).group(1)
    pip = {"PIP_TARGET": str(installed), "PIP_NO_DEPS": "1", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done, failed = [], False
    for step in doc["jobs"]["digest"]["steps"]:
        if "uses" in step:
            continue
        condition = step.get("if", "")
        if failed and not condition.startswith("always()"):
            continue
        if "vars.WATCHER_PAGES == 'true'" in condition and (variables or {}).get("WATCHER_PAGES") != "true":
            continue
        step_env = {k: SECRETS[m.group(1)] if (m := re.fullmatch(r"\$\{\{ secrets\.(\w+) \}\}", v)) else v
                    for k, v in step.get("env", {}).items()}
        if step.get("id") == "install":
            step_env.update(pip)
        r = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=workdir, env={**env, **step_env},
                           capture_output=True, text=True, timeout=120)
        done.append((step.get("name", step["run"]), r))
        failed = failed or r.returncode != 0
    return done


def standin_config(text: str, listing: Path, smtp_port: int) -> str:
    """The generated config with the network replaced: a listing file for the sources, the
    local SMTP server for the mail, a one-second interval for the daily schedule."""
    text = re.sub(r"\[source\.[\w-]+\]\ntype = \"[\w-]+\"\n(query = .*\n)?", "", text)
    text = text.replace("[watcher]", f'[source.standin]\ntype = "listing"\npath = "{listing}"\n\n[watcher]', 1)
    text = text.replace('schedule = "arxiv"', 'every = "1s"')
    text = text.replace('host = "smtp.example.org"', 'host = "127.0.0.1"')
    text = text.replace("port = 587", f"port = {smtp_port}").replace('security = "starttls"', 'security = "none"')
    return text


def mailed_titles(message) -> list[str]:
    text = message.get_body(("plain",)).get_content()
    return [t for t in TITLES if t in text]


SEED = formats.read(SEED_DIGEST.read_bytes(), "seed")
TITLES = [p.title for p in SEED.papers]


def write_listing(path: Path, n: int) -> None:
    """The first ``n`` papers of the seed digest as today's listing in the text format (a
    digest takes what was announced since its last run, or its lookback)."""
    entries = [f"{p.title}\n\nAuthors:{', '.join(p.authors)}\nDate:{p.published:%Y-%m-%d %H:%M:%S}\n\n{p.abstract}"
               for p in SEED.papers[:n]]
    path.write_text("\n\n".join([f"{SEED.title} - {datetime.now(timezone.utc).date()}"] + entries))


def github_repository(tmp_path: Path, smtp: MailServer, kind: str = "github") -> tuple[Path, Path]:
    """A bare repository standing in for GitHub (or GitLab), holding what ``watcher init
    --KIND`` wrote with the network swapped for stand-ins; returns (remote, listing file)."""
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    seed = tmp_path / "seed"
    init_ci(seed, kind)
    listing = tmp_path / "listing.txt"
    config = seed / "config.toml"
    config.write_text(standin_config(config.read_text(), listing, smtp.port))
    git("init", "-q", "-b", "main", cwd=seed)
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "watcher init --github", cwd=seed)
    git("push", "-q", str(remote), "main", cwd=seed)
    return remote, listing


BIN = str(Path(sys.executable).parent)  # the `watcher` the install step would have put on PATH
LOGIN = ("me@example.org", SECRETS["WATCHER_SMTP_PASSWORD"])


def test_two_runs_of_the_workflow_keep_the_ledger_on_the_state_branch(tmp_path):
    with MailServer(login=LOGIN) as smtp:
        remote, listing = github_repository(tmp_path, smtp)
        write_listing(listing, 6)
        first = run_job(remote, tmp_path / "run1", BIN)
        out = "".join(r.stdout + r.stderr for _, r in first)
        assert all(r.returncode == 0 for _, r in first), out
        installed = dict(first)["Install watcher"]  # from the wheel in the repository, no index
        assert "Successfully installed watcher-papers-" in installed.stdout
        assert (tmp_path / "run1-site" / "bin" / "watcher").is_file()
        # the installed watcher writes the same wheel again: a repository it makes runs it too
        again = subprocess.run([str(tmp_path / "run1-site" / "bin" / "watcher"), "init", "--github", "again"],
                               cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path / "run1-site")},
                               capture_output=True, timeout=120)
        assert again.returncode == 0, again.stderr
        wheels = [sorted((d / "wheels").iterdir()) for d in (tmp_path / "again", tmp_path / "run1")]
        assert [f.name for f in wheels[0]] == [f.name for f in wheels[1]] == sorted(
            ["constraints.txt", next(f.name for f in wheels[1] if f.suffix == ".whl")])
        assert [f.read_bytes() for f in wheels[0]] == [f.read_bytes() for f in wheels[1]]
        assert "no saved state" in out and "starting afresh" in out
        assert len(smtp.received) == 1, out
        sent_first = mailed_titles(smtp.received[0].message)
        assert sent_first and set(sent_first) <= set(TITLES[:6])
        assert git("ls-remote", "--heads", str(remote), "watcher-state", cwd=tmp_path)

        time.sleep(1.1)  # the digest's interval (1 s) passes: it is due again
        write_listing(listing, 12)
        second = run_job(remote, tmp_path / "run2", BIN, {"WATCHER_PAGES": "true"})
        out = "".join(r.stdout + r.stderr for _, r in second)
        assert all(r.returncode == 0 for _, r in second), out
        assert "restored" in out and "no saved state" not in out
        assert len(smtp.received) == 2
        sent_second = mailed_titles(smtp.received[1].message)
        assert sent_second and set(sent_second) <= set(TITLES[6:12])  # only what is new
        assert not set(sent_second) & set(sent_first)
    assert not (tmp_path / "run1" / "_site").exists()  # Pages only when the variable says so
    site = tmp_path / "run2" / "_site"
    for title in sent_first + sent_second:  # the archive of both runs, as the Pages job publishes it
        assert title in (site / "search-index.json").read_text()
    assert (site / "index.html").is_file()
    history = git("log", "--format=%s", "watcher-state", cwd=remote).splitlines()
    # one commit without parents, replaced by each save: the branch keeps no copy per run
    assert len(history) == 1 and history[0].startswith("watcher state saved ")


def test_ratings_made_in_a_clone_stay_on_the_state_branch_when_the_config_says_so(tmp_path):
    """The generated README's way to rate: restore in a clone, rate, save. The generated config
    leaves ratings out, and the save says so; with state_ratings = true the rating is on the
    branch, and the next scheduled run, which saves again, keeps it."""
    import bz2
    import sqlite3

    def ratings_on_branch() -> int:
        blob = subprocess.run(["git", "show", "watcher-state:watcher.db.gz"], cwd=remote, capture_output=True,
                              check=True).stdout
        (tmp_path / "branch.db").write_bytes(bz2.decompress(blob))
        with sqlite3.connect(tmp_path / "branch.db") as conn:
            return conn.execute("SELECT count(*) FROM ratings").fetchone()[0]

    with MailServer(login=LOGIN) as smtp:
        remote, listing = github_repository(tmp_path, smtp)
        write_listing(listing, 3)
        assert all(r.returncode == 0 for _, r in run_job(remote, tmp_path / "run1", BIN))
        clone = tmp_path / "clone"
        git("clone", "-q", str(remote), str(clone), cwd=tmp_path)
        config = clone / "config.toml"
        assert config.read_text().count("state_ratings = false\n") == 1
        steps = [("state", "restore", "s.db.gz", "--git-branch", "watcher-state"),
                 ("rate", "up", TITLES[0], "--profile", "llm-rl"),
                 ("state", "save", "s.db.gz", "--git-branch", "watcher-state")]
        for args in steps:
            r = run_cli(*args, cwd=clone)
            assert r.returncode == 0, (args, r.stderr)
        assert b"left out of it: 1 rating and 0 saved papers" in r.stdout
        assert ratings_on_branch() == 0

        config.write_text(config.read_text().replace("state_ratings = false", "state_ratings = true"))
        git("commit", "-q", "-am", "keep my ratings", cwd=clone)
        git("push", "-q", "origin", "main", cwd=clone)
        (clone / "watcher.db").unlink()
        for args in steps:
            r = run_cli(*args, cwd=clone)
            assert r.returncode == 0, (args, r.stderr)
        assert b"left out" not in r.stdout and ratings_on_branch() == 1
        before = git("log", "-1", "--format=%H", "watcher-state", cwd=remote)
        time.sleep(1.1)
        write_listing(listing, 6)
        assert all(r.returncode == 0 for _, r in run_job(remote, tmp_path / "run2", BIN))
        assert len(smtp.received) == 2
    assert git("log", "-1", "--format=%H", "watcher-state", cwd=remote) != before
    assert ratings_on_branch() == 1  # the scheduled run's save kept it


def test_a_failed_run_still_saves_its_ledger(tmp_path):
    """The mail server refuses the digest: the run fails, yet the database (papers seen, the
    failed attempt) goes to the state branch, and the next run, the server back, delivers."""
    with MailServer(login=LOGIN, refuse_data={1}) as smtp:
        remote, listing = github_repository(tmp_path, smtp)
        write_listing(listing, 5)
        first = run_job(remote, tmp_path / "run1", BIN)
        codes = {name: r.returncode for name, r in first}
        assert codes["Deliver the digests that are due"] == 1
        assert codes["Save the database to the state branch"] == 0
        assert smtp.received == []
        assert git("ls-remote", "--heads", str(remote), "watcher-state", cwd=tmp_path)

        time.sleep(1.1)
        second = run_job(remote, tmp_path / "run2", BIN)
        assert all(r.returncode == 0 for _, r in second), [(n, r.stderr) for n, r in second]
        assert len(smtp.received) == 1
        assert set(mailed_titles(smtp.received[0].message)) == set(TITLES[:5])


# --- the state branch on its own ----------------------------------------------------------

def local_repository(tmp_path: Path) -> tuple[Path, Path]:
    """A working clone (with the starter config and a sample database) of a bare remote."""
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    work = tmp_path / "work"
    git("clone", "-q", str(remote), str(work), cwd=tmp_path)
    assert run_cli("init", cwd=work).returncode == 0
    assert run_cli("once", "--sample", cwd=work).returncode == 0
    (work / "watcher-sample.db").rename(work / "watcher.db")
    return remote, work


def test_an_unchanged_database_is_not_committed_again(tmp_path):
    remote, work = local_repository(tmp_path)
    first = run_cli("state", "save", "s/db.gz", "--git-branch", "watcher-state", cwd=work)
    assert first.returncode == 0, first.stderr
    assert b"committed it to branch watcher-state" in first.stdout
    again = run_cli("state", "save", "s/db.gz", "--git-branch", "watcher-state", cwd=work)
    assert again.returncode == 0, again.stderr
    assert b"the database did not change: branch watcher-state kept as it was" in again.stdout
    assert len(git("log", "--format=%H", "watcher-state", cwd=remote).splitlines()) == 1
    assert git("ls-tree", "--name-only", "watcher-state", cwd=remote) == "watcher.db.gz\n"
    assert git("status", "--porcelain", "--untracked-files=no", cwd=work) == ""  # the checkout untouched


def test_an_unchanged_database_goes_to_another_remote_or_branch_all_the_same(tmp_path):
    """"Did not change" is said of the branch the state came from only: the same file saved to
    an empty remote, or to another branch, is pushed; to a path that is no repository, an error."""
    remote, work = local_repository(tmp_path)
    assert run_cli("state", "save", "s/db.gz", "--git-branch", "watcher-state", cwd=work).returncode == 0
    other = tmp_path / "other.git"
    git("init", "-q", "--bare", "-b", "main", str(other), cwd=tmp_path)
    for args, where in ((["--git-remote", str(other)], other), (["--git-branch", "state-2"], remote)):
        branch = "state-2" if "state-2" in args else "watcher-state"
        r = run_cli("state", "save", "s/db.gz", *(["--git-branch", "watcher-state"] if branch != "state-2" else []),
                    *args, cwd=work)
        assert r.returncode == 0, r.stderr
        assert f"committed it to branch {branch}".encode() in r.stdout
        assert git("ls-tree", "--name-only", branch, cwd=where) == "watcher.db.gz\n"
    r = run_cli("state", "save", "s/db.gz", "--git-branch", "watcher-state", "--git-remote", str(tmp_path / "nope"),
                cwd=work)
    assert r.returncode == 1 and r.stderr.decode().startswith("watcher: git ls-remote failed"), r


def test_an_unreachable_remote_stops_the_restore_and_never_shows_its_token(tmp_path):
    _, work = local_repository(tmp_path)
    (work / "watcher.db").unlink()
    url = "http://someone:tok3n-secret@127.0.0.1:9/state.git"  # the discard port: nothing listens
    r = run_cli("state", "restore", "s/db.gz", "--git-branch", "watcher-state", "--git-remote", url,
                cwd=work)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert err.startswith("watcher: git ls-remote failed") and err.count("\n") == 1
    assert "tok3n-secret" not in err and "starting afresh" not in r.stdout.decode()
    assert not (work / "watcher.db").exists()


def test_no_branch_yet_never_restores_a_stale_file(tmp_path):
    _, work = local_repository(tmp_path)
    assert run_cli("state", "save", "s/db.gz", cwd=work).returncode == 0  # a file, no branch
    (work / "watcher.db").unlink()
    r = run_cli("state", "restore", "s/db.gz", "--git-branch", "watcher-state", cwd=work)
    assert r.returncode == 0, r.stderr
    assert b"no saved state (no branch watcher-state on the remote yet): starting afresh" in r.stdout
    assert not (work / "watcher.db").exists()


# --- GitLab CI ----------------------------------------------------------------------------

def gitlab_would_run(job: dict, variables: dict, needed_failed: bool) -> bool:
    """Whether GitLab starts ``job`` (whose ``needs`` failed or not) with these CI/CD
    ``variables``: its first rule whose ``if`` (``$NAME == "value"``) holds decides, its ``when``
    (default ``on_success``: not after a failed job it needs); no rule holding, it does not run."""
    for rule in job.get("rules", [{}]):
        if "if" in rule:
            name, value = re.fullmatch(r'\$(\w+) == "(.*)"', rule["if"]).groups()
            if variables.get(name) != value:
                continue
        when = rule.get("when", "on_success")
        return when == "always" or (when == "on_success" and not needed_failed)
    return False


def run_gitlab(remote: Path, workdir: Path, name: str = "watcher",
               spy: Path | None = None) -> list[tuple[str, subprocess.CompletedProcess]]:
    """Check out ``remote`` afresh and run the job ``name`` as a GitLab runner does:
    ``before_script`` and ``script`` in one shell until a line fails, then ``after_script``
    in a shell of its own whatever happened; the project's variables (the state token too)
    in the environment of both. The project's URL is the bare repository's; the install
    lines are skipped (the ``watcher`` of this checkout is on PATH)."""
    git("clone", "-q", "--depth=1", f"file://{remote}", str(workdir), cwd=remote.parent)
    doc = yaml.safe_load((workdir / ".gitlab-ci.yml").read_text())
    job = doc[name]
    path = BIN + os.pathsep + os.environ["PATH"]
    secrets = {k: v for k, v in SECRETS.items() if k != "GITHUB_TOKEN"}  # the project's CI/CD variables
    env = {**os.environ, **doc["variables"], **secrets, **GIT_ID, "CI_SERVER_URL": f"file://{remote.parent}",
           "CI_PROJECT_PATH": remote.name.removesuffix(".git"), "PATH": spied(spy, path) if spy else path}
    env.pop("WATCHER_CONFIG", None)
    done = []

    def sh(lines: list[str], what: str) -> None:
        script = "\n".join(line for line in lines if not line.startswith("python -m pip install"))
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=workdir, env=env,
                           capture_output=True, text=True, timeout=180)
        done.append((what, r))

    assert [line for line in job["before_script"] if "pip" in line] == \
        ['python -m pip install --constraint wheels/constraints.txt "$WATCHER_INSTALL"']
    sh(job["before_script"] + job["script"], "script")  # stops at the first failure
    if job.get("after_script"):
        sh(job["after_script"], "after_script")
    return done


def test_the_gitlab_pipeline_is_serial_and_saves_after_a_failure_too(tmp_path):
    doc = yaml.safe_load(init_ci(tmp_path / "repo", "gitlab").read_text())
    assert doc["workflow"]["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "schedule" || $CI_PIPELINE_SOURCE == "web"'}]
    job = doc["watcher"]
    assert job["resource_group"] == "watcher"
    assert job["script"][1:] == ['watcher state restore "$STATE_FILE" --git-branch "$STATE_BRANCH" --git-remote "$STATE_MIRROR"',
                                 "watcher check", "watcher once --due"]
    assert job["after_script"][2].startswith('watcher state save "$STATE_FILE" --git-branch')
    # the state token: a masked variable, taken out of the environment before any line runs
    # a program but git's push, the last line (git alone, the system's, no config of others)
    assert "WATCHER_STATE_TOKEN" not in str(doc["variables"])
    for part in ("watcher", "pages"):
        assert doc[part]["before_script"][0].startswith("unset WATCHER_STATE_TOKEN")
    assert job["after_script"][0].startswith("push_token=$WATCHER_STATE_TOKEN; unset WATCHER_STATE_TOKEN")
    assert "push_token" not in " ".join(job["after_script"][1:-1])
    assert "export PATH=/usr/bin:/bin GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null" in job["after_script"][-1]
    assert not re.search(r"^\s*(watcher|python) ", job["after_script"][-1], re.M)
    assert doc["pages"]["needs"] == ["watcher"]
    assert not gitlab_would_run(doc["pages"], {}, needed_failed=False)  # only when asked for
    assert gitlab_would_run(doc["pages"], {"WATCHER_PAGES": "true"}, needed_failed=False)
    assert doc["pages"]["artifacts"] == {"paths": ["public"]}
    config = tmp_path / "repo" / "config.toml"
    config.write_text(config.read_text().replace("example.org", "mylab.net"))  # the edit its README asks for
    ok = run_cli("check", cwd=tmp_path / "repo", env=SECRETS)
    assert ok.returncode == 0, ok.stderr
    readme = (tmp_path / "repo" / "README.md").read_text()
    assert "WATCHER_STATE_TOKEN" in readme and "write_repository" in readme and "@" not in readme.replace(
        "me@example.org", "")


def test_two_gitlab_runs_deliver_only_what_is_new(tmp_path):
    with MailServer(login=LOGIN) as smtp:
        remote, listing = github_repository(tmp_path, smtp, "gitlab")
        write_listing(listing, 5)
        first = run_gitlab(remote, tmp_path / "run1")
        out = "".join(r.stdout + r.stderr for _, r in first)
        assert all(r.returncode == 0 for _, r in first), out
        assert "no saved state (no branch watcher-state on the remote yet)" in out
        sent_first = mailed_titles(smtp.received[0].message)
        time.sleep(1.1)
        write_listing(listing, 10)
        second = run_gitlab(remote, tmp_path / "run2")
        out = "".join(r.stdout + r.stderr for _, r in second)
        assert all(r.returncode == 0 for _, r in second), out
        assert len(smtp.received) == 2
        sent_second = mailed_titles(smtp.received[1].message)
        assert sent_second and set(sent_second) <= set(TITLES[5:10]) and sent_first
    # one commit without parents, replaced by the second run's save (no copy per run)
    assert len(git("log", "--format=%H", "watcher-state", cwd=remote).splitlines()) == 1
    pages = run_gitlab(remote, tmp_path / "pages", "pages")  # after the run, from the state branch
    assert all(r.returncode == 0 for _, r in pages), [(n, r.stderr) for n, r in pages]
    index = (tmp_path / "pages" / "public" / "search-index.json").read_text()
    assert all(title in index for title in sent_first + sent_second)


def test_a_failed_gitlab_run_still_publishes_the_site_of_what_it_saved(tmp_path):
    """The first run delivers; on the second the mail server refuses the digest: the watcher
    job fails, its after_script saves the state, and the pages job (which needs it) still runs
    and publishes what was delivered."""
    with MailServer(login=LOGIN, refuse_data={2}) as smtp:
        remote, listing = github_repository(tmp_path, smtp, "gitlab")
        write_listing(listing, 5)
        first = run_gitlab(remote, tmp_path / "run1")
        assert all(r.returncode == 0 for _, r in first), [(n, r.stderr) for n, r in first]
        time.sleep(1.1)
        write_listing(listing, 10)
        second = run_gitlab(remote, tmp_path / "run2")
        codes = [r.returncode for _, r in second]
        assert codes[-1] == 0 and any(codes), codes  # once --due failed, the state was saved
        assert len(smtp.received) == 1
    doc = yaml.safe_load((tmp_path / "run2" / ".gitlab-ci.yml").read_text())
    assert gitlab_would_run(doc["pages"], {"WATCHER_PAGES": "true"}, needed_failed=True)
    pages = run_gitlab(remote, tmp_path / "pages", "pages")
    assert all(r.returncode == 0 for _, r in pages), [(n, r.stderr) for n, r in pages]
    index = (tmp_path / "pages" / "public" / "search-index.json").read_text()
    sent = mailed_titles(smtp.received[0].message)
    assert sent and all(title in index for title in sent)


# --- where watcher is installed from ------------------------------------------------------------

def pip_calls(script: str, env: dict, cwd: Path) -> list[list[str]]:
    """Run ``script`` with a ``python`` on PATH that only records its arguments: what each
    install line would ask pip for."""
    shim = cwd / "shim"
    shim.mkdir(exist_ok=True)
    log = cwd / "calls"
    (shim / "python").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{log}"\n')
    (shim / "python").chmod(0o755)
    full = {**os.environ, **env, "PATH": f"{shim}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    r = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=full, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return log.read_text().splitlines()


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_the_install_source_is_one_variable_defaulting_to_the_wheel_in_the_repository(tmp_path, kind):
    """WATCHER_INSTALL (a repository / CI variable) says where watcher comes from: the wheel
    `init` wrote into the repository by default (no package index carries watcher), a git URL
    or a wheel when set; every install line uses it, and the wheel's name is written once."""
    from watcher.cli.wheel import wheel_name

    path = init_ci(tmp_path / "repo", kind)
    text = path.read_text()
    release = f"./wheels/{wheel_name()}"
    assert text.count(release) == 1 and "watcher-papers==" not in text
    root = path.parents[2] if kind == "github" else path.parent
    assert (root / release).is_file()
    git_url = "git+https://git.example.org/me/watcher@main"
    if kind == "github":
        doc = load(path)
        assert doc["env"]["WATCHER_INSTALL"] == f"${{{{ vars.WATCHER_INSTALL || '{release}' }}}}"
        install = next(s for s in doc["jobs"]["digest"]["steps"] if s.get("id") == "install")
        lines = [install["run"]]
    else:
        doc = yaml.safe_load(text)
        assert doc["variables"]["WATCHER_INSTALL"] == release  # a project CI/CD variable overrides it
        lines = [line for line in doc["watcher"]["before_script"] + doc["pages"]["before_script"] +
                 doc["watcher"]["after_script"] if "pip install" in line]
        assert len(lines) == 3
        for line in lines:
            assert pip_calls(line, {"WATCHER_INSTALL": doc["variables"]["WATCHER_INSTALL"]}, tmp_path)[-1] == release
    assert all("pip install" in line for line in lines)
    for line in lines:
        assert pip_calls(line, {"WATCHER_INSTALL": git_url}, tmp_path)[-1] == git_url
    readme = (path.parents[2] if kind == "github" else path.parent) / "README.md"
    said = " ".join(readme.read_text().split())
    assert "WATCHER_INSTALL" in said and f"pip install {release}" in said
    assert "pypi.org" not in said and "watcher-papers==" not in said
    if kind == "github":
        r = actionlint(path)
        assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_no_program_of_watcher_or_pip_ever_holds_the_token_yet_the_branch_is_pushed(tmp_path, kind):
    """Two runs of the generated CI with a spy in front of ``watcher`` and ``python``: the
    environment of each one that ran (pip's install, every watcher command) holds no token;
    git alone fetched and pushed the state branch, and the second run restored it."""
    token = SECRETS["GITHUB_TOKEN" if kind == "github" else "WATCHER_STATE_TOKEN"]
    with MailServer(login=LOGIN) as smtp:
        remote, listing = github_repository(tmp_path, smtp, kind)
        write_listing(listing, 4)
        heads = []
        for run in ("run1", "run2"):
            spy = tmp_path / f"spy-{run}"
            done = (run_job(remote, tmp_path / run, BIN, spy=spy) if kind == "github"
                    else run_gitlab(remote, tmp_path / run, spy=spy))
            assert all(r.returncode == 0 for _, r in done), [(n, r.stdout + r.stderr) for n, r in done]
            seen = spied_envs(spy)
            assert len(seen["watcher"]) >= 4 and (kind == "gitlab" or seen["python"]), seen.keys()
            for program, envs in seen.items():
                assert not [e for e in envs if token in e or "t0ken" in e], program
            with_password = [e for e in seen["watcher"] if SECRETS["WATCHER_SMTP_PASSWORD"] in e]
            if kind == "github":  # only `watcher check` and `watcher once --due` get the mail password
                assert len(with_password) == 2, len(with_password)
            heads.append(git("rev-parse", "watcher-state", cwd=remote))  # pushed by git's step
            time.sleep(1.1)
        out = "".join(r.stdout + r.stderr for _, r in done)
        assert "restored watcher.db" in out and len(smtp.received) >= 1
    assert heads[0] != heads[1] and git("ls-tree", "--name-only", "watcher-state", cwd=remote) == "watcher.db.gz\n"
