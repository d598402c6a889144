"""``/digests``: every delivered issue and its messages; ``/digests/{digest}/{date}``: one
issue, every message it went out as; ``/digests/{digest}/{date}/{channel}`` (and
``.../{channel}/{number}`` for a channel's later message that day): exactly one message, as
delivered — the page a message's "view in browser" link opens. Each has a JSON twin (``.json``
at the end of the path: ``/digests.json``, ``/digests/{digest}/{date}.json``, ...).

Everything here reads what the pipeline recorded per message (:meth:`Store.record_message`):
papers in order, profile, score, reasons, TL;DR, and what a size limit cut. Nothing is matched
again. Messages of one issue that showed the same papers the same way are one section naming
every channel; messages that differ (a channel added later, a split e-mail) are shown apart.
"""

from __future__ import annotations

from datetime import date

from starlette.convertors import IntegerConvertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from .feeds import feed_link
from ..present.links import issue_path
from ..store import as_stored
from ..store.records import IssueRecord, MessageRecord
from .pages import (json_page, match_ref, not_found, page, page_number, reading, state, threaded, tldrs,
                    unsuffixed, url, view_mode, wants_json)
from .ratings import marks

PER_PAGE = 50


class MessageNumber(IntegerConvertor):
    """A message's number in a path: 1 to 18 digits, so that it fits SQLite's 64-bit integers
    (2**63 is 19 digits; Starlette's ``int`` takes any number, and one past 2**63 was an
    OverflowError, one of 5,000 digits a ValueError: a 500). A longer one matches no route: 404."""

    regex = "[0-9]{1,18}"


register_url_convertor("message_number", MessageNumber())


def sections(issue: IssueRecord) -> list[dict]:
    """The issue's messages in the order sent, those that showed exactly the same (papers,
    order, cuts) as one section: ``{"messages": [...], "matches", "updated", "titles_only",
    "parts"}``."""
    out: dict[tuple, dict] = {}
    for message in issue.messages:
        shape = (tuple(m.paper.key for m in message.matches),
                 tuple(m.paper.key for m in message.updated),
                 tuple(message.titles_only), message.parts)
        if shape not in out:
            out[shape] = {"messages": [], "matches": message.matches, "updated": message.updated,
                          "titles_only": set(message.titles_only), "parts": message.parts,
                          "empty_reason": message.empty_reason}
        out[shape]["messages"].append(message)
    return list(out.values())


def _shown(issues) -> list:
    """Every match the messages of ``issues`` showed, new and updated, in order."""
    return [m for i in issues for msg in i.messages for m in msg.matches + msg.updated]


def shown_tldrs(store, issues) -> dict[str, str]:
    """The TL;DRs the messages of ``issues`` carried (recorded with each paper); for a message
    recorded before TL;DRs were, the one a digest would have shown (:func:`tldrs`)."""
    matches = _shown(issues)
    out = tldrs(store, [m.paper for m in matches if not m.tldr])
    out.update({m.paper.key: " ".join(m.tldr.split()) for m in matches if m.tldr})
    return out


def papers_of(issues) -> list:
    """Every paper the messages of ``issues`` showed (for their rating buttons)."""
    return [m.paper for m in _shown(issues)]


def sent_ref(request: Request, m, tldrs: dict[str, str]) -> dict:
    """A paper of a delivered message in a JSON twin (docs/record.md): :func:`match_ref` of the paper
    as sent, with ``as_sent`` (False: recorded before messages kept their papers, so shown as
    stored now) and ``updated_since`` (``version`` and ``title`` as stored now when the paper
    changed after the message, else None)."""
    since = None if m.since is None else {"version": m.since.version, "title": m.since.title}
    carried = {m.paper.key: " ".join(m.tldr.split())} if m.tldr else tldrs  # this message's own
    return dict(match_ref(request, m, carried), as_sent=m.as_sent, updated_since=since)


def message_json(request: Request, issue: IssueRecord, message: MessageRecord,
                 tldrs: dict[str, str] | None = None) -> dict:
    """A message in a JSON twin: where it went, its page, and (with ``tldrs``) its papers in
    order as recorded, each with ``shown`` (``full``, or ``title`` when a size limit listed it
    as a title)."""
    out = {"channel": message.channel, "number": message.number, "sent_at": as_stored(message.sent_at),
           "parts": message.parts,
           "url": url(request, issue_path(issue.digest, issue.day, message.channel, message.number))}
    if tldrs is None:
        return dict(out, papers=message.papers)
    titles = set(message.titles_only)
    return dict(out, empty_reason=message.empty_reason,
                papers=[dict(sent_ref(request, m, tldrs), shown="title" if m.paper.key in titles else "full")
                        for m in message.matches],
                updated=[sent_ref(request, m, tldrs) for m in message.updated])


def issue_json(request: Request, issue: IssueRecord, tldrs: dict[str, str] | None = None) -> dict:
    """An issue in a JSON twin, with its messages (:func:`message_json`)."""
    return {"digest": issue.digest, "day": issue.day, "title": issue.title,
            "first_delivered": as_stored(issue.first_delivered),
            "last_delivered": as_stored(issue.last_delivered),
            "empty_reason": issue.empty_reason, "url": url(request, issue_path(issue.digest, issue.day)),
            "messages": [message_json(request, issue, m, tldrs) for m in issue.messages]}


@threaded
def archive(request: Request):
    number = page_number(request)
    name = request.query_params.get("digest") or None
    with reading(request) as store:
        rows = store.issues(name, limit=PER_PAGE + 1, offset=(number - 1) * PER_PAGE)
        if name and not rows and name not in state(request).config.digests and not store.issue_days(name):
            raise not_found(f"no digest named {name!r}: every digest is listed at {url(request, '/digests')}")
    past_end = number > 1 and not rows  # a page after the last: 404, saying so, not "none yet"
    status = 404 if past_end else 200
    if wants_json(request):
        return json_page({"digest": name, "page": number, "more": len(rows) > PER_PAGE,
                          "error": f"page {number} is past the last page" if past_end else None,
                          "issues": [issue_json(request, i) for i in rows[:PER_PAGE]]}, status)
    return page(request, "digests.html", status_code=status, twin=True, issues=rows[:PER_PAGE], more=len(rows) > PER_PAGE,
                number=number, digest=name, past_end=past_end,
                feed=feed_link(request, name) if name else None)


@threaded
def digest_issues(request: Request):
    """``/digests/{digest}`` (and ``.json``): the list of that digest's issues
    (``/digests?digest=``), or a 404 for a digest neither configured nor ever delivered."""
    twin = wants_json(request)
    name = unsuffixed(request.path_params["digest"]) if twin else request.path_params["digest"]
    if name not in state(request).config.digests:
        with reading(request) as store:
            if not store.issue_days(name):
                raise not_found(f"no digest named {name!r}: every digest is listed at {url(request, '/digests')}")
    return RedirectResponse(url(request, "/digests.json" if twin else "/digests", digest=name), status_code=302)


def _issue(request: Request, channel: str | None = None, number: int | None = None):
    name, day = request.path_params["digest"], request.path_params["day"]
    if channel is None:
        day = unsuffixed(day)
    try:
        date.fromisoformat(day)
    except ValueError:
        raise not_found(f"{day!r} is not a date (YYYY-MM-DD)") from None
    with reading(request) as store:
        found = store.issue(name, day, channel, number)
        if found is None:
            raise not_found(f"no digest {name!r} was delivered on {day}")
        if not found.messages and channel is not None:
            what = f"message {number}" if number and number > 1 else "message"  # the first has no number
            raise not_found(f"digest {name!r} sent no {what} through channel {channel!r} on {day}")
        days = store.issue_days(name)
        # every message of the issue, named on one message's page (the issue's page shows them all)
        others = store.issues(name, day=day)[0].messages if channel is not None else []
        shown, marked = shown_tldrs(store, [found]), marks(request, store, papers_of([found]))
    if wants_json(request):
        return json_page(issue_json(request, found, shown))
    i = days.index(day)
    return page(request, "issue.html", twin=True, issue=found, sections=sections(found), others=others,
                channel=channel,
                newer=days[i - 1] if i > 0 else None, older=days[i + 1] if i + 1 < len(days) else None,
                tldrs=shown, feed=feed_link(request, name), marks=marked, view=view_mode(request),
                paper_page=page_number(request))


@threaded
def issue(request: Request):
    return _issue(request)


@threaded
def message(request: Request):
    number = request.path_params.get("number")
    if number is None:  # the channel's first message that day
        return _issue(request, unsuffixed(request.path_params["channel"]), 1)
    return _issue(request, request.path_params["channel"], number)


routes = [Route("/digests", archive), Route("/digests.json", archive), Route("/digests/{digest}", digest_issues),
          Route("/digests/{digest}/{day}", issue),
          Route("/digests/{digest}/{day}/{channel}", message),
          Route("/digests/{digest}/{day}/{channel}/{number:message_number}", message),
          Route("/digests/{digest}/{day}/{channel}/{number:message_number}.json", message)]
