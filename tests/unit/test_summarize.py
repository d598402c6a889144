"""The ``openai`` summarizer against a local chat-completions stand-in, faults included."""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timezone

import pytest
from deliverkit import free_port, sample_digest
from llmserver import LlmServer

from helpers import run_cli
from watcher.config import SummarizerConfig
from watcher.store import Store
from watcher.present.summarize import Summarizer
from watcher.present.tldr import extractive_tldr

NOW = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)
KEY = "sk-test-5ecret-key-value-0123456789"


def config(base_url: str, **kw) -> SummarizerConfig:
    options = dict(type="openai", base_url=base_url, model="stand-in-7b", api_key_env="WATCHER_TEST_LLM_KEY",
                   max_per_day=200, timeout=5.0)
    options.update(kw)
    return SummarizerConfig(**options)


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("WATCHER_TEST_LLM_KEY", KEY)
    with Store.open(tmp_path / "w.db") as s:
        yield s


def extractive(m) -> str:
    return extractive_tldr(m.paper.abstract)


def test_model_tldrs_are_used_and_asked_for_once_per_paper_ever(server_ok, store):
    digest = sample_digest(3, updated=1)
    Summarizer(config(server_ok.base_url), store, NOW).fill(digest)
    for m in [*digest.matches, *digest.updated]:
        assert m.tldr == f"Stand-in TL;DR: {' '.join(m.paper.title.split())}."
    assert server_ok.calls == 4
    request = server_ok.requests[0]
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["body"]["model"] == "stand-in-7b" and request["body"]["messages"][0]["role"] == "system"
    assert store.tldr_calls("2025-04-12") == 4
    again = sample_digest(3, updated=1)  # a later run, a later digest: the cache answers
    Summarizer(config(server_ok.base_url), store, NOW).fill(again)
    assert server_ok.calls == 4
    assert [m.tldr for m in again.matches] == [m.tldr for m in digest.matches]
    # one Summarizer serves every channel of a digest run: no second call either
    s = Summarizer(config(server_ok.base_url), store, NOW)
    fresh = sample_digest(5, updated=0)
    s.fill(fresh)
    s.fill(sample_digest(5, updated=0))
    assert server_ok.calls == 4 + 1


@pytest.fixture
def server_ok():
    with LlmServer("ok") as s:
        yield s


FAULTS = {  # mode -> (the log line says, remembered so never asked again)
    "429": ("HTTP 429", False),
    "500": ("HTTP 500", False),
    "garbage": ("not JSON", False),
    "shape": ("not a chat completion", False),
    "long": ("too long", True),
    "empty": ("empty", True),
    "echo-key": ("HTTP 401", False),
}


@pytest.mark.parametrize("mode", list(FAULTS))
def test_every_fault_falls_back_to_the_extractive_tldr_with_a_log_line(mode, store, caplog, tmp_path):
    said, remembered = FAULTS[mode]
    with LlmServer(mode) as server:
        digest = sample_digest(2, updated=0)
        with caplog.at_level(logging.INFO, logger="watcher"):
            Summarizer(config(server.base_url), store, NOW).fill(digest)
        assert [m.tldr for m in digest.matches] == [extractive(m) for m in digest.matches]
        first = server.calls  # a 429 stops the calls: the second may not have started
        assert first == 2 or (mode == "429" and first == 1)
        lines = [r.getMessage() for r in caplog.records if "summarizer" in r.getMessage()]
        assert any(said in line and "extractive" in line for line in lines), lines
        assert "2504.07600" in " ".join(lines)
        Summarizer(config(server.base_url), store, NOW).fill(sample_digest(2, updated=0))
        # asked again in a later run, unless remembered or within a 429's Retry-After (60 s here)
        assert server.calls == (first if remembered or mode == "429" else 4)
    assert KEY not in caplog.text
    assert not any(KEY in line for line in store.db.conn.iterdump())


def test_a_refused_connection_falls_back(store, caplog):
    digest = sample_digest(2, updated=0)
    with caplog.at_level(logging.INFO, logger="watcher"):
        Summarizer(config(f"http://127.0.0.1:{free_port()}/v1"), store, NOW).fill(digest)
    assert [m.tldr for m in digest.matches] == [extractive(m) for m in digest.matches]
    assert "cannot connect" in caplog.text and KEY not in caplog.text
    assert store.tldr_cached([m.paper.key for m in digest.matches]) == {}  # tried again later


def test_a_hanging_endpoint_delays_the_digest_by_at_most_the_timeout(store, caplog):
    with LlmServer("hang", hang_seconds=30) as server:
        digest = sample_digest(6, updated=0)
        s = Summarizer(config(server.base_url, timeout=1.0), store, NOW)
        started = time.monotonic()
        with caplog.at_level(logging.INFO, logger="watcher"):
            s.fill(digest)
            s.fill(sample_digest(6, updated=0))  # the next channel: the budget is spent
        elapsed = time.monotonic() - started
        assert elapsed < 10, elapsed  # far below the 30 s the stand-in hangs
        assert [m.tldr for m in digest.matches] == [extractive(m) for m in digest.matches]
        assert server.calls == 1  # the first call alone, never answered: no other started
        assert "timed out" in caplog.text or "no answer within the 1s timeout" in caplog.text


def test_max_per_day_is_a_budget_of_calls(server_ok, store, caplog):
    cfg = config(server_ok.base_url, max_per_day=2)
    digest = sample_digest(3, updated=0)
    with caplog.at_level(logging.INFO, logger="watcher"):
        Summarizer(cfg, store, NOW).fill(digest)
    assert server_ok.calls == 2 and store.tldr_calls("2025-04-12") == 2
    assert [m.tldr.startswith("Stand-in") for m in digest.matches] == [True, True, False]
    assert "daily budget of 2 calls" in caplog.text
    Summarizer(cfg, store, NOW).fill(sample_digest(3, updated=0))  # same day: nothing left
    assert server_ok.calls == 2
    tomorrow = NOW.replace(day=13)
    Summarizer(cfg, store, tomorrow).fill(sample_digest(3, updated=0))
    assert server_ok.calls == 3  # only the paper never summarised


def test_an_unset_api_key_falls_back_without_calling(server_ok, store, caplog, monkeypatch):
    monkeypatch.delenv("WATCHER_TEST_LLM_KEY")
    digest = sample_digest(1, updated=0)
    with caplog.at_level(logging.INFO, logger="watcher"):
        Summarizer(config(server_ok.base_url), store, NOW).fill(digest)
    assert server_ok.calls == 0 and digest.matches[0].tldr == extractive(digest.matches[0])
    assert "WATCHER_TEST_LLM_KEY" in caplog.text


def test_a_paper_without_an_abstract_is_not_sent_to_the_model_and_has_no_tldr(server_ok, store):
    """Titles only (many journal feeds): the model would have nothing to summarise but the title."""
    digest = sample_digest(2, updated=0)
    digest.matches[0].paper.abstract = ""
    Summarizer(config(server_ok.base_url), store, NOW).fill(digest)
    assert server_ok.calls == 1 and store.tldr_calls("2025-04-12") == 1
    assert digest.matches[0].tldr == "" and digest.matches[1].tldr.startswith("Stand-in TL;DR")


def test_extractive_type_never_calls(server_ok, store):
    digest = sample_digest(2, updated=0)
    Summarizer(SummarizerConfig(), store, NOW).fill(digest)
    assert server_ok.calls == 0 and digest.matches[0].tldr == extractive(digest.matches[0])


CONFIG = """
[watcher]
database = "watcher.db"
timezone = "UTC"

[profile.llm-rl]
title = "LLM-RL"
query = '"reinforcement learning" OR RLHF OR GRPO'
max_papers = 5

[digest.daily]
profiles = ["llm-rl"]
schedule = "30 21 * * sun-thu"
formats = ["text", "json"]
channels = ["archive"]

[channel.archive]
type = "file"
path = "out/{digest}-{date}.{ext}"

[summarizer]
type = "openai"
base_url = "BASE_URL"
model = "stand-in-7b"
api_key_env = "WATCHER_TEST_LLM_KEY"
timeout = 5
"""


def test_once_sample_with_the_stand_in_then_with_it_killed(tmp_path):
    env = {"WATCHER_TEST_LLM_KEY": KEY}
    with LlmServer("ok") as server:
        (tmp_path / "config.toml").write_text(CONFIG.replace("BASE_URL", server.base_url))
        first = run_cli("--config", str(tmp_path / "config.toml"), "once", "--sample", env=env)
        assert first.returncode == 0, first.stderr
        papers = json.loads(next((tmp_path / "out").glob("*.json")).read_text())
        assert len(papers) == 5 == server.calls
        assert all(p["tldr"] == f"Stand-in TL;DR: {' '.join(p['title'].split())}." for p in papers)
        assert next((tmp_path / "out").glob("*.txt")).read_text().count("Stand-in") == 0  # text: as ever
    # the stand-in is gone: a fresh sample database still gets its digest, with extractive TL;DRs
    for f in tmp_path.glob("watcher-sample.db*"):
        f.unlink()
    for f in (tmp_path / "out").iterdir():
        f.unlink()
    second = run_cli("--config", str(tmp_path / "config.toml"), "once", "--sample", env=env)
    assert second.returncode == 0, second.stderr
    papers = json.loads(next((tmp_path / "out").glob("*.json")).read_text())
    assert len(papers) == 5 and not any(p["tldr"].startswith("Stand-in") for p in papers)
    assert all(p["tldr"] == extractive_tldr(p["abstract"]) for p in papers)
    assert b"summarizer: cannot connect" in second.stderr and b"extractive" in second.stderr
    assert KEY.encode() not in first.stderr + second.stderr


@pytest.mark.slow  # a real process read by a stand-in streaming 200 MB, its memory peak measured
def test_a_200_mb_answer_is_cut_at_1_mb_and_once_stays_under_300_mb(tmp_path):
    """The summarizer reads at most 1 MB of an answer: a stand-in streaming 200 MB leaves
    `watcher once` under 300 MB of memory (its peak, measured by a parent of its own), and the
    paper gets its extractive TL;DR."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    env = {"WATCHER_TEST_LLM_KEY": KEY}
    with LlmServer("huge") as server:
        (tmp_path / "config.toml").write_text(CONFIG.replace("BASE_URL", server.base_url)
                                              .replace("max_papers = 5", "max_papers = 1"))
        # a parent process whose only child is watcher: its children's peak is watcher's
        probe = ("import resource, subprocess, sys; "
                 "r = subprocess.run([sys.executable, '-m', 'watcher', '--config', sys.argv[1], 'once', "
                 "'--sample'], capture_output=True); sys.stderr.buffer.write(r.stderr); "
                 "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        full = dict(os.environ, PYTHONPATH=str(REPO), **env)
        r = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "config.toml")], env=full,
                           capture_output=True, timeout=120, cwd=tmp_path)
        code, peak_kb = map(int, r.stdout.split())
        assert code == 0, r.stderr
        assert server.calls == 1
        print(f"watcher once: peak {peak_kb / 1024:.0f} MB")
        assert peak_kb < 300 * 1024, f"peak {peak_kb / 1024:.0f} MB"
        assert b"more than 1,048,576 bytes" in r.stderr
    papers = json.loads(next((tmp_path / "out").glob("*.json")).read_text())
    assert len(papers) == 1 and papers[0]["tldr"] == extractive_tldr(papers[0]["abstract"])


def test_a_429_stops_the_calls_for_the_run_and_its_retry_after_is_honoured(store, caplog):
    from watcher.present import summarize

    with LlmServer("429") as server:
        digest = sample_digest(12, updated=0)
        with caplog.at_level(logging.INFO, logger="watcher"):
            Summarizer(config(server.base_url), store, NOW).fill(digest)
        assert [m.tldr for m in digest.matches] == [extractive(m) for m in digest.matches]
        first = server.calls
        assert first == 1  # the first call goes alone: a 429 costs one call, not WORKERS
        assert "retry after 60s" in caplog.text and "not asked" in caplog.text
        Summarizer(config(server.base_url), store, NOW).fill(sample_digest(12, updated=0))
        assert server.calls == first  # the next digest of the run does not call
        assert "not asked again for" in caplog.text
        assert store.tldr_cached([m.paper.key for m in digest.matches]) == {}  # tried later
        summarize._PAUSED.clear()  # a later process (cron's next `watcher once`) ...
        Summarizer(config(server.base_url), store, NOW).fill(sample_digest(12, updated=0))
        assert server.calls == first  # ... does not ask before the recorded Retry-After either
        until = store.wait_until(f"summarizer {server.base_url}")
        assert until is not None and 50 < (until - datetime.now(timezone.utc)).total_seconds() <= 60
        store.wait_set(f"summarizer {server.base_url}", 0, "passed")  # the wait ends now
        summarize._PAUSED[server.base_url] = 0.0  # the Retry-After has passed
        Summarizer(config(server.base_url), store, NOW).fill(sample_digest(12, updated=0))
        assert server.calls > first  # asked again


def test_retry_after_reads_seconds_and_dates_within_a_day():
    from watcher.present.summarize import DEFAULT_RETRY_AFTER, retry_after

    assert retry_after("30") == 30 and retry_after(" 2.5 ") == 2.5
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412400.0) == 80.0
    assert retry_after(None) == retry_after("soon") == DEFAULT_RETRY_AFTER
    assert retry_after("99999999") == 86400.0 and retry_after("-5") == 0.0
