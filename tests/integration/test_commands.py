"""status, digest, explain and test-deliver against a database filled from the seed digest."""

from __future__ import annotations

import json
import shutil
import re
from datetime import datetime, timedelta, timezone

import pytest

from conftest import MINIMAL_CONFIG, REPO, SEED_DIGEST
from helpers import run_cli
from watcher import formats
from watcher.store import Store


@pytest.fixture
def filled(write_config, tmp_path):
    """A config and a database holding the seed digest's 30 papers, stored 'now'."""
    cfg = write_config(MINIMAL_CONFIG)
    papers = formats.read(SEED_DIGEST.read_bytes(), "seed").papers
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert(papers, datetime.now(timezone.utc))
    return cfg


@pytest.mark.parametrize("args", [
    ["status"],
    ["explain", "2504.07615", "--profile", "llm-rl"],
    ["digest", "daily", "--dry-run"],
    ["digest", "daily", "--dry-run", "--to", "html"],
], ids=" ".join)
def test_reading_commands_before_any_run_say_how_to_start_and_create_nothing(write_config, tmp_path, args):
    cfg = write_config(MINIMAL_CONFIG)
    r = run_cli("--config", str(cfg), *args, cwd=tmp_path)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "no database yet (run 'watcher fetch' or 'watcher once' first)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_digest_since_delivers_once_and_status_shows_it(filled, tmp_path):
    r = run_cli("--config", str(filled), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    written = list((tmp_path / "digests").iterdir())
    assert len(written) == 1
    listing = formats.read(written[0].read_bytes(), "written")
    assert listing.title == "LLM-RL" and len(listing.papers) >= 20
    again = run_cli("--config", str(filled), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert again.returncode == 0
    assert len(list((tmp_path / "digests").iterdir())) == 1  # nothing twice
    status = run_cli("--config", str(filled), "status", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    out = status.stdout.decode()
    assert "30 papers stored" in out
    assert "daily: last run" in out and "next " in out
    assert "-> archive: last delivery" in out and f"({len(listing.papers)} papers)" in out


@pytest.mark.parametrize("stored", [0, 30], ids=["empty", "full"])
def test_file_channel_text_always_reads_back(write_config, tmp_path, stored):
    """A file channel's .txt is a text digest (docs/formats.md, read and written), empty or not: the
    e-mail's tails (no papers, size limit) never reach it."""
    cfg = write_config(MINIMAL_CONFIG.replace('channels = ["archive"]',
                                              'channels = ["archive"]\nsend_empty = true'))
    papers = formats.read(SEED_DIGEST.read_bytes(), "seed").papers[:stored]
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert(papers, datetime.now(timezone.utc))
    r = run_cli("--config", str(cfg), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [written] = list((tmp_path / "digests").iterdir())
    data = written.read_bytes()
    listing = formats.read(data, "written")
    assert listing.title == "LLM-RL"
    assert (len(listing.papers) == 0) == (stored == 0)
    from watcher.formats import text as text_format

    assert text_format.write(listing.title, listing.date, listing.papers).encode() == data


def test_status_shows_every_time_in_the_config_time_zone(write_config, tmp_path):
    from watcher.config import load_config
    from watcher.cycle.status import status_text

    cfg = load_config(write_config(MINIMAL_CONFIG.replace('timezone = "UTC"', 'timezone = "Asia/Kolkata"')
                                   + '[source.api]\ntype = "arxiv"\nquery = "cat:cs.LG"\n'
                                   + '[source.rss]\ntype = "arxiv-rss"\ncategories = ["cs.LG"]\n'))
    t0 = datetime(2025, 4, 10, 12, 0, tzinfo=timezone.utc)
    with Store.open(cfg.settings.database) as store:
        store.source_ok("rss", {}, {"new": 1, "updated": 0, "unchanged": 0}, t0)
        store.source_failed("api", "HTTP 503", t0 + timedelta(hours=1))
        store.source_failed("api", "HTTP 503", t0 + timedelta(hours=2))
        store.digest_ran("daily", t0, True)
        store.delivery_failed("daily", "archive", "disk full", t0 + timedelta(hours=3))
    out = status_text(cfg, t0 + timedelta(hours=4))
    stamps = re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)?", out)
    assert len(stamps) >= 5, out
    assert all(s.endswith("+05:30") for s in stamps), out
    assert "rss: last fetch 2025-04-10T17:30:00+05:30" in out
    # the store keeps the latest failure of a streak, so status says so rather than "since"
    assert "FAILING (2 in a row), last failed at 2025-04-10T19:30:00+05:30: HTTP 503" in out
    assert "FAILED at 2025-04-10T20:30:00+05:30: disk full" in out


def test_digest_dry_run_prints_the_chosen_format(filled, tmp_path):
    r = run_cli("--config", str(filled), "digest", "daily", "--since", "2025-04-01", "--dry-run",
                "--to", "markdown", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# LLM-RL — ".encode())
    assert b"==>" not in r.stdout
    assert b"==> digest daily, format markdown (dry run, not sent" in r.stderr
    assert not (tmp_path / "digests").exists()


TWO_CHANNELS = MINIMAL_CONFIG.replace('channels = ["archive"]', 'channels = ["archive", "copy"]') + """
[channel.copy]
type = "file"
path = "copies/{digest}-{date}.{ext}"
"""


@pytest.fixture
def two_channels(filled, write_config):
    """The filled database, and its digest delivered through two file channels."""
    return write_config(TWO_CHANNELS)


def test_dry_run_json_is_one_array_whatever_the_number_of_channels(two_channels, tmp_path):
    r = run_cli("--config", str(two_channels), "digest", "daily", "--since", "2025-04-01",
                "--dry-run", "--to", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    papers = json.loads(r.stdout)  # what `| python -m json.tool` needs
    assert isinstance(papers, list) and len(papers) >= 20
    assert len({p["title"] for p in papers}) == len(papers)
    assert all(p["tldr"] and len(p["tldr"]) <= 200 for p in papers)  # docs/channels.md
    assert r.stderr.decode().count("==> digest daily, format json") == 1
    assert not (tmp_path / "digests").exists() and not (tmp_path / "copies").exists()


def test_dry_run_text_is_the_text_digest_the_channels_then_get(two_channels, tmp_path):
    dry = run_cli("--config", str(two_channels), "digest", "daily", "--since", "2025-04-01",
                  "--dry-run", "--to", "text", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    real = run_cli("--config", str(two_channels), "digest", "daily", "--since", "2025-04-01",
                   cwd=tmp_path)
    assert real.returncode == 0, real.stderr
    [archived] = (tmp_path / "digests").iterdir()
    assert dry.stdout == archived.read_bytes() + b"\n"


def test_dry_run_shows_the_union_of_what_the_channels_would_get(filled, write_config, tmp_path):
    """A paper already delivered through one channel still shows while another has not had it."""
    r = run_cli("--config", str(filled), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [archived] = (tmp_path / "digests").iterdir()
    two = write_config(TWO_CHANNELS)
    dry = run_cli("--config", str(two), "digest", "daily", "--since", "2025-04-01", "--dry-run",
                  "--to", "text", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == archived.read_bytes() + b"\n"  # all of them: the copy channel had none


def test_dry_run_with_nothing_to_show_says_so_on_stderr(filled, tmp_path):
    r = run_cli("--config", str(filled), "digest", "daily", "--since", "2025-04-01", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    dry = run_cli("--config", str(filled), "digest", "daily", "--since", "2025-04-01", "--dry-run",
                  "--to", "json", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == b""
    assert b"digest daily: no new papers (30 matching papers filed since 2025-04-01 were already delivered)" in dry.stderr


def test_dry_run_prints_each_format_its_channels_send_once(filled, write_config, tmp_path):
    """Without --to (as `once --dry-run`, which shares this code): each format once."""
    cfg = write_config(TWO_CHANNELS.replace('"archive", "copy"', '"archive", "copy", "hook"') + """
[channel.hook]
type = "webhook"
url = "http://127.0.0.1:9/hook"
""")
    r = run_cli("--config", str(cfg), "digest", "daily", "--since", "2025-04-01", "--dry-run",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    assert err.count("==> ") == 2
    assert "==> digest daily, format text (dry run, not sent; channels: archive, copy)" in err
    assert "==> digest daily, format json (dry run, not sent; channels: hook)" in err
    text, sep, rest = r.stdout.decode().partition("\n[\n")
    assert sep and formats.read(text.encode(), "dry").title == "LLM-RL"
    assert isinstance(json.loads(sep + rest), list)


def test_dry_run_of_an_empty_digest_with_send_empty_shows_what_would_be_sent(write_config, tmp_path):
    cfg = write_config(MINIMAL_CONFIG.replace('channels = ["archive"]',
                                              'channels = ["archive"]\nsend_empty = true'))
    Store.open(tmp_path / "watcher.db").close()  # a database with nothing new in it
    r = run_cli("--config", str(cfg), "digest", "daily", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert formats.read(r.stdout.rstrip(b"\n"), "dry").papers == []
    assert b"==> digest daily, format text (dry run, not sent; channels: archive; empty: " in r.stderr


def test_dry_run_help_says_which_papers_it_shows(tmp_path):
    out = run_cli("digest", "--help", cwd=tmp_path).stdout.decode()
    assert "union" in " ".join(out.split())


def test_explain_gives_score_and_reasons(filled, tmp_path):
    r = run_cli("--config", str(filled), "explain", "VLM-R1: A Stable and Generalizable R1-style "
                "Large Vision-Language Model", "--profile", "llm-rl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "profile llm-rl: score" in out and "(selected)" in out
    assert "reinforcement learning" in out
    missing = run_cli("--config", str(filled), "explain", "2501.99999", "--profile", "llm-rl", cwd=tmp_path)
    assert missing.returncode == 2 and b"no such paper" in missing.stderr


def test_test_deliver_sends_three_papers_through_a_file_channel(write_config, tmp_path):
    cfg = write_config(MINIMAL_CONFIG)
    r = run_cli("--config", str(cfg), "test-deliver", "archive", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    [written] = list((tmp_path / "digests").iterdir())
    listing = formats.read(written.read_bytes(), "test")
    assert len(listing.papers) == 3
    assert not (tmp_path / "watcher.db").exists()  # nothing recorded


@pytest.mark.parametrize("args", [
    ["explain", "VLM-R1: A Stable and Generalizable R1-style Large Vision-Language Model", "--profile", "llm-rl"],
    ["status"],
    ["digest", "daily", "--dry-run", "--since", "2025-04-01"],
], ids=lambda a: a[0])
def test_a_reader_that_stops_early_ends_the_command_quietly(filled, tmp_path, args):
    """``watcher explain ... | head -1``: the pipe closes before watcher is done writing."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    env = dict(os.environ, PYTHONPATH=str(REPO))
    p = subprocess.Popen([sys.executable, "-m", "watcher", "--config", str(filled), *args], cwd=tmp_path,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 1  # as Python itself exits on a broken pipe
    assert not [line for line in err.splitlines() if not line.startswith("==> digest")], err


def test_after_the_quick_start_the_reading_commands_use_the_sample_database(tmp_path):
    """``watcher once --sample`` keeps its own database: explain, rate, ratings, saved and
    status find the papers just shown there (saying so), as serve does."""
    import shutil

    from conftest import REPO

    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    assert run_cli("once", "--sample", cwd=tmp_path).returncode == 0
    note = "watcher: using the sample database watcher-sample.db (from 'watcher once --sample')\n"
    steps = [(["explain", "2504.07615", "--profile", "llm-rl"], "VLM-R1"),
             (["rate", "up", "2504.07615"], "2504.07615: rated up for llm-rl"),
             (["rate", "save", "2504.07615"], "2504.07615: saved"),
             (["ratings"], "up    llm-rl  2504.07615"),
             (["saved"], "2504.07615  VLM-R1"),
             (["status"], "database watcher-sample.db")]
    for args, shown in steps:
        r = run_cli(*args, cwd=tmp_path)
        assert r.returncode == 0, (args, r.stderr)
        assert shown in r.stdout.decode() and r.stderr.decode() == note, args
    assert not (tmp_path / "watcher.db").exists()
    # digest (it delivers) never takes the sample's database unasked; a dry run says where it is
    r = run_cli("digest", "daily", "--dry-run", "--since", "2025-04-11", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.decode() == (
        "watcher: watcher.db: no database yet; the sample's papers are in watcher-sample.db: add --sample\n")
    with Store.open(tmp_path / "watcher.db") as store:  # a real database from now on: it is used
        store.upsert(formats.read(SEED_DIGEST.read_bytes(), "seed").papers, datetime.now(timezone.utc))
    r = run_cli("ratings", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == b""  # the empty list, and on stderr why
    assert r.stderr.decode() == ("no ratings yet (rate with 'watcher rate up|down PAPER' or a digest's "
                                 "rating links)\n")
    r = run_cli("ratings", "--sample", cwd=tmp_path)
    assert b"2504.07615" in r.stdout and r.stderr.decode() == note
    r = run_cli("explain", "2504.07954", cwd=tmp_path)  # a sample paper, asked of the real database
    assert r.returncode == 2 and r.stderr.decode().endswith(
        "; the sample's papers are in watcher-sample.db: add --sample\n")
    assert run_cli("explain", "2504.07954", "--sample", cwd=tmp_path).returncode == 0
    r = run_cli("rate", "up", "2504.07954", "--profile", "llm-rl", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.decode().endswith(
        "; the sample's papers are in watcher-sample.db: add --sample\n"), r.stderr


def test_a_title_with_line_breaks_stays_one_line_per_paper(write_config, tmp_path):
    """A JSON listing can carry CR/LF inside a title: rate, ratings and saved print one line
    per paper, as the text digest does."""
    from watcher.models import Paper

    cfg = write_config(MINIMAL_CONFIG)
    broken = Paper(title="GRPO for\r\nrobots:\n a study", abstract="We use GRPO.", arxiv_id=None,
                   url="https://example.org/p")
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert([broken], datetime.now(timezone.utc))
    title = "GRPO for robots: a study"
    for args, lines in [(["rate", "save", title], [f"{title}: saved"]),
                        (["rate", "up", title], [f"{title}: rated up for llm-rl"]),
                        (["saved"], None), (["saved", "--to", "markdown"], None), (["ratings"], None)]:
        r = run_cli("--config", str(cfg), *args, cwd=tmp_path)
        assert r.returncode == 0, (args, r.stderr)
        out = r.stdout.decode()
        assert out.count("\n") == 1 and "\r" not in out and title in out, (args, out)
        assert lines is None or out.splitlines() == lines


def test_an_empty_digest_says_when_every_source_failed(write_config, tmp_path):
    cfg = write_config(MINIMAL_CONFIG.replace("[profile.llm-rl]", '[source.lab]\ntype = "listing"\n'
                                              'path = "gone.json"\n\n[profile.llm-rl]'))
    r = run_cli("--config", str(cfg), "once", "--dry-run", cwd=tmp_path)
    assert r.returncode == 1
    assert "digest daily: no new papers (every source failed; see watcher status)" in r.stderr.decode()
    r = run_cli("--config", str(cfg), "digest", "daily", "--dry-run", cwd=tmp_path)  # the last fetch
    assert r.stderr.decode() == "digest daily: no new papers (every source failed; see watcher status)\n"
    r = run_cli("--config", str(cfg), "fetch", cwd=tmp_path)
    assert r.returncode == 1 and r.stdout.decode() == "lab: failed, nothing fetched (its error is on stderr)\n"
    assert r.stderr.decode().count("gone.json") == 1  # the reason, once
    assert run_cli("--config", str(cfg), "once", cwd=tmp_path).returncode == 1  # recorded this time
    status = run_cli("--config", str(cfg), "status", cwd=tmp_path).stdout.decode()
    daily = status[status.index("digests:"):]
    assert "(degraded)" in daily and "(ok)" not in daily, daily  # nothing could arrive: not "ok"
    assert daily.count("every source failed") == 1, daily


def test_an_empty_digest_says_when_the_stored_papers_are_older_than_its_lookback(filled, tmp_path):
    """The seed papers were filed in April 2025: a first digest reaching back 3 days has none."""
    r = run_cli("--config", str(filled), "digest", "daily", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == b""
    first = (datetime.now(timezone.utc) - timedelta(days=3)).date()  # the config's time zone is UTC
    assert r.stderr.decode() in [f"digest daily: no new papers (nothing filed since {day} (lookback 3d); "
                                 "30 stored papers were filed before it)\n"
                                 for day in (first, first + timedelta(days=1))]  # at midnight


def test_run_help_mentions_the_web_inbox_it_can_serve():
    r = run_cli("run", "--help")
    assert r.returncode == 0 and b"[web].serve" in r.stdout


def test_status_on_the_sample_shows_its_source_and_no_missed_run(tmp_path):
    """Right after the quick start's `once --sample`: the sample source and its fetch, the
    digest's run, and no "missed its run" for a digest the sample ran once, on no schedule."""
    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    assert run_cli("once", "--sample", cwd=tmp_path).returncode == 0
    out = run_cli("status", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert "  sample: last fetch 2025-04-12" in text and "arxiv-ml" not in text
    assert "missed its run" not in text and "overdue" not in text
    assert "not scheduled (the sample" in text and "-> archive: last delivery" in text


def test_counts_of_one_are_singular_in_the_log_and_status(write_config, tmp_path):
    """One paper delivered and stored: "delivered 1 paper", "1 paper stored", "(1 paper)"."""
    cfg = write_config(MINIMAL_CONFIG)
    papers = formats.read(SEED_DIGEST.read_bytes(), "seed").papers
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert([p for p in papers if "Reinforcement Learning" in p.title][:1], datetime.now(timezone.utc))
    r = run_cli("--config", str(cfg), "--log-level", "info", "digest", "daily", "--since", "2025-04-01",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "digest daily -> archive: delivered 1 paper\n" in r.stderr.decode(), r.stderr
    out = run_cli("--config", str(cfg), "status", cwd=tmp_path).stdout.decode()
    assert "  1 paper stored" in out and "-> archive: last delivery" in out and "(1 paper)" in out, out
    assert "1 papers" not in out
    # and the web's profile page over the same database
    import warnings

    with warnings.catch_warnings():  # newer Starlette suggests httpx2 for its test client; httpx works
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from webkit import app_for
    from watcher.config import load_config

    with TestClient(app_for(load_config(cfg), tmp_path / "watcher.db")) as client:
        page = " ".join(re.sub(r"<[^>]+>", " ", client.get("/profiles/llm-rl").text).split())
    assert re.search(r"1 paper filed from \S+ to \S+ matches the profile now and 0 were delivered", page), page
    assert "1 of the papers that match now was not delivered" in page, page


def test_status_sample_beside_a_real_database_reads_the_sample_on_its_own_day(tmp_path):
    """`status --sample` while a real (empty) database exists too: the sample's source and its
    papers, its run on the sample's day, nothing judged against today's clock."""
    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    assert run_cli("once", "--sample", cwd=tmp_path).returncode == 0
    Store.open(tmp_path / "watcher.db").close()
    text = run_cli("status", "--sample", cwd=tmp_path).stdout.decode()
    stored = re.search(r"  (\d+) papers stored", text)
    assert stored and f"  sample: last fetch 2025-04-12T23:59:00+02:00 ({stored[1]} new" in text, text
    assert text.count(f"; {stored[1]} papers\n") == 1 and "arxiv-ml" not in text, text
    assert "missed its run" not in text and "overdue" not in text and "last run 2025-04-12" in text, text
    real = run_cli("status", cwd=tmp_path).stdout.decode()
    assert "arxiv-ml: last fetch never; 0 papers" in real and "sample:" not in real


def test_the_reading_list_names_a_journal_paper_by_its_doi(tmp_path):
    """A saved paper without an arXiv id is listed by its DOI, not by "-" (QA)."""
    import shutil

    from conftest import REPO

    shutil.copy(REPO / "config.toml", tmp_path / "config.toml")
    assert run_cli("once", "--sample", cwd=tmp_path).returncode == 0
    doi = "10.1038/s42256-025-01022-6"  # the shipped journal sample's article
    assert run_cli("rate", "save", doi, cwd=tmp_path).returncode == 0
    listed = run_cli("saved", cwd=tmp_path).stdout.decode()
    assert listed.startswith(f"doi:{doi}  ") and "\n-  " not in listed, listed


@pytest.mark.parametrize("command", [("digest", "daily", "--dry-run"), ("fetch",)])
def test_an_empty_since_is_a_usage_error_not_no_since(filled, tmp_path, command):
    r = run_cli("--config", str(filled), *command, "--since", "", cwd=tmp_path)
    assert r.returncode == 2 and b"--since: '' is not a date (YYYY-MM-DD)" in r.stderr, r.stderr
