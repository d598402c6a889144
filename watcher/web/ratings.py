"""Ratings in the web inbox (docs/ratings.md "Links in digests"): the signed links of
digests (``/r/{token}``), the rating buttons of every page (``POST /rate``) and the reading
list (``/saved``, ``/saved.bib``).

Thin on purpose: what a token asks for is :func:`watcher.present.links.verify_link`, recording it is
:func:`watcher.services.ratings.apply_rating` (as ``watcher rate`` does), and which profiles a paper's
buttons are for is :func:`watcher.services.ratings.owners_of` (as ``watcher rate`` decides without
``--profile``).

A signed link needs no login: the token is the credential (unguessable: signed with the
secret) and names exactly one action on one paper. ``GET /r/{token}`` only shows a confirmation
page with one button (mail scanners fetch links); the button's ``POST /r/{token}`` records.
That POST carries no session CSRF token: cross-site request forgery needs a request the
attacker can write, and without the secret nobody can write a valid token; whoever holds the
link (the mail's reader, or anyone it was forwarded to) could click it anyway. The buttons of
the pages are ordinary forms: logged in (when there is a password) and with the session's CSRF
token.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..errors import BadLink, ExpiredLink, RatingError
from ..present.links import LINK_ACTIONS, RATE, verify_link
from ..services.ratings import PROFILE_ACTIONS, apply_rating, current, export_saved, owners_of, saved
from ..store import as_stored, now_utc
from ..zotero.sync import push_soon, queue_saves, targets
from .auth import bounded_form, checked_form, safe_next
from .pages import in_thread, json_page, page, paper_ref, reading, state, threaded, tldrs, url, wants_json, writing

log = logging.getLogger("watcher")

PUBLIC = ("/r/",)


@dataclass
class Marks:
    """What the rating buttons of a page show: the current ratings and saved state of its
    papers and, for papers shown without a match, the profiles their buttons are for."""

    rated: dict = field(default_factory=dict)
    kept: set = field(default_factory=set)
    owners: dict = field(default_factory=dict)

    def rating(self, key: str, profile: str) -> str | None:
        return self.rated.get((profile, key))

    def saved(self, key: str) -> bool:
        return key in self.kept

    def profiles(self, key: str) -> list[str]:
        return self.owners.get(key, [])


def marks(request: Request, store, papers, *, owned: bool = False) -> Marks:
    """The :class:`Marks` of ``papers``. ``owned``: the page shows papers without a match
    (search, a paper, the reading list), so each gets a button set per profile it belongs to
    (:func:`watcher.services.ratings.owners_of`, one batch for the page) or has a rating for; every profile when none."""
    st = state(request)
    papers = list(papers)
    rated, kept = current(store, [p.key for p in papers])
    out = Marks(rated, kept)
    if owned:
        names = list(st.config.profiles)
        found = owners_of(st.config, store, papers, lambda n: st.judging(n, store))  # one batch
        for p in papers:
            mine = set(found[p.key])
            mine.update(n for n in names if (n, p.key) in rated)
            out.owners[p.key] = [n for n in names if n in mine] or names
    return out


def _logged(done, source: str) -> None:
    """One journal line per rating (the paper by its key, quoted: a title stays one line)."""
    log.info("web: %s %r%s from %s%s", done.action, done.paper.key,
             f" for {done.profile!r}" if done.profile else "", source, "" if done.changed else " (already so)")


# --- signed links ---------------------------------------------------------------------------

def _asked(request: Request):
    """What the link's token asks for, or the 403 page (nothing recorded); ExpiredLink when it
    is ours but past its time (:func:`_expired` shows that page)."""
    try:
        return verify_link(state(request).config, request.path_params["token"])
    except ExpiredLink:
        raise
    except BadLink as e:
        log.warning("web: refused a rating link from %s: %s",
                    request.client.host if request.client else "?", e)
        raise HTTPException(403, f"{e}; nothing was recorded") from e


def _gone(request: Request, asked, paper) -> str | None:
    """Why the link cannot be recorded any more (its paper or profile was removed), or None."""
    if paper is None:
        return f"the paper {asked.paper} of this link is no longer in the database; nothing was recorded"
    if asked.action in PROFILE_ACTIONS and asked.profile not in state(request).config.profiles:
        return (f"the profile {asked.profile!r} of this link is no longer configured; nothing was "
                "recorded")
    return None  # an e-mail's Rate link of a removed profile still saves (its page offers only that)


async def link(request: Request):
    """``GET /r/{token}``: the confirmation page (changes nothing). ``POST``: record it. A
    ``rate`` link's page asks which (three buttons); its POST names the choice (``action``)."""
    try:
        asked = _asked(request)
    except ExpiredLink as e:
        return await in_thread(_expired, request, e)
    form = await bounded_form(request) if request.method == "POST" else None  # a file part: 400
    if asked.action == RATE and form is not None:
        chosen = str(form.get("action", ""))
        if chosen not in LINK_ACTIONS:
            raise HTTPException(400, "choose More like this, Less like this or Save; nothing was recorded")
        asked = replace(asked, action=chosen)
    return await in_thread(_link, request, asked)


def _expired(request: Request, e: ExpiredLink):
    """The "Link expired" page (410, nothing recorded): the paper it was for, when still
    stored, with a link to its page, where it can be rated."""
    paper = None
    if e.asked is not None:
        with reading(request) as store:
            paper = store.get_short(e.asked.paper)
    return page(request, "rate_link.html", status_code=410, expired=f"{e}; nothing was recorded",
                asked=e.asked, paper=paper, token=request.path_params["token"], done=None, gone=None)


def _link(request: Request, asked):
    with reading(request) as store:
        paper = store.get_short(asked.paper)
        rated, kept = current(store, [paper.key]) if paper is not None else ({}, set())
    if paper is not None:
        asked = replace(asked, paper=paper.key)
    gone = _gone(request, asked, paper)
    profiles = state(request).config.profiles
    context = dict(asked=asked, paper=paper, token=request.path_params["token"], done=None, gone=gone,
                   expired=None, profile_gone=asked.profile not in profiles,
                   # what is recorded already (opened a second time, from another device)
                   already=rated.get((asked.profile, paper.key)) if paper else None,
                   saved=bool(paper and paper.key in kept),
                   # the profile as the digest named it ("Protein design", not "protein")
                   profile_title=profiles[asked.profile].title if asked.profile in profiles else asked.profile)
    if gone:
        return page(request, "rate_link.html", status_code=410, **context)
    if request.method == "POST":
        try:
            with writing(request) as store:
                context["done"] = apply_rating(store, asked.action, asked.profile, asked.paper, "link",
                                               profiles=state(request).config.profiles)
        except RatingError as e:  # removed between the check and the write
            context["gone"] = f"{e}; nothing was recorded"
            return page(request, "rate_link.html", status_code=410, **context)
        _logged(context["done"], "link")
        context["zotero"] = _to_zotero(request, context["done"])
    return page(request, "rate_link.html", **context)


def _to_zotero(request: Request, done) -> str | None:
    """A Save also adds the paper to Zotero (docs/zotero.md): queued here, after the rating is
    committed, and pushed by a background worker (:func:`watcher.zotero.sync.push_soon`), so the
    page never waits on Zotero. The line the confirmation page shows, or None."""
    if done.action != "save":
        return None
    web = state(request)
    if not targets(web.config):
        return None
    with writing(request) as store:
        queued = queue_saves(web.config, store, now_utc())
    if not queued:
        return None
    push_soon(web.config, web.database)
    return "Zotero: queued; it is added in the background (its state: /status)"


# --- the buttons ----------------------------------------------------------------------------

async def rate(request: Request):
    """``POST /rate`` (a button: ``action``, ``profile``, ``paper``, ``next``, the CSRF token):
    record it, then back (303) to the page the reader was on, at the paper."""
    form = await checked_form(request)
    config = state(request).config
    action, paper = str(form.get("action", "")), str(form.get("paper", ""))
    profile = str(form.get("profile", "")) or None
    target = safe_next(str(form.get("next", "/")))

    def record():
        with writing(request) as store:
            done = apply_rating(store, action, profile, paper, "web", profiles=config.profiles)
        _to_zotero(request, done)
        return done

    try:
        done = await in_thread(record)
    except RatingError as e:
        raise HTTPException(400, f"{e}; nothing was recorded") from e
    _logged(done, "web")
    return RedirectResponse(url(request, target) + "#p-" + quote(done.paper.key, safe="/:"),
                            status_code=303)


# --- the reading list -----------------------------------------------------------------------

@threaded
def saved_page(request: Request):
    twin = wants_json(request)
    with reading(request) as store:
        items = saved(store)
        papers = [p for p, _ in items]
        summaries = tldrs(store, papers)
        # the rating buttons are the page's alone: their owners run every profile's matcher
        shown = None if twin else marks(request, store, papers, owned=True)
    if twin:  # /saved.json: the reading list, oldest first
        return json_page({"papers": [dict(paper_ref(request, p, summaries.get(p.key)), saved_at=as_stored(at))
                                     for p, at in items]})
    return page(request, "saved.html", twin=True, items=items, marks=shown, tldrs=summaries)


@threaded
def saved_bib(request: Request):
    with reading(request) as store:
        items = saved(store)
    return Response(export_saved(items, "bibtex"), media_type="application/x-bibtex; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="saved.bib"'})


routes = [
    Route("/r/{token}", link, methods=["GET", "POST"]),
    Route("/rate", rate, methods=["POST"]),
    Route("/saved", saved_page),
    Route("/saved.json", saved_page),
    Route("/saved.bib", saved_bib),
]
