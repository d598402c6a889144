"""Pure: whether a host or a URL names this machine only (the web's listen address, the links'
base URL). Imports nothing of watcher's, so the config and the links both read it."""

from __future__ import annotations


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and addresses in 127.0.0.0/8 or ``::1``."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` names this machine only (``http://127.0.0.1:8080``)."""
    from urllib.parse import urlsplit

    return is_loopback((urlsplit(url).hostname or "").strip("[]"))
