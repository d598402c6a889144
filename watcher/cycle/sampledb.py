"""The sample database of ``watcher once --sample``: where it is, the config that uses it,
and which config a reading command (``status``, ``explain``, ``rate``, ``serve``, ...) uses.

Light on purpose (the config and the store, nothing that fetches or sends): the reading
commands import it without loading the pipeline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import Config, SourceConfig
from ..store.connection import SAMPLE_SUFFIX


def sample_database(config: Config) -> Path:
    """Where ``watcher once --sample`` keeps its papers: beside the configured database."""
    db = config.settings.database
    return db.with_name(db.stem + SAMPLE_SUFFIX + db.suffix)


def sample_config(config: Config) -> Config:
    """``--sample``: the config with the shipped sample listings as its only source and a
    database of its own beside the configured one, so samples never mix with real history."""
    return replace(config, settings=replace(config.settings, database=sample_database(config)),
                   sources={"sample": SourceConfig(name="sample", type="sample")})


def is_sample(config: Config) -> bool:
    """Whether ``config`` is :func:`sample_config`'s: the sample is its only source, and its
    digests ran once, at the sample's day, on no schedule."""
    return bool(config.sources) and all(s.type == "sample" for s in config.sources.values())


def reading_config(config: Config, sample: bool = False) -> tuple[Config, str | None]:
    """The config whose database the reading commands (serve, status, explain, rate, ...) use,
    and a note saying so when it is not the configured one: the sample database when asked
    (``--sample``) or when only it exists (right after the quick start's ``once --sample``)."""
    db = sample_database(config)
    if sample or (not config.settings.database.exists() and db.exists()):
        return sample_config(config), f"the sample database {db} (from 'watcher once --sample')"
    return config, None
