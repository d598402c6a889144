"""benchmarks/run.py keeps working: its --quick mode runs every section at tiny sizes.

Timings belong to the benchmark, not here: this only checks that the script runs and prints
every figure of issues 8 and 14 as ``name value unit``, and that
every judged target is a ratio or a bound independent of CPU speed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import REPO

import pytest

pytestmark = pytest.mark.slow  # runs the benchmark scripts: the full suite (CI) runs it, not the inner loop

FIGURES = [
    "ingest_atom_per_s", "ingest_baseline_per_s", "ingest_speedup", "match_per_s",
    "once_sample_s", "once_sample_again_s", "cli_start_s", "daemon_rss_mb",
    "daemon_rss_growth_pct", "match_speedup", "match_scale_ratio", "python_start_s",
    "once_sample_ratio", "once_sample_again_ratio", "cli_start_ratio",
    *(f"scale_{stage}_{what}" for stage in ("parse", "store", "match", "render")
      for what in ("us_per_paper_100", "us_per_paper_1k", "ratio_1k_100")),
]


def test_run_quick_prints_every_figure():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("WATCHER_CONFIG", None)
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick"], env=env,
                       capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    values = {}
    for line in lines:
        m = re.match(r"(\w+) (\S+) (\S+)", line)
        if m and not line.startswith("#"):
            values[m.group(1)] = m.group(2)
    for name in FIGURES:
        assert name in values, f"{name} missing from:\n{r.stdout}"
        value = float(values[name])
        assert value > 0 or name == "daemon_rss_growth_pct", f"{name} = {value}"
    assert lines[-1] == "targets: not judged (--quick)"
    # issue 14: absolute throughputs and times are printed, never judged
    judged = {m.group(1) for line in lines if (m := re.match(r"(\w+) .*\(target ", line))}
    assert judged == JUDGED, judged


def eval_feedback(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / "eval_feedback.py"), *args],
                          env=env, capture_output=True, text=True, timeout=120)


def test_eval_feedback_runs_every_topic_through_the_pipeline_and_prints_every_figure():
    r = eval_feedback("--days", "2", "--cold", "5", "--json")
    assert r.returncode == 0, r.stderr
    heads = [line.split(":")[0] for line in r.stdout.splitlines() if line.startswith("== ")]
    assert heads == ["== rag", "== robot-learning", "== visual-generation"]
    rows = [line.split()[0] for line in r.stdout.splitlines() if " shown " in line]
    assert rows == ["query", "query+ratings", "cold+ratings", "cold"] * 6
    first = next(line for line in r.stdout.splitlines() if line.startswith("query "))
    assert re.search(r"P [01]\.\d{3}  R [01]\.\d{3}  F1 [01]\.\d{3}", first)
    for line in r.stdout.splitlines():
        if not line.startswith("json "):
            continue
        figures = json.loads(line[5:])
        for run in ("query", "query+ratings", "cold+ratings", "cold"):
            s = figures[run]
            assert s["tp"] + s["fp"] == s["shown"] and s["tp"] <= s["relevant"]
        # the cold start's liked papers are history, not news: left out of what it must find
        assert figures["cold"]["relevant"] == figures["cold+ratings"]["relevant"]
        assert figures["cold"]["relevant"] <= figures["query"]["relevant"]
        # without ratings, the query's run and the rated one start the same: ratings only act after day 1
        assert figures["query"]["relevant"] == figures["query+ratings"]["relevant"]
    assert r.stdout.count("(2 days only: targets not judged)") == 3


def test_eval_feedback_ratings_change_what_is_shown():
    """The mechanism, not a figure: over a few days the reader's ratings do not yet justify any
    change (issue 34: the ratings, held out by time, must show it helps; before, four days of
    ratings changed the digests), so the reader sees what the query selects; with dislikes made
    powerless (no model, a rule needing more votes than there are papers), likes can only add
    papers."""
    def figures(*args):
        r = eval_feedback("--topics", "robot-learning", "--days", "4", "--only", "query,query+ratings",
                          "--json", *args)
        assert r.returncode == 0, r.stderr
        return json.loads(next(line for line in r.stdout.splitlines() if line.startswith("json "))[5:])

    rated = figures()
    assert (rated["query+ratings"]["shown"], rated["query+ratings"]["fp"]) == (
        rated["query"]["shown"], rated["query"]["fp"])
    inert = figures("--set", "MODEL_MIN=100000", "--set", "QUERY_VOTES=100000")
    assert inert["query+ratings"]["tp"] >= inert["query"]["tp"]
    assert inert["query+ratings"]["shown"] >= inert["query"]["shown"]


def test_eval_feedback_refuses_an_unknown_topic_or_constant():
    assert "unknown topic 'nope'" in eval_feedback("--topics", "nope").stderr
    assert "no constant 'NOPE'" in eval_feedback("--set", "NOPE=1", "--days", "1").stderr


JUDGED = {
    "ingest_speedup", "match_speedup", "match_scale_ratio", "once_sample_ratio",
    "once_sample_again_ratio", "cli_start_ratio", "daemon_rss_mb", "daemon_rss_growth_pct",
    *(f"scale_{stage}_ratio_1k_100" for stage in ("parse", "store", "match", "render")),
}


YEAR_FIGURES = ["build_s", "ingest_per_s", "cycle_mean_s", "db_bytes_per_paper", "daemon_hwm_mb",
                "page_inbox_cold_ms", "page_inbox_json_warm_p95_ms", "page_profile_preview_cold_ms",
                "page_search5_json_warm_p95_ms", "page_paper_cold_ms", "page_message_json_cold_ms",
                "page_status_warm_p95_ms", "page_saved_json_warm_p95_ms", "page_cold_max_ms",
                "page_warm_p95_max_ms", "search_p95_ms", "page_errors", "serve_hwm_mb", "status_s",
                "explain_s", "digest_since_s", "learner_refit_s", "state_save_s", "state_restore_s",
                "once_new_day_s", "state_mb", "record_fill_s"]
YEAR_TARGETS = {"page_cold_max_ms", "page_warm_p95_max_ms", "status_s", "db_bytes_per_paper",
                "serve_hwm_mb", "daemon_hwm_mb", "state_mb", "state_save_s", "page_errors",
                "once_new_day_ratio", "ingest_rate_ratio"}


def test_bench_year_runs_a_few_days_of_use_and_prints_every_figure(tmp_path):
    """bench_year.py at a tiny size (300 papers, 100 for the ratios, 3 days): the year is built
    through the pipeline, every page answers, every command succeeds, every figure and target
    is printed; a second run reuses the cached years."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("WATCHER_CONFIG", None)
    args = [sys.executable, str(REPO / "benchmarks" / "bench_year.py"), "--papers", "300", "--small", "100",
            "--days", "3", "--ratings", "12", "--saves", "3", "--repeat", "2", "--no-cold-each",
            "--cache", str(tmp_path / "cache")]
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    values = {}
    for line in r.stdout.splitlines():
        if not line.startswith(("target ", "targets", "#")) and (m := re.match(r"(\w+) (\S+) (\S*)(.*)", line)):
            values[m.group(1)] = (float(m.group(2)), m.group(3) + m.group(4))
    for name in YEAR_FIGURES:
        assert name in values, f"{name} missing from:\n{r.stdout}"
        value, rest = values[name]
        assert "answered" not in rest and "(1)" not in rest, f"{name}: {rest}"  # every page 200, every command 0
    assert values["page_errors"][0] == 0
    assert values["ratings"][0] == 12 and values["saved"][0] == 3
    assert values["papers"][0] >= 300 and "x" in values["papers"][1]  # with its growth over the small size
    judged = {m.group(1) for line in r.stdout.splitlines() if (m := re.match(r"target (\w+) .*: (met|MISSED)$", line))}
    assert judged == YEAR_TARGETS, judged
    assert r.stdout.splitlines()[-1].startswith(("targets: all met", "targets missed: "))
    again = subprocess.run(args[:-2] + ["--build-only", "--cache", str(tmp_path / "cache")], env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout.count("# reusing the year") == 2, again.stdout + again.stderr
