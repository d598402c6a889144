"""``watcher convert``: read listings in any supported format and print them as one listing."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from typing import BinaryIO

from .. import formats
from ..errors import InputError
from ..models import Digest, Match, Paper
from ..util.progress import ProgressFactory, start
from ..present.render import render
from ..identity import merge_batch as dedupe


def read_input(spec: str, stdin: BinaryIO | None, today: date | None,
               kind: str | None = None) -> formats.Listing:
    """One input: ``-`` (stdin), an http(s)/file URL, or a path; read as format ``kind`` when
    given (a name of :data:`watcher.formats.READERS`), else as detected."""
    if spec == "-":
        data, origin = (stdin.read(formats.MAX_UNPACKED + 1) if stdin else b""), "<stdin>"
    elif spec.startswith(("http://", "https://", "file://")):
        from ..util.http import fetch_url

        data, origin = fetch_url(spec), spec
    else:
        try:
            with open(spec, "rb") as f:
                data = f.read(formats.MAX_UNPACKED + 1)
        except FileNotFoundError:
            raise InputError(f"{spec}: no such file") from None
        except IsADirectoryError:
            raise InputError(f"{spec}: is a folder, not a listing") from None
        except OSError as e:
            raise InputError(f"{spec}: cannot read: {e.strerror}") from e
        origin = spec
    if len(data) > formats.MAX_UNPACKED:
        raise InputError(f"{origin}: larger than the limit of {formats.MAX_UNPACKED:,} bytes")
    if kind is not None:
        data = formats.gunzip(data, origin)
    return formats.read(data, origin, today=today, format=kind)


def convert_inputs(inputs, *, config=None, profile=None, limit=None, fmt="text", title=None,
                   day: date | None = None, stdin=None, now: datetime | None = None,
                   progress: ProgressFactory = start, kind: str | None = None) -> str:
    """Parse every input, optionally keep only a profile's matches, render as ``fmt``.
    Reading shows ``progress`` in inputs (a bar on a terminal's stderr; never on stdout)."""
    if profile and profile not in config.profiles:  # said before any input is read
        from ..config import unknown_name
        from ..errors import ConfigError

        raise ConfigError(unknown_name("profile", profile, config.profiles), path=str(config.path))
    listings, days = [], []
    with progress("convert", total=len(inputs), unit="inputs") as shown:
        for spec in inputs:
            listings.append(read_input(spec, stdin, day, kind))
            days.append(formats.file_dated(listings[-1], spec))
            shown.advance()
    papers = dedupe([p for listing in listings for p in listing.papers])
    first = listings[0]
    now = now or datetime.now(timezone.utc)
    header_title = title or first.title
    newest = max((p.day for p in first.papers if p.day), default=None)
    header_date = day or days[0] or newest or now.date()
    if profile:
        matches = _select(config, profile, papers, limit, now)
        header_title = title or config.profiles[profile].title
    else:
        matches = [Match(p, 0.0, [], "") for p in papers]
    if fmt == "json":
        return json.dumps([_json(m, bool(profile)) for m in matches], ensure_ascii=False, indent=2) + "\n"
    digest = Digest(name=profile or "convert", title=header_title or "Papers", date=header_date,
                    matches=matches)
    return render(digest, fmt, config.settings.templates_dir if config else None)


def _select(config, profile: str, papers: list[Paper], limit: int | None, now: datetime) -> list[Match]:
    from dataclasses import replace

    from ..matching.match import select
    from ..matching.compile import compile_profiles

    if limit:
        config = replace(config, profiles={**config.profiles,
                                           profile: replace(config.profiles[profile], max_papers=limit)})
    by_key = {p.key: p for p in papers}
    return select(papers, compile_profiles(config, [profile], lookup=by_key.get), now)


def _json(m: Match, scored: bool) -> dict:
    from ..present.tldr import tldr_of

    out = m.paper.to_json()
    out["tldr"] = tldr_of(m)
    if scored:
        out["score"] = round(m.score, 4)
        out["reasons"] = list(m.reasons)
    return out
