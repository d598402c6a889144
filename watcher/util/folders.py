"""Creating the folder a file of watcher's goes in (the database, its lock), with a one-line
error that says which part of the path is in the way."""

from __future__ import annotations

from pathlib import Path

from ..errors import StoreError


def make_folder(folder: Path, for_file: Path) -> None:
    """Create ``folder`` and its parents for ``for_file``; StoreError naming the cause (a file
    where a folder should be, no permission) when it cannot be made."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        nearest = folder
        while not nearest.exists() and nearest != nearest.parent:
            nearest = nearest.parent
        cause = (f"{nearest} is a file, not a folder" if nearest.exists() and not nearest.is_dir()
                 else (e.strerror or str(e)).lower())
        raise StoreError(f"{for_file}: cannot create its folder {folder}: {cause}") from e
