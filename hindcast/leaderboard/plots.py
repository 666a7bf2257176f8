"""Hand-written SVG figures: no plotting library, no script, every label escaped.

Each function returns one `<svg>` element as text, sized by its viewBox so it scales with
the page. Coordinates are rounded to 0.1 px so the output is byte-stable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#1b6ca8", "#d1495b", "#2a9d8f", "#e9a23b", "#6a4c93", "#8c564b", "#3d8f3d", "#c05299", "#5c677d", "#b5838d")
MARKET_COLOUR = "#111111"


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
    return (f'<svg class="plot" viewBox="0 0 {frame.width} {frame.height}" role="img" '
            f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>")


def text(x: float, y: float, content: str, anchor: str = "middle", cls: str = "tick", extra: str = "") -> str:
    return f'<text x="{x}" y="{y}" text-anchor="{anchor}" class="{cls}"{extra}>{escape(content)}</text>'


def ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    step = (hi - lo) / n if hi > lo else 1.0
    return [lo + i * step for i in range(n + 1)]


def axes(frame: Frame, x_ticks: Sequence[float], y_ticks: Sequence[float], x_label: str, y_label: str) -> list[str]:
    """Axis lines, tick labels with light grid lines, and axis titles."""
    left, bottom = frame.x(frame.x_range[0]), frame.y(frame.y_range[0])
    parts = [f'<line class="axis" x1="{left}" y1="{bottom}" x2="{frame.x(frame.x_range[1])}" y2="{bottom}"/>',
             f'<line class="axis" x1="{left}" y1="{bottom}" x2="{left}" y2="{frame.y(frame.y_range[1])}"/>']
    for v in x_ticks:
        parts.append(text(frame.x(v), bottom + 16, f"{v:g}"))
    for v in y_ticks:
        parts.append(f'<line class="grid" x1="{left}" y1="{frame.y(v)}" x2="{frame.x(frame.x_range[1])}" y2="{frame.y(v)}"/>')
        parts.append(text(left - 6, frame.y(v) + 4, f"{v:.3g}", anchor="end"))
    parts.append(text((left + frame.x(frame.x_range[1])) / 2, frame.height - 8, x_label, cls="axis-label"))
    mid = (bottom + frame.y(frame.y_range[1])) / 2
    parts.append(text(14, mid, y_label, cls="axis-label", extra=f' transform="rotate(-90 14 {mid})"'))
    return parts


def polyline(frame: Frame, points: Sequence[tuple[float, float]], stroke: str, dashed: bool = False) -> list[str]:
    coords = " ".join(f"{frame.x(x)},{frame.y(y)}" for x, y in points)
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    marks = [f'<circle cx="{frame.x(x)}" cy="{frame.y(y)}" r="3.5" fill="{stroke}"/>' for x, y in points]
    return [f'<polyline class="series" points="{coords}" stroke="{stroke}"{dash}/>', *marks]


def legend(frame: Frame, names: Sequence[tuple[str, str, bool]]) -> list[str]:
    """Names with their colour swatch, in a column at the top right of the plotting area."""
    x = frame.width - frame.margin[1] + 12
    parts = []
    for i, (name, stroke, dashed) in enumerate(names):
        y = frame.margin[0] + 4 + 16 * i
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        parts.append(f'<line x1="{x}" y1="{y}" x2="{x + 22}" y2="{y}" stroke="{stroke}" stroke-width="2.5"{dash}/>')
        parts.append(text(x + 28, y + 4, name, anchor="start", cls="legend"))
    return parts


def fraction_chart(curves: dict[str, Sequence[tuple[float, float]]], market: Sequence[tuple[float, float]]) -> str:
    """Brier against lifetime fraction: one line per forecaster, the market dashed in black."""
    points = [p for c in curves.values() for p in c] + list(market)
    xs, ys = [x for x, _ in points], [y for _, y in points]
    frame = Frame(760, 380, (min(xs, default=0.0), max(xs, default=1.0)), (0.0, max(max(ys, default=0.25) * 1.1, 0.01)),
                  margin=(28, 190, 48, 58))
    body = axes(frame, sorted(set(xs)), ticks(*frame.y_range), "lifetime fraction at t0", "mean Brier (lower is better)")
    keyed = [(name, colour(i), False) for i, name in enumerate(curves)]
    for (_, stroke, _), series in zip(keyed, curves.values(), strict=True):
        body += polyline(frame, series, stroke)
    if market:
        keyed.append(("market price at t0", MARKET_COLOUR, True))
        body += polyline(frame, market, MARKET_COLOUR, dashed=True)
    return svg(frame, body + legend(frame, keyed), "Brier versus lifetime fraction")


def reliability_diagram(name: str, bins: Sequence, index: int) -> str:
    """Observed frequency against mean forecast per bin (area ∝ count), with the diagonal."""
    frame = Frame(300, 300, (0.0, 1.0), (0.0, 1.0), margin=(28, 12, 44, 48))
    body = axes(frame, ticks(0, 1), ticks(0, 1), "mean forecast", "observed frequency")
    body.append(f'<line class="diagonal" x1="{frame.x(0)}" y1="{frame.y(0)}" x2="{frame.x(1)}" y2="{frame.y(1)}"/>')
    filled = [b for b in bins if b.n]
    total = sum(b.n for b in filled) or 1
    path = [(b.mean_probability, b.observed_frequency) for b in filled]
    body += polyline(frame, path, colour(index))[:1]
    body += [f'<circle cx="{frame.x(b.mean_probability)}" cy="{frame.y(b.observed_frequency)}" '
             f'r="{round(3 + 12 * (b.n / total) ** 0.5, 1)}" fill="{colour(index)}" fill-opacity="0.55">'
             f'<title>{escape(f"{b.lower:g}–{b.upper:g}: n={b.n}")}</title></circle>' for b in filled]
    body.append(text(frame.width / 2, 16, name, cls="plot-title"))
    return svg(frame, body, f"reliability diagram of {name}")


def net_bars(nets: Sequence, name: str, baseline: str) -> str:
    """Per topic, net recovered − regressed markets as a bar left (net loss) or right (net gain) of zero."""
    height = 60 + 24 * max(len(nets), 1)
    extent = max([abs(n.net) for n in nets] + [1])
    frame = Frame(640, height, (-extent * 1.15, extent * 1.15), (0, max(len(nets), 1)), margin=(30, 30, 30, 150))
    zero = frame.x(0)
    body = [f'<line class="axis" x1="{zero}" y1="{frame.margin[0]}" x2="{zero}" y2="{height - frame.margin[2]}"/>',
            text(frame.width / 2, 18, f"{name} vs {baseline}: net recovered − regressed markets", cls="plot-title")]
    for i, n in enumerate(nets):
        top = frame.y(len(nets) - i) + 4
        x0, x1 = sorted((zero, frame.x(n.net)))
        fill = PALETTE[2] if n.net >= 0 else PALETTE[1]
        body.append(f'<rect x="{x0}" y="{top}" width="{round(max(x1 - x0, 1.0), 1)}" height="16" fill="{fill}">'
                    f'<title>{escape(f"{n.topic}: {n.recovered} recovered, {n.regressed} regressed, {n.tied} tied")}</title></rect>')
        body.append(text(frame.margin[3] - 8, top + 12, n.topic, anchor="end"))
        body.append(text(x1 + 6 if n.net >= 0 else x0 - 6, top + 12, f"{n.net:+d}", anchor="start" if n.net >= 0 else "end"))
    return svg(frame, body, f"net recovered minus regressed markets per topic, {name} vs {baseline}")
