"""``/papers/{id}``: one paper — versions, deliveries (each linking to the message that
showed it), why each profile selects it now or not (its matcher as compiled now), similar
stored papers; ``/papers/{id}.json`` is its JSON twin. ``{id}`` is any ``id`` or ``key`` the JSON
twins give (an arXiv id, a bare DOI, ``doi:…``, ``pmid:…``, watcher's key) or any other way
``watcher explain`` takes a paper (:meth:`~watcher.store.Store.find`)."""

from __future__ import annotations

from dataclasses import asdict
from functools import partial

from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from ..matching.compile import explain_paper
from ..matching.docfreq import default_doc_freq
from ..models import parse_arxiv_id
from ..services.search import similar_papers
from ..present.links import issue_path
from ..store import as_stored
from .pages import (json_page, not_found, page, paper_ref, reading, state, threaded, tldrs, unsuffixed, url,
                    wait_beside, wants_json)
from .ratings import marks

MAX_AUTHORS = 100
MAX_VERSIONS = 20


def versions(paper) -> list[int | None]:
    """The versions the page links to: every one up to MAX_VERSIONS, else the first and the
    last with a gap (None) between — a listing claiming ``v2000000`` makes a bounded page."""
    n = paper.version or 0
    return list(range(1, n + 1)) if n <= MAX_VERSIONS else [1, 2, None, n - 1, n]


def _explained(st, store, found) -> list[dict]:
    """Why each profile selects ``found`` now or not (:func:`~watcher.matching.compile.explain_paper`,
    as ``watcher explain`` says it), with the profile's matcher as compiled now. A rated
    profile's learner takes seconds to fit (at 2,000 ratings) and nothing is fitted on the
    page's request: the fits not kept yet are done beside the page, which waits for them as
    long as its patience allows (:func:`~watcher.web.pages.wait_beside`); a profile still being
    fitted then is explained without its ratings and said so (``ratings_pending``; a reload
    shows it with them)."""
    rated = store.rating_counts()
    fitting = [n for n in st.config.profiles if rated.get(n) and st.compiled(n, store) is None]
    for name in fitting:  # one work each, the same as a search's buttons start (WebState.judging)
        wait_beside(st, st.fitted_beside(name))
    out = []
    for name in st.config.profiles:
        pending = name in fitting and st.compiled(name, store) is None
        matchers = (lambda ratings, n=name: st.matcher(n, store, ratings=False)) if pending else partial(st.matcher, name, store)
        m, selected, without = explain_paper(st.config, name, store, found, matchers)
        out.append({"profile": name, "title": st.config.profiles[name].title, "score": m.score,
                    "reasons": m.reasons, "selected": selected, "without_ratings": without,
                    "ratings_pending": pending})
    return out


@threaded
def paper(request: Request):  # similar papers rank many candidates: a worker thread
    key = unsuffixed(request.path_params["key"]) if wants_json(request) else request.path_params["key"]
    st = state(request)
    with reading(request) as store:
        found = store.get_short(key)  # a digest's link names a paper without an id by its short key
        if found is None:
            ident = parse_arxiv_id(key)
            if ident and ident[0] != key and store.get(ident[0]):
                twin = ".json" if wants_json(request) else ""
                return RedirectResponse(url(request, f"/papers/{ident[0]}{twin}"), status_code=301)
            # every other way `watcher explain` and `rate` name a paper: a bare DOI (the `id`
            # of the JSON twins), doi:, a doi.org link, pmid:
            found = store.find(key)
            if found is None:
                raise not_found(f"no paper {key!r} is stored")
        row = store.paper_times(found.key)
        deliveries = store.paper_deliveries(found.key)
        explained = _explained(st, store, found)
        similar = similar_papers(store, found, default_doc_freq().vector_weight)
        shown, marked = tldrs(store, [found]), marks(request, store, [found], owned=True)
    if wants_json(request):
        return json_page(dict(paper_ref(request, found, shown[found.key]), paper=found.to_json(),
                              first_seen=as_stored(row.first_seen, stamped=True),
                              revised_at=as_stored(row.revised_at, stamped=True), source=row.source,
                              deliveries=[dict(asdict(d), delivered_at=as_stored(d.delivered_at),
                                               url=url(request, issue_path(d.digest, d.day, d.channel, d.number))
                                               if d.day else None)
                                          for d in deliveries],
                              profiles=explained, similar=[dict(paper_ref(request, p), similarity=round(v, 4))
                                                           for p, v in similar]))
    return page(request, "paper.html", twin=True, paper=found, row=row, deliveries=deliveries,
                explained=explained, similar=similar, max_authors=MAX_AUTHORS, tldrs=shown,
                marks=marked, versions=versions(found))


routes = [Route("/papers/{key:path}", paper)]
