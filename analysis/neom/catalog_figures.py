"""The figures a rebalanced catalogue is judged by (issue 26 part 4), from one run with events:

- cornerstones flagged against the median cornerstone: the report's flag rule (the p-value for
  "inside the band", Benjamini-Hochberg across the tested cornerstones) applied to
  ``vs_median``; and, stricter, those whose 95% interval against the median lies wholly outside
  the band without a correction (the goal ``neom balance --all`` works to);
- generation tiles never placed where dealt (the report's dead tiles, the ones never dealt at
  the player count left out);
- the share of games in which some city produces each good at the end (``goods_mask``), and the
  share of final cities;
- selections sold and placed per seat;
- named items: a cornerstone's draft and placement rates and effect against the median; a
  tile's placements per game, sale rate and effect.

``python -m analysis.neom.catalog_figures RUN [RUN ...]`` prints them side by side as Markdown
(the before/after table of docs/reconstruction.md).
"""

import argparse
import math
import sys

import numpy as np
import polars as pl

from analysis.core.stats import adjust, band_p_value
from analysis.core.tabulate import Flagging
from sim.core.errors import UserError

BAND = 0.02
MIN_N = 100
GOOD_SHARE = 0.05  # the goal: every good produced by some city in at least 5% of games


def cornerstone_flags(table: pl.DataFrame, band: float = BAND, level: float = 0.05):
    """The cornerstone table with ``median_flag`` (BH across the tested rows, the report's rule
    on ``vs_median``) and ``median_outside`` (the uncorrected interval wholly outside)."""
    small = table["small"].to_numpy()
    se = table["effect_se"].to_numpy().astype(np.float64)
    df = table["clusters"].to_numpy().astype(np.float64) - 1
    effect = table["vs_median"].to_numpy().astype(np.float64)
    p = np.where(small, np.nan, band_p_value(effect, se, df, band))
    q = adjust(p, "bh")
    flag = np.where(q < level, np.where(effect > 0, "strong", "weak"), "")
    lo, hi = table["vs_median_lo"].to_numpy(), table["vs_median_hi"].to_numpy()
    outside = ~small & ((lo > band) | (hi < -band))
    return table.with_columns(
        pl.Series("median_q", q),
        pl.Series("median_flag", flag),
        pl.Series("median_outside", outside),
    )


def goods_shares(run) -> pl.DataFrame:
    """Per good: the share of games in which some city produces it at the end, and the share of
    final cities that do."""
    tables = run.tables
    players = run.players.select("game_id", "goods_mask").collect()
    masks = players["goods_mask"].to_numpy().astype(np.int64)
    games = players["game_id"].to_numpy()
    n_games = len(np.unique(games))
    rows = []
    for bit, name in enumerate(tables.good_names):
        has = (masks >> bit) & 1 == 1
        in_games = len(np.unique(games[has]))
        rows.append({"good": name, "tier": int(tables.goods_tier[bit]),
                     "games": in_games / n_games, "cities": float(has.mean())})  # fmt: skip
    return pl.DataFrame(rows)


def figures(run, band: float = BAND, min_n: int = MIN_N) -> dict:
    """Every figure of the table for one run (shares as fractions)."""
    from analysis.neom import cornerstones, tiles

    flagging = Flagging(band=band, min_n=min_n)
    cs = cornerstone_flags(cornerstones.cornerstone_table(run, flagging), band)
    tt = tiles.tile_table(run, flagging)
    dead = tiles.dead_tiles(run, tt)
    never = dead.filter(pl.col("dead") & ~pl.col("why").str.starts_with("never dealt"))
    n_games = run.games.select(pl.len()).collect().item()
    seats = run.players.select(
        pl.col("tiles_sold").mean().alias("sold"),
        pl.sum_horizontal(
            "placed_residential", "placed_commercial", "placed_industrial", "placed_public",
            "placed_resource",
        ).mean().alias("placed_types"),
        pl.col("total").mean().alias("score"),
    ).collect().row(0, named=True)  # fmt: skip
    goods = goods_shares(run)
    return {
        "games": n_games,
        "field": ",".join(run.strategy_names),
        "catalog": run.data_name,
        "cornerstones_tested": int((~cs["small"]).sum()),
        "median_flagged": cs.filter(pl.col("median_flag") != "")["tile_name"].to_list(),
        "median_outside": cs.filter(pl.col("median_outside"))["tile_name"].to_list(),
        "cornerstones_flagged": cs.filter(pl.col("flag") != "")["tile_name"].to_list(),
        "tiles_flagged": tt.filter(pl.col("flag") != "")["tile_name"].to_list(),
        "never_placed": never["tile_name"].to_list(),
        "never_placed_why": dict(zip(never["tile_name"], never["why"], strict=True)),
        "goods": {r["good"]: (r["games"], r["cities"]) for r in goods.iter_rows(named=True)},
        "sold_per_seat": seats["sold"],
        "score": seats["score"],
        "cornerstone_rows": {r["tile_name"]: r for r in cs.iter_rows(named=True)},
        "tile_rows": {r["tile_name"]: r for r in tt.iter_rows(named=True)},
        "placed_per_game": {
            r["tile_name"]: r["placed"] / n_games for r in tt.iter_rows(named=True)
        },
    }


def goals_met(fig: dict, max_never: int = 3, good_share: float = GOOD_SHARE) -> dict:
    """The three goals of issue 26 part 4, each True or False."""
    return {
        "no cornerstone flagged against the median": not fig["median_flagged"],
        f"at most {max_never} tiles never placed where dealt": len(fig["never_placed"])
        <= max_never,
        f"every good in >= {100 * good_share:g}% of games": all(
            games >= good_share for games, _ in fig["goods"].values()
        ),
    }


def _pct(x) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{100 * x:.1f}%"


def _pp(x) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{100 * x:+.1f}"


ITEMS = (
    "Central Park", "Community Center", "Logistics Hub", "Auction House", "Industrial Park",
    "Concert Hall", "Copper Smelter", "Pawn Shop", "Grocery Store", "Gas Station",
    "Insurance Office", "Real Estate Agency",
)  # fmt: skip


def table(figs: list[dict], labels: list[str], items=ITEMS) -> list[str]:
    """The before/after table as Markdown lines."""
    head = "| | " + " | ".join(labels) + " |"
    lines = [head, "|---|" + "---:|" * len(figs)]

    def row(name, cells):
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("games", [f"{f['games']:,}" for f in figs])
    row("mean score", [f"{f['score']:.1f}" for f in figs])
    row("cornerstones flagged vs median (BH)",
        [f"{len(f['median_flagged'])} of {f['cornerstones_tested']}" for f in figs])  # fmt: skip
    row("cornerstones whose interval vs median is outside ±2 (uncorrected)",
        [str(len(f["median_outside"])) for f in figs])  # fmt: skip
    row("cornerstones / tiles flagged by the report",
        [f"{len(f['cornerstones_flagged'])} / {len(f['tiles_flagged'])}"
         for f in figs])  # fmt: skip
    row("generation tiles never placed where dealt", [str(len(f["never_placed"])) for f in figs])
    row("selections sold per seat (of 21)", [f"{f['sold_per_seat']:.2f}" for f in figs])
    for good in figs[0]["goods"]:
        row(f"{good}: games / final cities",
            [f"{_pct(f['goods'][good][0])} / {_pct(f['goods'][good][1])}"
             for f in figs])  # fmt: skip
    for item in items:
        cells = []
        for f in figs:
            cs = f["cornerstone_rows"].get(item)
            if cs is not None:
                cells.append(f"drafted {_pct(cs['drafted_rate'])}, placed {_pct(cs['placed_rate'])}"
                             f", vs median {_pp(cs['vs_median'])}")  # fmt: skip
                continue
            tile = f["tile_rows"].get(item)
            if tile is None:
                cells.append("never selected")
                continue
            cells.append(f"placed in {_pct(f['placed_per_game'][item])} of games, sold "
                         f"{_pct(tile['sell_rate'])} of selections, effect "
                         f"{_pp(tile['effect'])}")  # fmt: skip
        row(item, cells)
    for f, label in zip(figs, labels, strict=True):
        lines.append("")
        never = ", ".join(f"{n} ({w})" for n, w in f["never_placed_why"].items())
        lines.append(f"{label}: never placed where dealt: {never or 'none'}")
        lines.append(f"{label}: flagged vs median: " + (", ".join(f["median_flagged"]) or "none"))
        met = goals_met(f)
        lines.append(f"{label}: goals: " + "; ".join(f"{k}: {'yes' if v else 'NO'}"
                                                     for k, v in met.items()))  # fmt: skip
    return lines


PROG = "python -m analysis.neom.catalog_figures"


def open_checked(path):
    """The run at ``path``, refused in one line unless its figures can be computed: a NEOM
    run (a Tangram City run has no catalogue) played with --events (the cornerstone drafts
    and the tiles dealt are read from the events table)."""
    from analysis.core.load import open_run

    run = open_run(path)
    if run.game.name != "neom":
        raise UserError(f"{path}: a {run.game.title} run; the catalogue figures are NEOM's")
    if run.events is None:
        raise UserError(
            f"{path}: played without --events; the catalogue figures need the events table "
            "(neom simulate --events)"
        )
    return run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run folders played with --events")
    parser.add_argument("--labels", default=None, help="comma-separated column labels")
    args = parser.parse_args(argv)
    labels = args.labels.split(",") if args.labels else [str(r) for r in args.runs]
    if len(labels) != len(args.runs):
        raise UserError(f"--labels: {len(labels)} labels for {len(args.runs)} runs; one per run")
    figs = [figures(open_checked(r)) for r in args.runs]
    print("\n".join(table(figs, labels)))
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    sys.exit(guarded(main, PROG))
