"""``watcher test-deliver CHANNEL``: a small sample digest through one real channel."""

from __future__ import annotations

from datetime import datetime

from .config import Config
from .deliver import DeliveryContext, make_channel
from .models import Digest, Match
from .render import render


def sample_digest(now: datetime, tz) -> Digest:
    """Three papers of the shipped sample digest, marked as a test."""
    from . import formats
    from .sources.sample import SAMPLES_DIR

    listing = formats.read((SAMPLES_DIR / "llm-rl-2025-04-12.txt").read_bytes(), "sample")
    matches = [Match(p, 1.0, ["test delivery"], "test") for p in listing.papers[:3]]
    return Digest(name="test", title="watcher test digest", date=now.astimezone(tz).date(),
                  matches=matches)


def send_test_digest(config: Config, channel: str, now: datetime) -> None:
    """Render and send; raises DeliveryError when the channel refuses. Nothing is recorded."""
    cfg = config.channels[channel]
    formats = next((d.formats for d in config.digests.values() if channel in d.channels), ("text",))
    ch = make_channel(cfg, DeliveryContext(base_dir=config.base_dir, user_agent=config.settings.user_agent,
                                           formats=formats))
    digest = sample_digest(now, config.settings.timezone)
    ch.send(digest, {fmt: render(digest, fmt, config.settings.templates_dir) for fmt in ch.formats()})
