"""The e-mail channel against a real aiosmtpd server: parts, headers, encoding, TLS, login,
refused recipients, size budget, header injection."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace

import pytest
from deliverkit import MailServer, free_port, injection_digest, make_cert, sample_digest

from watcher.deliver import channel_config
from watcher.deliver import DeliveryContext, make_channel
from watcher.errors import DeliveryError
from watcher.present.render import render


def channel(port: int, **kw):
    cfg = channel_config(**{"name": "me", "type": "email", "host": "127.0.0.1", "port": port, "security": "none",
                            "sender": "Wätcher Bot <bot@example.org>",
                            "to": ("Zoë <zoe@example.org>", "lab@example.org"), "timeout": 5.0, **kw})
    return make_channel(cfg, DeliveryContext(formats=("text",)))


def send(ch, digest):
    ch.send(digest, {f: render(digest, f) for f in ch.formats()})


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("the openssl command is not installed (needed for a test certificate)")
    return make_cert(tmp_path_factory.mktemp("cert"))


@pytest.fixture
def trust(cert, monkeypatch):
    """Make the test certificate a trusted CA for ssl.create_default_context()."""
    monkeypatch.setenv("SSL_CERT_FILE", str(cert[0]))
    return cert


def test_plain_smtp_delivers_both_parts_to_every_recipient():
    digest = sample_digest(4, updated=1)
    with MailServer() as server:
        send(channel(server.port), digest)
    assert len(server.received) == 1
    got = server.received[0]
    assert got.mail_from == "bot@example.org"
    assert got.rcpt_tos == ["zoe@example.org", "lab@example.org"]
    msg = got.message
    assert msg.get_content_type() == "multipart/alternative"
    text, html = msg.get_payload()
    assert text.get_content_type() == "text/plain" and html.get_content_type() == "text/html"
    assert text.get_content().replace("\r\n", "\n") == render(digest, "email") + "\n"
    assert text.get_content().count("TL;DR: ") == 4  # the text part mirrors the HTML's TL;DRs
    assert digest.matches[0].paper.abstract not in text.get_content()
    assert html.get_content().replace("\r\n", "\n") == render(digest, "html") + "\n"
    assert str(msg["Subject"]) == "LLM-RL — 2025-04-12: 4 new papers"
    assert msg["From"].addresses[0].display_name == "Wätcher Bot"
    assert [a.addr_spec for a in msg["To"].addresses] == ["zoe@example.org", "lab@example.org"]
    assert msg["Message-ID"].endswith("@example.org>") and msg["Date"].datetime is not None
    raw_headers = got.data.split(b"\r\n\r\n", 1)[0]
    assert raw_headers.isascii() and b"=?utf-8?" in raw_headers  # RFC 2047 words
    assert max(len(line) for line in got.data.split(b"\r\n")) <= 998


def test_empty_digest_says_why_in_both_parts():
    """The text format's empty digest is only its header line (it must read back); the e-mail's
    text part is not a file, so it adds the reason, as the HTML part shows it."""
    digest = sample_digest(0, updated=0)
    digest.empty_reason = "no arXiv announcement on Thu 27 Nov 2025 (holiday: Thanksgiving)"
    with MailServer() as server:
        send(channel(server.port), digest)
    text, html = (p.get_content().replace("\r\n", "\n") for p in server.received[0].message.get_payload())
    assert text == ("LLM-RL - 2025-04-12\n\nNo new papers today: no arXiv announcement on "
                    "Thu 27 Nov 2025 (holiday: Thanksgiving).\n")
    assert "Thanksgiving" in html
    assert str(server.received[0].message["Subject"]) == "LLM-RL — 2025-04-12: no new papers"


def test_header_injection_is_inert():
    with MailServer() as server:
        send(channel(server.port), injection_digest())
    got = server.received[0]
    assert got.rcpt_tos == ["zoe@example.org", "lab@example.org"]
    msg = got.message
    assert msg["Bcc"] is None and "Bcc" not in msg.keys()
    assert all(part["Bcc"] is None for part in msg.walk())
    assert "49" not in msg.get_payload()[1].get_content()


def test_subject_cannot_carry_a_line_break():
    digest = replace(sample_digest(1), title="Evil\r\nBcc: x@evil.example")
    with MailServer() as server:
        send(channel(server.port), digest)
    msg = server.received[0].message
    assert msg["Bcc"] is None and str(msg["Subject"]).startswith("Evil Bcc: x@evil.example")


def test_refused_recipient_fails_and_nobody_gets_a_copy():
    with MailServer(refuse={"lab@example.org"}) as server:
        with pytest.raises(DeliveryError, match=r"recipients refused.*lab@example.org: 550"):
            send(channel(server.port), sample_digest(2))
    assert server.received == []


def test_starttls_with_login(trust, monkeypatch):
    monkeypatch.setenv("TEST_SMTP_PASSWORD", "s3cret-pw")
    with MailServer(mode="starttls", cert=trust, login=("bot", "s3cret-pw")) as server:
        send(channel(server.port, security="starttls", username="bot",
                     password_env="TEST_SMTP_PASSWORD"), sample_digest(2))
    assert len(server.received) == 1


def test_wrong_password_names_the_user_not_the_password(trust, monkeypatch):
    monkeypatch.setenv("TEST_SMTP_PASSWORD", "wrong-pw")
    with MailServer(mode="starttls", cert=trust, login=("bot", "s3cret-pw")) as server:
        with pytest.raises(DeliveryError, match="login as bot refused") as e:
            send(channel(server.port, security="starttls", username="bot",
                         password_env="TEST_SMTP_PASSWORD"), sample_digest(1))
    assert "wrong-pw" not in str(e.value) and server.received == []


def test_implicit_tls(trust):
    with MailServer(mode="tls", cert=trust) as server:
        send(channel(server.port, security="tls"), sample_digest(1))
    assert len(server.received) == 1


def test_untrusted_certificate_is_refused(cert):
    with MailServer(mode="starttls", cert=cert) as server:
        with pytest.raises(DeliveryError, match="certificate not trusted"):
            send(channel(server.port, security="starttls"), sample_digest(1))
    assert server.received == []


def test_starttls_required_but_not_offered():
    with MailServer() as server:
        with pytest.raises(DeliveryError, match="does not offer STARTTLS"):
            send(channel(server.port, security="starttls"), sample_digest(1))


def test_missing_password_variable_is_named(monkeypatch):
    monkeypatch.delenv("NO_SUCH_PASSWORD_VAR", raising=False)
    with pytest.raises(DeliveryError, match="NO_SUCH_PASSWORD_VAR.*not set"):
        send(channel(free_port(), username="bot", password_env="NO_SUCH_PASSWORD_VAR"), sample_digest(1))


def test_nothing_listening():
    with pytest.raises(DeliveryError, match=r"SMTP 127.0.0.1:\d+"):
        send(channel(free_port()), sample_digest(1))


def test_over_budget_lists_the_rest_as_titles():
    digest = sample_digest(30, updated=0)
    limit = 40_000
    with MailServer() as server:
        send(channel(server.port, max_bytes=limit), digest)
    got = server.received[0]
    assert len(got.data) < limit
    text, html = (p.get_content() for p in got.message.get_payload())
    assert "More papers" in text and "More papers" in html
    for m in digest.matches:  # every paper is still there, at least as a linked title
        assert m.paper.abs_url in html and m.paper.abs_url in text or m.paper.title in text
    first_abstract = digest.matches[0].paper.abstract[:200]
    last_abstract = digest.matches[-1].paper.abstract[:200]
    assert first_abstract in text and last_abstract not in text


def test_default_budget_holds_for_a_big_digest():
    digest = sample_digest(30, updated=0)
    for m in digest.matches:
        m.paper.abstract = (m.paper.abstract + " ") * 4
    with MailServer() as server:
        send(channel(server.port), digest)
    assert len(server.received[0].data) < 100_000


def test_tiny_budget_splits_the_digest_into_parts_that_show_every_paper():
    digest = sample_digest(30, updated=0)
    with MailServer() as server:
        send(channel(server.port, max_bytes=14_000), digest)
    n = len(server.received)
    assert n >= 2
    seen = []
    for i, got in enumerate(server.received, 1):
        assert len(got.data) < 14_000
        assert str(got.message["Subject"]).startswith(f"LLM-RL (part {i} of {n}) — 2025-04-12: ")
        text, html = (p.get_content() for p in got.message.get_payload())
        assert "… and" not in text
        seen += [m.paper.arxiv_id for m in digest.matches if m.paper.abs_url in html]
    assert seen == [m.paper.arxiv_id for m in digest.matches]  # each once, in digest order


def test_a_refused_second_part_says_which_papers_went_out():
    from watcher.deliver.email import PartialDelivery

    digest = sample_digest(30, updated=0)
    with MailServer(refuse_data={2}) as server, pytest.raises(PartialDelivery) as e:
        send(channel(server.port, max_bytes=14_000), digest)
    html = server.received[0].message.get_payload()[1].get_content()
    assert [p.arxiv_id for p in e.value.delivered] == [
        m.paper.arxiv_id for m in digest.matches if m.paper.abs_url in html]
    assert "451" in str(e.value) and "part 1 was sent" in str(e.value)


def test_the_text_part_has_every_link_and_the_text_format_none():
    """A plain-text mail reader can open each paper, rate it and view the digest in a browser;
    the text format of files and stdout stays the seed format without links."""
    from dataclasses import replace as copy

    from watcher.present.links import Links

    digest = sample_digest(3, updated=1)
    first = digest.matches[0]
    digest.matches[2] = copy(digest.matches[2], paper=copy(digest.matches[2].paper, arxiv_id=None, url=None))
    digest.links = Links("https://papers.example.org", "s3cret")
    with MailServer() as server:
        send(channel(server.port), digest)
    text = server.received[0].message.get_payload()[0].get_content().replace("\r\n", "\n")
    urls = digest.links.paper(first)
    assert "View in browser: https://papers.example.org/digests/daily/2025-04-12" in text
    assert f"Paper: https://arxiv.org/abs/{first.paper.arxiv_id}\n" in text
    assert f"PDF: https://arxiv.org/pdf/{first.paper.arxiv_id}\n" in text
    assert f"Rate: {digest.links.ask(first)}\n" in text
    assert not any(urls[a] in text for a in ("up", "down", "save"))  # one link, not three
    no_id = digest.links.paper(digest.matches[2])["web"]  # no arXiv id, no URL: its web page
    assert no_id.startswith("https://papers.example.org/papers/h.") and f"Paper: {no_id}\n" in text
    seed = render(digest, "text")
    assert "papers.example.org" not in seed and "arxiv.org/abs" not in seed and "TL;DR" not in seed


def test_titles_without_an_arxiv_id_and_overflow_lines_are_linked_in_html():
    from dataclasses import replace as copy

    from watcher.present.links import Links

    digest = sample_digest(6, updated=0)
    for i in (1, 4):  # one shown in full, one in the "more papers" list
        digest.matches[i] = copy(digest.matches[i], paper=copy(digest.matches[i].paper, arxiv_id=None, url=None))
    digest.links = Links("https://papers.example.org", "s3cret")
    for fmt in ("html", "email", "markdown"):
        out = render(digest, fmt, full_limit=3)
        for m in digest.matches:
            url = m.paper.abs_url or digest.links.paper(m)["web"]
            assert url in out, (fmt, m.paper.title)
    html = render(digest, "html", full_limit=3)
    web = digest.links.paper(digest.matches[4])["web"]
    assert f'<a href="{web}" style="color:#1a56a6;text-decoration:none;">{digest.matches[4].paper.title}</a>' in html


def test_a_lab_list_can_filter_and_unsubscribe_by_the_list_headers():
    with MailServer() as server:
        send(channel(server.port), sample_digest(1, updated=0))
    msg = server.received[0].message
    assert msg["List-Id"] == "watcher digest daily <daily.me.watcher.example.org>"
    assert msg["List-Unsubscribe"] == "<mailto:bot@example.org?subject=unsubscribe%20daily>"


def test_a_server_without_login_is_said_once_with_what_to_change(monkeypatch):
    """A username against a server that offers no SMTP AUTH: smtplib's own words ("SMTP AUTH
    extension not supported by server.") are not wrapped in a second "does not support"."""
    monkeypatch.setenv("WATCHER_TEST_SMTP_PW", "s3cret-pw")
    with MailServer() as server:
        with pytest.raises(DeliveryError) as failed:
            send(channel(server.port, username="bot", password_env="WATCHER_TEST_SMTP_PW"), sample_digest(1))
    said = str(failed.value)
    assert said.endswith("the server offers no login (SMTP AUTH): leave out username and password_env, "
                         'or use security = "starttls" or "tls" (many servers offer login only over TLS)'), said
    assert "not supported by server" not in said and said.count("SMTP AUTH") == 1
    assert server.received == []


def test_a_split_digests_subject_says_how_many_of_all_its_part_holds():
    """QA: part 1's subject said "15 new papers (LLM-RL 30, Robots 2)"; it now says of how many."""
    from dataclasses import replace

    from watcher.deliver.email import subject
    from watcher.models import ProfileCount

    d = sample_digest(4, updated=0)
    d.profiles = [ProfileCount("llm-rl", "LLM-RL", 3), ProfileCount("robots", "Robots", 1)]
    assert subject(d) == "LLM-RL — 2025-04-12: 4 new papers (LLM-RL 3, Robots 1)"
    part = replace(d, title="LLM-RL (part 1 of 2)", matches=d.matches[:3])
    assert subject(part) == "LLM-RL (part 1 of 2) — 2025-04-12: 3 of 4 new papers (LLM-RL 3, Robots 1)"


class HostileServer:
    """A TCP server that answers one connection with ``lines`` (an iterator of byte strings,
    each sent after ``pause`` seconds) until the client hangs up: not an SMTP server."""

    def __init__(self, lines, pause: float = 0.0):
        import socket
        import threading

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sent = 0

        def serve():
            conn, _ = self.sock.accept()
            with conn:
                try:
                    for line in lines:
                        if pause:
                            time.sleep(pause)
                        conn.sendall(line)
                        self.sent += len(line)
                except OSError:
                    pass  # the client hung up

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()


def test_a_server_flooding_its_greeting_is_cut_off_at_the_reply_cap():
    """A multi-line greeting that never ends: smtplib keeps every line (10 GB in 23 s); a
    reply is read up to 64 KB, then a one-line error."""
    from itertools import repeat

    with HostileServer(repeat(b"220-" + b"A" * 8000 + b"\r\n")) as server:
        with pytest.raises(DeliveryError, match=r"the server sent a reply longer than 65,536 bytes \(not an "
                                                r"SMTP server's answer\); nothing more was read"):
            send(channel(server.port), sample_digest(1))


def test_a_server_answering_a_line_at_a_time_is_cut_off_at_the_total_deadline():
    """Each line arrives within the timeout, so smtplib's per-read timeout never fires: the
    step's deadline (4 x the timeout) does."""
    from itertools import repeat

    started = time.monotonic()
    with HostileServer(repeat(b"220-still here\r\n"), pause=0.2) as server:
        with pytest.raises(DeliveryError, match=r"timed out after more than 2 s in total"):
            send(channel(server.port, timeout=0.5), sample_digest(1))
    assert time.monotonic() - started < 30  # not forever
