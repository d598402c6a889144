"""``/profiles/{name}``: per day, the papers the profile selects now and those its digests
delivered (an SVG chart), and a query preview: what a draft query would select over the last
7 or 30 days, with the TOML to paste.

"Delivered" is what the messages recorded when they were sent; "match now" is computed with the
profile as compiled now (:func:`watcher.matching.compile.compile_profile`: today's query, examples and
ratings). The page says how many delivered papers would not be selected now, and how many
selected now were never delivered, so the two never contradict each other unexplained."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from functools import partial

from starlette.requests import Request
from starlette.routing import Route

from ..categories import query_category_problems
from ..errors import QuerySyntaxError
from ..matching.index import prepare
from ..matching.compile import RATED_DAYS, compile_profile, what_ratings_changed
from ..matching.learn import disliked_reason, liked_reason
from ..matching.match import rank_key
from ..search import fts_expression
from ..ratings import ratings as profile_ratings
from .chart import bar_chart
from ..store import Store
from .pages import (json_page, match_ref, not_found, page, paper_ref, reading, state, threaded, time_left,
                    tldrs, unsuffixed, wants_json)
from .ratings import marks
from .state import give_back_memory

CHART_DAYS = 30
RATING_WEEKS = 26  # the ratings chart: up to this many weeks, to the latest rating
PREVIEW_DAYS = (7, 30)  # none past CHART_DAYS: the preview counts the profile as it is from the chart's days
PREVIEW_SHOWN = 50
MAX_QUERY = 4000


def toml_string(text: str) -> str:
    """``text`` as a TOML string: a multi-line literal when it can be, else a basic string."""
    if "'''" not in text and not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text) and not text.endswith("'"):
        return "'''\n" + text.strip("\n") + "\n'''"
    return json.dumps(text, ensure_ascii=False)


CHUNK = 500  # papers read and scored at once: memory stays bounded whatever a window holds
STEP = 500  # the same for the chart's and the preview's days, each kept as soon as read: a page
# the deadline stops keeps what it finished (a step costs ~0.1 s of CPU at 300,000 papers)


def _days(store, start: date, end: date) -> dict[date, tuple]:
    """Each filing day from ``start`` to ``end`` that holds papers, with what changes when its
    papers do (:meth:`~watcher.store.Store.day_signatures`)."""
    return store.day_signatures(start, end)


def _window_chunks(store, start: date, end: date):
    """The papers filed from ``start`` to ``end``, CHUNK at a time (what ratings changed reads)."""
    for chunk in store.window_papers(start, end, CHUNK):
        yield [paper for paper, _, _, _ in chunk]


def narrowing(matcher) -> str | None:
    """An FTS5 expression matching at least every paper ``matcher`` can select: its query's
    (:func:`watcher.search.fts_expression`, as a search narrows), when nothing else can bring
    a paper in. None (every paper of a window is scored) for a matcher without a query, with
    authors it follows, or with examples or liked papers (similarity reaches any paper)."""
    if matcher.query is None or matcher.authors or matcher.sees_every_paper():
        return None
    return fts_expression(matcher.query.root)


def _by_day(store, matcher, todo: dict[date, tuple]):
    """``(day, its matches)`` for each filing day of ``todo`` (day -> its signature,
    :func:`_days`), each as soon as the papers read have passed the day's last row: one read
    of the days' window, STEP papers scored at a time, only the candidates its query's terms
    find in the full-text index (:func:`narrowing`), else every paper of those days; the
    matcher decides, as for a digest. A caller keeping each day as it comes keeps what it
    finished when the page's deadline stops the read."""
    if not todo:
        return
    pending: dict[date, list] = {day: [] for day in todo}
    try:
        for chunk in store.window_papers(min(todo), max(todo), STEP, narrowing(matcher)):
            batch = prepare([p for p, _, _, _ in chunk], [words for _, words, _, _ in chunk])
            for i, match in matcher.score_batch(batch).items():
                if chunk[i][2] in pending:
                    pending[chunk[i][2]].append(match)
            read = chunk[-1][3]
            for day in [d for d in pending if todo[d][1] <= read]:  # signature[1]: the day's last rowid
                yield day, pending.pop(day)
        yield from pending.items()
    finally:  # what the papers read took goes back to the system (serve's peak, docs/performance.md)
        give_back_memory()


def _made_of(st, name: str, matcher) -> object:
    """What decides the profile's matches: for a matcher without examples or ratings (the
    compiled matcher's own ``feedback``: the rated papers it learnt from), its config alone (a
    write of papers compiles the matcher anew but changes nothing it does); otherwise the
    compiled matcher itself (examples and rated papers are papers: a write may change them)."""
    if st.config.profiles[name].examples or matcher.feedback:
        return matcher
    return ("config", id(st.config), name)


def _selected_per_day(st, store, name: str, start: date, end: date) -> dict[date, set[str]]:
    """The papers of each filing day the profile selects now (its matcher as compiled now:
    today's query, examples and ratings). Counted over the days not kept yet, CHUNK papers at
    a time, and only among the candidates of its query (:func:`_by_day`), and kept per day
    until what makes the matcher (:func:`_made_of`) or that day's papers change: after a run,
    only the days it filed papers under are counted again. One computation at a time per
    profile (a second request waits for the first and reads what it kept); a computation cut
    by the page's deadline keeps the days it finished, so the next request goes on from there."""
    with st.flight(("selected", name)):
        matcher = st.matcher(name, store)  # in the flight: one compilation, the kept days' own
        made_of = _made_of(st, name, matcher)
        kept = st.charts.get(name) or st.charts.put(name, {})  # day -> (made_of, signature, keys)
        days = _days(store, start, end)
        for day in [d for d in kept if d not in days]:
            del kept[day]
        todo = {day: signature for day, signature in days.items()
                if not (day in kept and kept[day][0] == made_of and kept[day][1] == signature)}
        for day, matches in _by_day(store, matcher, todo):  # each day kept as it comes
            kept[day] = (made_of, todo[day], {m.paper.key for m in matches})
        return {day: kept[day][2] for day in days}


def _preview(st, store, name: str, draft, selected: dict[date, set[str]], start: date, end: date) -> dict:
    """What ``draft`` (the profile compiled with a draft query) selects of the papers filed from
    ``start`` to ``end`` and how many the profile as it is selects there (``selected``: its
    papers per filing day, :func:`_selected_per_day`, whose window holds this one), read CHUNK
    papers at a time among the draft's candidates (:func:`_by_day`): the best PREVIEW_SHOWN
    matches are kept, never every paper of the window. Kept per day (a reload, the JSON twin,
    the next request after one the deadline cut) until what makes the profile's matcher
    (:func:`_made_of`) or that day's papers change."""
    days = _days(store, start, end)
    made_of = _made_of(st, name, st.matcher(name, store))

    def key(day):
        return "preview", name, draft.profile.query, day

    todo, per_day = {}, {}
    for day, signature in days.items():
        kept = st.previews.get(key(day))
        if kept is not None and kept[0] == made_of and kept[1] == signature:
            per_day[day] = kept
        else:
            todo[day] = signature
    for day, matches in _by_day(store, draft, todo):  # each day kept as it comes (as the chart's)
        per_day[day] = st.previews.put(key(day), (made_of, todo[day], sorted(matches, key=rank_key)[:PREVIEW_SHOWN],
                                                  len(matches)))
    found = sorted((m for kept in per_day.values() for m in kept[2]), key=rank_key)[:PREVIEW_SHOWN]
    count = sum(kept[3] for kept in per_day.values())
    current = sum(len(keys) for day, keys in selected.items() if start <= day <= end)
    return {"start": start, "end": end, "matches": found, "count": count, "current": current,
            "stored": sum(sig[0] for sig in days.values())}


def _rating_changes(st, store, name: str) -> tuple | None:
    """What the profile's ratings added and removed over the last RATED_DAYS days
    (:func:`~watcher.matching.compile.what_ratings_changed`, read CHUNK papers at a time); kept until
    the matcher is compiled again. None while it is still being worked out: over many papers
    and ratings that takes longer than a page may (its deadline would stop it at every
    reload, and nothing would ever be kept), so it is worked out beside the pages, on a
    connection of its own, for half the time the page has left (a static site's crawl, for
    all of it); a reload shows it."""
    matcher = st.matcher(name, store)
    key = ("rating changes", name)

    def ready():
        kept = st.charts.get(key)
        return kept[1] if kept is not None and kept[0] is matcher else None

    def work():
        with Store.open(st.database, readonly=True) as own:
            st.charts.put(key, (matcher, what_ratings_changed(st.config, name, own, rated=matcher,
                                                              chunks=partial(_window_chunks, own))))

    if (found := ready()) is not None:
        return found
    st.beside(key, work).join(None if st.static else max(0.0, time_left() / 2))  # a static site waits
    return ready()


def _ratings_chart(rows: list[dict]) -> tuple[str | None, date | None, date | None]:
    """Ratings up and down per week (weeks start on Monday), up to the newest rating."""
    if not rows:
        return None, None, None
    weeks = {"up": {}, "down": {}}
    for r in rows:
        day = date.fromisoformat(r["rated_at"][:10])
        week = day - timedelta(days=day.weekday())
        weeks[r["value"]][week] = weeks[r["value"]].get(week, 0) + 1
    first = min(min(w) for w in weeks.values() if w)
    last = max(max(w) for w in weeks.values() if w)
    first = max(first, last - timedelta(weeks=RATING_WEEKS - 1))
    week_list = [first + timedelta(weeks=i) for i in range((last - first).days // 7 + 1)]
    chart = bar_chart(week_list, [("rated up", weeks["up"], "up"), ("rated down", weeks["down"], "down")],
                      f"Papers rated up and down per week, weeks of {first} to {last}")
    return chart, first, last


@threaded
def profile(request: Request):
    st = state(request)
    name = unsuffixed(request.path_params["name"]) if wants_json(request) else request.path_params["name"]
    prof = st.config.profiles.get(name)
    if prof is None:
        raise not_found(f"no profile named {name!r}")
    params = request.query_params
    draft = params.get("preview")
    try:
        days = int(params.get("days", "7"))
    except ValueError:
        days = 7
    days = days if days in PREVIEW_DAYS else 7
    error = caret = None
    preview = None
    shown: dict[str, str] = {}
    with reading(request) as store:
        rated = profile_ratings(store, name)
        liked, disliked = store.rated_papers(name)  # one query, not one per rating
        rated_papers = {p.key: p for p in liked + disliked}
        # the rated paper each "like …" / "unlike …" reason of the changes names, to link it
        deciders = {**{liked_reason(p): p for p in liked}, **{disliked_reason(p): p for p in disliked}}
        changed = _rating_changes(st, store, name) if rated else None
        pending = bool(rated) and changed is None  # still being worked out (see _rating_changes)
        feedback = st.matcher(name, store).feedback if rated else None
        checked = feedback.checked() if feedback else []  # what the ratings' check on themselves found
        start, end = store.recent_days(CHART_DAYS)
        selected = _selected_per_day(st, store, name, start, end)
        delivered = store.delivered_per_day(name, start, end)
        if draft is not None and not draft.strip():
            error = "the draft query is empty: write one to see what it would select"
        elif draft is not None:
            draft = draft[:MAX_QUERY]
            try:
                matcher = compile_profile(st.config, name, store, query=draft)
            except QuerySyntaxError as e:
                error, caret = str(e), e.caret()
            else:
                error = "; ".join(query_category_problems(draft)) or None  # what `watcher check` would say
            if error is None:
                preview = _preview(st, store, name, matcher, selected, *store.recent_days(days))
                preview["toml"] = f"[profile.{name}]\nquery = {toml_string(draft.strip())}"
                shown = tldrs(store, [m.paper for m in preview["matches"]])
        marked = marks(request, store, list(rated_papers.values())
                       + ([c.match.paper for c in changed[2]] if changed else [])
                       + ([m.paper for m in preview["matches"]] if preview else []))
        now_keys = set().union(*selected.values())
        sent_keys = set().union(*delivered.values())
        gone = [store.get(k) for k in sorted(sent_keys - now_keys)] if wants_json(request) else []
    day_list = [start + timedelta(days=i) for i in range((end - start).days + 1)]
    matched = {d: len(keys) for d, keys in selected.items()}
    chart = bar_chart(day_list, [("match now", matched, "matched"),
                                 ("delivered", {d: len(k) for d, k in delivered.items()}, "delivered")],
                      f"Papers that match now (by filing day) and papers delivered (by issue date), {start} to {end}")
    digests = [d for d, cfg in st.config.digests.items() if name in cfg.profiles]
    if wants_json(request):
        return json_page({
            "name": name, "title": prof.title, "query": prof.query, "digests": digests,
            "start": start.isoformat(), "end": end.isoformat(),
            "match_now": {"total": len(now_keys), "per_day": {d.isoformat(): n for d, n in sorted(matched.items())},
                          "about": "papers of each filing day the profile selects now (today's query, "
                                   "examples and ratings)"},
            "delivered": {"total": len(sent_keys),
                          "per_day": {d.isoformat(): len(k) for d, k in sorted(delivered.items())},
                          "about": "papers the messages of each issue date showed, as recorded when sent"},
            "delivered_not_selected_now": [paper_ref(request, p) for p in gone if p is not None],
            "selected_now_not_delivered": len(now_keys - sent_keys),
            "ratings": [dict(paper_ref(request, rated_papers[r["paper"]]), value=r["value"], rated_at=r["rated_at"],
                             source=r["source"]) if r["paper"] in rated_papers
                        else dict(r, id=r["arxiv_id"] or r["paper"]) for r in rated],
            "error": error,
            "ratings_checked": checked,
            "rating_changes_pending": pending,
            "rating_changes": None if changed is None else [
                dict(paper_ref(request, c.match.paper), added=c.added, rating=c.rating,
                     decided_by=paper_ref(request, deciders[c.rating]) if c.rating in deciders else None)
                for c in changed[2]],
            "preview": None if preview is None else {
                "start": preview["start"].isoformat(), "end": preview["end"].isoformat(),
                "count": preview["count"], "current": preview["current"], "stored": preview["stored"],
                "toml": preview["toml"], "papers": [match_ref(request, m, shown) for m in preview["matches"]]},
        }, 400 if error else 200)
    ratings_chart, rated_first, rated_last = _ratings_chart(rated)
    return page(request, "profile.html", twin=True, status_code=400 if error else 200, profile=prof,
                chart=chart, start=start, end=end, total=len(now_keys), delivered_total=len(sent_keys),
                not_now=len(sent_keys - now_keys), not_sent=len(now_keys - sent_keys), draft=draft, days=days, error=error,
                caret=caret, preview=preview, digests=digests, preview_days=PREVIEW_DAYS, tldrs=shown,
                rated=rated[::-1], rated_papers=rated_papers, ratings_chart=ratings_chart,
                rated_first=rated_first, rated_last=rated_last, marks=marked, changed=changed,
                deciders=deciders, rated_days=RATED_DAYS, checked=checked, pending=pending)


routes = [Route("/profiles/{name}", profile)]  # and its JSON twin, /profiles/{name}.json
