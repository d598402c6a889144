"""``/profiles/{name}``: per day, the papers the profile selects now and those its digests
delivered (an SVG chart), and a query preview: what a draft query would select over the last
7 or 30 days, with the TOML to paste.

"Delivered" is what the messages recorded when they were sent; "match now" is what the cycle
recorded the profile selects of each filing day (:mod:`watcher.cycle.selections`: the profile
as compiled with today's query, examples and ratings), brought up to date beside the page when a
rating or an edit came since, and said so while it is not; what its ratings changed is read from
the same record, decided with each day's matches. The page says how many delivered
papers would not be selected now, and how many selected now were never delivered, so the two
never contradict each other unexplained."""

from __future__ import annotations

import json
import logging
import re
from datetime import date, timedelta

from starlette.requests import Request
from starlette.routing import Route

from ..categories import query_category_problems
from ..errors import QuerySyntaxError
from ..matching.compile import compile_profile, recorded_check
from ..matching.query import parse_query
from ..matching.learn import disliked_reason, liked_reason
from ..matching.match import rank_key
from ..services.ratings import ratings as profile_ratings
from .chart import bar_chart
from ..errors import StoreError
from ..cycle.selections import CHART_DAYS, bring_up_to_date, by_day, changes_of, current, judge, record_check
from ..models import now_utc
from ..store import DaySelection, Store
from ..store.records import RatingRow
from .pages import (json_page, match_ref, not_found, page, paper_ref, reading, state, threaded, tldrs,
                    unsuffixed, wait_beside, wants_json, writable)
from .ratings import marks

log = logging.getLogger("watcher")
RATING_WEEKS = 26  # the ratings chart: up to this many weeks, to the latest rating
PREVIEW_DAYS = (7, 30)  # none past CHART_DAYS: the preview counts the profile as it is from the chart's days
PREVIEW_SHOWN = 50
SHOWN = 100  # the newest ratings, and the changes they made, listed on the page (all: watcher ratings / explain)
MAX_QUERY = 4000


def toml_string(text: str) -> str:
    """``text`` as a TOML string: a multi-line literal when it can be, else a basic string."""
    if "'''" not in text and not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text) and not text.endswith("'"):
        return "'''\n" + text.strip("\n") + "\n'''"
    return json.dumps(text, ensure_ascii=False)


def _selected_per_day(st, store, name: str, start: date, end: date) -> tuple[dict[date, set[str]], dict, list]:
    """The papers of each filing day the profile selects, as recorded (the ``selections``
    table: the cycle records them, :mod:`watcher.cycle.selections`), and what the page must
    say of that record: ``{"outdated": the days shown as decided before the profile's newest
    ratings or edit, "changed": those shown as counted before papers stored since, "counting":
    the days not recorded at all yet}``, and what the profile's ratings changed on the days
    shown (the :class:`~watcher.store.RecordedChange` list of their records). The page reads one row
    per day, never the day's
    papers: a day whose record is outdated or missing is brought up to date beside the page
    (:func:`~watcher.cycle.selections.bring_up_to_date`, the cycle's function, on a
    connection of its own, recorded as it goes), which the page waits for as long as its patience allows
    (:func:`~watcher.web.pages.wait_beside`); what it has not finished by then is shown as recorded, said so.
    What decides the profile is read without fitting its learner (:meth:`WebState.decided_by`);
    the fit, when the counting needs it, is done beside the page too."""
    decided = st.decided_by(name, store)
    key = ("selected", name)

    def read():
        days = store.day_signatures(start, end)
        recorded = store.selections(name, start, end)
        worked = st.charts.get(key) or {}  # days worked out beside the page but not recorded (see work)
        shown, status, changes = {}, {"outdated": [], "changed": [], "counting": []}, []
        for day, signature in days.items():
            found = next((r for r in (recorded.get(day), worked.get(day)) if current(r, decided, signature)), None)
            if found is None and day in recorded:
                found = recorded[day]
                status["outdated" if found.decided_by != decided else "changed"].append(day)
            if found is not None:
                shown[day] = set(found.papers)
                changes.extend(found.changes)
            else:
                status["counting"].append(day)
        return shown, status, changes

    def work():
        def write(rows):
            try:
                with writable(st.database, st.write_timeout) as own:
                    own.record_selections(name, rows, now_utc(), before=start)
            except StoreError as e:  # kept in memory for this process; the next cycle records it
                log.warning("web: profile %s: the days counted could not be recorded: %s", name, e)
                kept = st.charts.get(key) or st.charts.put(key, {})
                kept.update({day: DaySelection(name, day, by, signature, tuple(keys), "", tuple(changes))
                             for day, by, signature, keys, changes in rows})

        with Store.open(st.database, readonly=True) as own:
            judged = judge(st.config, name, own, st.matcher(name, own))
            bring_up_to_date(own, name, judged, start, end, write, stop=st.stopping.is_set, pause=st.pause)
        try:
            with writable(st.database, st.write_timeout) as own:
                record_check(own, name, judged)
        except StoreError as e:  # the compiled matcher says it meanwhile; the next cycle records it
            log.warning("web: profile %s: the ratings' check could not be recorded: %s", name, e)

    shown, status, changes = read()
    if any(status.values()):
        wait_beside(st, st.beside(key, work))
        shown, status, changes = read()
    return shown, status, changes


def _preview(st, store, name: str, draft: str, selected: dict[date, set[str]], start: date, end: date) -> dict:
    """What ``draft`` (the profile compiled with this draft query) selects of the papers filed from
    ``start`` to ``end`` and how many the profile as it is selects there (``selected``: its
    papers per filing day, :func:`_selected_per_day`, whose window holds this one). The draft
    is counted day by day beside the page (the profile's examples and ratings make it score
    every paper of those days: at 300,000 papers, seconds), the best PREVIEW_SHOWN matches and
    the count of each day kept until that day's papers or what decides the profile change; the
    request that starts the counting shows the days counted within its patience (:func:`~watcher.web.pages.wait_beside`) and says how many are still
    being counted (a reload shows more, at once; a static site has no preview). The draft is compiled
    beside the page too (with the profile's ratings, a fit of seconds)."""
    days = store.day_signatures(start, end)
    made_of = st.decided_by(name, store)
    query = draft.strip()

    def key(day):
        return "preview", name, query, day

    def counted():
        per_day = {}
        for day, signature in days.items():
            kept = st.previews.get(key(day))
            if kept is not None and kept[0] == made_of and kept[1] == signature:
                per_day[day] = kept
        return per_day

    def work():
        with Store.open(st.database, readonly=True) as own:
            done = counted()
            todo = {day: signature for day, signature in days.items() if day not in done}
            matcher = compile_profile(st.config, name, own, query=query)
            for day, matches in by_day(own, matcher, todo, pause=st.pause):  # each day kept as it comes
                st.previews.put(key(day), (made_of, todo[day], sorted(matches, key=rank_key)[:PREVIEW_SHOWN],
                                           len(matches)))
                if st.stopping.is_set():
                    return

    per_day = counted()
    if len(per_day) < len(days):
        running = st.running(("preview", name, query, start))
        thread = st.beside(("preview", name, query, start), work)
        if not running:  # a reload while the draft is counted answers at once, with the days counted so far
            wait_beside(st, thread)
        per_day = counted()
    found = sorted((m for kept in per_day.values() for m in kept[2]), key=rank_key)[:PREVIEW_SHOWN]
    count = sum(kept[3] for kept in per_day.values())
    current = sum(len(keys) for day, keys in selected.items() if start <= day <= end and day in per_day)
    return {"start": start, "end": end, "matches": found, "count": count, "current": current,
            "stored": sum(days[d][0] for d in per_day), "days": len(per_day), "of_days": len(days),
            "all_stored": sum(sig[0] for sig in days.values())}


def _rated_shown(store, shown: list[RatingRow], rated: list[RatingRow], changes: list) -> tuple[dict, dict]:
    """``(rated papers, deciders)``: the papers of the ratings ``shown`` (key -> paper, those
    still stored), and the rated paper each "like …" / "unlike …" reason of ``changes`` names
    (reason -> paper, to link it), read for those alone (the profile's 2,000 rated papers
    made a page of a megabyte and a tenth of a second of reading). A reason names a paper by
    its arXiv id, else by its title: the ratings of those ids, and of papers without one, are
    the candidates."""
    named = {c.rating.split(" ", 2)[1] for c in changes if " " in c.rating}
    wanted = {r.paper for r in shown} | {r.paper for r in rated if not r.arxiv_id or r.arxiv_id in named}
    papers = {key: p for key in sorted(wanted) if (p := store.get(key)) is not None}
    deciders = {(liked_reason if r.value == "up" else disliked_reason)(papers[r.paper]): papers[r.paper]
                for r in rated if r.paper in papers}
    return {r.paper: papers[r.paper] for r in shown if r.paper in papers}, deciders


def _ratings_chart(rows: list[RatingRow]) -> tuple[str | None, date | None, date | None]:
    """Ratings up and down per week (weeks start on Monday), up to the newest rating."""
    if not rows:
        return None, None, None
    weeks = {"up": {}, "down": {}}
    for r in rows:
        day = r.rated_at.date()  # its day as stored (UTC)
        week = day - timedelta(days=day.weekday())
        weeks[r.value][week] = weeks[r.value].get(week, 0) + 1
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
        rated = profile_ratings(store, name)  # every rating, oldest first: the chart counts them all
        start, end = store.recent_days(CHART_DAYS)
        selected, record, recorded_changes = _selected_per_day(st, store, name, start, end)
        # what the ratings' check on themselves found: as recorded for the profile as it is now,
        # else from its matcher, whose fit (seconds at 2,000 ratings) goes beside the page
        kept = recorded_check(store, name, st.decided_by(name, store)) if rated else ([], {})
        checked = kept[0] if kept is not None else None
        if checked is None:
            if st.compiled(name, store) is None:
                wait_beside(st, st.fitted_beside(name))
            compiled = st.compiled(name, store)
            checked = compiled.feedback.checked() if compiled is not None and compiled.feedback else []
        # what the ratings changed, as recorded with each day's matches (None without ratings);
        # pending while some days' record predates them (being brought up to date beside the page)
        changed = (start, end, changes_of(store, name, recorded_changes, SHOWN)) if rated else None
        changes_total = {"added": sum(c.added for c in recorded_changes),
                         "removed": sum(not c.added for c in recorded_changes)}
        pending = bool(rated) and bool(record["outdated"] or record["counting"])
        rated_papers, deciders = _rated_shown(store, rated[-SHOWN:], rated, changed[2] if changed else [])
        delivered = store.delivered_per_day(name, start, end)
        if draft is not None and not draft.strip():
            error = "the draft query is empty: write one to see what it would select"
        elif draft is not None and len(draft) > MAX_QUERY:  # said, never cut: a cut query is another query
            error = f"the draft query is {len(draft)} characters, more than the {MAX_QUERY} a preview reads"
        elif draft is not None:
            try:
                parse_query(draft.strip())  # as compiling it would (the compiling is beside the page)
            except QuerySyntaxError as e:
                error, caret = str(e), e.caret()
            else:
                error = "; ".join(query_category_problems(draft)) or None  # what `watcher check` would say
            if error is None:
                preview = _preview(st, store, name, draft, selected, *store.recent_days(days))
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
                          "about": "papers of each filing day the profile selects, as recorded by the last "
                                   "cycle or brought up to date since (today's query, examples and ratings)",
                          **{k: [d.isoformat() for d in sorted(v)] for k, v in record.items()}},
            "delivered": {"total": len(sent_keys),
                          "per_day": {d.isoformat(): len(k) for d, k in sorted(delivered.items())},
                          "about": "papers the messages of each issue date showed, as recorded when sent"},
            "delivered_not_selected_now": [paper_ref(request, p) for p in gone if p is not None],
            "selected_now_not_delivered": len(now_keys - sent_keys),
            "ratings": [dict(paper_ref(request, rated_papers[r.paper]), value=r.value, rated_at=r.rated_text,
                             source=r.source) if r.paper in rated_papers
                        else dict(r.to_json(), id=r.arxiv_id or r.paper) for r in rated[-SHOWN:]],
            "ratings_total": len(rated),
            "error": error,
            "ratings_checked": checked,
            "rating_changes_pending": pending,
            "rating_changes": None if changed is None else [
                dict(paper_ref(request, c.match.paper), added=c.added, rating=c.rating,
                     decided_by=paper_ref(request, deciders[c.rating]) if c.rating in deciders else None)
                for c in changed[2]],
            "rating_changes_total": None if changed is None else changes_total,
            "preview": None if preview is None else {
                "start": preview["start"].isoformat(), "end": preview["end"].isoformat(),
                "count": preview["count"], "current": preview["current"], "stored": preview["stored"],
                "days_counted": preview["days"], "days": preview["of_days"],
                "toml": preview["toml"], "papers": [match_ref(request, m, shown) for m in preview["matches"]]},
        }, 400 if error else 200)
    ratings_chart, rated_first, rated_last = _ratings_chart(rated)
    return page(request, "profile.html", twin=True, status_code=400 if error else 200, profile=prof,
                chart=chart, start=start, end=end, total=len(now_keys), delivered_total=len(sent_keys),
                not_now=len(sent_keys - now_keys), not_sent=len(now_keys - sent_keys), draft=draft, days=days, error=error,
                caret=caret, preview=preview, digests=digests, preview_days=PREVIEW_DAYS, tldrs=shown,
                rated=rated[-SHOWN:][::-1], rated_all=rated, rated_papers=rated_papers, ratings_chart=ratings_chart,
                shown_most=SHOWN,
                rated_first=rated_first, rated_last=rated_last, marks=marked, changed=changed,
                deciders=deciders, changes_total=changes_total, rated_days=CHART_DAYS, checked=checked, pending=pending, record=record)


routes = [Route("/profiles/{name}", profile)]  # and its JSON twin, /profiles/{name}.json
