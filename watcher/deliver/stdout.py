"""The ``stdout`` channel: prints the digest in each of the digest's formats."""

from __future__ import annotations

from ..models import Digest
from ..kinds import Kind, options
from .base import Channel


class StdoutChannel(Channel):
    """Prints each rendered format. One format is printed as it is (a text digest on stdout
    reads back); several are each preceded by a ``==> digest NAME, format FMT <==`` line."""

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Write to the context's stdout stream."""
        out = self.ctx.stdout
        for n, (fmt, body) in enumerate(rendered.items()):
            if len(rendered) > 1:
                out.write(("\n" if n else "") + f"==> digest {digest.name}, format {fmt} <==\n")
            out.write(body + "\n")
        out.flush()


@options
class StdoutOptions:
    writes_formats = True  # it writes the digest's own formats


KIND = Kind("stdout", StdoutChannel, StdoutOptions)
