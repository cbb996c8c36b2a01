"""Sufficient statistics that a report section computes on one chunk of games and merges.

Every quantity of a report is a sum over games, so a section reads a run chunk by chunk (whole
deals at a time, ``analysis.core.batches``) and keeps only small statistics per group: counts
and sums (:class:`Sums`, also histograms and pattern counts), means with their spread
(:class:`Moments`), the cluster sums of a cluster-robust mean (:class:`ClusterMoments`, and
:class:`VectorClusterMoments` for a vector per cluster). Each kind knows its merge
(``merge_all``), which does not depend on how the games were cut into chunks:

- sums, counts, maxima and minima merge exactly (integers exactly; float sums exactly
  rounded, :mod:`analysis.core.exact`, so the order of the parts does not matter);
- a mean and its sum of squares merge by Chan et al.'s parallel formula, each part centred
  on its own mean, so a large mean does not cancel the spread;
- the cluster-robust (CR1) variance needs, per group, sum over clusters c of
  (s_c - m k_c)^2 (s_c: the cluster's sum of the value, k_c its rows, m the group mean over
  the whole run). As a function of m it is the quadratic Q - 2 (m - r) B + (m - r)^2 C with
  Q, B, C summed about a shift r, so parts summed about their own means are moved to the
  merged mean and added. A cluster (a deal) never spans two chunks, so the counts of
  clusters add up too.

Medians and percentiles of integer values (scores, margins) come from merged histograms and
are exact (:func:`analysis.core.stats.quantile_from_counts`); see docs/analysis.md for how a
section is written with these.
"""

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from analysis.core.arrays import unique, unique_inverse
from analysis.core.exact import group_sums

_FLOATS = (pl.Float32, pl.Float64)
_NUMERIC_INTS = (pl.Int8, pl.Int16, pl.Int32, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


def _widened(frame: pl.DataFrame, keys) -> pl.DataFrame:
    """Integer statistic columns as Int64 (counts and sums must not wrap when merged)."""
    values = [c for c in frame.columns if c not in keys]
    return frame.with_columns(
        pl.col(c).cast(pl.Int64) for c in values if frame.schema[c] in _NUMERIC_INTS
    )


def _concat(frames: list[pl.DataFrame]) -> pl.DataFrame:
    frames = [f for f in frames if f.width]
    if not frames:
        return pl.DataFrame()
    columns = frames[0].columns
    return pl.concat([f.select(columns) for f in frames], how="vertical_relaxed")


def _aggregate(frame: pl.DataFrame, keys, aggregations, maintain_order=False) -> pl.DataFrame:
    """``aggregations`` per group of ``keys``, or over the whole frame without keys."""
    if keys:
        return frame.group_by(keys, maintain_order=maintain_order).agg(aggregations)
    return frame.select(aggregations)


def _with_group_totals(frame: pl.DataFrame, keys, totals) -> pl.DataFrame:
    """``frame`` with each row's group ``totals`` beside it (the whole frame's, without keys):
    what a part's own figures are merged against."""
    if keys:
        return frame.join(frame.group_by(keys).agg(totals), on=keys, how="left",
                          nulls_equal=True, maintain_order="left")  # fmt: skip
    return frame.with_columns(totals)


def canonical(frame: pl.DataFrame, columns=None) -> pl.DataFrame:
    """``frame`` in one fixed row order (sorted by ``columns``, default all) when a float is
    summed from it: a float sum depends on the order it adds in, and a frame made by a
    group-by or join comes in an order that varies from call to call (polars' threads), so
    the same chunk would give sums differing in the last digit. Integer sums are exact in
    any order: frames without a float column are left as they are."""
    columns = list(frame.columns if columns is None else columns)
    if frame.height < 2 or not any(frame.schema[c] in _FLOATS for c in columns):
        return frame
    sortable = [c for c in columns if not frame.schema[c].is_nested()]
    return frame.sort(sortable, nulls_last=True, maintain_order=True)


def mean_or_null(total: str, count: str) -> pl.Expr:
    """``total / count`` where ``count > 0``, else null: a mean over nothing is unknown, shown
    as a blank rather than NaN or 0."""
    return pl.when(pl.col(count) > 0).then(pl.col(total) / pl.col(count)).otherwise(None)


def merge_stats(parts: list[dict]) -> dict:
    """Merge a list of ``{name: statistic}`` dicts (one per chunk or group of chunks) name by
    name; a name missing from a part counts as nothing seen there."""
    names = list(dict.fromkeys(name for part in parts for name in part))
    merged = {}
    for name in names:
        items = [part[name] for part in parts if name in part and part[name] is not None]
        merged[name] = type(items[0]).merge_all(items) if items else None
    return merged


@dataclass(frozen=True)
class Sums:
    """Per group of ``keys``: columns merged by summing (default), or by max / min
    (``how``: column -> "sum" | "max" | "min"). Counts, sums, histograms (the value is a key,
    the count a column) and pattern counts are all Sums."""

    frame: pl.DataFrame
    keys: tuple[str, ...]
    how: dict = field(default_factory=dict)

    @classmethod
    def of(cls, frame: pl.DataFrame, keys, *aggregations: pl.Expr, how=None) -> "Sums":
        """Group ``frame`` by ``keys`` (none: one row) and keep ``aggregations``."""
        keys = tuple([keys] if isinstance(keys, str) else keys)
        table = _aggregate(canonical(frame), keys, list(aggregations), maintain_order=True)
        return cls(_widened(table, keys), keys, dict(how or {}))

    @classmethod
    def merge_all(cls, parts: list["Sums"]) -> "Sums":
        if len(parts) == 1:
            return parts[0]
        first, frame = parts[0], _concat([p.frame for p in parts])
        values = [c for c in frame.columns if c not in first.keys]
        # Float sums exactly rounded (analysis.core.exact): the same for any order of the
        # parts and any polars thread count.
        exact = [c for c in values
                 if first.how.get(c, "sum") == "sum" and frame.schema[c] in _FLOATS]  # fmt: skip
        rule = {"sum": pl.Expr.sum, "max": pl.Expr.max, "min": pl.Expr.min}
        aggregations = [rule[first.how.get(c, "sum")](pl.col(c)) for c in values
                        if c not in exact]  # fmt: skip
        if not exact:
            return cls(_aggregate(frame, first.keys, aggregations), first.keys, first.how)
        sums = group_sums(frame, list(first.keys), exact).drop("rows")
        if first.keys:
            rest = _aggregate(frame, first.keys, aggregations) if aggregations else None
            if rest is not None:
                sums = sums.join(rest, on=list(first.keys), how="left", nulls_equal=True)
        elif aggregations:
            sums = pl.concat([sums, frame.select(aggregations)], how="horizontal")
        sums = sums.with_columns(pl.col(c).cast(frame.schema[c]) for c in exact)
        return cls(sums.select(frame.columns), first.keys, first.how)

    def table(self) -> pl.DataFrame:
        """The merged frame, sorted by its keys."""
        return self.frame.sort(self.keys) if self.keys else self.frame

    def value(self, column: str, default=0):
        """A keyless Sums' total of ``column``."""
        if self.frame.height == 0 or column not in self.frame.columns:
            return default
        item = self.frame[column][0]
        return default if item is None else item


@dataclass(frozen=True)
class Moments:
    """Per group of ``keys`` and per value column: the count of non-null values, their sum
    and their sum of squared deviations from the group mean (``{v}__n``, ``{v}__sum``,
    ``{v}__m2``): the mean and the standard deviation, merged without cancellation."""

    frame: pl.DataFrame
    keys: tuple[str, ...]
    values: tuple[str, ...]

    @classmethod
    def of(cls, frame: pl.DataFrame, keys, values) -> "Moments":
        keys = tuple([keys] if isinstance(keys, str) else keys)
        values = tuple([values] if isinstance(values, str) else values)
        aggregations = []
        for v in values:
            x = pl.col(v).cast(pl.Float64)
            aggregations += [
                x.count().cast(pl.Int64).alias(f"{v}__n"),
                x.sum().alias(f"{v}__sum"),
                ((x - x.mean()) ** 2).sum().alias(f"{v}__m2"),
            ]
        frame = canonical(frame.select(*keys, *values))
        return cls(_aggregate(frame, keys, aggregations, maintain_order=True), keys, values)

    @classmethod
    def merge_all(cls, parts: list["Moments"]) -> "Moments":
        if len(parts) == 1:
            return parts[0]
        frame = _concat([p.frame for p in parts])
        keys, values = parts[0].keys, parts[0].values
        totals = []
        for v in values:
            totals += [pl.col(f"{v}__n").sum().alias(f"_{v}_n"),
                       pl.col(f"{v}__sum").sum().alias(f"_{v}_sum")]  # fmt: skip
        frame = _with_group_totals(frame, keys, totals)
        aggregations = []
        for v in values:
            n, s, m2 = pl.col(f"{v}__n"), pl.col(f"{v}__sum"), pl.col(f"{v}__m2")
            part_mean = s / n.cast(pl.Float64)
            mean = pl.col(f"_{v}_sum") / pl.col(f"_{v}_n").cast(pl.Float64)
            shift = pl.when(n > 0).then(n * (part_mean - mean) ** 2).otherwise(0.0)
            aggregations += [
                n.sum().alias(f"{v}__n"),
                s.sum().alias(f"{v}__sum"),
                (m2.fill_null(0.0) + shift).sum().alias(f"{v}__m2"),
            ]
        return cls(_aggregate(frame, keys, aggregations), keys, values)

    def table(self, ddof: int = 1) -> pl.DataFrame:
        """Keys, ``n`` (rows of the first value) and per value its mean ``{v}`` and standard
        deviation ``{v}_sd`` (``ddof``; null below ``ddof + 1`` values), sorted by the keys."""
        columns = []
        for v in self.values:
            n = pl.col(f"{v}__n")
            columns += [
                mean_or_null(f"{v}__sum", f"{v}__n").alias(v),
                pl.when(n > ddof)
                .then((pl.col(f"{v}__m2").clip(0.0) / (n - ddof)).sqrt())
                .otherwise(None)
                .alias(f"{v}_sd"),
            ]
        out = self.frame.select(*self.keys, pl.col(f"{self.values[0]}__n").alias("n"), *columns)
        return out.sort(self.keys) if self.keys else out


@dataclass(frozen=True)
class ClusterMoments:
    """Per group of ``keys``: what a mean with a cluster-robust (CR1) standard error needs.

    Columns: ``n`` (rows), ``clusters``, ``sum``, ``shift`` (r) and ``q``, ``b``, ``c``: the sums
    over clusters of (s_c - r k_c)^2, (s_c - r k_c) k_c and k_c^2; with an expected win share
    e per row also ``floor`` (sum e(1 - e)) and ``e_sum`` (sum e). See the module docstring."""

    frame: pl.DataFrame
    keys: tuple[str, ...]
    expected: bool

    @classmethod
    def of(
        cls,
        frame: pl.DataFrame,
        keys,
        value: str = "residual",
        expected: str | None = "expected",
        cluster: str = "deal",
    ) -> "ClusterMoments":
        """From one row per unit (a seat, say) of the groups: ``value``, ``cluster`` and the
        expected share ``expected`` (None: no variance floor). Rows whose value is null or
        NaN do not count."""
        keys = list([keys] if isinstance(keys, str) else keys)
        v = pl.col(value).cast(pl.Float64)
        rows = frame.filter(v.is_not_null() & v.is_not_nan()).select(
            *keys,
            v.alias("_v"),
            pl.col(cluster).alias("_c"),
            *([pl.col(expected).cast(pl.Float64).alias("_e")] if expected else []),
        )
        # Exactly rounded sums (analysis.core.exact): the same for any row order and any
        # polars thread count (polars' own float sums vary with both).
        floats = ["_v"]
        if expected:
            rows = rows.with_columns((pl.col("_e") * (1.0 - pl.col("_e"))).alias("_f"))
            floats += ["_f", "_e"]
        groups = group_sums(rows, keys, floats).rename(
            {"rows": "n", "_v": "sum"} | ({"_f": "floor", "_e": "e_sum"} if expected else {})
        )
        groups = groups.with_columns((pl.col("sum") / pl.col("n")).alias("shift"))
        by_cluster = group_sums(rows, [*keys, "_c"], ["_v"]).select(
            *keys, pl.col("_v").alias("_s"), pl.col("rows").cast(pl.Float64).alias("_k")
        )
        if keys:
            by_cluster = by_cluster.join(groups.select(*keys, "shift"), on=keys, how="left",
                                         nulls_equal=True, maintain_order="left")  # fmt: skip
        else:
            shift = groups["shift"][0] if groups.height else None
            by_cluster = by_cluster.with_columns(pl.lit(shift, dtype=pl.Float64).alias("shift"))
        centred = pl.col("_s") - pl.col("shift") * pl.col("_k")
        terms = by_cluster.select(
            *keys,
            (centred**2).alias("q"),
            (centred * pl.col("_k")).alias("b"),
            (pl.col("_k") ** 2).alias("c"),
        )
        spread = group_sums(terms, keys, ["q", "b", "c"]).rename({"rows": "clusters"})
        columns = ["n", "clusters", "sum", *(["floor", "e_sum"] if expected else []), "shift",
                   "q", "b", "c"]  # fmt: skip
        if keys:
            out = groups.join(spread, on=keys, how="left", nulls_equal=True,
                              maintain_order="left")  # fmt: skip
        else:
            out = pl.concat([groups, spread], how="horizontal")
        out = out.select(*keys, *columns)
        return cls(out, tuple(keys), bool(expected))

    @classmethod
    def from_codes(
        cls,
        keys: pl.DataFrame,
        code,
        value,
        cluster,
        expected=None,
    ) -> "ClusterMoments":
        """The same statistics from arrays, one entry per row (for sections that work on
        NumPy arrays): ``keys`` has one row per group (its key columns), ``code`` each row's
        group (a row of ``keys``), ``value``, ``cluster`` (any integers) and the expected
        share ``expected`` (None: no variance floor). NaN values do not count."""
        code = np.asarray(code, dtype=np.int64)
        value = np.asarray(value, dtype=np.float64)
        cluster = np.asarray(cluster, dtype=np.int64)
        keep = ~np.isnan(value)
        if not keep.all():
            code, value, cluster = code[keep], value[keep], cluster[keep]
            expected = None if expected is None else np.asarray(expected)[keep]
        n_keys = keys.height
        n = np.bincount(code, minlength=n_keys)
        total = np.bincount(code, weights=value, minlength=n_keys)
        with np.errstate(invalid="ignore", divide="ignore"):
            shift = np.where(n > 0, total / np.maximum(n, 1), 0.0)
        if cluster.size and cluster.min() >= 0 and cluster.max() < 4 * cluster.size:
            cluster_index, n_clusters = cluster, int(cluster.max()) + 1  # codes already
        else:
            clusters, cluster_index = unique_inverse(cluster)
            n_clusters = max(len(clusters), 1)
        pair = code * n_clusters + cluster_index
        if n_keys * n_clusters <= 4_000_000:
            sums = np.bincount(pair, weights=value, minlength=n_keys * n_clusters)
            rows = np.bincount(pair, minlength=n_keys * n_clusters).astype(np.float64)
            used = np.nonzero(rows)[0]
            sums, rows = sums[used], rows[used]
        else:
            used, inverse = unique_inverse(pair)
            sums = np.bincount(inverse, weights=value)
            rows = np.bincount(inverse).astype(np.float64)
        owner = used // n_clusters
        centred = sums - shift[owner] * rows
        columns = {
            "n": n,
            "clusters": np.bincount(owner, minlength=n_keys),
            "sum": total,
            "shift": shift,
            "q": np.bincount(owner, weights=centred**2, minlength=n_keys),
            "b": np.bincount(owner, weights=centred * rows, minlength=n_keys),
            "c": np.bincount(owner, weights=rows**2, minlength=n_keys),
        }
        if expected is not None:
            e = np.asarray(expected, dtype=np.float64)
            columns["floor"] = np.bincount(code, weights=e * (1.0 - e), minlength=n_keys)
            columns["e_sum"] = np.bincount(code, weights=e, minlength=n_keys)
        present = n > 0
        frame = keys.filter(pl.Series(present)).with_columns(
            pl.Series(name, array[present], dtype=pl.Int64 if name in ("n", "clusters")
                      else pl.Float64)
            for name, array in columns.items()
        )  # fmt: skip
        return cls(frame, tuple(keys.columns), expected is not None)

    @classmethod
    def merge_all(cls, parts: list["ClusterMoments"]) -> "ClusterMoments":
        if len(parts) == 1:
            return parts[0]
        first, keys = parts[0], list(parts[0].keys)
        frame = _concat([p.frame for p in parts])
        # Exactly rounded sums (analysis.core.exact): the same in any order of the parts.
        added = ["n", "clusters", "sum", *(["floor", "e_sum"] if first.expected else []), "c"]
        merged = group_sums(frame, keys, added).drop("rows")
        merged = merged.with_columns((pl.col("sum") / pl.col("n")).alias("shift"))
        if keys:
            frame = frame.join(merged.select(*keys, pl.col("shift").alias("_m")), on=keys,
                               how="left", nulls_equal=True, maintain_order="left")  # fmt: skip
        else:
            frame = frame.with_columns(pl.lit(merged["shift"][0], dtype=pl.Float64).alias("_m"))
        d = pl.col("_m") - pl.col("shift")
        moved = frame.select(
            *keys,
            (pl.col("q") - 2.0 * d * pl.col("b") + d**2 * pl.col("c")).alias("q"),
            (pl.col("b") - d * pl.col("c")).alias("b"),
        )
        spread = group_sums(moved, keys, ["q", "b"]).drop("rows")
        out = (merged.join(spread, on=keys, how="left", nulls_equal=True, maintain_order="left")
               if keys else pl.concat([merged, spread], how="horizontal"))  # fmt: skip
        return cls(out.select(first.frame.columns), first.keys, first.expected)

    def effect_table(self, name: str = "effect", level: float = 0.95) -> pl.DataFrame:
        """The table of :func:`analysis.core.tabulate.effect_table` from these moments."""
        from analysis.core.stats import t_quantile, t_two_sided_p

        keys = list(self.keys)
        out = self.frame.sort(keys) if keys else self.frame
        n = out["n"].to_numpy().astype(np.float64)
        g = out["clusters"].to_numpy().astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = out["sum"].to_numpy() / n
            # The spread about the shift, moved to the group mean (shift = mean once merged).
            d = mean - out["shift"].to_numpy()
            e2 = out["q"].to_numpy() - 2.0 * d * out["b"].to_numpy() + d**2 * out["c"].to_numpy()
            e2 = np.maximum(e2, 0.0)
            variance = np.where(g > 1, g / (g - 1), np.nan) * e2 / n**2
            if self.expected:
                variance = np.fmax(variance, out["floor"].to_numpy() / n**2)
            variance = np.where(g > 1, variance, np.nan)
            se = np.sqrt(variance)
            half = t_quantile(g - 1, level) * se
            statistic = np.where(se > 0, mean / se, np.where(mean == 0, 0.0, np.inf))
        lo, hi = mean - half, mean + half
        if self.expected:
            e = out["e_sum"].to_numpy() / n
            lo, hi = np.fmax(lo, -e), np.fmin(hi, 1.0 - e)
        return out.select(
            *keys,
            pl.col("n").cast(pl.UInt32),
            pl.col("clusters").cast(pl.UInt32),
            pl.Series(name, mean),
            pl.Series(f"{name}_se", se),
            pl.Series(f"{name}_lo", lo),
            pl.Series(f"{name}_hi", hi),
            pl.Series(f"{name}_p0", t_two_sided_p(statistic, g - 1)),
        )


@dataclass(frozen=True)
class VectorClusterMoments:
    """Per key (a player count, say): a vector x per row, and the cluster sums of a
    cluster-robust covariance of its mean: ``n`` rows, ``clusters``, ``total`` (sum of x),
    ``shift`` r and ``q`` = sum over clusters of (x_c - r k_c)(x_c - r k_c)^T, ``b`` =
    sum (x_c - r k_c) k_c, ``c`` = sum k_c^2 (numpy arrays, merged like ClusterMoments)."""

    parts: dict  # key -> dict(n, clusters, total, shift, q, b, c)

    @classmethod
    def of(cls, keys: np.ndarray, x: np.ndarray, clusters: np.ndarray) -> "VectorClusterMoments":
        """``keys`` (n,), ``x`` (n, d), ``clusters`` (n,) for the rows of one chunk."""
        out = {}
        for key in unique(keys):
            rows = keys == key
            xs, cs = x[rows].astype(np.float64), clusters[rows]
            _, index = unique_inverse(cs)
            g = int(index.max()) + 1
            shift = xs.mean(axis=0)
            k = np.bincount(index, minlength=g).astype(np.float64)
            sums = np.zeros((g, xs.shape[1]))
            np.add.at(sums, index, xs)
            centred = sums - k[:, None] * shift[None, :]
            out[key.item()] = {
                "n": int(xs.shape[0]),
                "clusters": g,
                "total": xs.sum(axis=0),
                "shift": shift,
                "q": centred.T @ centred,
                "b": centred.T @ k,
                "c": float(k @ k),
            }
        return cls(out)

    @classmethod
    def merge_all(cls, parts: list["VectorClusterMoments"]) -> "VectorClusterMoments":
        if len(parts) == 1:
            return parts[0]
        merged = {}
        for key in sorted({k for p in parts for k in p.parts}):
            items = [p.parts[key] for p in parts if key in p.parts]
            n = sum(i["n"] for i in items)
            total = np.sum([i["total"] for i in items], axis=0)
            mean = total / n
            q = np.zeros_like(items[0]["q"])
            b = np.zeros_like(items[0]["b"])
            for i in items:
                d = mean - i["shift"]
                q += i["q"] - np.outer(d, i["b"]) - np.outer(i["b"], d) + i["c"] * np.outer(d, d)
                b += i["b"] - d * i["c"]
            merged[key] = {
                "n": n,
                "clusters": sum(i["clusters"] for i in items),
                "total": total,
                "shift": mean,
                "q": q,
                "b": b,
                "c": float(sum(i["c"] for i in items)),
            }
        return cls(merged)

    def covariance(self, key) -> tuple[np.ndarray, np.ndarray, int, int]:
        """(mean, CR1 covariance of the mean, rows, clusters) of ``key``."""
        part = self.parts[key]
        n, g = part["n"], part["clusters"]
        mean = part["total"] / n
        d = mean - part["shift"]
        spread = (
            part["q"] - np.outer(d, part["b"]) - np.outer(part["b"], d) + part["c"] * np.outer(d, d)
        )
        return mean, spread * (g / (g - 1) if g > 1 else np.nan) / n**2, n, g


@dataclass(frozen=True)
class CoMoments:
    """Per group of ``keys``: a pair of values (x, y) with their count, sums and co-moments
    about the means (``n``, ``sx``, ``sy``, ``cxx``, ``cxy``, ``cyy``), merged by the parallel
    covariance formula (each part centred on its own means): a least-squares slope or a
    correlation, over the whole run."""

    frame: pl.DataFrame
    keys: tuple[str, ...]

    @classmethod
    def of(cls, frame: pl.DataFrame, keys, x: str, y: str) -> "CoMoments":
        keys = tuple([keys] if isinstance(keys, str) else keys)
        rows = frame.select(
            *keys, pl.col(x).cast(pl.Float64).alias("_x"), pl.col(y).cast(pl.Float64).alias("_y")
        ).drop_nulls(["_x", "_y"])
        rows = canonical(rows)
        dx, dy = pl.col("_x") - pl.col("_x").mean(), pl.col("_y") - pl.col("_y").mean()
        aggregations = [
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("_x").sum().alias("sx"),
            pl.col("_y").sum().alias("sy"),
            (dx * dx).sum().alias("cxx"),
            (dx * dy).sum().alias("cxy"),
            (dy * dy).sum().alias("cyy"),
        ]
        return cls(_aggregate(rows, keys, aggregations), keys)

    @classmethod
    def merge_all(cls, parts: list["CoMoments"]) -> "CoMoments":
        if len(parts) == 1:
            return parts[0]
        keys = list(parts[0].keys)
        frame = _concat([p.frame for p in parts]).filter(pl.col("n") > 0)
        totals = [pl.col(c).sum().alias(f"_{c}") for c in ("n", "sx", "sy")]
        frame = _with_group_totals(frame, keys, totals)
        n = pl.col("n").cast(pl.Float64)
        dx = pl.col("sx") / n - pl.col("_sx") / pl.col("_n")
        dy = pl.col("sy") / n - pl.col("_sy") / pl.col("_n")
        aggregations = [
            pl.col("n").sum(),
            pl.col("sx").sum(),
            pl.col("sy").sum(),
            (pl.col("cxx") + n * dx * dx).sum().alias("cxx"),
            (pl.col("cxy") + n * dx * dy).sum().alias("cxy"),
            (pl.col("cyy") + n * dy * dy).sum().alias("cyy"),
        ]
        return cls(_aggregate(frame, keys, aggregations), parts[0].keys)
