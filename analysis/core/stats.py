"""Interval estimates, multiple-comparison corrections and the seat-balance figure.

Pure NumPy over plain arrays, so every number in a report can be checked by hand. Intervals are
95% unless a caller passes another ``z``; functions taking arrays work element-wise.
"""

import math

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(successes, n, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a proportion ``successes / n``; NaN where ``n == 0``.

    ``successes`` may be fractional (a sum of win shares with ties): the interval then treats the
    tied wins as partial successes, which is slightly conservative.
    """
    successes = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = successes / n
        z2 = z * z
        denom = 1.0 + z2 / n
        center = (p + z2 / (2.0 * n)) / denom
        half = z * np.sqrt(np.clip(p * (1.0 - p), 0.0, None) / n + z2 / (4.0 * n * n)) / denom
    return center - half, center + half


def win_shares(win, n_winners) -> np.ndarray:
    """Each player's share of the game's win: 1/k for each of k tied winners, 0 for the rest."""
    win = np.asarray(win, dtype=np.float64)
    n_winners = np.asarray(n_winners, dtype=np.float64)
    return np.where(win > 0, win / np.maximum(n_winners, 1.0), 0.0)


def normal_p_value(z) -> np.ndarray:
    """Two-sided p-value of a standard normal statistic."""
    z = np.abs(np.asarray(z, dtype=np.float64))
    return np.vectorize(math.erfc, otypes=[np.float64])(z / math.sqrt(2.0))


def interval_from_moments(mean, sd, n, z: float = Z95) -> dict:
    """Mean +- z standard errors and the p-value for "the mean is 0", from group moments.

    Works element-wise on arrays of group means, standard deviations (ddof=1) and sizes; groups
    of fewer than two values get NaN. A group with no spread has p = 1 if its mean is 0, else 0.
    """
    mean = np.asarray(mean, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    sd = np.where(n > 1, np.asarray(sd, dtype=np.float64), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = sd / np.sqrt(n)
        no_spread = np.where(mean == 0, 0.0, np.inf)
        z_score = np.where(se > 0, mean / np.where(se > 0, se, 1.0), no_spread)
    p = np.where(np.isnan(se), np.nan, normal_p_value(np.nan_to_num(z_score, nan=0.0)))
    return {"mean": mean, "lo": mean - z * se, "hi": mean + z * se, "se": se, "p": p}


def mean_interval(x, z: float = Z95) -> dict:
    """Mean of ``x`` with mean +- z standard errors, and the p-value for "the mean is 0".

    Returns floats ``n``, ``mean``, ``lo``, ``hi``, ``se`` and ``p``; with fewer than two values
    the interval and p-value are NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    mean = float(x.mean()) if n else math.nan
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    result = {key: float(value) for key, value in interval_from_moments(mean, sd, n, z).items()}
    return {"n": n, **result}


def paired_difference(a, b, z: float = Z95) -> dict:
    """Mean of ``a - b`` over pairs measured in the same game, with its interval and p-value."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {a.shape} vs {b.shape}")
    return mean_interval(a - b, z)


def bootstrap_interval(
    rows, statistic, n_boot: int = 1000, seed: int = 0, level: float = 0.95, chunk: int = 100
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(column means)`` resampling the rows.

    ``rows`` is a (n, k) array of per-unit values (one row per game, say); ``statistic`` maps a
    (b, k) array of resampled column means to b values. Resampling whole rows keeps the
    dependence between columns (the seats of one game) intact.
    """
    rows = np.asarray(rows, dtype=np.float64)
    n = rows.shape[0]
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    values = []
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        # Multinomial counts are the same resampling as drawing row indices, without an
        # (size, n, k) temporary.
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=size)
        values.append(statistic(counts @ rows / n))
    values = np.concatenate(values)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(values, [tail, 1.0 - tail])
    return float(lo), float(hi)


def holm(p_values) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error rate)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def benjamini_hochberg(p_values) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values; false discovery rate)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


CORRECTIONS = {"bh": benjamini_hochberg, "holm": holm}


def adjust(p_values, method: str = "bh") -> np.ndarray:
    """Adjusted p-values by ``method`` ("bh" or "holm"); NaN p-values stay NaN and do not count."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, math.nan)
    tested = ~np.isnan(p)
    out[tested] = CORRECTIONS[method](p[tested])
    return out


def seat_balance(shares) -> np.ndarray:
    """1 - (largest gap between seats' win shares): 1 is perfectly even.

    ``shares`` is (k,) for one set of seats or (b, k) for b sets at once.
    """
    shares = np.asarray(shares, dtype=np.float64)
    return 1.0 - (shares.max(axis=-1) - shares.min(axis=-1))
