"""The store's interface (watcher/store/interface.py) is the store's: every member of the
Protocol exists on Store with the same signature, and every public method of Store is in the
Protocol, so that the list a second store would implement stays true."""

from __future__ import annotations

import inspect

from watcher.store import Store
from watcher.store.interface import StoreInterface


def _public(cls) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls) if not name.startswith("_") and callable(getattr(cls, name))}


def _shape(fn) -> str:
    """A method's signature as text, the class's own name for itself (Store, StoreInterface)
    and quotes aside."""
    return str(inspect.signature(fn)).replace("StoreInterface", "Store").replace("'", "").replace('"', "")


def test_the_store_has_every_method_of_its_interface_with_the_same_signature():
    members = _public(StoreInterface)
    assert members, "the Protocol lists the store's methods"
    missing = sorted(members - _public(Store))
    assert missing == [], f"Store lacks {missing}"
    differ = {name: (_shape(getattr(Store, name)), _shape(getattr(StoreInterface, name)))
              for name in sorted(members) if _shape(getattr(Store, name)) != _shape(getattr(StoreInterface, name))}
    assert differ == {}, f"(Store, interface) signatures differ: {differ}"
    for name in members:  # a classmethod there is one here
        assert (isinstance(inspect.getattr_static(Store, name), classmethod)
                == isinstance(inspect.getattr_static(StoreInterface, name), classmethod)), name


def test_every_public_method_of_the_store_is_in_its_interface():
    extra = sorted(_public(Store) - _public(StoreInterface))
    assert extra == [], f"public Store methods missing from watcher/store/interface.py: {extra}"


def test_the_interface_names_the_attributes_callers_read():
    assert set(StoreInterface.__annotations__) == {"path", "serial"}
    store = Store.open(None)
    try:
        assert store.path is None and store.serial == 0
    finally:
        store.close()


def test_the_store_answers_a_damaged_file_with_its_own_error_never_sqlite3s(tmp_path):
    """The boundary: a method, a generator's step and a search's candidates each raise the
    store's error in words, naming the file (what `watcher` prints, the web's 503 shows)."""
    from datetime import date

    import pytest

    from watcher.errors import DatabaseUnavailable

    path = tmp_path / "junk.db"
    path.write_bytes(b"not a database at all, " * 100)
    store = Store.open(path, readonly=True)  # opened lazily: the first statement meets the junk
    try:
        for read in (store.count_papers, lambda: store.issues(), lambda: next(store.day_papers(date(2025, 4, 12), 10)),
                     lambda: store.search_candidates(None, day_from=None, day_to=None, category=None,
                                                     order="newest", ranked=10, page=None).fetch()):
            with pytest.raises(DatabaseUnavailable, match=f"{path}: the database file is damaged"):
                read()
    finally:
        store.close()
