"""``/status``: what ``watcher status`` says; ``/healthz``: 200 ``ok`` when the database opens."""

from __future__ import annotations

from dataclasses import replace

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from ..status import status_text
from ..store import now_utc
from .pages import threaded, page, reading, state

PUBLIC = ("/healthz",)


@threaded
def status(request: Request):
    st = state(request)
    config = replace(st.config, settings=replace(st.config.settings, database=st.database))
    with reading(request) as store:  # 503 when the database cannot be read
        text = status_text(config, now_utc(), store)
    return page(request, "status.html", text=text, database=st.database.resolve(),
                config_path=st.config.path.resolve() if st.config.path else None)


@threaded
def healthz(request: Request):
    with reading(request) as store:
        store.db.execute("SELECT 1 FROM papers LIMIT 1").fetchall()
    return PlainTextResponse("ok")


routes = [Route("/status", status), Route("/healthz", healthz)]
