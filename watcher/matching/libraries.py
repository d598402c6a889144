"""A profile's Zotero library as its examples, as the last sync stored them (read when the
profile is compiled; :mod:`watcher.zotero.sync` fetches and stores them). Light: the store and the
profile are what it is handed, so the matcher needs nothing of the Zotero client."""

from __future__ import annotations


def examples(store, profile) -> list:
    """The papers of ``profile``'s Zotero items as the last sync left them: each the stored
    paper it is (by arXiv id, DOI, PMID, then title: :meth:`~watcher.store.Store.find`), else
    the paper Zotero describes. Nothing before the first sync (or without the table)."""
    lib = getattr(profile, "zotero", None)
    if lib is None or not lib.read:
        return []
    out = []
    for paper in store.zotero_examples(lib.sync_key):
        found = None
        for name in (paper.arxiv_id, paper.doi, f"pmid:{paper.pmid}" if paper.pmid else None, paper.title):
            if name and (found := store.find(name)) is not None:
                break
        out.append(found or paper)
    return out


def read_state(store, profile) -> tuple | None:
    """What the stored Zotero items of ``profile`` are now (the library version and count
    read last), for the web's kept matchers (:class:`watcher.matching.compile.Compiled`); None without."""
    lib = getattr(profile, "zotero", None)
    return None if lib is None else store.zotero_read_state(lib.sync_key)
