"""``/status``: what ``watcher status`` says; ``/healthz``: 200 ``ok`` when the database opens."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import anyio
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from ..cycle.status import status_text
from ..store import now_utc
from .pages import json_page, threaded, page, reading, state, wants_json

PUBLIC = ("/healthz",)


@threaded
def status(request: Request):
    st = state(request)
    config = replace(st.config, settings=replace(st.config.settings, database=st.database))
    with reading(request) as store:  # 503 when the database cannot be read
        text = status_text(config, now_utc(), store)
    database, config_path = st.database.resolve(), st.config.path.resolve() if st.config.path else None
    if st.static:  # a published page (watcher site) names no folder of this machine: file names only
        text = text.replace(f"database {config.settings.database}", f"database {database.name}", 1)
        database, config_path = Path(database.name), Path(config_path.name) if config_path else None
    if wants_json(request):  # /status.json: what `watcher status` says, line by line
        return json_page({"database": str(database), "config": str(config_path) if config_path else None,
                          "lines": text.splitlines()})
    return page(request, "status.html", twin=True, text=text, database=database, config_path=config_path)


# /healthz has worker threads of its own: with every page thread busy (eight slow searches, an
# attack or a crawl), a monitor asking "is it up?" is still answered at once
HEALTH_THREADS = anyio.CapacityLimiter(2)


def _healthy(request: Request) -> PlainTextResponse:
    with reading(request) as store:
        store.readable()
    return PlainTextResponse("ok")


async def healthz(request: Request):
    return await anyio.to_thread.run_sync(_healthy, request, limiter=HEALTH_THREADS)


routes = [Route("/status", status), Route("/status.json", status), Route("/healthz", healthz)]
