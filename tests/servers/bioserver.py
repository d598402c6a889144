"""Stand-ins for the bioRxiv/medRxiv details API and NCBI E-utilities, serving the fixtures of
tests/data the way the services page them (see tests/data/README.md for what they are).

* :class:`BiorxivApi` answers ``/details/{server}/{from}/{to}/{cursor}`` (``?category=``) with
  ``page_size`` records of the fixture's collection from ``cursor``, the ``messages`` counters
  rewritten (``total`` as text, as the API writes it), "no posts found" when nothing is left;
  ``intervals`` records each (server, from, to, category) asked.
* :class:`PubmedApi` answers ``esearch.fcgi`` with the fixture's search (its ``count`` the
  number of records served) and ``efetch.fcgi`` with the records ``retstart`` .. ``retstart +
  retmax`` of the fixture's ``PubmedArticleSet``, refusing a WebEnv / query_key it did not give
  (as NCBI answers an unknown history with an error); ``pmids`` serves only those records.
"""

from __future__ import annotations

import json
import re

from httpserver import Reply

JSON = {"Content-Type": "application/json; charset=UTF-8"}
XML = {"Content-Type": "text/xml; charset=UTF-8"}


class BiorxivApi:
    """A details JSON fixture served in pages."""

    def __init__(self, raw: bytes, page_size: int = 2):
        self.doc = json.loads(raw)
        self.page_size = page_size
        self.intervals: list[tuple] = []

    def reply(self, request) -> Reply:
        *_, server, start, end, cursor = request.path.split("/")
        category = request.query.get("category")
        self.intervals.append((server, start, end, category))
        records = [r for r in self.doc["collection"]
                   if not category or r["category"] == category.replace("_", " ")]
        cursor = int(cursor)
        page = records[cursor:cursor + self.page_size]
        if not page:
            return Reply(body=json.dumps({"messages": [{"status": "no posts found"}],
                                          "collection": []}).encode(), headers=JSON)
        message = {"status": "ok", "interval": f"{start}:{end}", "cursor": cursor,
                   "count": len(page), "count_new_papers": str(sum(r["version"] == "1" for r in page)),
                   "total": str(len(records))}
        return Reply(body=json.dumps({"messages": [message], "collection": page},
                                     ensure_ascii=False).encode(), headers=JSON)


_ARTICLE = re.compile(rb"<PubmedArticle>.*?</PubmedArticle>\s*", re.S)


class PubmedApi:
    """An esearch JSON and an efetch XML fixture served as E-utilities with a history."""

    def __init__(self, esearch: bytes, efetch: bytes, pmids: set[str] | None = None):
        self.search = json.loads(esearch)
        self.articles = [a for a in _ARTICLE.findall(efetch) if pmids is None
                         or re.search(rb"<PMID[^>]*>(\d+)<", a).group(1).decode() in pmids]
        first = _ARTICLE.search(efetch)
        self.head = efetch[:first.start()]
        self.tail = b"</PubmedArticleSet>\n"

    @property
    def webenv(self) -> str:
        return self.search["esearchresult"]["webenv"]

    def esearch(self, request) -> Reply:
        doc = json.loads(json.dumps(self.search))
        doc["esearchresult"]["count"] = str(len(self.articles))
        return Reply(body=json.dumps(doc).encode(), headers=JSON)

    def efetch(self, request) -> Reply:
        q = request.query
        if q.get("WebEnv") != self.webenv or q.get("query_key") != self.search["esearchresult"]["querykey"]:
            return Reply(status=400, body=b'{"error":"Unable to obtain query #1"}', headers=JSON)
        start, size = int(q.get("retstart", 0)), int(q.get("retmax", 20))
        return Reply(body=self.head + b"".join(self.articles[start:start + size]) + self.tail,
                     headers=XML)
