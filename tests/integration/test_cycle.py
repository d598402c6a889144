"""One whole cycle as a user runs it: ``watcher once --sample`` and friends."""

from __future__ import annotations

import shutil
import sqlite3

from conftest import REPO
from helpers import run_cli
from watcher import formats


def sample_setup(tmp_path):
    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    return tmp_path


# What the shipped samples (watcher/samples/) give, counted from the files themselves:
# - the two corpus files hold 330 lines with 317 distinct arXiv ids; the two HF Daily Papers
#   files 18 papers, 5 of them not in the corpus; the seed digest 30 papers without ids, of
#   which 6 have the title of a corpus paper (lower-cased, punctuation dropped) and merge into
#   it. Stored: 317 + 5 + (30 - 6) = 346 papers, 24 of them keyed by title.
# - 39 of them match the llm-rl profile of config.toml in the 3-day lookback (all 346 are in
#   it); its max_papers = 30 keeps the best 30.
# 346 from arXiv, HF and the seed; 5 from the bioRxiv and journal listings (6 entries: a preprint
# and its journal version are one paper)
SAMPLE_PAPERS, SAMPLE_TITLE_KEYS, SAMPLE_DIGEST = 351, 5, 30  # 19 title-only seed papers get their arXiv ids (samples/README.md)


def ledger(db):
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT digest, channel, paper FROM deliveries").fetchall()


def test_once_sample_delivers_a_text_digest_then_nothing_new(tmp_path):
    sample_setup(tmp_path)
    r = run_cli("once", "--sample", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    files = sorted(p.name for p in (tmp_path / "digests").iterdir())
    assert "daily-2025-04-12.txt" in files
    written = (tmp_path / "digests" / "daily-2025-04-12.txt").read_bytes()
    listing = formats.read(written, "daily-2025-04-12.txt")
    assert listing.title == "LLM-RL" and len(listing.papers) == SAMPLE_DIGEST
    assert all(p.published for p in listing.papers)  # no empty Date: line
    # piped, a brief: a line per paper and where the whole digest is, not 48 KB of it
    lines = r.stdout.decode().splitlines()
    assert lines[0] == f"LLM-RL - 2025-04-12: {SAMPLE_DIGEST} papers" and len(r.stdout) < 5000
    assert [l.split(". ", 1)[1] for l in lines[1:-1]] == [p.title for p in listing.papers]
    assert lines[-1].startswith("the whole digest: digests/daily-2025-04-12.txt")
    delivered = ledger(tmp_path / "watcher-sample.db")
    assert len(delivered) == len(listing.papers)
    assert not (tmp_path / "watcher.db").exists()  # the sample never touches the real database

    again = run_cli("once", "--sample", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == b""
    assert b"digest daily: no new papers (nothing new" in again.stderr  # said, on stderr
    assert sorted(p.name for p in (tmp_path / "digests").iterdir()) == files
    assert ledger(tmp_path / "watcher-sample.db") == delivered


def test_sample_papers_are_newest_first_and_merged_across_listings(tmp_path):
    sample_setup(tmp_path)
    r = run_cli("once", "--sample", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0
    text = r.stdout.decode().split("\n<!DOCTYPE html>", 1)[0]  # text, then html (the digest's formats)
    papers = formats.read(text.encode(), "dry").papers
    dates = [p.published for p in papers]
    assert None not in dates and b"\nDate:\n" not in r.stdout  # every entry has a date (docs/formats.md)
    assert dates == sorted(dates, reverse=True)
    with sqlite3.connect(tmp_path / "watcher-sample.db") as conn:
        # the seed digest's id-less entries merged into the corpus entries that carry ids
        n_title_keys = conn.execute("SELECT count(*) FROM papers WHERE key LIKE 'title:%'").fetchone()[0]
        vlm = conn.execute("SELECT key FROM papers WHERE title LIKE 'VLM-R1:%'").fetchall()
        n_papers = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
    assert len(vlm) == 1
    assert (n_papers, n_title_keys) == (SAMPLE_PAPERS, SAMPLE_TITLE_KEYS)


def test_dry_run_sends_and_records_nothing(tmp_path):
    sample_setup(tmp_path)
    r = run_cli("once", "--sample", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.startswith(b"LLM-RL - 2025-04-12\n\n")
    assert r.stdout.count(b"LLM-RL - 2025-04-12\n\n") == 1 and r.stdout.count(b"<!DOCTYPE html>") == 1
    err = r.stderr.decode()
    assert b"==>" not in r.stdout
    assert err.count("==> digest daily, format text") == 1 and err.count("==> digest daily, format html") == 1
    assert not (tmp_path / "digests").exists()
    assert ledger(tmp_path / "watcher-sample.db") == []


def test_a_failed_delivery_is_retried_next_run_and_then_never_repeated(tmp_path):
    sample_setup(tmp_path)
    (tmp_path / "digests").write_text("a file where the folder should be")
    r = run_cli("once", "--sample", cwd=tmp_path)
    assert r.returncode == 1
    assert b"digest daily -> channel archive failed: channel archive: cannot write" in r.stderr
    assert b"folder digests cannot be created: digests is not a folder" in r.stderr  # the cause, not "File exists"
    assert ledger(tmp_path / "watcher-sample.db") == []

    (tmp_path / "digests").unlink()
    r = run_cli("once", "--sample", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    first = ledger(tmp_path / "watcher-sample.db")
    assert len(first) == SAMPLE_DIGEST
    r = run_cli("once", "--sample", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == b""
    assert ledger(tmp_path / "watcher-sample.db") == first


def test_unknown_digest_name_is_a_usage_error(tmp_path):
    sample_setup(tmp_path)
    r = run_cli("once", "--sample", "--digest", "nope", cwd=tmp_path)
    assert r.returncode == 2
    assert b"no digest named 'nope'" in r.stderr


def test_help_lists_every_command():
    r = run_cli("--help")
    assert r.returncode == 0
    for command in ("once", "fetch", "digest", "convert", "check", "test-deliver", "status", "explain"):
        assert command in r.stdout.decode()


def test_every_option_of_every_command_says_what_it_does():
    """`watcher CMD --help` explains each option (a bare `--to [text|json]` left users guessing)."""
    import click

    from watcher.cli import cli

    def bare(cmd, path):
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.help and p.name != "help":
                yield f"{' '.join(path)} {'/'.join(p.opts)}"
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from bare(sub, [*path, name])

    assert list(bare(cli, ["watcher"])) == []
