"""How a leaderboard row reads: the text of each shown column, one definition for Markdown,
HTML and the terminal (the CSV, JSON and Parquet files carry the raw fields).

- a missing interval says why: "n too small" (fewer than 5 markets), else "—";
- a forecaster covering fewer markets than the best-covered one is marked "subset: n of N markets";
- usage of a forecaster that used no model (a baseline) is "—"; a figure some forecast did not
  record is "not recorded", never 0; a cost without a price for its model is "unknown".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hindcast.scoring import NO_MODEL, dollars, too_few

NOT_RECORDED = "not recorded"
LEGEND = (
    "Brier: mean squared error of the YES probability (0 best, 1 worst) over the forecaster's "
    "valid forecasts; 95% CI by a bootstrap that resamples markets.",
    "Brier − market: the forecaster's Brier minus the market's (its last price strictly before "
    "the same t0) on the same rows, the forecaster's rows where the market had a price; always "
    "within [−1, 1], negative = better than the market. Skill vs market = 1 − Brier/market Brier "
    "on those rows, shown only where the market's Brier is at least 0.01 (near 0 the ratio "
    "explodes).",
    'No interval is drawn from fewer than 5 markets ("n too small"). A row marked "subset: n '
    'of N markets" '
    "covers fewer markets than the best-covered forecaster: its scores are over its own "
    "markets only.",
    "Tokens, requests, retries and cost: summed over the scored forecasts, failed "
    "ones included; replies "
    "from the response cache count their tokens (they are what the forecast consumed) and "
    "are shown as cached "
    "beside the requests sent. Cost = tokens × the price table (US dollars per million "
    'tokens): "unknown" for '
    'a model without a price, never 0; "—" for forecasters that use no model. Measured '
    "latency is not exported (every export of a run is the same bytes whichever processes "
    "swept it): `hindcast runs show` prints it from the run database.",
)
TOO_SMALL = "n too small"


def number(value, digits: int = 4) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def signed(value) -> str:
    return "—" if value is None else f"{value:+.4f}"


def interval(low, high, n_markets: int, fmt: Callable = number) -> str:
    if low is None or high is None:
        return TOO_SMALL if too_few(n_markets) else "—"
    return f"[{fmt(low)}, {fmt(high)}]"


def markets(row) -> str:
    return f"{row.n_markets} ({row.subset})" if row.subset else str(row.n_markets)


def brier_ci(row) -> str:
    return interval(row.brier_ci_low, row.brier_ci_high, row.n_markets)


def diff_ci(row) -> str:
    return interval(row.diff_ci_low, row.diff_ci_high, row.n_markets_paired, signed)


def skill_ci(row) -> str:
    if row.skill_vs_market is None:
        return "—"
    return interval(row.skill_ci_low, row.skill_ci_high, row.n_markets_paired)


def _usage(row, value, fmt: Callable) -> str:
    if row.cost_status == NO_MODEL:
        return "—"
    return NOT_RECORDED if value is None else fmt(value)


def tokens(row) -> str:
    """Prompt / completion tokens."""
    if row.cost_status == NO_MODEL:
        return "—"
    return (
        f"{_usage(row, row.prompt_tokens, '{:,}'.format)} / "
        f"{_usage(row, row.completion_tokens, '{:,}'.format)}"
    )


def requests(row) -> str:
    """Requests sent (+ replies from the cache), retries."""
    if row.cost_status == NO_MODEL:
        return "—"
    cached = "" if row.cache_hits is None else f" (+{row.cache_hits:,} cached)"
    return f"{_usage(row, row.requests, '{:,}'.format)}{cached}"


def cost(row) -> str:
    if row.cost_status == NO_MODEL:
        return "—"
    return "unknown" if row.cost_usd is None else dollars(row.cost_usd)


def notes(row) -> str:
    unpriced = (
        f"cost unknown: no price for {row.unpriced}"
        if row.cost_usd is None and row.unpriced
        else ""
    )
    return "; ".join(
        n
        for n in (row.ci_note, row.skill_note, unpriced, fractional_note(row))
        if n and n != "no row with a market price"
    )


def fractional_note(row) -> str:
    """How many fractional outcomes accuracy left out (it counts binary outcomes only)."""
    n = row.n_fractional_left_out
    if not n:
        return ""
    return (
        f"accuracy over binary outcomes: {n:,} fractional outcome{'' if n == 1 else 's'} left out"
    )


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    sort: str | None  # the row attribute a sortable table orders by (exact value)
    text: Callable  # row → shown text
    is_text: bool = False


COLUMNS = {
    c.key: c
    for c in (
        Column("forecaster", "forecaster", "forecaster", lambda r: r.forecaster, True),
        Column("slice", "slice", "slice", lambda r: r.slice, True),
        Column("n_forecasts", "n forecasts", "n_forecasts", lambda r: str(r.n_forecasts)),
        Column("n_failed", "failed", "n_failed", lambda r: str(r.n_failed)),
        Column("n_markets", "n markets", "n_markets", markets),
        Column("brier", "Brier", "brier", lambda r: number(r.brier)),
        Column("brier_ci", "Brier 95% CI", "brier_ci_low", brier_ci),
        Column("n_paired", "rows with market price", "n_paired", lambda r: str(r.n_paired)),
        Column(
            "market_brier",
            "market Brier (same rows)",
            "market_brier",
            lambda r: number(r.market_brier),
        ),
        Column(
            "brier_diff",
            "Brier − market (same rows)",
            "brier_diff_vs_market",
            lambda r: signed(r.brier_diff_vs_market),
        ),
        Column("diff_ci", "Brier − market 95% CI", "diff_ci_low", diff_ci),
        Column(
            "skill_vs_market",
            "skill vs market",
            "skill_vs_market",
            lambda r: number(r.skill_vs_market),
        ),
        Column("skill_ci", "skill 95% CI", "skill_ci_low", skill_ci),
        Column("log_score", "log score", "log_score", lambda r: number(r.log_score)),
        Column("accuracy", "accuracy", "accuracy", lambda r: number(r.accuracy)),
        Column(
            "mean_abs_diff_market",
            "mean |p − market|",
            "mean_abs_diff_market",
            lambda r: number(r.mean_abs_diff_market),
        ),
        Column("ece", "ECE", "ece", lambda r: number(r.ece)),
        Column("tokens", "tokens in / out", "prompt_tokens", tokens),
        Column("requests", "requests", "requests", requests),
        Column("retries", "retries", "retries", lambda r: _usage(r, r.retries, "{:,}".format)),
        Column("cost", "cost (USD)", "cost_usd", cost),
        Column("notes", "notes", None, notes, True),
    )
}
