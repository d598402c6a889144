"""The forms a secret takes in text that others echo back (docs/security-limits.md): the value
itself and trimmed of white space, each spelling a message can give it (Python's ``repr`` of
it as text or bytes, as in httpx's ``Illegal header value b'KEY\\r'``; JSON-escaped; HTML-escaped;
URL-encoded, as a webhook answering ``Cannot POST /hook?token=…``), and base64 at each of its
three alignments, standard and URL-safe (an SMTP server echoing ``AUTH PLAIN``, whose base64
holds the password after the user name). Masking every form keeps a secret out of logs, the
database and ``/status`` whatever the other side does with it."""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

MIN_FORM = 6  # shorter fragments would mask ordinary text


def _lower_escapes(text: str) -> str:
    """``text`` with its URL escapes in lower case (``%2f``: some servers echo them so)."""
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


def spellings(secret: str) -> set[str]:
    """The ways a message may spell ``secret`` (each escaping is of the whole value): itself;
    ``repr``-escaped as text and as bytes, in either quoting (``KEY\\r``, ``\\xc3\\xa9``,
    ``\\'``); JSON-escaped, ASCII or not, with ``/`` as ``\\/`` or not; HTML-escaped
    (Python's and Jinja's entities); URL-encoded, with ``%20`` or ``+``, escapes in upper or
    lower case."""
    quoted = secret + '"'  # holding both quotes, its repr escapes a ' inside
    out = {secret, repr(secret)[1:-1], repr(quoted)[1:-2],
           repr(secret.encode())[2:-1], repr(quoted.encode())[2:-2],
           *(escaped.replace("/", slash) for escaped in (json.dumps(secret)[1:-1],
                                                         json.dumps(secret, ensure_ascii=False)[1:-1])
             for slash in ("/", "\\/"))}
    out |= {html.escape(secret), html.escape(secret, quote=False),
            html.escape(secret).replace("&#x27;", "&#39;").replace("&quot;", "&#34;")}
    urls = {quote(secret, safe=""), quote_plus(secret), quote(secret), quote_plus(secret, safe="/")}
    return out | urls | {_lower_escapes(u) for u in urls}


def forms(secret: str) -> set[str]:
    """Every form of ``secret`` to mask (values under 4 characters: none): its spellings
    (:func:`spellings`), those of it trimmed of white space (a key read from a file with
    Windows line endings, echoed without its ``\\r``), and its base64."""
    if not secret or len(secret) < 4:
        return set()
    out = spellings(secret)
    if secret.strip() != secret and len(secret.strip()) >= 4:
        out |= spellings(secret.strip())
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
    """Mask ``value`` (in all its forms) from now on; of a URL, its parts that are secrets
    too (:func:`url_parts`): a server may redirect to another URL carrying the same token, or
    answer the token alone."""
    if value and len(value) >= 4:
        _SECRETS.add(value)
        _SECRETS.update(url_parts(value, every=True))


# query parameters whose value is a credential in URLs that are not secrets as a whole (a
# source's url, a redirect's Location): api_key, token, X-Amz-Signature, sig, ...
_SECRET_NAME = re.compile(r"(?:^|[_.-])(?:api_?key|key|token|secret|password|passwd|pwd|sig|signature"
                          r"|auth|session|sessionid|credentials?|code)$", re.I)
# a path segment that looks like a token (a webhook's /services/T0/B0/XXXXXXXX): long, letters
# and digits mixed
_TOKENISH = re.compile(r"(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9_\-.~+=%]{16,}")


# white space or commas before a URL's scheme: where a list of URLs (an apprise variable's) is
# cut; a comma inside a URL (``?cats=physics,hep``) cuts nothing
_BETWEEN_URLS = re.compile(r"[\s,]+(?=[A-Za-z][A-Za-z0-9+.-]*://)")


def url_list(value: str) -> list[str]:
    """The URLs of ``value``: one, or several separated by white space or commas."""
    return [u for u in _BETWEEN_URLS.split(value.strip()) if u]


def url_parts(url: str, every: bool = False) -> set[str]:
    """The secrets inside ``url`` (or in each URL of a list of them separated by white space
    or commas, as an apprise variable holds: :func:`url_list`): its user name and password,
    the values of its query parameters (only those named like a key or token unless
    ``every``: the whole URL is a secret) and, when ``every``, its token-like path segments."""
    if "://" not in url:
        return set()
    several = url_list(url) if every else [url.strip()]  # a URL not secret is one URL
    if len(several) > 1:
        return {part for one in several for part in url_parts(one, every)} | set(several)
    try:
        parts = urlsplit(url.strip())
        found = {parts.password or "", (parts.username or "") if parts.password else ""}
        found |= {unquote(v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                  if every or _SECRET_NAME.search(k)}
        if every:
            found |= {unquote(seg) for seg in parts.path.split("/") if _TOKENISH.fullmatch(seg)}
    except ValueError:
        return set()
    return {v for v in found if len(v) >= 6}


def remember_url(url: str) -> None:
    """Mask the credentials a URL carries (a source's ``api_key=``, a redirect's signature)."""
    _SECRETS.update(url_parts(url))


def any_secret() -> bool:
    """True once a secret was remembered."""
    return bool(_SECRETS)


def redact(text: str) -> str:
    """``text`` with every remembered secret replaced by ``***``, in every form of :func:`forms`."""
    global _FORMS
    if _FORMS[0] != len(_SECRETS):
        _FORMS = (len(_SECRETS), expand(_SECRETS))
    return mask(text, _FORMS[1])
