"""Float sums that do not depend on the order they add in (polars' threads, a frame's row
order, the chunks of a run): each is the exactly rounded sum of its values, as ``math.fsum``
gives, computed with NumPy for many groups at once.

How: a finite double is m * 2^e with m an integer below 2^53. Split m into two halves below
2^27 and add the halves of each (group, e) as floats: every partial sum is an integer below
2^53 while a bin holds fewer than 2^26 values, so those additions are exact in any order. The
few bins of a group are then added as Python integers (exact) and rounded once.

Win shares are multiples of 1/60 (a win shared by at most five seats), so their sums are
integers of sixtieths (:data:`WIN_SHARE_UNIT`), exact without this module.
"""

import numpy as np
import polars as pl

# A win shared by k <= 5 winners is worth 1/k: every win share is a whole number of 60ths.
WIN_SHARE_UNIT = 60

_HALF = 26  # bits of the low half of a mantissa
_BIN_LIMIT = 1 << 26  # values per (group, exponent) bin that keep the float partial sums exact


def win_share_units(column: str = "win_share") -> pl.Expr:
    """``column`` (win shares) as an Int64 number of sixtieths: summed exactly in any order."""
    return (pl.col(column) * WIN_SHARE_UNIT).round().cast(pl.Int64)


def group_fsum(codes, values, n_groups: int) -> np.ndarray:
    """Per group 0..n_groups-1: the exactly rounded sum of ``values`` whose ``codes`` name it
    (0.0 for a group without values; NaN or an infinity as any order of addition gives)."""
    codes = np.asarray(codes, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros(n_groups, dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        # inf + inf = inf, inf - inf = NaN, NaN + x = NaN: the same in every order.
        out += np.bincount(codes[~finite], weights=values[~finite], minlength=n_groups)
        codes, values = codes[finite], values[finite]
    # A group of one value sums to it (most (game, item) groups): only the others need bins.
    single = np.bincount(codes, minlength=n_groups)[codes] == 1
    if single.any():
        out[codes[single]] += values[single]
        codes, values = codes[~single], values[~single]
    if values.size == 0:
        return out
    fraction, exponent = np.frexp(values)
    mantissa = (fraction * 2.0**53).astype(np.int64)  # exact: |mantissa| < 2^53
    exponent = exponent.astype(np.int64) - 53
    lowest = int(exponent.min())
    span = int(exponent.max()) - lowest + 1
    counts = np.bincount(codes, minlength=n_groups)
    totals: dict[int, int] = {}
    for start in range(0, values.size, _BIN_LIMIT - 1):
        part = slice(start, start + _BIN_LIMIT - 1)
        m = mantissa[part]
        bins = codes[part] * span + (exponent[part] - lowest)
        used, inverse = np.unique(bins, return_inverse=True)
        # m = high * 2^26 + low, both halves below 2^27 in size.
        high = np.bincount(inverse, weights=(m >> _HALF).astype(np.float64))
        low = np.bincount(inverse, weights=(m & ((1 << _HALF) - 1)).astype(np.float64))
        if values.size < _BIN_LIMIT:  # one part: small groups are added in int64 at once
            used, high, low = _add_small_groups(out, used, high, low, span, lowest, counts)
        for key, h, lo in zip(used.tolist(), high.tolist(), low.tolist(), strict=True):
            group, shift = divmod(key, span)
            totals[group] = totals.get(group, 0) + (((int(h) << _HALF) + int(lo)) << shift)
    for group, total in totals.items():
        out[group] += _scaled(total, lowest)
    return out


def _add_small_groups(out, used, high, low, span: int, lowest: int, counts):
    """Adds to ``out`` the groups whose exact total fits in an int64 (few values of nearby
    exponents: most groups of a few rows) and returns the other groups' bins. A group's bins
    come together in ``used`` (sorted); its total in units of its lowest bin's 2^e is below
    n 2^(54 + spread) < 2^63 when n 2^spread <= 2^8, and one int64 -> double conversion and a
    scaling by a power of two (exact while the result is a normal double) round it once."""
    group, offset = np.divmod(used, span)
    first = np.flatnonzero(np.diff(group, prepend=-1))
    size = np.diff(first, append=used.size)
    base = np.repeat(offset[first], size)
    spread = np.repeat(offset[first + size - 1], size) - base
    power = base + lowest
    small = (spread <= 8) & ((counts[group] << np.minimum(spread, 8)) <= 256) & (power >= -1022)
    if not small.any():
        return used, high, low
    term = (high[small].astype(np.int64) << _HALF) + low[small].astype(np.int64)
    term <<= offset[small] - base[small]
    starts = np.flatnonzero(np.diff(group[small], prepend=-1))
    total = np.add.reduceat(term, starts)
    owners = group[small][starts]
    out[owners] += np.ldexp(total.astype(np.float64), power[small][starts])
    rest = ~small
    return used[rest], high[rest], low[rest]


def _scaled(total: int, power: int) -> float:
    """total * 2^power, rounded once (int / int is correctly rounded in Python)."""
    if power >= 0:
        return float(total << power)
    return total / (1 << -power)


def group_sums(frame: pl.DataFrame, keys, columns) -> pl.DataFrame:
    """Per group of ``keys`` (sorted by them, nulls last): ``rows`` and the exactly rounded sum
    of each float column of ``columns`` (integer columns summed as Int64, exact too); a null
    value counts as nothing."""
    keys = [keys] if isinstance(keys, str) else list(keys)
    columns = [columns] if isinstance(columns, str) else list(columns)
    if keys:
        frame = frame.select(*keys, *columns).sort(keys, nulls_last=True, maintain_order=True)
        codes = frame.select(pl.struct(keys).rle_id()).to_series().to_numpy().astype(np.int64)
        starts = np.flatnonzero(np.diff(codes, prepend=-1))
        groups = frame.select(keys)[starts]
    else:
        codes, groups = np.zeros(frame.height, dtype=np.int64), pl.DataFrame()
    n_groups = groups.height if keys else 1
    sums = [pl.Series("rows", np.bincount(codes, minlength=n_groups), dtype=pl.Int64)]
    for column in columns:
        series = frame[column]
        present = ~series.is_null().to_numpy()
        if series.dtype.is_integer():
            total = np.zeros(n_groups, dtype=np.int64)
            np.add.at(total, codes[present], series.to_numpy()[present].astype(np.int64))
            sums.append(pl.Series(column, total, dtype=pl.Int64))
        else:
            values = series.cast(pl.Float64).to_numpy()[present]
            sums.append(pl.Series(column, group_fsum(codes[present], values, n_groups)))
    return groups.with_columns(sums) if keys else pl.DataFrame(sums)
