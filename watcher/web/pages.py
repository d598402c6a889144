"""What every page area uses: the templates, the store of a request, links and errors."""

from __future__ import annotations

import functools
import re
import logging
import secrets
import threading
import time
from datetime import date
from contextlib import contextmanager
from functools import lru_cache
from typing import Iterator
from urllib.parse import quote, unquote, urlencode

import jinja2
from markupsafe import Markup, escape
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from ..errors import StoreError
from ..matching.learn import names_a_rating
from ..present.links import issue_path
from ..present.render import ABSTRACT_CHARS, FILTERS, dated, safe_url, shipped_templates_dir
from ..store import Interrupted, Store, no_database
from ..store.serving import thread_reader, writer
from ..models import utc
from ..store import local_text, parse_time
from ..present.tldr import stored_excerpt, stored_tldrs
from .state import WebState

log = logging.getLogger("watcher")


def state(request: Request) -> WebState:
    """The app's :class:`WebState`, its config read again first when the file changed (once
    per request)."""
    st = request.app.state.web
    if "watcher_config" not in request.scope:
        request.scope["watcher_config"] = st.follow()
    return st


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The web templates (``templates/web``), HTML-autoescaped, with the digest filters."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(shipped_templates_dir() / "web")),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, auto_reload=False)
    env.filters.update(FILTERS)
    env.filters["reasons_shown"] = reasons_shown
    env.filters["urlpart"] = lambda s: quote(str(s), safe="/:")
    env.filters["safe_url"] = safe_url
    env.filters["after_tldr"] = lambda abstract, tldr: stored_excerpt(abstract, tldr, ABSTRACT_CHARS)
    env.filters["local"] = local_time
    env.filters["when"] = human_time
    env.filters["day"] = human_day
    env.filters["linked"] = linked
    env.filters["dated"] = lambda paper: dated(paper, human_day)  # as every other day on the pages
    env.globals["issue_path"] = issue_path
    env.filters["by_profile"] = by_profile
    env.globals["ISSUE_PAGE"] = ISSUE_PAGE
    return env


@jinja2.pass_context
def reasons_shown(context, reasons) -> list[str]:
    """The reasons of a match a page shows: every one, but on a published site
    (``static_site``) none that names a rated paper (:func:`watcher.matching.learn.names_a_rating`)."""
    return [r for r in reasons if not (context["static_site"] and names_a_rating(r))]


ISSUE_PAGE = 50  # papers of one message a page shows; the rest a page later (``?page=``)


def by_profile(matches: list) -> list[tuple[str, list]]:
    """The matches of an issue grouped by profile, each group in the digest's order, the
    groups in the order of their first paper (the best match leads)."""
    groups: dict[str, list] = {}
    for m in matches:
        groups.setdefault(m.profile, []).append(m)
    return list(groups.items())


def view_mode(request: Request) -> str:
    """How a list of an issue's papers is shown: ``compact`` (the default: title, TL;DR and
    reasons, the abstract on demand) or ``full`` (``?view=full``: every card whole)."""
    return "full" if request.query_params.get("view") == "full" else "compact"


def local_time(text: str | None, tz) -> str:
    """A stored time in the config's time zone, as ``watcher status`` and /status show times
    (``2025-04-12T23:59:00+02:00``); "" when there is none."""
    return local_text(text, tz)


def human_time(text: str | None, tz) -> str:
    """A stored time as a reader says it, in the config's time zone: ``Sat 12 Apr 2025, 23:59``
    (the ISO form stays in ``<time datetime>``); "" when there is none."""
    when = parse_time(text) if text else None
    return f"{utc(when).astimezone(tz):%a %d %b %Y, %H:%M}" if when else ""


_URL_IN_TEXT = re.compile(r"https?://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]]")


def linked(text: str | None) -> Markup:
    """``text`` escaped, each http(s) URL in it a link (an arXiv comment's "Code:
    https://github.com/…"); a URL :func:`safe_url` refuses stays text."""
    out, end = [], 0
    for m in _URL_IN_TEXT.finditer(text or ""):
        href = safe_url(m.group(0))
        if not href:
            continue
        out += [escape(text[end:m.start()]),
                Markup('<a href="{}" rel="noopener noreferrer nofollow">{}</a>').format(href, m.group(0))]
        end = m.end()
    out.append(escape((text or "")[end:]))
    return Markup("").join(out)


def human_day(text: str | date | None) -> str:
    """A day (``2025-04-12``) as a reader says it: ``Sat 12 Apr 2025``."""
    if not text:
        return ""
    day = text if isinstance(text, date) else date.fromisoformat(str(text))
    return f"{day:%a %d %b %Y}"


def url(request: Request, path: str, **params) -> str:
    """A link to ``path`` of this app (behind the ``base_url`` prefix), with query ``params``
    (None values left out)."""
    if not params:
        return state(request).prefix + path
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return state(request).prefix + path + (f"?{query}" if query else "")


def csrf_token(request: Request) -> str:
    """The session's CSRF token (made on first use); every POST form carries it as ``csrf``."""
    session = request.scope.get("session")
    if session is None:
        return ""
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(24)
    return session["csrf"]


def logged_in(request: Request) -> bool:
    """True when no login is needed or the session has logged in."""
    if state(request).password is None:
        return True
    session = request.scope.get("session", {})
    return bool(session.get("auth")) and session.get("gen") == current_generation(request)


def current_generation(request: Request) -> int:
    """The database's session generation (0 while there is no database: nothing to protect);
    StoreError when it cannot be read."""
    if not state(request).database.exists():
        return 0
    with reading(request) as store:
        return store.session_generation()


def page(request: Request, template: str, status_code: int = 200, **context) -> HTMLResponse:
    """Render ``template`` with ``context``; every page gets ``request``, ``url``,
    ``csrf_token``, ``logged_in``, ``login_required`` and ``tldrs`` (paper key -> TL;DR, from
    :func:`tldrs`, which every page passes for the papers it shows; a card of a delivered
    message shows the TL;DR the message carried). ``twin=True``: the page has a
    JSON twin (:func:`twin_url`), advertised in a ``Link`` header and in the page (``twin``)."""
    context.setdefault("tldrs", {})
    st = state(request)
    prefix, token = st.prefix, csrf_token(request)
    twin = twin_url(request) if context.pop("twin", False) and not st.static else None

    def link(path, **kw):
        return url(request, path, **kw) if kw else prefix + path

    body = environment().get_template(template).render(
        request=request, url=link, csrf_token=token, rate_form=rate_form(request, prefix, token),
        login_required=st.password is not None, static_site=st.static,
        logged_in=logged_in(request), profiles=list(st.config.profiles),
        tz=st.config.settings.timezone, twin=twin, **context)
    headers = {"Link": f'<{twin}>; rel="alternate"; type="application/json"'} if twin else None
    return HTMLResponse(body, status_code=status_code, headers=headers)


def twin_url(request: Request) -> str:
    """The address of this page's JSON twin (its path with ``.json``, the same query), which
    the page advertises (``page(..., twin=True)``: a ``Link`` header and a link in the page)."""
    path = quote(request.url.path, safe="/:@")
    path += "index.json" if path.endswith("/") else ".json"  # the inbox, /, has /index.json
    query = request.url.query
    return state(request).prefix + path + (f"?{query}" if query else "")


def wants_json(request: Request) -> bool:
    """True for a page's JSON twin (datasette's convention: the same path ending in ``.json``)."""
    return request.url.path.endswith(".json")


def unsuffixed(text: str) -> str:
    """A path parameter without the ``.json`` of a JSON twin."""
    return text.removesuffix(".json")


def json_page(data: dict, status_code: int = 200) -> JSONResponse:
    """A JSON twin's answer: ``data`` as UTF-8 JSON (times and dates as ISO 8601 text)."""
    return JSONResponse(data, status_code=status_code)


def paper_ref(request: Request, p, tldr: str | None = None) -> dict:
    """A paper in a JSON twin's list: ``id`` (its arXiv id, else its DOI, else watcher's key),
    ``key``, ``title``, its page, authors, filing day, categories (and ``tldr`` when given)."""
    out = {"id": p.arxiv_id or p.doi or p.key, "key": p.key, "title": p.title,
           "url": url(request, "/papers/" + quote(p.key, safe="/:")), "authors": list(p.authors),
           "day": p.day.isoformat() if p.day else None, "categories": list(p.categories)}
    if tldr is not None:
        out["tldr"] = tldr
    return out


def match_ref(request: Request, m, tldrs: dict[str, str]) -> dict:
    """A paper as a match in a JSON twin: :func:`paper_ref` with version, profile, score and
    reasons."""
    return dict(paper_ref(request, m.paper, tldrs.get(m.paper.key)), version=m.paper.version,
                profile=m.profile, score=round(m.score, 4), reasons=list(m.reasons))


def rate_form(request: Request, prefix: str, token: str) -> dict[str, Markup]:
    """The parts every rating form of a page shares (``_paper_hooks.html``), made once per page
    rather than per button: the form's start with its CSRF field, and the field sending the
    reader back to this page."""
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return {"open": Markup(f'<form method="post" action="{escape(prefix + "/rate")}" class="rate">\n'
                           f'    <input type="hidden" name="csrf" value="{escape(token)}">'),
            "next": Markup(f'<input type="hidden" name="next" value="{escape(here)}">')}


def tldrs(store: Store, papers) -> dict[str, str]:
    """The TL;DRs of ``papers``, read from the record (:meth:`Store.tldrs_recorded`: the
    summarizer's model TL;DR, else the one the latest message carried), else the extractive
    one a digest would show."""
    papers = list(papers)
    return stored_tldrs(papers, store.tldrs_recorded([p.key for p in papers]))


def not_found(what: str) -> HTTPException:
    """The 404 to raise for a missing paper, digest or profile."""
    return HTTPException(404, what)


_local = threading.local()  # this worker thread's request: its deadline and what ends it early


PROGRESS_STEPS = 10_000  # SQLite steps between two looks at the deadline (~0.1-1 ms of work;
# each look takes the interpreter lock, which more often slowed every other thread)


def time_left() -> float:
    """Seconds left before this thread's page deadline (:func:`reading`; infinite outside one)."""
    deadline = getattr(_local, "deadline", None)
    return float("inf") if deadline is None else deadline - time.monotonic()


def _overdue() -> bool:
    """SQLite's progress handler of the web's connections (every PROGRESS_STEPS steps of a
    statement): True ends the statement ("interrupted") when this thread's request is past its
    deadline, its client has gone, or the server is stopping."""
    deadline = getattr(_local, "deadline", None)
    if deadline is None:
        return False
    return time.monotonic() > deadline or any(e is not None and e.is_set() for e in _local.events)


PATIENCE = 0.25  # of its deadline, from its arrival: how long a page waits for work beside it, all told
# (0.5 s of the 2 s a page has: it answers within about a second whatever that work costs, under
# load too, and a reload shows what the work kept meanwhile)


def wait_beside(st, thread) -> None:
    """Wait for ``thread``, work beside the page (:meth:`~watcher.web.state.WebState.beside`),
    until PATIENCE of the page's deadline has passed since it arrived: the whole of a page's
    waits, however many works it waits for in turn. A static site's crawl waits until the work
    is done. Meanwhile the page is not counted as served (the work pauses for the pages being
    served, :meth:`~watcher.web.state.WebState.pause`, never for this one)."""
    with st.waiting():
        thread.join(None if st.static else max(0.0, time_left() - (1 - PATIENCE) * st.query_timeout))


class _Overdue(Exception):
    """Raised by :func:`check_deadline` in Python work between statements; :func:`reading`
    answers it as it answers a statement the progress handler stopped."""


def check_deadline() -> None:
    """:class:`_Overdue` when this thread's request is past its deadline (or left, or the server is
    stopping): for work in Python after SQLite (a search's checks of its candidates), which the
    progress handler cannot stop."""
    if _overdue():
        raise _Overdue


class TooSlow(HTTPException):
    """A page whose statements ran past the deadline (503), were left by their client or
    caught by a stop."""


def database_state(store: Store) -> tuple[int, int]:
    """Changes whenever the database may have: a number for this thread's connection (a new
    one each time it is opened again, :func:`~watcher.store.serving.thread_reader`) and SQLite's
    ``PRAGMA data_version``, which changes when any other connection (the daemon, a rating)
    commits. A key for pages kept between requests (:class:`PageMemo`)."""
    return store.serial, store.data_version()


class PageMemo:
    """Rendered pages of one kind kept in a :class:`~watcher.web.state.Bounded` cache, by a key
    that holds everything they show: the database's state (:func:`database_state`) and the
    request's own values (session CSRF token, login, links)."""

    def __init__(self, kept):
        self.kept = kept

    def get(self, key: tuple) -> Response | None:
        kept = self.kept.get(key)
        if kept is None:
            return None
        body, media_type, headers = kept
        return Response(body, media_type=media_type, headers=headers)

    def keep(self, key: tuple, response: Response) -> Response:
        """``response`` (a page or its JSON twin), kept as it was answered: its body, its type and
        its own headers (the twin's ``Link``), never a JSON twin answered as HTML."""
        if response.status_code == 200:
            own = {k: v for k, v in response.headers.items() if k not in ("content-length", "content-type")}
            self.kept.put(key, (response.body, response.media_type, own))
        return response


@contextmanager
def reading(request: Request) -> Iterator[Store]:
    """The database, read-only, for one request. A missing, locked or unreadable database
    raises StoreError (the app answers 503)."""
    st = state(request)
    outer = getattr(_local, "deadline", None)
    # from the request's arrival (guard.RequestGuard): time waiting for a worker thread counts
    _local.deadline = outer or request.scope.get("watcher.arrived", time.monotonic()) + st.query_timeout
    gone = request.scope.get("watcher.gone")
    _local.events = (gone, st.stopping)
    try:
        with thread_reader(st.database, st.db_timeout, _overdue, PROGRESS_STEPS) as store:
            yield store
    except (Interrupted, _Overdue) as e:  # the deadline's (_overdue), in a statement or in Python between them
        why = ("the server is stopping" if st.stopping.is_set() else
               "the browser left" if gone is not None and gone.is_set() else
               f"it took longer than {st.query_timeout:g} s")  # from its arrival
        log.warning("web: %s %s: stopped: %s", request.method, request.url.path, why)
        raise TooSlow(503, f"this page was stopped: {why}. {_slow_advice(request.url.path)}") from e
    finally:
        _local.deadline = outer


def _slow_advice(path: str) -> str:
    """What to do about a page stopped at the deadline, by the page."""
    if path.startswith("/search"):
        return "A narrower search (fewer or rarer words, a date range) answers faster."
    if path.startswith("/profiles/"):
        name = path.removeprefix("/profiles/").removesuffix(".json")
        return (f"A profile with many ratings over many papers takes longer; `watcher explain --profile "
                f"{unquote(name)}` prints the same without a time limit.")
    return "Try again in a moment."


@contextmanager
def writing(request: Request) -> Iterator[Store]:
    """The database, writable, for one rating (the only writes the web inbox makes, all
    through :func:`watcher.services.ratings.apply_rating`). The schema is current (``watcher serve``
    migrates at start); a missing, locked or unreadable database raises StoreError (503)."""
    st = state(request)
    if not st.database.exists():
        raise no_database(st.database)
    with writable(st.database, st.write_timeout) as store:
        yield store


# A writable store of a database, waiting up to a timeout for another's lock, closed at the end;
# its errors as StoreError. The web's writes (:func:`writing`, the sessions of
# :mod:`watcher.web.sessions`) open their connection here.
writable = writer


async def in_thread(fn, *args):
    """``fn(*args)`` in a worker thread (at most ``app.THREADS`` at once), never on the event
    loop. Every view runs its database work, matching and rendering through here
    (:func:`threaded`), so a slow page (a scan of every paper, the matchers of hundreds of
    profiles) holds up no other request, not even ``/healthz``."""
    return await run_in_threadpool(fn, *args)


def threaded(view):
    """The view ``view(request)`` run through :func:`in_thread`: what every route of the app
    uses (a view that must read the request's form first awaits it, then calls
    :func:`in_thread` itself), counted among the pages being served while it runs (the work
    beside the pages waits for them: :meth:`~watcher.web.state.WebState.pause`)."""

    @functools.wraps(view)
    async def run(request: Request):
        return await in_thread(request.app.state.web.served(view), request)

    return run


def page_number(request: Request, deepest: int = 10_000) -> int:
    """The ``page`` query parameter (1 when absent or not a positive number); a page deeper
    than ``deepest`` is a 400 that says so (each page deeper costs more to find)."""
    try:
        number = max(1, int(request.query_params.get("page", "1")[:12]))
    except ValueError:
        return 1
    if number > deepest:
        raise HTTPException(400, f"page {number}: a list shows at most {deepest} pages; "
                                 "narrow it instead (more words, a date range)")
    return number


__all__ = ["check_deadline", "wait_beside", "PATIENCE", "wants_json", "unsuffixed", "json_page", "paper_ref", "match_ref", "state", "page", "url", "reading", "writing", "writable", "not_found", "tldrs", "page_number", "threaded", "in_thread",
           "database_state", "PageMemo", "StoreError"]
