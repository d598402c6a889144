"""``/papers/{arxiv_id}``: one paper — versions, deliveries, why it matched each profile,
similar stored papers."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from ..docfreq import default_doc_freq
from ..models import parse_arxiv_id
from ..search import similar_papers
from .pages import not_found, page, reading, state, tldrs, url
from .ratings import marks

MAX_AUTHORS = 100


def paper(request: Request):  # similar papers rank many candidates: a worker thread
    key = request.path_params["key"]
    st = state(request)
    with reading(request) as store:
        found = store.get(key)
        if found is None:
            ident = parse_arxiv_id(key)
            if ident and ident[0] != key and store.get(ident[0]):
                return RedirectResponse(url(request, f"/papers/{ident[0]}"), status_code=301)
            raise not_found(f"no paper {key!r} is stored")
        row = next(store.db.query("SELECT first_seen, last_changed, revised_at, source FROM papers "
                                  "WHERE key = ?", [found.key]))
        deliveries = store.paper_deliveries(found.key)
        explained = []
        for name in st.config.profiles:
            matcher = st.matcher(name, store)
            m = matcher.explain(found)
            explained.append({"profile": name, "title": st.config.profiles[name].title,
                              "score": m.score, "reasons": m.reasons,
                              "selected": matcher.score(found) is not None})
        similar = similar_papers(store, found, default_doc_freq().vector_weight)
        shown, marked = tldrs(store, [found]), marks(request, store, [found], owned=True)
    return page(request, "paper.html", paper=found, row=row, deliveries=deliveries,
                explained=explained, similar=similar, max_authors=MAX_AUTHORS, tldrs=shown,
                marks=marked)


routes = [Route("/papers/{key:path}", paper)]
