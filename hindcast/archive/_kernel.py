"""The compiled first stage of `hindcast.archive.scan` (imported lazily: numba loads in ~0.3 s)."""

import numpy as np
from numba import njit


@njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def first_stage(
    codes, scales, q, edit_us, mask_from, masked, out, start, stop
):  # pragma: no cover - compiled
    """out[i] = scales[i] · (codes[i] · q) for i in [start, stop), or -inf where `masked` and
    edit_us[i] ≥ mask_from. Releases the GIL, so row ranges run on several threads; each row's
    arithmetic is the same whichever thread computes it."""
    dims = codes.shape[1]
    for i in range(start, stop):
        if masked and edit_us[i] >= mask_from:
            out[i] = -np.inf
            continue
        acc = np.float32(0.0)
        for j in range(dims):
            acc += np.float32(codes[i, j]) * q[j]
        out[i] = acc * scales[i]


@njit(nogil=True, cache=True)
def exact(vectors, positions, q, out):  # pragma: no cover - compiled
    """out[k] = vectors[positions[k]] · q in float64, in a fixed order written out here (eight
    running sums over j mod 8, added pairwise; no fast-math): a row's score has the same bits
    whatever batch it is in, on any machine."""
    dims = q.size
    for k in range(positions.size):
        row = vectors[positions[k]]
        lanes = np.zeros(8)
        for j in range(dims - dims % 8):
            lanes[j % 8] += np.float64(row[j]) * q[j]
        for j in range(dims - dims % 8, dims):
            lanes[j % 8] += np.float64(row[j]) * q[j]
        out[k] = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + (
            (lanes[4] + lanes[5]) + (lanes[6] + lanes[7])
        )


@njit(nogil=True, cache=True)
def best(scores, count, picked):  # pragma: no cover - compiled
    """Fill `picked` with the positions of `count` largest finite scores (any order) and return
    their lowest score; every position left out scores ≤ that. One pass keeping the picked
    positions as a min-heap on score (the lowest at picked[0]): a better score replaces the
    root in O(log count), so the pass costs O(n log count) whatever the order or the ties of
    the scores. Returns -inf if no more than `count` scores are finite (then `picked[:found]`
    holds them all and no position is left out; found returned second)."""
    found = 0
    finite = 0
    for i in range(scores.size):
        value = scores[i]
        if value == -np.inf:
            continue
        finite += 1
        if found < count:
            picked[found] = i
            _sift_up(scores, picked, found)
            found += 1
        elif value > scores[picked[0]]:
            picked[0] = i
            _sift_down(scores, picked, count)
    if finite <= count:
        return -np.inf, found
    return scores[picked[0]], found


@njit(nogil=True, cache=True)
def _sift_up(scores, heap, at):  # pragma: no cover - compiled
    """Move heap[at] up until its parent scores no higher."""
    while at > 0:
        parent = (at - 1) // 2
        if scores[heap[parent]] <= scores[heap[at]]:
            return
        heap[parent], heap[at] = heap[at], heap[parent]
        at = parent


@njit(nogil=True, cache=True)
def _sift_down(scores, heap, size):  # pragma: no cover - compiled
    """Move heap[0] down until no child of it scores lower."""
    at = 0
    while True:
        low, left = at, 2 * at + 1
        if left < size and scores[heap[left]] < scores[heap[low]]:
            low = left
        if left + 1 < size and scores[heap[left + 1]] < scores[heap[low]]:
            low = left + 1
        if low == at:
            return
        heap[low], heap[at] = heap[at], heap[low]
        at = low


@njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def first_stage_ranges(
    codes, scales, q, edit_us, mask_from, masked, out, ranges, lo, hi
):  # pragma: no cover - compiled
    """`first_stage` over row ranges: for each r in [lo, hi), rows [ranges[r, 0], ranges[r, 1])
    are scored into out[ranges[r, 2]:…] (the ranges laid end to end). Same arithmetic per
    row as `first_stage`, so a row scores the same bits on either path."""
    dims = codes.shape[1]
    for r in range(lo, hi):
        at = ranges[r, 2]
        for i in range(ranges[r, 0], ranges[r, 1]):
            if masked and edit_us[i] >= mask_from:
                out[at] = -np.inf
            else:
                acc = np.float32(0.0)
                for j in range(dims):
                    acc += np.float32(codes[i, j]) * q[j]
                out[at] = acc * scales[i]
            at += 1


@njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def dots(matrix, q, out):  # pragma: no cover - compiled
    """out[i] = matrix[i] · q in float32, in the calling thread (no BLAS threads: a per-query
    matrix–vector product must not wait on a thread pool that other processes keep busy)."""
    dims = q.size
    for i in range(matrix.shape[0]):
        acc = np.float32(0.0)
        for j in range(dims):
            acc += matrix[i, j] * q[j]
        out[i] = acc


@njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def projected(
    head, tail, scales, q, low, high, positions, partial, start, stop
):  # pragma: no cover
    """The rows i in [start, stop) whose two projected scores pass, written to `positions`
    (ascending); returns how many. A row's code is head[i] followed by tail[i] (its first
    dimensions, then the rest), scaled by scales[i]. Level one, over every row: scales[i] ·
    (head[i] · q[:h]) ≥ low, branch-free (the row and its partial sum are always written, the
    count advanced only when it passes), a short contiguous scan; level two, over those rows
    only: scales[i] · (head[i] · q[:h] + tail[i] · q[h:]) ≥ high. Both scores are a row's own
    code and the query's alone, in one fixed order of operations."""
    width, rest = head.shape[1], tail.shape[1]
    q_tail = q[width:]  # indexed from 0: no wraparound check a lane, so the loop vectorizes
    found = 0
    for i in range(start, stop):
        acc = np.float32(0.0)
        for j in range(width):
            acc += np.float32(head[i, j]) * q[j]
        positions[found] = i
        partial[found] = acc
        found += acc * scales[i] >= low
    kept = 0
    for k in range(found):
        i = positions[k]
        acc = np.float32(0.0)
        for j in range(rest):
            acc += np.float32(tail[i, j]) * q_tail[j]
        positions[kept] = i
        kept += (partial[k] + acc) * scales[i] >= high
    return kept
