"""``/``: the inbox — the latest delivered issue of each digest, with its reasons."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from .pages import inline, page, reading, state
from .ratings import marks


@inline
def inbox(request: Request):
    config = state(request).config
    with reading(request) as store:
        latest = {row["digest"]: row for row in store.latest_issues()}
        issues = [store.issue(name, row["day"]) for name, row in latest.items()]
        shown = marks(request, store, [m.paper for i in issues for m in i["matches"] + i["updated"]])
    never = [name for name in config.digests if name not in latest]
    return page(request, "inbox.html", issues=issues, never=never, marks=shown)


routes = [Route("/", inbox)]
