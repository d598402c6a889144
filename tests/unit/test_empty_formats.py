"""``formats = []`` (issue: a file channel wrote nothing and the papers were recorded as
delivered): a config error for a digest whose channels write its formats, and no channel records
papers when it wrote nothing."""

from __future__ import annotations

import dataclasses
import io
import shutil
import sqlite3

import pytest

from conftest import MINIMAL_CONFIG, REPO
from helpers import run_cli
from watcher.config import load_config
from watcher.errors import ConfigError
from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once, sample_config, sample_now

STDOUT = '\n[channel.screen]\ntype = "stdout"\n'
EMAIL = ('\n[channel.me]\ntype = "email"\nhost = "127.0.0.1"\nfrom = "me@example.org"\n'
         'to = ["me@example.org"]\n')


@pytest.mark.parametrize("channels, extra, culprit", [
    ('["archive"]', "", "archive (file)"),
    ('["me", "screen"]', STDOUT + EMAIL, "screen (stdout)"),
])
def test_empty_formats_for_a_channel_that_writes_them_is_a_config_error(write_config, tmp_path,
                                                                      channels, extra, culprit):
    text = MINIMAL_CONFIG.replace('channels = ["archive"]', f"channels = {channels}\nformats = []")
    path = write_config(text + extra)
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(e.value).startswith(f"{path}: digest.daily.formats: ")
    assert culprit in str(e.value) and "\n" not in str(e.value)
    r = run_cli("--config", str(path), "check", cwd=tmp_path)
    assert r.returncode == 2 and b"digest.daily.formats" in r.stderr and b"Traceback" not in r.stderr


def test_empty_formats_is_fine_when_no_channel_uses_them(write_config):
    text = MINIMAL_CONFIG.replace('channels = ["archive"]', 'channels = ["me"]\nformats = []')
    assert load_config(write_config(text + EMAIL)).digests["daily"].formats == ()


def test_a_channel_that_would_write_nothing_records_nothing(tmp_path):
    """Past the config check (a config object built in code): the channel fails, the ledger
    stays empty, and the papers are there for the next run."""
    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    config = load_config(tmp_path / "config.toml")
    daily = dataclasses.replace(config.digests["daily"], formats=(), channels=("archive",))
    config = sample_config(dataclasses.replace(config, digests={"daily": daily}))
    report = run_once(config, Cycle(now=sample_now(config)), Fetch(), Deliver(stdout=io.StringIO()))
    [channel] = report.channels
    assert channel.error and "writes no format" in channel.error and not channel.sent
    with sqlite3.connect(tmp_path / "watcher-sample.db") as conn:
        assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 0
    assert not (tmp_path / "digests").exists()
