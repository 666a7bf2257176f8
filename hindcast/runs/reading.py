"""A run's stored forecasts read in bulk (issue 39: scoring a 120,000-forecast run).

`RunStore.forecasts` builds an ORM object a row and parses its JSON a row: ~70 s of the
scoring of 120,000 baseline forecasts on 2 loaded cores. Here the same rows come as plain
result rows (one SELECT of the columns a StoredForecast needs), and each distinct stored text
(evidence, usage, t0) is parsed once and shared: baselines repeat a few dozen of them. Same
records, same order (code-point order of forecaster, market, t0, repeat, attempt; the newest
attempt of each key unless `all_attempts`), as `RunStore.forecasts` returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from hindcast.records import Forecast, Usage
from hindcast.runs.rows import StoredForecast
from hindcast.runs.store import RunStore
from hindcast.runs.tables import ForecastRow
from hindcast.timeutil import parse_utc

__all__ = ["stored_forecasts"]

_COLUMNS = (
    "run_id",
    "forecaster",
    "market_id",
    "t0",
    "label",
    "repeat",
    "attempt",
    "probability",
    "error",
    "rationale",
    "evidence_json",
    "usage_json",
    "raw",
)


def stored_forecasts(
    store: RunStore, run_id: str, all_attempts: bool = False
) -> list[StoredForecast]:
    """`store.forecasts(run_id, all_attempts)`, read in bulk."""
    store.run(run_id)  # an unknown run is refused as RunStore.forecasts refuses it
    table = ForecastRow.metadata.tables["forecasts"]
    query = select(*(table.c[name] for name in _COLUMNS)).where(table.c.run_id == run_id)
    with store.engine.connect() as conn:
        rows = list(conn.execute(query).all())
    rows.sort(key=lambda r: (r.forecaster, r.market_id, r.t0, r.repeat, r.attempt))
    if not all_attempts:
        newest = {(r.forecaster, r.market_id, r.t0, r.repeat): r for r in rows}
        rows = [r for r in rows if newest[(r.forecaster, r.market_id, r.t0, r.repeat)] is r]
    evidence = _memo(lambda text: tuple(json.loads(text)))
    usage = _memo(lambda text: Usage.of(json.loads(text)))
    instant = _memo(parse_utc)
    return [
        StoredForecast(
            r.run_id,
            r.forecaster,
            r.market_id,
            instant(r.t0),
            r.label,
            Forecast(
                probability=r.probability,
                error=r.error,
                rationale=r.rationale,
                evidence=evidence(r.evidence_json),
                usage=usage(r.usage_json),
                raw=r.raw,
            ),
            r.repeat,
        )
        for r in rows
    ]


def _memo(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` computed once per distinct text (the records it gives are never changed)."""
    seen: dict[str, Any] = {}

    def parsed(text: str) -> Any:
        found = seen.get(text)
        if found is None:
            found = seen[text] = parse(text)
        return found

    return parsed
