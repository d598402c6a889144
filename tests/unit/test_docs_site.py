"""The documentation as a whole: a short README that leads into docs/, every page in the site's
navigation, and every relative link (README, docs/, TESTING.md) pointing at a file and heading
that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from conftest import REPO

DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
LINKED = [REPO / "README.md", REPO / "TESTING.md", *PAGES]


def _nav_files(nav) -> list[str]:
    out = []
    for item in nav:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                out += _nav_files(value) if isinstance(value, list) else [value]
    return out


def _slug(heading: str) -> str:
    """GitHub's and mkdocs' anchor of a heading: lower case, punctuation dropped, spaces to -."""
    heading = re.sub(r"`", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    anchors, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            anchors.add(_slug(m.group(1)))
    return anchors


def test_the_readme_is_a_short_entry_point():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 220, f"README.md has {len(lines)} lines; the detail belongs in docs/"
    assert "## Recipe" in "\n".join(lines)


def test_every_docs_page_is_in_the_site_navigation_and_every_entry_exists():
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = _nav_files(config["nav"])
    assert sorted(listed) == sorted(p.name for p in PAGES)
    assert config["theme"]["name"] == "material"


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_reaches_a_file_and_heading(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(target)
        elif page.parent == DOCS and DOCS not in where.parents and where != DOCS:
            broken.append(f"{target} (outside docs/: the site built from docs/ has no such page)")
        elif anchor and where.suffix == ".md" and anchor not in _anchors(where):
            broken.append(target)
    assert not broken, f"{page.name}: {broken}"
