"""The ledger: deliveries, and each delivered message (issues, messages, their papers as sent)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, datetime

from ..models import Digest, Match, Paper, Sent
from .records import IssueRecord, MessageRecord, PaperDelivery, PaperMessage
from .papers import changed_since, paper_snapshot, row_to_paper
from .rows import _equal, iso, stamp


class LedgerStore:
    """Deliveries and messages: written after a channel accepted, read by the web, site and explain."""

    def record_delivery(self, digest: str, channel: str, papers: list[Paper], now: datetime,
                        issue: Digest | None = None, sent: Sent | None = None) -> None:
        """After the channel accepted: ledger rows for ``papers`` and the watermark moved to now,
        in one transaction. An empty ``papers`` (nothing to send) only moves the watermark.
        ``issue``, the digest as sent, is kept as the channel's message (:meth:`record_message`,
        with what ``sent`` says the channel showed of it)."""
        with self.writing():
            if issue is not None:
                self.record_message(issue, channel, now, sent)
            self._ledger(digest, channel, papers, now)
            row = {"digest": digest, "channel": channel, "watermark": stamp(now),
                   "last_attempt": iso(now), "last_error": None}
            if papers:  # "last delivery" in status means the last digest actually sent
                row.update(last_success=iso(now), last_count=len(papers))
            self.db["channels"].upsert(row, pk=("digest", "channel"))

    def record_shown(self, digest: str, channel: str, papers: list[Paper], now: datetime,
                     issue: Digest | None = None, sent: Sent | None = None) -> None:
        """Ledger rows for ``papers`` that a channel showed before it failed (the accepted parts
        of a split e-mail), and with ``issue`` the message of just those papers; the watermark
        stays, so the next run still sends the rest."""
        with self.writing():
            if issue is not None:
                keys = {p.key for p in papers}
                self.record_message(replace(issue, matches=[m for m in issue.matches if m.paper.key in keys]),
                                    channel, now, sent)
            self._ledger(digest, channel, papers, now)

    def _ledger(self, digest: str, channel: str, papers: list[Paper], now: datetime) -> None:
        """The ledger rows: ``papers`` delivered through (digest, channel) at ``now``."""
        self.db["deliveries"].upsert_all(
            [{"digest": digest, "channel": channel, "paper": p.key, "version": p.version,
              "delivered_at": iso(now)} for p in papers],
            pk=("digest", "channel", "paper"))

    def next_message(self, digest: str, day: date, channel: str) -> int:
        """The number the next message of (digest, date, channel) gets: 1 for the first that
        day through that channel (what its "view in browser" link names before it is sent)."""
        return self.db.execute("SELECT coalesce(max(number), 0) + 1 FROM messages WHERE digest = ? "
                               "AND day = ? AND channel = ?", [digest, iso(day), channel]).fetchone()[0]

    def record_message(self, issue: Digest, channel: str, now: datetime, sent: Sent | None = None) -> int:
        """Keep what one delivered message showed: the ``issues`` row of (digest, date), and a
        ``messages`` row with its papers in order (new, then updated), each with score, profile,
        reasons, TL;DR and how it was shown (``sent``: what a size limit cut). Returns its id."""
        day = iso(issue.date)
        when = iso(now)
        self.db.execute("""
            INSERT INTO issues (digest, day, title, first_delivered, last_delivered, empty_reason)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (digest, day) DO UPDATE SET last_delivered = excluded.last_delivered,
                title = excluded.title""",
                        [issue.name, day, issue.title, when, when, issue.empty_reason])
        sent = sent or Sent()
        number = self.next_message(issue.name, issue.date, channel)
        message = self.db.execute(
            "INSERT INTO messages (digest, day, channel, number, title, sent_at, empty_reason, parts) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [issue.name, day, channel, number, issue.title, when, issue.empty_reason, sent.parts]).lastrowid
        rows = [(m, "new") for m in issue.matches] + [(m, "updated") for m in issue.updated]
        self.db.conn.executemany("""
            INSERT INTO message_papers (message, position, paper, kind, version, score, profile,
                                        reasons, tldr, shown, paper_sent)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                            [(message, i, m.paper.key, kind, m.paper.version, round(m.score, 4), m.profile,
                              json.dumps(list(m.reasons), ensure_ascii=False), m.tldr,
                              "title" if kind == "new" and m.paper.key in sent.titles_only else "full",
                              paper_snapshot(m.paper))
                             for i, (m, kind) in enumerate(rows, 1)])
        return message

    def issues(self, digest: str | None = None, *, day: str | None = None, limit: int | None = None,
               offset: int = 0) -> list[IssueRecord]:
        """Delivered digests, newest date first (of one digest, and of one date, when named),
        each with its messages (without their papers: how many new papers each showed) in the
        order they were sent."""
        where, args = _equal(digest=digest, day=day)
        sql = f"SELECT * FROM issues WHERE {where} ORDER BY day DESC, digest"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            args += [limit, offset]
        return self._with_messages(list(self.db.query(sql, args)))

    def latest_issues(self) -> list[IssueRecord]:
        """The newest delivered issue of each digest, with its messages as :meth:`issues`."""
        return self._with_messages(list(self.db.query("""
            SELECT i.* FROM issues i
            WHERE i.day = (SELECT max(day) FROM issues j WHERE j.digest = i.digest)
            ORDER BY i.digest""")))

    def _with_messages(self, issues: list[dict]) -> list[IssueRecord]:
        by_issue: dict[tuple[str, str], list[MessageRecord]] = {(i["digest"], i["day"]): [] for i in issues}
        for row in self.db.query(f"""
                SELECT m.digest, m.day, m.channel, m.number, m.sent_at, m.parts,
                       (SELECT count(*) FROM message_papers mp WHERE mp.message = m.id
                        AND mp.kind = 'new') AS papers
                FROM messages m WHERE m.digest || char(0) || m.day IN ({",".join("?" * len(by_issue))})
                ORDER BY m.sent_at, m.id""", [f"{d}\0{day}" for d, day in by_issue]):
            by_issue[(row["digest"], row["day"])].append(MessageRecord.from_row(row))
        return [IssueRecord.from_row(i, by_issue[(i["digest"], i["day"])]) for i in issues]

    def issue_profile_counts(self, digest: str, day: str) -> dict[str, int]:
        """How many papers each profile brought to the issue of ``digest`` on ``day``, as its
        messages recorded them (a paper counted once, whatever the channels)."""
        return dict(self.db.execute("""
            SELECT mp.profile, count(DISTINCT mp.paper) FROM message_papers mp
            JOIN messages m ON m.id = mp.message
            WHERE m.digest = ? AND m.day = ? AND mp.kind = 'new' GROUP BY mp.profile""", [digest, day]))

    def issue_days(self, digest: str) -> list[str]:
        """The dates ``digest`` was delivered on, newest first."""
        return [r[0] for r in self.db.execute("SELECT day FROM issues WHERE digest = ? ORDER BY day DESC",
                                              [digest])]

    def last_issue_days(self, digests) -> dict[str, str]:
        """The date of each named digest's newest issue, in one query (a digest never delivered
        is absent): the index of issues by (digest, day) answers it."""
        names = list(digests)
        return dict(self.db.execute(f"SELECT digest, max(day) FROM issues WHERE digest IN "
                                    f"({', '.join('?' * len(names))}) GROUP BY digest", names))

    def issue(self, digest: str, day: str, channel: str | None = None,
              number: int | None = None) -> IssueRecord | None:
        """One delivered issue with its messages (of ``channel`` only, and only message
        ``number`` of it, when given), in the order they were sent; each message holds its
        ``matches`` (Match objects with the recorded score, profile, reasons and TL;DR, in
        the message's order), ``updated``, and ``titles_only`` (keys of papers a size limit
        listed as titles). None when there is no such issue. A paper no longer stored is
        left out.

        Each Match's paper is the paper as the message sent it (``paper_sent``, m012), and its
        ``since`` the paper as stored now when that differs (:func:`changed_since`). A paper
        recorded before m012 is the one stored now (``as_sent`` False), with ``since`` set
        when its version is no longer the one sent."""
        rows = list(self.db.query("SELECT * FROM issues WHERE digest = ? AND day = ?", [digest, day]))
        if not rows:
            return None
        where, args = _equal(digest=digest, day=day, channel=channel, number=number)
        messages = {r["id"]: (r, {"matches": [], "updated": [], "titles_only": []})
                    for r in self.db.query(f"SELECT * FROM messages WHERE {where} ORDER BY sent_at, id", args)}
        for r in self.db.query(f"""
                SELECT mp.message, mp.kind, mp.score, mp.profile, mp.reasons, mp.tldr, mp.shown,
                       mp.version AS sent_version, mp.paper_sent, p.*
                FROM message_papers mp JOIN papers p ON p.key = mp.paper
                WHERE mp.message IN ({",".join("?" * len(messages))})
                ORDER BY mp.message, mp.position""", list(messages)):
            now = row_to_paper(r)
            if r["paper_sent"]:
                paper = row_to_paper(json.loads(r["paper_sent"]))
                as_sent, since = True, changed_since(paper, now)
                if paper.key != now.key:  # re-keyed since (an id found later): named as stored now
                    paper, since = replace(paper, arxiv_id=now.arxiv_id, dois=list(now.dois), doi=now.doi,
                                           pmid=now.pmid), now
                    if paper.key != now.key:
                        paper, as_sent = now, False
            else:  # recorded before messages kept their papers: only the version is known
                paper, as_sent = now, False
                since = now if r["sent_version"] not in (None, now.version) else None
            m = Match(paper, r["score"] or 0.0, json.loads(r["reasons"] or "[]"),
                      r["profile"] or "", r["tldr"], as_sent=as_sent, since=since)
            shown = messages[r["message"]][1]
            shown["matches" if r["kind"] == "new" else "updated"].append(m)
            if r["shown"] == "title":
                shown["titles_only"].append(m.paper.key)
        return IssueRecord.from_row(rows[0], [MessageRecord.from_row(row, papers=len(shown["matches"]), **shown)
                                              for row, shown in messages.values()])

    def delivered_per_day(self, profile: str, start: date, end: date) -> dict[date, set[str]]:
        """The papers the messages of each issue date from ``start`` to ``end`` delivered as
        new under ``profile`` (the profile chart's "delivered"): date -> paper keys."""
        out: dict[date, set[str]] = {}
        for d, key in self.db.execute("""
                SELECT DISTINCT m.day, mp.paper FROM message_papers mp JOIN messages m ON m.id = mp.message
                WHERE mp.profile = ? AND mp.kind = 'new' AND m.day >= ? AND m.day <= ?""",
                                      [profile, iso(start), iso(end)]):
            out.setdefault(date.fromisoformat(d), set()).add(key)
        return out

    def paper_deliveries(self, key: str) -> list[PaperDelivery]:
        """Where a paper went: one row per (digest, channel) with the version and time, and the
        message (issue date and number) that showed it when known."""
        return [PaperDelivery.from_row(r) for r in self.db.query("""
            SELECT d.digest, d.channel, d.version, d.delivered_at, m.day, m.number
            FROM deliveries d LEFT JOIN messages m ON m.id = (
                SELECT m2.id FROM message_papers mp JOIN messages m2 ON m2.id = mp.message
                WHERE mp.paper = d.paper AND mp.kind = 'new' AND m2.digest = d.digest
                AND m2.channel = d.channel ORDER BY m2.sent_at LIMIT 1)
            WHERE d.paper = ? ORDER BY d.delivered_at, d.digest, d.channel""", [key])]

    def paper_messages(self, key: str) -> list[PaperMessage]:
        """The delivered messages that showed paper ``key``, oldest first, each with what it
        recorded of the paper (kind, version, profile, score, reasons)."""
        return [PaperMessage.from_row(r) for r in self.db.query("""
            SELECT m.digest, m.day, m.channel, m.number, m.sent_at, mp.kind, mp.version, mp.profile,
                   mp.score, mp.reasons
            FROM message_papers mp JOIN messages m ON m.id = mp.message
            WHERE mp.paper = ? ORDER BY m.sent_at, m.id""", [key])]
