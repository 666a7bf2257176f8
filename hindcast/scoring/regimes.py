"""Knowledge-cutoff regimes (FinForesight): was the outcome possibly in the model's training data?

- `T1`: t0 and the resolution both before the model's knowledge cutoff — the model may
  have memorised the outcome; a good score here proves little.
- `mixed`: t0 before the cutoff, resolved after it.
- `T2`: t0 after the cutoff — a genuine forecast.
- `unknown`: the model is not in the registry; `n/a`: the forecaster names no model.
"""

from __future__ import annotations

import tomllib
from datetime import date, datetime, timezone
from importlib import resources
from pathlib import Path

from hindcast.errors import HindcastError

UTC = timezone.utc


def load_cutoffs(override: Path | None = None) -> dict[str, datetime]:
    """The shipped registry, with a user's file (same format) laid over it."""
    table = _parse(resources.files("hindcast.scoring").joinpath("model_cutoffs.toml").read_text(encoding="utf-8"), "shipped")
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


def regime(model: str | None, t0: datetime, resolved_at: datetime, cutoffs: dict[str, datetime]) -> str:
    if model is None:
        return "n/a"
    cutoff = cutoffs.get(model.lower()) or cutoffs.get(model.rpartition(":")[2].rpartition("#")[2].lower())
    if cutoff is None:
        return "unknown"
    if resolved_at < cutoff:
        return "T1"
    return "mixed" if t0 < cutoff else "T2"
