"""The ``stdout`` channel: prints the digest (text unless the digest asks otherwise)."""

from __future__ import annotations

from ..models import Digest
from .base import Channel


class StdoutChannel(Channel):
    """Prints each rendered format, separated by a blank line."""

    def formats(self) -> tuple[str, ...]:
        """Text, unless the digest's formats leave it out."""
        return ("text",) if "text" in self.ctx.formats else self.ctx.formats[:1]

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Write to the context's stdout stream."""
        for body in rendered.values():
            self.ctx.stdout.write(body + "\n")
        self.ctx.stdout.flush()
