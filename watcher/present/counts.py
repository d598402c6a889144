"""What a digest says about itself: each profile's count and the line that says it (e-mail
subjects, the terminal's summary, ``watcher status``), its title, and why it is empty (the
reasons :mod:`watcher.matching.assemble` decides). Pure and light, the models alone: status
and the channels use it without loading the matcher or the templates."""

from __future__ import annotations

from ..models import Match, ProfileCount

NOTHING_ANNOUNCED = "nothing new was announced"
NOTHING_MATCHED = "nothing matched your profiles"
SOURCES_FAILED = "every source failed; see watcher status"


def digest_title(cfg, profiles: dict, counts: list[ProfileCount] | None = None) -> str:
    """The header title: the digest's ``title``, else the titles of its profiles that brought
    papers (``counts``), joined; all its profiles' when none did (or before matching)."""
    if cfg.title:
        return cfg.title
    brought = [c.title for c in counts or () if c.papers]
    return ", ".join(brought or (profiles[name].title for name in cfg.profiles))


def profile_counts(cfg, profiles: dict, brought: dict[str, int]) -> list[ProfileCount]:
    """Each profile of digest ``cfg`` with how many papers it ``brought`` (profile -> count:
    of a digest's matches, or as an issue's messages recorded them), in the digest's order;
    then any other profile that brought papers (an issue recorded before the digest's profiles
    were changed), by its title while it is configured."""
    counts = [ProfileCount(name, profiles[name].title, brought.get(name, 0)) for name in cfg.profiles]
    return counts + [ProfileCount(name, profiles[name].title if name in profiles else name, n)
                     for name, n in brought.items() if name not in cfg.profiles and n]


def brought_by(matches: list[Match]) -> dict[str, int]:
    """Profile -> how many of ``matches`` it selected."""
    out: dict[str, int] = {}
    for m in matches:
        out[m.profile] = out.get(m.profile, 0) + 1
    return out


def preview_hint(name: str) -> str:
    """What a profile that brought no paper says: where to try its query on recent papers
    (the web inbox's profile page previews a draft query over the last 7 or 30 days)."""
    return f"preview its query: watcher serve, then /profiles/{name}"


def counts_line(counts: list[ProfileCount], hint: bool = False) -> str:
    """``LLM-RL 28, Robotics 2, Protein design none``; with ``hint``, each profile that
    brought none says how to preview its query (``; Protein design none, preview its query:
    watcher serve, then /profiles/protein``)."""
    if not hint:
        return ", ".join(f"{c.title} {c.papers or 'none'}" for c in counts)
    return "; ".join(f"{c.title} {c.papers}" if c.papers else f"{c.title} none, {preview_hint(c.name)}"
                     for c in counts)
