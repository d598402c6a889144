"""A bar chart as SVG text (pure): papers per day, drawn on the server, no script."""

from __future__ import annotations

from datetime import date
from html import escape

WIDTH, HEIGHT, PAD, LABEL = 600, 160, 24, 20
MAX_BAR = 24  # a bar's widest: a chart of one or two days draws bars, not walls


def bar_chart(days: list[date], series: list[tuple[str, dict[date, int], str]], title: str) -> str:
    """An SVG of one bar group per day in ``days``; ``series`` are (name, counts by day, CSS
    class). Scales to its container (viewBox), bars at most MAX_BAR wide and centred on their
    day, labels the first, middle and last day and the
    highest count, and names every bar in a <title> for screen readers and tooltips."""
    top = max([1] + [n for _, counts, _ in series for n in counts.values()])
    inner_w, inner_h = WIDTH - 2 * PAD, HEIGHT - PAD - LABEL
    slot = inner_w / max(1, len(days))
    bar = min(MAX_BAR, max(1.0, slot / max(1, len(series)) - 1))
    group = len(series) * (bar + 1) - 1  # a day's bars, centred in its slot
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'class="chart" role="img" aria-label="{escape(title)}">',
             f"<title>{escape(title)}</title>",
             f'<line x1="{PAD}" y1="{PAD + inner_h}" x2="{WIDTH - PAD}" y2="{PAD + inner_h}" class="axis"/>',
             f'<text x="{PAD - 4}" y="{PAD + 4}" class="label" text-anchor="end">{top}</text>']
    for i, day in enumerate(days):
        for j, (name, counts, css) in enumerate(series):
            n = counts.get(day, 0)
            h = inner_h * n / top
            x = PAD + i * slot + max(0.0, (slot - group) / 2) + j * (bar + 1)
            parts.append(f'<rect x="{x:.1f}" y="{PAD + inner_h - h:.1f}" width="{bar:.1f}" '
                         f'height="{h:.1f}" class="{css}"><title>{day.isoformat()}: {n} '
                         f"{escape(name)}</title></rect>")
    for i in sorted({0, len(days) // 2, len(days) - 1}) if days else []:
        anchor = "start" if i == 0 else "end" if i == len(days) - 1 else "middle"
        x = PAD + i * slot + (0 if anchor == "start" else slot if anchor == "end" else slot / 2)
        parts.append(f'<text x="{x:.1f}" y="{HEIGHT - 2}" class="label" '
                     f'text-anchor="{anchor}">{days[i].isoformat()}</text>')
    parts.append("</svg>")
    return "".join(parts)
