"""Shared fixtures: paths to test data, a config writer, and a way to run the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# CI (CI=true, as CI services and .ci/run set it) runs the property tests derandomized: the
# examples are chosen from each test's own name, so a green build stays green and a red one is
# red on every machine. A developer's run explores new random inputs each time (and
# WATCHER_PROPERTY_EXAMPLES=5000 searches harder); what it finds is kept as an @example.
# Neither profile races the clock: no per-example deadline, and no health check on how fast
# examples are generated (a loaded machine is slow; that is no finding).
_NO_CLOCK = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, **_NO_CLOCK)
settings.register_profile("dev", **_NO_CLOCK)
settings.load_profile("ci" if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes") else "dev")

# A web page's statements may run 2 s in use; a loaded test machine (CI's two shared cores)
# can need longer for the sample's pages, and a 503 there would be a flake, not a finding. The
# tests about the deadline set it themselves (app.state.web.query_timeout). Subprocesses
# (watcher serve, watcher run) inherit it.
os.environ.setdefault("WATCHER_WEB_DEADLINE", "60")

# The tests are grouped in folders (unit/, integration/, faults/); the local stand-ins and the
# kits the tests share are in servers/. Every group imports those, and a test module of another
# group, by its name.
_TESTS = Path(__file__).resolve().parent
for _folder in ("servers", "unit", "integration", "faults"):
    if str(_TESTS / _folder) not in sys.path:
        sys.path.insert(0, str(_TESTS / _folder))

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SEED_DIGEST = DATA / "llm-rl-2025-04-12.txt"
SEED_HF_PAGE = DATA / "hf-daily-papers-page.txt"


def run_watcher(*args: str, cwd: Path | None = None, env: dict | None = None,
                input: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``python -m watcher ARGS`` as a user would, capturing bytes."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.pop("WATCHER_CONFIG", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "watcher", *args], cwd=cwd, env=full_env,
                          input=input, capture_output=True, timeout=timeout)


@pytest.fixture
def write_config(tmp_path):
    """Write a config.toml (dedented) into tmp_path and return its path."""

    def write(text: str, name: str = "config.toml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


MINIMAL_CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[profile.llm-rl]
title = "LLM-RL"
query = '"reinforcement learning" OR RLHF OR GRPO'

[digest.daily]
profiles = ["llm-rl"]
schedule = "30 21 * * sun-thu"
channels = ["archive"]

[channel.archive]
type = "file"
path = "digests/{digest}-{date}.{ext}"
"""
