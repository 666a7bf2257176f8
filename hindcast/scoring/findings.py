"""One analysis result as a table: what `hindcast analyze` / `hindcast trade` print, what their
JSON holds and what the HTML report renders. Every analysis module (strata, effects,
ensemble, calibration, trading) returns Findings, so the front ends need one renderer."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    key: str  # stable id: "strata", "defer", "effects", "aggregates", "calibration", "trading" …
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]  # each value a str, int, float or None (shown "–"; null in JSON)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        """JSON-ready: rows as objects keyed by column; a non-finite number is null."""
        return {
            "key": self.key,
            "title": self.title,
            "notes": list(self.notes),
            "rows": [dict(zip(self.columns, map(_plain, row))) for row in self.rows],
        }


def _plain(value: object) -> object:
    return None if isinstance(value, float) and not math.isfinite(value) else value
