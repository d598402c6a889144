"""The ``file`` channel: each format written atomically to a path template such as
``digests/{digest}-{date}.{ext}``. A path that already exists (a second run on the same day) gets
``-2``, ``-3`` … before the extension, so no earlier digest is ever overwritten."""

from __future__ import annotations

import os
import tempfile
from datetime import date
from pathlib import Path

from ..errors import DeliveryError
from ..models import Digest
from ..render import EXTENSIONS
from .base import Channel


def atomic_write(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def free_path(path: Path) -> Path:
    """``path``, or the first ``stem-N.ext`` beside it that does not exist yet."""
    if not path.exists():
        return path
    name, dot, ext = path.name.partition(".")
    n = 2
    while (candidate := path.with_name(f"{name}-{n}{dot}{ext}")).exists():
        n += 1
    return candidate


def file_path(cfg, base_dir: Path, digest: str, day: date, fmt: str) -> Path:
    """Where the file channel ``cfg`` writes format ``fmt`` of ``digest``'s issue of ``day``
    (before :func:`free_path`); DeliveryError for a bad template."""
    try:
        rel = cfg.path.format(digest=digest, date=day.isoformat(), ext=EXTENSIONS[fmt], format=fmt)
    except (KeyError, IndexError, ValueError) as e:
        raise DeliveryError(f"channel {cfg.name}: bad path template {cfg.path!r} "
                            f"(known fields: digest, date, ext, format): {e}") from e
    return base_dir / rel


class FileChannel(Channel):
    """Writes each rendered format to its own file."""

    written: list[Path]

    def send(self, digest: Digest, rendered: dict[str, str]) -> None:
        """Write every format; DeliveryError when a file cannot be written."""
        self.written = []
        for fmt, body in rendered.items():
            path = free_path(file_path(self.cfg, self.ctx.base_dir, digest.name, digest.date, fmt))
            try:
                atomic_write(path, body)
            except OSError as e:
                raise DeliveryError(f"channel {self.cfg.name}: cannot write {path}: {e.strerror}") from e
            self.written.append(path)
