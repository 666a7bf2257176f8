"""Usage and cost per forecaster, summed from the usage record each stored forecast carries.

What is counted:
- every stored forecast, failed ones included: a forecast failure consumed what it consumed;
- tokens of replies served from the response cache COUNT toward the forecast's usage and its
  cost. They are what the forecast consumed, and the cost shown is the list price of making
  the forecast, so it does not depend on whether the cache happened to be warm: the same
  stored forecasts give the same figures, and two forecasters are compared on equal terms.
  `requests` (calls that reached the endpoint) and `cache_hits` (replies from the cache) tell
  apart what was actually sent; `cost_fresh_usd` prices only the tokens of replies not served
  from the cache (`fresh_*` in the usage record), what the calls cost when they were made —
  the figure `--max-cost` budgets count.

Missing is not zero. A total is given only when every forecast that used a model recorded
that field; otherwise it is None ("not recorded"). A forecaster none of whose forecasts used a
model (a baseline) has no usage: every figure None, cost status "no model" (shown "—").
The cost is None ("unknown") unless every model-using forecast names its model (`model_name`)
and the price table prices it; the models without a price are listed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hindcast.records import USAGE_COUNTS as COUNTS
from hindcast.records import Usage
from hindcast.scoring.costs import PriceTable

KEYS = ("model", "model_name", *COUNTS, "latency_s")  # what a summary reads of a usage record
PRICED, UNKNOWN, NO_MODEL = "priced", "unknown", "no model"
NOT_RECORDED = "(model_name not recorded)"


@dataclass(frozen=True)
class UsageSummary:
    forecaster: str
    n_forecasts: int  # stored forecasts counted, failed ones included
    n_with_model: int  # of them, forecasts that used a model
    models: tuple[str, ...]  # model names seen (sorted)
    prompt_tokens: int | None
    completion_tokens: int | None
    requests: int | None
    cache_hits: int | None
    retries: int | None
    latency_s: float | None  # total seconds
    mean_latency_s: float | None  # seconds per model-using forecast
    cost_usd: float | None
    cost_status: str  # priced | unknown | no model
    unpriced: tuple[str, ...] = ()  # models without a price (or NOT_RECORDED)
    fresh_prompt_tokens: int | None = None  # of replies not served from the cache
    fresh_completion_tokens: int | None = None
    cost_fresh_usd: float | None = None  # the cost of those tokens (None: unknown or not recorded)

    def cost_text(self) -> str:
        """'—' for no model, 'unknown' when not priced, else dollars."""
        if self.cost_status == NO_MODEL:
            return "—"
        return "unknown" if self.cost_usd is None else dollars(self.cost_usd)


def dollars(value: float) -> str:
    return (
        f"${value:.2f}"
        if value >= 1
        else f"${value:.4f}"
        if value >= 0.0001 or value == 0
        else f"${value:.2e}"
    )


def summarize(stored: Iterable, prices: PriceTable) -> dict[str, UsageSummary]:
    """Usage and cost per forecaster of stored forecasts (`runs.rows.StoredForecast`:
    `.forecaster`, `.forecast.usage`), forecasters in name order."""
    return summarize_usages(((s.forecaster, s.forecast.usage) for s in stored), prices)


def summarize_usages(
    pairs: Iterable[tuple[str, Usage | Mapping | None]], prices: PriceTable
) -> dict[str, UsageSummary]:
    """The same from (forecaster, usage record) pairs."""
    groups: dict[str, list[Usage]] = defaultdict(list)
    for forecaster, usage in pairs:
        groups[forecaster].append(Usage.of(usage))
    return {name: summary(name, groups[name], prices) for name in sorted(groups)}


def relevant(usage: Usage | Mapping | None) -> Usage:
    """The part of a usage record a summary reads (kept on scored rows)."""
    given = dict(usage or {})
    return Usage.of({k: given[k] for k in KEYS if k in given})


def figures(usage: Usage | Mapping | None) -> dict:
    """One forecast's usage figures (the per-forecast table's columns), None where
    not recorded or invalid."""
    record = Usage.of(usage)
    return {
        "model_name": _name(record),
        **{k: getattr(record, k) for k in COUNTS},
        "latency_s": _seconds(record.latency_s),
    }


def summary(
    forecaster: str, usages: Iterable[Usage | Mapping | None], prices: PriceTable
) -> UsageSummary:
    """One forecaster's usage summed over its forecasts' usage records (or their stored form)."""
    records = [Usage.of(u) for u in usages]
    used = [u for u in records if u.uses_model()]
    counts = {k: _total([getattr(u, k) for u in used]) for k in COUNTS}
    latency = _fsum([_seconds(u.latency_s) for u in used])
    cost, unpriced = _cost(used, prices)
    fresh, _ = _cost(used, prices, "fresh_prompt_tokens", "fresh_completion_tokens")
    status = NO_MODEL if not used else PRICED if cost is not None else UNKNOWN
    return UsageSummary(
        forecaster,
        len(records),
        len(used),
        tuple(sorted({_name(u) for u in used} - {None})),
        **counts,
        latency_s=latency,
        mean_latency_s=None if latency is None else latency / len(used),
        cost_usd=cost,
        cost_status=status,
        unpriced=unpriced,
        cost_fresh_usd=fresh,
    )


def uses_model(usage: Usage | Mapping) -> bool:
    """A forecast used a model when its usage names one or counts tokens
    (baselines record nothing)."""
    return Usage.of(usage).uses_model()


def _cost(
    used: list[Usage],
    prices: PriceTable,
    prompt_key: str = "prompt_tokens",
    completion_key: str = "completion_tokens",
) -> tuple[float | None, tuple[str, ...]]:
    """Dollars of the model-using forecasts, priced per model name (sorted,
    so the sum is stable)."""
    tokens: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    unpriced = set()
    for u in used:
        name, prompt, completion = _name(u), getattr(u, prompt_key), getattr(u, completion_key)
        if name is None or prompt is None or completion is None or name not in prices.prices:
            unpriced.add(
                NOT_RECORDED
                if name is None
                else name
                if name not in prices.prices
                else f"{name} (tokens not recorded)"
            )
            continue
        tokens[name][0] += prompt
        tokens[name][1] += completion
    if unpriced or not used:
        return None, tuple(sorted(unpriced))
    return math.fsum(prices.cost(name, *tokens[name]) for name in sorted(tokens)), ()


def _name(usage: Usage) -> str | None:
    return usage.model_name or None


def _seconds(value: float | None) -> float | None:
    return None if value is None else float(value)


def _total(values: list[int | None]) -> int | None:
    """The sum, or None when any forecast did not record the field (or there is none)."""
    return None if not values or any(v is None for v in values) else sum(values)


def _fsum(values: list[float | None]) -> float | None:
    return None if not values or any(v is None for v in values) else math.fsum(values)
