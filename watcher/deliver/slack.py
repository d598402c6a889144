"""The ``slack`` channel: the Block Kit digest posted to an incoming webhook.

The ``slack`` format renders the whole digest as one message ``{"text", "blocks"}``;
:func:`split_messages` cuts it to Slack's limits (docs/configuration.md): a section's text longer than 3,000
characters becomes several sections, a header is cut to 150, and the blocks go out in messages of
at most 50 blocks (and ``MAX_CHARS`` characters), as few as that allows and about equally full,
posted in order, each later part marked "continued".

A split digest's papers are recorded part by part. If part k fails after the retries of
:mod:`~watcher.deliver.httppost`, the papers of parts 1 … k-1 are recorded as delivered
(:class:`~watcher.deliver.base.PartialDelivery`: each paper's section carries its key as
``block_id``), and the next run posts the rest; only the papers listed there by title alone
(over ``max_papers``) come again.
"""

from __future__ import annotations

import json

from ..errors import DeliveryError, PartialDelivery
from ..models import Digest
from ..kinds import Kind, option, options
from .base import Channel, secret_env

MAX_BLOCKS = 50
MAX_SECTION = 3000
MAX_HEADER = 150
MAX_CHARS = 30000


def split_messages(payload: dict) -> list[dict]:
    """The messages to post for one rendered digest, each within Slack's limits."""
    if not isinstance(payload, dict) or not isinstance(payload.get("blocks"), list):
        raise ValueError('expected an object with a "blocks" list')
    blocks = [b for block in payload["blocks"] for b in _fit_block(block)]
    text = payload.get("text") or ""
    if len(blocks) <= MAX_BLOCKS and _size(blocks) <= MAX_CHARS:
        return [{"text": text, "blocks": blocks}]
    chunks = _pack(blocks, MAX_BLOCKS - 1, MAX_CHARS)  # one slot per message stays free for "continued"
    n = len(chunks)
    # as many messages, about equally full: not 29 papers and then 1
    even = _pack(blocks, -(-len(blocks) // n), min(MAX_CHARS, -(-_size(blocks) // n) + max(_size([b]) for b in blocks)))
    if len(even) == n:
        chunks = even
    messages = []
    for i, chunk in enumerate(chunks, 1):
        if i > 1:
            chunk = [{"type": "context", "elements": [{"type": "mrkdwn", "text": f"(continued, part {i} of {n})"}]}, *chunk]
        messages.append({"text": f"{text} (part {i} of {n})", "blocks": chunk})
    return messages


PAPER_BLOCK = "paper:"  # a paper's section: block_id "paper:KEY" (templates/digest.slack.json)


def posted_papers(digest: Digest, messages: list[dict]) -> list:
    """The papers of ``digest`` whose whole section is in ``messages`` (a paper's section
    carries ``block_id`` PAPER_BLOCK + its key, on its last piece when it was split); a paper
    listed only by title is not among them, and comes again."""
    keys = {b["block_id"][len(PAPER_BLOCK):] for m in messages for b in m["blocks"]
            if str(b.get("block_id", "")).startswith(PAPER_BLOCK)}
    return [m.paper for m in digest.matches if m.paper.key in keys]


def _pack(blocks: list[dict], most: int, chars: int) -> list[list[dict]]:
    """``blocks`` in order, in runs of at most ``most`` blocks and ``chars`` characters (a
    block larger alone gets a run of its own)."""
    chunks: list[list] = []
    chunk: list = []
    size = 0
    for block in blocks:
        one = _size([block])
        if chunk and (len(chunk) >= most or size + one > chars):
            chunks.append(chunk)
            chunk, size = [], 0
        chunk.append(block)
        size += one
    return [*chunks, chunk]


def _fit_block(block: dict) -> list[dict]:
    kind = block.get("type")
    text = block.get("text") if isinstance(block.get("text"), dict) else None
    if kind == "header" and text and len(text.get("text", "")) > MAX_HEADER:
        return [{**block, "text": {**text, "text": text["text"][:MAX_HEADER - 1] + "…"}}]
    if kind == "section" and text and len(text.get("text", "")) > MAX_SECTION:
        parts = _split_text(text["text"])
        plain = {k: v for k, v in block.items() if k != "block_id"}  # a block_id is unique: the last piece keeps it
        return [{**(block if k == len(parts) - 1 else plain), "text": {**text, "text": part}}
                for k, part in enumerate(parts)]
    return [block]


def _split_text(text: str) -> list[str]:
    """``text`` in pieces of at most MAX_SECTION characters, cut at line breaks where possible,
    else at a space outside any ``<link|label>``, else hard."""
    parts = []
    while len(text) > MAX_SECTION:
        window = text[:MAX_SECTION]
        cut = window.rfind("\n")
        if cut <= 0:
            cut = next((i for i in range(len(window) - 1, 0, -1)
                        if window[i] == " " and window.count("<", 0, i) == window.count(">", 0, i)), 0)
        if cut <= 0:
            cut = MAX_SECTION
        parts.append(text[:cut])
        text = text[cut:].lstrip("\n ")
    parts.append(text)
    return [p for p in parts if p]


def _size(blocks: list[dict]) -> int:
    return len(json.dumps(blocks, ensure_ascii=False))


class SlackChannel(Channel):
    """Posts the digest to a Slack incoming webhook (URL from ``webhook_url_env``)."""

    def formats(self) -> tuple[str, ...]:
        """Only the Block Kit format."""
        return ("slack",)

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Post every part in order; DeliveryError (with Slack's reason) when one is refused."""
        name = self.cfg.name
        url = secret_env(self.cfg, "webhook_url_env")
        try:
            messages = split_messages(json.loads(rendered["slack"]))
        except ValueError as e:
            raise DeliveryError(f"channel {name}: the slack template did not give Block Kit "
                                f"JSON ({e})") from e
        from . import httppost  # httpx at the first send, not when a config is read

        with httppost.client(self.cfg.timeout, self.ctx.user_agent) as http:
            for i, message in enumerate(messages, 1):
                who = f"channel {name}: Slack" + (f" (part {i} of {len(messages)})" if len(messages) > 1 else "")
                try:
                    httppost.post_json(http, url, message, who=who)
                except DeliveryError as e:
                    if i > 1:  # the papers of the parts posted are recorded: the next run posts the rest
                        done = "part 1 was" if i == 2 else f"parts 1-{i - 1} were"
                        shown = posted_papers(digest, messages[:i - 1])
                        if not shown:  # a template of one's own without the papers' block_id
                            raise DeliveryError(f"{e}; {done} posted and will be posted again with the whole "
                                                "digest on the next run (no section names its paper)") from e
                        raise PartialDelivery(f"{e}; {done} posted and recorded, the next run posts the rest",
                                              shown) from e
                    raise


@options
class SlackOptions:
    webhook_url_env: str = option(secret=True, help="the variable holding the incoming webhook's URL")


KIND = Kind("slack", SlackChannel, SlackOptions)
