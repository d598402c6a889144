"""A digest's ``order``: ``date`` (newest first, the best match first within a day) or
``score`` (the best match first), run as a user would on a real corpus day."""

from __future__ import annotations

import json
import shutil

from conftest import DATA
from helpers import run_cli
from helpers import mailed_links_config

LINKS_CONFIG = mailed_links_config("{port}")

# the links test's config (a listing of one corpus day, one profile), a broader query, an order
CONFIG = (LINKS_CONFIG.replace("""'"retrieval-augmented" OR RAG OR "retrieval augmented"'""",
                               """'RL OR "reinforcement learning" OR LLM OR retrieval'""")
          .replace('every = "1d"', 'every = "1d"\n{order}').replace("{port}", "1"))


def papers(folder, order: str) -> list[dict]:
    (folder / "config.toml").write_text(CONFIG.replace("{order}", order))
    out = run_cli("digest", "daily", "--dry-run", "--to", "json", "--since", "2025-04-01", cwd=folder)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_order_by_score_or_by_date_with_the_best_first_within_a_day(tmp_path):
    shutil.copy(DATA / "corpus-2025-04-09.jsonl.gz", tmp_path / "day.jsonl.gz")
    (tmp_path / "config.toml").write_text(CONFIG.replace("{order}", ""))
    assert run_cli("fetch", cwd=tmp_path).returncode == 0
    by_date = papers(tmp_path, "")
    assert len(by_date) > 10
    keys = [(p["announced"] or p["published"] or "", -p["score"]) for p in by_date]
    days = [k[0] for k in keys]
    assert days == sorted(days, reverse=True)
    for a, b in zip(keys, keys[1:]):  # one listing day: the best match leads, not the alphabet
        if a[0] == b[0]:
            assert a[1] <= b[1], (a, b)
    assert papers(tmp_path, 'order = "date"') == by_date
    by_score = papers(tmp_path, 'order = "score"')
    scores = [p["score"] for p in by_score]
    assert scores == sorted(scores, reverse=True)
    assert sorted(p["arxiv_id"] for p in by_score) == sorted(p["arxiv_id"] for p in by_date)


def test_check_refuses_another_order(tmp_path):
    (tmp_path / "config.toml").write_text(CONFIG.replace("{order}", 'order = "best"'))
    out = run_cli("check", cwd=tmp_path)
    assert out.returncode == 2
    assert "digest.daily.order: 'best' is not one of date, score" in out.stderr.decode()
