"""The web inbox (docs/web.md): ``watcher serve``.

One Starlette app (:func:`~watcher.web.app.create_app`) over the same store and the same
matcher code as the daemon. Each area of pages is a module with a ``routes`` list (and
optionally ``PUBLIC``, path prefixes that need no login); the app factory lists the modules.
Shared by every area: :mod:`.pages` (templates, the store of a request, links),
:mod:`.auth` (login, the session, CSRF tokens).
"""

from .app import create_app

__all__ = ["create_app"]
