"""Sorting-based set operations on integer arrays (chunk reductions run them on every chunk).

NumPy 2's ``np.unique`` without ``return_*`` takes a hash-based path that is about a
hundred times slower than sorting on arrays of a few hundred thousand int64 keys; these
helpers sort.
"""

import numpy as np

# Keys below this bound are deduplicated in a bitmap of that many bytes instead of sorted.
BITMAP_LIMIT = 64 * 2**20


def unique(values, bound: int | None = None) -> np.ndarray:
    """The sorted distinct values; with ``bound`` (every value in 0..bound-1, a key space
    small enough for a bitmap), without sorting."""
    values = np.asarray(values)
    if bound is not None and bound <= BITMAP_LIMIT:
        seen = np.zeros(bound, dtype=bool)
        seen[values] = True
        return np.flatnonzero(seen).astype(values.dtype if values.size else np.int64)
    ordered = np.sort(values, kind="stable")
    if ordered.size == 0:
        return ordered
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


def _sorted_runs(values) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(values, the stable sorting order, the sorted values, where each new value starts)."""
    values = np.asarray(values)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    return values, order, ordered, np.r_[True, ordered[1:] != ordered[:-1]]


def unique_inverse(values) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, each value's index among them)."""
    values, order, ordered, new = _sorted_runs(values)
    if ordered.size == 0:
        return ordered, np.zeros(0, dtype=np.int64)
    inverse = np.empty(values.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def unique_first(values) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, the index of each one's first occurrence)."""
    _, order, ordered, new = _sorted_runs(values)
    if ordered.size == 0:
        return ordered, np.zeros(0, dtype=np.int64)
    return ordered[new], order[new]
