"""The README and --help stay true: every command and every config key is documented."""

from __future__ import annotations

import re

import pytest

from conftest import REPO, run_watcher
from watcher import config as cfg
from watcher.cli import cli

README = (REPO / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_is_in_the_readme_and_in_help(command):
    assert f"`watcher {command}" in README
    r = run_watcher(command, "--help")
    assert r.returncode == 0 and r.stdout.startswith(b"Usage: watcher " + command.encode())


def _all_keys():
    tables = [("watcher", cfg._WATCHER_KEYS), ("source", cfg._SOURCE_COMMON), ("profile", cfg._PROFILE_KEYS),
              ("digest", cfg._DIGEST_KEYS), ("channel", cfg._CHANNEL_COMMON)]
    tables += [("source", keys) for keys in cfg._SOURCE_KEYS.values()]
    tables += [("channel", keys) for keys in cfg._CHANNEL_KEYS.values()]
    return sorted({(section, key) for section, keys in tables for key in keys})


@pytest.mark.parametrize("section, key", _all_keys())
def test_every_config_key_is_documented_in_its_section(section, key):
    part = README.split(f"**`[{section}", 1)[1].split("\n**`[", 1)[0]
    assert re.search(rf"`{re.escape(key)}`", part), f"[{section}] {key} is not in the README"


@pytest.mark.parametrize("kind", cfg.SOURCE_TYPES + cfg.CHANNEL_TYPES)
def test_every_source_and_channel_type_is_documented(kind):
    assert f"| `{kind}` |" in README
