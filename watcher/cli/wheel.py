"""The wheel of the running watcher, for ``watcher init --github`` / ``--gitlab``: the repository
it writes installs watcher from that file, so its first scheduled run needs no package index
that carries watcher (docs/github-actions.md) — only the one that carries watcher's dependencies.

A wheel is a zip file (PEP 427): the package's files, and a ``.dist-info`` folder with the
metadata pip reads (``METADATA``, ``entry_points.txt``, ``WHEEL``) and ``RECORD``, the hash of
every file. The package's files are the running ones, with the templates and the starter
config where a built wheel puts them; the metadata is the installed distribution's own. Every
entry carries the same fixed time, so the same watcher always writes the same bytes (a second
``init --force`` changes nothing in git).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import io
import re
import zipfile
from pathlib import Path

from .. import __version__
from ..errors import InputError
from ..present.render import shipped_templates_dir

HERE = Path(__file__).resolve().parent.parent
DIST_NAME = "watcher-papers"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry
WHEEL_FILE = "Wheel-Version: 1.0\nGenerator: watcher init\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def wheel_name(version: str = __version__) -> str:
    """The wheel's file name (the distribution's name normalized as PEP 427 wants it)."""
    return f"{re.sub(r'[-_.]+', '_', DIST_NAME).lower()}-{version}-py3-none-any.whl"


def shipped_config_path() -> Path:
    """The example config: ``watcher/data/config.toml`` in a wheel, ``config.toml`` in a checkout."""
    installed = HERE / "data" / "config.toml"
    return installed if installed.is_file() else HERE.parent / "config.toml"


def _package_files() -> dict[str, Path]:
    """Archive name -> file of the running package, as a built wheel lays it out."""
    files = {f"watcher/{p.relative_to(HERE).as_posix()}": p for p in sorted(HERE.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".tmp")}
    templates = shipped_templates_dir()
    for p in sorted(templates.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            files.setdefault(f"watcher/templates/{p.relative_to(templates).as_posix()}", p)
    files.setdefault("watcher/data/config.toml", shipped_config_path())
    return files


def _metadata() -> tuple[str, str]:
    """(METADATA, entry_points.txt) of the installed distribution."""
    try:
        dist = importlib.metadata.distribution(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"cannot write watcher's wheel: the package {DIST_NAME} is not installed "
                         "(run watcher installed with pip: pip install . in a clone)") from None
    metadata, entry_points = dist.read_text("METADATA"), dist.read_text("entry_points.txt")
    if not metadata or dist.version != __version__:
        raise InputError(f"cannot write watcher's wheel: the installed metadata of {DIST_NAME} "
                         f"({dist.version}) is not that of the running watcher ({__version__}); "
                         "reinstall it (pip install . in the clone)")
    return metadata, entry_points or "[console_scripts]\nwatcher = watcher.cli:main\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel() -> bytes:
    """The bytes of a wheel of the running watcher (same watcher, same bytes: a watcher
    installed from this wheel writes it again byte for byte)."""
    metadata, entry_points = _metadata()
    info = f"{wheel_name()[:-len('-py3-none-any.whl')]}.dist-info"
    entries = [(name, path.read_bytes()) for name, path in sorted(_package_files().items())]
    entries += [(f"{info}/METADATA", metadata.encode()), (f"{info}/WHEEL", WHEEL_FILE.encode()),
                (f"{info}/entry_points.txt", entry_points.encode())]
    record = "".join(_record_line(n, d) + "\n" for n, d in entries) + f"{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            entry = zipfile.ZipInfo(name, FIXED_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            zf.writestr(entry, data)
    return out.getvalue()
