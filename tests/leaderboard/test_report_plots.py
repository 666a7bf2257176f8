"""The report's SVG figures: round axis ticks, legends that fit the plot, interval whiskers."""

from __future__ import annotations

import re
from decimal import Decimal
from itertools import pairwise

import pytest

from hindcast.leaderboard import plots
from hindcast.scoring.metrics import ReliabilityBin

ROUND = {Decimal(m) for m in ("1", "2", "2.5", "5")}


def is_round_step(step: Decimal) -> bool:
    """1, 2, 2.5 or 5 times a power of ten."""
    return step.scaleb(-step.adjusted()).normalize() in ROUND


@pytest.mark.parametrize("hi", [0.974, 0.2145, 0.25, 0.0123, 1.0, 0.6, 3.7, 0.011])
def test_ticks_fall_on_round_steps_and_cover_the_range(hi):
    values = [Decimal(repr(v)) for v in plots.ticks(0.0, hi)]
    steps = {b - a for a, b in pairwise(values)}
    assert len(steps) == 1 and is_round_step(steps.pop())
    assert values[0] == 0 and values[-1] >= Decimal(repr(hi)) and 4 <= len(values) <= 8


def test_ticks_of_the_unit_interval_are_fifths():
    assert plots.ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def tick_labels(svg: str) -> list[str]:
    return re.findall(r'text-anchor="end" class="tick">([^<]*)</text>', svg)


def test_the_brier_axis_is_labelled_at_round_values():
    """The case of the issue: a top Brier of 0.886 gave ticks 0.195, 0.39, 0.584 …"""
    chart = plots.fraction_chart({"a": [(0.25, 0.886), (0.5, 0.4)]}, [(0.25, 0.2), (0.5, 0.1)])
    assert tick_labels(chart) == ["0", "0.2", "0.4", "0.6", "0.8", "1"]
    diagram = plots.reliability_diagram("a", [ReliabilityBin(0.1, 0.2, 3, 0.15, 0.33)], 0)
    assert tick_labels(diagram) == ["0", "0.2", "0.4", "0.6", "0.8", "1"]


def legend_entries(svg: str) -> list[tuple[float, str, str]]:
    return [
        (float(x), shown, full)
        for x, shown, full in re.findall(
            r'<text x="([\d.]+)" y="[\d.]+" text-anchor="start" '
            r'class="legend">([^<]*)<title>([^<]*)</title>',
            svg,
        )
    ]


def test_every_legend_entry_fits_inside_the_plot_width():
    long = "gpt-4o-mini-2024-07-18 retrieval agent, k=10, hybrid search@r-0123456789ab"
    names = {
        long: [(0.25, 0.2), (0.5, 0.1)],
        "market": [(0.25, 0.1), (0.5, 0.05)],
        "w" * 200: [(0.25, 0.3)],
    }
    chart = plots.fraction_chart(names, [(0.25, 0.1)])
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', chart).group(1))
    entries = legend_entries(chart)
    assert [full for _, _, full in entries] == [long, "market", "w" * 200, "market price at t0"]
    for x, shown, full in entries:
        assert x >= 0 and x + len(shown) * plots.CHAR_WIDTH <= width, (x, shown)
        assert shown == full or (shown.endswith("…") and full.startswith(shown[:-1]))
    assert entries[0][1] == long  # a long name that fits is shown whole


def test_the_legend_sits_below_the_plotting_area():
    chart = plots.fraction_chart({"a": [(0.25, 0.2)], "b": [(0.25, 0.1)]}, [])
    axis_bottom = float(re.search(r'<line class="axis" x1="[\d.]+" y1="([\d.]+)"', chart).group(1))
    ys = [
        float(y)
        for y in re.findall(
            r'<text x="[\d.]+" y="([\d.]+)" text-anchor="start" class="legend">', chart
        )
    ]
    height = float(re.search(r'viewBox="0 0 [\d.]+ ([\d.]+)"', chart).group(1))
    assert len(ys) == 2 and all(axis_bottom + 40 < y <= height for y in ys)


def whisker_spans(svg: str) -> list[tuple[float, float, float]]:
    """(x, y low px, y high px) of each whisker's vertical bar."""
    lines = re.findall(
        r'<line class="whisker" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)"', svg
    )
    return [(float(x1), float(y1), float(y2)) for x1, y1, x2, y2 in lines if x1 == x2]


def test_intervals_are_drawn_as_whiskers_at_their_values():
    chart = plots.fraction_chart(
        {"a": [(0.0, 0.2), (1.0, 0.1)]}, [], {"a": [(0.0, 0.1, 0.3), (1.0, 0.05, 0.15)]}
    )
    frame_y = lambda v: round(
        340 - 48 - v / 0.3 * (340 - 48 - 28), 1
    )  # y ticks 0 … 0.3 from 292 up to 28
    spans = whisker_spans(chart)
    assert [(lo, hi) for _, lo, hi in spans] == [
        (frame_y(0.1), frame_y(0.3)),
        (frame_y(0.05), frame_y(0.15)),
    ]
    assert chart.count('class="whisker"') == 3 * 2  # the bar and its two caps


def test_whiskers_of_series_at_one_fraction_are_set_apart():
    chart = plots.fraction_chart(
        {"a": [(0.5, 0.2)], "b": [(0.5, 0.2)]}, [], {"a": [(0.5, 0.1, 0.3)], "b": [(0.5, 0.1, 0.3)]}
    )
    xs = [x for x, _, _ in whisker_spans(chart)]
    assert len(xs) == 2 and xs[0] != xs[1]


def test_reliability_bins_carry_a_wilson_interval():
    low, high = plots.wilson(0.5, 10)
    assert round(low, 4) == 0.2366 and round(high, 4) == 0.7634  # the textbook value
    diagram = plots.reliability_diagram("a", [ReliabilityBin(0.4, 0.5, 10, 0.45, 0.5)], 0)
    assert len(whisker_spans(diagram)) == 1
