"""Charts drawn on the server as SVG (no JavaScript library): stacked bars per day and
horizontal bars per tool. Every label is escaped; the output is safe to embed in a page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from markupsafe import Markup

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")


def _fmt(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1_000:
        return f"{value / 1_000:.1f}k"
    if value and value < 1:
        return f"{value:.3f}"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def stacked_bars(
    title: str,
    days: Sequence[str],
    series: Mapping[str, Sequence[float]],
    unit: str = "",
    width: int = 640,
    height: int = 220,
) -> Markup:
    """Stacked bars: one bar per day, one colour per series (e.g. per provider)."""
    left, bottom, top = 48, 34, 26
    plot_w, plot_h = width - left - 10, height - bottom - top
    totals = [sum(values[i] for values in series.values()) for i in range(len(days))]
    peak = max(totals, default=0) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}">',
        f'<text x="4" y="16" class="chart-title">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}" '
        'stroke="#999"/>',
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end" class="chart-axis">'
        f"{escape(_fmt(peak))}{escape(unit)}</text>",
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end" class="chart-axis">0</text>',
    ]
    if not days:
        parts.append(
            f'<text x="{left + plot_w / 2}" y="{top + plot_h / 2}" text-anchor="middle" '
            'class="chart-axis">no data yet</text>'
        )
    slot = plot_w / max(len(days), 1)
    bar_w = max(2.0, slot * 0.7)
    for i, day in enumerate(days):
        x = left + i * slot + (slot - bar_w) / 2
        y = float(top + plot_h)
        for j, (name, values) in enumerate(series.items()):
            h = values[i] / peak * plot_h
            if h <= 0:
                continue
            y -= h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[j % len(PALETTE)]}"><title>{escape(day)} {escape(name)}: '
                f"{escape(_fmt(values[i]))}{escape(unit)}</title></rect>"
            )
        if len(days) <= 16 or i % max(1, len(days) // 8) == 0:
            parts.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle" '
                f'class="chart-axis">{escape(day[5:])}</text>'
            )
    for j, name in enumerate(series):
        lx = left + j * 130
        parts.append(
            f'<rect x="{lx}" y="{height - 12}" width="10" height="10" '
            f'fill="{PALETTE[j % len(PALETTE)]}"/>'
            f'<text x="{lx + 14}" y="{height - 3}" class="chart-axis">{escape(name[:18])}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every text above is escaped


def rate_bars(
    title: str, rows: Sequence[tuple[str, float, str]], width: int = 640, row_h: int = 22
) -> Markup:
    """Horizontal bars of a rate in [0, 1] per label (e.g. tool success), with a note each."""
    left, top = 150, 26
    height = top + max(len(rows), 1) * row_h + 8
    plot_w = width - left - 120
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}">',
        f'<text x="4" y="16" class="chart-title">{escape(title)}</text>',
    ]
    if not rows:
        parts.append(f'<text x="{left}" y="{top + 14}" class="chart-axis">no data yet</text>')
    for i, (label, rate, note) in enumerate(rows):
        y = top + i * row_h
        rate = min(max(rate, 0.0), 1.0)
        colour = "#59a14f" if rate >= 0.9 else "#edc948" if rate >= 0.6 else "#e15759"
        parts.append(
            f'<text x="{left - 6}" y="{y + 14}" text-anchor="end" class="chart-axis">'
            f"{escape(label[:24])}</text>"
            f'<rect x="{left}" y="{y + 3}" width="{plot_w}" height="{row_h - 8}" fill="#eee"/>'
            f'<rect x="{left}" y="{y + 3}" width="{rate * plot_w:.1f}" height="{row_h - 8}" '
            f'fill="{colour}"/>'
            f'<text x="{left + plot_w + 6}" y="{y + 14}" class="chart-axis">'
            f"{rate * 100:.0f}% {escape(note)}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every text above is escaped


def usage_charts(rows: Sequence[Mapping[str, object]]) -> tuple[Markup, Markup]:
    """Tokens and cost per day and provider, from `dashboard.usage_by_day` rows."""
    days = sorted({str(r["day"]) for r in rows})
    providers = sorted({str(r["provider"]) for r in rows})
    index = {day: i for i, day in enumerate(days)}
    tokens = {p: [0.0] * len(days) for p in providers}
    cost = {p: [0.0] * len(days) for p in providers}
    for r in rows:
        i, p = index[str(r["day"])], str(r["provider"])
        tokens[p][i] += float(str(r["input_tokens"] or 0)) + float(str(r["output_tokens"] or 0))
        cost[p][i] += float(str(r["cost_usd"] or 0))
    return (
        stacked_bars("Tokens per day (by provider)", days, tokens),
        stacked_bars("Cost per day, USD (by provider)", days, cost),
    )


def spending_chart(rows: Sequence[Mapping[str, object]]) -> Markup:
    """Cost per day and kind of call (replies, planning, summaries, introspection, analysis...),
    from `dashboard.spending_by_kind` rows."""
    days = sorted({str(r["day"]) for r in rows})
    kinds = list(dict.fromkeys(str(r["kind"]) for r in rows))
    index = {day: i for i, day in enumerate(days)}
    cost = {kind: [0.0] * len(days) for kind in kinds}
    for r in rows:
        cost[str(r["kind"])][index[str(r["day"])]] += float(str(r["cost_usd"] or 0))
    return stacked_bars("Cost per day, USD (by kind of call)", days, cost)
