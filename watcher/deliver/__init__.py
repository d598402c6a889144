"""Channels: one module per way of delivering a digest, each declaring its kind (a
:class:`~watcher.kinds.Kind`: its ``type``, keys, validation, what ``check`` adds); ``KINDS``
lists them, one line per kind, in the order error messages name them, and :mod:`watcher.config`
reads it. Every channel raises :class:`~watcher.errors.DeliveryError` on failure
and returns only once the other side accepted the digest."""

from __future__ import annotations

from ..kinds import ChannelConfig, Registry
from .base import Channel, DeliveryContext, redact, secret_env
from ..errors import ConfigError

# type -> the module declaring it (its KIND), imported when the kind is first asked for
KINDS = Registry(__name__, {
    "email": "email",
    "slack": "slack",
    "file": "file",
    "webhook": "webhook",
    "stdout": "stdout",
    "apprise": "apprise_channel",
    "feed": "feed",
})


def channel_config(name: str, type: str, *, timeout: float = 30.0, **keys) -> ChannelConfig:
    """A :class:`~watcher.kinds.ChannelConfig` from its keys, as a table would give them
    (``channel_config(name="me", type="email", host=…, sender=…, to=(…,))``: the kind's fields
    make its options, unchecked: :func:`watcher.config.load_config` checks a file's)."""
    options = KINDS[type].options
    assert options is not None  # every channel kind declares its options class
    return ChannelConfig(name=name, type=type, timeout=timeout, options=options(**keys))


def make_channel(cfg, ctx: DeliveryContext) -> Channel:
    """The Channel object for one ``[channel.NAME]`` config table."""
    if cfg.type not in KINDS:
        raise ConfigError(f"channel type {cfg.type!r} is not available in this version",
                          key=f"channel.{cfg.name}.type")
    return KINDS[cfg.type].cls(cfg, ctx)


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


__all__ = ["channel_config", "channel_for", "Channel", "DeliveryContext", "KINDS", "make_channel", "redact", "secret_env"]
