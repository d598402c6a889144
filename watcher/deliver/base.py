"""The interface of a channel."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..models import Digest


@dataclass
class DeliveryContext:
    """What a channel may use: the config folder (relative paths), the stdout stream, the
    user agent for HTTP channels, and the digest's own formats."""

    base_dir: Path = Path(".")
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    user_agent: str = "watcher"
    formats: tuple[str, ...] = ("text",)


class Channel:
    """Base class: subclasses say which formats they need and implement :meth:`send`."""

    def __init__(self, cfg, ctx: DeliveryContext):
        self.cfg = cfg
        self.ctx = ctx

    def formats(self) -> tuple[str, ...]:
        """The formats this channel sends (default: the digest's formats)."""
        return self.ctx.formats

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Deliver; return only once accepted; raise DeliveryError otherwise."""
        raise NotImplementedError
