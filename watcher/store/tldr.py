"""The summarizer's cache and budget: model TL;DRs remembered per paper, calls per day."""

from __future__ import annotations

from datetime import datetime, timedelta

from ..models import now_utc
from .rows import iso


class TldrStore:
    """The summarizer's memory (m004) and the TL;DRs messages carried."""

    def tldr_cached(self, keys: list[str]) -> dict[str, str | None]:
        """The remembered model TL;DRs of these papers (None: asked, nothing usable came back)."""
        return dict(self._rows_in("SELECT paper, tldr FROM tldr_cache WHERE paper IN ({})", keys))

    def tldrs_recorded(self, keys: list[str]) -> dict[str, str]:
        """The TL;DR recorded for each of these papers: the summarizer's remembered model
        TL;DR, else the one the latest message that showed it carried; a paper with neither is
        left out (its TL;DR is the extractive one, :func:`watcher.present.tldr.stored_tldrs`). A
        message's own cards show the TL;DR that message carried (:meth:`issue`)."""
        out = dict(self._rows_in("SELECT paper, tldr FROM message_papers WHERE tldr IS NOT NULL "
                                "AND paper IN ({}) ORDER BY message, position", keys))
        out.update({k: t for k, t in self.tldr_cached(keys).items() if t})
        return out

    def tldr_remember(self, rows: list[tuple[str, str | None]], model: str,
                      now: datetime | None) -> None:
        """Keep (paper key, TL;DR or None) pairs; a paper is never asked for again."""
        if rows:
            when = iso(now or now_utc())
            with self.writing():
                self.db["tldr_cache"].upsert_all(
                    [{"paper": k, "tldr": t, "model": model, "created": when} for k, t in rows], pk="paper")

    def tldr_calls(self, day: str) -> int:
        """Calls made to the summarizer's endpoint on ``day`` (YYYY-MM-DD, UTC)."""
        row = self.db.execute("SELECT calls FROM tldr_calls WHERE day = ?", [day]).fetchone()
        return row[0] if row else 0

    def tldr_count_calls(self, day: str, calls: int) -> None:
        """Add ``calls`` to ``day``'s count."""
        if calls:
            with self.writing():
                self.db.execute("INSERT INTO tldr_calls (day, calls) VALUES (?, ?) ON CONFLICT(day) "
                                "DO UPDATE SET calls = calls + excluded.calls", [day, calls])

    # --- waits: "not before" an endpoint asked for (m018) ------------------------------------

    def wait_until(self, what: str) -> datetime | None:
        """The time before which ``what`` (an endpoint: "summarizer URL", "channel D/C") is not
        to be asked, as its Retry-After said; None when it asked for no wait or that time has
        passed."""
        from .rows import parse_time

        row = self.db.execute("SELECT until FROM waits WHERE what = ?", [what]).fetchone()
        until = parse_time(row[0]) if row else None
        return until if until is not None and until > now_utc() else None

    def wait_set(self, what: str, seconds: float, reason: str) -> None:
        """Record that ``what`` is not to be asked for ``seconds`` from now (``reason``: why)."""
        until = now_utc() + timedelta(seconds=seconds)
        with self.writing():
            self.db["waits"].upsert({"what": what, "until": iso(until), "reason": reason}, pk="what")
