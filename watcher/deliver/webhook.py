"""The ``webhook`` channel: the digest as one JSON POST, for anything else.

The body is an object::

    {"digest": "daily", "title": "LLM-RL", "date": "2025-04-12", "count": 12,
     "empty_reason": null, "papers": [...], "updated": [...]}

where ``papers`` is the ``json`` format (the paper objects of docs/formats.md with score, reasons and
profile) and ``updated`` lists revised papers delivered before. Any 2xx answer means accepted;
429/5xx are retried (see :mod:`~watcher.deliver.httppost`). The URL comes from ``url`` or from
the environment variable ``url_env`` names; either way it is not put into errors or logs.
"""

from __future__ import annotations

import json

from ..errors import DeliveryError
from ..models import Digest
from ..present.render import match_json
from ..kinds import Kind, option, options
from .base import Channel, secret_env


def payload(digest: Digest, papers_json: str) -> dict:
    """The webhook body for ``digest`` whose json format rendered as ``papers_json``."""
    try:
        papers = json.loads(papers_json)
    except ValueError as e:
        raise DeliveryError(f"the json template did not give JSON ({e})") from e
    return {"digest": digest.name, "title": digest.title, "date": digest.date.isoformat(),
            "count": len(digest.matches), "empty_reason": digest.empty_reason,
            "papers": papers, "updated": [match_json(m) for m in digest.updated]}


class WebhookChannel(Channel):
    """POSTs the digest as JSON; 2xx means accepted."""

    def formats(self) -> tuple[str, ...]:
        """Only the json format."""
        return ("json",)

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """POST the body; DeliveryError naming the channel (never the URL) otherwise."""
        url = self.cfg.options.url or secret_env(self.cfg, "url_env")
        if not url.startswith(("http://", "https://")):
            raise DeliveryError(f"channel {self.cfg.name}: the webhook URL is not http(s)")
        body = payload(digest, rendered["json"])
        from . import httppost  # httpx at the first send, not when a config is read

        with httppost.client(self.cfg.timeout, self.ctx.user_agent) as http:
            httppost.post_json(http, url, body, who=f"channel {self.cfg.name}: webhook")


def _validate(r, where: str, v: dict) -> None:
    r.env_name(f"{where}.url_env", v["url_env"])  # a name, before what it names
    if bool(v["url"]) == bool(v["url_env"]):
        raise r.fail(f"{where}.url", "give exactly one of url or url_env")
    if v["url"]:
        r.http_url(f"{where}.url", v["url"])


@options
class WebhookOptions:
    url: str | None = option(None, help="the http(s) URL the digest is posted to as JSON")
    url_env: str | None = option(None, secret=True, help="the variable holding that URL, instead of `url`")


KIND = Kind("webhook", WebhookChannel, WebhookOptions, _validate)
