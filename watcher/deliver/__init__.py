"""Channels: one module per way of delivering a digest. ``CHANNELS`` maps the config's
``type`` to the class; every channel raises :class:`~watcher.errors.DeliveryError` on failure
and returns only once the other side accepted the digest."""

from __future__ import annotations

import importlib

from .base import Channel, DeliveryContext, redact, secret_env

CHANNELS: dict[str, str] = {
    "email": "watcher.deliver.email:EmailChannel",
    "file": "watcher.deliver.file:FileChannel",
    "slack": "watcher.deliver.slack:SlackChannel",
    "stdout": "watcher.deliver.stdout:StdoutChannel",
    "webhook": "watcher.deliver.webhook:WebhookChannel",
    "apprise": "watcher.deliver.apprise_channel:AppriseChannel",
    "feed": "watcher.deliver.feed:FeedChannel",
}


def make_channel(cfg, ctx: DeliveryContext) -> Channel:
    """The Channel object for one ``[channel.NAME]`` config table."""
    if cfg.type not in CHANNELS:
        from ..errors import ConfigError

        raise ConfigError(f"channel type {cfg.type!r} is not available in this version",
                          key=f"channel.{cfg.name}.type")
    module, _, cls = CHANNELS[cfg.type].partition(":")
    return getattr(importlib.import_module(module), cls)(cfg, ctx)


def channel_for(config, name: str, formats: tuple[str, ...], stdout=None, now=None) -> Channel:
    """The Channel ``[channel.NAME]`` of ``config``, for a digest of ``formats``: the context
    (config folder, user agent, templates, stdout) comes from the config; ``now`` is the
    cycle's clock."""
    ctx = DeliveryContext(base_dir=config.base_dir, user_agent=config.settings.user_agent,
                          formats=formats, templates_dir=config.settings.templates_dir,
                          web_url=config.web.base_url, now=now)
    if stdout is not None:
        ctx.stdout = stdout
    return make_channel(config.channels[name], ctx)


__all__ = ["channel_for", "CHANNELS", "Channel", "DeliveryContext", "make_channel", "redact", "secret_env"]
