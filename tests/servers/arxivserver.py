"""Serve a recorded arXiv API response as a paged API: entries sorted newest first and cut by
``start``/``max_results``, with the OpenSearch counters rewritten, like export.arxiv.org does."""

from __future__ import annotations

import re

from httpserver import Reply

_ENTRY = re.compile(rb"\s*<entry>.*?</entry>", re.S)
_PUBLISHED = re.compile(rb"<published>([^<]+)</published>")


class PagedFeed:
    """A recorded feed split into pages on request."""

    def __init__(self, raw: bytes):
        entries = _ENTRY.findall(raw)
        first = raw.index(entries[0])
        self.head = raw[:first]
        self.tail = raw[first + sum(len(e) for e in entries):]
        self.entries = sorted(entries, key=lambda e: _PUBLISHED.search(e).group(1), reverse=True)

    def page(self, start: int, size: int) -> bytes:
        """The API response for ``start`` / ``max_results``."""
        head = re.sub(rb"(<opensearch:totalResults[^>]*>)\d+", rb"\g<1>%d" % len(self.entries), self.head)
        head = re.sub(rb"(<opensearch:startIndex[^>]*>)\d+", rb"\g<1>%d" % start, head)
        head = re.sub(rb"(<opensearch:itemsPerPage[^>]*>)\d+", rb"\g<1>%d" % size, head)
        return head + b"".join(self.entries[start:start + size]) + self.tail

    def reply(self, request) -> Reply:
        """A Reply for a server route."""
        start = int(request.query.get("start", 0))
        size = int(request.query.get("max_results", 10))
        return Reply(body=self.page(start, size), headers={"Content-Type": "application/atom+xml"})
