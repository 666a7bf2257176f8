"""Token prices → dollars. A user-editable table like the model-cutoff registry: the shipped
`model_prices.toml`, with a user's file (same format) laid over it. A model missing from
the table costs `None` ("unknown"), never 0."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from hindcast.errors import ConfigError

PER = 1_000_000  # prices are per million tokens


@dataclass(frozen=True)
class Price:
    input: float  # dollars per million prompt tokens
    output: float  # dollars per million completion tokens


@dataclass(frozen=True)
class PriceTable:
    prices: dict[str, Price]

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Dollars for these tokens of `model`, or None when the model has no price."""
        price = self.prices.get(model)
        if price is None:
            return None
        return (int(prompt_tokens) * price.input + int(completion_tokens) * price.output) / PER


def load_prices(override: Path | None = None) -> PriceTable:
    """The shipped table, with a user's file laid over it (its names replace the shipped ones)."""
    text = (
        resources.files("hindcast.scoring")
        .joinpath("model_prices.toml")
        .read_text(encoding="utf-8")
    )
    table = _parse(text, "shipped model_prices.toml")
    if override is not None:
        try:
            table.update(_parse(Path(override).read_text(encoding="utf-8"), str(override)))
        except OSError as exc:
            raise ConfigError(f"price table {override}: {exc.strerror or exc}") from None
    return PriceTable(table)


def _parse(text: str, origin: str) -> dict[str, Price]:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"price table {origin}: {exc}") from None
    return {name: _price(name, value, origin) for name, value in raw.items()}


def _price(name: str, value: Any, origin: str) -> Price:  # a TOML value
    ok = (
        isinstance(value, dict)
        and set(value) == {"input", "output"}
        and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
            for v in value.values()
        )
    )
    if not ok:
        raise ConfigError(
            f"price table {origin}: {name!r} must be {{ input = DOLLARS, output = DOLLARS }} "
            "per million tokens, both ≥ 0"
        )
    return Price(float(value["input"]), float(value["output"]))
