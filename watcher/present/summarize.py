"""The TL;DR per paper, computed in the pipeline before rendering (docs/channels.md ``[summarizer]``).

``type = "extractive"`` (the default) needs nothing: :func:`watcher.present.tldr.extractive_tldr`.

``type = "openai"`` asks an OpenAI-compatible chat-completions endpoint (Ollama, vLLM,
llama.cpp's server, OpenAI ...) for one sentence per paper, under these rules:

* **Once per paper, ever.** A model's TL;DR is kept in the database (``tldr_cache``) and never
  asked for again. An answer that cannot be used (empty, too long) is remembered too, so a paper
  the model cannot summarise does not cost a call in every digest; a call that got no answer
  (refused, 429, 5xx, timeout, not JSON) is not, so the paper is tried again in a later digest.
* **At most ``max_per_day`` calls** (UTC days, counted in ``tldr_calls``, every request counts).
* **Bounded by ``timeout`` in total.** Calls run on a few daemon threads; the pipeline waits at
  most ``timeout`` seconds per digest, from the first call on, and takes the extractive TL;DR for
  every paper still without an answer then. A late answer is thrown away, never waited for.
* **Never fails a delivery.** Every failure falls back to the extractive TL;DR with one log line
  per cause, naming the papers.
* **The API key** (from ``api_key_env``) is only ever sent in the ``Authorization`` header; it is
  masked in every log line and error text, and never stored.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING

import httpx

from ..errors import TooLarge
from ..util.http import ANSWER_BYTES, Policy, client_headers, parse_retry_after, post_capped, tls_context
from ..masking import redact, remember as remember_secret
from ..models import Digest, Paper, clean_text, now_utc
from ..kinds import SUMMARIZER_KINDS
from .tldr import MAX_CHARS, extractive_tldr

if TYPE_CHECKING:  # a type only: present sits below config (docs/design.md, "Layers")
    from ..config import SummarizerConfig

log = logging.getLogger("watcher")

WORKERS = 4  # calls in flight at once
MAX_MODEL_CHARS = MAX_CHARS + 60  # a model's sentence may run a little longer than ours
SYSTEM_PROMPT = ("You write the TL;DR of a research paper: exactly one plain-text sentence of at "
                 f"most {MAX_CHARS} characters saying what the paper does and finds. No preamble, "
                 "no Markdown, no quotes.")
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_PREFIX = re.compile(r"^\s*(?:\*\*)?(?:tl;?dr|summary|one[- ]sentence summary)(?:\*\*)?\s*[:\-–—]\s*", re.I)


class _Failure(Exception):
    """A call that gave no usable TL;DR. ``answered``: the model did answer (remember it);
    ``retry_after``: the endpoint rate-limited us (HTTP 429) for that many seconds."""

    def __init__(self, reason: str, answered: bool = False, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.answered = answered
        self.retry_after = retry_after


DEFAULT_RETRY_AFTER = 60.0  # a 429 without a usable Retry-After
MAX_RETRY_AFTER = 86400.0
# not retried within a run (a 429 pauses the endpoint instead); answers capped; a day's wait at most
POLICY = Policy(retries=0, retry_after_cap=MAX_RETRY_AFTER, max_bytes=ANSWER_BYTES)
_PAUSED: dict[str, float] = {}  # endpoint -> time.monotonic() before which it is not called
# (a 429's Retry-After, honoured by every digest of this process: the daemon's later cycles too)


def retry_after(value: str | None, now: float | None = None) -> float:
    """Seconds a ``Retry-After`` header asks to wait (delta-seconds or an HTTP date), bounded
    to a day; DEFAULT_RETRY_AFTER when it is absent or unreadable."""
    wait = parse_retry_after(value, now)
    return DEFAULT_RETRY_AFTER if wait is None else min(wait, POLICY.retry_after_cap)


def clean_answer(content: object) -> str:
    """The model's sentence on one line; :class:`_Failure` when it is empty or too long."""
    if not isinstance(content, str):
        raise _Failure("the answer has no text content")
    text = _THINK.sub("", content)
    text = clean_text(" ".join(text.split()))
    text = _PREFIX.sub("", text).strip().strip("\"'`*").strip()
    if not text:
        raise _Failure("the answer is empty", answered=True)
    if len(text) > MAX_MODEL_CHARS:
        raise _Failure(f"the answer is too long ({len(text)} characters)", answered=True)
    return text


def request_body(cfg: SummarizerConfig, paper: Paper) -> dict:
    """The chat-completions request for one paper."""
    user = f"Title: {' '.join(paper.title.split())}\n\nAbstract: {' '.join(paper.abstract.split())}"
    return {"model": cfg.model, "temperature": 0, "max_tokens": 120, "stream": False,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                         {"role": "user", "content": user}]}


def ask(http: httpx.Client, cfg: SummarizerConfig, paper: Paper, timeout: float) -> str:
    """One call; the cleaned sentence, or :class:`_Failure` saying why not."""
    try:
        response, body = post_capped(http, f"{cfg.base_url}/chat/completions",
                                     json=request_body(cfg, paper), timeout=timeout,
                                     limit=POLICY.max_bytes)
    except TooLarge as e:
        raise _Failure(str(e)) from e
    except httpx.TimeoutException:
        raise _Failure("timed out") from None
    except httpx.TransportError as e:
        raise _Failure(f"cannot connect ({type(e).__name__})") from e
    if response.status_code == 429:
        wait = retry_after(response.headers.get("Retry-After"))
        raise _Failure(f"HTTP 429 (rate limited; retry after {wait:g}s)", retry_after=wait)
    if not response.is_success:
        raise _Failure(f"HTTP {response.status_code}")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: [[[[… nested past the stack
        raise _Failure("the answer is not JSON") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise _Failure("the answer is not a chat completion (no choices[0].message.content)") from None
    return clean_answer(content)


class Summarizer:
    """Fills ``Match.tldr`` for the papers of digests, by the config's ``[summarizer]``.

    One Summarizer serves one digest run (all its channels): a paper is summarised once, and
    the ``timeout`` budget starts with the first call and covers them all.
    """

    def __init__(self, cfg: SummarizerConfig, store=None, now: datetime | None = None):
        self.cfg = cfg
        self.store = store
        self.now = now
        self.memo: dict[str, str] = {}  # paper key -> TL;DR, this run
        self.deadline: float | None = None

    def fill(self, digest: Digest) -> None:
        """Set ``tldr`` on every match of ``digest`` (new and updated papers)."""
        matches = [*digest.matches, *digest.updated]
        if SUMMARIZER_KINDS[self.cfg.type].model and self.store is not None:
            self._from_model([m.paper for m in matches  # no abstract: nothing to summarise
                              if m.paper.key not in self.memo and (m.paper.abstract or "").strip()])
        for m in matches:  # the extractive one is remembered too: the next channel asks again
            m.tldr = self.memo.get(m.paper.key) or self.memo.setdefault(
                m.paper.key, extractive_tldr(m.paper.abstract))

    # --- the model ---------------------------------------------------------------------------

    def _from_model(self, papers: list[Paper]) -> None:
        papers = list({p.key: p for p in papers}.values())
        if not papers:
            return
        cached = self.store.tldr_cached([p.key for p in papers])
        for key, tldr in cached.items():
            if tldr:
                self.memo[key] = tldr
        todo = [p for p in papers if p.key not in cached]
        if not todo:
            return
        if self.deadline is None:
            self.deadline = time.monotonic() + self.cfg.timeout
        if time.monotonic() >= self.deadline:
            return self._fallback(todo, f"the {self.cfg.timeout:g}s timeout has passed")
        paused = _PAUSED.get(self.cfg.base_url or "", 0.0) - time.monotonic()
        until = self.store.wait_until(self._wait_key)  # a Retry-After past an earlier run's end
        if until is not None:
            paused = max(paused, (until - now_utc()).total_seconds())
        if paused > 0:  # not retried before the endpoint's Retry-After, and not counted
            return self._fallback(todo, f"the endpoint rate-limited us (HTTP 429): not asked "
                                        f"again for {paused:.0f}s (its Retry-After)")
        key = None
        if self.cfg.api_key_env:
            key = os.environ.get(self.cfg.api_key_env)
            if not key:
                return self._fallback(todo, f"environment variable {self.cfg.api_key_env} "
                                            "(summarizer.api_key_env) is not set")
            remember_secret(key)
        day = self.now.date().isoformat() if self.now else time.strftime("%Y-%m-%d", time.gmtime())
        budget = max(0, self.cfg.max_per_day - self.store.tldr_calls(day))
        if budget < len(todo):
            self._fallback(todo[budget:], f"the daily budget of {self.cfg.max_per_day} calls "
                                          "(summarizer.max_per_day) is spent")
            todo = todo[:budget]
            if not todo:
                return
        results, calls = self._call_all(todo, key)
        self.store.tldr_count_calls(day, calls)
        waits = [o.retry_after for o in results.values() if isinstance(o, _Failure) and o.retry_after]
        if waits:  # recorded: a later run (another process too) does not ask before then
            self.store.wait_set(self._wait_key, max(waits), "HTTP 429 (Retry-After)")
        failures: dict[str, list[str]] = defaultdict(list)
        remember = []
        for p in todo:
            outcome = results.get(p.key)
            if isinstance(outcome, str):
                self.memo[p.key] = outcome
                remember.append((p.key, outcome))
            else:  # not asked again in this run (its other channels): extractive
                self.memo[p.key] = extractive_tldr(p.abstract)
                reason = outcome.reason if outcome else f"no answer within the {self.cfg.timeout:g}s timeout"
                failures[reason].append(p.key)
                if outcome and outcome.answered:
                    remember.append((p.key, None))
        self.store.tldr_remember(remember, self.cfg.model or "", self.now)
        for reason, keys in failures.items():
            self._log_fallback(keys, reason)
        if remember:
            log.info("summarizer: %d TL;DRs from %s", sum(1 for _, t in remember if t), self.cfg.model)

    @property
    def _wait_key(self) -> str:
        return f"summarizer {self.cfg.base_url or ''}"

    def _call_all(self, papers: list[Paper], key: str | None) -> tuple[dict, int]:
        """Ask for every paper on up to WORKERS daemon threads until done or the deadline:
        ({key: TL;DR or _Failure}, calls made). One call goes first, alone: only once it is
        answered (not rate-limited) do the other workers start, so that a 429 with its
        Retry-After costs one call, not WORKERS."""
        deadline = self.deadline
        cond = threading.Condition()
        queue = list(papers)
        results: dict[str, object] = {}
        started = [0]
        headers = client_headers("watcher")
        if key:
            headers["Authorization"] = f"Bearer {key}"

        def worker() -> None:
            try:
                http = httpx.Client(headers=headers, follow_redirects=False, verify=tls_context())
            except Exception as e:  # noqa: BLE001 - never let a thread die silently
                with cond:
                    for p in queue:
                        results[p.key] = _Failure(f"cannot start the HTTP client ({type(e).__name__})")
                    queue.clear()
                    cond.notify_all()
                return
            with http:
                while True:
                    with cond:
                        left = deadline - time.monotonic()
                        if not queue or left <= 0:
                            return
                        paper = queue.pop(0)
                        started[0] += 1
                    try:
                        outcome: object = ask(http, self.cfg, paper, min(left, self.cfg.timeout))
                    except _Failure as f:
                        outcome = f
                    except Exception as e:  # noqa: BLE001 - a bug here must not hang the wait
                        outcome = _Failure(f"internal error ({type(e).__name__})")
                    with cond:
                        results[paper.key] = outcome
                        if isinstance(outcome, _Failure) and outcome.retry_after is not None:
                            # rate-limited: no further call this run; the rest are not asked
                            _PAUSED[self.cfg.base_url or ""] = time.monotonic() + outcome.retry_after
                            for p in queue:
                                results[p.key] = _Failure(f"not asked: the endpoint rate-limited us "
                                                         f"(HTTP 429; retry after {outcome.retry_after:g}s)")
                            queue.clear()
                        cond.notify_all()

        def start(n: int) -> None:
            for _ in range(n):
                threading.Thread(target=worker, name="watcher-summarizer", daemon=True).start()

        start(1)  # the first call alone
        fanned = min(WORKERS, len(papers)) <= 1
        with cond:
            while len(results) < len(papers):
                if not fanned and results:  # the first answer came: the others may start
                    fanned = True
                    if queue:
                        start(min(WORKERS, len(papers)) - 1)
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                cond.wait(left)
            queue.clear()  # the workers take nothing more; late answers are dropped
            return dict(results), started[0]

    def _fallback(self, papers: list[Paper], reason: str) -> None:
        for p in papers:
            self.memo[p.key] = extractive_tldr(p.abstract)
        self._log_fallback([p.key for p in papers], reason)

    def _log_fallback(self, keys: list[str], reason: str) -> None:
        names = [k if len(k) <= 40 else k[:39] + "…" for k in keys[:5]]
        shown = ", ".join(names) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
        log.warning("summarizer: %s for %d paper%s (%s); using the extractive TL;DR",
                    redact(reason), len(keys), "" if len(keys) == 1 else "s", shown)


__all__ = ["Summarizer", "ask", "clean_answer"]
