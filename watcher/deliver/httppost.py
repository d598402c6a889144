"""A JSON POST with the retry rules shared by the ``slack`` and ``webhook`` channels: their
:class:`~watcher.util.http.Policy` (:func:`policy`) run by :func:`watcher.util.http.with_retries`.

* 2xx: accepted.
* 429 and 5xx: retried up to ``ATTEMPTS`` times in all, waiting ``Retry-After`` when the server
  sends one (at most ``MAX_WAIT`` seconds: a longer wait fails the delivery, the next run tries
  again) and 1, 2, 4 … seconds otherwise.
* A connection that cannot be made is retried the same way (nothing was sent).
* A timeout waiting for the answer is not retried: the server may have taken the message, and a
  retry would post it twice; the delivery fails and the next run sends the digest again.
* Other 4xx: not retried; the error carries the server's own reason when it is one code
  (Slack's ``invalid_blocks``), else only the status line (an error page may quote the URL).
* An answer is read up to 1 MB (:func:`watcher.util.http.post_capped`); a longer one fails the
  delivery, not retried.

The URL is a secret (a Slack webhook URL is a credential): it never appears in an error, and
httpx's own request log lines are masked by :func:`watcher.deliver.base.redact`.
"""

from __future__ import annotations

import re
import time

import httpx

from ..errors import DeliveryError, TooLarge
from ..util.http import (ANSWER_BYTES, Policy, Retry, client_headers, parse_retry_after, post_capped,
                    tls_context, with_retries)
from ..masking import redact, remember_url

ATTEMPTS = 4
MAX_WAIT = 60.0
BACKOFF = (1.0, 2.0, 4.0)  # seconds between tries: each the double of the one before, no jitter


def policy() -> Policy:
    """The channels' :class:`~watcher.util.http.Policy`, from the constants above."""
    return Policy(retries=ATTEMPTS - 1, backoff=BACKOFF[0], max_backoff=BACKOFF[-1], jitter=False,
                  retry_after_cap=MAX_WAIT, max_bytes=ANSWER_BYTES)


def client(timeout: float, user_agent: str) -> httpx.Client:
    """The HTTP client of a delivery: the channel's timeout on connect, write and read."""
    return httpx.Client(timeout=httpx.Timeout(timeout), headers=client_headers(user_agent),
                        follow_redirects=False, verify=tls_context())


def _nothing_taken(e: Exception) -> Retry | None:
    """The failures retried: a connection not made, or broken (a timeout waiting for the
    answer is not one of them: the server may have taken the message)."""
    if isinstance(e, httpx.ConnectTimeout):
        return Retry("timed out connecting", error=e)
    if isinstance(e, httpx.TransportError):
        return Retry(f"cannot connect ({type(e).__name__})", error=e)
    return None


def post_json(http: httpx.Client, url: str, payload, *, who: str, sleep=time.sleep) -> httpx.Response:
    """POST ``payload`` as JSON until it is accepted; DeliveryError (naming ``who``, never the
    URL) when it is refused or every attempt failed."""
    remember_url(url)  # a token in a webhook's own url (not from url_env) is masked too
    rules = policy()

    def attempt(n: int) -> httpx.Response:
        try:
            response, body = post_capped(http, url, json=payload, limit=rules.max_bytes)
        except TooLarge as e:
            raise DeliveryError(f"{who}: {e} (not retried: the server may have accepted it)") from e
        except httpx.TimeoutException as e:
            if isinstance(e, httpx.ConnectTimeout):
                raise
            raise DeliveryError(f"{who}: timed out waiting for an answer (not retried: the server may "
                                "have accepted it)") from e
        except (httpx.UnsupportedProtocol, httpx.InvalidURL):
            raise DeliveryError(f"{who}: the URL is not a valid http(s) URL") from None
        if response.is_success:
            return response
        reason = _reason(response, body, url)
        if response.status_code != 429 and response.status_code < 500:
            raise DeliveryError(f"{who}: refused with HTTP {response.status_code}: {reason}")
        raise Retry(f"HTTP {response.status_code}: {reason}", wait=_retry_after(response))

    return with_retries(
        attempt, rules, retryable=_nothing_taken, sleep=sleep,
        too_long=lambda r: _wait_past_the_run(DeliveryError(
            f"{who}: {r.last}; the server asks to wait {r.wait:g}s, more than watcher waits in one "
            "run: not asked again before then"), r.wait),
        give_up=lambda r, tries: DeliveryError(f"{who}: failed {tries} times, last {r.last}"))


def _wait_past_the_run(error: DeliveryError, wait: float) -> DeliveryError:
    """``error`` carrying the server's wait (``retry_after``, seconds): the pipeline records it
    and asks the channel's server again only after it, in later runs too."""
    error.retry_after = wait
    return error


def _retry_after(response: httpx.Response) -> float | None:
    return parse_retry_after(response.headers.get("Retry-After"))


def _reason(response: httpx.Response, body: bytes, url: str) -> str:
    """The server's reason when it is one short code (Slack's ``invalid_blocks``), else the
    status line's: an error page may quote the request, and the URL it was sent to is a secret
    (``Cannot POST /hook?token=…``); so may the code itself (a server answering the token)."""
    text = body.decode("utf-8", "replace").strip()
    if _CODE.fullmatch(text) and text.lower() not in url.lower() and redact(text) == text:
        return text
    return response.reason_phrase or "no reason given"


_CODE = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
