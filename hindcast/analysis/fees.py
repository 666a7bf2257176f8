"""The fee schedule trades pay (hindcast/analysis/fees.toml, or a TOML file of the same shape):
`load_fees` reads and checks it into a FeeSchedule."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path

from hindcast.errors import ConfigError

SHIPPED_FEES = "shipped fees.toml"


@dataclass(frozen=True)
class FeeSchedule:
    default_rate: float
    rates: tuple[tuple[str, float], ...] = ()
    exponent: float = 1.0
    origin: str = SHIPPED_FEES
    source: str = ""

    def rate(self, topic: str) -> float:
        return dict(self.rates).get(topic.lower(), self.default_rate)

    def per_share(self, yes_price: float, topic: str) -> Fraction:
        """The fee of one share at this YES price (either side: the formula is symmetric)."""
        return Fraction(self.per_share_value(yes_price, topic))

    def per_share_value(self, yes_price: float, topic: str) -> float:
        """`per_share` as the float it is exactly."""
        return self.rate(topic) * (yes_price * (1.0 - yes_price)) ** self.exponent

    def to_json(self) -> dict:
        return {
            "origin": self.origin,
            "source": self.source,
            "default_rate": self.default_rate,
            "exponent": self.exponent,
            "rates": dict(self.rates),
        }


def load_fees(path: Path | None = None) -> FeeSchedule:
    """The shipped schedule, or a user's file in its place (a whole schedule, not an overlay)."""
    if path is None:
        return _schedule(
            resources.files("hindcast.analysis").joinpath("fees.toml").read_text(encoding="utf-8"),
            SHIPPED_FEES,
        )
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"fee schedule {path}: {getattr(exc, 'strerror', None) or exc}") from None
    return _schedule(text, str(path))


def _schedule(text: str, origin: str) -> FeeSchedule:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"fee schedule {origin}: {exc}") from None
    unknown = sorted(set(raw) - {"default_rate", "exponent", "rates", "source"})
    if unknown or "default_rate" not in raw:
        raise ConfigError(
            f"fee schedule {origin}: "
            + (
                f"unknown key(s) {', '.join(unknown)}"
                if unknown
                else "needs default_rate = RATE (0 for no fees)"
            )
        )
    return FeeSchedule(
        _rate(raw["default_rate"], "default_rate", origin),
        _rates(raw.get("rates", {}), origin),
        _exponent(raw.get("exponent", 1), origin),
        origin,
        str(raw.get("source", "")),
    )


def _rates(table, origin: str) -> tuple[tuple[str, float], ...]:
    if not isinstance(table, dict):
        raise ConfigError(f"fee schedule {origin}: [rates] must be a table of topic = rate")
    return tuple(sorted((str(k).lower(), _rate(v, f"rates.{k}", origin)) for k, v in table.items()))


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _rate(value, name: str, origin: str) -> float:
    if not (_number(value) and 0.0 <= value <= 1.0):
        raise ConfigError(f"fee schedule {origin}: {name} = {value!r} is not a rate in [0, 1]")
    return float(value)


def _exponent(value, origin: str) -> float:
    if not (_number(value) and value > 0):
        raise ConfigError(f"fee schedule {origin}: exponent = {value!r} is not a positive number")
    return float(value)
