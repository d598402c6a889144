"""The saved database on a git branch of its own (``watcher state save|restore --git-branch``):
how a scheduled CI run (GitHub Actions, GitLab CI) keeps watcher's history between runs.

The branch holds one file, ``watcher.db.gz``, in one commit without parents, made with git's
plumbing (``hash-object``, ``mktree``, ``commit-tree``) so the checked-out branch and working
tree are never touched. Each save replaces that commit (a force push), so the remote keeps one
state, not one per run: after ``git gc`` the old ones are gone. The push is
``--force-with-lease`` on the commit fetched from that branch (whatever spelling of the remote:
a CI job may read through one URL and write through another), or on no branch at all where the
remote has none: a branch another writer moved since is refused, never overwritten.
If the push went through but recording it here did not, the next save here is refused the same
way until a restore fetches the branch again; nothing delivered is lost, since the remote holds
the newer state.

Remotes and branches come from the user: a remote starting with ``-`` or a branch name git
refuses (``git check-ref-format --branch``) is refused in one line before any git call, and
every git call takes them after ``--``, so none is ever read as an option (``--upload-pack=…``).
Where the remote lives is git's business (``origin``, or a URL with a token); a URL's
credentials never appear in a message.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

from ..errors import InputError, WatcherError

FILE = "watcher.db.gz"  # the one file of the state branch
LOCAL_REF = "refs/watcher/state"  # where the fetched branch is kept between restore and save
LEASE_REFS = "refs/watcher/lease/"  # per remote and branch: the commit a push may replace


class StateError(WatcherError):
    """git could not read or write the state branch."""


def _hide(text: str) -> str:
    """``text`` with the credentials of any URL in it masked."""
    return re.sub(r"(//)[^/@\s]+@", r"\1***@", text)


def _git(*args: str, cwd: Path, ok=(0,), data: bytes | None = None) -> subprocess.CompletedProcess:
    what = next(a for a in args if not a.startswith("-") and "=" not in a)  # the subcommand
    try:
        r = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, timeout=300)
    except FileNotFoundError:
        raise StateError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise StateError(f"git {what} took more than 300 s") from None
    if r.returncode not in ok:
        raise StateError(_hide(f"git {what} failed (exit status {r.returncode}): {_cause(r.stderr)}"))
    return r


def _cause(stderr: bytes) -> str:
    """The line of git's stderr that says what went wrong: its first ``fatal:`` or ``error:``
    line (the advice that follows, "Please make sure you have the correct access rights and
    the repository exists.", says nothing by its last line alone), else its last line."""
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    for line in lines:
        for prefix in ("fatal:", "error:"):
            if line.startswith(prefix):
                return line[len(prefix):].strip()
    return lines[-1] if lines else "no message"


def check_names(remote: str, branch: str, cwd: Path) -> None:
    """Refuse, in one line (InputError: exit status 2), a remote that git would read as an
    option or that holds a line break, and a branch name git refuses."""
    if not remote or remote.startswith("-") or re.search(r"[\x00-\x1f]", remote):
        raise InputError(f"--git-remote {remote!r} is not a remote name or URL (it must not start with "
                         "'-' nor hold control characters)")
    ok = (branch and not branch.startswith("-") and "@{" not in branch
          and _git("check-ref-format", "--branch", branch, cwd=cwd, ok=(0, 1, 128)).returncode == 0)
    if not ok:
        raise InputError(f"--git-branch {branch!r} is not a valid branch name (git check-ref-format --branch "
                         "refuses it)")


def _check_remote(remote: str, cwd: Path) -> None:
    """A remote given by name must be one of the repository's: say so in one line, with the
    way to add it, rather than git's advice about access rights."""
    if re.search(r"[/:]", remote):  # a URL or a path: git says what is wrong with it
        return
    r = _git("remote", "get-url", "--", remote, cwd=cwd, ok=(0, 2, 128))
    if r.returncode == 128:  # not in a git repository at all
        raise StateError(f"{_cause(r.stderr)}: run this in a clone of the repository that holds "
                         "the state branch, or pass --git-remote URL")
    if r.returncode != 0:
        raise StateError(f"no git remote named {remote!r} here ({cwd}): run this in a clone whose "
                         f"remote {remote} holds the state branch, add it (git remote add {remote} URL) "
                         "or pass --git-remote URL")


def _lease_ref(branch: str) -> str:
    """The local ref that holds the commit fetched from (or last pushed to) ``branch``, from
    whichever spelling of the remote (GitLab's job reads through its clone's URL and writes
    through one with a token): what a push may replace there."""
    return LEASE_REFS + hashlib.sha256(branch.encode()).hexdigest()[:20]


def fetch(remote: str, branch: str, out: Path, cwd: Path) -> bool:
    """Download the database saved on ``branch`` of ``remote`` into ``out``; False when there
    is no such branch yet (the first run). Any other failure (no network, no access) is a
    StateError: starting afresh then would deliver everything again."""
    check_names(remote, branch, cwd)
    _check_remote(remote, cwd)
    if _head(remote, branch, cwd) is None:
        _git("update-ref", "-d", _lease_ref(branch), cwd=cwd)  # none to replace: a push creates it
        return False
    _git("fetch", "--no-tags", "--depth=1", "--", remote, f"+refs/heads/{branch}:{LOCAL_REF}", cwd=cwd)
    _git("update-ref", _lease_ref(branch), LOCAL_REF, cwd=cwd)
    blob = _git("show", f"{LOCAL_REF}:{FILE}", cwd=cwd).stdout
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(blob)
    return True


def _head(remote: str, branch: str, cwd: Path) -> str | None:
    """The commit ``branch`` of ``remote`` points at; None when it has no such branch."""
    listed = _git("ls-remote", "--exit-code", "--heads", "--", remote, f"refs/heads/{branch}", cwd=cwd, ok=(0, 2))
    return listed.stdout.decode().split()[0] if listed.returncode == 0 else None


def push(remote: str, branch: str, packed: Path, message: str, cwd: Path) -> str | None:
    """Make ``packed`` the one file of ``branch`` on ``remote``, in a new commit without
    parents that replaces the one there (``--force-with-lease`` on the commit fetched before;
    a remote without the branch gets it); the commit id, or None when it had not changed: the
    branch on ``remote`` is still the state fetched before and holds the same file. A branch
    that is not the commit fetched before (another run saved since, or this clone never
    fetched it) is refused, never overwritten."""
    check_names(remote, branch, cwd)
    _check_remote(remote, cwd)
    blob = _git("hash-object", "-w", "--", str(packed.resolve()), cwd=cwd).stdout.decode().strip()
    lease = _lease_ref(branch)
    known = _git("rev-parse", "-q", "--verify", f"{lease}^{{commit}}", cwd=cwd, ok=(0, 1))
    known_id = known.stdout.decode().strip() if known.returncode == 0 else None
    head = _head(remote, branch, cwd)
    if head is not None and head != known_id:
        raise StateError(_hide(f"branch {branch} of {remote} is not the state this clone fetched (another run "
                               "saved its state there since, or it was never fetched here): not overwritten; "
                               "restore it (watcher state restore --git-branch) and run again"))
    if head is not None:
        before = _git("rev-parse", "-q", "--verify", f"{head}:{FILE}", cwd=cwd, ok=(0, 1))
        if before.stdout.decode().strip() == blob:
            return None
    tree = _git("mktree", cwd=cwd, data=f"100644 blob {blob}\t{FILE}\n".encode()).stdout.decode().strip()
    named = _git("config", "user.email", cwd=cwd, ok=(0, 1)).returncode == 0
    identity = [] if named else ["-c", "user.name=watcher", "-c", "user.email=watcher@localhost"]
    commit = _git(*identity, "commit-tree", tree, "-m", message, cwd=cwd).stdout.decode().strip()
    r = _git("push", "-q", f"--force-with-lease=refs/heads/{branch}:{head or ''}", "--", remote,
             f"{commit}:refs/heads/{branch}", cwd=cwd, ok=(0, 1))
    if r.returncode != 0 and "stale info" not in r.stderr.decode(errors="replace"):
        raise StateError(_hide(f"git push failed (exit status {r.returncode}): {_cause(r.stderr)}"))
    if r.returncode != 0:  # moved between the look above and the push
        raise StateError(_hide(f"branch {branch} of {remote} changed while this state was pushed (another run "
                               f"saved its state there): not overwritten ({_cause(r.stderr)}); restore it "
                               "(watcher state restore --git-branch) and run again"))
    _git("update-ref", lease, commit, cwd=cwd)
    _git("update-ref", LOCAL_REF, commit, cwd=cwd)
    return commit
