"""Hand-written SVG figures: no plotting library, no script, every label escaped.

Each function returns one `<svg>` element as text, sized by its viewBox so it scales with
the page. Coordinates are rounded to 0.1 px so the output is byte-stable. Axis ticks fall on
round steps (1, 2, 2.5 or 5 × a power of ten); legends sit below the plotting area, one entry a
line, each name cut with an ellipsis to what fits the width (the full name in its tooltip), so
no legend text is clipped. Where a figure has an interval it is drawn as a whisker.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

PALETTE = (
    "#1b6ca8",
    "#d1495b",
    "#2a9d8f",
    "#e9a23b",
    "#6a4c93",
    "#8c564b",
    "#3d8f3d",
    "#c05299",
    "#5c677d",
    "#b5838d",
)
MARKET_COLOUR = "#111111"
CHAR_WIDTH = 7.0  # an upper bound of the mean glyph width of the 11px legend font
LEGEND_LINE = 16


@dataclass(frozen=True)
class Frame:
    """A plotting area: data ranges mapped onto a pixel box inside a width × height viewBox."""

    width: int
    height: int
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    margin: tuple[int, int, int, int] = (28, 20, 48, 58)  # top, right, bottom, left

    def x(self, value: float) -> float:
        lo, hi = self.x_range
        left, right = self.margin[3], self.width - self.margin[1]
        return round(left + (value - lo) / ((hi - lo) or 1.0) * (right - left), 1)

    def y(self, value: float) -> float:
        lo, hi = self.y_range
        top, bottom = self.margin[0], self.height - self.margin[2]
        return round(bottom - (value - lo) / ((hi - lo) or 1.0) * (bottom - top), 1)


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def svg(frame: Frame, body: Sequence[str], label: str) -> str:
    return (
        f'<svg class="plot" viewBox="0 0 {frame.width} {frame.height}" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
        + "".join(body)
        + "</svg>"
    )


def text(
    x: float, y: float, content: str, anchor: str = "middle", cls: str = "tick", extra: str = ""
) -> str:
    return (
        f'<text x="{x}" y="{y}" text-anchor="{anchor}" '
        f'class="{cls}"{extra}>{escape(content)}</text>'
    )


def step_for(lo: float, hi: float, n: int = 5) -> float:
    """The round step (1, 2, 2.5 or 5 × 10^k) giving about `n` intervals over [lo, hi]."""
    raw = (hi - lo) / n if hi > lo else 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]: from the last step at or below lo to the
    first at or above hi."""
    step = step_for(lo, hi, n)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(k * step, 12) + 0.0 for k in range(first, max(last, first + 1) + 1)]


def axes(
    frame: Frame, x_ticks: Sequence[float], y_ticks: Sequence[float], x_label: str, y_label: str
) -> list[str]:
    """Axis lines, tick labels with light grid lines, and axis titles."""
    left, bottom = frame.x(frame.x_range[0]), frame.y(frame.y_range[0])
    parts = [
        f'<line class="axis" x1="{left}" y1="{bottom}" x2="{frame.x(frame.x_range[1])}" '
        f'y2="{bottom}"/>',
        f'<line class="axis" x1="{left}" y1="{bottom}" x2="{left}" '
        f'y2="{frame.y(frame.y_range[1])}"/>',
    ]
    for v in x_ticks:
        parts.append(text(frame.x(v), bottom + 16, f"{v:g}"))
    for v in y_ticks:
        parts.append(
            f'<line class="grid" x1="{left}" y1="{frame.y(v)}" '
            f'x2="{frame.x(frame.x_range[1])}" y2="{frame.y(v)}"/>'
        )
        parts.append(text(left - 6, frame.y(v) + 4, f"{v:g}", anchor="end"))
    parts.append(
        text((left + frame.x(frame.x_range[1])) / 2, bottom + 40, x_label, cls="axis-label")
    )
    mid = (bottom + frame.y(frame.y_range[1])) / 2
    parts.append(
        text(14, mid, y_label, cls="axis-label", extra=f' transform="rotate(-90 14 {mid})"')
    )
    return parts


def polyline(
    frame: Frame, points: Sequence[tuple[float, float]], stroke: str, dashed: bool = False
) -> list[str]:
    coords = " ".join(f"{frame.x(x)},{frame.y(y)}" for x, y in points)
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    marks = [
        f'<circle cx="{frame.x(x)}" cy="{frame.y(y)}" r="3.5" fill="{stroke}"/>' for x, y in points
    ]
    return [f'<polyline class="series" points="{coords}" stroke="{stroke}"{dash}/>', *marks]


def legend_height(n: int) -> int:
    return 12 + LEGEND_LINE * n


def fit(name: str, room: float) -> str:
    """`name` cut with an ellipsis so that it takes at most `room` px in the legend font."""
    most = max(int(room // CHAR_WIDTH), 1)
    return name if len(name) <= most else name[: most - 1] + "…"


def legend(frame: Frame, names: Sequence[tuple[str, str, bool]], top: float) -> list[str]:
    """Names with their colour swatch, one a line from `top` down, below the plotting area."""
    x = frame.margin[3]
    parts = []
    for i, (name, stroke, dashed) in enumerate(names):
        y = top + 8 + LEGEND_LINE * i
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        parts.append(
            f'<line x1="{x}" y1="{y}" x2="{x + 22}" y2="{y}" stroke="{stroke}" '
            f'stroke-width="2.5"{dash}/>'
        )
        shown = fit(name, frame.width - 8 - (x + 28))
        parts.append(
            f'<text x="{x + 28}" y="{y + 4}" text-anchor="start" class="legend">{escape(shown)}'
            f"<title>{escape(name)}</title></text>"
        )
    return parts


def whiskers(
    frame: Frame, intervals: Sequence[tuple[float, float, float]], stroke: str, shift: float = 0.0
) -> list[str]:
    """A vertical 95% interval bar with end caps at each x: (x, low, high), `shift` px aside
    (so that the whiskers of several series at one x do not hide one another)."""
    parts = []
    for x, low, high in intervals:
        px, y0, y1 = round(frame.x(x) + shift, 1), frame.y(low), frame.y(high)
        left, right = round(px - 3, 1), round(px + 3, 1)
        parts += [
            f'<line class="whisker" x1="{px}" y1="{y0}" x2="{px}" y2="{y1}" stroke="{stroke}"/>',
            f'<line class="whisker" x1="{left}" y1="{y0}" x2="{right}" y2="{y0}" '
            f'stroke="{stroke}"/>',
            f'<line class="whisker" x1="{left}" y1="{y1}" x2="{right}" y2="{y1}" '
            f'stroke="{stroke}"/>',
        ]
    return parts


def fraction_chart(
    curves: dict[str, Sequence[tuple[float, float]]],
    market: Sequence[tuple[float, float]],
    intervals: Mapping[str, Sequence[tuple[float, float, float]]] | None = None,
) -> str:
    """Brier against lifetime fraction: one line per forecaster (with its 95% interval whiskers
    where `intervals` has them: name → (fraction, low, high)), the market dashed in black."""
    intervals = intervals or {}
    points = [p for c in curves.values() for p in c] + list(market)
    highs = [h for series in intervals.values() for _, _, h in series]
    xs, ys = [x for x, _ in points], [y for _, y in points] + highs
    keyed = [(name, colour(i), False) for i, name in enumerate(curves)]
    keyed += [("market price at t0", MARKET_COLOUR, True)] if market else []
    y_ticks = ticks(0.0, max(max(ys, default=0.25), 0.01))
    plot_height = 340
    lo, hi = min(xs, default=0.0), max(xs, default=1.0)
    pad = 0.06 * (
        (hi - lo) or 1.0
    )  # the first and last cutoffs (and their whiskers) clear of the y-axis labels
    frame = Frame(
        760,
        plot_height + legend_height(len(keyed)),
        (lo - pad, hi + pad),
        (0.0, y_ticks[-1]),
        margin=(28, 24, 48 + legend_height(len(keyed)), 58),
    )
    body = axes(
        frame, sorted(set(xs)), y_ticks, "lifetime fraction at t0", "mean Brier (lower is better)"
    )
    for i, ((name, stroke, _), series) in enumerate(zip(keyed, curves.values(), strict=False)):
        shift = 5.0 * (i - (len(curves) - 1) / 2)
        body += whiskers(frame, intervals.get(name, ()), stroke, shift) + polyline(
            frame, series, stroke
        )
    if market:
        body += polyline(frame, market, MARKET_COLOUR, dashed=True)
    return svg(frame, body + legend(frame, keyed, plot_height), "Brier versus lifetime fraction")


def reliability_diagram(name: str, bins: Sequence, index: int) -> str:
    """Observed frequency against mean forecast per bin (area ∝ count), with the diagonal."""
    frame = Frame(300, 300, (0.0, 1.0), (0.0, 1.0), margin=(28, 12, 44, 48))
    body = axes(frame, ticks(0, 1), ticks(0, 1), "mean forecast", "observed frequency")
    body.append(
        f'<line class="diagonal" x1="{frame.x(0)}" y1="{frame.y(0)}" x2="{frame.x(1)}" '
        f'y2="{frame.y(1)}"/>'
    )
    filled = [b for b in bins if b.n]
    total = sum(b.n for b in filled) or 1
    path = [(b.mean_probability, b.observed_frequency) for b in filled]
    body += polyline(frame, path, colour(index))[:1]
    body += whiskers(
        frame,
        [(b.mean_probability, *wilson(b.observed_frequency, b.n)) for b in filled],
        colour(index),
    )
    body += [
        f'<circle cx="{frame.x(b.mean_probability)}" cy="{frame.y(b.observed_frequency)}" '
        f'r="{round(3 + 12 * (b.n / total) ** 0.5, 1)}" fill="{colour(index)}" fill-opacity="0.55">'
        f"<title>{escape(f'{b.lower:g}–{b.upper:g}: n={b.n}')}</title></circle>"
        for b in filled
    ]
    body.append(text(frame.width / 2, 16, name, cls="plot-title"))
    return svg(frame, body, f"reliability diagram of {name}")


def wilson(frequency: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95% Wilson score interval of a frequency observed on n rows."""
    centre = (frequency + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(frequency * (1 - frequency) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def net_bars(nets: Sequence, name: str, baseline: str) -> str:
    """Per topic, net recovered − regressed markets as a bar left (net loss) or
    right (net gain) of zero."""
    height = 60 + 24 * max(len(nets), 1)
    extent = max([abs(n.net) for n in nets] + [1])
    frame = Frame(
        640,
        height,
        (-extent * 1.15, extent * 1.15),
        (0, max(len(nets), 1)),
        margin=(30, 30, 30, 150),
    )
    zero = frame.x(0)
    body = [
        f'<line class="axis" x1="{zero}" y1="{frame.margin[0]}" x2="{zero}" '
        f'y2="{height - frame.margin[2]}"/>',
        text(
            frame.width / 2,
            18,
            f"{name} vs {baseline}: net recovered − regressed markets",
            cls="plot-title",
        ),
    ]
    for i, n in enumerate(nets):
        top = frame.y(len(nets) - i) + 4
        x0, x1 = sorted((zero, frame.x(n.net)))
        fill = PALETTE[2] if n.net >= 0 else PALETTE[1]
        counts = f"{n.topic}: {n.recovered} recovered, {n.regressed} regressed, {n.tied} tied"
        body.append(
            f'<rect x="{x0}" y="{top}" width="{round(max(x1 - x0, 1.0), 1)}" height="16" '
            f'fill="{fill}">'
            f"<title>{escape(counts)}</title></rect>"
        )
        body.append(
            text(frame.margin[3] - 8, top + 12, fit(n.topic, frame.margin[3] - 12), anchor="end")
        )
        body.append(
            text(
                x1 + 6 if n.net >= 0 else x0 - 6,
                top + 12,
                f"{n.net:+d}",
                anchor="start" if n.net >= 0 else "end",
            )
        )
    return svg(
        frame, body, f"net recovered minus regressed markets per topic, {name} vs {baseline}"
    )
