"""Runs, and the state of sources, channels and digests (what status and the schedule read)."""

from __future__ import annotations

import json
from datetime import date, datetime

from ..masking import redact
from .records import ChannelRecord, ChannelRun, DigestRecord, SourceRecord
from .rows import iso


class RunStore:
    """The sources, channels, digests and runs tables."""

    def all_sources_failed(self, names) -> bool:
        """True when each of the sources ``names`` (at least one) was fetched and its last
        attempt failed."""
        rows = {r["name"]: r for r in self.db["sources"].rows}
        return bool(names) and all(
            n in rows and rows[n]["last_error_at"] and rows[n]["last_error_at"] == rows[n]["last_attempt"]
            for n in names)

    def source_state(self, name: str) -> dict:
        """The saved state dict of a source (ETag, cursors, ...)."""
        rows = list(self.db["sources"].rows_where("name = ?", [name]))
        return json.loads(rows[0]["state"]) if rows else {}

    def source_ok(self, name: str, state: dict, counts: dict, now: datetime) -> None:
        """Record a successful fetch: new state, counts, failures reset."""
        with self.writing():
            self.db["sources"].upsert({
                "name": name, "state": json.dumps(state), "last_attempt": iso(now),
                "last_success": iso(now), "failures": 0, "last_counts": json.dumps(counts),
            }, pk="name")

    def source_failed(self, name: str, error: str, now: datetime) -> None:
        """Record a failed fetch; the state stays as it was."""
        with self.writing():
            rows = list(self.db["sources"].rows_where("name = ?", [name]))
            failures = (rows[0]["failures"] if rows else 0) + 1
            self.db["sources"].upsert({"name": name, "last_attempt": iso(now), "last_error": redact(error),
                                       "last_error_at": iso(now), "failures": failures}, pk="name")

    def sources(self) -> list[SourceRecord]:
        """Every source fetched, with the number of papers each stored first (``paper_counts``,
        kept by triggers: m017)."""
        counts = dict(self.db.execute("SELECT source, papers FROM paper_counts").fetchall())
        return [SourceRecord.from_row(r, counts.get(r["name"], 0)) for r in self.db["sources"].rows]

    def channel_state(self, digest: str, channel: str) -> ChannelRecord:
        """The state of (digest, channel); every field None before its first run."""
        rows = list(self.db["channels"].rows_where("digest = ? AND channel = ?", [digest, channel]))
        return ChannelRecord.from_row(rows[0]) if rows else ChannelRecord(digest, channel)

    def channel_states(self, digests) -> dict[tuple[str, str], ChannelRecord]:
        """The state of every channel of the named digests that ran, by (digest, channel), in
        one query (``watcher status``); a pair missing never ran."""
        names = list(digests)
        rows = self.db.query(f"SELECT * FROM channels WHERE digest IN ({', '.join('?' * len(names))})", names)
        return {(r["digest"], r["channel"]): ChannelRecord.from_row(r) for r in rows}

    def delivery_failed(self, digest: str, channel: str, error: str, now: datetime,
                        first_window: date | None = None) -> None:
        """Record a failed delivery; nothing enters the ledger and the watermark stays. A first
        run's window start is kept (``first_window``) so that retries after a long outage still
        reach back to it."""
        row = {"digest": digest, "channel": channel, "last_attempt": iso(now),
               "last_error": redact(error), "last_error_at": iso(now)}
        with self.writing():
            if first_window and not self.channel_state(digest, channel).first_window:
                row["first_window"] = iso(first_window)
            self.db["channels"].upsert(row, pk=("digest", "channel"))

    def digest_ran(self, name: str, now: datetime, ok: bool, error: str | None = None,
                   degraded: str | None = None) -> None:
        """Record a digest run (the daemon's catch-up and ``--due`` read it). A run that
        delivered without something it should carry (``degraded``: why) counts as a success
        for the schedule, with the status ``degraded`` and the reason as its error."""
        status = "failed" if not ok else "degraded" if degraded else "ok"
        row = {"name": name, "last_run": iso(now), "last_status": status,
               "last_error": redact((error if not ok else degraded) or "") or None}
        if ok:
            row["last_success"] = iso(now)
        with self.writing():
            self.db["digests"].upsert(row, pk="name")

    def digest_state(self, name: str) -> DigestRecord:
        """The digest's last run; every field None before the first."""
        return self.digest_states([name])[name]

    def digest_states(self, names) -> dict[str, DigestRecord]:
        """The last run of each named digest, in one query (every field None before its first)."""
        names = list(names)
        rows = self.db.query(f"SELECT * FROM digests WHERE name IN ({', '.join('?' * len(names))})", names)
        found = {r["name"]: DigestRecord.from_row(r) for r in rows}
        return {n: found.get(n) or DigestRecord(n) for n in names}

    def last_runs(self, names) -> dict[str, datetime | None]:
        """When each named digest last ran, whatever the outcome (None before its first run):
        what ``watcher once --due`` counts from."""
        return {n: d.last_run for n, d in self.digest_states(names).items()}

    def last_successes(self, names) -> dict[str, datetime | None]:
        """When each named digest last ran successfully (None before): what the schedule and
        ``watcher status`` count from."""
        return {n: d.last_success for n, d in self.digest_states(names).items()}

    def last_run_channels(self, digests, limit: int = 50) -> dict[str, list[ChannelRun]]:
        """For each named digest, what each of its channels did in the newest of the last
        ``limit`` runs that delivered it (as recorded: papers, sent, ``empty`` - why nothing was
        sent -, ``profiles``: name -> papers brought); [] when none of them did. The runs are
        read once for all the digests."""
        found: dict[str, list[ChannelRun]] = {d: [] for d in digests}
        for row in self.db.query("SELECT detail FROM runs WHERE detail IS NOT NULL ORDER BY id DESC LIMIT ?",
                                 [limit]):
            try:
                channels = json.loads(row["detail"]).get("channels", [])
                ran = {d for c in channels if isinstance(d := c.get("digest"), str)}
            except (ValueError, AttributeError, TypeError):
                continue
            for digest in ran:
                if digest in found and not found[digest]:
                    found[digest] = [ChannelRun.from_detail(c) for c in channels if c.get("digest") == digest]
            if all(found.values()):
                break
        return found

    def start_run(self, kind: str, now: datetime) -> int:
        """A new row in runs; returns its id."""
        with self.writing():
            return self.db["runs"].insert({"kind": kind, "started": iso(now), "status": "running"}).last_pk

    def finish_run(self, run_id: int, status: str, detail: dict, now: datetime) -> None:
        """Close a run with its status and a JSON detail."""
        with self.writing():
            self.db["runs"].update(run_id, {"finished": iso(now), "status": status,
                                            "detail": redact(json.dumps(detail))})
