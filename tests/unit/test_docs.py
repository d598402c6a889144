"""The README, docs/ and --help stay true: every command and every config key is documented."""

from __future__ import annotations

import re

import pytest

from conftest import REPO
from helpers import run_cli
from watcher import config as cfg
from watcher.cli import cli
from watcher.deliver import KINDS as CHANNEL_KINDS
from watcher.sources import KINDS as SOURCE_KINDS

README = (REPO / "README.md").read_text(encoding="utf-8")
# the documentation: the README, then its pages in docs/ (the references live there)
DOCS = "\n".join([README] + [p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md"))])


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_is_in_the_readme_and_in_help(command):
    assert f"`watcher {command}" in DOCS
    r = run_cli(command, "--help")
    assert r.returncode == 0 and r.stdout.startswith(b"Usage: watcher " + command.encode())


def _all_keys():
    tables = [("watcher", cfg._WATCHER_KEYS), ("source", cfg._SOURCE_COMMON), ("profile", cfg._PROFILE_KEYS),
              ("digest", cfg._DIGEST_KEYS), ("channel", cfg._CHANNEL_COMMON)]
    tables += [("source", kind.keys) for kind in SOURCE_KINDS.values()]  # each kind's, from its module
    tables += [("channel", kind.keys) for kind in CHANNEL_KINDS.values()]
    return sorted({(section, key) for section, keys in tables for key in keys})


@pytest.mark.parametrize("section, key", _all_keys())
def test_every_config_key_is_documented_in_its_section(section, key):
    part = DOCS.split(f"**`[{section}", 1)[1].split("\n**`[", 1)[0]
    assert re.search(rf"`{re.escape(key)}`", part), f"[{section}] {key} is not in the docs"


@pytest.mark.parametrize("kind", [*SOURCE_KINDS, *CHANNEL_KINDS])
def test_every_source_and_channel_type_is_documented(kind):
    assert f"| `{kind}` |" in DOCS


@pytest.mark.slow  # runs a benchmark script (benchmarks/eval_profile.py) over the 7,258-paper corpus
def test_the_readmes_reproduce_with_the_corpus_commands_work_as_written():
    """The commands under "Reproduce from the repository's root" run as printed and give the
    figures the README states."""
    import re
    import shlex
    import subprocess
    import sys

    from conftest import REPO
    from helpers import run_cli

    readme = DOCS
    block = readme.split("Reproduce from the repository's root")[1].split("```sh\n")[1].split("```")[0]
    convert, evaluate = block.replace("\\\n", " ").strip().splitlines()
    args, count = convert.split("|")[0], int(re.search(r"# (\d+) =", convert).group(1))
    words = shlex.split(args)
    assert words[0] == "watcher"
    out = run_cli(*words[1:], cwd=REPO)
    assert out.returncode == 0, out.stderr
    import json

    assert len(json.loads(out.stdout)) == count
    cmd, said = evaluate.split("#")
    words = shlex.split(cmd)
    assert words[0] == "python"
    run = subprocess.run([sys.executable, *words[1:]], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert said.strip() in run.stdout, run.stdout


def test_the_readmes_copy_paste_sources_pass_check_without_the_optional_ncbi_key(tmp_path):
    """The "copy-paste start" of the new sources, pasted under a minimal config: `check` passes
    without NCBI_API_KEY (the key is optional) and says at what rate PubMed is then read; with
    the key set it says nothing of it."""
    from conftest import MINIMAL_CONFIG

    snippet = DOCS.split("A copy-paste start:")[1].split("```toml\n")[1].split("```")[0]
    assert "[source.pubmed]" in snippet and 'api_key_env = "NCBI_API_KEY"' in snippet
    (tmp_path / "config.toml").write_text(MINIMAL_CONFIG + "\n" + snippet, encoding="utf-8")
    without = run_cli("check", cwd=tmp_path, env={"NCBI_API_KEY": ""})
    assert without.returncode == 0, without.stderr
    said = without.stdout.decode()
    assert "OK — 3 sources" in said, said
    assert ("source.pubmed.api_key_env: NCBI_API_KEY is not set: PubMed is read at 3 requests a "
            "second") in said, said
    with_key = run_cli("check", cwd=tmp_path, env={"NCBI_API_KEY": "a-key"})
    assert with_key.returncode == 0 and "NCBI_API_KEY" not in with_key.stdout.decode(), with_key.stdout


def test_the_folders_the_quick_start_writes_are_git_ignored():
    """What the README's quick start writes in a checkout (the archive's digests, the static
    site, the databases) never shows up in `git status`."""
    import fnmatch

    ignored = (REPO / ".gitignore").read_text().split()
    sites = re.findall(r"watcher site (\w[\w.-]*) --sample", README)
    assert "site" in sites
    for folder in set(sites) | {"digests"}:
        assert f"/{folder}/" in ignored, folder
    for name in ("watcher.db", "watcher-sample.db", "watcher-sample.db.write.lock"):
        assert any(fnmatch.fnmatch(name, pattern) for pattern in ignored), name


def test_the_readmes_test_command_is_the_one_ci_runs():
    """`.ci/run` ends in the README's test command (or the docs' it points to), word for word
    but pip's -q: what a developer is told to run is what CI runs (every test, on every core)."""
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").rstrip("\n").splitlines()[-1]
    docs = [README] + [p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("**/*.md"))]
    ours = sorted({line for text in docs for line in text.splitlines()
                   if "-m pytest" in line and line.startswith("python3 -m venv")})
    assert len(ours) == 1, ours
    assert ci.replace("pip install -q ", "pip install ") == ours[0]
    assert " -n auto" in ours[0] and "-m \"not slow\"" not in ours[0]  # the whole suite, on every core


# What the code's comments point to: pages of docs/, never a document outside the repository.
_CODE = sorted(p for d in ("watcher", "templates") for p in (REPO / d).rglob("*")
               if p.is_file() and p.suffix in (".py", ".html", ".txt", ".json", ".xml", ".md"))
_OUTSIDE = re.compile(r"\bSPEC\b")  # the product spec the project was started from
_POINTER = re.compile(r'docs/([\w.-]+\.md)(?: "([^"\n]+)")?')


def test_code_points_to_docs_pages_never_to_a_spec_outside_the_repository():
    """Every contract a comment relies on is stated in docs/: a comment says ``docs/web.md``
    (or ``docs/web.md "Security"``, a paragraph of it), never the external spec ("SPEC" and a section number)."""
    outside = [f"{p.relative_to(REPO)}:{n}" for p in _CODE + [REPO / "pyproject.toml"]
               for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
               if _OUTSIDE.search(line)]
    assert not outside, f"these name the external spec, not a docs/ page: {outside}"


def test_every_docs_page_a_comment_names_exists_and_has_the_paragraph_it_names():
    pointers = {(p.relative_to(REPO), m[1], m[2]) for p in _CODE
                for m in _POINTER.finditer(p.read_text(encoding="utf-8"))}
    assert len(pointers) > 50  # the code does point to its pages
    missing = sorted(f"{where}: docs/{page}" + (f' "{para}"' if para else "")
                     for where, page, para in pointers
                     if not (REPO / "docs" / page).is_file()
                     or (para and para not in (REPO / "docs" / page).read_text(encoding="utf-8")))
    assert not missing, f"comments point to pages or paragraphs docs/ does not have: {missing}"
