"""The report's research figures (hindcast.analysis, issue 29): CORP calibration first, as a
reliability diagram per forecaster and its table, then the other findings, one table each.
Rendering only: the record's `Research` arrives computed."""

from __future__ import annotations

from html import escape

from hindcast.leaderboard import plots
from hindcast.leaderboard.report_html import finding_body, finding_section
from hindcast.leaderboard.report_record import Research

CORP_NOTE = (
    "Each forecaster's recalibrated probability (isotonic regression of the outcome on its "
    "forecast, the CORP method) against its forecast; shaded: the 90% consistency band, where a "
    "calibrated forecaster's curve would fall; dashed: the diagonal. Below: Brier = MCB − DSC + "
    "UNC (exact), with the miscalibration test and the fixed-bin ECE beside it."
)


def corp_section(research: Research | str) -> str:
    """The headline calibration figure: a CORP reliability diagram per forecaster
    and the decomposition."""
    head = '<section id="corp"><h2>Calibration: CORP reliability diagrams</h2>'
    if isinstance(research, str):
        return head + f'<p class="note">Not computed: {escape(research)}</p></section>'
    diagrams = "".join(corp_diagram(c, i) for i, c in enumerate(research.corp))
    return (
        head
        + f'<p class="note">{CORP_NOTE}</p>'  # a constant with no markup
        + f'<div class="grid-plots">{diagrams}</div>{finding_body(research.corp_table)}</section>'
    )


def corp_diagram(found, index: int) -> str:
    frame = plots.Frame(300, 300, (0.0, 1.0), (0.0, 1.0), margin=(28, 12, 44, 48))
    body = plots.axes(frame, plots.ticks(0, 1), plots.ticks(0, 1), "forecast", "recalibrated (CEP)")
    band = [(c.p, c.band_high) for c in found.curve] + [
        (c.p, c.band_low) for c in reversed(found.curve)
    ]
    body.append(
        '<polyline class="band" '
        f'points="{" ".join(f"{frame.x(x)},{frame.y(y)}" for x, y in band)}" '
        f'fill="{plots.colour(index)}" fill-opacity="0.15" stroke="none"/>'
    )
    body.append(
        f'<line class="diagonal" x1="{frame.x(0)}" y1="{frame.y(0)}" x2="{frame.x(1)}" '
        f'y2="{frame.y(1)}"/>'
    )
    curve = plots.polyline(frame, [(c.p, c.cep) for c in found.curve], plots.colour(index))
    body += (
        curve if len(found.curve) < 3 else curve[:1]
    )  # a marker where the forecaster used one or two values
    d = found.decomposition
    body.append(plots.text(frame.width / 2, 16, found.forecaster, cls="plot-title"))
    body.append(
        plots.text(
            frame.x(0.02),
            frame.y(0.95),
            f"MCB {d.mcb:.3f}  DSC {d.dsc:.3f}  UNC {d.unc:.3f}",
            anchor="start",
        )
    )
    return plots.svg(frame, body, f"CORP reliability diagram of {found.forecaster}")


def research_sections(research: Research | str) -> str:
    """The other figures of hindcast.analysis, one table each (the CORP table
    sits in its own section)."""
    if isinstance(research, str):
        return (
            '<section id="finding-research" class="finding"><h2>Research figures</h2>'
            f'<p class="note">Not computed: {escape(research)}</p></section>'
        )
    return "".join(finding_section(f) for f in research.findings)
