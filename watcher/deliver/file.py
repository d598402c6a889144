"""The ``file`` channel: each format written atomically to a path template such as
``digests/{digest}-{date}.{ext}``. A path that already exists (a second run on the same day) gets
``-2``, ``-3`` … before the extension, so no earlier digest is ever overwritten."""

from __future__ import annotations

import os
import string
import tempfile
from datetime import date
from pathlib import Path

from ..errors import DeliveryError
from ..models import Digest
from ..present.render import EXTENSIONS
from ..kinds import Kind, option, options
from .base import Channel, folder_problem, path_problems


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
        rel = cfg.options.path.format(digest=digest, date=day.isoformat(), ext=EXTENSIONS[fmt], format=fmt)
    except (KeyError, IndexError, ValueError) as e:
        raise DeliveryError(f"channel {cfg.name}: bad path template {cfg.options.path!r} "
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
            except OSError as e:  # "File exists" for a folder that is a file: say which
                why = folder_problem(path.parent) or e.strerror
                raise DeliveryError(f"channel {self.cfg.name}: cannot write {path}: {why}") from e
            self.written.append(path)


PATH_FIELDS = ("digest", "date", "ext", "format")


def fields(template: str) -> set[str]:
    """The {fields} a valid path template uses."""
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def _validate(r, where: str, v: dict) -> None:
    r.path_template(f"{where}.path", v["path"], PATH_FIELDS)


def _in_digest(r, ch, digest: str, formats: tuple[str, ...]) -> None:
    """One file per format: a path without {ext} would number them x, x-2."""
    if len(formats) > 1 and not {"ext", "format"} & fields(ch.options.path or ""):
        raise r.fail(f"channel.{ch.name}.path", f"has neither {{ext}} nor {{format}}, but digest {digest} "
                                                f"writes {len(formats)} formats ({', '.join(formats)}) "
                                                "through it: add .{ext}, as in digests/{digest}-{date}.{ext}")


def check_paths(config, where: str, ch) -> list[str]:
    """A file channel writes under its path's folder, made when missing: each digest's folder
    (today's, in each of the digest's formats) must pass :func:`folder_problem`, as the
    database's does. One line per folder."""
    from datetime import datetime

    today = datetime.now(config.settings.timezone).date()
    return path_problems(config, where, ch, lambda d: [
        folder_problem(file_path(ch, config.base_dir, d.name, today, fmt).parent) for fmt in d.formats])


@options
class FileOptions:
    path: str = option(help="a path template relative to the config's folder, with `{digest}`, "
                            "`{date}`, `{ext}`, `{format}`")
    writes_formats = True  # it writes the digest's own formats


KIND = Kind("file", FileChannel, FileOptions, _validate, in_digest=_in_digest, check=check_paths)
