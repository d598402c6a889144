"""``/``: the inbox — the latest delivered issue of each digest: its messages as recorded
(papers, reasons, TL;DRs), as the issue's page shows them."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.routing import Route

from ..present.counts import profile_counts
from .feeds import feed_link
from .auth import csrf_token, logged_in
from .digests import issue_json, papers_of, sections, shown_tldrs
from .pages import PageMemo, database_state, json_page, page, reading, state, threaded, url, view_mode, wants_json
from .ratings import marks


@threaded
def inbox(request: Request):
    """The page is kept while the database and the config are unchanged (the daemon writes
    once a cycle, a reader reloads it many times): by their state and all that is the reader's own
    (the session's CSRF token in the forms, the login, the feed links, the page's address)."""
    st = state(request)
    config = st.config
    with reading(request) as store:
        latest = {row.digest: row for row in store.latest_issues()}
        feeds = {name: feed_link(request, name) for name in latest}
        key = (database_state(store), st.config_serial, csrf_token(request), logged_in(request),
               tuple(feeds.items()), str(request.url))
        memo = PageMemo(st.inbox_pages)
        kept = memo.get(key)
        if kept is not None:
            return kept
        issues = [store.issue(name, row.day) for name, row in latest.items()]
        shown, marked = shown_tldrs(store, issues), marks(request, store, papers_of(issues))
        counts = [profile_counts(config.digests[i.digest], config.profiles,
                                 store.issue_profile_counts(i.digest, i.day))
                  if i.digest in config.digests else [] for i in issues]
    never = [name for name in config.digests if name not in latest]
    if wants_json(request):  # /index.json: the issues as recorded, with what each profile brought
        return memo.keep(key, json_page({
            "issues": [dict(issue_json(request, i, shown), profiles=[
                {"name": c.name, "title": c.title, "papers": c.papers,
                 "url": url(request, f"/profiles/{quote(c.name, safe='')}")} for c in per])
                for i, per in zip(issues, counts)],
            "never": never}))
    return memo.keep(key, page(request, "inbox.html", twin=True, issues=issues, never=never, tldrs=shown,
                                sections=[sections(i) for i in issues], counts=counts,
                                feeds=feeds, marks=marked, view=view_mode(request),
                                paper_page=1))  # the first page of each; the rest on the issue's page


routes = [Route("/", inbox), Route("/index.json", inbox)]
