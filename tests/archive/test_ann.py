"""The approximate index of closed months (`hindcast.archive.ann`): exact within the lists it
probes, never short, never past t0, partitioned by a fixed codebook (no archive document; the
data-trained baseline trained only on what was final before the month's end), unmoved by a
post-t0 edit, and built atomically, resumably and idempotently."""

from __future__ import annotations

import functools
import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hindcast.archive import ann, ann_index, ann_month, codebook, layout, scan

NEVER, UNKNOWN = np.iinfo(np.int64).min, np.iinfo(np.int64).max
MONTH = 1_000  # a month lasts 1000 µs in these synthetic archives


def _vectors(rows: int, dims: int, seed: int, topics: int = 6) -> np.ndarray:
    """Clustered float32 rows (a few topics plus noise; duplicates included), some zero."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((topics, dims)).astype(np.float32)
    out = centres[rng.integers(topics, size=rows)] + 0.4 * rng.standard_normal((rows, dims)).astype(
        np.float32
    )
    if rows > 3:
        out[1] = out[0]  # an exact duplicate: a tie broken by position
        out[rows // 2] = 0
    return np.ascontiguousarray(out, dtype=np.float32)


@functools.cache
def _book(dims: int, lists: int = 12) -> tuple[codebook.Codebook, np.ndarray]:
    """A fixed codebook for synthetic archives of `dims` dimensions, and its reference vectors:
    drawn from a generator of its own (seed 99), never from a test archive."""
    reference = _vectors(4000, dims, 99, topics=9)
    return codebook.train(reference, {"test": dims}, lists=lists), reference


def _month(vectors: np.ndarray, edit_us: np.ndarray) -> scan.Vectors:
    codes, scales = scan.quantize(vectors)
    return scan.Vectors(vectors, codes, scales, edit_us, float(scales.max(initial=0.0)))


def _edits(rng: np.random.Generator, created: np.ndarray, end: int) -> np.ndarray:
    """Never edited, edited inside the month, after its end, or at an unknown time."""
    roll = rng.random(created.size)
    edit = np.full(created.size, NEVER, dtype=np.int64)
    edit[roll < 0.3] = created[roll < 0.3] + rng.integers(
        0, 3 * MONTH, size=int((roll < 0.3).sum())
    )
    edit[(roll >= 0.3) & (roll < 0.4)] = UNKNOWN
    return edit


def _reference(
    month: scan.Vectors, index: ann.Ann, q, mask_from, n: int, nprobe: int
) -> list[tuple[float, int]]:
    """Brute force in numpy: the probed lists, their unmasked rows, exact float64 scores, best n
    by (score desc, position); when the probe holds fewer than n eligible rows, followed by the
    best of the month's other eligible rows. Which lists are probed is the float32 kernel's
    choice (two centroids a float32 rounding apart may go either way), so the reference takes
    them from `ann.probe` after checking they are a best-`nprobe` set up to that rounding."""
    scores = index.centroids.astype(np.float64) @ q.astype(np.float64)
    lists = ann.probe(index, q, nprobe)
    assert lists.size == min(nprobe, scores.size)
    if lists.size < scores.size:
        left_out = np.setdiff1d(np.arange(scores.size), lists)
        assert scores[lists].min() >= scores[left_out].max() - 1e-5
    rows = np.concatenate(
        [index.positions[index.offsets[i] : index.offsets[i + 1]] for i in lists]
        + [np.empty(0, np.int64)]
    )
    edit = np.asarray(month.edit_us)
    eligible = edit < mask_from if mask_from is not None else np.ones(len(edit), bool)
    probed = np.zeros(len(edit), bool)
    probed[rows] = True
    out = []
    for group in (probed & eligible, ~probed & eligible):
        keep = np.flatnonzero(group)
        exact = np.asarray(month.vectors, dtype=np.float64)[keep] @ q.astype(np.float64)
        out += [(float(exact[i]), int(keep[i])) for i in np.lexsort((keep, -exact))]
    return out[:n]


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    rows=st.integers(1, 400),
    seed=st.integers(0, 10_000),
    n=st.integers(1, 30),
    nprobe=st.integers(1, 12),
    lists=st.one_of(st.none(), st.integers(1, 20)),
    masked=st.booleans(),
    fixed=st.booleans(),
)
@example(rows=8, seed=2, n=1, nprobe=2, lists=None, masked=False, fixed=False)  # a float32 tie
@example(rows=8, seed=2, n=1, nprobe=2, lists=None, masked=False, fixed=True)
def test_rank_is_the_exact_top_n_of_the_probed_rows(
    tmp_path_factory, rows, seed, n, nprobe, lists, masked, fixed
):
    rng = np.random.default_rng(seed)
    vectors = _vectors(rows, 12, seed)
    created = np.sort(rng.integers(0, MONTH, size=rows))
    edit = _edits(rng, created, MONTH)
    folder = tmp_path_factory.mktemp("month")
    book = _book(12)[0] if fixed else None
    meta = ann_month.build_month(
        folder, vectors, created, edit, MONTH, lists=lists, seed=seed, codebook=book
    )
    index, month = ann.load_month(folder), _month(vectors, edit)
    q = rng.standard_normal(12).astype(np.float32)
    mask_from = int(rng.integers(MONTH, 4 * MONTH)) if masked else None
    got = ann.rank([ann.Part(month, rows, index)], q, mask_from, n, nprobe=nprobe)
    if index is None:  # nothing final before the month's end: no index, the exact scan
        assert meta["lists"] == 0
        want = [(s, p) for s, p in scan.top(month, q, rows, mask_from, n)]
    else:
        want = _reference(month, index, q, mask_from, n, nprobe)
    assert [(i, p) for _, i, p in got] == [(0, p) for _, p in want]
    np.testing.assert_allclose([s for s, _, _ in got], [s for s, _ in want], rtol=0, atol=1e-9)


def _parts(seed: int, sizes: list[int], t0: int, lists: int | None, exact_t0: bool):
    """Months of `sizes` rows (month m spans [m·MONTH, (m+1)·MONTH)), those ending at or before
    t0 with an index (built with the month's own end), cut at t0 like the retriever does."""
    rng = np.random.default_rng(seed)
    parts, truth = [], []
    for m, size in enumerate(sizes):
        vectors = _vectors(size, 8, seed + m)
        created = np.sort(rng.integers(m * MONTH, (m + 1) * MONTH, size=size))
        if exact_t0 and size and m == t0 // MONTH:
            created[size // 2 :] = np.maximum(created[size // 2 :], t0)  # documents exactly at t0
            created.sort()
        edit = _edits(rng, created, (m + 1) * MONTH)
        month = _month(vectors, edit)
        end = int(np.searchsorted(created, t0, side="left"))
        closed = (m + 1) * MONTH <= t0
        index = (
            ann_month.fit(vectors, created, edit, (m + 1) * MONTH, lists=lists, seed=seed)
            if closed
            else None
        )
        parts.append(ann.Part(month, end, index))
        truth.append((created, edit))
    return parts, truth


@settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=5),
    t0_frac=st.floats(0, 1),
    n=st.integers(1, 25),
    nprobe=st.integers(1, 3),
    lists=st.one_of(st.none(), st.integers(1, 8)),
    exact_t0=st.booleans(),
    strict=st.booleans(),
)
def test_approx_never_returns_a_row_at_or_after_t0_nor_masked_nor_a_short_top_k(
    seed, sizes, t0_frac, n, nprobe, lists, exact_t0, strict
):
    """Months with few rows, tiny nprobe (the fallback), t0 on a row's instant, edits after t0."""
    t0 = int(t0_frac * len(sizes) * MONTH)
    parts, truth = _parts(seed, sizes, t0, lists, exact_t0)
    mask_from = t0 if strict else None
    q = np.random.default_rng(seed + 1).standard_normal(8).astype(np.float32)
    got = ann.rank(parts, q, mask_from, n, nprobe=nprobe)
    eligible = sum(int(((c < t0) & ((e < t0) if strict else True)).sum()) for c, e in truth)
    assert len(got) == min(n, eligible)
    for _, m, p in got:
        created, edit = truth[m]
        assert p < parts[m].end and created[p] < t0 and (not strict or edit[p] < t0)
    assert len({(m, p) for _, m, p in got}) == len(got)
    assert _two_runs([s for s, _, _ in got])


def _two_runs(scores: list[float]) -> bool:
    """Best first, but for the one restart where the rows outside the probed lists begin."""
    return sum(1 for a, b in itertools.pairwise(scores) if b > a) <= 1


def test_probing_every_list_is_the_exact_search():
    rng = np.random.default_rng(3)
    vectors, created = _vectors(3000, 16, 3), np.sort(rng.integers(0, MONTH, size=3000))
    edit = _edits(rng, created, MONTH)
    index, month = ann_month.fit(vectors, created, edit, MONTH, lists=40), _month(vectors, edit)
    assert index.lists == 40
    for q in rng.standard_normal((20, 16)).astype(np.float32):
        got = ann.rank([ann.Part(month, 3000, index)], q, 2 * MONTH, 10, nprobe=40)
        assert [(s, p) for s, _, p in got] == scan.top(month, q, 3000, 2 * MONTH, 10)


def test_lists_hold_every_row_once_in_time_order_at_its_nearest_centroid(tmp_path):
    rng = np.random.default_rng(5)
    vectors, created = _vectors(2000, 16, 5), np.sort(rng.integers(0, MONTH, size=2000))
    edit = _edits(rng, created, MONTH)
    ann_month.build_month(tmp_path, vectors, created, edit, MONTH, seed=1)
    index = ann.load_month(tmp_path)
    assert sorted(index.positions.tolist()) == list(range(2000))
    scores = vectors @ index.centroids.T
    for i in range(index.lists):
        members = index.positions[index.offsets[i] : index.offsets[i + 1]]
        assert (np.diff(members) > 0).all()
        assert (scores[members, i] >= scores[members].max(axis=1) - 1e-5).all()
    codes, scales = scan.quantize(vectors)
    assert np.array_equal(index.codes, codes[index.positions]) and np.array_equal(
        index.scales, scales[index.positions]
    )
    assert np.array_equal(index.edit_us, edit[index.positions])


def test_centroids_come_only_from_documents_final_before_the_months_end(tmp_path):
    """Whatever the text (vector) of a document edited after the month's end — or at an
    unknown time — the centroids are the same, and so is every search of a t0 after the
    month (such documents are masked under the strict policy): none of it enters a ranking."""
    rng = np.random.default_rng(11)
    vectors, created = _vectors(1500, 16, 11), np.sort(rng.integers(0, MONTH, size=1500))
    edit = _edits(rng, created, MONTH)
    for t0 in (MONTH, 2 * MONTH, 3 * MONTH):
        later = edit >= t0  # documents whose text changed at/after t0 (or at an unknown time)
        assert later.sum() > 50
        other = vectors.copy()
        other[later] = 10 * rng.standard_normal((int(later.sum()), 16)).astype(np.float32)
        ann_month.build_month(tmp_path / f"a{t0}", vectors, created, edit, MONTH, seed=2)
        ann_month.build_month(tmp_path / f"b{t0}", other, created, edit, MONTH, seed=2)
        a, b = ann.load_month(tmp_path / f"a{t0}"), ann.load_month(tmp_path / f"b{t0}")
        assert np.array_equal(a.centroids, b.centroids)
        for q in rng.standard_normal((10, 16)).astype(np.float32):
            ranked = [
                ann.rank([ann.Part(_month(v, edit), 1500, x)], q, t0, 10, nprobe=3)
                for v, x in ((vectors, a), (other, b))
            ]
            assert ranked[0] == ranked[1]


def _fake_index(root, months: dict[str, int], seed: int = 0):
    """An index root with just what `ann_index.build` reads: index.json and each month's arrays."""
    rng = np.random.default_rng(seed)
    for month, rows in months.items():
        folder = root / "vectors" / f"month={month}"
        folder.mkdir(parents=True)
        start = layout.month_end_us(month) - 28 * 86_400_000_000
        created = np.sort(rng.integers(start, layout.month_end_us(month), size=rows))
        np.save(folder / "vectors.npy", _vectors(rows, 16, seed + rows))
        np.save(folder / "created_us.npy", created)
        np.save(
            folder / "edit_us.npy",
            np.where(rng.random(rows) < 0.2, created + 40 * 86_400_000_000, NEVER),
        )
    (root / "index.json").write_text(json.dumps({"months": months}), encoding="utf-8")
    codebook.save(root / codebook.FOLDER, *_book(16))


def _files(root) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("ann/*"))}


def test_build_records_measured_recall_and_is_idempotent_and_resumable(tmp_path):
    _fake_index(tmp_path, {"2024-01": 900, "2024-02": 400, "2024-03": 3})
    progress = []
    info = ann_index.build(
        tmp_path,
        partition="codebook",
        on_progress=lambda done, total: progress.append((done, total)),
    )
    assert progress == [(1, 3), (2, 3), (3, 3)]
    recorded = json.loads((tmp_path / "index.json").read_text())["ann"]
    assert recorded == info and info["format"] == "hindcast-ann/2" and info["nprobe"] == ann.NPROBE
    assert info["lists"] == {"2024-01": 12, "2024-02": 12, "2024-03": 12}
    assert info["codebook"] == info["params"]["codebook"] == _book(16)[0].id
    assert 0 < info["recall@10"] <= 1 and info["probe_queries"] > 0
    first = _files(tmp_path)
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("ann/*")}
    assert (
        ann_index.build(tmp_path, partition="codebook") == info
    )  # a finished month is not rebuilt
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("ann/*")} == stamps
    import shutil

    shutil.rmtree(tmp_path / "vectors/month=2024-02/ann")  # as if stopped before that month
    (tmp_path / "vectors/month=2024-02/.ann-99999").mkdir()  # a dead build's staging folder
    assert ann_index.build(tmp_path, partition="codebook") == info
    assert _files(tmp_path) == first  # byte-identical
    assert not list(tmp_path.rglob(".ann-*"))


def test_a_month_whose_index_is_of_another_size_is_refused(tmp_path):
    from hindcast.archive.index import _ann
    from hindcast.errors import ArchiveIntegrityError

    _fake_index(tmp_path, {"2024-01": 300})
    ann_index.build(tmp_path, partition="codebook")
    folder = tmp_path / "vectors/month=2024-01"
    assert _ann(tmp_path, "2024-01", folder, 300).rows == 300
    with pytest.raises(ArchiveIntegrityError, match="approximate index"):
        _ann(tmp_path, "2024-01", folder, 301)


def _reddit_index(folder, keep):
    """The property tests' synthetic Reddit archive, only the rows `keep` accepts, frozen,
    hash-indexed, with its approximate index: (snapshot, reader)."""
    from hindcast.archive.embed import HashEmbedder
    from hindcast.archive.index import build_index, open_index
    from hindcast.archive.snapshot import build_snapshot, open_snapshot

    from .conftest import fixture_module
    from .test_properties import _synthetic_rows

    fx = fixture_module()
    subs, comments = _synthetic_rows()
    key = lambda r: (r["created_utc"], r["id"])  # noqa: E731
    files = [
        fx.write_zst(
            folder / "RS_2024-01.zst", sorted(filter(keep, subs), key=key), window_log=22, level=3
        ),
        fx.write_zst(
            folder / "RC_2024-01.zst",
            sorted(filter(keep, comments), key=key),
            window_log=22,
            level=3,
        ),
    ]
    snap = open_snapshot(
        folder / "archive", build_snapshot(files, "reddit", "pushshift", folder / "archive")
    )
    build_index(snap, HashEmbedder())
    ann_index.build(open_index(snap).root, lists=12, partition="codebook")
    return snap, open_index(snap)


def test_documents_at_or_after_t0_change_nothing_of_an_approximate_search(tmp_path):
    """An archive with and without every document created at or after t0 (later in the
    boundary month and in the month after): the closed month's index is byte-identical and
    every approximate search at t0 returns the same documents with the same scores."""
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.timeutil import from_unix

    from .test_properties import WORDS

    t0 = 1_706_745_600 + 12 * 86_400 + 3_600  # 2024-02-13T01:00Z
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    before = _reddit_index(tmp_path / "a", lambda r: r["created_utc"] < t0)
    everything = _reddit_index(tmp_path / "b", lambda r: True)
    assert everything[1].months == ("2024-01", "2024-02", "2024-03") and before[1].months == (
        "2024-01",
        "2024-02",
    )
    assert _files(before[1].root / "vectors/month=2024-01") == _files(
        everything[1].root / "vectors/month=2024-01"
    )
    for nprobe in (1, 3, None):
        for query in [*WORDS[:8], "alpha bravo", "zzzunknown"]:
            hits = [
                [
                    (h.doc.id, h.score)
                    for h in TimeBoundRetriever(
                        snap, from_unix(t0), index=reader, vector_search="approx", nprobe=nprobe
                    ).search(query, k=15, mode="vector")
                ]
                for snap, reader in (before, everything)
            ]
            assert hits[0] == hits[1] and len(hits[0]) == 15


def test_rank_on_the_scanners_threads_matches_the_calling_thread_alone():
    """Plans, the first stage (probed ranges of all closed months and the exact months' rows in
    one pass) and the rescore dealt to threads give the same result as one thread."""
    rng = np.random.default_rng(21)
    parts = []
    for m, rows in enumerate((9000, 7000, 12000, 8000)):
        vectors, created = _vectors(rows, 16, 21 + m), np.sort(rng.integers(0, MONTH, size=rows))
        edit = _edits(rng, created, MONTH)
        index = ann_month.fit(vectors, created, edit, MONTH, seed=m) if m < 3 else None
        parts.append(ann.Part(_month(vectors, edit), rows if m < 3 else rows // 2, index))
    assert sum(p.end for p in parts) >= scan.PARALLEL_ROWS
    with scan.Scanner(workers=3) as scanner:
        for q in rng.standard_normal((10, 16)).astype(np.float32):
            for nprobe in (1, 5, 1000):
                assert ann.rank(
                    parts, q, 2 * MONTH, 12, nprobe=nprobe, scanner=scanner
                ) == ann.rank(parts, q, 2 * MONTH, 12, nprobe=nprobe)


def test_an_index_of_a_month_not_closed_at_t0_is_not_used():
    """Defence in depth: a part handed an index while cut before its end, or of a month ending
    after t0 (the edit mask tells t0), is scanned exactly (its centroids may hold later text)."""
    rng = np.random.default_rng(8)
    vectors, created = _vectors(3000, 16, 8), np.sort(rng.integers(0, MONTH, size=3000))
    edit = _edits(rng, created, MONTH)
    index, month = ann_month.fit(vectors, created, edit, MONTH, lists=50), _month(vectors, edit)
    for q in rng.standard_normal((10, 16)).astype(np.float32):
        t0 = MONTH - 1
        assert [
            (s, p) for s, _, p in ann.rank([ann.Part(month, 3000, index)], q, t0, 10, nprobe=1)
        ] == scan.top(month, q, 3000, t0, 10)
        assert [
            (s, p) for s, _, p in ann.rank([ann.Part(month, 2500, index)], q, None, 10, nprobe=1)
        ] == scan.top(month, q, 2500, None, 10)


def test_a_bad_nprobe_is_refused():
    from hindcast.errors import RetrievalError

    month = _month(_vectors(10, 4, 0), np.full(10, NEVER))
    for bad in (0, -1, 2.0, True, None):
        with pytest.raises(RetrievalError, match="nprobe must be a positive integer"):
            ann.rank([ann.Part(month, 10, None)], np.ones(4, np.float32), None, 3, nprobe=bad)
    assert (
        len(
            ann.rank(
                [ann.Part(month, 10, None)], np.ones(4, np.float32), None, 3, nprobe=np.int64(2)
            )
        )
        == 3
    )


class _Stop(Exception):
    pass


def _stop_after(months: int):
    def progress(done: int, total: int) -> None:
        if done == months:
            raise _Stop  # as if the process were killed once `months` months held the new build

    return progress


def test_a_stopped_rebuild_leaves_no_record_and_a_mixed_index_is_refused_by_approximate_search(
    tmp_path,
):
    """`embed --approx --lists N` stopped after one month: index.json no longer describes the old
    build (approximate search is refused with what to run, a run records nothing stale); an index
    left mixed under the old record (by a hindcast before this check) is refused month by month
    by approximate search, read as is by the exact search; re-running finishes the rebuild."""
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.errors import ArchiveIntegrityError, RetrievalError
    from hindcast.timeutil import from_unix

    snap, reader = _reddit_index(tmp_path, lambda r: True)  # built with lists=12
    root, old = reader.root, json.loads((reader.root / "index.json").read_text())
    with pytest.raises(_Stop):
        ann_index.build(root, lists=5, partition="codebook", on_progress=_stop_after(1))
    assert "ann" not in json.loads((root / "index.json").read_text())
    assert (
        json.loads((root / "vectors/month=2024-01/ann/meta.json").read_text())["params"]["lists"]
        == 5
    )
    assert (
        json.loads((root / "vectors/month=2024-02/ann/meta.json").read_text())["params"]["lists"]
        == 12
    )
    t0 = from_unix(1_709_251_200 + 86_400)  # 2024-03-02: January and February are closed
    with pytest.raises(RetrievalError, match="no approximate index"):
        TimeBoundRetriever(snap, t0, index=_reopen(snap), vector_search="approx")
    (root / "index.json").write_text(
        json.dumps(old), encoding="utf-8"
    )  # the old record over the mix
    mixed = _reopen(snap)
    with pytest.raises(
        ArchiveIntegrityError, match="month 2024-01"
    ):  # a sweep refuses it before any forecast
        ann_index.check_recorded(root, mixed.info)
    exact = TimeBoundRetriever(snap, t0, index=mixed).search("alpha", k=5, mode="vector")
    with pytest.raises(
        ArchiveIntegrityError, match=r"month 2024-01: its approximate index \(5 lists.*run it again"
    ):
        TimeBoundRetriever(snap, t0, index=mixed, vector_search="approx").search(
            "alpha", k=5, mode="vector"
        )
    info = ann_index.build(root, lists=5, partition="codebook")
    assert set(info["lists"].values()) == {5} and info["params"] == {
        "lists": 5,
        "seed": 0,
        "nprobe": ann.NPROBE,
        "codebook": info["codebook"],
    }
    done = _reopen(snap)
    ann_index.check_recorded(root, done.info)
    assert (
        len(
            TimeBoundRetriever(snap, t0, index=done, vector_search="approx").search(
                "alpha", k=5, mode="vector"
            )
        )
        == 5
    )
    assert [
        h.doc.id
        for h in TimeBoundRetriever(snap, t0, index=done).search("alpha", k=5, mode="vector")
    ] == [h.doc.id for h in exact]


def _reopen(snap):
    from hindcast.archive.index import open_index

    return open_index(snap)


def _archive_at(rng, seed: int, sizes: list[int], t0: int):
    """Random months (month m spans [m·MONTH, (m+1)·MONTH)) with edits at known instants (some
    at or after t0, their text rewritten then) and at unknown ones, as (ids, vectors, created,
    edit) per month; and the same archive as it stood at t0 without the documents whose text
    was overwritten at/after t0 (the strict policy hides them): only documents created before
    t0 and not edited at/after it, with the text they had."""
    full, before = [], []
    for m, size in enumerate(sizes):
        vectors, created = (
            _vectors(size, 8, seed + m),
            np.sort(rng.integers(m * MONTH, (m + 1) * MONTH, size=size)),
        )
        edit, ids = _edits(rng, created, (m + 1) * MONTH), np.arange(size) + 1000 * m
        later = edit >= t0
        rewritten = vectors.copy()
        rewritten[later] = 3 * rng.standard_normal((int(later.sum()), 8)).astype(np.float32)
        keep = (created < t0) & ~later
        full.append((ids, rewritten, created, edit))
        before.append((ids[keep], vectors[keep], created[keep], edit[keep]))
    return full, before


def _search_at(archive, t0: int, q, n: int, nprobe: int, lists) -> list[tuple[float, int]]:
    """An approximate search at t0 as the retriever runs it: closed months through the index
    built from the month's own rows, the others by the exact scan cut at t0; strict mask."""
    parts = []
    for m, (ids, vectors, created, edit) in enumerate(archive):
        closed = (m + 1) * MONTH <= t0
        index = (
            ann_month.fit(vectors, created, edit, (m + 1) * MONTH, lists=lists, seed=5)
            if closed
            else None
        )
        parts.append(ann.Part(_month(vectors, edit), int(np.searchsorted(created, t0)), index))
    return [
        (score, int(archive[m][0][p])) for score, m, p in ann.rank(parts, q, t0, n, nprobe=nprobe)
    ]


@settings(
    max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(0, 80), min_size=1, max_size=4),
    t0_frac=st.floats(0, 1),
    n=st.integers(1, 20),
    lists=st.one_of(st.none(), st.integers(1, 12)),
)
def test_post_t0_edits_and_documents_change_no_approximate_search(seed, sizes, t0_frac, n, lists):
    """Issue 24: adding post-t0 edits (text rewritten at/after t0, or at an unknown time) and
    post-t0 documents to a random archive changes no approximate search at t0 — ids, order and
    scores equal those of the archive as it stood at t0 (less the documents whose text was
    overwritten: hidden by the strict policy in both), at every nprobe, each index built from
    its own archive. The exact search is checked the same way."""
    t0 = int(t0_frac * len(sizes) * MONTH)
    rng = np.random.default_rng(seed)
    full, before = _archive_at(rng, seed, sizes, t0)
    q = rng.standard_normal(8).astype(np.float32)
    for nprobe in range(1, (lists or 14) + 2):
        assert _search_at(full, t0, q, n, nprobe, lists) == _search_at(
            before, t0, q, n, nprobe, lists
        )
    exact = [
        [
            (s, int(a[m][0][p]))
            for s, m, p in ann.rank(
                [ann.Part(_month(v, e), int(np.searchsorted(c, t0))) for _, v, c, e in a],
                q,
                t0,
                n,
                nprobe=1,
            )
        ]
        for a in (full, before)
    ]
    assert exact[0] == exact[1]


def test_post_t0_edits_leave_a_closed_months_index_as_without_the_edited_documents(tmp_path):
    """The built index of a closed month (centroids, lists of every other document, recorded
    recall) is the one of the month without its documents edited after its end."""
    rng = np.random.default_rng(13)
    vectors, created = _vectors(3000, 16, 13), np.sort(rng.integers(0, MONTH, size=3000))
    edit = _edits(rng, created, MONTH)
    later = edit >= MONTH
    assert 300 < later.sum() < 1500
    a = ann_month.build_month(tmp_path / "a", vectors, created, edit, MONTH, seed=4, nprobe=2)
    b = ann_month.build_month(
        tmp_path / "b", vectors[~later], created[~later], edit[~later], MONTH, seed=4, nprobe=2
    )
    assert a["recall@10"] < 1
    assert {k: v for k, v in a.items() if k != "rows"} == {
        k: v for k, v in b.items() if k != "rows"
    }
    ia, ib = ann.load_month(tmp_path / "a"), ann.load_month(tmp_path / "b")
    assert np.array_equal(ia.centroids, ib.centroids)
    ids = np.flatnonzero(~later)  # b's position → a's position
    for i in range(ia.lists):
        mine = ia.positions[ia.offsets[i] : ia.offsets[i + 1]]
        assert np.array_equal(
            mine[~later[mine]], ids[ib.positions[ib.offsets[i] : ib.offsets[i + 1]]]
        )


def test_post_t0_edits_change_nothing_of_an_approximate_search_of_a_real_archive(tmp_path):
    """The synthetic Reddit archive (edits at known instants up to 40 days later, and at unknown
    ones) with everything, against the archive as it stood at t0 without the documents edited
    at/after t0 (or at an unknown time): frozen, indexed and approximately indexed separately,
    the same documents and scores from every approximate search at t0."""
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.timeutil import from_unix

    from .test_properties import WORDS

    (tmp_path / "all").mkdir()
    everything = _reddit_index(tmp_path / "all", lambda r: True)
    for t0 in (
        1_706_745_600 + 20 * 86_400 + 7_200,
        1_709_251_200 + 3 * 86_400,
    ):  # 2024-02-21, 2024-03-04

        def as_it_stood(r, t0=t0):
            return (
                r["created_utc"] < t0
                and r["edited"] is not True
                and not (r["edited"] and r["edited"] >= t0)
            )

        folder = tmp_path / f"t{t0}"
        folder.mkdir()
        before = _reddit_index(folder, as_it_stood)
        edited = sum(1 for r in _all_rows() if r["created_utc"] < t0 and not as_it_stood(r))
        assert edited > 20
        for nprobe in (1, 2, 3, None, 10_000):
            for query in [*WORDS[:10], "alpha bravo", "zzzunknown"]:
                hits = [
                    [
                        (h.doc.id, h.score)
                        for h in TimeBoundRetriever(
                            snap, from_unix(t0), index=reader, vector_search="approx", nprobe=nprobe
                        ).search(query, k=15, mode="vector")
                    ]
                    for snap, reader in (before, everything)
                ]
                assert hits[0] == hits[1] and len(hits[0]) == 15


def _all_rows() -> list[dict]:
    from .test_properties import _synthetic_rows

    subs, comments = _synthetic_rows()
    return subs + comments


# ---- issue 24: the reporter's counterfactual ------------------------------------------------

JAN_2024_US = 1_704_067_200_000_000
DAY_US = 86_400_000_000


def _worlds(rng, sizes: list[int], t0: int, dims: int = 8):
    """Two archives of random months (month m = 2024-(m+1)), as (month, ids, vectors, created,
    edit) rows. `edited`: every document; some edited at a known instant before t0 (the same in
    both), some — the X — edited at/after t0 or at an unknown time, stored with their *edited*
    text (a new vector), like Pushshift; plus documents created after t0. `never`: the same
    archive as it stood at t0, where the X were never edited (their t0 text, visible) and
    nothing after t0 exists. Returns (edited, never, the X's ids)."""
    edited, never, xs = [], [], set()
    for m, size in enumerate(sizes):
        month = f"2024-{m + 1:02d}"
        start = JAN_2024_US + sum(_days(f"2024-{i + 1:02d}") for i in range(m)) * DAY_US
        end = layout.month_end_us(month)
        created = np.sort(rng.integers(start, end, size=size))
        vectors, ids = _vectors(size, dims, int(rng.integers(1 << 30))), np.arange(size) + 1000 * m
        roll = rng.random(size)
        edit = np.where(roll < 0.15, created + rng.integers(0, 40 * DAY_US, size=size), NEVER)
        edit[(roll >= 0.15) & (roll < 0.22)] = UNKNOWN
        later = (edit >= t0) & (created < t0)
        rewritten = vectors.copy()
        rewritten[later] = 3 * rng.standard_normal((int(later.sum()), dims)).astype(np.float32)
        xs |= set(ids[later].tolist())
        edited.append((month, ids, rewritten, created, edit))
        keep = created < t0
        if keep.any():
            never.append(
                (month, ids[keep], vectors[keep], created[keep], np.where(later, NEVER, edit)[keep])
            )
    return edited, never, xs


def _days(month: str) -> int:
    return (layout.month_end_us(month) - layout.month_end_us(_previous(month))) // DAY_US


def _previous(month: str) -> str:
    year, number = map(int, month.split("-"))
    return f"{year - 1}-12" if number == 1 else f"{year}-{number - 1:02d}"


def _built(root, archive, dims: int = 8):
    """An index root holding `archive`'s months, its approximate index built by `ann_index.build`
    (the default build) with the fixed codebook a user of the same model would have."""
    months = _months(root, archive)
    codebook.save(root / codebook.FOLDER, *_book(dims))
    ann_index.build(root, partition="codebook")
    return {month: ann.load_month(root / "vectors" / f"month={month}") for month in months}


def _months(root, archive) -> dict[str, int]:
    """An index root holding `archive`'s months (vectors, instants, index.json): their sizes."""
    months = {}
    root.mkdir(parents=True)
    for month, _, vectors, created, edit in archive:
        folder = root / "vectors" / f"month={month}"
        folder.mkdir(parents=True)
        np.save(folder / "vectors.npy", vectors)
        np.save(folder / "created_us.npy", created)
        np.save(folder / "edit_us.npy", edit)
        months[month] = len(created)
    (root / "index.json").write_text(json.dumps({"months": months}), encoding="utf-8")
    return months


def _search(archive, indexes, t0: int, q, n: int, nprobe: int | None):
    """What the retriever asks at t0 (strict policy): months ≤ month(t0), each cut at t0, the
    closed ones through their index (approx; nprobe None: none, the exact search)."""
    t0_month = next((m for m, *_ in archive if layout.month_end_us(m) > t0), "9999-12")
    parts, ids = [], []
    for month, month_ids, vectors, created, edit in archive:
        if month > t0_month:
            continue
        index = indexes[month] if nprobe is not None and month < t0_month else None
        parts.append(ann.Part(_month(vectors, edit), int(np.searchsorted(created, t0)), index))
        ids.append(month_ids)
    ranked = ann.rank(parts, q, t0, n, nprobe=nprobe or 1)
    return [(score, int(ids[m][p])) for score, m, p in ranked]


# the counterfactual's cases, shared with the projected index's test (test_ann_projected.py)
WORLD_CASES = {
    "seed": st.integers(0, 10_000),
    "sizes": st.lists(st.integers(1, 120), min_size=2, max_size=4),
    "t0_frac": st.floats(0.3, 1),
    "n": st.integers(1, 20),
}


def _counterfactual(tmp_path_factory, seed: int, sizes: list[int], t0_frac: float, build):
    """The two archives of a case (X edited after t0 and late documents; X never edited), each
    built by `build(root, archive)`: (rng, t0, edited, never, xs, built)."""
    rng = np.random.default_rng(seed)
    span = layout.month_end_us(f"2024-{len(sizes):02d}") - JAN_2024_US
    t0 = JAN_2024_US + int(t0_frac * span)
    edited, never, xs = _worlds(rng, sizes, t0)
    tmp = tmp_path_factory.mktemp("worlds")
    built = [build(tmp / name, world) for name, world in (("e", edited), ("n", never))]
    return rng, t0, edited, never, xs, built


@settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(**WORLD_CASES)
def test_a_post_t0_edit_changes_no_other_document_of_an_approximate_search(
    tmp_path_factory, seed, sizes, t0_frac, n
):
    """Issue 24, the reporter's counterfactual: an archive where documents X were edited after
    t0 (stored with their edited text) and documents were added after t0, against the same
    archive where the X were never edited (visible with their t0 text). At t0, at every nprobe,
    the approximate search of the first returns exactly the documents, order and scores of the
    second's with the X taken out — as the exact search does."""
    case = _counterfactual(tmp_path_factory, seed, sizes, t0_frac, _built)
    rng, t0, edited, never, xs, indexes = case
    for q in rng.standard_normal((3, 8)).astype(np.float32):
        for nprobe in [*range(1, 14), None]:
            got = _search(edited, indexes[0], t0, q, n, nprobe)
            wider = _search(never, indexes[1], t0, q, n + len(xs), nprobe)
            assert got == [hit for hit in wider if hit[1] not in xs][:n], nprobe


def test_an_index_trained_on_the_archive_by_an_earlier_hindcast_is_refused():
    """An index of format hindcast-ann/1 (centroids trained on the archive's documents, moved
    by a post-t0 edit) is refused by approximate search with what to run."""
    from hindcast.errors import ArchiveIntegrityError

    rng = np.random.default_rng(4)
    vectors, created = _vectors(300, 8, 4), np.sort(rng.integers(0, MONTH, size=300))
    edit = _edits(rng, created, MONTH)
    index = ann_month.fit(vectors, created, edit, MONTH, codebook=_book(8)[0])
    old = ann.Ann(
        **{k: getattr(index, k) for k in ann.ARRAYS},
        meta=index.meta | {"format": "hindcast-ann/1"},
    )
    q = rng.standard_normal(8).astype(np.float32)
    assert (
        len(ann.rank([ann.Part(_month(vectors, edit), 300, index)], q, 2 * MONTH, 5, nprobe=2)) == 5
    )
    with pytest.raises(ArchiveIntegrityError, match=r"hindcast-ann/1.*embed --approx"):
        ann.rank([ann.Part(_month(vectors, edit), 300, old)], q, 2 * MONTH, 5, nprobe=2)


def test_probe_takes_the_best_lists_and_breaks_exact_ties_to_the_lower_list():
    """Lists 1, 3 and 4 score the same; with nprobe 3 the best (list 2) and the two lower of the
    tie (1 and 3) are probed, returned ascending."""
    centroids = np.array([[0.1, 0], [0.5, 0], [0.9, 0], [0.5, 0], [0.5, 0]], dtype=np.float32)
    index = ann.Ann(
        centroids=centroids,
        offsets=np.zeros(6, np.int64),
        positions=np.empty(0, np.int64),
        codes=np.empty((0, 2), np.int8),
        scales=np.empty(0, np.float32),
        edit_us=np.empty(0, np.int64),
        meta={},
    )
    q = np.array([1.0, 0.0], dtype=np.float32)
    assert ann.probe(index, q, 3).tolist() == [1, 2, 3]
    assert ann.probe(index, q, 1).tolist() == [2]
    assert ann.probe(index, q, 9).tolist() == [0, 1, 2, 3, 4]
