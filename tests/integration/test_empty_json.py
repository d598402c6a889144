"""An empty JSON array is an empty listing, not an unknown format."""

from __future__ import annotations

import pytest

from conftest import MINIMAL_CONFIG
from helpers import run_cli
from watcher import formats


def test_watchers_own_json_of_an_empty_listing_reads_back(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"LLM-RL - 2025-04-12")  # a text digest without papers: its header only
    as_json = run_cli("convert", str(empty), "--to", "json", cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    assert as_json.stdout.strip() == b"[]"
    back = run_cli("convert", "-", "--date", "2025-04-12", input=as_json.stdout, cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    assert formats.read(back.stdout, "back").papers == []
    again = run_cli("convert", "-", "--to", "json", input=as_json.stdout, cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == as_json.stdout


@pytest.mark.parametrize("body", [b"[]", b"[ ]\n", b"\xef\xbb\xbf[\n]", b'{"data": []}', b'{ "data" : [ ] }\n'],
                         ids=repr)
def test_an_empty_json_day_is_an_empty_listing(body):
    listing = formats.read(body, "day.json")
    assert listing.papers == []


def test_a_listing_source_of_an_empty_hugging_face_day_fetches_nothing(write_config, tmp_path):
    (tmp_path / "day.json").write_bytes(b"[]")
    cfg = write_config(MINIMAL_CONFIG.replace("[profile.llm-rl]",
                                              '[source.lab]\ntype = "listing"\npath = "day.json"\n\n[profile.llm-rl]'))
    r = run_cli("--config", str(cfg), "fetch", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"lab: 0 new, 0 updated, 0 unchanged\n"


@pytest.mark.parametrize("body", [b"[1]", b"[{}]", b'{"data": [1]}', b"[", b'{"data": []} x'], ids=repr)
def test_other_json_is_still_refused(body):
    from watcher.errors import InputError

    with pytest.raises(InputError):
        formats.read(body, "x.json")
