"""``/search?q=``: every stored paper, by full text (FTS5) and the profile query language,
with date, category and profile filters, paginated; ``/search.json`` is its JSON twin (the
same page's papers, each with ``id`` and ``title``). A malformed query is shown back with the
caret under the problem (status 400), never a 500."""

from __future__ import annotations

from datetime import date

from starlette.requests import Request
from starlette.routing import Route

from ..categories import category_problem, query_category_problems
from ..errors import QuerySyntaxError
from ..matching.query import OPERATORS
from ..util.text import NOT_PLURAL
from ..services.search import ORDERS, Filters, parse_search, run_search
from .pages import check_deadline, json_page, page, page_number, paper_ref, reading, state, threaded, tldrs, wants_json
from .ratings import marks

PER_PAGE = 25
MAX_QUERY = 2000
MAX_PAGE = 40  # the deepest page of a search: 1,000 papers (a deeper one costs more to find
#                than a narrower search; the 2 s deadline would stop it anyway)


def _day(text: str | None, what: str, problems: list[str]) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        problems.append(f"{what}: {text!r} is not a date (YYYY-MM-DD)")
        return None


def _search(request: Request):
    """The search page (HTML, or its JSON twin)."""
    st = state(request)
    params = request.query_params
    asked = params.get("q", "")
    q = asked[:MAX_QUERY]  # shown back; a longer one is said, never searched cut (another query)
    form = {k: params.get(k, "") for k in ("from", "to", "cat", "profile", "order")}
    form["q"] = q
    problems: list[str] = []
    filters = Filters(day_from=_day(form["from"], "from", problems),
                      day_to=_day(form["to"], "to", problems),
                      category=form["cat"].strip() or None)
    if filters.day_from and filters.day_to and filters.day_from > filters.day_to:
        problems.append(f"from: {filters.day_from} is after to: {filters.day_to} (no day is in between)")
    order = form["order"] or ORDERS[0]
    number = page_number(request, MAX_PAGE)
    error = caret = None
    results = None
    shown: dict[str, str] = {}
    marked = None
    if order not in ORDERS:
        problems.append(f"order: {order!r} is not one of {', '.join(ORDERS)}")
        order = ORDERS[0]
    if form["profile"] and form["profile"] not in st.config.profiles:
        problems.append(f"no profile named {form['profile']!r}")
    if filters.category and (problem := category_problem(filters.category)):
        problems.append(f"category: {problem}")  # in the words of `watcher check`
    query = None
    if len(asked) > MAX_QUERY:
        problems.append(f"the query is {len(asked)} characters, more than the {MAX_QUERY} a search reads")
    else:
        problems += query_category_problems(q)
        try:
            query = parse_search(q)
        except QuerySyntaxError as e:
            error, caret = str(e), e.caret()
    if error is None and not problems:
        with reading(request) as store:
            if form["profile"]:
                filters.matcher = st.matcher(form["profile"], store)
            results = run_search(store, query, filters, offset=(number - 1) * PER_PAGE,
                                 limit=PER_PAGE, order=order, check=check_deadline)
            shown, marked = tldrs(store, results.papers), marks(request, store, results.papers, owned=True)
    status = 400 if error or problems else 200
    if wants_json(request):
        return json_page({"q": q, "page": number, "order": order, "error": error, "problems": problems,
                          "papers": [paper_ref(request, p, shown.get(p.key)) for p in results.papers]
                          if results else [],
                          "more": bool(results and results.more), "capped": bool(results and results.capped),
                          # how many papers the search selects: exact, or None when only a lower
                          # bound is known (count_at_least)
                          "count": results.total if results else None,
                          "count_at_least": results.at_least if results else 0},
                         status)
    return page(request, "search.html", twin=True, status_code=status, form=form, results=results,
                error=error, caret=caret, problems=problems, number=number, order=order, tldrs=shown,
                operators=OPERATORS, not_plural=sorted(NOT_PLURAL),
                **({"marks": marked} if marked else {}))


@threaded
def search(request: Request):
    """Every search runs in a worker thread (:func:`~watcher.web.pages.threaded`): even one the
    index answers alone reads the database, and a checked one (names, prefixes, NOT) or one
    with a category nobody has may scan up to MAX_SCAN candidates, which on the event loop
    held up every other request (a /healthz waited 562 ms behind one such search)."""
    return _search(request)


routes = [Route("/search", search), Route("/search.json", search)]
