"""`digest NAME --since DATE` (a dry run or not) says when the papers matched but were already delivered."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from conftest import MINIMAL_CONFIG, SEED_DIGEST
from helpers import run_cli
from watcher import formats
from watcher.store import Store


OFF_TOPIC = (b"Fish - 2025-04-12\n\nFin regeneration in zebrafish\n\nAuthors:Ann Example\n"
             b"Date:2025-04-10 10:00:00\n\nWe study how zebrafish regrow their fins.")


def test_dry_run_since_tells_delivered_from_unmatched(write_config, tmp_path):
    papers = formats.read(SEED_DIGEST.read_bytes(), "seed").papers + formats.read(OFF_TOPIC, "off").papers
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert(papers, datetime.now(timezone.utc))
    cfg = write_config(MINIMAL_CONFIG)
    since = ("digest", "daily", "--since", "2025-04-01")
    sent = run_cli("--config", str(cfg), *since, cwd=tmp_path)
    assert sent.returncode == 0, sent.stderr
    [written] = (tmp_path / "digests").iterdir()
    delivered = len(formats.read(written.read_bytes(), "written").papers)
    assert delivered == 30  # the off-topic paper does not match

    dry = run_cli("--config", str(cfg), *since, "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == b""
    assert dry.stderr.decode() == (f"digest daily: no new papers ({delivered} matching papers filed "
                                   "since 2025-04-01 were already delivered)\n")

    # delivering for real (not a dry run) says the same, not "nothing matched your profiles"
    again = run_cli("--config", str(cfg), "--log-level", "info", *since, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (f"digest daily -> archive: {delivered} matching papers filed since 2025-04-01 were already "
            "delivered; nothing sent").encode() in again.stderr, again.stderr

    # a window whose papers match nothing (nothing delivered there either) still says so
    other = write_config(MINIMAL_CONFIG.replace('"reinforcement learning" OR RLHF OR GRPO', "chromodynamics"),
                         name="other.toml")
    dry = run_cli("--config", str(other), *since, "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr == b"digest daily: no new papers (nothing matched your profiles)\n"

    # a window after the papers' dates: nothing there at all, but the undelivered paper before it
    dry = run_cli("--config", str(cfg), "digest", "daily", "--since", "2025-05-01", "--dry-run",
                  cwd=tmp_path)
    assert re.fullmatch(rb"digest daily: no new papers \(nothing filed since 2025-05-01 \(--since\); "
                        rb"1 stored paper was filed before it\)\n", dry.stderr)
