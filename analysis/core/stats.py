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
    rows,
    statistic,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    chunk: int = 100,
    counts=None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(column means)`` resampling the rows.

    ``rows`` is a (n, k) array of per-unit values (one row per game, say); ``statistic`` maps a
    (b, k) array of resampled column means to b values. Resampling whole rows keeps the
    dependence between columns (the seats of one game) intact. With ``counts``, ``rows`` are
    the distinct rows and ``counts`` how many units have each: the same bootstrap (drawing n
    units with replacement is drawing multinomial counts over the distinct rows with
    probabilities counts / n), whose cost no longer grows with n.
    """
    rows = np.asarray(rows, dtype=np.float64)
    weights = np.ones(rows.shape[0]) if counts is None else np.asarray(counts, dtype=np.float64)
    n = int(round(weights.sum()))
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    probabilities = weights / weights.sum()
    values = []
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        # Multinomial counts are the same resampling as drawing row indices, without an
        # (size, n, k) temporary.
        draws = rng.multinomial(n, probabilities, size=size)
        values.append(statistic(draws @ rows / n))
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


# --- Effects a designer acts on: cluster-robust intervals, a practical band, a minimum sample --

DEFAULT_BAND = 0.02  # practical-significance band: +-2 percentage points of win share
DEFAULT_MIN_N = 100  # seats below which no effect is tested or flagged


def t_quantile(df, level: float = 0.95) -> np.ndarray:
    """Two-sided Student-t quantile for ``level`` at ``df`` degrees of freedom (NaN if df < 1)."""
    from scipy.special import stdtrit  # scipy.special: a fraction of scipy.stats' import time

    df = np.asarray(df, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(df >= 1, stdtrit(np.maximum(df, 1.0), 0.5 + level / 2.0), np.nan)


def t_two_sided_p(statistic, df) -> np.ndarray:
    """Two-sided p-value of a Student-t statistic (NaN where either is NaN or df < 1)."""
    from scipy.special import stdtr

    statistic = np.asarray(statistic, dtype=np.float64)
    df = np.asarray(df, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        p = 2.0 * stdtr(np.maximum(df, 1.0), -np.abs(statistic))
    return np.where(np.isnan(statistic) | ~(df >= 1), np.nan, p)


def band_p_value(effect, se, df, band: float) -> np.ndarray:
    """p-value for "the effect lies inside +-band" (a minimum-effect test): two-sided Student-t
    on the distance from the nearer band edge, so p < alpha exactly when the two-sided
    (1 - alpha) interval lies wholly outside the band; 1 where the estimate is inside it."""
    effect = np.asarray(effect, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        distance = np.abs(effect) - band
        statistic = np.where(se > 0, distance / np.where(se > 0, se, 1.0), np.inf * distance)
    p = t_two_sided_p(np.maximum(statistic, 0.0), df)
    return np.where(distance <= 0, np.where(np.isnan(se), np.nan, 1.0), p)


def cluster_mean(values, clusters, floor_variance=None, level: float = 0.95) -> dict:
    """Mean of ``values`` with a cluster-robust (CR1) standard error over ``clusters``.

    Rows of one cluster (the seats and seat rotations of one deal) are not independent; the
    sandwich variance sums residuals within clusters first. ``floor_variance`` (per row, e.g.
    e(1-e) for a win share whose expectation is e) floors the variance at its value under
    independence, so a tiny group never gets a near-zero interval. The interval uses the
    Student-t quantile on (clusters - 1) degrees of freedom. Returns floats n, clusters, mean,
    se, lo, hi, p (for "the mean is 0").
    """
    values = np.asarray(values, dtype=np.float64)
    clusters = np.asarray(clusters)
    n = values.size
    if n == 0:
        nan = math.nan
        return {"n": 0, "clusters": 0, "mean": nan, "se": nan, "lo": nan, "hi": nan, "p": nan}
    _, index = np.unique(clusters, return_inverse=True)
    g = int(index.max()) + 1
    mean = float(values.mean())
    sums = np.bincount(index, weights=values - mean, minlength=g)
    variance = (g / (g - 1) if g > 1 else math.nan) * float((sums**2).sum()) / n**2
    if floor_variance is not None:
        variance = max(variance, float(np.sum(floor_variance)) / n**2)
    se = math.sqrt(variance) if variance == variance else math.nan
    half = float(t_quantile(g - 1, level)) * se
    p = float(t_two_sided_p(mean / se if se > 0 else (0.0 if mean == 0 else np.inf), g - 1))
    return {"n": n, "clusters": g, "mean": mean, "se": se, "lo": mean - half, "hi": mean + half,
            "p": p}  # fmt: skip


def seat_chi_square(shares, clusters=None) -> dict:
    """Wald chi-square test that every seat has the same mean win share.

    ``shares`` is (games, seats): each game's win shares by seat (ties split). The covariance of
    the seat means is cluster-robust over ``clusters`` (games of one deal), or over games when
    None; the statistic compares the P - 1 contrasts (seat s minus the last seat) with their
    covariance and is chi-square with P - 1 degrees of freedom under fair seats. Unlike a
    Pearson test on win counts it handles shared wins and replayed deals. Returns statistic,
    df and p (NaN for fewer than two seats or two clusters).
    """

    shares = np.asarray(shares, dtype=np.float64)
    games, seats = shares.shape
    if seats < 2 or games < 2:
        return {"statistic": math.nan, "df": max(seats - 1, 0), "p": math.nan}
    if clusters is None:
        clusters = np.arange(games)
    _, index = np.unique(np.asarray(clusters), return_inverse=True)
    g = int(index.max()) + 1
    if g < 2:
        return {"statistic": math.nan, "df": seats - 1, "p": math.nan}
    contrasts = shares[:, :-1] - shares[:, -1:]
    mean = contrasts.mean(axis=0)
    sums = np.zeros((g, seats - 1))
    np.add.at(sums, index, contrasts - mean)
    covariance = sums.T @ sums * (g / (g - 1)) / games**2
    return wald_chi_square(mean, covariance)


def wald_chi_square(mean, covariance) -> dict:
    """The Wald statistic mean' covariance^-1 mean of a mean vector (a pseudo-inverse when
    the covariance is singular), chi-square on len(mean) degrees of freedom."""
    from scipy.special import chdtrc

    mean = np.asarray(mean, dtype=np.float64)
    df = mean.shape[0]
    try:
        statistic = float(mean @ np.linalg.solve(covariance, mean))
    except np.linalg.LinAlgError:
        statistic = float(mean @ np.linalg.pinv(covariance) @ mean)
    if not np.isfinite(statistic):
        statistic = 0.0 if not mean.any() else math.inf
    return {"statistic": statistic, "df": df, "p": float(chdtrc(df, statistic))}


def spearman_interval(x, y, level: float = 0.95) -> dict:
    """Spearman rank correlation with an interval from Fisher's z and the Bonett-Wright (2000)
    variance (1 + r^2 / 2) / (n - 3). Returns n, rho, lo, hi, p (NaN for n < 4)."""
    from scipy.special import ndtri

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = int(x.size)
    if n < 4 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"n": n, "rho": math.nan, "lo": math.nan, "hi": math.nan, "p": math.nan}
    rx, ry = _average_ranks(x), _average_ranks(y)
    rho = float(np.corrcoef(rx, ry)[0, 1])
    z = math.atanh(min(max(rho, -0.999999), 0.999999))
    half = float(ndtri(0.5 + level / 2.0)) * math.sqrt((1 + rho * rho / 2) / (n - 3))
    # p-value: Student-t approximation on n - 2 degrees of freedom (as scipy's spearmanr).
    statistic = rho * math.sqrt((n - 2) / max(1.0 - rho * rho, 1e-300))
    return {"n": n, "rho": rho, "lo": math.tanh(z - half), "hi": math.tanh(z + half),
            "p": float(t_two_sided_p(statistic, n - 2))}  # fmt: skip


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their mean rank."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size)
    ranks[order] = np.arange(1, x.size + 1)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / counts)[inverse]


def quantile_from_counts(values, counts, q: float, method: str = "nearest") -> float:
    """The ``q`` quantile of a sample given as distinct ``values`` with their ``counts`` (a
    histogram), exactly as polars computes it on the sample itself: ``nearest`` (polars'
    default: the value at position round((n - 1) q), halves away from zero) or ``linear``
    (interpolated between the two neighbouring positions: polars' median, numpy's default).
    NaN for an empty sample."""
    values = np.asarray(values, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    keep = counts > 0
    values, counts = values[keep], counts[keep]
    n = int(counts.sum())
    if n == 0:
        return math.nan
    order = np.argsort(values, kind="stable")
    values, ends = values[order], np.cumsum(counts[order])  # ends[i]: positions below it

    def at(position: int) -> float:
        return float(values[int(np.searchsorted(ends, position, side="right"))])

    position = (n - 1) * q
    if method == "nearest":
        low = math.floor(position)
        return at(low + (1 if position - low >= 0.5 else 0))
    if method == "linear":
        low = math.floor(position)
        a = at(low)
        if low + 1 >= n:
            return a
        return a + (position - low) * (at(low + 1) - a)
    raise ValueError(f"unknown quantile method {method!r}")
