"""The forms a secret takes in text that others echo back (SPEC §6): the value itself,
URL-encoded (a webhook answering ``Cannot POST /hook?token=…``), and base64 at each of its
three alignments, standard and URL-safe (an SMTP server echoing ``AUTH PLAIN``, whose base64
holds the password after the user name). Masking every form keeps a secret out of logs, the
database and ``/status`` whatever the other side does with it."""

from __future__ import annotations

import base64
from urllib.parse import quote, quote_plus

MIN_FORM = 6  # shorter fragments would mask ordinary text


def forms(secret: str) -> set[str]:
    """Every form of ``secret`` to mask (values under 4 characters: none)."""
    if not secret or len(secret) < 4:
        return set()
    out = {secret, quote(secret, safe=""), quote_plus(secret), quote(secret)}
    raw = secret.encode()
    for k in range(3):  # the secret after k bytes of something else, mod 3
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * k + raw).decode()
            start, end = -(-8 * k // 6), 8 * (k + len(raw)) // 6  # characters only the secret decides
            if end - start >= MIN_FORM:
                out.add(text[start:end])
    return {f for f in out if len(f) >= 4}


def expand(secrets) -> list[str]:
    """The forms of all ``secrets``, longest first (a longer one is masked before a part of it)."""
    return sorted({f for s in secrets for f in forms(s)}, key=len, reverse=True)


def mask(text: str, masked: list[str]) -> str:
    """``text`` with each of ``masked`` (from :func:`expand`) replaced by ``***``."""
    for form in masked:
        if form in text:
            text = text.replace(form, "***")
    return text


# The secrets read while running (channel passwords and URLs, the summarizer's key, a source's
# url_env), for :func:`redact`: errors stored for ``watcher status`` and the HTTP libraries' logs.
_SECRETS: set[str] = set()
_FORMS: tuple[int, list[str]] = (0, [])  # the forms of _SECRETS, made again when it grows


def remember(value: str) -> None:
    """Mask ``value`` (in all its forms) from now on."""
    if value and len(value) >= 4:
        _SECRETS.add(value)


def any_secret() -> bool:
    """True once a secret was remembered."""
    return bool(_SECRETS)


def redact(text: str) -> str:
    """``text`` with every remembered secret replaced by ``***``, in every form of :func:`forms`."""
    global _FORMS
    if _FORMS[0] != len(_SECRETS):
        _FORMS = (len(_SECRETS), expand(_SECRETS))
    return mask(text, _FORMS[1])
