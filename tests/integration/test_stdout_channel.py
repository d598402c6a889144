"""The ``stdout`` channel prints every format of its digest, each clearly separated."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from conftest import MINIMAL_CONFIG, SEED_DIGEST
from helpers import run_cli
from watcher import formats
from watcher.store import Store


def stdout_config(write_config, tmp_path, fmts: str):
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert(formats.read(SEED_DIGEST.read_bytes(), "seed").papers, datetime.now(timezone.utc))
    return write_config(MINIMAL_CONFIG.replace('channels = ["archive"]', f'channels = ["out"]\nformats = {fmts}')
                        + '\n[channel.out]\ntype = "stdout"\n')


def test_stdout_prints_each_format_of_the_digest_under_its_own_banner(write_config, tmp_path):
    cfg = stdout_config(write_config, tmp_path, '["text", "markdown", "json"]')
    r = run_cli("--config", str(cfg), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    parts = re.split(rb"^==> digest daily, format (\w+) <==\n", r.stdout, flags=re.M)
    assert parts[0] == b"" and parts[1::2] == [b"text", b"markdown", b"json"]
    text, markdown, js = parts[2::2]
    listing = formats.read(text.rstrip(b"\n"), "text part")
    assert listing.title == "LLM-RL" and len(listing.papers) >= 20
    assert markdown.startswith(b"# LLM-RL")
    assert [p["title"] for p in json.loads(js)] == [p.title for p in listing.papers]


def test_stdout_with_one_format_prints_just_that_format(write_config, tmp_path):
    cfg = stdout_config(write_config, tmp_path, '["text"]')
    r = run_cli("--config", str(cfg), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert b"==>" not in r.stdout
    assert len(formats.read(r.stdout.rstrip(b"\n"), "stdout").papers) >= 20
