"""``/digests``: every delivered issue; ``/digests/{digest}/{date}``: one, as delivered."""

from __future__ import annotations

from datetime import date

from starlette.requests import Request
from starlette.routing import Route

from .feeds import feed_link
from .pages import inline, not_found, page, page_number, reading, tldrs
from .ratings import marks

PER_PAGE = 50


@inline
def archive(request: Request):
    number = page_number(request)
    name = request.query_params.get("digest") or None
    with reading(request) as store:
        rows = store.issues(name, limit=PER_PAGE + 1, offset=(number - 1) * PER_PAGE)
    return page(request, "digests.html", issues=rows[:PER_PAGE], more=len(rows) > PER_PAGE,
                number=number, digest=name,
                feed=feed_link(request, name) if name else None)


@inline
def issue(request: Request):
    name, day = request.path_params["digest"], request.path_params["day"]
    try:
        date.fromisoformat(day)
    except ValueError:
        raise not_found(f"{day!r} is not a date (YYYY-MM-DD)") from None
    with reading(request) as store:
        found = store.issue(name, day)
        days = [r["day"] for r in store.issues(name)]
        if found is None:
            raise not_found(f"no digest {name!r} was delivered on {day}")
        papers = [m.paper for m in found["matches"] + found["updated"]]
        shown, marked = tldrs(store, papers), marks(request, store, papers)
    i = days.index(day)
    return page(request, "issue.html", issue=found, newer=days[i - 1] if i > 0 else None,
                older=days[i + 1] if i + 1 < len(days) else None, tldrs=shown,
                feed=feed_link(request, name), marks=marked)


routes = [Route("/digests", archive), Route("/digests/{digest}/{day}", issue)]
