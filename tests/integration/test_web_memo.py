"""The inbox page kept between requests (watcher.web.pages.PageMemo): shown again only while
the database is unchanged, and never to another session."""

from __future__ import annotations

import re
import warnings
from dataclasses import replace
from datetime import date, datetime, timezone

from webkit import app_for, sample_setup

from watcher.models import Digest, Match
from watcher.store import Store

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


def csrf_tokens(text: str) -> set[str]:
    return set(re.findall(r'name="csrf" value="([^"]+)"', text))


def test_the_kept_inbox_follows_every_change_of_the_database_and_each_session_has_its_own(tmp_path):
    config, db = sample_setup(tmp_path)
    app = app_for(config, db)
    with TestClient(app) as reader:
        first = reader.get("/")
        assert first.status_code == 200 and "<article" in first.text
        assert reader.get("/").text == first.text  # unchanged database: the same page
        assert len(csrf_tokens(first.text)) == 1
        # another session (no cookie): its own token in every form, never the first one's page
        session = dict(reader.cookies)
        reader.cookies.clear()
        theirs = reader.get("/")
        assert csrf_tokens(theirs.text) and csrf_tokens(theirs.text) != csrf_tokens(first.text)
        reader.cookies.clear()
        reader.cookies.update(session)
        assert reader.get("/").text == first.text
        # the daemon delivers the next day's issue through its own connection
        with Store.open(db) as store:
            latest = store.latest_issues()[0]
            issue = store.issue(latest.digest, latest.day)
            sent = issue.messages[0].matches
            paper = sent[0].paper
            day = date.fromisoformat(latest.day).toordinal() + 1
            next_day = date.fromordinal(day)
            fresh = replace(paper, arxiv_id="2504.99999", title="A paper delivered the next day",
                            announced=next_day)
            now = datetime.combine(next_day, datetime.min.time(), timezone.utc).replace(hour=21)
            store.upsert([fresh], now)
            digest = Digest(latest.digest, issue.title, next_day,
                            [Match(fresh, 5.0, ["title: \"next\""], sent[0].profile)])
            store.record_delivery(latest.digest, "archive", [fresh], now, issue=digest)
        again = reader.get("/")
        assert "A paper delivered the next day" in again.text and again.text != first.text
        assert reader.get("/").text == again.text


def test_the_kept_inbox_follows_a_config_edit(tmp_path):
    """A digest added to the config shows at once ("not delivered yet"), though the database
    did not change: the kept page is keyed on the config too."""
    config, db = sample_setup(tmp_path)
    with TestClient(app_for(config, db)) as reader:
        assert "Not delivered yet" not in reader.get("/").text
        path = config.path
        path.write_text(path.read_text() + '\n[digest.weekly]\nprofiles = ["llm-rl"]\n'
                        'schedule = "0 8 * * mon"\nchannels = ["archive"]\n')
        page = reader.get("/").text
    assert "weekly" in page and "Not delivered yet" in page
