"""Would polars frames make scoring aggregation faster? Measured, in one run, on the rows of
`benchmarks/scoring.py` (100,000 forecasts, 5,000 markets; a few failures and missing market
prices so the filters matter).

It times the whole `leaderboard` call as shipped, and the one part of it that has the shape of
a frame: turning the scored rows into the bootstrap's inputs (valid and paired rows, p and o,
per-row Brier, market codes, |p − market|), once with lists and numpy as shipped and once
with a polars frame; and the cost of importing polars in a fresh process (a `hindcast
leaderboard` run would pay it). It also checks that the polars inputs are the same bits.

Decision recorded in `hindcast/scoring/aggregate.py`: numpy stays (the frame-shaped part is a
few percent of the call, less than the polars import, and polars' arithmetic is not the same
bits as the per-row Brier the bootstrap uses).

Usage: python benchmarks/scoring_frames.py [--forecasts 100000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from scoring import synthetic_rows

from hindcast.scoring import aggregate, bootstrap

FIELDS = (
    "p",
    "o",
    "codes",
    "n_markets",
    "brier",
    "own_brier",
    "market_brier",
    "paired_codes",
    "n_paired",
    "abs_diff",
)


def rows_with_gaps(n: int) -> list[aggregate.ScoredRow]:
    rows = synthetic_rows(n)
    rows = [
        r if i % 37 else replace(r, probability=None, error="timeout") for i, r in enumerate(rows)
    ]
    return [r if i % 23 else replace(r, market_price=None) for i, r in enumerate(rows)]


def with_lists(rows) -> tuple:
    """What `aggregate.summarise` does today."""
    valid = [r for r in rows if r.probability is not None]
    paired = [r for r in valid if r.market_price is not None]
    p, o = aggregate._arrays(valid)
    codes, n = bootstrap.market_codes([r.market_id for r in valid])
    pcodes, pn = bootstrap.market_codes([r.market_id for r in paired])
    return (
        p,
        o,
        codes,
        n,
        np.array([r.brier for r in valid]),
        np.array([r.brier for r in paired], float),
        np.array([r.market_brier for r in paired], float),
        pcodes,
        pn,
        np.abs([r.probability - r.market_price for r in paired]),
    )


def with_polars(rows, same_bits: bool = False) -> tuple:
    """The same inputs from a polars frame; `same_bits`: the squared errors taken per row in
    Python as `ScoredRow.brier` does (libm pow), since polars' (and numpy's) squares differ from
    it in the last bit for about 1 row in 1,000."""
    import polars as pl

    columns = {
        "market_id": [r.market_id for r in rows],
        "p": [r.probability for r in rows],
        "o": [r.outcome for r in rows],
        "m": [r.market_price for r in rows],
    }
    if same_bits:
        columns |= {
            "brier": [r.brier for r in rows],
            "market_brier": [r.market_brier for r in rows],
        }
    df = pl.DataFrame(
        columns, schema={n: pl.Utf8 if n == "market_id" else pl.Float64 for n in columns}
    )
    if not same_bits:
        df = df.with_columns(
            ((pl.col("p") - pl.col("o")) ** 2).alias("brier"),
            ((pl.col("m") - pl.col("o")) ** 2).alias("market_brier"),
        )
    code = (pl.col("market_id").rank("dense") - 1).cast(pl.Int64).alias("code")
    valid = df.filter(pl.col("p").is_not_null()).with_columns(code)
    paired = valid.filter(pl.col("m").is_not_null()).with_columns(
        code, (pl.col("p") - pl.col("m")).abs().alias("d")
    )
    return (
        valid["p"].to_numpy(),
        valid["o"].to_numpy(),
        valid["code"].to_numpy(),
        valid["market_id"].n_unique(),
        valid["brier"].to_numpy(),
        paired["brier"].to_numpy(),
        paired["market_brier"].to_numpy(),
        paired["code"].to_numpy(),
        paired["market_id"].n_unique(),
        paired["d"].to_numpy(),
    )


def best_of(fn, rows, times: int = 5) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        fn(rows)
        spent.append(time.perf_counter() - start)
    return min(spent)


def differing(a: tuple, b: tuple) -> list[str]:
    return [
        name
        for name, x, y in zip(FIELDS, a, b)
        if (
            x != y
            if isinstance(x, int)
            else np.asarray(x).tobytes() != np.asarray(y, dtype=x.dtype).tobytes()
        )
    ]


def polars_import_s() -> float:
    code = "import time; s = time.perf_counter(); import polars; print(time.perf_counter() - s)"
    return float(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--forecasts", type=int, default=100_000)
    args = parser.parse_args()
    rows = rows_with_gaps(args.forecasts)
    whole = best_of(lambda r: aggregate.leaderboard(r), rows, 3)
    lists, frames = best_of(with_lists, rows), best_of(with_polars, rows)
    exact = best_of(lambda r: with_polars(r, same_bits=True), rows)
    print(f"forecasts: {len(rows):,}; best of runs, same process")
    print(f"leaderboard() as shipped (2,000 replicates):   {whole * 1000:7.1f} ms")
    print(f"  row preparation, lists + numpy (shipped):    {lists * 1000:7.1f} ms")
    print(f"  row preparation, polars frame:               {frames * 1000:7.1f} ms")
    print(f"  row preparation, polars, Brier per row:      {exact * 1000:7.1f} ms (same bits)")
    print(f"import polars (fresh process):                 {polars_import_s() * 1000:7.1f} ms")
    shipped = with_lists(rows)
    print(
        "polars inputs differing in bits from shipped: "
        f"{differing(shipped, with_polars(rows)) or 'none'}; with Brier per row: "
        f"{differing(shipped, with_polars(rows, same_bits=True)) or 'none'}"
    )


if __name__ == "__main__":
    main()
