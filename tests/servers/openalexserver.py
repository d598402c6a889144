"""A stand-in for the OpenAlex API (api.openalex.org), serving the works of tests/data/openalex
the way OpenAlex documents it (see tests/data/openalex/SOURCES.md):

* ``/works?filter=…&cursor=…&per-page=…[&search=…]``: the works matching every filter of the
  comma-separated list, each filter's values OR-ed with ``|`` — ``cites:W1|W2`` (the work's
  ``referenced_works``), ``author.orcid:https://orcid.org/…``, ``author.id:A…``,
  ``from_created_date:YYYY-MM-DD`` (``created_date`` on or after; ``created_refused`` answers it
  with 403, as for a key-only filter), ``from_publication_date:``, ``topics.id:T…`` — paged by
  cursor: ``cursor=*`` starts, ``meta.next_cursor`` (an opaque base64 string) continues, null
  on the last page; ``meta.count`` the number of matches. An unknown filter is a 400 with
  OpenAlex's error document.
* ``/works/{W…|doi:…|pmid:…}``: one work (followed works are resolved so), 404 when unknown.

``requests`` records the query of each list request; ``throttle(n)`` answers the next ``n``
list requests with 429 and ``Retry-After: 1`` (OpenAlex's answer past its rate limit).
"""

from __future__ import annotations

import base64
import json

from httpserver import Reply

JSON = {"Content-Type": "application/json"}


def _short(url: str | None) -> str:
    return (url or "").rstrip("/").rsplit("/", 1)[-1]


class OpenalexApi:
    """Works (dicts as OpenAlex serves them) behind ``/works``."""

    def __init__(self, works: list[dict], single: list[dict] = (), page_size: int = 2):
        self.works = list(works)
        self.single = list(single) + self.works  # what /works/{id} finds
        self.page_size = page_size
        self.requests: list[dict] = []
        self.resolved: list[str] = []
        self._throttle = 0
        self.created_refused = False  # answer from_created_date with 403, as for a key-only filter

    def throttle(self, n: int) -> None:
        self._throttle = n

    def mount(self, server, prefix: str = "/oa") -> None:
        server.route(f"{prefix}/works", self.list)
        server.route(f"{prefix}/works/*", self.get)

    def _keep(self, work: dict, name: str, values: list[str]) -> bool:
        if name == "cites":
            return bool({_short(r) for r in work.get("referenced_works") or ()} & set(values))
        if name in ("author.orcid", "author.id"):
            field = "orcid" if name == "author.orcid" else "id"
            have = {(a.get("author") or {}).get(field) for a in work.get("authorships") or ()}
            have |= {_short(h) for h in have if h}
            return bool(have & set(values))
        if name == "from_created_date":
            if self.created_refused:
                raise PermissionError(name)
            return (work.get("created_date") or "") >= values[0]
        if name == "from_publication_date":
            return (work.get("publication_date") or "") >= values[0]
        if name == "topics.id":
            return bool({_short(t.get("id")) for t in work.get("topics") or ()} & set(values))
        raise KeyError(name)

    def list(self, request) -> Reply:
        q = request.query
        self.requests.append(dict(q))
        if self._throttle:
            self._throttle -= 1
            return Reply(status=429, headers={**JSON, "Retry-After": "1"},
                         body=b'{"error":"Rate limit exceeded","message":"Too many requests"}')
        found = list(self.works)
        for part in filter(None, q.get("filter", "").split(",")):
            name, _, value = part.partition(":")
            try:
                found = [w for w in found if self._keep(w, name, value.split("|"))]
            except PermissionError:
                body = {"error": "Forbidden", "message": "from_created_date requires an API key"}
                return Reply(status=403, headers=JSON, body=json.dumps(body).encode())
            except KeyError:
                body = {"error": "Invalid query parameters error.",
                        "message": f"{name} is not a valid field. Valid fields are …"}
                return Reply(status=400, headers=JSON, body=json.dumps(body).encode())
        if q.get("search"):
            words = q["search"].lower().split()
            found = [w for w in found if all(x in json.dumps(w).lower() for x in words)]
        size = min(int(q.get("per-page", 25)), self.page_size)
        cursor = q.get("cursor")
        start = 0 if cursor in (None, "*") else int(base64.b64decode(cursor))
        page = found[start:start + size]
        more = start + size < len(found)
        meta = {"count": len(found), "db_response_time_ms": 28, "page": None, "per_page": size,
                "next_cursor": base64.b64encode(str(start + size).encode()).decode() if more else None}
        return Reply(headers=JSON, body=json.dumps({"meta": meta, "results": page, "group_by": []},
                                                   ensure_ascii=False).encode())

    def get(self, request) -> Reply:
        from urllib.parse import unquote

        wanted = unquote(request.path.split("/works/", 1)[1])
        self.resolved.append(wanted)
        for work in self.single:
            ids = {_short(work["id"])}
            if work.get("doi"):
                ids.add("doi:" + work["doi"].split("doi.org/", 1)[-1].lower())
            if (work.get("ids") or {}).get("pmid"):
                ids.add("pmid:" + _short(work["ids"]["pmid"]))
            if wanted in ids or wanted.lower() in ids:
                return Reply(headers=JSON, body=json.dumps(work, ensure_ascii=False).encode())
        return Reply(status=404, headers=JSON,
                     body=b'{"error":"404 Not Found","message":"The requested URL was not found."}')
