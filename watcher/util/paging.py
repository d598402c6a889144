"""Pure: the total bounds of one paged read (docs/security-limits.md, "Paged clients"). Every
client that follows pages (Zotero, OpenAlex, bioRxiv, PubMed, arXiv's OAI-PMH) reads within a
:class:`Paging`: at most ``pages`` pages (empty ones count), ``items`` items and ``size``
bytes of answers in all, every request chain of the read together, and, when given,
``seconds`` from its start; a page of more items than ``per_page`` (the number asked) is
refused. Past a bound it raises ``error`` with one line naming the bound: what was read is not
all there is, so the caller keeps nothing of it and the next run asks again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Paging:
    """See the module docstring. ``what`` names the read in messages (``source pubmed: PubMed``),
    ``unit`` its items (``works``)."""

    what: str
    error: type
    pages: int
    items: int
    size: int
    seconds: float | None = None
    per_page: int | None = None
    unit: str = "items"
    clock: Callable[[], float] = time.monotonic
    read_pages: int = 0
    read_items: int = 0
    read_size: int = 0
    started: float = field(default=0.0)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def next_page(self) -> None:
        """Before asking for a page: the error when a bound of pages, bytes or time is reached."""
        why = (f"{self.pages:,} pages" if self.read_pages >= self.pages else
               f"{self.size:,} bytes" if self.read_size > self.size else
               f"{self.seconds:g} s" if self.seconds is not None and self.clock() - self.started > self.seconds
               else None)
        if why:
            raise self.error(f"{self.what} was still paging after {why} ({self.read_items:,} {self.unit}); "
                             "not kept, the next run tries again")
        self.read_pages += 1

    def took(self, size: int, items: int) -> None:
        """After a page of ``size`` bytes holding ``items`` items: the error past ``per_page``
        or the bound of items."""
        self.read_size += size
        if self.per_page is not None and items > self.per_page:
            raise self.error(f"{self.what} sent a page of {items:,} {self.unit}, more than the "
                             f"{self.per_page} asked; not read")
        self.read_items += items
        if self.read_items > self.items:
            raise self.error(f"{self.what} sent more than {self.items:,} {self.unit} in one read; not kept "
                             "(narrow what it asks for)")
