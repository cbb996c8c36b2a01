"""A/B comparison of two Tangram City runs played on the same deals: two tile sets, or two
bonus tables (rules ``planning_bonus`` / ``balance_bonus``), or any other change.

Both runs must use the same master seed, player count, seat mode, strategies and game count, so
that game g of one run and game g of the other have the same deal (the same deal stream: card
order, boards, first start player) and the same strategy in each seat. Each seat's result is
then paired with its twin, and every difference (B minus A) comes with the interval of a paired
mean: far narrower than comparing two independent runs.
"""

import functools

import numpy as np
import polars as pl

from analysis.core.batches import Reduction, analyse
from analysis.core.compare import Comparing, Moved
from analysis.core.reduce import Moments, Sums
from analysis.core.stats import interval_from_moments
from analysis.tangram.tables import players_frame
from sim.core.errors import UserError

PAIRED_KEYS = ("players", "games", "seed", "seats")
METRICS = (
    "total",
    "win_share",
    "rounds_total",
    "planning_bonus",
    "balance_bonus",
    "full_squares",
    "tiles_declined",
)


def _check_manifests(run_a, run_b) -> None:
    for key in PAIRED_KEYS:
        if run_a.manifest.get(key) != run_b.manifest.get(key):
            raise UserError(
                f"runs not paired: {key} differs ({run_a.manifest.get(key)!r} vs "
                f"{run_b.manifest.get(key)!r}); play both with the same --seed, --players, "
                "--games and --seats"
            )
    names_a = [s["name"] for s in run_a.manifest["strategies"]]
    names_b = [s["name"] for s in run_b.manifest["strategies"]]
    # a named set is recorded by its name: its parameters must match too
    params_a = [s.get("params") for s in run_a.manifest["strategies"]]
    params_b = [s.get("params") for s in run_b.manifest["strategies"]]
    if names_a != names_b or params_a != params_b:
        raise UserError(
            f"runs not paired: strategies differ ({names_a} vs {names_b}"
            f"{', the same names with other parameters' if names_a == names_b else ''})"
        )


def _joined(chunk_a, chunk_b) -> pl.DataFrame:
    columns = ["game_id", "seat", "n_players", "strategy_name", *METRICS]
    a = chunk_a.players.select(columns)
    b = chunk_b.players.select(["game_id", "seat", "strategy_name", *METRICS])
    return a.join(b, on=["game_id", "seat"], suffix="_b")


def _paired_reduce(chunks, groups) -> dict:
    """Twin chunks of runs A and B: the deals that differ, seats whose strategy differs, and
    per grouping the moments of every metric's B - A difference."""
    chunk_a, chunk_b = chunks
    seeds = chunk_a.games.select("game_id", "deal_seed").join(
        chunk_b.games.select("game_id", "deal_seed"), on="game_id", suffix="_b"
    )
    joined = _joined(chunk_a, chunk_b)
    out = {
        "dealt": Sums.of(
            seeds, (), (pl.col("deal_seed") != pl.col("deal_seed_b")).sum().alias("games")
        ),
        "strategies": Sums.of(
            joined, (), (pl.col("strategy_name") != pl.col("strategy_name_b")).sum().alias("seats")
        ),
    }
    diffs = joined.with_columns(
        (pl.col(f"{m}_b").cast(pl.Float64) - pl.col(m).cast(pl.Float64)).alias(f"{m}_diff")
        for m in METRICS
    )
    for by in groups:
        name = ",".join(by)
        out[f"{name}.diff"] = Moments.of(diffs, by, [f"{m}_diff" for m in METRICS])
        out[f"{name}.sums"] = Sums.of(
            diffs, by, *(pl.col(m).cast(pl.Float64).sum().alias(f"{m}_a") for m in METRICS),
            *(pl.col(f"{m}_b").cast(pl.Float64).sum().alias(f"{m}_b") for m in METRICS),
        )  # fmt: skip
    return out


GROUPS = (("strategy_name",), ())


def _paired_stats(run_a, run_b, by) -> dict:
    """The merged statistics of the two runs read chunk by chunk side by side, for the
    groupings the section reads and ``by`` (kept on run A for run B)."""
    groups = tuple(dict.fromkeys((*GROUPS, tuple(by))))
    key = f"tangram.compare|{run_b.path}|{groups}"
    if key not in run_a.cache:
        reduce = functools.partial(_paired_reduce, groups=groups)
        reduction = Reduction(f"tangram.compare|{groups}", reduce)
        run_a.cache[key] = analyse((run_a, run_b), [reduction])[reduction.name]
    return run_a.cache[key]


def check_paired(run_a, run_b) -> None:
    """UserError unless the two runs play the same deals with the same seats."""
    _check_manifests(run_a, run_b)
    seeds = _paired_stats(run_a, run_b, ())["dealt"].value("games")
    if seeds:
        raise UserError(f"runs not paired: {seeds} games were dealt differently")


def paired_seats(run_a, run_b) -> pl.DataFrame:
    """One row per seat of every game: each metric in A and in B (suffix ``_b``)."""
    check_paired(run_a, run_b)
    columns = ["game_id", "seat", "n_players", "strategy_name", *METRICS]
    a = players_frame(run_a).select(columns)
    b = players_frame(run_b).select(["game_id", "seat", "strategy_name", *METRICS])
    joined = a.join(b, on=["game_id", "seat"], suffix="_b").collect()
    if (joined["strategy_name"] != joined["strategy_name_b"]).any():
        raise UserError("runs not paired: a seat plays different strategies in the two runs")
    return joined


def paired_differences(run_a, run_b, by: tuple[str, ...] = ("strategy_name",)) -> pl.DataFrame:
    """B minus A for every metric, per group (default: strategy; () for all seats), with the
    95% interval of the paired mean and its p-value for "no change"."""
    check_paired(run_a, run_b)
    stats = _paired_stats(run_a, run_b, by)
    if stats["strategies"].value("seats"):
        raise UserError("runs not paired: a seat plays different strategies in the two runs")
    name = ",".join(by)
    moments = stats[f"{name}.diff"].table()
    sums = stats[f"{name}.sums"].table()
    frame = moments.join(sums, on=list(by)) if by else pl.concat([moments, sums], how="horizontal")
    rows = []
    for r in frame.sort(list(by)).iter_rows(named=True) if by else frame.iter_rows(named=True):
        n = r["n"]
        row = {k: r[k] for k in by} | {"n": n}
        for metric in METRICS:
            sd = r[f"{metric}_diff_sd"]
            result = interval_from_moments(r[f"{metric}_diff"], np.nan if sd is None else sd, n)
            row |= {
                f"{metric}_a": r[f"{metric}_a"] / n,
                f"{metric}_b": r[f"{metric}_b"] / n,
                f"{metric}_diff": float(result["mean"]),
                f"{metric}_diff_lo": float(result["lo"]),
                f"{metric}_diff_hi": float(result["hi"]),
                f"{metric}_p": float(result["p"]),
            }
        rows.append(row)
    frame = pl.DataFrame(rows)
    return frame.sort(list(by)) if by else frame


# --- Tangram City's part of ``neom compare`` (analysis.core.compare) ----------------------------

# Per metric: its words, and the digits its differences are shown with.
METRIC_WORDS = {
    "total": ("final score", 2),
    "win_share": ("win share", 3),
    "rounds_total": ("round scores (largest rectangle and colours)", 2),
    "planning_bonus": ("planning bonus", 2),
    "balance_bonus": ("balance bonus", 2),
    "full_squares": ("full squares", 2),
    "tiles_declined": ("tiles declined", 2),
}


def scoring_rows(run_a, run_b) -> pl.DataFrame:
    """Every metric's paired difference per strategy and over every seat (``group``), one row
    per (group, metric), with ``q``: Benjamini-Hochberg across all rows."""
    from analysis.core.stats import adjust

    frames = [
        paired_differences(run_a, run_b).with_columns(pl.col("strategy_name").alias("group")),
        paired_differences(run_a, run_b, by=()).with_columns(pl.lit("every seat").alias("group")),
    ]
    rows = []
    for frame in frames:
        for r in frame.iter_rows(named=True):
            for metric in METRICS:
                rows.append({
                    "group": r["group"], "metric": metric, "n": r["n"],
                    "a": r[f"{metric}_a"], "b": r[f"{metric}_b"], "diff": r[f"{metric}_diff"],
                    "lo": r[f"{metric}_diff_lo"], "hi": r[f"{metric}_diff_hi"],
                    "p": r[f"{metric}_p"],
                })  # fmt: skip
    out = pl.DataFrame(rows)
    p = out["p"].to_numpy().astype(np.float64)
    tested = np.isfinite(p)
    q = np.full(p.shape, np.nan)
    if tested.any():
        q[tested] = adjust(p[tested], "bh")
    return out.with_columns(pl.Series("q", q))


def _difference(r) -> str:
    digits = METRIC_WORDS[r["metric"]][1]
    return f"{r['diff']:+.{digits}f} [{r['lo']:+.{digits}f}, {r['hi']:+.{digits}f}]"


def moved(run_a, run_b, report, changed: set[str], level: float, execution=None):
    """What moved in the scoring: every scoring part's paired difference per strategy and over
    every seat, the significant ones (Benjamini-Hochberg q < ``level``) as findings."""
    from analysis.core.report import clean, html_table, p_cell

    rows = scoring_rows(run_a, run_b)
    significant = rows.filter(pl.col("q") < level).sort(pl.col("diff").abs(), descending=True)
    words = {m: w for m, (w, _) in METRIC_WORDS.items()}
    findings = [
        f"{significant.height} scoring figure{'s' if significant.height != 1 else ''} moved "
        f"significantly (paired, Benjamini-Hochberg across {rows.height}, q < {level:g})"
        + (": " + "; ".join(
            f"{words[r['metric']]} of {r['group']} {r['a']:.2f} → {r['b']:.2f}, "
            f"{_difference(r)}" for r in significant.head(8).iter_rows(named=True))
           if significant.height else "")
        + "."
    ]  # fmt: skip
    shown = rows.sort("metric", "group")
    section = (
        "scoring",
        "What moved in the scoring",
        [
            "<p>Every scoring part, paired game by game on the twin deals (candidate − "
            "baseline, the same seat), per strategy and over every seat; 95% intervals of the "
            "paired mean; q: Benjamini-Hochberg across all rows.</p>",
            html_table(
                shown,
                [
                    ("figure", lambda r: words[r["metric"]]),
                    ("seats", lambda r: r["group"]),
                    ("pairs", lambda r: r["n"]),
                    ("baseline → candidate", lambda r: f"{r['a']:.3g} → {r['b']:.3g}"),
                    ("Δ [95% CI]", _difference),
                    ("q", p_cell("q")),
                ],
            ),
        ],
    )
    items = [
        {
            "kind": "scoring",
            "name": r["group"],
            "metric": r["metric"],
            "effect": clean(r["b"]),
            "lo": None,
            "hi": None,
            "n": r["n"],
            "flag": "moved" if r["q"] < level else None,
            "baseline": clean(r["a"]),
            "candidate": clean(r["b"]),
            "shift": clean(r["diff"]),
            "shift_lo": clean(r["lo"]),
            "shift_hi": clean(r["hi"]),
            "shift_q": clean(r["q"]),
        }  # fmt: skip
        for r in shown.iter_rows(named=True)
    ]
    return Moved(findings, [section], {"scoring": rows}, items)


def _whole(where: str, text: str) -> int:
    if not text.strip().isdigit():
        raise UserError(f"{where}: expected a whole number")
    return int(text)


def _balance_table(where: str, text: str) -> list[int]:
    parts = text.split("/")
    if not all(p.strip().isdigit() for p in parts):
        raise UserError(f"{where}: expected whole numbers A/B/C/D/E/F (distances 0 to 5+)")
    return [int(p) for p in parts]


COMPARING = Comparing(
    diff_sections=("tiles", "boards"),
    moved=moved,
    # the bonus tables are rules entries (sim.tangram.rules.make_rules checks their values)
    rules_tables={"planning_bonus": _whole, "balance_bonus": _balance_table},
)
