"""Knowledge-cutoff regimes (FinForesight): was the outcome possibly in the model's training data?

With c the model's knowledge cutoff (model-cutoff registry), t0 the cutoff instant of the
forecast and r the market's effective resolution (always t0 < r: a later t0 is refused):

    label     rule                          meaning
    T1        r < c                         resolved before the cutoff: the model may have
                                            memorised it
    T2        t0 < c <= r                   asked before the cutoff, resolved at or after it
    T3        c <= t0  (hence c < r)        asked and resolved after the cutoff: a genuine forecast
    unknown   model not in the registry     never guessed
    n/a       the forecaster names no model (baselines)

Until issue 16 the labels were T1 / mixed / T2; T2 is now what was `mixed` and T3 what was T2
(t0 AND resolution after the cutoff). Regimes are computed when a run is scored, never
stored, so rescoring an older run shows the new labels.
The boundary is inclusive: an instant exactly at the cutoff counts as after it (the cutoff
is the first day not in the training data).
"""

from __future__ import annotations

import tomllib
from datetime import date, datetime, timezone
from importlib import resources
from pathlib import Path

from hindcast.errors import HindcastError

UTC = timezone.utc
REGIMES = {
    "T1": "resolved before the model's cutoff (the outcome may be memorised)",
    "T2": "t0 before the cutoff, resolved at or after it",
    "T3": "t0 (hence the resolution) at or after the cutoff: a genuine forecast",
    "unknown": "model not in the cutoff registry",
    "n/a": "no model (a baseline)",
}


def load_cutoffs(override: Path | None = None) -> dict[str, datetime]:
    """The shipped registry, with a user's file (same format) laid over it."""
    table = _parse(
        resources.files("hindcast.scoring")
        .joinpath("model_cutoffs.toml")
        .read_text(encoding="utf-8"),
        "shipped",
    )
    if override is not None:
        try:
            table.update(_parse(Path(override).read_text(encoding="utf-8"), str(override)))
        except OSError as exc:
            raise HindcastError(f"model registry {override}: {exc}") from exc
    return table


def _parse(text: str, origin: str) -> dict[str, datetime]:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HindcastError(f"model registry {origin}: {exc}") from exc
    table = {}
    for name, value in raw.items():
        if not isinstance(value, date):
            raise HindcastError(f"model registry {origin}: {name!r} needs a date, got {value!r}")
        table[name.lower()] = datetime(value.year, value.month, value.day, tzinfo=UTC)
    return table


def model_of(forecaster_spec: str, provenance: dict | None = None) -> str | None:
    """The model a forecaster uses: its provenance's `model`, else its spec's `model=` parameter."""
    if provenance and provenance.get("model"):
        return str(provenance["model"])
    _, _, params = forecaster_spec.partition(":")
    for item in params.split(","):
        key, _, value = item.partition("=")
        if key.strip() == "model":
            return value.strip()
    return None


def regime(
    model: str | None, t0: datetime, resolved_at: datetime, cutoffs: dict[str, datetime]
) -> str:
    """The label of a forecast at t0 of a market resolved at `resolved_at` (table above)."""
    if model is None:
        return "n/a"
    cutoff = cutoffs.get(model.lower()) or cutoffs.get(
        model.rpartition(":")[2].rpartition("#")[2].lower()
    )
    if cutoff is None:
        return "unknown"
    if resolved_at < cutoff:
        return "T1"
    return "T2" if t0 < cutoff else "T3"
