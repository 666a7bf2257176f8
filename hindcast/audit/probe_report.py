"""The probe's rates per model and regime, as a Finding (what `hindcast probe recall` prints,
what its JSON holds, what a report can render).

Per (model, regime) and per model over all regimes ("all"): the markets probed; for each
question kind, the valid answers, the hits (correct and confident, see `audit.probe`), the
share hits / valid answers, and the failures (unreadable answers: counted, never in the
share's denominator, never imputed). A share over no valid answer is None ("–").
"""

from __future__ import annotations

from collections.abc import Iterable

from hindcast.audit.probe import RECALL_CONFIDENCE, T0_EXTREME, ProbeAnswer
from hindcast.scoring import REGIMES, Finding

REGIME_ORDER = tuple(REGIMES)
COLUMNS = (
    "model",
    "regime",
    "markets",
    "after answered",
    "recalled",
    "recall share",
    "after failures",
    "t0 answered",
    "t0 confident+correct",
    "t0 share",
    "t0 failures",
)


def recall_finding(answers: Iterable[ProbeAnswer]) -> Finding:
    answers = list(answers)
    rows = []
    for model in sorted({a.model for a in answers}):
        mine = [a for a in answers if a.model == model]
        present = {a.regime for a in mine}
        for regime in sorted(present, key=_regime_rank):
            rows.append(_row(model, regime, [a for a in mine if a.regime == regime]))
        rows.append(_row(model, "all", mine))
    notes = (
        (
            "recalled: asked plainly after resolution, the model names the real outcome with "
            f"confidence ≥ {RECALL_CONFIDENCE:g} (these (model, market) pairs are what "
            "--exclude-recalled drops)"
        ),
        (
            "t0 confident+correct: asked at t0 to use only earlier knowledge, p ≥ "
            f"{T0_EXTREME:g} on a YES market or p ≤ {1 - T0_EXTREME:g} on a NO market"
        ),
        "shares are hits / valid answers; unreadable answers are failures, counted apart, "
        "never imputed",
        "regimes at the probe's t0 (model-cutoff registry): "
        + "; ".join(f"{label}: {meaning}" for label, meaning in REGIMES.items()),
    )
    return Finding(
        "recall",
        "Memorisation probe: outcomes the model names correctly and confidently",
        COLUMNS,
        tuple(rows),
        notes,
    )


def _row(model: str, regime: str, answers: list[ProbeAnswer]) -> tuple:
    after = [a for a in answers if a.kind == "after"]
    at_t0 = [a for a in answers if a.kind == "t0"]
    markets = len({a.market_id for a in answers})
    return (model, regime, markets, *_rate(after), *_rate(at_t0))


def _rate(answers: list[ProbeAnswer]) -> tuple:
    valid = [a for a in answers if a.ok]
    hits = sum(a.hit for a in valid)
    share = hits / len(valid) if valid else None
    return len(valid), hits, share, len(answers) - len(valid)


def _regime_rank(regime: str) -> tuple:
    return (REGIME_ORDER.index(regime) if regime in REGIME_ORDER else len(REGIME_ORDER), regime)
