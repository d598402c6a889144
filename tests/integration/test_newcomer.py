"""From the sample to one's own digest, as a newcomer goes: ``watcher init``, its next steps,
the starter's e-mail channel and ``[web]`` uncommented as it says, ``watcher check``'s notes,
and a real e-mail (aiosmtpd) in which every paper has a link and rating links. In-process
(click's runner) but for the mail server."""

from __future__ import annotations

import os
import re
import tomllib
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner

from deliverkit import MailServer
from watcher.cli import cli
from watcher.config import _CHANNEL_COMMON, _CHANNEL_KEYS
from watcher.cli.init_files import starter_config

SECRET = "a-long-random-secret-for-the-links-0123456789"
LOGIN = ("me@localhost", "s3cret-password")


@contextmanager
def inside(folder: Path):
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def watcher(folder: Path, *args: str, env: dict | None = None):
    """``watcher ARGS`` in ``folder``, in this process; (exit code, stdout, stderr)."""
    with inside(folder):
        r = CliRunner().invoke(cli, list(args), prog_name="watcher", env=env, catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def uncomment(text: str, header: str) -> str:
    """The starter with the commented table ``header`` made a table, as its comment says."""
    lines = text.splitlines(keepends=True)
    start = lines.index(f"# {header}\n")
    end = next(i for i in range(start, len(lines)) if lines[i].rstrip() == "#")
    return "".join(lines[:start] + [line[2:] for line in lines[start:end]] + lines[end:])


def test_init_prints_three_next_steps_and_the_starter_has_every_email_key(tmp_path):
    code, out, _ = watcher(tmp_path, "init")
    assert code == 0
    steps = re.findall(r"^  (\d)\. (.+)$", out, re.M)
    assert [n for n, _ in steps] == ["1", "2", "3"], out
    assert "watcher once --sample" in steps[0][1]
    assert "[channel.mail]" in steps[1][1] and "[web]" in steps[1][1]
    assert "watcher check" in steps[2][1] and "watcher test-deliver mail" in steps[2][1]
    text = (tmp_path / "config.toml").read_text()
    mail = tomllib.loads(uncomment(text, "[channel.mail]"))["channel"]["mail"]
    assert set(mail) == set(_CHANNEL_COMMON) | set(_CHANNEL_KEYS["email"])  # every key, each explained
    web = tomllib.loads(uncomment(text, "[web]"))["web"]
    assert set(web) == {"base_url", "secret_env"}


def test_check_says_per_channel_which_keys_give_the_digest_its_links(tmp_path):
    (tmp_path / "config.toml").write_text(starter_config())
    code, out, _ = watcher(tmp_path, "check")
    assert code == 0
    notes = [line for line in out.splitlines() if "rating links" in line]
    assert notes == ["config.toml: channel.archive (file): its digests carry no rating links, and no "
                     "link for a paper without a page of its own: set web.base_url and web.secret_env"]
    # a file channel writing only text (which carries no links) has nothing to be told
    (tmp_path / "config.toml").write_text(starter_config().replace('formats = ["text", "html"]', 'formats = ["text"]'))
    assert "rating links" not in watcher(tmp_path, "check")[1]


def test_the_starter_uncommented_as_it_says_mails_every_paper_with_a_link_and_rating_links(tmp_path):
    """The newcomer's path: uncomment [channel.mail] and [web], add "mail" to the digest, set
    the two variables: check is quiet about links, and the e-mail of the sample carries, for
    every paper, a link on its title and up / down / save links."""
    watcher(tmp_path, "init")
    text = uncomment(uncomment((tmp_path / "config.toml").read_text(), "[channel.mail]"), "[web]")
    with MailServer(login=LOGIN) as smtp:
        text = (text.replace('channels = ["archive"]', 'channels = ["archive", "mail"]')
                .replace('host = "smtp.example.org"', 'host = "127.0.0.1"').replace("me@example.org", "me@localhost")
                .replace("port = 587", f"port = {smtp.port}").replace('security = "starttls"', 'security = "none"'))
        (tmp_path / "config.toml").write_text(text)
        env = {"WATCHER_SMTP_PASSWORD": LOGIN[1], "WATCHER_SECRET": SECRET}
        code, out, err = watcher(tmp_path, "check", env=env)
        assert code == 0, err
        assert "rating links" not in out
        code, out, err = watcher(tmp_path, "once", "--sample", env=env)
        assert code == 0, err
        assert len(smtp.received) == 1
        html = smtp.received[0].message.get_body(("html",)).get_content()
    papers = re.findall(r'<div style="font-size:17px;line-height:23px;font-weight:bold;color:#111827;">(.*?)</div>', html, re.S)
    assert len(papers) == 30
    assert all(p.startswith('<a href="http') for p in papers), [p for p in papers if "<a " not in p][:3]
    assert html.count('href="http://127.0.0.1:8080/r/') >= 30  # a rating link per paper


# --- a profile that brings nothing says so, everywhere ---------------------------------------

PROTEIN = '''
[profile.protein]
title = "Diffusion models for protein design"
query = '"protein design" AND diffusion'
'''


def two_profiles(folder: Path, smtp_port: int) -> str:
    """The starter with a second profile that matches none of the sample's 351 papers, both in
    the digest, delivered to the archive and by e-mail to the local server."""
    watcher(folder, "init")
    text = uncomment((folder / "config.toml").read_text(), "[channel.mail]") + PROTEIN
    text = (text.replace('profiles = ["llm-rl"]', 'profiles = ["llm-rl", "protein"]')
            .replace('channels = ["archive"]', 'channels = ["archive", "mail"]')
            .replace('host = "smtp.example.org"', 'host = "127.0.0.1"').replace("me@example.org", "me@localhost")
            .replace("port = 587", f"port = {smtp_port}").replace('security = "starttls"', 'security = "none"'))
    (folder / "config.toml").write_text(text)
    return text


def test_a_profile_with_no_papers_is_named_with_its_count_and_left_out_of_the_title(tmp_path, monkeypatch):
    from starlette.testclient import TestClient

    from watcher.config import load_config
    from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once, sample_config, sample_now
    from watcher.present.summary import digest_lines, skim
    from webkit import app_for

    hint = "Diffusion models for protein design none, preview its query: watcher serve, then /profiles/protein"
    with MailServer(login=LOGIN) as smtp:
        two_profiles(tmp_path, smtp.port)
        config = sample_config(load_config(tmp_path / "config.toml"))
        monkeypatch.setenv("WATCHER_SMTP_PASSWORD", LOGIN[1])
        with inside(tmp_path):
            report = run_once(config, Cycle(now=sample_now(config)), Fetch(), Deliver())
        assert report.ok
        message = smtp.received[0].message
    # the terminal: the line per digest and the sample's skim
    assert digest_lines(report, ["daily"]) == [
        f"digest daily: delivered 30 papers to archive, mail; per profile: LLM-RL 30; {hint}"]
    issue = next(c.issue for c in report.channels if c.issue)
    assert skim(issue, []).splitlines()[0] == f"LLM-RL - 2025-04-12: 30 papers — LLM-RL 30; {hint}"
    # the subject and the digest's header: the title names only the profile that brought papers
    assert message["Subject"] == "LLM-RL — 2025-04-12: 30 new papers (LLM-RL 30, Diffusion models for protein design none)"
    html = message.get_body(("html",)).get_content()
    assert re.search(r'font-weight:bold;color:#111827;">LLM-RL</div>', html)
    assert "LLM-RL: 30 · Diffusion models for protein design: none" in html
    text = message.get_body(("plain",)).get_content()
    assert "Per profile: LLM-RL 30, Diffusion models for protein design none" in text
    # status and the inbox read what the issue recorded
    code, out, _ = watcher(tmp_path, "status", "--sample")
    assert code == 0 and f"last issue 2025-04-12, per profile: LLM-RL 30; {hint}" in out
    with TestClient(app_for(config, config.settings.database)) as client:
        page = client.get("/").text
    assert "LLM-RL</a>: 30 papers" in page
    assert re.search(r'Diffusion models for protein design</a>: none in its window \(<a href="[^"]*/profiles/protein#preview">preview its query</a>\)', page)



def test_the_e_mail_text_part_says_how_to_preview_an_empty_profile_on_a_line_of_its_own(tmp_path, monkeypatch):
    """With [web] set, the text part's header names each profile's count and, on the next line,
    the link to preview the empty one's query (it ran on: '... none' + 'Preview the query of ...')."""
    from watcher.config import load_config
    from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once, sample_config, sample_now

    with MailServer(login=LOGIN) as smtp:
        text = uncomment(two_profiles(tmp_path, smtp.port), "[web]")
        (tmp_path / "config.toml").write_text(text)
        monkeypatch.setenv("WATCHER_SMTP_PASSWORD", LOGIN[1])
        monkeypatch.setenv("WATCHER_SECRET", SECRET)
        config = sample_config(load_config(tmp_path / "config.toml"))
        with inside(tmp_path):
            assert run_once(config, Cycle(now=sample_now(config)), Fetch(), Deliver()).ok
        body = smtp.received[0].message.get_body(("plain",)).get_content()
    head = body.splitlines()[:4]
    assert head[1] == "Per profile: LLM-RL 30, Diffusion models for protein design none", head
    assert head[2] == ("Preview the query of Diffusion models for protein design: "
                       "http://127.0.0.1:8080/profiles/protein#preview"), head
    assert head[3].startswith("View in browser: http://127.0.0.1:8080/digests/daily/2025-04-12/"), head



def test_check_says_when_a_base_url_on_this_machine_is_not_where_serve_listens(tmp_path):
    """base_url moved to port 8090 while serve still listens on 8080: every paper and rating
    link of the e-mail would reach nothing, and check said OK."""
    watcher(tmp_path, "init")
    starter = uncomment((tmp_path / "config.toml").read_text(), "[web]")
    env = {"WATCHER_SECRET": SECRET}
    (tmp_path / "config.toml").write_text(starter)
    code, out, err = watcher(tmp_path, "check", env=env)
    assert code == 0 and "web.base_url" not in out + err, out + err
    (tmp_path / "config.toml").write_text(starter.replace("http://127.0.0.1:8080", "http://localhost:8090"))
    code, out, _ = watcher(tmp_path, "check", env=env)
    assert code == 0
    assert [line for line in out.splitlines()[1:] if " asks " not in line] == [
        "config.toml: web.base_url (http://localhost:8090) is this machine's port 8090, "
        "but watcher serve listens on 127.0.0.1:8080 (web.listen): the digests' paper and rating links "
        "would reach nothing; give both the same port"], out
    agreed = starter.replace("http://127.0.0.1:8080", "http://localhost:8090").replace(
        'secret_env = "WATCHER_SECRET"', 'secret_env = "WATCHER_SECRET"\nlisten = "127.0.0.1:8090"')
    (tmp_path / "config.toml").write_text(agreed)
    code, out, _ = watcher(tmp_path, "check", env=env)
    assert code == 0 and "web.base_url" not in out, out
    # a name of another machine may sit behind a proxy on any port: nothing to say
    (tmp_path / "config.toml").write_text(starter.replace("http://127.0.0.1:8080", "https://papers.example.org"))
    code, out, _ = watcher(tmp_path, "check", env=env)
    assert code == 0 and "web.base_url" not in out, out



def test_status_says_a_digest_whose_only_profile_matched_nothing_delivered_nothing_and_why(tmp_path):
    """A digest of one profile that matched none of the sample's papers sends nothing (no
    send_empty) and records no issue: status said only 'last run (ok)' and 'last delivery
    never'; it now says why, per profile, with where to preview the query."""
    watcher(tmp_path, "init")
    text = (tmp_path / "config.toml").read_text().replace('profiles = ["llm-rl"]', 'profiles = ["protein"]')
    (tmp_path / "config.toml").write_text(text + PROTEIN)
    code, out, _ = watcher(tmp_path, "once", "--sample")
    assert code == 0
    code, out, _ = watcher(tmp_path, "status", "--sample")
    assert code == 0
    assert ("    last run delivered nothing: no new papers (nothing matched your profiles); per profile: "
            "Diffusion models for protein design none, preview its query: watcher serve, then "
            "/profiles/protein") in out.splitlines(), out
    # the profile edited, the same papers are not matched again by 'once' (never twice), and
    # it says so and how to, not "nothing new was announced"
    (tmp_path / "config.toml").write_text(text.replace('profiles = ["protein"]', 'profiles = ["llm-rl", "protein"]')
                                          + PROTEIN)
    from watcher.config import load_config  # the terminal's line per digest (stderr on a tty)
    from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once, sample_config, sample_now
    from watcher.present.summary import digest_lines

    config = sample_config(load_config(tmp_path / "config.toml"))
    with inside(tmp_path):
        report = run_once(config, Cycle(now=sample_now(config)), Fetch(), Deliver())
    assert re.fullmatch(r"digest daily: no new papers \(nothing stored since the last run \(2025-04-12 23:59\), "
                        r"which matched every paper before it; to match those again \(a profile just "
                        r"edited\): 'watcher digest daily --sample --since DAY'\)",  # the sample's: with --sample
                        digest_lines(report, ["daily"])[0]), \
        digest_lines(report, ["daily"])
    code, out, err = watcher(tmp_path, "digest", "daily", "--sample", "--since", "2025-04-09")
    assert code == 0
    code, out, _ = watcher(tmp_path, "status", "--sample")
    assert "delivered nothing" not in out and "last issue 2025-04-12, per profile: LLM-RL 30" in out, out



def test_test_deliver_says_why_its_e_mail_has_no_rating_links_and_whether_digests_will(tmp_path):
    """The test e-mail's papers are samples that are not in the database, so it never has
    rating links: with [web] set it says the digests will; without, it names the keys to set
    (a newcomer checking 'e-mail with links' saw none and was told nothing)."""
    with MailServer() as smtp:
        text = "\n".join(line for line in two_profiles(tmp_path, smtp.port).splitlines()
                         if not line.startswith(("username =", "password_env =")))  # no login
        (tmp_path / "config.toml").write_text(text)
        code, out, err = watcher(tmp_path, "test-deliver", "mail")
        assert code == 0 and out.splitlines() == [
            "sent a test digest through channel mail",
            "config.toml: channel.mail (email): its digests carry no rating links, and no link for a "
            "paper without a page of its own: set web.base_url and web.secret_env"], out + err
        (tmp_path / "config.toml").write_text(uncomment(text + "\n", "[web]"))
        code, out, err = watcher(tmp_path, "test-deliver", "mail", env={"WATCHER_SECRET": SECRET})
        assert code == 0 and out.splitlines() == [
            "sent a test digest through channel mail",
            "  (its papers are samples, not in your database, so it has no rating links; your digests have them)"], out + err
        code, out, err = watcher(tmp_path, "test-deliver", "archive", env={"WATCHER_SECRET": SECRET})
        assert code == 0 and out.splitlines()[0].startswith("sent a test digest through channel archive: wrote "), out
        written = out.splitlines()[0].split(": wrote ", 1)[1].split(", ")
        assert written and all((tmp_path / name).is_file() for name in written), out  # where it went
        assert len(smtp.received) == 2



def test_an_issue_names_a_profile_it_carried_that_the_digest_no_longer_has(tmp_path):
    """The newcomer's path: the sample with the starter's profile (30 papers to the archive),
    then the digest switched to their own profile and a new channel, the same day: the issue
    holds both messages, and its per-profile line (status, the inbox) had dropped LLM-RL, so 30
    papers sat under 'Protein design: 1 paper'."""
    from starlette.testclient import TestClient

    from webkit import app_for

    watcher(tmp_path, "init")
    assert watcher(tmp_path, "once", "--sample")[0] == 0
    text = (tmp_path / "config.toml").read_text()
    text = (text.replace('profiles = ["llm-rl"]', 'profiles = ["protein"]')
            .replace('channels = ["archive"]', 'channels = ["archive", "mine"]')
            + '\n[profile.protein]\ntitle = "Protein design"\n'
              'query = \'"protein language model" AND "reinforcement learning"\'\n'
              '\n[channel.mine]\ntype = "file"\npath = "mine/{digest}-{date}.{ext}"\n')
    (tmp_path / "config.toml").write_text(text)
    from watcher.cycle.pipeline import Cycle, Deliver, Fetch, run_once, sample_now
    from watcher.present.summary import digest_lines

    config = sample_config_of(tmp_path)
    with inside(tmp_path):
        report = run_once(config, Cycle(now=sample_now(config)), Fetch(), Deliver())
    assert (tmp_path / "mine" / "daily-2025-04-12.txt").is_file()
    # the archive, which had the sample's papers in the first run, is named with why it got none
    assert digest_lines(report, ["daily"]) == [
        "digest daily: delivered 1 paper to mine; nothing to archive (nothing new since the last delivery "
        "(2025-04-12 23:59))"]
    code, out, _ = watcher(tmp_path, "status", "--sample")
    assert "    last issue 2025-04-12, per profile: Protein design 1; LLM-RL 30" in out.splitlines(), out
    config = sample_config_of(tmp_path)
    with TestClient(app_for(config, config.settings.database)) as client:
        issue = client.get("/index.json").json()["issues"][0]
    assert [(p["name"], p["papers"]) for p in issue["profiles"]] == [("protein", 1), ("llm-rl", 30)]


def sample_config_of(folder: Path):
    from watcher.config import load_config
    from watcher.cycle.pipeline import sample_config

    return sample_config(load_config(folder / "config.toml"))


# --- messages that misled ------------------------------------------------------------------

def test_serve_warns_about_a_reverse_proxy_only_when_base_url_reaches_other_machines(tmp_path, monkeypatch, caplog):
    """The starter's [web] (base_url on this machine, no password) is no exposed inbox."""
    from watcher.config import load_config
    from watcher.web.serve import plan

    monkeypatch.setenv("WATCHER_SECRET", SECRET)
    for base_url, warned in (("http://127.0.0.1:8080", False), ("http://localhost:8080/papers", False),
                             ("http://[::1]:8080", False), ("https://papers.example.org", True)):
        (tmp_path / "config.toml").write_text(starter_config() + f'\n[web]\nbase_url = "{base_url}"\n'
                                                                  'secret_env = "WATCHER_SECRET"\n')
        caplog.clear()
        with caplog.at_level("WARNING", logger="watcher"):
            plan(load_config(tmp_path / "config.toml"))
        assert any("reverse proxy" in r.getMessage() for r in caplog.records) is warned, base_url


def test_an_empty_or_blank_query_fails_check_in_one_clear_line(tmp_path):
    text = starter_config()
    start = text.index("query = '''")
    end = text.index("'''\n", start + 12) + 4
    for query in ('""', '"   "', "'''\n\n'''"):
        (tmp_path / "config.toml").write_text(text[:start] + f"query = {query}\n" + text[end:])
        code, out, err = watcher(tmp_path, "check")
        assert code == 2 and "OK" not in out, (query, out)
        assert err == ("watcher: config.toml: profile.llm-rl.query: is empty: write a query such as "
                       "'\"protein design\" AND diffusion', or leave the key out (a profile without one "
                       "selects by its authors, examples and ratings)\n"), (query, err)


def test_state_restore_outside_a_clone_or_without_the_remote_says_what_is_missing(tmp_path):
    import subprocess

    (tmp_path / "config.toml").write_text(starter_config())
    code, _, err = watcher(tmp_path, "state", "restore", "s.gz", "--git-branch", "watcher-state")
    assert code == 1 and err.startswith("watcher: not a git repository"), err
    assert "repository exists." not in err and err.count("\n") == 1
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    code, _, err = watcher(tmp_path, "state", "restore", "s.gz", "--git-branch", "watcher-state")
    assert code == 1 and err.startswith("watcher: no git remote named 'origin' here"), err
    assert "git remote add origin URL" in err and err.count("\n") == 1
    code, _, err = watcher(tmp_path, "state", "restore", "s.gz", "--git-branch", "watcher-state",
                           "--git-remote", str(tmp_path / "nowhere.git"))
    assert code == 1 and "does not appear to be a git repository" in err, err
    assert "repository exists." not in err


def test_the_sample_logs_at_the_chosen_level(tmp_path):
    """`--sample` is no reason for INFO lines: piped, stderr stays empty (stdout is the
    digest); `--log-level info` still shows them."""
    (tmp_path / "config.toml").write_text(starter_config())
    code, out, err = watcher(tmp_path, "once", "--sample")
    assert code == 0 and out.startswith("LLM-RL - 2025-04-12: 30 papers\n")
    assert err == "", err
    (tmp_path / "watcher-sample.db").unlink()
    code, out, err = watcher(tmp_path, "--log-level", "info", "once", "--sample")
    assert code == 0 and "INFO: digest daily -> archive: delivered 30 papers" in err


def test_once_due_fetches_nothing_when_no_digest_is_due(tmp_path):
    """A timer running `watcher once --due` every 15 minutes fetches only when a digest is due."""
    from conftest import SEED_DIGEST
    from watcher import formats
    from watcher.store import Store

    seed = formats.read(SEED_DIGEST.read_bytes(), "seed")

    def listing(n: int) -> None:
        entries = [f"{p.title}\n\nAuthors:{', '.join(p.authors)}\nDate:{p.published:%Y-%m-%d %H:%M:%S}\n\n{p.abstract}"
                   for p in seed.papers[:n]]
        (tmp_path / "listing.txt").write_text("\n\n".join([f"{seed.title} - 2025-04-12"] + entries))

    text = starter_config()
    start, end = text.index("[source.arxiv-ml]"), text.index("# Reinforcement learning for")
    text = text[:start] + '[source.local]\ntype = "listing"\npath = "listing.txt"\n\n' + text[end:]
    (tmp_path / "config.toml").write_text(text.replace('schedule = "30 21 * * sun-thu"', 'every = "1d"'))

    def stored() -> int:
        with Store.open(tmp_path / "watcher.db") as store:
            return store.count_papers()

    listing(3)
    assert watcher(tmp_path, "once")[0] == 0 and stored() == 3
    listing(6)
    code, out, err = watcher(tmp_path, "once", "--due")  # delivered a moment ago: due in a day
    assert code == 0 and stored() == 3, err
    assert watcher(tmp_path, "fetch")[0] == 0 and stored() == 6  # the listing did have more


# --- the page that walks a newcomer through it, and the no-server README ----------------------

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "getting-started-email.md"


def test_the_getting_started_page_shows_what_init_and_check_say_and_its_toml_works(tmp_path, monkeypatch):
    doc = DOC.read_text()
    code, out, _ = watcher(tmp_path, "init", "my-papers")
    assert code == 0 and out in doc  # the init output, verbatim
    folder = tmp_path / "my-papers"
    code, out, _ = watcher(folder, "check")
    note = next(line for line in out.splitlines() if "rating links" in line).replace("archive (file)", "mail (email)")
    assert note in doc
    snippet = doc.split("## 4. E-mail, with links")[1].split("```toml\n")[1].split("```")[0]
    tables = snippet.split("\n[channel.mail]")
    text = (folder / "config.toml").read_text().replace('channels = ["archive"]', 'channels = ["archive", "mail"]')
    (folder / "config.toml").write_text(text + "\n[channel.mail]" + tables[1])
    monkeypatch.setenv("WATCHER_SMTP_PASSWORD", "x")
    monkeypatch.setenv("WATCHER_SECRET", SECRET)
    code, out, err = watcher(folder, "check")
    assert code == 2 and err.strip() in doc, err  # the placeholders, said as the page shows
    (folder / "config.toml").write_text((folder / "config.toml").read_text().replace("example.org", "mylab.net"))
    code, out, err = watcher(folder, "check")
    assert code == 0 and "rating links" not in out, err


def test_the_no_server_readme_says_why_its_mail_has_no_rating_links(tmp_path):
    for kind in ("github", "gitlab"):
        assert watcher(tmp_path, "init", f"--{kind}", kind)[0] == 0
        said = " ".join((tmp_path / kind / "README.md").read_text().split())
        assert "The e-mail has no up / down / save links" in said
        assert "a scheduled CI run has no server" in said and "watcher rate up" in said
