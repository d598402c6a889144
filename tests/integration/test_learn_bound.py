"""The removal check's promise (docs/ratings-check.md): removals happen only when the upper bound
of the recall they lose, measured on the reader's own held-out ratings, is within the profile's
``max_recall_loss``; with too few ratings nothing goes, and `watcher explain --profile` and the
profile page say the bound, or how many more ratings it needs."""

from __future__ import annotations

import random
import warnings
from datetime import datetime, timedelta, timezone
from html import unescape

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from helpers import run_cli
from webkit import app_for

from watcher.config import ConfigError, load_config, parse_config
from watcher.matching.compile import compile_profile
from watcher.matching.learn import MAX_RECALL_LOSS, loss_bound
from watcher.models import Paper
from watcher.services.ratings import apply_rating
from watcher.store import Store

RAG_WORDS = ("retriever reranker passages corpus grounded generator chunking dense sparse index "
             "open-domain question answering knowledge citations hallucination").split()
CLINIC_WORDS = ("hospital patients clinical radiology physicians diagnosis treatment nursing "
                "medication symptoms triage cardiology oncology discharge").split()
CONFIG = """\
[watcher]
database = "watcher.db"

[profile.rag]
title = "RAG"
query = "RAG"
{limit}

[digest.daily]
profiles = ["rag"]
channels = ["out"]
every = "1d"

[channel.out]
type = "stdout"
"""


def synthetic(prefix: str, n: int, words: list[str], rng: random.Random) -> list[Paper]:
    """Papers of ``words`` that all mention RAG (the query matches every one)."""
    out = []
    for k in range(n):
        picked = rng.sample(words, 7)
        out.append(Paper(title=" ".join(picked[:4]).capitalize(), arxiv_id=f"{prefix}.{k:05d}",
                         abstract=" ".join(picked) + ". We also use RAG. " + " ".join(rng.sample(words, 5))))
    return out


def rated_site(tmp_path, limit: str | None = None):
    """A profile whose query matches 40 liked RAG papers and 40 disliked clinical ones, rated
    ten a day over eight days: the model separates them, but 30 liked papers held out by time
    bound a loss of none of them at 9.5% (1 - 0.05^(1/30)), not 2%."""
    (tmp_path / "config.toml").write_text(CONFIG.format(limit=f'max_recall_loss = "{limit}"' if limit else ""))
    config = load_config(tmp_path / "config.toml")
    rng = random.Random(7)
    liked, disliked = synthetic("2501", 40, RAG_WORDS, rng), synthetic("2502", 40, CLINIC_WORDS, rng)
    start = datetime(2025, 4, 1, 20, tzinfo=timezone.utc)
    with Store.open(tmp_path / "watcher.db") as store:
        store.upsert(liked + disliked, start)
        for k, (up, down) in enumerate(zip(liked, disliked)):
            now = start + timedelta(days=k // 5)
            apply_rating(store, "up", "rag", up.key, "cli", profiles=config.profiles, now=now)
            apply_rating(store, "down", "rag", down.key, "cli", profiles=config.profiles, now=now)
        feedback = compile_profile(config, "rag", store).feedback
    return config, tmp_path / "watcher.db", feedback


def test_too_few_ratings_remove_nothing_and_explain_and_the_page_say_how_many_more(tmp_path):
    config, db, feedback = rated_site(tmp_path)
    est = feedback.estimates["removed"]
    assert feedback.model is not None and not feedback.remove  # fitted, but not allowed to remove
    assert est.setting is None and est.more and est.more_ratings
    sentence = feedback.estimate("removed")
    assert (f"it needs about {est.more_ratings} more ratings ({est.more} more liked papers it selects itself)"
            in sentence)
    assert "over your limit of 2% of what you like" in sentence
    out = run_cli("explain", "--profile", "rag", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"  why: {sentence}" in out.stdout.decode()
    assert "removed 0" in out.stdout.decode().splitlines()[0]
    with TestClient(app_for(config, db)) as c:
        assert sentence in unescape(c.get("/profiles/rag").text)
        assert sentence in c.get("/profiles/rag.json").json()["ratings_checked"]


def test_a_profile_with_a_looser_limit_removes_and_says_the_bound_it_keeps(tmp_path):
    """The same ratings under ``max_recall_loss = "10%"``: the bound, 9.5%, is within it."""
    config, db, feedback = rated_site(tmp_path, "10%")
    est = feedback.estimates["removed"]
    assert feedback.remove and est.setting is not None and est.liked == 0 and est.liked_ratings == 30
    assert est.bound == loss_bound(0, 30)
    sentence = feedback.estimate("removed")
    assert ("removing these costs at most 9.5% of what you like, with 95% confidence, measured on your "
            f"{est.ratings} held-out ratings") in sentence
    out = run_cli("explain", "--profile", "rag", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"  why: {sentence}" in out.stdout.decode()
    with TestClient(app_for(config, db)) as c:
        assert sentence in unescape(c.get("/profiles/rag").text)


def config_with(limit) -> dict:
    return {"watcher": {"database": "w.db"},
            "profile": {"rag": {"query": "RAG", "max_recall_loss": limit}}}


@pytest.mark.parametrize("limit, share", [("1%", 0.01), ("0.5%", 0.005), (" 2 % ", 0.02), ("0%", 0.0),
                                          ("100%", 1.0)])
def test_max_recall_loss_is_a_percentage(tmp_path, limit, share):
    assert parse_config(config_with(limit), tmp_path / "c.toml").profiles["rag"].max_recall_loss == share
    del_key = {"watcher": {"database": "w.db"}, "profile": {"rag": {"query": "RAG"}}}
    assert parse_config(del_key, tmp_path / "c.toml").profiles["rag"].max_recall_loss == MAX_RECALL_LOSS == 0.02


@pytest.mark.parametrize("limit", ["abc", "150%", "-1%", "2", "%", "nan%", "inf%", 0.02])
def test_a_bad_max_recall_loss_is_one_line(tmp_path, limit):
    with pytest.raises(ConfigError) as e:
        parse_config(config_with(limit), tmp_path / "c.toml")
    message = str(e.value)
    assert "profile.rag.max_recall_loss" in message and "\n" not in message
    if isinstance(limit, str):
        assert "is not a percentage from 0% to 100%" in message
