"""The HTML e-mail opened in headless Chromium at desktop and phone width.

The screenshots land in ``$WATCHER_SCREENSHOT_DIR`` (default: the test's tmp folder) so a person
can look at them; the test checks that Chromium rendered a non-blank page of the right width.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from deliverkit import injection_digest, sample_digest

from watcher.render import render

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def screenshot(html: Path, png: Path, width: int, height: int, profile: Path) -> None:
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
                    f"--screenshot={png}", f"--window-size={width},{height}", html.as_uri()],
                   check=True, capture_output=True, timeout=60)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width,height", [(1200, 1600), (390, 2400)], ids=["desktop", "phone"])
def test_html_digest_in_chromium(tmp_path, width, height):
    out_dir = Path(os.environ.get("WATCHER_SCREENSHOT_DIR") or tmp_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    digest = sample_digest(4, updated=1)
    digest.matches.insert(1, injection_digest().matches[0])
    html = tmp_path / "digest.html"
    html.write_text(render(digest, "html", full_limit=4, list_limit=None), encoding="utf-8")
    png = out_dir / f"digest-{width}.png"
    screenshot(html, png, width, height, tmp_path / "profile")
    assert png_size(png) == (width, height)
    assert png.stat().st_size > 20_000  # a blank page compresses to a few KB
