"""What ``watcher once`` and ``watcher digest`` tell a person at a terminal, run on a real
pseudo-terminal, against what a pipe or cron gets (the whole digest, byte for byte; silence)."""

from __future__ import annotations

import os
import re
import pty
import subprocess
import sys
from datetime import datetime, timezone

from conftest import REPO, SEED_DIGEST
from helpers import run_cli
from watcher import formats


def on_terminal(*args: str, cwd, columns: int = 100) -> tuple[int, str]:
    """Run ``python -m watcher ARGS`` with stdout and stderr on a pseudo-terminal ``columns``
    wide (its window size, as a terminal pane sets it); its exit status and everything it
    printed."""
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in ("WATCHER_CONFIG", "COLUMNS", "LINES"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "watcher", *args], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode().replace("\r\n", "\n")


def test_the_quick_start_on_a_terminal_shows_titles_and_tldrs_not_the_whole_digest(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    code, out = on_terminal("once", "--sample", cwd=tmp_path)
    assert code == 0, out
    assert "LLM-RL - 2025-04-12: 30 papers" in out
    assert out.count("\n 1. ") == 1 and "\n30. " in out
    assert "Authors:" not in out and "Date:" not in out  # the skim, not the digest
    assert out.count("\n    ") >= 25  # a TL;DR under (almost) every title
    assert "the whole digest: " in out and "digests/daily-2025-04-12.txt" in out
    assert len(out.splitlines()) < 150  # wrapped to 100 columns; the whole digest is 200+ lines
    whole = (tmp_path / "digests" / "daily-2025-04-12.txt").read_bytes()
    assert len(formats.read(whole, "file").papers) == 30
    for line in out.splitlines():
        if line[:4].strip().rstrip(".").isdigit():
            assert line[4:] in whole.decode()  # every title shown is one of the digest's


def test_the_quick_start_is_wrapped_to_the_terminal_keeping_its_indent(tmp_path):
    """An 80-column pane: no line past 80 columns, no word broken, a title's and a TL;DR's
    next lines indented as their first."""
    assert run_cli("init", cwd=tmp_path).returncode == 0
    code, out = on_terminal("once", "--sample", cwd=tmp_path, columns=80)
    assert code == 0, out
    lines = out.splitlines()
    assert max(len(line) for line in lines if not line.startswith("the whole digest")) <= 80
    whole = formats.read((tmp_path / "digests" / "daily-2025-04-12.txt").read_bytes(), "file")
    titles, current = [], None
    for line in lines[2:]:
        if line[:4].strip().rstrip(".").isdigit() and line[2:4] == ". ":
            current = [line[4:]]
            titles.append(current)
        elif line.startswith("    ") and current is not None and not line.startswith("     "):
            current.append(line[4:])
        else:
            current = None
    assert len(titles) == 30
    wrapped = [t for t in titles if len(t) > 1]
    assert wrapped  # some titles are longer than a line
    for parts, paper in zip(titles, whole.papers):
        # a title's lines, then its TL;DR's: the title is their start, split only at spaces
        assert " ".join(parts).startswith(" ".join(paper.title.split())), (parts, paper.title)


def listing_setup(folder, n: int):
    """A config reading a listing file of ``n`` seed papers (announced today) into a file channel."""
    seed = formats.read(SEED_DIGEST.read_bytes(), "seed")
    entries = [f"{p.title}\n\nAuthors:{', '.join(p.authors)}\nDate:{p.published:%Y-%m-%d %H:%M:%S}\n\n{p.abstract}"
               for p in seed.papers[:n]]
    (folder / "listing.txt").write_text("\n\n".join([f"LLM-RL - {datetime.now(timezone.utc).date()}"] + entries))
    text = (REPO / "config.toml").read_text()
    start, end = text.index("[source.arxiv-ml]"), text.index("# Reinforcement learning for")
    (folder / "config.toml").write_text(
        text[:start] + '[source.local]\ntype = "listing"\npath = "listing.txt"\n\n' + text[end:])


def test_a_real_once_says_one_line_per_digest_on_a_terminal_and_nothing_under_cron(tmp_path):
    listing_setup(tmp_path, 8)
    code, out = on_terminal("once", cwd=tmp_path)
    assert code == 0, out
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("digest daily: delivered ")
    assert lines[0].endswith(" papers to archive")
    code, out = on_terminal("once", cwd=tmp_path)
    assert code == 0
    # it was all delivered a moment ago: not "nothing new was announced"
    assert re.fullmatch(r"digest daily: no new papers \(nothing new since the last delivery "
                        r"\(\d{4}-\d\d-\d\d \d\d:\d\d\)\)", out.strip()), out
    code, out = on_terminal("once", "--due", cwd=tmp_path)
    assert code == 0 and out.strip() == "no digest is due"

    cron = tmp_path / "cron"  # the same run with output to a pipe, as cron runs it: silent
    cron.mkdir()
    listing_setup(cron, 8)
    r = run_cli("once", cwd=cron)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    assert any((cron / "digests").iterdir())


def test_digest_sample_builds_from_the_sample_database(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    for command in (["digest", "daily", "--sample", "--dry-run"], ["site", "out", "--sample"]):
        before = run_cli(*command, cwd=tmp_path)  # one line: no "using the sample database" first
        assert before.returncode == 1 and before.stderr.decode() == (
            "watcher: watcher-sample.db: no sample database yet (run 'watcher once --sample' first)\n")
    missing = run_cli("digest", "daily", "--sample", "--dry-run", cwd=tmp_path)
    assert missing.returncode == 1 and b"watcher-sample.db: no sample database yet (run 'watcher once --sample' first)" in missing.stderr
    assert run_cli("once", "--sample", cwd=tmp_path).returncode == 0
    r = run_cli("digest", "daily", "--sample", "--since", "2025-04-10", "--dry-run", "--to", "text",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    listing = formats.read(r.stdout, "stdout")
    assert listing.title == "LLM-RL" and str(listing.date) == "2025-04-12" and listing.papers
    again = run_cli("digest", "daily", "--sample", "--dry-run", cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == b""
    assert b"digest daily: no new papers" in again.stderr
    assert not (tmp_path / "watcher.db").exists()  # the sample never touches the real database
