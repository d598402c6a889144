"""A kind is one module: each source and channel kind declares its type, keys, validation and
what ``check`` says in its own module (watcher/sources/*.py, watcher/deliver/*.py),
``watcher.sources.KINDS`` and ``watcher.deliver.KINDS`` list them, and config.py / check.py read
the registries and name no kind (docs/design.md, "Adding a kind")."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from datetime import timedelta

import pytest

from conftest import REPO
from watcher import config as cfg
from watcher.errors import ConfigError
from watcher.kinds import Kind
from watcher.deliver import KINDS as CHANNEL_KINDS
from watcher.deliver.base import Channel
from watcher.sources import KINDS as SOURCE_KINDS
from watcher.sources.base import Source

DOCS = "\n".join(p.read_text(encoding="utf-8") for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])


FAMILIES = {"source": (SOURCE_KINDS, Source), "channel": (CHANNEL_KINDS, Channel)}


@pytest.mark.parametrize("family, name", [(f, n) for f, (kinds, _) in FAMILIES.items() for n in kinds])
def test_every_kind_is_declared_by_its_own_module_and_documented(family, name):
    kinds, base = FAMILIES[family]
    kind = kinds[name]
    assert isinstance(kind, Kind) and kind.name == name and issubclass(kind.cls, base)
    module = importlib.import_module(kind.cls.__module__)
    assert module.KIND is kind  # the declaration lives beside the class it makes
    part = DOCS.split(f"**`[{family}", 1)[1].split("\n**`[", 1)[0]
    for key, (typ, _default) in kind.keys.items():
        assert typ in (str, int, float, bool, list, dict)
        assert re.search(rf"`{re.escape(key)}`", part), f"[{family}] {key} ({name}) is not in the docs"
    assert f"| `{name}` |" in DOCS


def test_config_reads_the_registries():
    assert cfg.SOURCE_TYPES == tuple(SOURCE_KINDS)
    assert cfg._SOURCE_KEYS == {name: kind.keys for name, kind in SOURCE_KINDS.items()}
    assert cfg.CHANNEL_TYPES == tuple(CHANNEL_KINDS)
    assert cfg._CHANNEL_KEYS == {name: kind.keys for name, kind in CHANNEL_KINDS.items()}
    assert cfg.FORMAT_CHANNELS == ("file", "stdout")


def _kind_comparisons(path, family: str):
    """``(subject, string)`` of every comparison in ``path`` of a kind's ``type`` with a string
    constant: the ``typ == "feed"`` of a chain of per-kind rules. ``family``: "source" or
    "channel" (a subject naming a channel, such as ``ch.type`` or ``_channel``'s ``typ``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef):
            continue
        for node in ast.walk(func):
            if not isinstance(node, ast.Compare):
                continue
            parts = [node.left, *node.comparators]
            subjects = [ast.unparse(p) for p in parts
                        if (isinstance(p, ast.Name) and p.id == "typ") or (isinstance(p, ast.Attribute) and p.attr == "type")]
            if not subjects:
                continue
            channelish = func.name == "_channel" or any(re.search(r"\bch\b|channel", x) for x in subjects)
            if channelish != (family == "channel"):
                continue
            found += [(subjects[0], sub.value) for p in parts for sub in ast.walk(p)
                      if isinstance(sub, ast.Constant) and isinstance(sub.value, str)]
    return found


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("module", ["config.py", "cli/check.py", "categories.py", "present/links.py"])
def test_no_kind_is_named_in_config_or_check(module, family):
    found = _kind_comparisons(REPO / "watcher" / module, family)
    assert not found, f"{module} compares a {family}'s type with {found}: the kind's rules belong in its module"
    text = (REPO / "watcher" / module).read_text(encoding="utf-8")
    for name in FAMILIES[family][0]:  # nor a literal such as ("file", "feed") of kinds
        assert not re.search(rf"\btyp(e)? (==|!=|in|not in) .*\"{re.escape(name)}\"", text), name


def test_the_scan_finds_a_chain_of_per_kind_rules(tmp_path):
    """The scan above is not vacuous: the code config.py had before catches."""
    old = tmp_path / "old.py"
    old.write_text('def _source(r, typ, v, s):\n    if typ == "pubmed" and not v:\n        pass\n'
                   '    if s.type in ("pubmed", "openalex"):\n        pass\n'
                   'def _channel(typ):\n    return typ == "email"\n')
    assert sorted(_kind_comparisons(old, "source")) == [("s.type", "openalex"), ("s.type", "pubmed"), ("typ", "pubmed")]
    assert _kind_comparisons(old, "channel") == [("typ", "email")]


def test_a_kinds_own_validation_runs_from_its_module(monkeypatch, write_config):
    """The rule a kind declares is the one config applies: swap pubmed's and the message changes."""
    text = '[source.p]\ntype = "pubmed"\nterm = "CRISPR[tiab]"\n'
    path = write_config(text)
    assert cfg.load_config(path).sources["p"].options.term == "CRISPR[tiab]"

    def refuse(r, where, v):
        raise r.fail(f"{where}.term", "refused by the kind's own rule")

    import dataclasses

    monkeypatch.setitem(SOURCE_KINDS, "pubmed", dataclasses.replace(SOURCE_KINDS["pubmed"], validate=refuse))
    with pytest.raises(ConfigError, match="source.p.term: refused by the kind's own rule"):
        cfg.load_config(path)


def test_a_channel_kinds_check_runs_from_its_module(monkeypatch, write_config, tmp_path):
    """`watcher check` asks each channel's kind: swap the file kind's check and its line shows."""
    import dataclasses

    from watcher.cli.check import check_config

    text = """
    [profile.p]
    query = "x"
    [channel.out]
    type = "file"
    path = "out/{digest}.{ext}"
    [digest.d]
    profiles = ["p"]
    channels = ["out"]
    every = "1d"
    """
    config = cfg.load_config(write_config(text))
    assert not [p for p in check_config(config)[0] if "channel.out" in p]
    monkeypatch.setitem(CHANNEL_KINDS, "file", dataclasses.replace(
        CHANNEL_KINDS["file"], check=lambda config, where, ch: [f"{where}: {ch.name}: asked"]))
    assert f"{config.path}: out: asked" in check_config(config)[0]


KEY_DOCS = {"source": "sources.md", "channel": "channels.md"}


@pytest.mark.parametrize("family, name", [(f, n) for f, (kinds, _) in FAMILIES.items() for n in kinds])
def test_the_docs_key_table_of_each_kind_is_its_options_class(family, name):
    """docs/sources.md and docs/channels.md, "Every key of each type": each kind's table is its
    options class written out, no key more, none less, each with its type, default and help."""
    from watcher.kinds import key_of, key_table

    cls = FAMILIES[family][0][name].options
    doc = (REPO / "docs" / KEY_DOCS[family]).read_text(encoding="utf-8")
    part = doc.split("\n## Every key of each type\n", 1)[1].split(f"\n### `{name}`\n\n", 1)[1]
    table = part.split("\n\n", 1)[0].strip() + "\n"
    documented = re.findall(r"^\| `([^`]+)` \|", table, re.M)
    fields = [key_of(f) for f in dataclasses.fields(cls)]
    assert set(documented) - set(fields) == set(), f"docs list keys {name} lacks"
    assert set(fields) - set(documented) == set(), f"{name}'s keys missing from the docs"
    assert table == key_table(cls), f"docs/{KEY_DOCS[family]}'s table of {name} should read:\n{key_table(cls)}"


def test_a_key_marked_secret_is_checked_masked_and_wanted_set(monkeypatch, write_config):
    """A secret a kind adds is marked in its options class only: config checks it names a
    variable, secret_vars (what the log masks and `check` wants set) lists it, and an unset one
    the kind runs without is a note of `check`, not a problem."""
    from watcher.cli.check import check_config, optional_secret_notes
    from watcher.kinds import first_fetch as since_first, option, options

    @options
    class WithToken:
        term: str = option(help="the query")
        token_env: str | None = option(None, secret=True, help="a token", unset="asked without a token")
        first_fetch: timedelta | None = since_first()

    monkeypatch.setitem(SOURCE_KINDS, "pubmed", dataclasses.replace(SOURCE_KINDS["pubmed"], keys=WithToken,
                                                                    options=None))
    text = '[source.p]\ntype = "pubmed"\nterm = "CRISPR[tiab]"\ntoken_env = "PM_TOKEN"\n'
    config = cfg.load_config(write_config(text))
    assert config.secret_vars() == {"source.p.token_env": "PM_TOKEN"}
    monkeypatch.delenv("PM_TOKEN", raising=False)
    assert list(optional_secret_notes(config)) == ["source.p.token_env"]
    assert not [p for p in check_config(config)[0] if "PM_TOKEN" in p]
    with pytest.raises(ConfigError, match="source.p.token_env: must name an environment variable"):
        cfg.load_config(write_config(text.replace("PM_TOKEN", "s3cr3t value")))
