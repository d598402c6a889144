"""``watcher status``: what the database says about sources, digests and channels."""

from __future__ import annotations

import json
from datetime import datetime

from .config import Config
from .errors import StoreError
from .schedule import missed_since, next_fire as _next_fire
from .store import Store, parse_time


def _ago(text: str | None) -> str:
    return text or "never"


def next_fire(dcfg, tz, now: datetime, last_success: datetime | None = None) -> datetime:
    """The digest's next scheduled time after ``now`` (an ``every`` schedule counts from its
    last successful run)."""
    return _next_fire(dcfg, tz, now, anchor=last_success)


def status_text(config: Config, now: datetime) -> str:
    """The status report as text."""
    db = config.settings.database
    if not db.exists():
        raise StoreError(f"{db}: no database yet (run 'watcher once' or 'watcher fetch' first)")
    tz = config.settings.timezone
    lines = [f"database {db}"]
    with Store.open(db) as store:
        lines.append(f"  {store.count_papers()} papers stored")
        lines.append("sources:")
        rows = {r["name"]: r for r in store.sources()}
        for name in config.sources:
            r = rows.get(name, {})
            counts = json.loads(r["last_counts"]) if r.get("last_counts") else None
            last = f"last fetch {_ago(r.get('last_success'))}"
            if counts:
                last += f" ({counts['new']} new, {counts['updated']} updated, {counts['unchanged']} unchanged)"
            lines.append(f"  {name}: {last}; {r.get('papers', 0)} papers")
            if r.get("failures"):
                lines.append(f"    FAILING ({r['failures']} in a row) since {r['last_error_at']}: {r['last_error']}")
        lines.append("digests:")
        for name, d in config.digests.items():
            st = store.digest_state(name)
            nxt = next_fire(d, tz, now)
            when = nxt.astimezone(tz).isoformat(timespec="minutes") if nxt else "none"
            lines.append(f"  {name}: last run {_ago(st.get('last_run'))} ({st.get('last_status') or '-'}); "
                         f"next {when}")
            for ch in d.channels:
                c = store.channel_state(name, ch)
                line = f"    -> {ch}: last delivery {_ago(c.get('last_success'))}"
                if c.get("last_count") is not None:
                    line += f" ({c['last_count']} papers)"
                lines.append(line)
                if c.get("last_error") and (c.get("last_error_at") or "") >= (c.get("last_success") or ""):
                    lines.append(f"       FAILED at {c['last_error_at']}: {c['last_error']}")
    return "\n".join(lines)
