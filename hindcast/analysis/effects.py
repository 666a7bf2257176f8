"""Difficulty-adjusted comparison: two-way fixed effects on matched rows (ForecastBench).

A question q is a (market, t0). A forecaster's valid repeats of a question are averaged first
(one Brier per question × forecaster cell); a failure (probability None) is counted, never
filled: a question whose every repeat failed has no cell for that forecaster. The market's
price at t0 enters as the forecaster "market price" on questions with a price. By default
the panel is MATCHED: only questions on which every compared forecaster has a cell, so every
forecaster is scored on the same questions (a balanced layout).

Model: Brier_{q,f} = μ + α_q + β_f + ε, sum-to-zero coding (α averages 0 over the questions,
β over the forecasters). The adjusted Brier μ + β_f is the fitted Brier of f on a question of
average difficulty. Balanced layout: closed form, β_f = mean_f − grand mean, so μ + β_f is
the forecaster's raw Brier on the matched rows (the adjustment changes the scale nothing, it
makes the comparison fair). Unbalanced (panel="available": every cell, each forecaster on its
own questions): the question effects are absorbed and the forecaster effects solved by least
squares (numpy lstsq on the reduced normal equations); then μ + β_f differs from the raw mean.

Interval: market-clustered bootstrap (`bootstrap.draw_weights`), the fit redone on each
replicate with each question weighted by its market's draw count; none under
`vs_market.MIN_MARKETS` markets. Brier Index = 100·(1 − √adjusted Brier). The share of score
variance explained by questions is the between-question sum of squares over the total sum of
squares of the cells (questions entered first; on a balanced panel the order does not matter).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from hindcast.errors import ConfigError
from hindcast.scoring import Finding, ScoredRow, bootstrap, vs_market

MARKET = "market price"  # the market's price at t0 as a forecaster
MIN_COVERAGE = (
    0.5  # a forecaster with cells on fewer than this share of the best coverage is dropped
)
PANELS = ("matched", "available")
COLUMNS = (
    "forecaster",
    "n_questions",
    "n_markets",
    "n_failed",
    "raw_brier",
    "adjusted_brier",
    "adjusted_ci_low",
    "adjusted_ci_high",
    "brier_index",
    "brier_index_ci_low",
    "brier_index_ci_high",
    "effect",
)
POLICY = {
    "effects": "two-way-fixed-effects-sum-to-zero",
    "repeats": "mean-of-valid-repeats-per-question",
    "panel": "matched",
    "min_coverage": MIN_COVERAGE,
}

Question = tuple[str, datetime]


@dataclass(frozen=True)
class Panel:
    """Cells y[q, f] (NaN: no cell) with the names of their questions and forecasters."""

    questions: tuple[Question, ...]
    forecasters: tuple[str, ...]
    y: np.ndarray

    @property
    def balanced(self) -> bool:
        return bool(np.isfinite(self.y).all())


@dataclass(frozen=True)
class Fit:
    """Sum-to-zero estimates: fitted cell = mu + alpha[q] + beta[f]."""

    mu: float
    alpha: np.ndarray
    beta: np.ndarray
    balanced: bool

    @property
    def adjusted(self) -> np.ndarray:
        return self.mu + self.beta


# ---- the fit ------------------------------------------------------------------------------


def fit(y: np.ndarray, weights: np.ndarray | None = None) -> Fit:
    """Two-way fixed effects on cells y (questions × forecasters, NaN = missing), each question
    weighted (bootstrap draw counts; default 1). Closed form when balanced, else least squares.
    A layout that does not identify the forecaster effects (questions not
    linking them) gives NaN."""
    w = np.ones(y.shape[0]) if weights is None else np.asarray(weights, float)
    return _closed_form(y, w) if np.isfinite(y).all() else least_squares(y, w)


def least_squares(y: np.ndarray, weights: np.ndarray | None = None) -> Fit:
    """The general path (any layout, balanced included): question effects absorbed, forecaster
    effects by numpy lstsq on the reduced normal equations."""
    return _Reduced.of(y).fit(
        np.ones(y.shape[0]) if weights is None else np.asarray(weights, float)
    )


def _closed_form(y: np.ndarray, w: np.ndarray) -> Fit:
    means = (w @ y) / w.sum()  # each forecaster's (weighted) mean over the questions
    mu = float(means.mean())
    return Fit(mu, y.mean(axis=1) - mu, means - mu, True)


@dataclass(frozen=True)
class _Reduced:
    """The question effects absorbed: per question, the F × F block of the reduced normal
    equations and its right-hand side, so a weighted fit is two weighted sums and one solve."""

    present: np.ndarray  # Q × F, 1.0 where a cell exists
    filled: np.ndarray  # y with 0 where missing
    counts: np.ndarray  # cells per question
    blocks: np.ndarray  # Q × F × F
    rhs: np.ndarray  # Q × F

    @classmethod
    def of(cls, y: np.ndarray) -> _Reduced:
        present = np.isfinite(y).astype(float)
        filled = np.where(present > 0, y, 0.0)
        counts = present.sum(axis=1)
        if (counts == 0).any():
            raise ConfigError("every question needs at least one cell")
        share = present / counts[:, None]
        blocks = (
            present[:, :, None] * np.eye(y.shape[1])[None] - present[:, :, None] * share[:, None, :]
        )
        rhs = filled - present * (filled.sum(axis=1) / counts)[:, None]
        return cls(present, filled, counts, blocks, rhs)

    def fit(self, w: np.ndarray) -> Fit:
        """Weighted fit; a forecaster with no weighted cell (none of its markets drawn) gets NaN
        effects and leaves the others' estimates as they would be without it."""
        active = (w @ self.present) > 0
        b = self.solve(w, active)
        a = (self.filled.sum(axis=1) - self.present @ np.where(active, b, 0.0)) / self.counts
        centre = float(w @ a / w.sum())
        mean_b = float(b[active].mean())
        return Fit(centre + mean_b, a - centre, b - mean_b, False)

    def solve(self, w: np.ndarray, active: np.ndarray) -> np.ndarray:
        """Effects of the active forecasters, the first active as reference (0); NaN for the
        inactive ones, and for all when the questions do not link the active ones."""
        cols = np.flatnonzero(active)
        c = np.tensordot(w, self.blocks, axes=1)[np.ix_(cols[1:], cols[1:])]
        solution, _, rank, _ = np.linalg.lstsq(c, (w @ self.rhs)[cols[1:]], rcond=None)
        b = np.full(self.blocks.shape[1], np.nan)
        if rank == c.shape[0]:
            b[cols] = np.concatenate([[0.0], solution])
        return b


def question_share(y: np.ndarray) -> float | None:
    """Between-question sum of squares / total sum of squares of the cells (NaN = no cell)."""
    cells = y[np.isfinite(y)]
    if cells.size == 0 or np.ptp(cells) == 0.0:
        return None
    total = float(((cells - cells.mean()) ** 2).sum())
    counts = np.isfinite(y).sum(axis=1)
    means = np.nansum(y, axis=1) / counts
    return float((counts * (means - cells.mean()) ** 2).sum() / total)


def brier_index(brier: float | None) -> float | None:
    """ForecastBench's Brier Index 100·(1 − √Brier): 100 perfect, 50 a constant 0.5 (Brier 0.25)."""
    if brier is None or not np.isfinite(brier) or brier < 0:
        return None
    return 100.0 * (1.0 - float(np.sqrt(brier)))


# ---- from scored rows to the panel ------------------------------------------------------------


@dataclass(frozen=True)
class _Cells:
    briers: dict[str, dict[Question, list[float]]]  # forecaster → question → valid Briers
    failed: dict[str, int]  # forecaster → failed forecasts over all its rows (not only the panel's)


def collect(
    rows: Iterable[ScoredRow], forecasters: Sequence[str] | None = None, include_market: bool = True
) -> _Cells:
    """Valid Briers per forecaster and question (the market's price as MARKET), failures counted."""
    briers: dict[str, dict[Question, list[float]]] = defaultdict(lambda: defaultdict(list))
    failed: dict[str, int] = defaultdict(int)
    market: dict[Question, float] = {}
    for r in rows:
        if r.market_price is not None:
            market.setdefault((r.market_id, r.t0), r.market_brier)
        if forecasters is not None and r.forecaster not in forecasters:
            continue
        own = briers[r.forecaster]  # a forecaster that only failed is still known (and dropped)
        if r.probability is None:
            failed[r.forecaster] += 1
        else:
            own[(r.market_id, r.t0)].append(r.brier)
    if include_market and market:
        briers[MARKET] = {q: [b] for q, b in market.items()}
    return _Cells({f: dict(q) for f, q in briers.items()}, dict(failed))


def kept(cells: _Cells, min_coverage: float = MIN_COVERAGE) -> tuple[list[str], list[str]]:
    """Forecasters kept, and those dropped with the reason: no valid forecast, or cells on fewer
    than `min_coverage` × the best coverage (one forecaster on a few markets would otherwise shrink
    the matched panel to those markets for everyone)."""
    coverage = {f: len(q) for f, q in cells.briers.items()}
    best = max(coverage.values(), default=0)
    keep, dropped = [], []
    for f in sorted(coverage):
        if coverage[f] == 0:
            dropped.append(f"{f} (no valid forecast)")
        elif coverage[f] < min_coverage * best:
            dropped.append(
                f"{f} ({coverage[f]} of {best} questions, < {min_coverage:.0%} of the best "
                "coverage)"
            )
        else:
            keep.append(f)
    return keep, dropped


def panel_of(cells: _Cells, forecasters: list[str], panel: str = "matched") -> Panel:
    """Questions × forecasters of mean valid Briers: matched (every
    forecaster) or available (any)."""
    sets = [set(cells.briers[f]) for f in forecasters]
    questions = (
        sorted(set.intersection(*sets) if panel == "matched" else set.union(*sets)) if sets else []
    )
    y = np.full((len(questions), len(forecasters)), np.nan)
    for j, f in enumerate(forecasters):
        own = cells.briers[f]
        for i, q in enumerate(questions):
            if q in own:
                y[i, j] = float(np.mean(own[q]))
    return Panel(tuple(questions), tuple(forecasters), y)


# ---- the analysis -----------------------------------------------------------------------------


def effects(
    rows: Iterable[ScoredRow],
    forecasters: Sequence[str] | None = None,
    include_market: bool = True,
    panel: str = "matched",
    replicates: int = bootstrap.REPLICATES,
    seed: int = 0,
    min_coverage: float = MIN_COVERAGE,
) -> Finding:
    """Difficulty-adjusted Brier per forecaster, best first (Finding key "effects"). `forecasters`:
    those compared (default: every one in the rows); the market price joins them unless
    `include_market` is false. panel "matched": questions every kept forecaster answered, after
    dropping forecasters below `min_coverage` of the best coverage; "available": every cell of
    every forecaster with a valid forecast (unbalanced; the fixed effects adjust
    for who answered what)."""
    if panel not in PANELS:
        raise ConfigError(f"unknown effects panel {panel!r} (known: {', '.join(PANELS)})")
    if not 0.0 <= min_coverage <= 1.0:
        raise ConfigError(f"min_coverage must be within [0, 1], not {min_coverage!r}")
    cells = collect(rows, forecasters, include_market)
    names, dropped = kept(cells, min_coverage if panel == "matched" else 0.0)
    table = panel_of(cells, names, panel)
    notes = _notes(cells, table, dropped, panel)
    if not table.questions:
        return Finding("effects", TITLE, COLUMNS, (), (*notes, "no fit: no question to compare on"))
    estimate = fit(table.y)
    if not np.isfinite(estimate.beta).all():
        return Finding(
            "effects",
            TITLE,
            COLUMNS,
            (),
            (*notes, "no fit: the questions do not link every forecaster"),
        )
    samples, note = _bootstrap(table, replicates, seed)
    body = _rows(table, cells, estimate, samples)
    return Finding(
        "effects",
        TITLE,
        COLUMNS,
        body,
        (*notes, *_fit_notes(table, estimate), *([note] if note else ())),
    )


TITLE = "Difficulty-adjusted Brier (two-way fixed effects: question × forecaster)"


def _bootstrap(table: Panel, replicates: int, seed: int) -> tuple[np.ndarray | None, str | None]:
    """replicates × F adjusted Briers, the fit redone on each market resample
    (None under 5 markets)."""
    codes, n_markets = bootstrap.market_codes([m for m, _ in table.questions])
    if vs_market.too_few(n_markets):
        return (
            None,
            f"n too small: {n_markets} market{'' if n_markets == 1 else 's'} (< "
            f"{vs_market.MIN_MARKETS}), no interval",
        )
    # float64 counts already (draw_weights): indexed by question, not copied again
    draws = bootstrap.draw_weights(n_markets, replicates, bootstrap.rng_for(seed, "effects"))[
        :, codes
    ]
    if table.balanced:
        return (draws @ table.y) / draws.sum(axis=1, keepdims=True), None
    reduced = _Reduced.of(table.y)
    samples = np.array([reduced.fit(w).adjusted for w in draws])
    bad = int((~np.isfinite(samples)).any(axis=1).sum())
    return samples, (
        f"{bad} of {replicates} replicates drew none of a forecaster's markets or left the "
        "forecasters unlinked: that forecaster's estimate is missing from them"
        if bad
        else None
    )


def _rows(
    table: Panel, cells: _Cells, estimate: Fit, samples: np.ndarray | None
) -> tuple[tuple, ...]:
    out = []
    for j, f in enumerate(table.forecasters):
        own = np.isfinite(table.y[:, j])
        ci = None if samples is None else bootstrap.percentile_interval(samples[:, j])
        adjusted = float(estimate.adjusted[j])
        out.append(
            (
                f,
                int(own.sum()),
                len({table.questions[i][0] for i in np.flatnonzero(own)}),
                cells.failed.get(f, 0),
                float(table.y[own, j].mean()),
                adjusted,
                ci and ci.low,
                ci and ci.high,
                brier_index(adjusted),
                ci and brier_index(ci.high),
                ci and brier_index(ci.low),
                float(estimate.beta[j]),
            )
        )
    return tuple(sorted(out, key=lambda r: (r[5], r[0])))


def _notes(cells: _Cells, table: Panel, dropped: list[str], panel: str) -> tuple[str, ...]:
    asked = set().union(*(set(q) for q in cells.briers.values())) if cells.briers else set()
    failed = sum(cells.failed.values())
    markets = {m for m, _ in table.questions}
    lines = [
        f"{len(table.questions)} questions (market × t0) on {len(markets)} markets, "
        f"{len(table.forecasters)} forecasters, panel {panel}"
        + (
            " (questions every forecaster answered with a valid probability)"
            if panel == "matched"
            else ""
        ),
        "a forecaster's valid repeats of a question are averaged first (one Brier per "
        "question × forecaster)",
        f"failures excluded, never imputed: {failed}"
        + (
            " (" + ", ".join(f"{f}: {n}" for f, n in sorted(cells.failed.items())) + ")"
            if failed
            else ""
        ),
    ]
    if len(asked) > len(table.questions):
        lines.append(
            f"{len(asked) - len(table.questions)} questions left out (not answered validly by "
            "every "
            f"forecaster{', or without a market price' if MARKET in table.forecasters else ''})"
        )
    if dropped:
        lines.append("forecasters dropped: " + "; ".join(dropped))
    return tuple(lines)


def _fit_notes(table: Panel, estimate: Fit) -> tuple[str, ...]:
    share = question_share(table.y)
    how = (
        "balanced: closed form, beta_f = mean_f - grand mean, so adjusted = raw Brier on the "
        "matched rows"
        if table.balanced
        else "unbalanced: least squares (question effects absorbed, numpy lstsq)"
    )
    return (
        "model Brier = mu + alpha_question + beta_forecaster, sum-to-zero coding; mu = "
        f"{estimate.mu:.6g}; {how}",
        "question share of score variance: "
        + ("n/a (no variance)" if share is None else f"{share:.3f}")
        + " (between-question sum of squares / total sum of squares)",
        "Brier Index = 100·(1 − √adjusted Brier); interval: market-clustered bootstrap, fit "
        "redone per replicate",
    )
