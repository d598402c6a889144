"""`watcher check` (and every command, at config load) refuses what would only fail later."""

from __future__ import annotations

import pytest

from conftest import MINIMAL_CONFIG
from helpers import run_cli

_EMAIL = ('[channel.me]\ntype = "email"\nhost = "smtp.example.org"\nfrom = "me@example.org"\n'
          'to = ["me@example.org"]\n')
_ARXIV = '[source.api]\ntype = "arxiv"\nquery = "cat:cs.LG"\n'
_HOOK = '[channel.hook]\ntype = "webhook"\nurl = "https://example.org/hook"\n'

# (what to change in MINIMAL_CONFIG, the key the error names, words of the problem)
LATE_FAILURES = [
    (("[channel.archive]", _EMAIL.replace('from = "me@example.org"', 'from = "not an address"')
      + "[channel.archive]"), "channel.me.from", "not an e-mail address"),
    (("[channel.archive]", _EMAIL.replace('to = ["me@example.org"]', 'to = ["also bad"]')
      + "[channel.archive]"), "channel.me.to", "'also bad' is not an e-mail address"),
    (("[channel.archive]", _EMAIL.replace('to = ["me@example.org"]', 'to = ["me@example.org", "ann@"]')
      + "[channel.archive]"), "channel.me.to", "'ann@' is not an e-mail address"),
    (("[channel.archive]", _EMAIL.replace('to = ["me@example.org"]', 'to = ["a@example.org, b@example.org"]')
      + "[channel.archive]"), "channel.me.to", "one address per item"),
    (("[channel.archive]", _EMAIL.replace('from = "me@example.org"', 'from = "me@example.org\\nBcc: x@y.org"')
      + "[channel.archive]"), "channel.me.from", "not an e-mail address"),
    (("[channel.archive]", _EMAIL.replace('host = "smtp.example.org"', 'host = ""') + "[channel.archive]"),
     "channel.me.host", "must not be empty"),
    (("[channel.archive]", _EMAIL.replace('host = "smtp.example.org"', 'host = "  "') + "[channel.archive]"),
     "channel.me.host", "must not be empty"),
    (('database = "watcher.db"', 'database = ""'), "watcher.database", "must not be empty"),
    (('database = "watcher.db"', 'database = "."'), "watcher.database", "'.' names a folder, not a file"),
    (('database = "watcher.db"', 'database = "state/"'), "watcher.database", "names a folder, not a file"),
    (("[channel.archive]", _ARXIV.replace('"cat:cs.LG"', '""') + "[channel.archive]"),
     "source.api.query", "must not be empty"),
    (("[channel.archive]", _ARXIV.replace('"cat:cs.LG"', '" \\t "') + "[channel.archive]"),
     "source.api.query", "must not be empty"),
    (('timezone = "UTC"', 'timezone = "UTC"\nuser_agent = "a\\nb"'), "watcher.user_agent",
     "control character"),
    (('timezone = "UTC"', 'timezone = "UTC"\nuser_agent = "watcher (mailto:me@example.org)\\r"'),
     "watcher.user_agent", "control character"),
    (('timezone = "UTC"', 'timezone = "UTC"\nuser_agent = "watcher (Jörg)"'), "watcher.user_agent",
     "non-ASCII character"),
    (('channels = ["archive"]', 'channels = []'), "digest.daily.channels", "at least one channel"),
    (("[channel.archive]", _HOOK.replace("https://example.org/hook", "ftp://x") + "[channel.archive]"),
     "channel.hook.url", "not an http(s) URL"),
    (("[channel.archive]", _HOOK.replace("https://example.org/hook", "https://") + "[channel.archive]"),
     "channel.hook.url", "not an http(s) URL"),
]


@pytest.mark.parametrize("change, key, words", LATE_FAILURES, ids=[f"{k}:{w}" for _, k, w in LATE_FAILURES])
def test_check_and_once_refuse_what_would_fail_later(write_config, tmp_path, change, key, words):
    old, new = change
    assert old in MINIMAL_CONFIG
    cfg = write_config(MINIMAL_CONFIG.replace(old, new, 1))
    for args in (["check"], ["once"]):
        r = run_cli("--config", str(cfg), *args, cwd=tmp_path)
        err = r.stderr.decode()
        assert r.returncode == 2, (args, err)
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert f"config.toml: {key}: " in err and words in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]  # no database, no lock


@pytest.mark.parametrize("address", [
    "me@example.org", "Ann Example <ann@example.org>", '"Example, Ann" <ann@example.org>',
    "root@localhost", "Jörg <joerg@example.org>",
])
def test_real_addresses_pass_check(write_config, tmp_path, address):
    cfg = write_config(MINIMAL_CONFIG.replace("[channel.archive]", _EMAIL.replace(
        'to = ["me@example.org"]', f"to = ['{address}']") + "[channel.archive]"))
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_check_accepts_a_database_folder_that_once_creates(write_config, tmp_path):
    """`once` creates a missing database folder, so `check` accepts one it can create."""
    cfg = write_config(MINIMAL_CONFIG.replace('database = "watcher.db"', 'database = "state/db/watcher.db"')
                       .replace('channels = ["archive"]', 'channels = ["archive"]\nevery = "1d"')
                       .replace('schedule = "30 21 * * sun-thu"\n', ""))
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "state").exists()  # check creates nothing
    r = run_cli("--config", str(cfg), "once", "--sample", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "state" / "db" / "watcher-sample.db").is_file()


@pytest.mark.parametrize("database, words", [
    ("blocker/watcher.db", "cannot be created: "),
    ("blocker/sub/watcher.db", "cannot be created: "),
    ("folder", "is a folder, not a database file"),
])
def test_check_reports_a_database_that_once_cannot_create(write_config, tmp_path, database, words):
    (tmp_path / "blocker").write_text("a file where a folder should be")
    (tmp_path / "folder").mkdir()
    cfg = write_config(MINIMAL_CONFIG.replace('database = "watcher.db"', f'database = "{database}"'))
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert "config.toml: watcher.database: " in err and words in err, err
    once = run_cli("--config", str(cfg), "once", cwd=tmp_path)
    assert once.returncode != 0  # and it does fail for real, saying why in one line
    said = once.stderr.decode()
    assert said.count("\n") == 1 and "Traceback" not in said, said
    if database.startswith("blocker"):
        assert "blocker is a file, not a folder" in said, said


@pytest.mark.parametrize("old, new, key, said", [
    ("[channel.archive]", _ARXIV.replace('"cat:cs.LG"', '"cat:cs.LGG OR cat:cs.CL"') + "[channel.archive]",
     "source.api.query", "'cs.LGG' is not an arXiv category; did you mean cs.LG?"),
    ("[digest.daily]", '[profile.vision]\nquery = "cat:cs.CVV AND detection"\n\n[digest.daily]',
     "profile.vision.query", "'cs.CVV' is not an arXiv category or bioRxiv/medRxiv subject; did you mean cs.CV?"),
    ("[digest.daily]", '[profile.vision]\ncategories = ["hep-thh"]\n\n[digest.daily]',
     "profile.vision.categories",
     "'hep-thh' is not an arXiv category or bioRxiv/medRxiv subject; did you mean hep-th?"),
    # a profile may name bioRxiv / medRxiv subjects: a misspelt one gets the nearest subject
    ("[digest.daily]", '[profile.cells]\ncategories = ["cs.LG", "cell biolgy"]\n\n[digest.daily]',
     "profile.cells.categories",
     "'cell biolgy' is not an arXiv category or bioRxiv/medRxiv subject; did you mean cell biology?"),
    ("[digest.daily]", '[profile.brains]\nquery = "cat:neuroscence OR cat:cell_biolgy"\n\n[digest.daily]',
     "profile.brains.query",
     "'neuroscence' is not an arXiv category or bioRxiv/medRxiv subject; did you mean neuroscience?"),
    ("[digest.daily]", '[profile.brains]\nquery = "cat:neuroscence OR cat:cell_biolgy"\n\n[digest.daily]',
     "profile.brains.query",
     "'cell_biolgy' is not an arXiv category or bioRxiv/medRxiv subject; did you mean cell_biology?"),
    ("[channel.archive]", '[source.bio]\ntype = "biorxiv"\ncategories = ["neuroscence"]\n\n[channel.archive]',
     "source.bio.categories", "'neuroscence' is not a biorxiv subject; did you mean neuroscience?"),
    ("[channel.archive]", '[source.rss]\ntype = "arxiv-rss"\ncategories = ["stat.MLL"]\n\n[channel.archive]',
     "source.rss.categories", "'stat.MLL' is not an arXiv category; did you mean stat.ML?"),
])
def test_check_names_an_unknown_category_or_subject_with_the_nearest_one(tmp_path, old, new, key, said):
    (tmp_path / "config.toml").write_text(MINIMAL_CONFIG.replace(old, new, 1))
    out = run_cli("check", cwd=tmp_path)
    assert out.returncode == 2, out.stdout
    assert f"{key}: {said}" in out.stderr.decode() + out.stdout.decode()


def test_check_says_an_unknown_category_with_the_mistakes_that_stop_the_config_loading(tmp_path):
    """Every mistake in one run: an unknown category is said beside an unknown key and a query
    that does not parse, not only once they are fixed (QA: three runs for three mistakes)."""
    broken = MINIMAL_CONFIG.replace("[digest.daily]", '[profile.broken]\nquery = "(RAG OR retrieval"\n\n'
                                    '[profile.cats]\nquery = "cat:cs.LGG"\ncolour = "red"\n\n[digest.daily]', 1)
    (tmp_path / "config.toml").write_text(broken)
    out = run_cli("check", cwd=tmp_path)
    said = out.stderr.decode()
    assert out.returncode == 2, said
    assert "profile.cats.colour: unknown key" in said and "profile.broken.query: ( is never closed" in said
    assert "profile.cats.query: 'cs.LGG' is not an arXiv category or bioRxiv/medRxiv subject; did you mean cs.LG?" in said


def test_a_misspelt_key_or_a_journal_feeds_other_name_gets_a_did_you_mean(tmp_path):
    """A key one letter off names the key meant; a source of type "rss" (what people call a
    journal's feed) is told it is "feed", not the nearest spelling, arxiv-rss (QA)."""
    (tmp_path / "config.toml").write_text(MINIMAL_CONFIG.replace("[digest.daily]", '[source.toc]\ntype = "rss"\n'
                                          'url = "https://example.org/feed"\n\n[source.j]\ntype = "feed"\n'
                                          'urll = "https://example.org/feed"\n\n[digest.daily]', 1))
    said = run_cli("check", cwd=tmp_path).stderr.decode()
    assert "source.toc.type: 'rss' is not one of" in said and "; did you mean feed?" in said
    assert "source.j.urll: unknown key; did you mean url? (known keys:" in said


def test_check_accepts_real_categories_archives_wildcards_and_subjects(tmp_path):
    config = MINIMAL_CONFIG.replace("[digest.daily]", '[profile.more]\nquery = "cat:cs.LG OR cat:hep-th OR '
                                    'cat:cs.* OR cat:q-bio.NC OR cat:neuroscience"\ncategories = ["math", '
                                    '"cond-mat.str-el"]\n\n[digest.daily]', 1)
    (tmp_path / "config.toml").write_text(config)
    out = run_cli("check", cwd=tmp_path)
    assert out.returncode == 0, out.stderr


def test_check_counts_in_words_that_agree(tmp_path):
    (tmp_path / "config.toml").write_text(MINIMAL_CONFIG)
    out = run_cli("check", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    said = out.stdout.decode()
    assert "1 profile," in said and "1 profiles" not in said and "1 digest," in said, said


@pytest.mark.parametrize("name, content, said", [
    ("empty.bib", b"", "empty.bib: no BibTeX entry with a title"),
    ("mine.bib", b"@article{x, title={Unclosed\n", "mine.bib: no BibTeX entry with a title"),
    ("notes.txt", b"papers I liked, one day\n", "notes.txt: unknown format"),
    ("papers.txt", bytes(range(256)) * 4, "papers.txt: binary data, not a listing"),
])
def test_check_reads_the_example_files_a_run_reads(write_config, tmp_path, name, content, said):
    """An examples file that exists but cannot be read as papers passed `check` (the load only
    asks that it exists), and then every run failed its digests on it."""
    (tmp_path / name).write_bytes(content)
    cfg = write_config(MINIMAL_CONFIG.replace('title = "LLM-RL"', f'title = "LLM-RL"\nexamples = ["{name}"]'))
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    [line] = [l for l in err.splitlines() if "profile.llm-rl.examples" in l]
    assert said in line and "Traceback" not in err, err
    once = run_cli("--config", str(cfg), "once", "--sample", cwd=tmp_path)
    assert once.returncode == 1 and said in once.stderr.decode()  # what it spares: a failed digest


def test_check_accepts_readable_example_files_and_arxiv_ids(write_config, tmp_path):
    from conftest import REPO

    (tmp_path / "liked.txt").write_bytes((REPO / "watcher/samples/llm-rl-2025-04-12.txt").read_bytes())
    (tmp_path / "liked.bib").write_text("@misc{k, title={Kimi-VL Technical Report}, eprint={2504.07491}}\n")
    cfg = write_config(MINIMAL_CONFIG.replace(
        'title = "LLM-RL"', 'title = "LLM-RL"\nexamples = ["liked.txt", "liked.bib", "2504.07615"]'))
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
