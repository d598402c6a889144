"""The store behind the web inbox: migration m002_web_search brings an existing database
forward with nothing lost, the FTS5 index follows every store, update and re-key, and each
delivered digest is kept as it was sent."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import sqlite_utils
from sqlite_utils.migrations import Migrations

from watcher import store as store_module
from watcher.models import Digest, Match, Paper
from watcher.matching.query import parse_query
from watcher.services.search import Filters, fts_expression, run_search
from watcher.store import Store

NOW = datetime(2025, 4, 12, 20, 0, tzinfo=timezone.utc)


def paper(**kw) -> Paper:
    base = dict(title="VLM-R1: A Stable and Generalizable R1-style Large Vision-Language Model",
                arxiv_id="2504.07615", version=1, authors=["Haozhan Shen"],
                abstract="Reinforcement learning with GRPO for vision-language models.",
                published=datetime(2025, 4, 10, 10, 5, tzinfo=timezone.utc), categories=["cs.CV"])
    base.update(kw)
    return Paper(**base)


def keys(store: Store, q: str, **filters) -> list[str]:
    return [p.key for p in run_search(store, parse_query(q), Filters(**filters), limit=100).papers]


def test_an_m001_database_migrates_forward_with_nothing_lost(tmp_path):
    path = tmp_path / "old.db"
    old = Migrations("watcher")
    old()(store_module.m001_initial)
    db = sqlite_utils.Database(path)
    old.apply(db)
    rows = [store_module._paper_row(p) for p in (paper(), paper(arxiv_id="2504.00001", title="Other GRPO work"))]
    m001_columns = {c.name for c in db["papers"].columns}
    rows = [{k: v for k, v in row.items() if k in m001_columns} for row in rows]  # later columns
    for row in rows:
        row.update(first_seen="2025-04-11T00:00:00.000000+00:00", last_changed="2025-04-11T00:00:00.000000+00:00")
        db["papers"].insert(row)
    db["deliveries"].insert_all([
        {"digest": "daily", "channel": "mail", "paper": "2504.07615", "version": 1,
         "delivered_at": "2025-04-11T21:30:00+00:00"},
        {"digest": "daily", "channel": "mail", "paper": "2504.00001", "version": 1,
         "delivered_at": "2025-04-11T21:30:00+00:00"}])
    before = {t: list(db[t].rows) for t in ("papers", "deliveries")}
    db.close()
    with Store.open(path) as s:
        names = [r["name"] for r in s.db["_sqlite_migrations"].rows]
        assert "m002_web_search" in names
        assert {t: [{k: r[k] for k in before[t][0]} for r in s.db[t].rows]
                for t in ("papers", "deliveries")} == before  # later migrations add columns
        assert sorted(keys(s, "GRPO")) == ["2504.00001", "2504.07615"]  # the index holds old papers
        issue = s.issue("daily", "2025-04-11")
        (message,) = issue.messages  # the ledger's delivery, as a message of its channel
        assert message.channel == "mail" and message.number == 1
        assert [m.paper.key for m in message.matches] == ["2504.00001", "2504.07615"]  # by time, then id
        assert s.latest_issues()[0].day == "2025-04-11"
    with Store.open(path) as s:  # reopening changes nothing
        assert len(list(s.db["issues"].rows)) == 1


def test_the_search_index_follows_new_updated_and_rekeyed_papers(tmp_path):
    with Store.open(tmp_path / "w.db") as s:
        s.upsert([paper()], NOW)
        assert keys(s, "GRPO") == ["2504.07615"] and keys(s, "ti:bananas") == []
        s.upsert([paper(version=2, title="Bananas: a revised title", abstract="Now about PPO.")],
                 NOW + timedelta(days=1))
        assert keys(s, "ti:bananas") == ["2504.07615"]
        assert keys(s, "GRPO") == [] and keys(s, "PPO") == ["2504.07615"]
        idless = paper(arxiv_id=None, version=None, title="Quokka policies for LLM agents")
        s.upsert([idless], NOW)
        digest = Digest("daily", "LLM-RL", date(2025, 4, 12), [Match(idless, 1.0, ["x"], "llm-rl")])
        s.record_delivery("daily", "mail", digest.papers, NOW, issue=digest)
        assert keys(s, "quokka") == [idless.key]
        s.tldr_remember([(idless.key, "Quokkas learn policies.")], "a-model", NOW)
        s.upsert([paper(arxiv_id="2504.99999", title="Quokka policies for LLM agents")], NOW + timedelta(days=2))
        # its model TL;DR moved with it: not asked for again, shown under the new key
        assert s.tldr_cached([idless.key, "2504.99999"]) == {"2504.99999": "Quokkas learn policies."}
        assert keys(s, "quokka") == ["2504.99999"]  # re-keyed: one row, found under its id
        assert [m.paper.key for m in s.issue("daily", "2025-04-12").messages[0].matches] == ["2504.99999"]
        assert s.db.execute("SELECT count(*) FROM papers_fts").fetchone()[0] == s.count_papers() == 2


def test_each_message_is_kept_as_it_was_sent_in_its_order(tmp_path):
    with Store.open(tmp_path / "w.db") as s:
        a, b, c = (paper(arxiv_id=f"2504.0000{i}", title=f"Paper {i}") for i in (1, 2, 3))
        s.upsert([a, b, c], NOW)
        first = Digest("daily", "LLM-RL", date(2025, 4, 12),
                       [Match(b, 2.5, ['ti: "x"', "<b>y</b>"], "llm-rl"), Match(a, 1.0, ["z"], "llm-rl")])
        s.record_delivery("daily", "mail", first.papers, NOW, issue=first)
        second = Digest("daily", "LLM-RL", date(2025, 4, 12),
                        [Match(c, 3.0, ["c"], "llm-rl"), Match(a, 1.0, ["z"], "llm-rl")])
        s.record_delivery("daily", "slack", second.papers, NOW + timedelta(hours=1), issue=second)
        issue = s.issue("daily", "2025-04-12")
        mail, slack = issue.messages
        assert [m.paper.key for m in mail.matches] == ["2504.00002", "2504.00001"]
        assert [m.paper.key for m in slack.matches] == ["2504.00003", "2504.00001"]
        assert mail.matches[0].reasons == ['ti: "x"', "<b>y</b>"] and mail.matches[0].score == 2.5
        assert issue.first_delivered < issue.last_delivered
        assert [(m.channel, m.papers) for m in s.issues()[0].messages] == [("mail", 2), ("slack", 2)]
        assert [m.channel for m in s.issue("daily", "2025-04-12", "slack").messages] == ["slack"]
        assert [(d.channel, d.day, d.number) for d in s.paper_deliveries("2504.00001")] == [
            ("mail", "2025-04-12", 1), ("slack", "2025-04-12", 1)]
        assert s.issue("daily", "2025-04-13") is None


def test_the_fts_expression_is_a_superset_of_the_query_over_the_normalised_words():
    assert fts_expression(parse_query("GRPO").root) == '{search_title search_abstract search_authors} : "grpo"'
    assert fts_expression(parse_query("NOT GRPO").root) is None
    assert fts_expression(parse_query("GRPO OR NOT PPO").root) is None
    assert fts_expression(parse_query("GRPO ANDNOT PPO").root) == \
        '({search_title search_abstract search_authors} : "grpo")'  # the NOT is the matcher's
    assert fts_expression(parse_query("ti:LLMs").root) == 'search_title : "llm"'  # its plural rule
    assert fts_expression(parse_query("reinforc* AND au:\"S. Levine\"").root) == \
        '({search_title search_abstract search_authors} : "reinforc"*) AND (search_authors : "levine")'
    assert fts_expression(parse_query("cat:cs.LG").root) == 'search_categories : "cs.lg"'
    assert fts_expression(parse_query('"deep reinforc* learning"').root) == \
        '{search_title search_abstract search_authors} : ("deep" AND "reinforc"* AND "learning")'


def test_searches_agree_with_the_profile_language(tmp_path):
    """The papers found are those the profiles' own matcher selects."""
    from watcher.matching.index import prepare

    papers = [paper(arxiv_id=f"2504.{i:05d}", title=t, abstract=a, authors=au, categories=c)
              for i, (t, a, au, c) in enumerate([
                  ("GRPO for LLM reasoning", "policy optimization", ["Sergey Levine"], ["cs.LG"]),
                  ("Fine-tuning LLMs with PPO", "reinforcement learning from human feedback", ["A. B"], ["cs.CL"]),
                  ("A survey of diffusion", "images", ["C. D"], ["cs.CV"]),
                  ("Reinforced transformers", "GRPO and PPO on vision", ["Levine, S."], ["cs.CV", "cs.LG"]),
              ])]
    with Store.open(tmp_path / "w.db") as s:
        s.upsert(papers, NOW)
        for q in ["GRPO", "GRPO ANDNOT cat:cs.CV", "fine-tuning", "LLM", "ti:survey OR cat:cs.CL",
                  "au:Levine", "reinforc*", "NOT GRPO", "PPO AND (cat:cs.CV OR ti:LLMs)"]:
            query = parse_query(q)
            expected = {papers[i].key for i in prepare(papers).evaluate(query.root)}
            assert set(keys(s, q)) == expected, q


def test_an_empty_digest_sent_with_send_empty_is_an_issue_with_its_reason(tmp_path):
    with Store.open(tmp_path / "w.db") as s:
        empty = Digest("daily", "LLM-RL", date(2025, 4, 13), [], empty_reason="nothing matched your profiles")
        s.record_delivery("daily", "mail", [], NOW, issue=empty)
        issue = s.issue("daily", "2025-04-13")
        assert issue.messages[0].matches == [] and issue.empty_reason == "nothing matched your profiles"
        assert issue.messages[0].empty_reason == "nothing matched your profiles"
