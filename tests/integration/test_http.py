"""The polite HTTP client against a real local server with scripted faults."""

from __future__ import annotations

import gzip
import time
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import pytest

from httpserver import Reply, server  # noqa: F401  (the fixture)
from helpers import UA, Sleeps, fast_client

from watcher.errors import InputError, SourceError
from watcher.util.http import HttpClient, HttpStatusError, parse_retry_after, safe_url

OK = Reply(body=b"<ok/>")


def test_user_agent_and_body(server):
    server.route("/a", OK)
    with fast_client() as client:
        response = client.get(server.url("/a"))
    assert response.content == b"<ok/>" and response.status == 200
    assert server.requests[0].headers["user-agent"] == UA


def test_429_with_retry_after_then_200(server):
    server.route("/a", Reply(status=429, headers={"Retry-After": "7"}), OK)
    client = fast_client()
    assert client.get(server.url("/a")).content == b"<ok/>"
    assert client.sleep == [7.0]
    assert len(server.hits("/a")) == 2


def test_503_three_times_then_200_backs_off_exponentially(server):
    server.route("/a", Reply(status=503), Reply(status=503), Reply(status=503), OK)
    client = fast_client(backoff=1.0, max_backoff=100)
    assert client.get(server.url("/a")).content == b"<ok/>"
    assert len(client.sleep) == 3
    for attempt, delay in enumerate(client.sleep):  # 1, 2, 4 s, each with +-50% jitter
        assert 0.5 * 2 ** attempt <= delay <= 1.5 * 2 ** attempt


def test_503_forever_is_a_readable_error(server):
    server.route("/a", Reply(status=503))
    with pytest.raises(SourceError, match=r"HTTP 503 Service Unavailable \(4 tries\).*try again later"):
        fast_client().get(server.url("/a"))
    assert len(server.hits("/a")) == 4


def test_retry_after_beyond_cap_gives_up_at_once(server):
    server.route("/a", Reply(status=503, headers={"Retry-After": "3600"}))
    client = fast_client(retry_after_cap=60)
    with pytest.raises(SourceError, match="asks to wait 3600 s"):
        client.get(server.url("/a"))
    assert client.sleep == [] and len(server.hits("/a")) == 1


def test_retry_after_http_date():
    now = time.time()
    when = format_datetime(datetime.fromtimestamp(now, timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 28 <= parse_retry_after(when, now) <= 31
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_timeout_then_success(server):
    server.route("/a", Reply(fault="stall", delay=20, body=b"late"), OK)  # far past the timeout
    client = fast_client(timeout=1.0)
    assert client.get(server.url("/a")).content == b"<ok/>"


def test_timeout_forever_is_a_readable_error(server):
    server.route("/a", Reply(fault="stall", delay=20))
    with pytest.raises(SourceError, match="timed out .*check the network"):
        fast_client(timeout=0.3, retries=1).get(server.url("/a"))


def test_connection_reset_then_success(server):
    server.route("/a", Reply(fault="reset"), OK)
    assert fast_client().get(server.url("/a")).content == b"<ok/>"


def test_truncated_body_is_retried_then_error(server):
    server.route("/a", Reply(fault="truncate", body=b"x" * 10000))
    with pytest.raises(SourceError, match="connection broken before the response was complete"):
        fast_client(retries=2).get(server.url("/a"))
    assert len(server.hits("/a")) == 3


def test_truncated_body_then_whole_body(server):
    server.route("/a", Reply(fault="truncate", body=b"y" * 10000), Reply(body=b"y" * 10000))
    assert fast_client().get(server.url("/a")).content == b"y" * 10000


def test_connection_refused_is_a_source_error():
    client = fast_client(retries=1)
    with pytest.raises(SourceError, match="cannot connect"):
        client.get("http://127.0.0.1:9/nothing")


def test_oversize_body_declared(server):
    server.route("/a", Reply(body=b"z" * 5000))
    with pytest.raises(SourceError, match="larger than the limit of 1,000 bytes"):
        fast_client(max_bytes=1000).get(server.url("/a"))


def test_oversize_body_counted_after_gzip(server):
    # 1 MB of zeros compresses to ~1 KB: the limit applies to what we would hold in memory
    server.route("/a", Reply(body=b"0" * 1_000_000, gzip=True))
    with pytest.raises(SourceError, match="larger than the limit"):
        fast_client(max_bytes=100_000).get(server.url("/a"))


def _bomb(size: int, layers: int) -> bytes:
    """``size`` zero bytes gzipped ``layers`` times, compressed as it streams (never held whole)."""
    import zlib

    unpacked = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block, data = b"\0" * (1 << 20), b""
    for _ in range(size >> 20):
        data += unpacked.compress(block)
    data += unpacked.flush()
    for _ in range(layers - 1):
        data = gzip.compress(data, 9)
    return data


def test_a_gzip_bomb_is_refused_holding_little_more_than_the_cap(server):
    """256 MB of zeros in 250 KB of gzip, with a cap of 1 MB: read as it unpacks, 64 KB at a
    time, so what is held stays near the cap (httpx unpacked each chunk whole)."""
    import tracemalloc

    server.route("/a", Reply(body=_bomb(256 << 20, 1), headers={"Content-Encoding": "gzip"}))
    client = fast_client(max_bytes=1 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(SourceError, match="larger than the limit of 1,048,576 bytes"):
            client.get(server.url("/a"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak


@pytest.mark.parametrize("encoding", ["gzip, gzip", "br", "gzip, identity, deflate"])
def test_stacked_or_unasked_encodings_are_refused(server, encoding):
    """gzip inside gzip (a few KB that unpack to gigabytes in one step) or an encoding watcher
    did not ask for: a one-line error at once, nothing unpacked."""
    server.route("/a", Reply(body=_bomb(64 << 20, 2), headers={"Content-Encoding": encoding}))
    with pytest.raises(SourceError, match=f"content encoding '{encoding}' is not one watcher reads"):
        fast_client().get(server.url("/a"))
    assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"
    assert len(server.hits("/a")) == 1  # asking again gets the same answer: not retried


def test_deflate_zlib_or_raw_is_decoded(server):
    import zlib

    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    server.route("/z", Reply(body=zlib.compress(b"<feed/>" * 50), headers={"Content-Encoding": "deflate"}))
    server.route("/r", Reply(body=raw.compress(b"<feed/>" * 50) + raw.flush(), headers={"Content-Encoding": "deflate"}))
    client = fast_client()
    assert client.get(server.url("/z")).content == client.get(server.url("/r")).content == b"<feed/>" * 50


def test_gzip_is_decoded(server):
    server.route("/a", Reply(body=b"<feed/>" * 100, gzip=True))
    response = fast_client().get(server.url("/a"))
    assert response.content == b"<feed/>" * 100
    assert "gzip" in server.requests[0].headers["accept-encoding"]


def test_conditional_get(server):
    def reply(req):
        if req.headers.get("if-none-match") == '"v1"':
            return Reply(status=304)
        return Reply(body=b"feed", headers={"ETag": '"v1"', "Last-Modified": "Mon, 13 Apr 2026 00:00:00 GMT"})

    server.route("/feed", reply)
    client = fast_client()
    first = client.get(server.url("/feed"))
    assert first.etag == '"v1"' and first.last_modified and not first.not_modified
    second = client.get(server.url("/feed"), etag=first.etag, last_modified=first.last_modified)
    assert second.not_modified and second.content == b""
    assert server.requests[1].headers["if-modified-since"] == first.last_modified


def test_client_error_is_not_retried_and_keeps_body(server):
    server.route("/a", Reply(status=400, body=b"<feed>error</feed>"))
    with pytest.raises(HttpStatusError) as info:
        fast_client().get(server.url("/a"))
    assert info.value.status == 400 and info.value.body == b"<feed>error</feed>"
    assert len(server.hits("/a")) == 1
    assert str(info.value).endswith("HTTP 400 Bad Request; check the source's url")  # a feed: no query
    server.route("/q", Reply(status=404, body=b""))
    with pytest.raises(HttpStatusError) as info:
        fast_client().get(server.url("/q?search_query=cat:cs.LG"))
    assert str(info.value).endswith("HTTP 404 Not Found; check the source's url and query")


def test_rate_limit_per_polite_host(server):
    server.route("/a", OK)
    client = HttpClient(UA, min_interval=0.15, polite_hosts=("127.0.0.1",))
    for _ in range(4):
        client.get(server.url("/a"))
    times = [r.at for r in server.requests]
    gaps = [b - a for a, b in zip(times, times[1:])]
    # measured where the requests arrive, so a connection set-up can shift one arrival a little;
    # without the limit the gaps would be about a millisecond
    assert all(gap >= 0.1 for gap in gaps), gaps
    assert times[-1] - times[0] >= 3 * 0.15 - 0.02, gaps


def test_no_rate_limit_for_other_hosts(server):
    server.route("/a", OK)
    client = HttpClient(UA, min_interval=5.0, sleep=Sleeps())  # arXiv hosts only; 127.0.0.1 is not one
    for _ in range(3):
        client.get(server.url("/a"))
    assert client.sleep == [] and len(server.hits("/a")) == 3  # no wait between them


def test_arxiv_hosts_are_polite_by_default():
    client = HttpClient(UA)
    assert client._polite("export.arxiv.org") and client._polite("rss.arxiv.org")
    assert not client._polite("huggingface.co") and not client._polite("notarxiv.org")


def test_file_urls(tmp_path):
    path = tmp_path / "listing.txt"
    path.write_bytes(b"hello")
    client = fast_client()
    assert client.get(path.as_uri()).content == b"hello"
    with pytest.raises(SourceError, match="cannot read"):
        client.get((tmp_path / "missing").as_uri())
    with pytest.raises(SourceError, match="larger than the limit"):
        fast_client(max_bytes=2).get(path.as_uri())


def test_fetch_url_raises_input_error():
    from watcher.util.http import fetch_url

    with pytest.raises(InputError) as e:
        fetch_url("file:///nonexistent/watcher-test")
    assert "the source's url" not in str(e.value)  # convert reads a URL, it has no source (QA)
    with pytest.raises(InputError, match="check the URL$"):
        fetch_url("ftp://example.org/feed.xml")


def test_secrets_in_urls_are_masked():
    assert safe_url("https://user:secret@example.org/x?y=1") == "https://example.org/x?y=1"


def test_all_arxiv_hosts_share_one_rate_limit():
    client = HttpClient(UA, min_interval=3.0, sleep=Sleeps())
    client._wait_turn("export.arxiv.org")
    client._wait_turn("rss.arxiv.org")
    client._wait_turn("huggingface.co")
    assert len(client.sleep) == 1 and 2.5 < client.sleep[0] <= 3.0


def test_a_host_that_does_not_resolve_is_tried_twice_not_with_full_backoff():
    sleeps = Sleeps()
    client = HttpClient(UA, retries=4, sleep=sleeps, min_interval=0)
    with pytest.raises(SourceError, match=r"cannot connect .*\(2 tries\); check the network"):
        client.get("http://watcher-test.invalid/feed")  # .invalid never resolves (RFC 2606)
    assert len(sleeps) == 1


def test_each_redirect_hop_waits_its_turn_for_a_polite_host(server):
    server.route("/a", Reply(status=301, headers={"Location": "/b"}))
    server.route("/b", Reply(status=302, headers={"Location": server.url("/c?x=1")}))
    server.route("/c", Reply(status=307, headers={"Location": "d"}))  # relative to /c
    server.route("/d", OK)
    client = HttpClient(UA, min_interval=0.15, polite_hosts=("127.0.0.1",))
    response = client.get(server.url("/a"), etag='"v1"')
    assert response.content == b"<ok/>" and response.status == 200
    assert response.url == server.url("/a")  # messages name the url the source asked for
    assert [r.path for r in server.requests] == ["/a", "/b", "/c", "/d"]
    assert server.hits("/c")[0].query == {"x": "1"}
    assert server.hits("/d")[0].headers["if-none-match"] == '"v1"'
    assert server.hits("/d")[0].headers["user-agent"] == UA
    times = [r.at for r in server.requests]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(gap >= 0.1 for gap in gaps), gaps  # httpx's own following: about a millisecond


def test_a_redirect_loop_stops_after_max_hops_each_one_spaced(server):
    server.route("/loop", Reply(status=302, headers={"Location": "/loop"}))
    client = HttpClient(UA, min_interval=0.05, polite_hosts=("127.0.0.1",), max_redirects=5)
    with pytest.raises(SourceError, match=r"redirected too many times \(a redirect loop on the "
                                          r"server\?\); check the source's url \(5 hops, the last to "):
        client.get(server.url("/loop"))
    times = [r.at for r in server.hits("/loop")]
    assert len(times) == 6
    assert all(b - a >= 0.03 for a, b in zip(times, times[1:])), times


def test_a_redirect_to_a_local_file_is_refused(server, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    server.route("/a", Reply(status=302, headers={"Location": secret.as_uri()}))
    with pytest.raises(SourceError, match="not an http\\(s\\) URL"):
        fast_client().get(server.url("/a"))


def test_with_retries_retries_only_what_its_caller_calls_retryable():
    """The one retry loop: the caller's retryable() decides, the policy counts and waits."""
    from watcher.util.http import Policy, Retry, with_retries

    policy = Policy(retries=2, backoff=1.0, max_backoff=4.0, jitter=False, retry_after_cap=10.0)
    waits: list[float] = []

    def refused(n):
        raise ConnectionRefusedError("refused")

    def retryable(e):
        return Retry(f"cannot connect ({type(e).__name__})", error=e) \
            if isinstance(e, ConnectionRefusedError) else None

    with pytest.raises(RuntimeError, match=r"^3 tries, last cannot connect") as caught:
        with_retries(refused, policy, retryable=retryable, sleep=waits.append,
                     give_up=lambda r, tries: RuntimeError(f"{tries} tries, last {r.last}"))
    assert waits == [1.0, 2.0]
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)  # the last try's error

    def timed_out(n):  # not retryable for this caller: raised as it is, after one try
        waits.append(-1)
        raise TimeoutError("may have been accepted")

    waits.clear()
    with pytest.raises(TimeoutError):
        with_retries(timed_out, policy, retryable=retryable, sleep=waits.append,
                     give_up=lambda r, tries: RuntimeError("retried"))
    assert waits == [-1]

    answers = iter([Retry("HTTP 503", wait=3.0), "ok"])

    def busy_then_ok(n):
        answer = next(answers)
        if isinstance(answer, Retry):
            raise answer
        return answer

    waits.clear()
    assert with_retries(busy_then_ok, policy, sleep=waits.append, give_up=None) == "ok"
    assert waits == [3.0]  # the server's Retry-After, not the backoff

    with pytest.raises(RuntimeError, match="asks 60"):
        with_retries(lambda n: (_ for _ in ()).throw(Retry("HTTP 429", wait=60.0)), policy,
                     sleep=waits.append, give_up=None,
                     too_long=lambda r: RuntimeError(f"asks {r.wait:g}"))


def test_every_client_verifies_with_one_tls_context_made_once(monkeypatch):
    """Each cycle makes new clients; loading the certificates again for each cost about 0.2 s
    (even for http:// URLs). They share one context, which still checks certificates and names."""
    import ssl

    from watcher.zotero.client import Client, Library

    def context(client) -> ssl.SSLContext:
        return client._transport._pool._ssl_context

    first, second = HttpClient(UA), HttpClient(UA)
    monkeypatch.setenv("WATCHER_TEST_ZOTERO_KEY", "k")
    zotero = Client(Library(library_id="1", api_key_env="WATCHER_TEST_ZOTERO_KEY"))
    try:
        shared = context(first._client)
        assert context(second._client) is shared and context(zotero._http) is shared
        assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    finally:
        first.close(), second.close(), zotero.close()
