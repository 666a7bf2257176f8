"""The projected approximate index (`hindcast.archive.ann_projected`, issue 37): closed months
probed by a fixed reference projection and a constant threshold. A post-t0 edit or a document
created after t0 changes no other document of a search at t0, at every threshold; the
threshold that probes every row is the exact search; top-k is never short; the build is
recorded in index.json, idempotent, and reads no archive document for its projection."""

from __future__ import annotations

import functools
import itertools
import json
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindcast.archive import ann, ann_index, ann_projected, projection
from hindcast.errors import ConfigError

from .test_ann import JAN_2024_US, WORLD_CASES, _counterfactual, _months, _search, _vectors, _worlds

THRESHOLDS = [-np.inf, -2.0, -0.5, 0.0, 0.3, 1.0, 2.5, 6.0, np.inf]
HEAD_THRESHOLDS = [-np.inf, -1.0, 0.0, 0.5, 2.0]
HEAD = 3


@functools.cache
def _projection(dims: int, keep: int = 6) -> projection.Projection:
    """A fixed projection for synthetic archives: trained on a reference drawn by a generator
    of its own (seed 99), never from a test archive."""
    return projection.train(_vectors(4000, dims, 99, topics=9), {"reference": "test"}, dims=keep)


def _built(root, archive, dims: int = 8) -> dict:
    """An index root holding `archive`'s months, its projected index built by `ann_index.build`."""
    months = _months(root, archive)
    projection.save(root / projection.FOLDER, _projection(dims))
    _build(root)
    return {month: ann.load_month(root / "vectors" / f"month={month}") for month in months}


def _build(root) -> None:
    with mock.patch.object(ann_projected, "HEAD", HEAD):  # two levels in these 6 dims
        ann_index.build(root, partition="projection")


def _at(indexes: dict, threshold: float, head_threshold: float) -> dict:
    return {
        month: ann_projected.at(index, threshold, head_threshold)
        for month, index in indexes.items()
    }


@settings(
    max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(**WORLD_CASES)
def test_a_post_t0_edit_changes_no_other_document_of_a_projected_search(
    tmp_path_factory, seed, sizes, t0_frac, n
):
    """The reporter's counterfactual (issue 24) for the projected index: the archive with X
    edited after t0 and documents added after t0, against the same archive where the X were
    never edited. At every threshold, the first returns exactly the second's documents, order
    and scores with the X taken out; at -inf (every row probed) both are the exact search;
    neither is ever short."""
    case = _counterfactual(tmp_path_factory, seed, sizes, t0_frac, _built)
    rng, t0, edited, never, xs, built = case
    assert all(isinstance(i, ann_projected.Projected) for i in built[0].values())
    eligible = sum(int(((created < t0) & (edit < t0)).sum()) for _, _, _, created, edit in edited)
    for q in rng.standard_normal((3, 8)).astype(np.float32):
        exact = _search(edited, built[0], t0, q, n, None)
        assert len(exact) == min(n, eligible)
        for threshold, head_threshold in itertools.product(THRESHOLDS, HEAD_THRESHOLDS):
            indexes = [_at(b, threshold, head_threshold) for b in built]
            got = _search(edited, indexes[0], t0, q, n, 1)
            wider = _search(never, indexes[1], t0, q, n + len(xs), 1)
            assert got == [hit for hit in wider if hit[1] not in xs][:n], threshold
            assert len(got) == len(exact), threshold
            if threshold == head_threshold == -np.inf:
                assert got == exact


@settings(max_examples=60, deadline=None, database=None)
@given(
    seed=st.integers(0, 10_000),
    threshold=st.floats(-1.5, 2.5),
    head_threshold=st.floats(-1.5, 2.5),
    cut=st.integers(0, 299),
)
def test_a_row_is_probed_by_its_own_two_projected_scores_alone(
    seed, threshold, head_threshold, cut
):
    """Membership is, row by row, scale · (head · Pq[:h]) ≥ head threshold and scale · (code ·
    Pq) ≥ threshold: the same rows whatever other rows the month holds (a month cut short,
    rows masked), and exactly the rows a plain computation of the two scores picks."""
    vectors = _vectors(300, 8, seed)
    made = _projection(8)
    levels = {"head": HEAD, "head_threshold": head_threshold}
    index = ann_projected.fit(vectors, 0, made, threshold, ann.FORMAT, **levels)
    q = np.random.default_rng(seed + 1).standard_normal(8).astype(np.float32)
    never = np.full(300, np.iinfo(np.int64).min)
    alone = ann_projected.candidates(index, q, never, None)
    edit = never.copy()
    edit[::3] = 10  # masked at t0 = 10
    masked = ann_projected.candidates(index, q, edit, 10)
    assert set(masked) == set(alone) - set(range(0, 300, 3))
    part = ann_projected.fit(vectors[cut:], 0, made, threshold, ann.FORMAT, **levels)
    assert set(ann_projected.candidates(part, q, never[cut:], None) + cut) == {
        p for p in alone if p >= cut
    }
    qp = (q @ made.matrix).astype(np.float64)
    scales = np.asarray(index.scales, dtype=np.float64)
    head = scales * (np.asarray(index.head, dtype=np.float64) @ qp[:HEAD])
    whole = head + scales * (np.asarray(index.tail, dtype=np.float64) @ qp[HEAD:])
    clear = (np.abs(head - head_threshold) > 1e-4) & (np.abs(whole - threshold) > 1e-4)
    want = (head >= head_threshold) & (whole >= threshold)
    assert set(alone) & set(np.flatnonzero(clear)) == set(np.flatnonzero(want & clear))


def test_the_first_level_reads_only_the_head_and_the_defaults_are_recorded():
    """The head holds each row's first `HEAD` code dimensions and the tail the rest (one scale
    a row); with no first level (head threshold -inf) the probed rows are those of the whole
    code's score alone."""
    vectors = _vectors(200, 8, 4)
    made = _projection(8)
    index = ann_projected.fit(vectors, 0, made, 0.3, ann.FORMAT, head=HEAD)
    assert index.head.shape == (200, HEAD) and index.tail.shape == (200, made.dims - HEAD)
    assert index.meta["head"] == HEAD
    assert index.meta["head_threshold"] == ann_projected.HEAD_THRESHOLD
    q = np.random.default_rng(2).standard_normal(8).astype(np.float32)
    never = np.full(200, np.iinfo(np.int64).min)
    rough = np.asarray(index.scales) * (
        np.concatenate([index.head, index.tail], axis=1).astype(np.float32) @ (q @ made.matrix)
    )
    alone = ann_projected.candidates(ann_projected.at(index, 0.3, -np.inf), q, never, None)
    assert 0 < alone.size < 200
    assert rough[alone].min() >= 0.3 - 1e-5 and np.delete(rough, alone).max() < 0.3 + 1e-5
    fewer = ann_projected.candidates(ann_projected.at(index, 0.3, 0.5), q, never, None)
    assert set(fewer) <= set(alone)


def test_the_projected_build_is_recorded_idempotent_and_its_projection_reads_no_document(
    tmp_path,
):
    rng = np.random.default_rng(3)
    edited, _, _ = _worlds(rng, [40, 60, 30], JAN_2024_US + 80 * 86_400_000_000)
    _built(tmp_path / "a", edited)
    info = json.loads((tmp_path / "a" / "index.json").read_text(encoding="utf-8"))
    assert info["ann"]["partition"] == "projection"
    assert info["ann"]["projection"] == _projection(8).id
    assert info["ann"]["lists"] == {"2024-01": 1, "2024-02": 1, "2024-03": 1}
    assert info["ann"]["head"] == HEAD
    assert info["ann"]["head_threshold"] == ann_projected.HEAD_THRESHOLD
    files = {p: p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    _build(tmp_path / "a")
    assert {p: p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()} == files
    other = [(m, ids, v[::-1].copy(), c, e) for m, ids, v, c, e in edited]  # other documents
    _built(tmp_path / "b", other)
    matrix = [
        np.load(tmp_path / w / "vectors" / "month=2024-01" / "ann" / "matrix.npy") for w in "ab"
    ]
    assert np.array_equal(matrix[0], matrix[1])
    with pytest.raises(ConfigError, match="partition 'graph': use codebook or projection"):
        ann_index.build(tmp_path / "a", partition="graph")
