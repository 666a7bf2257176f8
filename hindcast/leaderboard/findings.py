"""The analyses of issue 17 (strata, defer rule, difficulty-adjusted scores, aggregates,
calibration, trading) computed from scored runs, as Findings for the report and the CLI."""

from __future__ import annotations

from collections.abc import Sequence

from hindcast.scoring.findings import Finding


def collect(runs: Sequence) -> list[Finding]:
    """Every analysis of the scored runs (RunScores: `.rows`), in report order."""
    return []
