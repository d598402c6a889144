"""The commands that only read load only what they use (docs/performance.md, "watcher status").

Each command runs in a fresh interpreter (``python -c``: the ``watcher`` console script's
``main``) on a copy of the sample database, then prints the names in ``sys.modules``. A read
of the database must not load the cycle (the pipeline, the daemon, the channels' sending, the
summarizer) or the web server: at 300,000 papers the imports were most of ``watcher status``'s
second (the store read is 0.08 s of it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO
from helpers import built_once, copy_folder
from webkit import _run_the_sample

CODE = """
import json, sys
sys.argv = ["watcher", *json.loads(sys.argv[1])]
from watcher.cli import main
try:
    main()
except SystemExit as e:
    code = e.code or 0
sys.stdout.flush()
print("\\n@@modules " + json.dumps(sorted(sys.modules)))
sys.exit(code)
"""

# What no reading command loads: the cycle and what only it (or the web server) uses.
NEVER = frozenset("""
    watcher.cycle.pipeline watcher.cycle.daemon watcher.cycle.upkeep watcher.present.summarize watcher.web
    apprise starlette uvicorn
""".split())

# The matcher (its learner, percolator, word frequencies): a config checks a digest's ``order``
# against watcher.matching.order, not the matcher that sorts by it.
MATCHER = frozenset("watcher.matching.match watcher.matching.learn watcher.matching.assemble".split())

# What a kind's module loads only when it fetches or sends: the HTTP client.
HTTP = frozenset("httpx watcher.util.http watcher.deliver.httppost".split())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The shipped config and the sample's database, and a copy of it as the configured one
    (watcher.db), so that ``status`` reads it as a real database: schedules, deliveries."""
    folder = copy_folder(built_once("sample", _run_the_sample), tmp_path_factory.mktemp("lazy"))
    shutil.copyfile(folder / "watcher-sample.db", folder / "watcher.db")  # a backup: no -wal beside it
    return folder


def modules_after(folder, *args: str) -> tuple[set[str], str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("WATCHER_CONFIG", None)
    env = {k: v for k, v in env.items() if not k.startswith("COV_CORE_")}  # no coverage in the child
    r = subprocess.run([sys.executable, "-c", CODE, json.dumps(args)], cwd=folder, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out, _, names = r.stdout.rpartition("\n@@modules ")
    return set(json.loads(names)), out


@pytest.mark.parametrize("args, used", [
    (("status",), "watcher.cycle.status"),
    (("status", "--sample"), "watcher.cycle.status"),  # the sample database, chosen by --sample
    (("ratings",), "watcher.services.ratings"),
    (("saved",), "watcher.services.ratings"),
])
def test_a_reading_command_loads_no_cycle(folder, args, used):
    modules, out = modules_after(folder, *args)
    assert used in modules and "watcher.store" in modules  # it ran, through the store
    if args[0] == "status":
        assert "papers stored" in out and "digests:" in out
    assert sorted(NEVER & modules) == []


def test_status_renders_nothing_so_loads_no_templates(folder):
    """A channel's module names the renderer; Jinja2 loads when a digest is rendered."""
    modules, _ = modules_after(folder, "status")
    assert "jinja2" not in modules


def test_status_loads_no_http_client(folder):
    """Reading the config reads every channel kind's module; none loads httpx until it sends
    (slack and webhook import httppost then; email and apprise take what they need of the
    network from util.wire): httpx was a sixth of status's imports at 300,000 papers."""
    modules, _ = modules_after(folder, "status")
    assert sorted(HTTP & modules) == []


def test_status_loads_the_modules_of_the_kinds_the_config_names_only(folder):
    """The registries import a kind's module when the kind is first asked for (kinds.Registry):
    the shipped config names arxiv, hf-daily and file; the other kinds' parsers, SMTP and
    templates stay out."""
    from watcher.config import load_config
    from watcher.deliver import KINDS as CHANNELS
    from watcher.sources import KINDS as SOURCES

    config = load_config(folder / "config.toml")
    modules, _ = modules_after(folder, "status")
    named = {SOURCES[s.type].cls.__module__ for s in config.sources.values()} | {
        CHANNELS[c.type].cls.__module__ for c in config.channels.values()}
    every = {k.cls.__module__ for k in [*SOURCES.values(), *CHANNELS.values()]}
    assert named == {"watcher.sources.arxiv", "watcher.sources.hf_daily", "watcher.deliver.file"}
    assert sorted(every & modules) == sorted(named)


def test_status_loads_no_matcher(folder):
    modules, _ = modules_after(folder, "status")
    assert sorted(MATCHER & modules) == []


def test_help_loads_no_store_matcher_or_templates(tmp_path):
    """Every command imports watcher.services.ratings (its choices); the store, the matcher and the
    templates it uses load when a rating is read or made (tests/unit/test_layers.py, LAZY)."""
    modules, out = modules_after(tmp_path, "--help")
    assert "Usage: watcher" in out and "watcher.services.ratings" in modules
    heavy = {"sqlite_utils", "watcher.store", "watcher.matching.match", "jinja2", "httpx", "apscheduler"}
    assert sorted(heavy & modules) == []
