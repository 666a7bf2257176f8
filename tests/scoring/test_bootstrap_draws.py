"""The market bootstrap's draws, counted in blocks (issue 39: 2,000 × 10,000 resamples per cell
were the cost of `hindcast analyze` at scale), are the draws of the seeded stream as before, to
the bit: the same counts as one bincount of the whole int64 matrix, and a strata cell's interval
is the percentile interval of those draws' replicate means computed here independently."""

from __future__ import annotations

import zlib
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from hindcast.analysis import strata
from hindcast.scoring import ScoredRow, bootstrap


def reference_counts(n: int, replicates: int, seed: int, key: str) -> np.ndarray:
    """The whole replicates × n matrix at once from the (seed, crc32(key)) stream: int64 draws,
    one bincount (the counting before issue 39)."""
    rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])
    picks = rng.integers(0, n, size=(replicates, n))
    flat = (picks + (np.arange(replicates) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=replicates * n).reshape(replicates, n)


SIZES = [(1, 7), (5, 2000), (33, 101), (4_099, 300), (40_000, 9), (10_000, 500), (50_000, 90)]


def test_the_sizes_cover_both_ways_of_counting():
    assert {n * r >= bootstrap.COMPILED for n, r in SIZES} == {True, False}


@pytest.mark.parametrize(("n", "replicates"), SIZES)
def test_the_block_counted_draws_are_the_whole_matrix_counts(n, replicates):
    """Counted by bincount under bootstrap.COMPILED draws, by the compiled loop from it on."""
    drawn = bootstrap.draw_weights(n, replicates, bootstrap.rng_for(3, "k"))
    expected = reference_counts(n, replicates, 3, "k")
    assert drawn.shape == expected.shape and np.array_equal(drawn, expected)
    assert drawn.sum(axis=1).tolist() == [n] * replicates


def test_a_matrix_still_held_is_never_drawn_into_again():
    """Large draws reuse the memory of the last matrix once nothing holds it: one held whole,
    or through a view of some of its rows, keeps its counts when the next matrices are drawn;
    dropped, its memory is reused and the counts drawn into it are still the stream's."""
    n, replicates = 3_000, 1_500  # over COMPILED: the compiled way, the kept matrix
    assert n * replicates >= bootstrap.COMPILED
    first = bootstrap.draw_weights(n, replicates, bootstrap.rng_for(5, "a"))
    second = bootstrap.draw_weights(n, replicates, bootstrap.rng_for(5, "b"))
    assert not np.shares_memory(first, second)
    rows_of_second = second[7:9]
    del second
    third = bootstrap.draw_weights(n, replicates, bootstrap.rng_for(5, "c"))
    assert not np.shares_memory(third, rows_of_second)
    assert np.array_equal(first, reference_counts(n, replicates, 5, "a"))
    assert np.array_equal(rows_of_second, reference_counts(n, replicates, 5, "b")[7:9])
    address = third.__array_interface__["data"][0]
    del third
    fourth = bootstrap.draw_weights(n, replicates - 1, bootstrap.rng_for(5, "d"))
    assert fourth.__array_interface__["data"][0] == address  # reused: nothing held it
    assert np.array_equal(fourth, reference_counts(n, replicates - 1, 5, "d"))


T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def rows(n_markets: int) -> list[ScoredRow]:
    rng = np.random.default_rng(11)
    out = []
    for i in range(n_markets):
        outcome = float(rng.random() < 0.5)
        for k in range(int(rng.integers(1, 4))):  # 1–3 rows a market: clustered, unbalanced
            p, price = float(rng.random()), float(rng.uniform(0.31, 0.69))
            out.append(
                ScoredRow(
                    "f", f"m{i:05d}", T + timedelta(days=k), "f=0.5", "t", p, None, outcome, price
                )
            )
    return out


def test_a_strata_cell_interval_is_the_percentile_of_the_seeded_draws_to_the_bit():
    """The toss-up cell at f=0.5: its Brier interval from the reference draws of the cell's key,
    computed here (per-market sums and counts, ratio, 2.5/97.5 percentiles): exactly equal."""
    scored = rows(700)
    cell = next(r for r in strata.strata(scored).rows if r[1] == "f=0.5" and r[2] == strata.TOSS_UP)
    markets = sorted({r.market_id for r in scored})
    code = {m: i for i, m in enumerate(markets)}
    codes = np.array([code[r.market_id] for r in scored])
    briers = np.array([(r.probability - r.outcome) ** 2 for r in scored])
    sums = np.bincount(codes, weights=briers, minlength=len(markets))
    counts = np.bincount(codes, minlength=len(markets)).astype(float)
    w = reference_counts(len(markets), 2000, 0, "strata|f|f=0.5|toss-up|brier")
    low, high = np.percentile((w @ sums) / (w @ counts), [2.5, 97.5])
    column = dict(zip(strata.STRATA_COLUMNS, cell))
    assert (column["brier_ci_low"], column["brier_ci_high"]) == (float(low), float(high))
    assert column["brier"] == float(briers.mean())
