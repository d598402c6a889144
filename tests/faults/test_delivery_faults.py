"""Channel faults end to end: real ``watcher once`` subprocesses against a local SMTP server and
a Slack stand-in that fail in the ways real ones do. After each fault: exit status 1, the error
in words on stderr and in ``watcher status``, the other channels delivered (isolation); after
the fault clears, the next ``watcher once`` delivers every paper exactly once per channel and
recipient; no secret anywhere (every run is at ``--log-level debug``)."""

from __future__ import annotations

import re
import sqlite3

import pytest
from deliverkit import Reply

from faultkit import (SMTP_PASSWORD, SMTP_USER, WRONG_PASSWORD, FaultySmtp, SlackStandIn,
                      assert_exactly_once, assert_no_secret, assert_no_traceback, setup)

pytestmark = [pytest.mark.slow,  # real watcher processes against faulty servers: the full suite (CI) runs it, not the inner loop
              pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")]

RECIPIENTS = ("me@example.org", "lab@example.org", "boss@example.org")

SMTP_FAULTS = {
    # fault: (words expected on stderr and in status)
    "421-connect": r"SMTP 127\.0\.0\.1:\d+: 421 .*Service not available.*; a temporary refusal, the next run tries again",
    "451-data": r"message refused \(451 4\.3\.0 Temporary local problem.*\); a temporary refusal, the next run tries again",
    "550-rcpt": r"recipients refused, nothing sent \(lab@example\.org: 550 5\.1\.1",
    "drop-data": r"SMTP 127\.0\.0\.1:\d+: the server closed the connection before it accepted the message",
    "auth": rf"login as {SMTP_USER} refused \(535",
}


@pytest.mark.parametrize("fault", list(SMTP_FAULTS))
def test_smtp_fault_then_recovery_delivers_each_paper_once(tmp_path, fault):
    with FaultySmtp(login=(SMTP_USER, SMTP_PASSWORD), refuse={"lab@example.org"}) as smtp, \
            SlackStandIn() as slack:
        s = setup(tmp_path, smtp_port=smtp.port, slack_url=slack.url,
                  password=WRONG_PASSWORD if fault == "auth" else SMTP_PASSWORD)
        smtp.set_fault(None if fault == "auth" else fault)

        failed = s.watcher("once")
        assert failed.returncode == 1, failed.stderr
        assert_no_traceback(failed)
        assert re.search(r"channel me failed: .*" + SMTP_FAULTS[fault], failed.stderr), failed.stderr
        assert smtp.received == []  # nobody got a copy the ledger does not record
        status = s.status()
        assert re.search(r"-> me: last delivery never\n\s+FAILED at \S+: channel me: " + ".*" + SMTP_FAULTS[fault], status), status
        # isolation: Slack and the archive got everything in the failed run
        assert_exactly_once(slack.ids(), s.ids, "slack")
        assert_exactly_once(s.archive_ids(), s.ids, "archive")

        smtp.set_fault(None)
        s.env["FAULTS_SMTP_PASSWORD"] = SMTP_PASSWORD
        ok = s.watcher("once")
        assert ok.returncode == 0, ok.stderr
        again = s.watcher("once")  # and nothing more afterwards
        assert again.returncode == 0, again.stderr
        mailbox = smtp.ids_by_recipient()
        assert sorted(mailbox) == sorted(RECIPIENTS)
        for rcpt in RECIPIENTS:
            assert_exactly_once(mailbox[rcpt], s.ids, f"mailbox {rcpt}")
        assert_exactly_once(slack.ids(), s.ids, "slack")
        assert_exactly_once(s.archive_ids(), s.ids, "archive")
        status = s.status()
        assert "FAILED" not in status and "-> me: last delivery" in status
        assert_no_secret(s)


SLACK_FAULTS = {
    "429": (Reply(429, "rate_limited", {"Retry-After": "0"}), r"failed 4 times, last HTTP 429: rate_limited"),
    "500": (Reply(500, "internal_error", {"Retry-After": "0"}), r"failed 4 times, last HTTP 500: internal_error"),
    "400 invalid_blocks": (Reply(400, "invalid_blocks"), r"refused with HTTP 400: invalid_blocks"),
    "hang": (Reply(503, "late", hang=8), r"timed out waiting for an answer"),
    "429 far Retry-After": (Reply(429, "rate_limited", {"Retry-After": "3600"}),
                            r"HTTP 429: rate_limited; the server asks to wait 3600s"),
}


@pytest.mark.parametrize("fault", list(SLACK_FAULTS))
def test_slack_fault_then_recovery_delivers_each_paper_once(tmp_path, fault):
    reply, words = SLACK_FAULTS[fault]
    with FaultySmtp(login=(SMTP_USER, SMTP_PASSWORD)) as smtp, SlackStandIn(default=reply, timeout=1) as slack:
        s = setup(tmp_path, smtp_port=smtp.port, slack_url=slack.url)
        failed = s.watcher("once")
        assert failed.returncode == 1, failed.stderr
        assert_no_traceback(failed)
        assert re.search(r"channel lab failed: channel lab: Slack: " + words, failed.stderr), failed.stderr
        assert slack.accepted() == []
        status = s.status()
        assert re.search(r"-> lab: last delivery never\n\s+FAILED at \S+: channel lab: Slack: " + words, status), status
        mailbox = smtp.ids_by_recipient()  # isolation: e-mail went out
        assert_exactly_once(mailbox["me@example.org"], s.ids, "mailbox")

        slack.default = Reply(200, "ok")
        if "far" in fault:  # told to wait an hour: the next run does not ask before then
            asked = len(slack.requests)
            waiting = s.watcher("once")
            assert waiting.returncode == 1 and "not asked before then" in waiting.stderr, waiting.stderr
            assert len(slack.requests) == asked and slack.accepted() == []
            with sqlite3.connect(tmp_path / "watcher.db") as conn:  # an hour later
                conn.execute("UPDATE waits SET until = '2000-01-01T00:00:00+00:00'")
        ok = s.watcher("once")
        assert ok.returncode == 0, ok.stderr
        assert s.watcher("once").returncode == 0
        assert_exactly_once(slack.ids(), s.ids, "slack")
        assert_exactly_once(smtp.ids_by_recipient()["me@example.org"], s.ids, "mailbox")
        assert_exactly_once(s.archive_ids(), s.ids, "archive")
        assert "FAILED" not in s.status()
        assert_no_secret(s)


def test_check_and_status_never_show_secrets(tmp_path):
    with FaultySmtp(login=(SMTP_USER, SMTP_PASSWORD)) as smtp, SlackStandIn() as slack:
        s = setup(tmp_path, smtp_port=smtp.port, slack_url=slack.url)
        r = s.watcher("check")
        assert r.returncode == 0, r.stderr
        assert s.watcher("once").returncode == 0
        s.status()
        for channel in ("me", "lab", "archive"):
            assert s.watcher("test-deliver", channel).returncode == 0
        assert_no_secret(s)



