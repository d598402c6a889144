"""Signed rating links: tokens, the links digests carry, and a click that teaches the next digest."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timezone

import pytest
from deliverkit import MailServer, sample_digest

from conftest import DATA
from helpers import run_cli
from helpers import mailed_links_config
from watcher.config import load_config
from watcher.present.links import BadLink, Links, links_for, make_token, verify_token
from watcher.services.ratings import apply_rating, ratings
from watcher.present.render import render
from watcher.store import Store

SECRET = "correct horse battery staple"


def test_a_token_names_action_profile_and_paper_and_verifies():
    token = make_token(SECRET, "up", "llm-rl", "2504.07615")
    got = verify_token(SECRET, token)
    assert (got.action, got.profile, got.paper) == ("up", "llm-rl", "2504.07615")
    assert re.fullmatch(r"[A-Za-z0-9_.~-]+", token)  # URL-safe as it is (unreserved characters)


@pytest.mark.parametrize("change", [
    lambda t: t[:-1],  # truncated signature
    lambda t: t[: len(t) // 2],  # truncated in the payload
    lambda t: ("A" if t[0] != "A" else "B") + t[1:],  # payload altered
    lambda t: t[:-2] + ("AA" if t[-2:] != "AA" else "BB"),  # signature altered
    lambda t: "",
    lambda t: "not-a-token",
])
def test_altered_or_truncated_tokens_do_not_verify(change):
    token = make_token(SECRET, "down", "llm-rl", "2504.07615")
    with pytest.raises(BadLink):
        verify_token(SECRET, change(token))


def test_a_forged_token_and_a_rotated_secret_do_not_verify():
    from itsdangerous import URLSafeSerializer

    forged = URLSafeSerializer("guessed", salt="watcher.rate").dumps(["up", "llm-rl", "2504.07615"])
    with pytest.raises(BadLink):
        verify_token(SECRET, forged)
    old = make_token(SECRET, "save", "llm-rl", "2504.07615")
    with pytest.raises(BadLink):
        verify_token("a new secret", old)
    # another action in a validly signed payload is refused too
    other = URLSafeSerializer(SECRET, salt="watcher.rate").dumps(["clear", "llm-rl", "2504.07615"])
    with pytest.raises(BadLink):
        verify_token(SECRET, other)


def test_links_need_base_url_and_the_secret(write_config, monkeypatch):
    base = "[web]\nbase_url = \"https://papers.example.org/\"\nsecret_env = \"WATCHER_TEST_SECRET\"\n"
    path = write_config("""
        [profile.p]
        query = "x"
        [digest.d]
        profiles = ["p"]
        channels = ["c"]
        every = "1d"
        [channel.c]
        type = "stdout"
        """ + base)
    monkeypatch.delenv("WATCHER_TEST_SECRET", raising=False)
    assert links_for(load_config(path)) is None
    monkeypatch.setenv("WATCHER_TEST_SECRET", SECRET)
    links = links_for(load_config(path))
    assert links.base_url == "https://papers.example.org"
    no_base = write_config((DATA.parent / "conftest.py").read_text().split('MINIMAL_CONFIG = """')[1]
                           .split('"""')[0], "other.toml")
    assert links_for(load_config(no_base)) is None


def digest_with_links():
    digest = sample_digest(2, updated=0)
    digest.links = Links("https://papers.example.org", SECRET)
    return digest


def test_every_rich_format_carries_the_links_and_json_has_them_per_paper():
    digest = digest_with_links()
    first = digest.matches[0]
    expected = {a: f"https://papers.example.org/r/{make_token(SECRET, a, first.profile, first.paper.key)}"
                for a in ("up", "down", "save")}
    page = "https://papers.example.org/digests/daily/2025-04-12"
    for fmt in ("markdown", "slack"):
        out = render(digest, fmt)
        assert all(url in out for url in expected.values()), fmt
        assert page in out, fmt
    for fmt in ("html", "email"):  # an e-mail: one link per paper, whose page asks which
        out = render(digest, fmt)
        assert f"https://papers.example.org/r/{make_token(SECRET, 'rate', first.profile, first.paper.key)}" in out
        assert page in out and not any(url in out for url in expected.values()), fmt
    papers = json.loads(render(digest, "json"))
    assert papers[0]["links"] == dict(expected, web=f"https://papers.example.org/papers/{first.paper.arxiv_id}")
    assert "/r/" not in render(digest, "text")  # the seed text format stays as it is
    digest.links = None
    assert all("papers.example.org" not in render(digest, f) for f in ("html", "markdown", "slack", "json"))
    assert "links" not in json.loads(render(digest, "json"))[0]


def test_a_click_in_the_mail_teaches_the_next_digest(tmp_path):
    """The e-mail (through a real SMTP server) carries the links; a click's token, recorded
    as the web inbox's POST /r/{token} will record it, changes the next day's digest."""
    env = {"WATCHER_TEST_SECRET": SECRET}
    shutil.copy(DATA / "corpus-2025-04-09.jsonl.gz", tmp_path / "day.jsonl.gz")
    with MailServer() as server:
        (tmp_path / "config.toml").write_text(mailed_links_config(server.port))
        assert run_cli("fetch", cwd=tmp_path, env=env).returncode == 0
        out = run_cli("digest", "daily", "--since", "2025-04-01", cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stderr
    [mail] = server.received
    html = mail.message.get_payload()[1].get_content()
    assert "https://papers.example.org/digests/daily/" in html
    asks = re.findall(r'href="https://papers\.example\.org/r/([^"]+)"[^>]*>Rate</a>', html)
    assert asks, "no rating link in the mail"
    clicked = [verify_token(SECRET, t) for t in asks]
    assert {c.action for c in clicked} == {"rate"}
    with Store.open(tmp_path / "watcher.db") as store:  # the reader likes every paper shown
        assert ratings(store) == []
        for c in clicked:  # the link's page asks; the reader chooses "more like this"
            apply_rating(store, "up", c.profile, c.paper, "link", profiles=["mine"])
        assert sorted((r.paper, r.value, r.source) for r in ratings(store)) == sorted(
            (c.paper, "up", "link") for c in clicked)
    shutil.copy(DATA / "corpus-2025-04-10.jsonl.gz", tmp_path / "day.jsonl.gz")
    (tmp_path / "config.toml").write_text(mailed_links_config(1))
    assert run_cli("fetch", cwd=tmp_path, env=env).returncode == 0
    out = run_cli("digest", "daily", "--dry-run", "--to", "json", "--since", "2025-04-10",
                  cwd=tmp_path, env=env)
    papers = json.loads(out.stdout)
    names = {f"like {c.paper} (you liked)" for c in clicked}
    assert any(names & set(p["reasons"]) for p in papers), [p["reasons"] for p in papers]
    assert all(set(p["links"]) == {"up", "down", "save", "web"} for p in papers)


def test_verify_link_uses_the_configs_secret_and_check_says_when_links_are_off(write_config, monkeypatch):
    from watcher.present.links import link_notes, verify_link

    table = "[web]\nsecret_env = \"WATCHER_TEST_SECRET\"\n"
    body = """
        [profile.p]
        query = "x"
        [channel.hook]
        type = "webhook"
        url = "https://example.org/hook"
        """
    monkeypatch.setenv("WATCHER_TEST_SECRET", SECRET)
    off = load_config(write_config(body + table))
    assert link_notes(off) == [f"{off.path}: channel.hook (webhook): its digests carry no rating links, "
                               "and no link for a paper without a page of its own: set web.base_url"]
    token = make_token(SECRET, "up", "p", "2504.07615")
    with pytest.raises(BadLink, match="links are off"):
        verify_link(off, token)
    on = load_config(write_config(body + table + 'base_url = "https://papers.example.org"\n', "on.toml"))
    assert link_notes(on) == []
    assert verify_link(on, token).paper == "2504.07615"
    monkeypatch.setenv("WATCHER_TEST_SECRET", "rotated")
    with pytest.raises(BadLink):
        verify_link(on, token)


def test_a_digest_without_its_links_is_delivered_but_never_silently(tmp_path):
    """base_url and secret_env set, the variable unset (a cron job without the env file): the
    mail still goes out, the run says why at error level and exits 1, and status shows it."""
    shutil.copy(DATA / "corpus-2025-04-09.jsonl.gz", tmp_path / "day.jsonl.gz")
    with MailServer() as server:
        (tmp_path / "config.toml").write_text(mailed_links_config(server.port)
                                              .replace('every = "1d"', 'every = "1d"\nlookback = "30d"'))
        out = run_cli("once", cwd=tmp_path, env={"WATCHER_TEST_SECRET": ""})
    assert out.returncode == 1, out.stderr
    [mail] = server.received  # delivered all the same
    assert "/r/" not in mail.message.get_payload()[1].get_content()
    err = out.stderr.decode()
    assert re.search(r"ERROR.*digest daily: environment variable WATCHER_TEST_SECRET is empty "
                     r"\(web.secret_env\): delivered without rating links", err), err
    status = run_cli("status", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    text = status.stdout.decode()
    assert "(degraded)" in text and "last run degraded: environment variable WATCHER_TEST_SECRET" in text, text
    # with the secret back, the next delivery is whole again and the run is ok
    shutil.copy(DATA / "corpus-2025-04-10.jsonl.gz", tmp_path / "day.jsonl.gz")
    with MailServer() as server:
        (tmp_path / "config.toml").write_text(mailed_links_config(server.port))
        out = run_cli("once", cwd=tmp_path, env={"WATCHER_TEST_SECRET": SECRET})
    assert out.returncode == 0, out.stderr
    assert "degraded" not in run_cli("status", cwd=tmp_path).stdout.decode()


def test_a_guessable_link_secret_signs_nothing(tmp_path):
    """A secret of a few characters would let anyone forge rating links: check refuses it,
    serve will not start with it, and a digest goes out without links, saying why."""
    shutil.copy(DATA / "corpus-2025-04-09.jsonl.gz", tmp_path / "day.jsonl.gz")
    short = {"WATCHER_TEST_SECRET": "a"}
    with MailServer() as server:
        (tmp_path / "config.toml").write_text(mailed_links_config(server.port)
                                              .replace('every = "1d"', 'every = "1d"\nlookback = "30d"'))
        check = run_cli("check", cwd=tmp_path, env=short)
        assert check.returncode == 2
        assert ("web.secret_env: the secret in WATCHER_TEST_SECRET is shorter than 16 characters "
                "(make one: python3 -c 'import secrets; print(secrets.token_urlsafe(32))')") in check.stderr.decode()
        serve = run_cli("serve", cwd=tmp_path, env=short)
        assert serve.returncode == 2 and b"shorter than 16 characters (make one" in serve.stderr, serve.stderr
        out = run_cli("once", cwd=tmp_path, env=short)
    assert out.returncode == 1, out.stderr
    [mail] = server.received
    assert "/r/" not in mail.message.get_payload()[1].get_content()
    assert "shorter than 16 characters" in out.stderr.decode()


def test_compact_tokens_are_short_and_name_a_paper_without_an_id_by_its_short_key(tmp_path):
    from datetime import date

    from itsdangerous import URLSafeSerializer

    from watcher.models import Paper, short_key

    token = make_token(SECRET, "up", "llm-rl", "2504.07615", date(2025, 4, 12))
    assert len(token) <= 32, token  # the older form was about 110 characters
    key = "title:boosting universal llm reward design through the heuristic reward observation|heng|2025-04-10"
    long = make_token(SECRET, "rate", "llm-rl", key, date(2025, 4, 12))
    assert len(long) <= 40 and key not in long
    asked = verify_token(SECRET, long, today=date(2025, 5, 1))
    assert (asked.action, asked.profile, asked.paper) == ("rate", "llm-rl", short_key(key))
    with Store.open(tmp_path / "w.db") as store:
        store.upsert([Paper(title="Boosting Universal LLM Reward Design through the Heuristic Reward "
                                  "Observation", authors=["Zen Kit Heng"])], datetime(2025, 4, 10, tzinfo=timezone.utc))
        [stored] = list(store.db.query("SELECT key FROM papers"))
        got = store.get_short(short_key(stored["key"]))
        assert got is not None and got.key == stored["key"]
        assert store.get_short("h.AAAAAAAAAAA") is None
        assert store.get_short(stored["key"]).key == stored["key"]  # a full key still works
    with pytest.raises(BadLink):  # an unknown profile name with odd characters round-trips
        verify_token(SECRET, make_token(SECRET, "up", "näive prof", "2504.07615")[:-1] + "x")
    odd = verify_token(SECRET, make_token(SECRET, "save", "näive prof~", "hep-th/9901001"))
    assert (odd.profile, odd.paper) == ("näive prof~", "hep-th/9901001")
    # a link of the older, longer form still verifies
    old = URLSafeSerializer(SECRET, salt="watcher.rate").dumps(["down", "llm-rl", "2504.07615", "2099-01-01"])
    assert verify_token(SECRET, old).action == "down"
