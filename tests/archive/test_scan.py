"""The two-stage vector scan: its first-stage error bound holds, and its top-n is exactly the
brute-force top-n (ties to the earlier row), including when the first candidates are not
enough and the scan has to widen, with masked rows, duplicates and short prefixes."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hindcast.archive import scan

NEVER = np.iinfo(np.int64).min


def _unit(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms > 0, norms, 1)).astype(np.float32)


def _month(vectors: np.ndarray, edit_us: np.ndarray) -> scan.Vectors:
    codes, scales = scan.quantize(vectors)
    return scan.Vectors(vectors, codes, scales, edit_us, float(scales.max(initial=0.0)))


def brute(vectors, edit_us, q, end, t0_us, n) -> list[tuple[float, int]]:
    """The oracle: float64 scores of every row (a row's score does not depend on the others),
    masked rows dropped, best first, ties to the earlier row."""
    scores = (vectors[:end].astype(np.float64) * q.astype(np.float64)).sum(axis=1)
    keep = np.arange(end) if t0_us is None else np.flatnonzero(edit_us[:end] < t0_us)
    order = np.lexsort((keep, -scores[keep]))[:n]
    return [(float(scores[keep[i]]), int(keep[i])) for i in order]


@st.composite
def cases(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rows, dims = draw(st.integers(1, 1500)), draw(st.sampled_from([3, 16, 384]))
    distinct = draw(st.integers(1, rows))  # few distinct rows: many exact ties
    base = rng.standard_normal((distinct, dims)).astype(np.float32)
    vectors = base[rng.integers(0, distinct, rows)]
    if draw(st.booleans()):  # near-duplicates: scores closer than the first-stage bound
        vectors = vectors + 1e-4 * rng.standard_normal(vectors.shape).astype(np.float32)
    vectors = _unit(vectors)
    if draw(st.booleans()):  # texts without tokens embed as zero rows
        vectors[rng.random(rows) < 0.2] = 0
    edit_us = np.where(rng.random(rows) < 0.3, rng.integers(0, 100, rows), NEVER).astype(np.int64)
    q = (
        vectors[rng.integers(rows)]
        if draw(st.booleans())
        else rng.standard_normal(dims).astype(np.float32)
    )
    end = draw(st.integers(0, rows))
    t0_us = draw(st.one_of(st.none(), st.integers(0, 100)))
    return vectors, edit_us, q, end, t0_us, draw(st.integers(1, 40))


@settings(max_examples=400, deadline=None, database=None)
@given(cases())
def test_top_is_the_exact_top_n(case):
    vectors, edit_us, q, end, t0_us, n = case
    got = scan.top(_month(vectors, edit_us), q, end, t0_us, n)
    want = brute(vectors, edit_us, q, end, t0_us, n)
    assert [p for _, p in got] == [p for _, p in want]
    np.testing.assert_allclose([s for s, _ in got], [s for s, _ in want], rtol=0, atol=1e-12)


def test_the_scan_widens_when_the_first_candidates_cannot_prove_the_top():
    """2,000 near-copies of one vector: the first 64 candidates cannot rule out the rest
    (their first-stage scores are within the error bound), yet the result is exact."""
    rng = np.random.default_rng(5)
    vectors = _unit(
        np.ones((2000, 384), np.float32)
        + 1e-3 * rng.standard_normal((2000, 384)).astype(np.float32)
    )
    edit_us = np.full(2000, NEVER, dtype=np.int64)
    month, q = _month(vectors, edit_us), vectors[0]
    rough = scan.first_stage([(month, 2000)], q, None)[0]
    kth = np.sort(rough)[::-1]
    exact_10th = brute(vectors, edit_us, q, 2000, None, 10)[-1][0]
    assert (
        kth[scan.FIRST_CANDIDATES - 1] + scan.error_bound(month.max_scale, q) >= exact_10th
    )  # not provable at 64
    got, want = scan.top(month, q, 2000, None, 10), brute(vectors, edit_us, q, 2000, None, 10)
    assert [p for _, p in got] == [p for _, p in want]
    np.testing.assert_allclose([s for s, _ in got], [s for s, _ in want], rtol=0, atol=1e-12)


@settings(max_examples=200, deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1), dims=st.sampled_from([1, 7, 384, 1024]), spiky=st.booleans())
def test_first_stage_error_stays_within_the_bound(seed, dims, spiky):
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((300, dims)).astype(np.float32)
    if spiky:  # one large component per row: coarse codes for everything else
        vectors[np.arange(300), rng.integers(0, dims, 300)] *= 50
    vectors = _unit(vectors)
    q = _unit(np.sign(rng.standard_normal((1, dims))).astype(np.float32))[
        0
    ]  # largest ‖q‖₁ for a unit q
    month = _month(vectors, np.full(300, NEVER, dtype=np.int64))
    rough = scan.first_stage([(month, 300)], q, None)[0]
    exact = (vectors.astype(np.float64) * q.astype(np.float64)).sum(axis=1)
    assert np.abs(rough - exact).max() <= scan.error_bound(month.max_scale, q)


def test_codes_of_a_row_depend_on_that_row_alone():
    """No statistic of other documents enters a code: quantizing any subset gives the same rows."""
    rng = np.random.default_rng(9)
    vectors = _unit(rng.standard_normal((5000, 384)).astype(np.float32))
    codes, scales = scan.quantize(vectors)
    pick = rng.choice(5000, 300, replace=False)
    sub_codes, sub_scales = scan.quantize(vectors[pick])
    np.testing.assert_array_equal(sub_codes, codes[pick])
    np.testing.assert_array_equal(sub_scales, scales[pick])
    assert codes.dtype == np.int8 and np.abs(codes).max() == 127


def test_masked_rows_and_zero_vectors():
    vectors = _unit(np.array([[1, 0], [0, 0], [1, 0.1], [0.5, 0.5]], np.float32))
    edit_us = np.array([NEVER, NEVER, 10, NEVER], dtype=np.int64)
    month = _month(vectors, edit_us)
    q = np.array([1, 0], np.float32)
    assert [p for _, p in scan.top(month, q, 4, 10, 10)] == [0, 3, 1]  # row 2 edited at t0: masked
    assert [p for _, p in scan.top(month, q, 4, None, 2)] == [0, 2]
    assert [p for _, p in scan.top(month, np.zeros(2, np.float32), 4, None, 2)] == [
        0,
        1,
    ]  # all tie: earliest
    assert scan.top(month, q, 0, None, 3) == []


def test_several_months_scanned_in_parallel_shares_match_each_month_alone():
    """Enough rows to be split over threads, cut across month boundaries (and an empty month)."""
    rng = np.random.default_rng(11)
    sizes, ends = (9000, 0, 12000, 3000), (9000, 0, 7777, 1)
    months = []
    for size in sizes:
        vectors = _unit(rng.standard_normal((size, 64)).astype(np.float32))
        months.append((vectors, np.where(rng.random(size) < 0.2, 50, NEVER).astype(np.int64)))
    q = _unit(rng.standard_normal((1, 64)).astype(np.float32))[0]
    assert sum(ends) >= scan.PARALLEL_ROWS
    got = scan.top_each([(_month(v, e), end) for (v, e), end in zip(months, ends)], q, 50, 10)
    assert got == [scan.top(_month(v, e), q, end, 50, 10) for (v, e), end in zip(months, ends)]
    for (v, e), end, top in zip(months, ends, got):
        assert [p for _, p in top] == [p for _, p in brute(v, e, q, end, 50, 10)]


def test_concurrent_searches_from_many_threads_agree_with_one_at_a_time():
    """Sweeps search from several worker threads at once; the shared scan pool must not mix them."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(13)
    vectors = _unit(rng.standard_normal((40_000, 32)).astype(np.float32))
    month = _month(vectors, np.full(40_000, NEVER, dtype=np.int64))
    queries = _unit(rng.standard_normal((24, 32)).astype(np.float32))
    alone = [scan.top(month, q, 40_000 - 997 * i, None, 10) for i, q in enumerate(queries)]
    with ThreadPoolExecutor(6) as pool:
        together = list(
            pool.map(lambda i: scan.top(month, queries[i], 40_000 - 997 * i, None, 10), range(24))
        )
    assert together == alone


def test_a_zero_row_gets_scale_zero_and_does_not_loosen_the_bound():
    """A text without tokens embeds as a zero row. It scores exactly 0 on both stages, so it
    must not raise the month's largest scale (the error bound grows with it): with scale 1 a
    month of short texts had a bound above 1 and every search rescored the whole month."""
    rng = np.random.default_rng(3)
    vectors = _unit(rng.standard_normal((500, 384)).astype(np.float32))
    vectors[::7] = 0
    codes, scales = scan.quantize(vectors)
    assert not codes[::7].any() and not scales[::7].any()
    assert scales.max() == scan.quantize(vectors[np.abs(vectors).sum(axis=1) > 0])[1].max()
    month = _month(vectors, np.full(500, NEVER, dtype=np.int64))
    assert scan.first_stage([(month, 500)], vectors[1], None)[0][::7].tolist() == [0.0] * 72


@settings(max_examples=300, deadline=None, database=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(0, 3000),
    count=st.integers(1, 600),
    shape=st.sampled_from(["random", "ascending", "descending", "ties", "masked"]),
)
@example(seed=1, size=2, count=1, shape="masked")  # exactly `count` finite scores: nothing left out
def test_best_picks_the_largest_finite_scores_in_any_order_of_input(seed, size, count, shape):
    """The candidate pick of the exact scan: `count` largest finite scores and their lowest
    score, every score left out ≤ it — whatever the order (ascending input replaces the
    lowest pick at every row) and however many ties."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal(size).astype(np.float32)
    if shape == "ascending":
        scores.sort()
    elif shape == "descending":
        scores = np.sort(scores)[::-1].copy()
    elif shape == "ties":
        scores = rng.integers(0, 4, size).astype(np.float32)
    elif shape == "masked":
        scores[rng.random(size) < 0.7] = -np.inf
    candidates, floor = scan._candidates(scores, count)
    finite = np.sort(scores[scores > -np.inf])[::-1]
    assert len(set(candidates.tolist())) == candidates.size == min(count, finite.size)
    assert np.sort(scores[candidates])[::-1].tolist() == finite[: candidates.size].tolist()
    left_out = np.delete(scores, candidates)
    if finite.size > count:
        assert floor == finite[count - 1] and (left_out <= floor).all()
    else:
        assert floor == -np.inf
