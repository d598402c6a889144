"""HTTP (interim: a plain fetch for convert; replaced by the shared polite client)."""

from __future__ import annotations

import httpx

from .errors import InputError


def fetch_url(url: str, timeout: float = 30.0) -> bytes:
    """GET ``url`` and return the body; InputError on failure."""
    if url.startswith("file://"):
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        try:
            with open(url2pathname(urlparse(url).path), "rb") as f:
                return f.read()
        except OSError as e:
            raise InputError(f"{url}: cannot read: {e.strerror}") from None
    try:
        r = httpx.get(url, timeout=timeout, follow_redirects=True, headers={"User-Agent": "watcher"})
        r.raise_for_status()
    except httpx.HTTPError as e:
        raise InputError(f"{url}: {e}") from None
    return r.content
