"""Zotero both ways (docs/zotero.md): a profile's examples read from a Zotero library, and saved
papers added to a Zotero collection. The records live in the database (migration m014).

Read, once per cycle, for every profile with ``zotero = {...}`` (each place read once)::

    versions = GET <items>?format=versions, If-Modified-Since-Version: last version
    304: nothing changed, keep the stored items
    else: changed = GET <items>?since=last version (paged), the items no longer there dropped,
          all in one transaction with the new Last-Modified-Version

Nothing is ever written to Zotero while reading. When Zotero cannot be reached the failure is
recorded (``watcher status`` says so in one line) and the profile goes on with the items of its
last good sync. The items become examples at compile time (:func:`examples`): each the stored
paper it is (arXiv id, DOI, PMID, then title), else the paper Zotero describes (its title and
abstract), so a library of papers watcher never stored still teaches the profile.

Write: the reading list (``saved``) is the queue. :func:`push` adds every saved paper not yet
recorded in ``zotero_saves`` to each ``save_to_zotero`` collection it belongs to (a profile's
when the paper belongs to profiles with different ones), as a complete item, exactly once:

    record a write token for (collection, paper)               # committed before sending
    an item of the library already this paper? add the collection to it
        (If-Unmodified-Since-Version; 412: read it again, retry)
    else POST it with Zotero-Write-Token: the recorded token   # a retry sends the same token:
        412 "token used": the first try went through; find the item and record it
    record it done (the item's key)                            # like a delivery

Any failure leaves the row queued with its error; the next push (the next cycle, the next
save) tries again. ``watcher rate save`` pushes at once; a Save on a web page (a button, a
digest's link) only queues (:func:`queue_saves`, local and quick) and wakes a background
worker that pushes (:func:`push_soon`): no page ever waits on Zotero. Every cycle pushes
what is left.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass

from ..errors import BadItem, WatcherError, ZoteroError
from ..matching.libraries import examples
from ..models import Paper
from ..services.ratings import owners_of, saved
from ..services.steps import failure, stops_the_cycle
from ..store import Store, iso, local, now_utc
from ..store.records import ZoteroPlace
from .client import Client, Library, access_problem, item_paper, item_title, paper_item, same_work

log = logging.getLogger("watcher")

PAPER_FIELDS = ("title", "arxiv_id", "authors", "abstract", "doi", "pmid", "url", "journal")
MAX_TRIES = 3  # a version conflict (412) is read again and retried this many times
AFTER_SAVE_DEADLINE = 10.0  # seconds per request when a Save pushes at once (a page waits on it)


def places(config) -> dict[str, Library]:
    """Every place examples are read from, by its sync key (profiles sharing one read it once)."""
    return {lib.sync_key: lib for p in config.profiles.values()
            if (lib := getattr(p, "zotero", None)) is not None and lib.read}


# --- read -----------------------------------------------------------------------------------

def sync(config, store, now, *, http=None) -> dict[str, str | None]:
    """Read every place of :func:`places` (see the module docstring); ``{place: error or
    None}``. Never raises for Zotero's failures, nor for a bug reading one place: each is
    logged and recorded (``watcher status`` says it), and the other places are still read."""
    out = {}
    for key, lib in places(config).items():
        try:
            if lib.api_key_env and not lib.local and lib.api_key() is None:
                # named but unset: asked without it, Zotero would answer a bare 403
                raise ZoteroError(f"environment variable {lib.api_key_env} (zotero.api_key_env) is not set; "
                                  "Zotero was not asked")
            with Client(lib, user_agent=config.settings.user_agent, http=http) as client:
                n, skipped = _sync_one(store, client, key, iso(now))
            out[key] = None
            log.info("zotero %s: %d items%s", lib.where, n, f"; {skipped}" if skipped else "")
        except Exception as e:  # noqa: BLE001 - one place's failure never stops the others
            if stops_the_cycle(e):
                raise
            if isinstance(e, WatcherError):
                error = str(e)
                log.warning("zotero %s: %s; the profile keeps the examples of the last sync", lib.where, error)
            else:  # a bug: logged with its traceback, recorded for status like any failure
                error = failure(f"zotero {lib.where}", e)
            out[key] = error
            store.zotero_sync_failed(key, error, iso(now))
    return out


def _sync_one(store, client: Client, key: str, when: str) -> tuple[int, str | None]:
    """One place read; ``(items kept, what was skipped or None)``. Each page is made rows as
    it comes (a row holds a paper's bounded fields, not Zotero's item), and an item that is no
    readable paper is skipped and counted, the first one named."""
    lib = client.library
    version = store.zotero_place_version(key)
    tag = {"tag": lib.tag} if lib.tag else {}
    answer = client.request("GET", lib.items_path, params={"format": "versions", **tag},
                            headers={"If-Modified-Since-Version": str(version)} if version is not None else None)
    rows, bad = [], []
    if answer.status == 304:
        current = None
        new_version = version
    else:
        current = _expect(answer, dict, lib)
        new_version = answer.version
        for page in client.pages(lib.items_path, {"since": version or 0, "format": "json", **tag}):
            for item in _expect(page, list, lib):
                name = item.get("key") if isinstance(item, dict) else None
                if not isinstance(name, str) or name not in current:
                    continue
                try:
                    paper = item_paper(item)
                except BadItem as e:
                    bad.append(f"item {name[:20]}: {e}")
                    paper = None  # not a paper: dropped, as a note is
                number = item.get("version")
                rows.append((name, number if isinstance(number, int) and not isinstance(number, bool) else None,
                             _fields(paper) if paper is not None else None))
    skipped = (f"{len(bad)} item{'s' if len(bad) != 1 else ''} skipped, not readable as papers "
               f"({bad[0]}{', …' if len(bad) > 1 else ''})") if bad else None
    n = store.replace_zotero_items(key, None if current is None else set(current), rows, new_version, when,
                                   note=skipped)
    return n, skipped


def _expect(answer, kind: type, lib: Library):
    """The answer's JSON body when it is a ``kind`` (an object of versions, a list of items),
    else ZoteroError: a proxy's or captive portal's page must not read as an empty library."""
    if not isinstance(answer.body, kind):
        got = type(answer.body).__name__ if answer.body is not None else "nothing"
        raise ZoteroError(f"Zotero {lib.url}{lib.items_path}: expected a JSON "
                          f"{'object' if kind is dict else 'list'}, got {got}; nothing changed")
    return answer.body


def _fields(paper: Paper) -> dict:
    return {f: getattr(paper, f) for f in PAPER_FIELDS if getattr(paper, f)}


# --- write ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """A ``save_to_zotero`` collection of a library."""

    library: Library
    collection: str

    @property
    def key(self) -> str:
        return f"{self.library.url}{self.library.prefix}/collections/{self.collection}"


def targets(config) -> dict[str, Target]:
    """Every ``save_to_zotero`` collection, by profile."""
    return {p.name: Target(p.zotero, p.save_to_zotero) for p in config.profiles.values()
            if getattr(p, "save_to_zotero", None)}


def pending(config, store) -> list[tuple[Target, Paper]]:
    """What :func:`push` would add: each saved paper not yet in each collection it goes to (a
    paper goes to every collection when all profiles share one or none of its profiles has
    one, else to those of its profiles: :func:`watcher.services.ratings.owners_of`)."""
    by_profile = targets(config)
    done = store.zotero_saved() if by_profile else None
    if done is None:
        return []
    distinct = {t.key: t for t in by_profile.values()}
    papers = [p for p, _ in saved(store)]
    owners = owners_of(config, store, papers) if len(distinct) > 1 and papers else {}
    out = []
    for paper in papers:
        mine = {by_profile[n].key: by_profile[n] for n in owners.get(paper.key, []) if n in by_profile}
        for t in (mine or distinct).values():
            if (t.key, paper.key) not in done:
                out.append((t, paper))
    return out


def push(config, store, now, *, http=None, client_for=None, deadline: float | None = None) -> tuple[int, list[str]]:
    """Add the :func:`pending` saves to Zotero; ``(added, errors)``. A failure leaves its
    save queued (recorded with the error) for the next push; never raises for Zotero's.
    ``deadline``: seconds per request in all (default: the library's, 4 x its timeout)."""
    work = pending(config, store)
    clients: dict[str, Client] = {}
    added, errors = 0, []
    try:
        for target, paper in work:
            lib = target.library
            client = clients.get(lib.url + lib.prefix)
            if client is None:
                client = clients[lib.url + lib.prefix] = (client_for or Client)(
                    lib, user_agent=config.settings.user_agent, http=http, deadline=deadline)
            token = _token(store, target, paper, iso(now))
            try:
                item = _save_one(client, target, paper, token)
            except WatcherError as e:
                errors.append(f"{paper.arxiv_id or paper.title}: {e}")
                log.warning("zotero: saving %s to collection %s: %s; queued for the next cycle",
                            paper.arxiv_id or paper.title, target.collection, e)
                store.zotero_save_failed(target.key, paper.key, str(e),
                                         drop_token=getattr(e, "fresh_token", False))
                continue
            store.mark_zotero_saved(target.key, paper.key, item, iso(now))
            added += 1
            log.info("zotero: %s added to collection %s (item %s)", paper.arxiv_id or paper.title,
                     target.collection, item)
    finally:
        for c in clients.values():
            c.close()
    return added, errors


def _token(store, target: Target, paper: Paper, when: str) -> str:
    """The write token of (target, paper): the one recorded by an earlier try, else a new one,
    committed before anything is sent (a retry must send the same one)."""
    fresh = uuid.uuid4().hex  # 32 characters, as Zotero asks
    return store.zotero_save_token(target.key, paper.key, fresh, when)


class _TokenSpent(ZoteroError):
    """412 on a write token whose item cannot be found: the next try takes a new token."""

    fresh_token = True


def _save_one(client: Client, target: Target, paper: Paper, token: str) -> str:
    """Put ``paper`` in the target collection; the item's key."""
    lib = target.library
    found = _find(client, paper)
    for _ in range(MAX_TRIES):
        if found is None:
            break
        data = found.get("data", {})
        if target.collection in (data.get("collections") or []):
            return found["key"]
        answer = client.request("PATCH", f"{lib.prefix}/items/{found['key']}",
                                body={"collections": [*(data.get("collections") or []), target.collection]},
                                headers={"If-Unmodified-Since-Version": str(found.get("version", data.get("version", 0)))},
                                ok=(204, 412))
        if answer.status == 204:
            return found["key"]
        # 412: changed since read (another device synced): read it again and retry
        found = client.request("GET", f"{lib.prefix}/items/{found['key']}").body
    else:
        raise ZoteroError(f"item {found['key']} kept changing while watcher added it to the collection", 412)
    answer = client.request("POST", f"{lib.prefix}/items", body=[paper_item(paper, target.collection)],
                            headers={"Zotero-Write-Token": token}, ok=(200, 412))
    if answer.status == 412:  # the token was used: an earlier try went through
        found = _find(client, paper, target.collection)
        if found is not None:
            return found["key"]
        raise _TokenSpent("Zotero says this save was made before, but its item is not in the collection", 412)
    body = answer.body if isinstance(answer.body, dict) else {}
    done = (body.get("successful") or {}).get("0") or {}
    key = done.get("key") or (body.get("success") or {}).get("0")
    if not key:
        failed = (body.get("failed") or {}).get("0") or {}
        raise ZoteroError(f"Zotero refused the item: {failed.get('message') or body}", failed.get("code", 400))
    return key


def _find(client: Client, paper: Paper, collection: str | None = None) -> dict | None:
    """The item of the library (of ``collection``) that is ``paper``, if any (a search for the
    title the item holds: :func:`~watcher.zotero.client.item_title`)."""
    lib = client.library
    path = f"{lib.prefix}/collections/{collection}/items/top" if collection else f"{lib.prefix}/items/top"
    answer = client.request("GET", path, params={"q": item_title(paper)[:200], "qmode": "titleCreatorYear",
                                                 "limit": 25, "format": "json"})
    if not isinstance(answer.body, list):  # not Zotero's answer: finding nothing could copy the item
        raise ZoteroError(f"Zotero {lib.url}{path}: expected a JSON list of items; nothing changed")
    for item in answer.body:
        if isinstance(item, dict) and same_work(paper, item):
            return item
    return None


# --- status ---------------------------------------------------------------------------------

def status_lines(config, store) -> list[str]:
    """For ``watcher status``: one line per place read and one for the saves, when configured."""
    lines = []
    rows = store.zotero_places()
    if rows is None:
        return lines
    tz = config.settings.timezone
    for key, lib in places(config).items():
        r = rows.get(key) or ZoteroPlace(key)
        line = f"  {lib.where}: last sync {local(r.last_success, tz) if r.last_success else 'never'}"
        if r.items is not None:
            line += f" ({r.items} items)"
        if r.failures:
            line += (f"; FAILING ({r.failures} in a row, the last at "
                     f"{local(r.last_error_at, tz) if r.last_error_at else ''}): {r.last_error}; "
                     "examples of the last sync kept")
        elif r.last_error:  # a good read's note: the items it skipped
            line += f"; {r.last_error}"
        lines.append(line)
    if targets(config):
        done, queued, error = store.zotero_save_counts()
        line = f"  saves: {done} added to Zotero, {queued} queued"
        if queued and error:
            line += f" (last error: {error})"
        lines.append(line)
    return ["zotero:", *lines] if lines else []


__all__ = ["sync", "examples", "push", "pending", "places", "targets", "Target", "status_lines",
           "queue_saves", "push_soon"]


def in_cycle(config, store, now, *, push_saves: bool = True) -> None:
    """The cycle's Zotero step (:mod:`watcher.cycle.pipeline`): read every place, then push the
    queued saves (not in a dry run). Zotero's failures are recorded, never fail the cycle."""
    try:
        if places(config):
            sync(config, store, now)
        if push_saves and targets(config):
            push(config, store, now)
    except Exception as e:  # a bug here must not stop the digests
        if stops_the_cycle(e):
            raise
        failure("zotero", e)


def access_problems(config) -> list[str]:
    """For ``watcher check``: per profile with ``zotero``, one line saying what its key lacks
    (``GET /keys/current``: read access to the library, write access with
    ``save_to_zotero``), or why it could not be asked. Keys are never printed. A key-less
    library (the local API, a public library) is not asked."""
    out = []
    for p in config.profiles.values():
        lib = p.zotero
        if lib is None or lib.local or not lib.api_key():
            continue  # an unset variable is said by check's secrets
        where = f"{config.path}: profile.{p.name}.zotero"
        try:
            with Client(lib, user_agent=config.settings.user_agent) as client:
                access = client.key_access()
        except ZoteroError as e:
            out.append(f"{where}.api_key_env: Zotero refused the key in {lib.api_key_env} (HTTP {e.status}): it is "
                       "wrong or no longer valid; make one at zotero.org/settings/keys" if e.status == 403 else
                       f"{where}: cannot ask Zotero what the key in {lib.api_key_env} may do: {e}")
            continue
        problem = access_problem(access, lib, write=bool(p.save_to_zotero))
        if problem:
            need = "read and write" if p.save_to_zotero else "read"
            out.append(f"{where}.api_key_env: {problem} (the key in {lib.api_key_env} needs {need} "
                       "access: zotero.org/settings/keys)")
    return out


def after_save(config, store, now) -> str | None:
    """Right after a Save (``watcher rate save``, a link, a web button): push at once; one
    line saying what happened, None when no profile saves to Zotero. What fails stays queued
    for the next cycle, so the Save itself never fails for Zotero."""
    if not targets(config):
        return None
    try:
        added, errors = push(config, store, now, deadline=AFTER_SAVE_DEADLINE)
    except Exception as e:  # the save is recorded; the cycle pushes it later
        log.warning("zotero: push after a save failed: %s", e)
        return f"zotero: queued for the next cycle ({e})"
    if errors:
        return f"zotero: {added} added, {len(errors)} queued for the next cycle ({errors[0]})"
    return f"zotero: {added} added" if added else None


def queue_saves(config, store, now) -> int:
    """Record every :func:`pending` save as queued (``status`` counts it), sending nothing:
    what a web Save does before :func:`push_soon`. The number queued."""
    work = pending(config, store)
    for target, paper in work:
        store.queue_zotero_save(target.key, paper.key, uuid.uuid4().hex, iso(now))
    return len(work)


_pushing: dict[str, bool] = {}  # database -> whether a Save came while its worker pushed
_pushing_lock = threading.Lock()


def push_soon(config, database, now=None) -> None:
    """Push the queued saves of ``database`` in a background thread, at most one per database:
    a Save while it pushes makes it push once more when done. Zotero's failures stay queued,
    as :func:`push` leaves them; a bug is logged, never raised into the page that asked."""
    key = str(database)
    with _pushing_lock:
        if key in _pushing:
            _pushing[key] = True
            return
        _pushing[key] = False
    threading.Thread(target=_push_worker, args=(config, database, key, now), daemon=True,
                     name="zotero-push").start()


def _push_worker(config, database, key: str, now) -> None:
    while True:
        try:
            with Store.open(database) as store:
                push(config, store, now or now_utc())
        except Exception as e:  # noqa: BLE001 - the saves stay queued; the cycle pushes them
            log.warning("zotero: the push in the background failed: %s; queued for the next cycle", e)
        with _pushing_lock:
            if not _pushing[key]:
                del _pushing[key]
                return
            _pushing[key] = False


def pushing(database) -> bool:
    """Whether a background push of ``database`` is running (for tests and shutdown)."""
    with _pushing_lock:
        return str(database) in _pushing
