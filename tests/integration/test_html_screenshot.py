"""The HTML e-mail opened in headless Chromium at desktop and phone width.

The screenshots land in ``$WATCHER_SCREENSHOT_DIR`` (default: the test's tmp folder) so a person
can look at them; the test checks that Chromium rendered a non-blank page of the right width.

Headless Chromium will not lay a page out narrower than about 485 px whatever ``--window-size``
says, so the phone-width checks put the e-mail in an iframe of the phone's width inside a wrapper
page, whose script writes the e-mail's layout width into the DOM for ``--dump-dom`` to return.
"""

from __future__ import annotations

import html as htmllib
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from dataclasses import replace

from deliverkit import injection_digest, sample_digest

from watcher.models import Match

from watcher.present.render import render

pytestmark = pytest.mark.slow  # drives Chromium: the full suite (CI) runs it, not the inner loop

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                           "--no-first-run", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                           f"--user-data-dir={profile}", *args],
                          check=True, capture_output=True, timeout=60)


def screenshot(html: Path, png: Path, width: int, height: int, profile: Path) -> None:
    chromium(profile, f"--screenshot={png}", f"--window-size={width},{height}", html.as_uri())


# The script of the wrapper page: once the iframe has loaded, the e-mail's scroll width and
# the widest element (tag and right edge), written into <pre id="m"> as "width tag right".
MEASURE = """
<script>
function measure() {
  var doc = document.getElementById("mail").contentDocument;
  var widest = null, right = 0;
  doc.querySelectorAll("body *").forEach(function (el) {
    var r = el.getBoundingClientRect().right;
    if (r > right) { right = r; widest = el; }
  });
  document.getElementById("m").textContent = "measured " + doc.documentElement.scrollWidth + " "
    + (widest ? widest.tagName : "-") + " " + Math.ceil(right);
}
</script>
"""


def phone_page(email_html: str, width: int) -> str:
    """A wrapper page showing ``email_html`` in an iframe ``width`` px wide (a phone's screen)."""
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8">{MEASURE}</head>'
            f'<body style="margin:0;background:#888;">'
            f'<iframe id="mail" onload="measure()" style="border:0;display:block;" width="{width}" '
            f'height="2400" srcdoc="{htmllib.escape(email_html, quote=True)}"></iframe>'
            f'<pre id="m">pending</pre></body></html>')


def layout_width(page: Path, profile: Path) -> tuple[int, str, int]:
    """(scroll width, widest element, its right edge) of the e-mail inside ``page``."""
    out = chromium(profile, "--virtual-time-budget=10000", "--dump-dom", page.as_uri()).stdout.decode()
    m = re.search(r"measured (\d+) (\S+) (-?\d+)", out)
    assert m, f"no measurement in the dumped DOM: {out[-500:]}"
    return int(m[1]), m[2], int(m[3])


LONG_TOKEN = r"$\href{https://github.com/AlexanderRubinstein/OCCAM}{here}$."  # arXiv 2504.07092


def long_token_digest():
    """The sample digest with arXiv-style unbroken tokens: a LaTeX link in an abstract (as in
    2504.07092), a bare long URL (in an abstract and in a TL;DR), a long hyphen-less title word
    and a long author name. They open the abstracts, which rich formats shorten."""
    digest = sample_digest(3, updated=1)
    m = digest.matches[0]
    p = replace(m.paper,
                abstract="Code is available " + LONG_TOKEN + " " + m.paper.abstract,
                title="Supercalifragilistic" * 4 + ": " + m.paper.title,
                authors=["A" * 60] + m.paper.authors)
    digest.matches[0] = Match(p, m.score, ["all: " + "x" * 80], m.profile)
    second = digest.matches[1]
    url = "https://example.org/" + "a/very/long/path" * 8
    digest.matches[1] = Match(replace(second.paper, abstract=url + " " + second.paper.abstract),
                              second.score, second.reasons, second.profile,
                              tldr="We release everything at " + url)
    return digest


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


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("width", [320, 375, 390])
@pytest.mark.parametrize("variant", ["full", "over-budget"])
def test_html_digest_fits_a_phone_with_long_unbroken_tokens(tmp_path, width, variant):
    """Nothing in the e-mail forces horizontal scrolling on a phone, not even a LaTeX link or a
    URL without a break opportunity (QA: arXiv 2504.07092 made the e-mail wider than a phone)."""
    out_dir = Path(os.environ.get("WATCHER_SCREENSHOT_DIR") or tmp_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    digest = long_token_digest()
    limits = dict(full_limit=1, list_limit=1) if variant == "over-budget" else {}
    email_html = render(digest, "html", **limits)
    # the excerpt reads the LaTeX link as its text (the URL, unbroken, was what made the e-mail
    # wider than a phone); the long URL, title word and author name are still there to fit
    assert ("Code is available here." in email_html and htmllib.escape(LONG_TOKEN, quote=False) not in email_html
            or variant == "over-budget")
    page = tmp_path / "phone.html"
    page.write_text(phone_page(email_html, width), encoding="utf-8")
    scroll, widest, right = layout_width(page, tmp_path / "profile")
    png = out_dir / f"digest-phone-{variant}-{width}.png"
    screenshot(page, png, 600, 2400, tmp_path / "profile")
    assert scroll <= width, f"the e-mail is {scroll} px wide at {width} px (widest: {widest}, right edge {right})"
    assert right <= width, (widest, right)
