"""What decides a profile's matcher, as a fingerprint: the same inputs give the same one in any
process (its config but what decides nothing, its example papers, what it learns from its
ratings). The records made with a matcher keep it (what a profile selects per day, what its
ratings' self-check decided: :mod:`watcher.cycle.selections`), so a record is read only while
it is what the profile would decide now."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import date, datetime
from pathlib import PurePath

# what of a profile's config decides nothing it selects: where its config file is (the example
# files are read into the examples), its title, its digests' cap, its Zotero library's place
# (its items are among the examples) and where Save goes
NOT_DECIDING = frozenset({"base_dir", "title", "max_papers", "zotero", "save_to_zotero"})
RECORD_VERSION = 2  # part of every fingerprint: a change to how profiles score papers counts again


def _plain(value):
    """``value`` as JSON-able data, the same in every process (sets sorted, dataclasses by field)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return sorted([str(k), _plain(v)] for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (PurePath, date, datetime)):
        return str(value)
    return repr(value)


def fingerprint(made_from: tuple) -> str:
    """What decides a matcher fitted from ``made_from``
    (:func:`~watcher.matching.compile.made_from`), without fitting it
    (:func:`watcher.cycle.selections.decided_by` of a compiled one)."""
    profile, examples, learned = made_from
    config = {k: v for k, v in _plain(profile).items() if k not in NOT_DECIDING}
    text = json.dumps([RECORD_VERSION, config, _plain(examples), _plain(learned)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
