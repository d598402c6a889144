"""``watcher test-deliver CHANNEL``: a small sample digest through one real channel.

The digest holds the first three papers of the shipped sample digest, completed with their arXiv
ids, categories and links from the shipped sample corpus where it has them, so every format shows
what a real digest looks like. Nothing is recorded in the ledger.
"""

from __future__ import annotations

from datetime import datetime

from ..config import Config
from ..deliver import channel_for
from ..models import Digest, Match
from ..present.render import render
from ..identity import merge


def sample_digest(now: datetime, tz) -> Digest:
    """Three papers of the shipped samples, marked as a test, dated today."""
    from .. import formats
    from ..sources.sample import SAMPLES_DIR, read_samples

    listing = formats.read((SAMPLES_DIR / "llm-rl-2025-04-12.txt").read_bytes(), "sample")
    known = {p.fingerprint: p for p in read_samples() if p.arxiv_id}
    papers = [merge(known[p.fingerprint], p) if p.fingerprint in known else p
              for p in listing.papers[:3]]
    matches = [Match(p, 1.0, ["test delivery: a sample paper"], "test") for p in papers]
    return Digest(name="test", title="watcher test digest", date=now.astimezone(tz).date(),
                  matches=matches)


def send_test_digest(config: Config, channel: str, now: datetime) -> list:
    """Render and send; raises DeliveryError when the channel refuses. Nothing is recorded.
    Returns the files a file channel wrote (as a run reports them), else []."""
    formats = next((d.formats for d in config.digests.values() if channel in d.channels), ("text",))
    ch = channel_for(config, channel, formats)
    digest = sample_digest(now, config.settings.timezone)
    ch.send(digest, {fmt: render(digest, fmt, config.settings.templates_dir) for fmt in ch.formats()})
    return list(getattr(ch, "written", []))
