"""The lint and the types CI checks (.ci/run runs both before the tests), run by the README's
test command too: ruff with the rules of [tool.ruff], mypy over the modules [tool.mypy] lists
(pyproject.toml; docs/dependencies.md says why they are there)."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=240)


def test_ruff_finds_nothing():
    r = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_finds_nothing_in_the_typed_modules():
    files = PYPROJECT["tool"]["mypy"]["files"]
    assert len(files) >= 40 and all((REPO / f).is_file() for f in files), files
    r = _run("mypy")  # its files and settings from pyproject.toml; a cache in .mypy_cache
    assert r.returncode == 0 and "Success" in r.stdout, r.stdout + r.stderr


def test_ci_runs_both_before_the_tests():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [i for i, line in enumerate(ci) if line.startswith(".venv/bin/")]
    names = [ci[i].split()[0] for i in steps]
    assert names == [".venv/bin/ruff", ".venv/bin/mypy"], names
    assert steps[-1] < len(ci) - 1 and "-m pytest" in ci[-1]
