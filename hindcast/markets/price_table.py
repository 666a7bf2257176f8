"""A store version's prices.parquet read by columns (issue 39: 10,000 markets, 414,171 points).

Reading it row by row (`to_pylist`, then a `PricePoint` each, validated one at a time) took
~30 s of a 10,000-market sweep's prepare step on 2 loaded cores; here the columns are read
whole, the prices validated at once (finite, in [0, 1]: the rule `PricePoint` applies) and
the instants made from their microseconds in UTC (what `PricePoint` would have made of them).
Same histories, same order (`sort_history`: by time, two points at one instant refused).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from hindcast.markets.prices import sort_history
from hindcast.records import PricePoint

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["read_parquet", "read_prices", "read_rows"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def read_rows(path: Path) -> list[dict]:
    """A Parquet file's rows as dicts (what `pq.read_table(path).to_pylist()` gives), without
    importing pandas, which pyarrow does twice on that path (~0.2-0.3 s of every command that
    opens a store): the file is read by `pq.ParquetFile`, not through pyarrow.dataset, and its
    UTC microsecond instants are made here (aware UTC datetimes: the records' own zone)."""
    import pyarrow as pa

    table = read_parquet(path)
    columns = {
        name: _instants(column) if column.type == pa.timestamp("us", "UTC") else column.to_pylist()
        for name, column in zip(table.column_names, table.columns)
    }
    return [dict(zip(columns, values)) for values in zip(*columns.values())]


def read_parquet(path: Path, columns: list[str] | None = None) -> pa.Table:
    """A Parquet file's table, read by `pq.ParquetFile` (`pq.read_table` imports pandas)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as file:
        return file.read(columns=columns)


def _floats(column: pa.ChunkedArray) -> np.ndarray:
    """A float64 column without nulls as a numpy array, read from its buffer (pyarrow's own
    `to_numpy` imports pandas)."""
    import numpy as np

    array = column.combine_chunks()
    return np.frombuffer(array.buffers()[1], np.float64, len(array), array.offset * 8)


def _instants(column: pa.ChunkedArray) -> list[datetime | None]:
    import pyarrow as pa

    micros = column.cast(pa.int64()).to_pylist()
    return [None if us is None else _EPOCH + timedelta(microseconds=us) for us in micros]


def read_prices(path: Path) -> dict[str, tuple[PricePoint, ...]]:
    """Market id → its price history sorted by time, from a prices.parquet (market_id, t, p)."""
    import numpy as np
    import pyarrow as pa

    table = read_parquet(path, ["market_id", "t", "p"])
    if any(table.column(n).null_count for n in ("market_id", "t", "p")):
        raise ValueError(f"{path}: a price row without its market, instant or price")
    prices = _floats(table.column("p"))
    good = np.isfinite(prices) & (prices >= 0.0) & (prices <= 1.0)
    if not good.all():
        raise ValueError(f"price {float(prices[np.argmin(good)])!r} outside [0, 1]")
    micros = table.column("t").cast(pa.timestamp("us", "UTC")).cast(pa.int64()).to_pylist()
    instants = {us: _EPOCH + timedelta(microseconds=us) for us in set(micros)}  # daily: shared
    grouped: dict[str, list[PricePoint]] = {}
    for market, us, p in zip(table.column("market_id").to_pylist(), micros, prices.tolist()):
        grouped.setdefault(market, []).append(_point(instants[us], p))
    return {market: sort_history(points) for market, points in grouped.items()}


def _point(t: datetime, p: float) -> PricePoint:
    """A PricePoint of values already checked (an aware UTC instant, a price in [0, 1])."""
    point = object.__new__(PricePoint)
    object.__setattr__(point, "t", t)
    object.__setattr__(point, "p", p)
    return point
