"""``/``: the inbox — the latest delivered issue of each digest, with its reasons."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from .feeds import feed_link
from .pages import inline, page, reading, state, tldrs
from .ratings import marks


@inline
def inbox(request: Request):
    config = state(request).config
    with reading(request) as store:
        latest = {row["digest"]: row for row in store.latest_issues()}
        issues = [store.issue(name, row["day"]) for name, row in latest.items()]
        papers = [m.paper for i in issues for m in i["matches"] + i["updated"]]
        shown, marked = tldrs(store, papers), marks(request, store, papers)
    never = [name for name in config.digests if name not in latest]
    return page(request, "inbox.html", issues=issues, never=never, tldrs=shown,
                feeds={name: feed_link(request, name) for name in latest}, marks=marked)


routes = [Route("/", inbox)]
