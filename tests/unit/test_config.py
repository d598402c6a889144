"""Config loading and validation (docs/configuration.md): every problem is one line naming file, key, problem."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from conftest import MINIMAL_CONFIG
from helpers import run_cli
from watcher.config import find_config, load_config, parse_duration
from watcher.errors import ConfigError


def test_minimal_config_loads_into_typed_objects(write_config, tmp_path):
    cfg = load_config(write_config(MINIMAL_CONFIG))
    assert cfg.settings.database == tmp_path / "watcher.db"  # relative to the config's folder
    assert cfg.profiles["llm-rl"].title == "LLM-RL"
    assert cfg.profiles["llm-rl"].max_papers == 30
    assert cfg.digests["daily"].lookback == timedelta(days=3)
    assert cfg.digests["daily"].formats == ("text",)
    assert cfg.channels["archive"].type == "file"


def test_shipped_config_is_valid():
    from conftest import REPO

    cfg = load_config(REPO / "config.toml")
    assert "llm-rl" in cfg.profiles and cfg.profiles["llm-rl"].title == "LLM-RL"


_RSS = '[source.rss]\ntype = "arxiv-rss"\ncategories = ["cs.LG"]\n'
_EMAIL = ('[channel.me]\ntype = "email"\nhost = "smtp.example.org"\nfrom = "me@example.org"\n'
          'to = ["me@example.org"]\n')

BAD = [
    # (what to change, expected key in message, expected words)
    (("[watcher]", "[watcher]\ncolour = 'red'"), "watcher.colour", "unknown key"),
    (("[watcher]", "[wacher]\n[watcher]"), "wacher", "unknown section; did you mean watcher?"),
    (('title = "LLM-RL"', "title = 3"), "profile.llm-rl.title", "expected a string, got an integer"),
    (('title = "LLM-RL"', 'title = "LLM-RL"\nmax_papers = "ten"'), "profile.llm-rl.max_papers",
     "expected an integer"),
    (('title = "LLM-RL"', 'title = "LLM-RL"\nmin_score = true'), "profile.llm-rl.min_score", "expected a number"),
    (('profiles = ["llm-rl"]', 'profiles = ["nope"]'), "digest.daily.profiles", "no [profile.nope]"),
    (('channels = ["archive"]', 'channels = ["archive", "lab"]'), "digest.daily.channels", "no [channel.lab]"),
    # a misspelt name gets the defined one it is closest to, as an unknown key does
    (('profiles = ["llm-rl"]', 'profiles = ["llm_rl"]'), "digest.daily.profiles",
     "no [profile.llm_rl] is defined; did you mean llm-rl?"),
    (('channels = ["archive"]', 'channels = ["archiv"]'), "digest.daily.channels",
     "no [channel.archiv] is defined; did you mean archive?"),
    (('schedule = "30 21 * * sun-thu"', 'schedule = "61 25 * * *"'), "digest.daily.schedule",
     "not a cron expression"),
    (('schedule = "30 21 * * sun-thu"', 'schedule = "30 21 * *"'), "digest.daily.schedule", "expected 5 fields"),
    (('schedule = "30 21 * * sun-thu"', 'schedule = "Arxiv"'), "digest.daily.schedule",
     'not a cron expression (expected 5 fields (minute hour day month weekday), got 1) nor "arxiv"; did you mean arxiv?'),
    (('schedule = "30 21 * * sun-thu"', 'schedule = "@daily"'), "digest.daily.schedule", 'got 1) nor "arxiv"'),
    (('schedule = "30 21 * * sun-thu"', 'every = "often"'), "digest.daily.every", "not a duration"),
    (('schedule = "30 21 * * sun-thu"', ''), "digest.daily.schedule", "required"),
    (('timezone = "UTC"', 'timezone = "Mars/Olympus"'), "watcher.timezone", "unknown time zone"),
    (('type = "file"', 'type = "pigeon"'), "channel.archive.type", "not one of"),
    (('path = "digests/{digest}-{date}.{ext}"', ''), "channel.archive.path", "required key is missing"),
    (('channels = ["archive"]', 'channels = ["archive"]\nformats = ["pdf"]'), "digest.daily.formats",
     "not one of"),
    (('channels = ["archive"]', 'channels = ["archive"]\nlookback = "3 days"'), "digest.daily.lookback",
     "not a duration"),
    (('title = "LLM-RL"', 'title = "LLM-RL"\nauthors = ["Ada Lovelace", 3]'), "profile.llm-rl.authors",
     "expected a list of strings, but item 2 is an integer"),
    # values that used to pass `check` and crash later with a traceback
    (("[channel.archive]", _RSS + 'timeout = -1\n[channel.archive]'), "source.rss.timeout",
     "must be a positive number of seconds"),
    (("[channel.archive]", _RSS + 'timeout = 0\n[channel.archive]'), "source.rss.timeout", "positive"),
    (("[channel.archive]", _RSS + 'timeout = inf\n[channel.archive]'), "source.rss.timeout", "positive"),
    (('type = "file"', 'type = "file"\ntimeout = -5'), "channel.archive.timeout", "positive"),
    (('schedule = "30 21 * * sun-thu"', 'schedule = "0 0 30 2 *"'), "digest.daily.schedule",
     "never fires"),
    (('schedule = "30 21 * * sun-thu"', 'schedule = "0 0 31 4 *"'), "digest.daily.schedule",
     "never fires"),
    (('schedule = "30 21 * * sun-thu"', 'every = "99999999d"'), "digest.daily.every", "maximum"),
    (('channels = ["archive"]', 'channels = ["archive"]\nlookback = "99999999d"'), "digest.daily.lookback",
     "maximum"),
    (('channels = ["archive"]', 'channels = ["archive"]\nlookback = "99999999999999d"'),
     "digest.daily.lookback", "maximum"),
    (("[channel.archive]", '[source.api]\ntype = "arxiv"\nquery = "cat:cs.LG"\n'
      'first_fetch = "99999999d"\n[channel.archive]'), "source.api.first_fetch", "maximum"),
    # more values checked at load
    (("[channel.archive]", _EMAIL + 'port = 0\n[channel.archive]'), "channel.me.port", "between 1 and 65535"),
    (("[channel.archive]", _EMAIL + 'port = 70000\n[channel.archive]'), "channel.me.port", "between 1 and 65535"),
    (("[channel.archive]", _EMAIL + 'max_bytes = 500\n[channel.archive]'), "channel.me.max_bytes",
     "between 10000 and 100000"),
    (('timezone = "UTC"', 'timezone = "UTC"\nuser_agent = "  "'), "watcher.user_agent", "must not be empty"),
    (("[channel.archive]", _RSS.replace('"cs.LG"', '"cs LG"') + '[channel.archive]'), "source.rss.categories",
     "not an arXiv category"),
    (("[channel.archive]", _RSS.replace('"cs.LG"', '"cs.*"') + '[channel.archive]'), "source.rss.categories",
     "not an arXiv category"),
    (('title = "LLM-RL"', 'title = "LLM-RL"\ncategories = ["cs.LG", "machine learning"]'),
     "profile.llm-rl.categories", "'machine learning' is not an arXiv category"),
    (('title = "LLM-RL"', 'title = "LLM-RL"\ncategories = ["cs.LG;"]'), "profile.llm-rl.categories",
     "not an arXiv category"),
    (('path = "digests/{digest}-{date}.{ext}"', 'path = "digests/{digest}-{when}.{ext}"'),
     "channel.archive.path", "unknown field {when} (known fields: {digest}, {date}, {ext}, {format})"),
    (('path = "digests/{digest}-{date}.{ext}"', 'path = "digests/{digest-{date}.{ext}"'),
     "channel.archive.path", "not a path template"),
    (('path = "digests/{digest}-{date}.{ext}"', 'path = "digests/{0}.txt"'),
     "channel.archive.path", "unknown field {0}"),
    (('title = "LLM-RL"', 'title = "LLM-RL"\nexamples = ["hello world"]'), "profile.llm-rl.examples",
     "neither an arXiv id"),
    (('title = "LLM-RL"', 'title = "LLM-RL"\nexamples = ["2504.07615", "missing.txt"]'),
     "profile.llm-rl.examples", "missing.txt does not exist"),
]


@pytest.mark.parametrize("change, key, words", BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_bad_config_names_file_key_and_problem(write_config, change, key, words):
    old, new = change
    assert old in MINIMAL_CONFIG
    path = write_config(MINIMAL_CONFIG.replace(old, new, 1))
    with pytest.raises(ConfigError) as e:
        load_config(path)
    message = str(e.value)
    assert message.startswith(str(path) + ": " + key)
    assert words in message
    assert "\n" not in message


def test_secret_in_file_is_refused(write_config):
    path = write_config(MINIMAL_CONFIG + """
[channel.me]
type = "email"
host = "smtp.example.org"
from = "me@example.org"
to = ["me@example.org"]
password = "hunter2"
""")
    with pytest.raises(ConfigError, match=r"channel\.me\.password: unknown key"):
        load_config(path)


def test_invalid_toml_and_missing_file(write_config, tmp_path):
    with pytest.raises(ConfigError, match=r"invalid TOML.*: \[watcher$"):
        load_config(write_config("[watcher\n"))
    # the line the error points at names the key, never its value (QA: "Cannot overwrite a value")
    with pytest.raises(ConfigError, match=r"invalid TOML: Cannot overwrite a value \(at line 3.*\): "
                                          r"database = …$") as e:
        load_config(write_config('[watcher]\ndatabase = "a.db"\ndatabase = "hunter2-secret"\n'))
    assert "hunter2" not in str(e.value)
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "nope.toml")


def test_cli_bad_config_exits_2_with_one_line_and_no_traceback(write_config, tmp_path):
    path = write_config(MINIMAL_CONFIG.replace("[watcher]", "[watcher]\ncolour = 'red'"))
    r = run_cli("--config", str(path), "once", cwd=tmp_path)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "config.toml: watcher.colour: unknown key" in err
    assert not (tmp_path / "watcher.db").exists()


def test_check_accepts_a_good_config_and_reports_missing_secret(write_config, tmp_path):
    path = write_config(MINIMAL_CONFIG)
    r = run_cli("--config", str(path), "check", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert b"OK" in r.stdout
    path = write_config(MINIMAL_CONFIG + """
[channel.lab]
type = "slack"
webhook_url_env = "WATCHER_TEST_NO_SUCH_VAR"
""")
    r = run_cli("--config", str(path), "check", cwd=tmp_path)
    assert r.returncode == 2
    assert b"channel.lab.webhook_url_env: environment variable WATCHER_TEST_NO_SUCH_VAR is not set" in r.stderr


def test_config_discovery_order(write_config, tmp_path, monkeypatch):
    here = write_config(MINIMAL_CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WATCHER_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert find_config(None).resolve() == here.resolve()
    monkeypatch.setenv("WATCHER_CONFIG", "/elsewhere.toml")
    assert str(find_config(None)) == "/elsewhere.toml"
    assert str(find_config("x.toml")) == "x.toml"
    monkeypatch.delenv("WATCHER_CONFIG")
    here.unlink()
    with pytest.raises(ConfigError, match="no config file found .*; pass --config PATH, or write one here with 'watcher init'"):
        find_config(None)


@pytest.mark.parametrize("text, expected", [
    ("3d", timedelta(days=3)), ("6h", timedelta(hours=6)), ("30m", timedelta(minutes=30)),
    ("10s", timedelta(seconds=10)), ("1h30m", timedelta(hours=1, minutes=30)), ("2w", timedelta(weeks=2)),
])
def test_durations(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "3", "3 days", "-1d", "0s", "d3", "36501d", "99999999d",
                                  "99999999999999999999d"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_good_values_at_the_edges_load(write_config, tmp_path):
    (tmp_path / "seed.txt").write_text("x", encoding="utf-8")
    path = write_config(MINIMAL_CONFIG.replace('title = "LLM-RL"', """title = "LLM-RL"
categories = ["cs.LG", "math.AG", "hep-ex", "astro-ph.CO", "q-bio.NC", "cond-mat.str-el", "cs", "stat.*"]
examples = ["2504.07615", "arXiv:2104.12255v1", "https://arxiv.org/abs/astro-ph/0601001", "seed.txt"]
""").replace('schedule = "30 21 * * sun-thu"', 'schedule = "0 0 29 2 *"\nlookback = "36500d"')
        .replace('type = "file"', 'type = "file"\ntimeout = 0.5').replace(
        "[channel.archive]", _RSS.replace('"cs.LG"', '"cs.LG", "hep-ex", "astro-ph.CO"') + 'timeout = 5\n'
        + _EMAIL + 'port = 65535\nmax_bytes = 10000\n[channel.archive]'))
    cfg = load_config(path)
    assert cfg.digests["daily"].lookback == timedelta(days=36500)
    assert cfg.channels["me"].options.port == 65535 and cfg.sources["rss"].timeout == 5
    assert cfg.profiles["llm-rl"].examples[-1] == "seed.txt"


@pytest.mark.parametrize("change", [
    ('schedule = "30 21 * * sun-thu"', 'schedule = "0 0 30 2 *"'),
    ('schedule = "30 21 * * sun-thu"', 'every = "99999999d"'),
    ("[channel.archive]", _RSS + 'timeout = -1\n[channel.archive]'),
])
def test_cli_check_refuses_values_that_used_to_crash_later(write_config, tmp_path, change):
    path = write_config(MINIMAL_CONFIG.replace(*change))
    for args in (["check"], ["status"], ["once", "--due", "--dry-run"]):
        r = run_cli("--config", str(path), *args, cwd=tmp_path)
        err = r.stderr.decode()
        assert r.returncode == 2, (args, err)
        assert err.count("\n") == 1 and "Traceback" not in err


# --- [web] and [summarizer] (docs/configuration.md) ---------------------------------------------------------

WEB_BAD = [
    ('[web]\nlisten = "0.0.0.0:8080"\n', "web.password_env", "not a loopback address"),
    ('[web]\nlisten = "8080"\n', "web.listen", "not HOST:PORT"),
    ('[web]\nlisten = "127.0.0.1:70000"\n', "web.listen", "between 1 and 65535"),
    ('[web]\nbase_url = "papers.example.org"\nsecret_env = "S"\n', "web.base_url", "not an http(s) URL"),
    ('[web]\nbase_url = "https://papers.example.org"\n', "web.secret_env", "required with web.base_url"),
    ('[web]\nsecret_env = "not a name"\n', "web.secret_env", "must name an environment variable"),
    ('[web]\nport = 80\n', "web.port", "unknown key"),
    ('[summarizer]\ntype = "gpt"\n', "summarizer.type", "not one of extractive, openai"),
    ('[summarizer]\ntype = "openai"\nmodel = "m"\n', "summarizer.base_url", "required"),
    ('[summarizer]\ntype = "openai"\nbase_url = "http://127.0.0.1:1/v1"\n', "summarizer.model", "required"),
    ('[summarizer]\ntimeout = 0\n', "summarizer.timeout", "positive"),
    ('[summarizer]\nmax_per_day = -1\n', "summarizer.max_per_day", "0 or more"),
]


@pytest.mark.parametrize("extra, key, words", WEB_BAD, ids=[b[1] + ":" + b[2] for b in WEB_BAD])
def test_bad_web_and_summarizer_tables(write_config, extra, key, words):
    with pytest.raises(ConfigError) as e:
        load_config(write_config(MINIMAL_CONFIG + "\n" + extra))
    assert key in str(e.value) and words in str(e.value)


def test_web_and_summarizer_defaults_and_values(write_config):
    cfg = load_config(write_config(MINIMAL_CONFIG))
    assert (cfg.web.host, cfg.web.port, cfg.web.loopback, cfg.web.base_url) == ("127.0.0.1", 8080, True, None)
    assert cfg.summarizer.type == "extractive"
    cfg = load_config(write_config(MINIMAL_CONFIG + '\n[web]\nlisten = "[::1]:9000"\n'
                                   'base_url = "https://x.org/papers/"\nsecret_env = "WS"\n'
                                   'password_env = "WP"\nserve = true\n'
                                   '[summarizer]\ntype = "openai"\nbase_url = "http://127.0.0.1:5/v1/"\n'
                                   'model = "m"\nmax_per_day = 0\n'))
    assert cfg.web.listen == "[::1]:9000" and cfg.web.loopback and cfg.web.serve
    assert cfg.web.base_url == "https://x.org/papers"
    assert cfg.summarizer.base_url == "http://127.0.0.1:5/v1" and cfg.summarizer.max_per_day == 0
    # a public address is fine once a password protects it
    cfg = load_config(write_config(MINIMAL_CONFIG + '\n[web]\nlisten = "0.0.0.0:8080"\npassword_env = "WP"\n'))
    assert not cfg.web.loopback


def test_check_names_unset_web_secrets(write_config, tmp_path):
    path = write_config(MINIMAL_CONFIG + '\n[web]\nbase_url = "https://x.org"\nsecret_env = "WATCHER_T_UNSET"\n')
    r = run_cli("--config", str(path), "check")
    assert r.returncode == 2 and b"web.secret_env: environment variable WATCHER_T_UNSET is not set" in r.stderr


_SECRET = "sk-abc123/SECRET"
SECRET_IN_ENV_KEY = [
    ("[summarizer]\napi_key_env = \"{s}\"\n", "summarizer.api_key_env"),
    ("[web]\nsecret_env = \"{s}\"\n", "web.secret_env"),
    ("[web]\npassword_env = \"{s}\"\n", "web.password_env"),
    ('[channel.me]\ntype = "email"\nhost = "smtp.example.org"\nfrom = "a@example.org"\n'
     'to = ["a@example.org"]\nusername = "a"\npassword_env = "{s}"\n', "channel.me.password_env"),
    ('[channel.lab]\ntype = "slack"\nwebhook_url_env = "{s}"\n', "channel.lab.webhook_url_env"),
    ('[channel.hook]\ntype = "webhook"\nurl_env = "{s}"\n', "channel.hook.url_env"),
    ('[channel.phone]\ntype = "apprise"\nurls_env = "{s}"\n', "channel.phone.urls_env"),
]


@pytest.mark.parametrize("extra, key", SECRET_IN_ENV_KEY, ids=[k for _, k in SECRET_IN_ENV_KEY])
def test_a_secret_pasted_into_an_env_key_is_refused_without_echoing_it(write_config, tmp_path, extra, key):
    path = write_config(MINIMAL_CONFIG + extra.replace("{s}", _SECRET))
    r = run_cli("--config", str(path), "check", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert f"{key}: must name an environment variable (letters, digits, _), not hold the secret itself" in err
    assert "sk-abc123" not in err and "SECRET" not in err and err.count("\n") == 1


@pytest.mark.parametrize("path, formats, words", [
    ("{tmp}/out/", '["text"]', "ends in /: it must name a file"),
    ("digests/daily", '["text", "html"]', "has neither {ext} nor {format}, but digest daily writes 2 "
                                          "formats (text, html)"),
], ids=["slash", "no-ext"])
def test_check_refuses_file_paths_that_would_misbehave_when_written(write_config, tmp_path, path, formats, words):
    text = MINIMAL_CONFIG.replace('path = "digests/{digest}-{date}.{ext}"',
                                  f'path = "{path.replace("{tmp}", str(tmp_path))}"')
    text = text.replace('channels = ["archive"]', f'channels = ["archive"]\nformats = {formats}')
    r = run_cli("--config", str(write_config(text)), "check", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert f"channel.archive.path: {words}" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_check_says_when_a_feed_path_is_a_folder(write_config, tmp_path):
    (tmp_path / "feeds" / "daily.atom").mkdir(parents=True)
    cfg = write_config(MINIMAL_CONFIG.replace('channels = ["archive"]', 'channels = ["archive", "feed"]')
                       + '\n[channel.feed]\ntype = "feed"\npath = "feeds/{digest}.atom"\n')
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode() == (f"watcher: {cfg}: channel.feed.path: {tmp_path / 'feeds' / 'daily.atom'} "
                                 "is a folder, not a feed file\n")


@pytest.mark.parametrize("path, words", [
    ("blocker/digests/{digest}-{date}.{ext}", "folder {d}/blocker/digests cannot be created: {d}/blocker is not a folder"),
    ("/proc/watcher-digests/{format}/{digest}.{ext}",
     "folder /proc/watcher-digests/text cannot be created: /proc is not writable"),
])
def test_check_says_when_a_file_channel_cannot_write_its_folder(write_config, tmp_path, path, words):
    """Tested as the database's folder is: a path through a regular file, or under a folder that
    no file can be made in (/proc, which permissions alone call writable for root); one line."""
    if path.startswith("/proc") and not Path("/proc/self").exists():
        pytest.skip("no /proc here")
    (tmp_path / "blocker").write_text("a file where a folder should be")
    cfg = write_config(MINIMAL_CONFIG.replace('path = "digests/{digest}-{date}.{ext}"', f'path = "{path}"'))
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b"", err
    assert err.startswith(f"watcher: {cfg}: channel.archive.path: {words.format(d=tmp_path)}") and err.count("\n") == 1, err
    sent = run_cli("--config", str(cfg), "test-deliver", "archive", cwd=tmp_path)
    assert sent.returncode == 1 and b"channel archive: cannot write" in sent.stderr, sent.stderr  # and it does fail


def test_check_on_a_damaged_database_prints_the_problem_never_ok(write_config, tmp_path):
    cfg = write_config(MINIMAL_CONFIG)
    (tmp_path / "watcher.db").write_bytes(b"this is not a database" * 100)
    r = run_cli("--config", str(cfg), "check", cwd=tmp_path)
    assert r.returncode != 0
    assert r.stdout == b"" and b"OK" not in r.stderr and r.stderr.count(b"\n") == 1, r.stderr


def test_check_names_every_mistake_of_the_file_once_each(write_config, tmp_path):
    """Four mistakes in four places (and two in one table): `watcher check` prints one line for
    each, so a user fixes them in one go; a digest that names a profile or channel with a problem
    of its own gets no second line for it."""
    from helpers import run_cli

    text = (MINIMAL_CONFIG.replace('timezone = "UTC"', 'timezone = "Europe/Berlinn"')
            .replace('title = "LLM-RL"', 'title = "LLM-RL"\nmax_paper = 5\nmin_score = "high"')
            .replace('channels = ["archive"]', 'channels = ["archive"]\nlookback = "3 days"')
            .replace('type = "file"', 'type = "file"\nformat = "html"')
            + '\n[web]\nlisten = 8080\n')
    path = write_config(text)
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert "\n" not in str(e.value)  # one line for a log
    r = run_cli("--config", str(path), "check", cwd=tmp_path)
    lines = r.stderr.decode().splitlines()
    assert r.returncode == 2 and "Traceback" not in r.stderr.decode()
    keys = ["watcher.timezone", "profile.llm-rl.max_paper", "profile.llm-rl.min_score",
            "channel.archive.format", "digest.daily.lookback", "web.listen"]
    assert sorted(line.split(": ")[2] for line in lines) == sorted(keys), lines
    assert all(line.startswith(f"watcher: {path}: ") for line in lines)


def test_check_notes_a_config_that_would_never_fetch_or_deliver(write_config, tmp_path):
    """Valid but idle (a newcomer's first edit): `check` passes and says, one line each, that
    nothing will be fetched, nothing delivered, and which profile no digest names."""
    from helpers import run_cli

    path = write_config('[watcher]\ndatabase = "w.db"\n\n[profile.x]\nquery = "GRPO"\n')
    r = run_cli("--config", str(path), "check", cwd=tmp_path)
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 0 and lines[0].endswith("OK — 0 sources, 1 profile, 0 digests, 0 channels")
    assert [line.split(": ", 1)[1] for line in lines[1:]] == [
        "no [source.NAME]: nothing will be fetched ('watcher init' writes an example config)",
        "no [digest.NAME]: nothing will be delivered (a digest names profiles and channels)",
        "profile.x: in no digest's profiles: its papers are delivered nowhere"]
