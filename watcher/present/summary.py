"""What ``watcher once`` tells a person at a terminal (a cron job, whose output is mailed or
logged, gets none of it): one line per digest, and for the sample a skimmable view — each
paper's title and TL;DR — instead of the whole digest, which is in its file anyway; piped or
redirected, the sample prints a brief (:func:`brief`: a line per paper and where the whole
digest is).

Pure: from the cycle's report to text; the command decides when to print it.
"""

from __future__ import annotations

from .counts import NOTHING_MATCHED, counts_line
from ..models import Digest
from ..util.text import plural
from .tldr import tldr_of


def digest_lines(report, digests: list[str]) -> list[str]:
    """One line per digest of ``digests`` from a cycle's report (``CycleReport``): what went
    out through which channels, else why nothing did, else what failed."""
    if not digests:
        return ["no digest is due"]
    lines = []
    for name in digests:
        channels = [c for c in report.channels if c.digest == name]
        sent = [c for c in channels if c.sent]
        failed = [c.channel for c in channels if c.error]
        parts = []
        if name in report.digests:
            parts.append(f"failed: {report.digests[name]}")
        if sent:
            if len({c.papers for c in sent}) == 1:
                parts.append(f"delivered {plural(sent[0].papers, 'paper')} to "
                             f"{', '.join(c.channel for c in sent)}")
            else:
                parts.append("delivered " + ", ".join(f"{plural(c.papers, 'paper')} to {c.channel}"
                                                     for c in sent))
        if sent:  # a channel that got nothing while others got papers says why, not nothing
            parts += [f"nothing to {c.channel} ({c.empty})" for c in channels
                      if not c.sent and not c.error and c.empty]
        if failed:
            parts.append(f"{', '.join(failed)} failed (see above)")
        if not parts:
            reasons = sorted({c.empty for c in channels if c.empty})
            parts.append(f"no new papers ({'; '.join(reasons)})" if reasons else "nothing to do")
        if name in report.degraded:
            parts.append(f"without {report.degraded[name]}")
        counts: list = next((c.profiles for c in channels if c.profiles), [])
        matched_none = any(c.empty == NOTHING_MATCHED for c in channels)  # papers came; no profile took one
        if (len(counts) > 1 and any(c.papers for c in counts)) or matched_none:
            parts.append(f"per profile: {counts_line(counts, hint=True)}")
        lines.append(f"digest {name}: {'; '.join(parts)}")
    return lines


def skim(digest: Digest, files: list, width: int = 80) -> str:
    """A digest for a terminal ``width`` columns wide: its header, then each paper's title and
    TL;DR (wrapped at spaces, the next lines indented as the first), then where the whole
    digest was written."""
    from textwrap import fill

    def wrapped(text: str, first: str) -> str:
        return fill(text, max(width, 40), initial_indent=first, subsequent_indent="    ",
                    break_long_words=False, break_on_hyphens=False)

    per = f" — {counts_line(digest.per_profile, hint=True)}" if digest.per_profile else ""
    out = [f"{digest.title} - {digest.date}: {plural(len(digest.matches), 'paper')}{per}", ""]
    for i, m in enumerate(digest.matches, 1):
        out.append(wrapped(m.paper.title, f"{i:>2}. "))
        tldr = tldr_of(m)
        if tldr:
            out.append(wrapped(tldr, "    "))
    if files:
        out += ["", "the whole digest: " + ", ".join(str(f) for f in files)]
    return "\n".join(out)


def brief(digest: Digest, files: list) -> str:
    """A digest for a pipe or a file, short: its header, one line per paper (rank and title),
    and where the whole digest was written (``watcher once --sample | head`` shows what came,
    not 48 KB of abstracts)."""
    per = f" — {counts_line(digest.per_profile, hint=True)}" if digest.per_profile else ""
    out = [f"{digest.title} - {digest.date}: {plural(len(digest.matches), 'paper')}{per}"]
    out += [f"{i:>2}. {' '.join(m.paper.title.split())}" for i, m in enumerate(digest.matches, 1)]
    if files:
        out.append("the whole digest: " + ", ".join(str(f) for f in files))
    return "\n".join(out)
