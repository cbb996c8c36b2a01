"""A whole-table reference of every table and finding of a NEOM report.

This is main's analysis before the chunk-wise reductions of issue 29 (computations only, no
HTML): plain polars over the whole run, window functions over every game, whole-table joins.
tests/test_batchwise.py checks that the report's chunk-wise path writes the same CSV tables
and findings.json. Helpers that only derive columns from already reduced tables (Wilson
intervals, band flags, rates) are the package's own and not duplicated here.
"""

import math

import numpy as np
import polars as pl

from analysis.core.load import Run
from analysis.core.report import Report
from analysis.core.stats import (
    DEFAULT_BAND,
    DEFAULT_MIN_N,
    bootstrap_interval,
    seat_balance,
    seat_chi_square,
    t_quantile,
    t_two_sided_p,
)
from analysis.core.strategies import ratings
from analysis.core.tabulate import (
    Flagging,
    group_table,
    sign_disagreements,
    with_band_flags,
    with_mean_interval,
    with_median_flags,
    with_wilson,
    with_win_share,
)
from analysis.neom import disasters as package_disasters
from analysis.neom import economy as package_economy
from analysis.neom.cornerstones import COLUMN_ORDER, _add_rates
from analysis.neom.load import CS_GEN_COLUMNS, DISCARDED_CS_COLUMNS, DRAFTED_COLUMNS, SCORE_COLUMNS
from analysis.neom.next_step import next_step, vp_equivalent
from analysis.neom.report import CS_METRIC, DISASTER_METRIC, TILE_METRIC
from analysis.neom.scores import QUANTILES
from analysis.neom.tiles import (
    MIN_PLAYERS_DEALT,
    OUTCOME,
    PASS_STEP,
    RARE_SHARE,
    WHY_CORNERSTONE,
    WHY_NO_GOODS,
    WHY_OUTVALUED,
    WHY_PREREQUISITE,
    WHY_SLUGS,
    WHY_UNAFFORDABLE,
    _cheapest_bound,
    _in_decks,
    passers,
    seen_and_passed,
    with_generation_median_flags,
)
from analysis.neom.usage import usage_table
from sim.neom import constants as K
from sim.neom.constants import HAND_SIZE, N_GENERATIONS, START_MONEY, TURNS_PER_GENERATION
from sim.neom.records import (
    CS_SWAPPED_AWAY,
    EV_BUY,
    EV_CORNERSTONE,
    EV_DISASTER_PAY,
    EV_DISASTER_SACRIFICE,
    EV_DISASTER_SELECT,
    EV_DISCARD,
    EV_DRAFT_PICK,
    EV_EFFECT_COINS,
    EV_GOOD_SOLD,
    EV_INCOME,
    EV_PLACE,
    EV_SELECT,
    EV_SELL,
    SCORE_NOT_RECORDED,
)

FDR_LEVEL = 0.05
BOOTSTRAP_SAMPLES = 1000
VP_COLUMNS = ("score_gen1", "score_gen2")
CATEGORIES = {
    "income": (EV_INCOME,),
    "sales": (EV_SELL,),
    "goods_sold": (EV_GOOD_SOLD,),
    "effects": (EV_EFFECT_COINS,),
    "tiles_paid": (EV_PLACE, EV_CORNERSTONE),
    "goods_bought": (EV_BUY,),
    "disasters": (EV_DISASTER_PAY,),
}


def report_tables(
    run: Run, correction="bh", level=0.05, band=DEFAULT_BAND, min_n=DEFAULT_MIN_N
) -> tuple[dict[str, pl.DataFrame], list[dict]]:
    """Every CSV table of ``neom report`` on ``run`` (by name) and findings.json's items."""
    args = (correction, level, band, min_n)
    report = Report(out=None, correction=correction, level=level, band=band, min_n=min_n)
    if run.reconstructed:
        report.data_label = str(run.manifest["data"].get("label", run.data_name))
    out = {}
    out["strategies"] = win_shares(run)
    pairs = head_to_head(run)
    effects = _fair_share_effects(run, "strategy_name", 1, *args)
    out["strategy_effects"], out["head_to_head"] = effects, pairs
    out["ratings"] = ratings(run, pairs)
    label = pl.col("strategy_name") + " (" + pl.col("n_players").cast(pl.Utf8) + "p)"
    report.add_items("strategy", effects.with_columns(label.alias("label")),
                     "win_share_minus_fair", name="label")  # fmt: skip
    out["seats"] = seat_shares(run)
    out["seat_balance"] = balance_table(run, level=level)
    seat_effects = _fair_share_effects(run, "seat", 2, *args)
    label = "seat " + pl.col("seat").cast(pl.Utf8) + " (" + pl.col("n_players").cast(pl.Utf8) + "p)"
    report.add_items("seat", seat_effects.with_columns(label.alias("label")),
                     "win_share_minus_fair", name="label")  # fmt: skip
    result = closeness(run)
    if result is not None:
        out["closeness"] = result[0]
    out["cornerstones"] = cornerstone_table(run, *args)
    report.add_items("cornerstone", out["cornerstones"], CS_METRIC, effect="vs_median")
    _links(report, "cornerstone", out["cornerstones"], run, None)
    _next_steps(report, "cornerstone", out["cornerstones"], run, "vs_median")
    per_strategy = cornerstones_by_strategy(run, *args)
    if per_strategy["strategy_name"].n_unique() > 1:
        out["cornerstones_by_strategy"] = per_strategy
        report.add_items("cornerstone", per_strategy, CS_METRIC, strategy="strategy_name",
                         effect="vs_median")  # fmt: skip
        out["cornerstones_strategy_disagreements"] = sign_disagreements(
            per_strategy, "tile_name", correction, level, min_n
        )
    whole = tile_table(run, *args)
    if whole is not None:
        table, chooser = _split_disasters(whole, run, args)
        goods = goods_by_generation(run)
        final = goods.filter(pl.col("generation") == N_GENERATIONS)
        good_share = dict(zip(final["good"].to_list(), final["share"].to_list(), strict=True))
        _links(report, "cornerstone", out["cornerstones"], run, good_share)
        out["tiles"] = table
        report.add_items("tile", table, TILE_METRIC, effect="vs_median")
        _links(report, "tile", table, run, good_share)
        _next_steps(report, "tile", table, run, "vs_median")
        per_strategy = tiles_by_strategy(run, *args)
        if per_strategy is not None:
            per_strategy = _split_disasters(per_strategy, run, args, by=("strategy_name",))[0]
        if per_strategy is not None and per_strategy["strategy_name"].n_unique() > 1:
            out["tiles_by_strategy"] = per_strategy
            report.add_items("tile", per_strategy, TILE_METRIC, strategy="strategy_name",
                             effect="vs_median")  # fmt: skip
            out["tiles_strategy_disagreements"] = sign_disagreements(
                per_strategy, "tile_name", correction, level, min_n
            )
        dead = dead_tiles(run, whole)
        if dead is not None:
            out["dead_tiles"] = dead
        out["goods_by_generation"] = goods
        out["goods_by_generation_by_strategy"] = goods_by_generation(run, True)
        placed = dict(zip(whole["tile"].to_list(), whole["placed"].to_list(), strict=True))
        why = dict(zip(dead["tile"].to_list(), dead["why"].to_list(), strict=True))
        for row in out["cornerstones"].iter_rows(named=True):
            placed[int(row["tile"])] = int(row["placed"])
            why[int(row["tile"])] = (
                f"a cornerstone placed in {pct(row['placed_rate'])} of its drafts "
                f"(drafted in {pct(row['drafted_rate'])} of games)"
            )
        n_games = run.games.select(pl.len()).collect().item()
        out["goods"] = package_economy.good_chains(goods, placed, n_games, run.tables, why)
        out["action_mix"] = action_mix(run)
        out["dominated_tiles"] = package_economy.dominated_tiles(run.tables).join(
            whole.select(pl.col("tile").cast(pl.Int64), "selected", "placed", "sell_rate",
                         "sell_rate_lo", "sell_rate_hi"), on="tile", how="left",
        )  # fmt: skip
        out["usage"] = usage_table(run.tables, out["cornerstones"], whole)
        victims = disaster_victims(run)
        if chooser.height:
            effects = chooser.join(victims.with_columns(pl.col("tile").cast(chooser["tile"].dtype)),
                                   on="tile", how="left")  # fmt: skip
            effects = effects.with_columns(pl.Series(
                "levers", [package_disasters.levers(run, n) for n in effects["tile_name"]],
                dtype=pl.Utf8))  # fmt: skip
            out["disaster_effects"] = effects
            report.add_items("disaster", effects, DISASTER_METRIC)
            _next_steps(report, "disaster", effects, run)
    vp, coins = vp_by_generation(run), coins_by_generation(run)
    if vp is not None:
        out["vp_by_generation"] = vp
    if coins is not None:
        out["coins_by_generation"] = coins
    out["scores"] = score_summary(run)
    out["disasters"] = disaster_summary(run)
    out["disaster_frequency"] = disaster_frequency(run)
    if report.data_label:
        out = {k: v.with_columns(pl.lit(report.data_label).alias("data")) for k, v in out.items()}
    for item in report.items:
        item.setdefault("robustness", None)
    return out, report.items


def win_share_per_vp(run) -> float:
    seats = seat_outcomes(run).select("residual", "score_diff").drop_nulls().collect()
    if seats.height < 3:
        return math.nan
    x = seats["score_diff"].to_numpy().astype(np.float64)
    y = seats["residual"].to_numpy().astype(np.float64)
    var = float(np.var(x))
    return float(np.mean((x - x.mean()) * (y - y.mean())) / var) if var > 0 else math.nan


def _split_disasters(
    table: pl.DataFrame, run: Run, args, by=()
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The tiles without the Disasters (flagged against the median tile of their generation:
    the package's rule on the whole-table effects) and the Disasters, each flagged on its
    own."""
    kinds = run.tables.tiles[:, K.C_DISASTER]
    chosen = pl.Series([bool(kinds[int(t)] != K.DIS_NONE) for t in table["tile"]])
    return (
        with_generation_median_flags(table.filter(~chosen), run.tables, *args, by=by),
        with_band_flags(table.filter(chosen), Flagging(*args)),
    )


def _leads_vs_median(kind, table, run) -> pl.DataFrame:
    """``lead_vs_median``: the owners' mean score lead minus the median of the tested
    items' (per generation for tiles), from the whole tables."""
    if kind == "disaster":
        return table
    if kind == "tile":
        sel = _seat_groups(run, hand_records(run))[0]
        leads = sel.group_by("tile").agg(pl.col("score_diff").mean().alias("owner_lead"))
        frame = table.join(leads.with_columns(pl.col("tile").cast(table["tile"].dtype)),
                           on="tile", how="left")  # fmt: skip
        tested = frame.filter(~pl.col("small"))
        medians = tested.group_by("generation").agg(pl.col("owner_lead").median().alias("m"))
        frame = frame.join(medians, on="generation", how="left")
    else:
        frame = table.with_columns(pl.col("score_diff").alias("owner_lead"))
        median = frame.filter(~pl.col("small"))["owner_lead"].median()
        frame = frame.with_columns(pl.lit(median).alias("m"))
    return frame.with_columns((pl.col("owner_lead") - pl.col("m")).alias("lead_vs_median"))


def pct(x) -> str:
    from analysis.core.report import pct as package_pct

    return package_pct(x)


def _links(report, kind, table, run, good_share) -> None:
    """findings.json's links of each flagged item (the package's words from the catalogue)."""
    for row in table.filter(pl.col("flag") != "").iter_rows(named=True):
        for item in report.items:
            if item["kind"] == kind and "strategy" not in item and item["name"] == row["tile_name"]:
                item["links"] = package_economy.links(run.tables, int(row["tile"]), good_share)


def _next_steps(report, kind, table, run, effect: str = "effect") -> None:
    """findings.json's next step of each flagged item (issue 26; the text is the package's
    ``next_step``, the exchange rate this whole-table computation)."""
    flagged = _leads_vs_median(kind, table, run).filter(pl.col("flag") != "")
    if flagged.height == 0:
        return
    per_vp = win_share_per_vp(run)
    texts = {}
    for row in flagged.iter_rows(named=True):
        vp, basis = vp_equivalent(kind, row, per_vp, effect)
        texts[str(row["tile_name"])] = (
            next_step(kind, row, run, per_vp, effect),
            round(vp, 2) if math.isfinite(vp) else None,
            basis,
        )
    for item in report.items:
        if item["kind"] == kind and "strategy" not in item and item["name"] in texts:
            item["next_step"], item["vp_equivalent"], item["vp_basis"] = texts[item["name"]]


# --- core: tabulate, strategies, seats, closeness ---------------------------------------


def deals(run: Run) -> pl.LazyFrame:
    return run.games.select(
        "game_id", (pl.col("deal_seed").hash(0) ^ pl.col("n_players").cast(pl.UInt64)).alias("deal")
    )


def seat_outcomes(run: Run) -> pl.LazyFrame:
    others = (pl.col("total").sum().over("game_id") - pl.col("total")) / (
        pl.col("n_players") - 1
    ).cast(pl.Float64).replace(0.0, None)
    return (
        run.players.with_columns(
            pl.col("win_share").mean().over("strategy_name", "n_players").alias("expected"),
            (pl.col("total") - others).alias("score_diff"),
        )
        .with_columns((pl.col("win_share") - pl.col("expected")).alias("residual"))
        .join(deals(run), on="game_id", how="left")
    )


def effect_table(
    frame,
    keys: list[str],
    value: str = "residual",
    expected: str | None = "expected",
    cluster: str = "deal",
    name: str = "effect",
    level: float = 0.95,
) -> pl.DataFrame:
    frame = frame.lazy() if isinstance(frame, pl.DataFrame) else frame
    v = pl.col(value).cast(pl.Float64)
    frame = frame.filter(v.is_not_null() & v.is_not_nan())
    floor = (
        (pl.col(expected) * (1.0 - pl.col(expected))).sum() if expected else pl.lit(0.0)
    ).alias("_floor")
    mean_e = (pl.col(expected).mean() if expected else pl.lit(None, pl.Float64)).alias("_e")
    items = frame.group_by(keys).agg(
        pl.len().alias("n"),
        pl.col(cluster).n_unique().alias("clusters"),
        v.mean().alias(name),
        floor,
        mean_e,
    )
    spread = (
        frame.group_by(*keys, cluster)
        .agg(v.sum().alias("_s"), pl.len().alias("_k"))
        .join(items.select(*keys, name), on=keys, how="left", nulls_equal=True)
        .group_by(keys)
        .agg(((pl.col("_s") - pl.col(name) * pl.col("_k")) ** 2).sum().alias("_e2"))
    )
    out = items.join(spread, on=keys, how="left", nulls_equal=True).collect()
    n = out["n"].to_numpy().astype(np.float64)
    g = out["clusters"].to_numpy().astype(np.float64)
    mean = out[name].to_numpy().astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = np.where(g > 1, g / (g - 1), np.nan) * out["_e2"].to_numpy() / n**2
        variance = np.fmax(variance, out["_floor"].to_numpy() / n**2) if expected else variance
        variance = np.where(g > 1, variance, np.nan)
        se = np.sqrt(variance)
        half = t_quantile(g - 1, level) * se
        statistic = np.where(se > 0, mean / se, np.where(mean == 0, 0.0, np.inf))
    lo, hi = mean - half, mean + half
    if expected:
        e = out["_e"].to_numpy()
        lo, hi = np.fmax(lo, -e), np.fmin(hi, 1.0 - e)
    return out.drop("_e2", "_floor", "_e").with_columns(
        pl.Series(f"{name}_se", se),
        pl.Series(f"{name}_lo", lo),
        pl.Series(f"{name}_hi", hi),
        pl.Series(f"{name}_p0", t_two_sided_p(statistic, g - 1)),
    )


def win_shares(run: Run) -> pl.DataFrame:
    frame = group_table(
        run.players,
        ("n_players", "strategy_name"),
        pl.col("game_id").n_unique().alias("games"),
        pl.col("win_share").sum().alias("wins"),
        pl.col("total").mean().alias("mean_score"),
    )
    return with_win_share(frame)


def _pairs(run: Run) -> pl.LazyFrame:
    seats = run.players.select("game_id", "seat", "strategy_name", "rank", "total")
    return (
        seats.join(seats, on="game_id", suffix="_b")
        .filter(pl.col("strategy_name") != pl.col("strategy_name_b"))
        .select(
            "game_id",
            pl.col("strategy_name").alias("a"),
            pl.col("strategy_name_b").alias("b"),
            # A above B scores 1, a shared rank scores 1/2.
            (
                (pl.col("rank") < pl.col("rank_b")).cast(pl.Float64)
                + 0.5 * (pl.col("rank") == pl.col("rank_b")).cast(pl.Float64)
            ).alias("above"),
            (pl.col("total") - pl.col("total_b")).cast(pl.Float64).alias("score_diff"),
        )
    )


def head_to_head(run: Run) -> pl.DataFrame:
    per_game = (
        _pairs(run)
        .group_by("game_id", "a", "b")
        .agg(
            pl.col("above").mean(),
            pl.col("above").sum().alias("pair_wins"),
            pl.col("score_diff").mean(),
            pl.len().alias("pairs"),
        )
    )
    frame = (
        per_game.group_by("a", "b")
        .agg(
            pl.len().alias("games"),
            pl.col("pairs").sum(),
            pl.col("pair_wins").sum(),
            pl.col("above").mean().alias("share"),
            pl.col("above").std().alias("share_sd"),
            pl.col("score_diff").mean(),
            pl.col("score_diff").std().alias("score_diff_sd"),
        )
        .sort("a", "b")
        .collect()
    )
    frame = with_mean_interval(frame, "share", "share_sd", "games")
    return with_mean_interval(frame, "score_diff", "score_diff_sd", "games").drop("share_p")


def seat_shares(run: Run) -> pl.DataFrame:
    frame = group_table(
        run.players,
        ("n_players", "seat"),
        pl.col("win_share").sum().alias("wins"),
        pl.col("total").mean().alias("mean_score"),
    )
    return with_win_share(frame)


def balance_table(
    run: Run, n_boot: int = BOOTSTRAP_SAMPLES, seed: int = 0, level: float = 0.05
) -> pl.DataFrame:
    rows = []
    by_game = (
        run.players.select("game_id", "n_players", "seat", "win_share")
        .join(deals(run), on="game_id", how="left")
        .collect()
        .partition_by("n_players", as_dict=True)
    )
    for (n_players,), frame in sorted(by_game.items()):
        wide = frame.pivot(on="seat", index=["game_id", "deal"], values="win_share").sort("game_id")
        seat_columns = sorted((c for c in wide.columns if c not in ("game_id", "deal")), key=int)
        matrix = wide.select(seat_columns).fill_null(0.0).to_numpy()
        lo, hi = bootstrap_interval(matrix, seat_balance, n_boot=n_boot, seed=seed)
        shares = matrix.mean(axis=0)
        test = seat_chi_square(matrix, wide["deal"].to_numpy())
        significant = bool(test["p"] < level)
        rows.append(
            {
                "n_players": int(n_players),
                "games": matrix.shape[0],
                "balance": float(seat_balance(shares)),
                "lo": lo,
                "hi": hi,
                "chi2": test["statistic"],
                "df": int(test["df"]),
                "p": test["p"],
                "significant": significant,
                "best_seat": int(seat_columns[int(np.argmax(shares))]) if significant else None,
                "worst_seat": int(seat_columns[int(np.argmin(shares))]) if significant else None,
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "n_players": pl.Int32,
            "games": pl.Int64,
            "balance": pl.Float64,
            "lo": pl.Float64,
            "hi": pl.Float64,
            "chi2": pl.Float64,
            "df": pl.Int32,
            "p": pl.Float64,
            "significant": pl.Boolean,
            "best_seat": pl.Int32,
            "worst_seat": pl.Int32,
        },
    )


def _fair_share_effects(run: Run, key: str, min_players: int, method, level, band, min_n):
    frame = (
        run.players.select("game_id", "n_players", key, "win_share")
        .filter(pl.col("n_players") >= min_players)
        .with_columns(
            (1.0 / pl.col("n_players")).alias("expected"),
            (pl.col("win_share") - 1.0 / pl.col("n_players")).alias("residual"),
        )
        .join(deals(run), on="game_id", how="left")
    )
    table = effect_table(frame, ["n_players", key])
    return with_band_flags(table, Flagging(method, level, band, min_n)).sort("n_players", key)


def closeness(run: Run) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    per_game = (
        run.players.group_by("game_id", "n_players")
        .agg(
            pl.col("total").filter(pl.col("win") > 0).max().alias("winning"),
            pl.col("total").filter(pl.col("win") == 0).max().alias("runner_up"),
            (pl.col("win") > 0).sum().alias("winners"),
        )
        .filter(pl.col("n_players") > 1)
        .with_columns((pl.col("winning") - pl.col("runner_up")).alias("margin"))
        .collect()
    )
    if per_game.height == 0:
        return None
    frame = (
        per_game.group_by("n_players")
        .agg(
            pl.len().alias("games"),
            pl.col("margin").mean().alias("mean_margin"),
            pl.col("margin").median().alias("median_margin"),
            pl.col("margin").quantile(0.9).alias("p90_margin"),
            (pl.col("margin") <= 2).sum().alias("close"),
            (pl.col("winners") > 1).sum().alias("shared"),
        )
        .sort("n_players")
    )
    frame = with_wilson(frame, "close", "games", "close_share")
    return with_wilson(frame, "shared", "games", "shared_share"), per_game


# --- NEOM: cornerstones, tiles, flow, scores --------------------------------------------


def drafted_long(run: Run) -> pl.LazyFrame:
    outcomes = seat_outcomes(run)
    keep = ["game_id", "seat", "n_players", "strategy_name", "win_share", "expected", "residual",
            "score_diff", "deal"]  # fmt: skip
    parts = [
        outcomes.select(*keep, pl.col(tile).alias("tile"), pl.col(gen).alias("gen"))
        for tile, gen in zip(DRAFTED_COLUMNS, CS_GEN_COLUMNS, strict=True)
    ]
    return pl.concat(parts).filter(pl.col("tile") >= 0)


def _draft_leftovers(run: Run) -> pl.LazyFrame:
    parts = [run.games.select(pl.col(c).alias("tile")) for c in DISCARDED_CS_COLUMNS]
    return (
        pl.concat(parts)
        .filter(pl.col("tile") >= 0)
        .group_by("tile")
        .agg(pl.len().alias("left_in_draft"))
    )


def _pick_numbers(run: Run) -> pl.LazyFrame | None:
    if run.events is None:
        return None
    return (
        run.events.filter(pl.col("kind") == EV_DRAFT_PICK)
        .group_by("tile")
        .agg((pl.col("other").mean() + 1.0).alias("mean_pick"))
    )


def cornerstone_table(
    run: Run,
    method: str = "bh",
    level: float = FDR_LEVEL,
    band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
) -> pl.DataFrame:
    long = drafted_long(run).collect()
    total = run.players.select(
        pl.len().alias("seats"), pl.col("win_share").sum().alias("all_wins")
    ).collect()
    n_games = run.games.select(pl.len()).collect().item()
    gen_counts = [
        (pl.col("gen") == g).sum().alias(f"placed_gen{g}") for g in range(1, N_GENERATIONS + 1)
    ]
    frame = (
        long.group_by("tile")
        .agg(
            pl.len().alias("drafted"),
            pl.col("game_id").n_unique().alias("games_drafted"),
            (pl.col("gen") > 0).sum().alias("placed"),
            (pl.col("gen") == 0).sum().alias("unplaced"),
            (pl.col("gen") == CS_SWAPPED_AWAY).sum().alias("swapped"),
            *gen_counts,
            pl.col("gen").filter(pl.col("gen") > 0).mean().alias("mean_gen"),
            pl.col("win_share").filter(pl.col("gen") > 0).sum().alias("wins_placed"),
            pl.col("win_share").filter(pl.col("gen") == 0).sum().alias("wins_unplaced"),
            pl.col("win_share").sum().alias("wins_drafted"),
        )
        .join(_draft_leftovers(run).collect(), on="tile", how="left")
    )
    picks = _pick_numbers(run)
    if picks is not None:
        frame = frame.join(picks.collect(), on="tile", how="left")
    frame = frame.with_columns(
        (pl.col("games_drafted") / n_games).alias("drafted_rate"),
        pl.col("left_in_draft").fill_null(0),
        (total["seats"].item() - pl.col("drafted")).alias("not_drafted"),
        (total["all_wins"].item() - pl.col("wins_drafted")).alias("wins_not_drafted"),
    )
    frame = _add_rates(frame)
    effects = effect_table(long, ["tile"])
    leads = effect_table(long, ["tile"], "score_diff", None, name="score_diff").select(
        "tile", "score_diff", "score_diff_lo", "score_diff_hi"
    )
    frame = frame.join(effects, on="tile", how="left").join(leads, on="tile", how="left")
    frame = with_median_flags(frame, Flagging(method, level, band, min_n)).drop("wins_drafted")
    ordered = [c for c in COLUMN_ORDER if c in frame.columns or c == "tile_name"]
    return run.name_tiles(frame).select(ordered).sort("effect", descending=True)


def cornerstones_by_strategy(
    run: Run,
    method: str = "bh",
    level: float = FDR_LEVEL,
    band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
) -> pl.DataFrame:
    long = drafted_long(run)
    table = effect_table(long, ["tile", "strategy_name"])
    table = with_median_flags(table, Flagging(method, level, band, min_n), by=("strategy_name",))
    return run.name_tiles(table).sort("tile", "strategy_name")


def _selections(events: pl.LazyFrame) -> pl.LazyFrame:
    keys = ["game_id", "turn", "player"]
    select = events.filter(pl.col("kind") == EV_SELECT)
    disaster = events.filter(pl.col("kind") == EV_DISASTER_SELECT).join(select, on=keys, how="anti")
    return pl.concat([select, disaster]).select(*keys, "tile", pl.col("turn").alias("order"))


def hand_records(run: Run) -> pl.DataFrame:
    dealt_games = run.games.filter(pl.col("n_players") >= MIN_PLAYERS_DEALT).select("game_id")
    events = run.events.filter(pl.col("turn") >= 0).join(dealt_games, on="game_id", how="semi")
    discards = events.filter(pl.col("kind") == EV_DISCARD).select(
        "game_id", "turn", "player", "tile", pl.lit(HAND_SIZE - 1, dtype=pl.Int32).alias("order")
    )
    selections = _selections(events).with_columns(
        (pl.col("order") % TURNS_PER_GENERATION).cast(pl.Int32)
    )
    taken = pl.concat([selections, discards]).join(
        run.games.select("game_id", "n_players"), on="game_id"
    )
    turn_in_gen = pl.col("turn") % TURNS_PER_GENERATION
    return (
        taken.with_columns(
            (pl.col("turn") // TURNS_PER_GENERATION).alias("gen"),
            ((pl.col("player") - PASS_STEP * turn_in_gen) % pl.col("n_players")).alias("hand"),
        )
        .with_columns(
            pl.len().over("game_id", "gen", "hand").alias("size"),
            (pl.col("order").sort() == pl.int_range(HAND_SIZE))
            .all()
            .over("game_id", "gen", "hand")
            .alias("complete"),
        )
        .filter((pl.col("size") == HAND_SIZE) & pl.col("complete"))
        .sort("game_id", "gen", "hand", "order")
        .select("game_id", "n_players", "gen", "hand", "order", "tile")
        .collect()
    )


def _seat_groups(run: Run, records: pl.DataFrame | None):
    events = run.events
    outcomes = seat_outcomes(run).select(OUTCOME).collect()
    selected = (
        _selections(events)
        .filter(pl.col("tile") >= 0)
        .select("game_id", pl.col("player").cast(pl.Int64).alias("seat"), "tile")
        .unique()
        .collect()
    )
    placed = (
        events.filter(pl.col("kind") == EV_PLACE)
        .select("game_id", pl.col("player").cast(pl.Int64).alias("seat"), "tile")
        .unique()
        .collect()
    )
    outcomes = outcomes.with_columns(pl.col("seat").cast(pl.Int64))
    join = lambda frame: frame.join(outcomes, on=["game_id", "seat"])  # noqa: E731
    passed = None
    if records is not None and records.height:
        passed = (
            passers(records)
            .with_columns(
                pl.col("seat").cast(pl.Int64), pl.col("tile").cast(selected["tile"].dtype)
            )
            .join(selected, on=["game_id", "seat", "tile"], how="anti")
        )
        passed = join(passed)
    return join(selected), join(placed), passed


def _paired_contrast(selected: pl.DataFrame, passed: pl.DataFrame | None) -> pl.DataFrame | None:
    if passed is None or passed.height == 0:
        return None
    mean_passed = passed.group_by("game_id", "tile").agg(
        pl.col("residual").mean().alias("passed_residual")
    )
    games = selected.join(mean_passed, on=["game_id", "tile"]).with_columns(
        (pl.col("residual") - pl.col("passed_residual")).alias("d")
    )
    table = effect_table(games, ["tile"], "d", None, name="sel_vs_passed")
    return table.select(
        "tile",
        pl.col("n").alias("sel_vs_passed_games"),
        "sel_vs_passed",
        "sel_vs_passed_lo",
        "sel_vs_passed_hi",
    )


def tile_table(
    run: Run,
    method: str = "bh",
    level: float = FDR_LEVEL,
    band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
) -> pl.DataFrame | None:
    if run.events is None:
        return None
    events = run.events
    kind = pl.col("kind")
    # A cornerstone action spends the selected tile, logged as the event's ``other``.
    spent = events.filter(kind == EV_CORNERSTONE).select(pl.col("other").alias("tile"), "kind")
    handled = events.filter(kind.is_in([EV_PLACE, EV_SELL, EV_DISCARD])).select("tile", "kind")
    actions = (
        pl.concat([handled, spent])
        .group_by("tile")
        .agg(
            (kind == EV_PLACE).sum().alias("placed"),
            (kind == EV_SELL).sum().alias("sold"),
            (kind == EV_CORNERSTONE).sum().alias("for_cornerstone"),
            (kind == EV_DISCARD).sum().alias("discarded"),
        )
    )
    selected = (
        _selections(events)
        .group_by("tile")
        .agg(
            pl.len().alias("selected"),
            (pl.col("order") % TURNS_PER_GENERATION + 1).mean().alias("mean_turn"),
        )
    )
    frame = (
        selected.join(actions, on="tile", how="full", coalesce=True)
        .filter(pl.col("tile") >= 0)
        .collect()
        .with_columns(pl.col(pl.UInt32, pl.Int64, pl.Int32).fill_null(0))
    )
    records = hand_records(run)
    n_tiles = max(int(frame["tile"].max()) + 1, run.tables.n_tiles if run.tables else 0)
    hand_tiles = records["tile"].to_numpy().reshape(-1, HAND_SIZE)
    seen, passed = seen_and_passed(hand_tiles, n_tiles)
    tiles = frame["tile"].to_numpy()
    passed_rows = passed[tiles]
    top = passed_rows.argmax(axis=1)
    passed_total = passed_rows.sum(axis=1)
    dealt = (
        records.filter(pl.col("order") < HAND_SIZE)
        .group_by("tile")
        .agg(pl.col("game_id").n_unique().alias("games_dealt"))
    )
    frame = frame.with_columns(
        pl.Series("seen", seen[tiles]),
        pl.Series("taken_when_seen", seen[tiles] - passed_total),
        pl.Series("passed_over_for", np.where(passed_total > 0, top, -1), dtype=pl.Int32),
        pl.Series(
            "passed_over_share",
            np.divide(
                passed_rows[np.arange(len(tiles)), top],
                passed_total,
                out=np.full(len(tiles), np.nan),
                where=passed_total > 0,
            ),
        ),
    ).join(dealt.with_columns(pl.col("tile").cast(frame["tile"].dtype)), on="tile", how="left")
    frame = with_wilson(frame, "taken_when_seen", "seen", "taken_rate")
    frame = with_wilson(frame, "placed", "selected", "placed_rate")
    frame = with_wilson(frame, "sold", "selected", "sell_rate")

    sel, placed_seats, passed_seats = _seat_groups(run, records)
    effects = with_band_flags(effect_table(sel, ["tile"]), Flagging(method, level, band, min_n))
    wins = sel.group_by("tile").agg(pl.col("win_share").sum().alias("wins_selected"))
    frame = frame.join(effects, on="tile", how="left").join(wins, on="tile", how="left")
    frame = with_wilson(frame.with_columns(pl.col("wins_selected").fill_null(0.0)),
                        "wins_selected", "n", "win_selected")  # fmt: skip
    for name, group in (("placed", placed_seats), ("passed", passed_seats)):
        if group is None:
            continue
        part = effect_table(group, ["tile"], name=f"{name}_effect").join(
            group.group_by("tile").agg(pl.col("win_share").sum().alias(f"wins_{name}")),
            on="tile",
        )
        part = with_wilson(part.rename({"n": f"{name}_seats"}), f"wins_{name}", f"{name}_seats",
                           f"win_{name}")  # fmt: skip
        keep = [f"{name}_seats", f"win_{name}", f"win_{name}_lo", f"win_{name}_hi",
                f"{name}_effect", f"{name}_effect_lo", f"{name}_effect_hi"]  # fmt: skip
        frame = frame.join(part.select("tile", *keep), on="tile", how="left")
    contrast = _paired_contrast(sel, passed_seats)
    if contrast is not None:
        frame = frame.join(contrast, on="tile", how="left")
    frame = run.name_tiles(frame.drop("wins_selected"))
    frame = run.name_tiles(frame, "passed_over_for", "passed_over_for_name")
    first = ["tile", "tile_name", "flag", "n", "small", "effect", "effect_lo", "effect_hi"]
    return frame.select(*first, pl.exclude(first)).sort("effect", descending=True, nulls_last=True)


def tiles_by_strategy(
    run: Run,
    method: str = "bh",
    level: float = FDR_LEVEL,
    band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
) -> pl.DataFrame | None:
    if run.events is None:
        return None
    selected, _, _ = _seat_groups(run, None)
    table = with_band_flags(
        effect_table(selected, ["tile", "strategy_name"]), Flagging(method, level, band, min_n)
    )
    return run.name_tiles(table).sort("tile", "strategy_name")


def _sale_reasons(run: Run) -> pl.DataFrame:
    tables = run.tables
    events = (
        run.events.with_row_index("row")
        .filter(pl.col("player") >= 0)
        .with_columns(pl.col("coins").cast(pl.Int64))
        .with_columns(
            (
                START_MONEY + pl.col("coins").cum_sum().over("game_id", "player") - pl.col("coins")
            ).alias("money_before")
        )
        .filter(pl.col("kind").is_in([EV_SELL, EV_PLACE, EV_CORNERSTONE]))
        .select(
            "row",
            "game_id",
            pl.col("player").cast(pl.Int64),
            "kind",
            pl.col("tile").cast(pl.Int64),
            "money_before",
        )  # fmt: skip
        .collect()
    )
    boards = run.players.select(
        "game_id", pl.col("seat").cast(pl.Int64).alias("player"), pl.col("board").cast(pl.Int64)
    ).collect()
    events = events.join(boards, on=["game_id", "player"], how="left")
    produces = tables.tiles[:, K.C_PRODUCES].astype(np.int64)
    center = tables.board_center.astype(np.int64)
    board = np.clip(events["board"].fill_null(0).to_numpy(), 0, len(center) - 1)
    tile = events["tile"].to_numpy()
    built = events["kind"].to_numpy() != EV_SELL
    gained = np.where(built, produces[np.clip(tile, 0, None)], 0)
    # Goods held before each row: the centre's plus a running OR of the tiles built before,
    # one running count per good bit (a cumulative OR).
    keys = events.select((pl.col("game_id").rank("dense") * 8 + pl.col("player")).alias("k"))[
        "k"
    ].to_numpy()
    have = produces[center[board]]
    bits = pl.DataFrame({"k": keys, **{f"b{g}": (gained >> g) & 1
                                          for g in range(len(tables.goods_tier))}})  # fmt: skip
    cumulative = bits.select(
        (pl.col(f"b{g}").cum_sum().over("k") - pl.col(f"b{g}") > 0).cast(pl.Int64) * (1 << g)
        for g in range(len(tables.goods_tier))
    )
    have = have | cumulative.to_numpy().sum(axis=1) if cumulative.width else have
    # Every good any city of the game produced at some point (centres included).
    centers = run.players.select("game_id", pl.col("board").cast(pl.Int64)).collect()
    center_goods = produces[center[np.clip(centers["board"].to_numpy(), 0, len(center) - 1)]]
    table_goods = (
        pl.concat(
            [
                events.select("game_id", pl.Series("g", gained)),
                centers.select("game_id", pl.Series("g", center_goods)),
            ]
        )
        .group_by("game_id")
        .agg(pl.col("g").bitwise_or().alias("table_goods"))
    )
    sells = (
        events.with_columns(pl.Series("have", have))
        .filter(pl.col("kind") == EV_SELL)
        .join(table_goods, on="game_id", how="left")
    )
    bound = _cheapest_bound(
        tables, sells["tile"].to_numpy(), sells["have"].to_numpy(), sells["table_goods"].to_numpy()
    )
    sells = sells.with_columns(pl.Series("bound", bound))
    prereqs = (
        pl.DataFrame(
            {
                "tile": np.repeat(np.arange(tables.n_tiles), K.MAX_PREREQS),
                "prereq": tables.tiles[:, K.C_PREREQ0 : K.C_PREREQ0 + K.MAX_PREREQS].ravel(),
            }
        )
        .filter(pl.col("prereq") >= 0)
        .with_columns(pl.col("tile", "prereq").cast(pl.Int64))
    )
    placed = (
        events.filter(pl.col("kind") != EV_SELL)
        .group_by("game_id", "player", "tile")
        .agg(pl.col("row").min().alias("built_row"))
        .rename({"tile": "prereq"})
    )
    missing = (
        sells.join(prereqs, on="tile")
        .join(placed, on=["game_id", "player", "prereq"], how="left")
        .group_by("row")
        .agg(
            (pl.col("built_row").is_null() | (pl.col("built_row") > pl.col("row")))
            .any()
            .alias("prereq_missing")
        )
    )
    reasons = (
        sells.join(missing, on="row", how="left")
        .with_columns(
            pl.when(pl.col("prereq_missing").fill_null(False))
            .then(pl.lit(WHY_PREREQUISITE))
            .when(pl.col("bound") == np.iinfo(np.int64).max)
            .then(pl.lit(WHY_NO_GOODS))
            .when(pl.col("money_before") < pl.col("bound"))
            .then(pl.lit(WHY_UNAFFORDABLE))
            .otherwise(pl.lit(WHY_OUTVALUED))
            .alias("why")
        )
        .select("tile", "why")
    )
    spent = (
        run.events.filter(pl.col("kind") == EV_CORNERSTONE)
        .select(pl.col("other").cast(pl.Int64).alias("tile"), pl.lit(WHY_CORNERSTONE).alias("why"))
        .collect()
    )
    return pl.concat([reasons, spent]).group_by("tile", "why").agg(pl.len().alias("count"))


def dead_tiles(run: Run, table: pl.DataFrame | None = None) -> pl.DataFrame | None:
    if run.events is None or run.tables is None:
        return None
    tables = run.tables
    table = tile_table(run) if table is None else table
    n_games = run.games.select(pl.len()).collect().item()
    hands_rebuilt = (
        run.games.filter(pl.col("n_players") >= MIN_PLAYERS_DEALT).select(pl.len()).collect().item()
        > 0
    )
    decks = (K.DECK_GEN1, K.DECK_GEN2, K.DECK_GEN3)
    counts = run.games.select(pl.col("n_players").unique()).collect()["n_players"].to_list()
    in_decks = _in_decks(run, counts)
    ids = [
        t for t in range(tables.n_tiles)
        if tables.tiles[t, K.C_DECK] in decks and tables.tiles[t, K.C_DISASTER] == K.DIS_NONE
    ]  # fmt: skip
    base = pl.DataFrame(
        {
            "tile": ids,
            "tile_name": [tables.tile_names[t] for t in ids],
            "generation": [int(tables.tiles[t, K.C_DECK]) for t in ids],
            "player_icon": [int(tables.tiles[t, K.C_PLAYERS]) for t in ids],
        }
    )
    counts = table.select(
        pl.col("tile").cast(pl.Int64), "seen", "games_dealt", "selected", "placed", "sold",
        "for_cornerstone",
    )  # fmt: skip
    frame = base.join(counts, on="tile", how="left").with_columns(
        pl.col("seen", "games_dealt", "selected", "placed", "sold", "for_cornerstone").fill_null(0)
    )
    frame = frame.filter(pl.col("placed") < RARE_SHARE * n_games)
    reasons = _sale_reasons(run)
    why_columns = (WHY_PREREQUISITE, WHY_NO_GOODS, WHY_UNAFFORDABLE, WHY_OUTVALUED, WHY_CORNERSTONE)
    wide = {name: np.zeros(frame.height, dtype=np.int64) for name in why_columns}
    position = {t: i for i, t in enumerate(frame["tile"].to_list())}
    for tile, why, count in reasons.iter_rows():
        if tile in position:
            wide[why][position[tile]] += count
    whys = []
    for i, row in enumerate(frame.iter_rows(named=True)):
        if row["selected"] == 0:
            if row["tile"] not in in_decks:
                whys.append(
                    f"never dealt: not in the deck at this player count and variant "
                    f"(a {row['player_icon']}+ tile)"
                )
            elif hands_rebuilt and row["seen"] == 0:
                whys.append("never dealt: left in the box in every game")
            elif row["seen"] > 0:
                whys.append(f"always passed over (seen {row['seen']} times, never taken)")
            else:
                whys.append("never selected")
            continue
        counts_i = {name: int(wide[name][i]) for name in why_columns}
        total = sum(counts_i.values())
        if total == 0:
            whys.append("placed whenever selected")
            continue
        name = max(counts_i, key=counts_i.get)
        whys.append(f"{name}: {counts_i[name]} of {row['selected']} selections")
    frame = frame.with_columns(
        pl.Series("why", whys, dtype=pl.Utf8),
        *(pl.Series(f"n_{WHY_SLUGS[name]}", wide[name]) for name in why_columns),
        (pl.col("placed") == 0).alias("dead"),
        (1000.0 * pl.col("placed") / n_games).alias("placed_per_1000_games"),
    )
    return frame.sort("placed", "selected", "tile")


def _grid(run: Run) -> pl.LazyFrame:
    gens = pl.LazyFrame({"generation": list(range(1, N_GENERATIONS + 1))})
    seats = run.players.select("game_id", "seat", "strategy_name").join(
        deals(run), on="game_id", how="left"
    )
    return seats.join(gens, how="cross").with_columns(pl.col("seat").cast(pl.Int64))


def _means(frame: pl.DataFrame, value: str, name: str) -> pl.DataFrame:
    table = effect_table(frame, ["strategy_name", "generation"], value, None, name=name)
    return table.select("strategy_name", "generation", name, f"{name}_lo", f"{name}_hi")


def coins_by_generation(run: Run) -> pl.DataFrame | None:
    if run.events is None:
        return None
    events = run.events.filter((pl.col("player") >= 0) & (pl.col("turn") >= 0)).select(
        "game_id",
        pl.col("player").cast(pl.Int64).alias("seat"),
        (pl.col("turn") // TURNS_PER_GENERATION + 1).cast(pl.Int32).alias("generation"),
        "kind",
        pl.col("coins").cast(pl.Int64),
    )
    sums = (
        events.group_by("game_id", "seat", "generation")
        .agg(
            pl.col("coins").filter(pl.col("kind").is_in(kinds)).sum().alias(name)
            for name, kinds in CATEGORIES.items()
        )
        .with_columns(pl.col("generation").cast(pl.Int32))
    )
    frame = (
        _grid(run)
        .with_columns(pl.col("generation").cast(pl.Int32))
        .join(sums, on=["game_id", "seat", "generation"], how="left")
        .with_columns(pl.col(list(CATEGORIES)).fill_null(0))
        .with_columns(pl.sum_horizontal(list(CATEGORIES)).alias("net"))
        .sort("game_id", "seat", "generation")
        .with_columns(
            (START_MONEY + pl.col("net").cum_sum().over("game_id", "seat")).alias("money_end")
        )
        .collect()
    )
    means = frame.group_by("strategy_name", "generation").agg(
        pl.col(list(CATEGORIES)).mean(), pl.len().alias("n")
    )
    return means.join(
        _means(frame, "money_end", "money_end"), on=["strategy_name", "generation"]
    ).sort("strategy_name", "generation")


def vp_by_generation(run: Run) -> pl.DataFrame | None:
    schema = run.players.collect_schema()
    if not all(column in schema for column in VP_COLUMNS):
        return None
    if run.players.select(pl.col(VP_COLUMNS[0]).max()).collect().item() == SCORE_NOT_RECORDED:
        return None
    seats = run.players.select(
        "game_id", "strategy_name", *VP_COLUMNS, pl.col("total").alias("score_gen3")
    ).join(deals(run), on="game_id", how="left")
    frame = (
        seats.unpivot(
            index=["game_id", "strategy_name", "deal"],
            on=[*VP_COLUMNS, "score_gen3"],
            variable_name="column",
            value_name="vp",
        )
        .with_columns(pl.col("column").str.slice(-1).cast(pl.Int32).alias("generation"))
        .collect()
    )
    return _means(frame, "vp", "vp").sort("strategy_name", "generation")


def score_summary(run: Run) -> pl.DataFrame:
    frame = group_table(
        run.players,
        ("n_players", "strategy_name"),
        *(pl.col(c).mean() for c in SCORE_COLUMNS),
        pl.col("total").std().alias("total_sd"),
        *(pl.col("total").quantile(q).alias(f"total_p{round(q * 100)}") for q in QUANTILES),
        pl.col("total").min().alias("total_min"),
        pl.col("total").max().alias("total_max"),
    )
    sd = frame["total_sd"]
    return (
        with_mean_interval(frame, "total", "total_sd", "n")
        .drop("total_p")
        .with_columns(sd.alias("total_sd"))
    )


def disaster_summary(run: Run) -> pl.DataFrame:
    frame = group_table(
        run.players,
        ("n_players", "strategy_name"),
        pl.col("disasters_selected").mean().alias("selected_per_game"),
        pl.col("disasters_paid").sum().alias("paid"),
        pl.col("disasters_sacrificed").sum().alias("sacrificed"),
        pl.col("disaster_coins").sum().alias("coins_paid"),
        pl.col("disaster_tiles_lost").sum().alias("tiles_lost"),
    ).with_columns((pl.col("paid") + pl.col("sacrificed")).alias("suffered"))
    frame = with_wilson(frame, "paid", "suffered", "paid_share")
    return frame.with_columns(
        (pl.col("suffered") / pl.col("n")).alias("suffered_per_game"),
        (pl.col("coins_paid") / pl.col("paid")).alias("coins_per_payment"),
        (pl.col("tiles_lost") / pl.col("sacrificed")).alias("tiles_per_sacrifice"),
    )


def disaster_frequency(run: Run) -> pl.DataFrame:
    frame = (
        run.games.group_by("n_players")
        .agg(
            pl.len().alias("games"),
            *(
                ((pl.col("disasters_mask") & (1 << (g - 1))) > 0).sum().alias(f"gen{g}_hits")
                for g in range(1, N_GENERATIONS + 1)
            ),
        )
        .sort("n_players")
        .collect()
    )
    for g in range(1, N_GENERATIONS + 1):
        frame = with_wilson(frame, f"gen{g}_hits", "games", f"gen{g}")
    return frame


# --- neom compare's paired shifts -----------------------------------------------------------


def _cluster_se(values: np.ndarray, clusters: np.ndarray, n: int) -> float:
    """Standard error of (sum of ``values``) / n, cluster-robust (CR1)."""
    if n == 0:
        return math.nan
    _, index = np.unique(clusters, return_inverse=True)
    g = int(index.max()) + 1 if index.size else 0
    if g < 2:
        return math.nan
    sums = np.bincount(index, weights=values, minlength=g)
    return math.sqrt(g / (g - 1) * float((sums**2).sum())) / n


def paired_effect_shifts(base_long, cand_long, games, key: str = "tile_name", value="residual"):
    """Per item: each side's effect (mean ``residual`` over its group's seats) and the shift
    candidate - baseline with a paired, cluster-robust interval (delta method on the two
    ratio estimators, differenced game by game).

    ``*_long``: one row per (game, seat in the group) with ``game_id``, ``key``, ``residual``;
    ``games``: ``game_id`` -> ``deal`` for every game of the run (the twins share ids).
    """
    n_games = games.height

    def per_game(long, suffix):
        # Sorted and order-kept, so the same rows always sum in the same order (a catalogue
        # against itself must give exactly 0, not a rounding error).
        long = long.filter(pl.col(value).is_not_null()).sort("game_id", key, value)
        return long.group_by("game_id", key, maintain_order=True).agg(
            pl.col(value).cast(pl.Float64).sum().alias(f"s{suffix}"), pl.len().alias(f"k{suffix}")
        )

    both = (
        per_game(base_long, "_b")
        .join(per_game(cand_long, "_c"), on=["game_id", key], how="full", coalesce=True)
        .fill_null(0)
        .join(games, on="game_id", how="left")
        .sort(key, "game_id")
    )
    rows = []
    for (item,), part in both.group_by(key, maintain_order=True):
        row = {key: item}
        psi = np.zeros(part.height)
        for side in ("_b", "_c"):
            s = part[f"s{side}"].to_numpy().astype(np.float64)
            k = part[f"k{side}"].to_numpy().astype(np.float64)
            total = k.sum()
            effect = s.sum() / total if total else math.nan
            mean_k = total / n_games
            influence = (s - effect * k) / mean_k if total else np.zeros_like(s)
            row[f"effect{side}"] = effect
            row[f"n{side}"] = int(total)
            row[f"se{side}"] = _cluster_se(influence, part["deal"].to_numpy(), n_games)
            psi = psi + (influence if side == "_c" else -influence)
        if row["n_b"] and row["n_c"]:
            shift = row["effect_c"] - row["effect_b"]
            se = _cluster_se(psi, part["deal"].to_numpy(), n_games)
        else:
            shift, se = math.nan, math.nan
        row["shift"] = shift
        row["shift_se"] = se
        rows.append(row)
    frame = pl.DataFrame(rows, infer_schema_length=None)
    if frame.height == 0:
        return frame
    clusters = games["deal"].n_unique()
    half = float(t_quantile(clusters - 1)) * frame["shift_se"].to_numpy()
    shift = frame["shift"].to_numpy()
    se = frame["shift_se"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(
            se > 0, shift / np.where(se > 0, se, 1.0), np.where(shift == 0, 0.0, np.inf)
        )
    return frame.with_columns(
        pl.Series("shift_lo", shift - half),
        pl.Series("shift_hi", shift + half),
        pl.Series("shift_p", t_two_sided_p(statistic, clusters - 1)),
    )


def paired_by_group(base, cand, group: str, games):
    """Per ``group`` value (strategy or seat): the mean over games of candidate - baseline win
    share and total score of the same seat, cluster-robust by deal."""
    joined = base.join(cand, on=["game_id", "seat"], suffix="_b").join(games, on="game_id")
    frame = joined.with_columns(
        (pl.col("win_share_b") - pl.col("win_share")).alias("win_d"),
        (pl.col("total_b") - pl.col("total")).cast(pl.Float64).alias("score_d"),
    )
    out = frame.group_by(group).agg(
        pl.len().alias("n"),
        pl.col("win_share").mean().alias("win_base"),
        pl.col("win_share_b").mean().alias("win_cand"),
        pl.col("total").mean().alias("score_base"),
        pl.col("total_b").mean().alias("score_cand"),
    )
    for name in ("win", "score"):
        table = effect_table(frame, [group], f"{name}_d", None, name=f"{name}_shift")
        out = out.join(
            table.select(
                group,
                f"{name}_shift",
                f"{name}_shift_lo",
                f"{name}_shift_hi",
                pl.col(f"{name}_shift_p0").alias(f"{name}_shift_p"),
            ),  # fmt: skip
            on=group,
        )
    return out.sort(group)


# --- NEOM: the economy and the Disasters (issue 27) ---------------------------------------------


def goods_by_generation(run: Run, by_strategy: bool = False) -> pl.DataFrame | None:
    """Per good and generation, the cities producing it at the end of the generation: per
    square the last of the City Center (before the first turn), placements, cornerstones and
    sacrifices logged before the generation's end (a sacrifice empties the square)."""
    if run.events is None or run.tables is None:
        return None
    tables = run.tables
    n_goods = len(tables.goods_tier)
    produces = pl.Series("p", tables.tiles[:, K.C_PRODUCES].astype(np.int64))
    center = tables.board_center.astype(np.int64)
    seats = run.players.select(
        "game_id", pl.col("seat").cast(pl.Int64), "strategy_name",
        pl.col("board").fill_null(0).cast(pl.Int64).clip(0, len(center) - 1).alias("board"),
    ).collect()  # fmt: skip
    # The City Center stands on the centre square before the first turn, like a placement.
    centers = seats.select(
        pl.lit(-1, pl.Int64).alias("order"), "game_id", "seat",
        pl.lit(K.CENTER_CELL, pl.Int64).alias("cell"), pl.lit(-1, pl.Int64).alias("turn"),
        pl.col("board").map_elements(lambda b: int(center[b]), return_dtype=pl.Int64)
        .alias("occupant"),
    )  # fmt: skip
    builds = (
        run.events.filter(
            pl.col("kind").is_in([EV_PLACE, EV_CORNERSTONE, EV_DISASTER_SACRIFICE])
            & (pl.col("player") >= 0) & (pl.col("cell") >= 0)
        )
        .with_row_index("order")
        .select(pl.col("order").cast(pl.Int64), "game_id",
                pl.col("player").cast(pl.Int64).alias("seat"), pl.col("cell").cast(pl.Int64),
                pl.col("turn").cast(pl.Int64),
                pl.when(pl.col("kind") == EV_DISASTER_SACRIFICE).then(-1)
                .otherwise(pl.col("tile")).cast(pl.Int64).alias("occupant"))
        .collect()
    )  # fmt: skip
    builds = pl.concat(
        [centers, builds.with_columns(pl.col("game_id").cast(centers["game_id"].dtype))]
    )
    rows = []
    for gen in range(1, N_GENERATIONS + 1):
        last = (
            builds.filter(pl.col("turn") < gen * TURNS_PER_GENERATION)
            .sort("order")
            .group_by("game_id", "seat", "cell")
            .agg(pl.col("occupant").last())
            .filter(pl.col("occupant") >= 0)
            .with_columns(
                pl.col("occupant").map_elements(lambda t: int(produces[t]), return_dtype=pl.Int64)
                .alias("goods")
            )
        )  # fmt: skip
        city = seats.join(last.select("game_id", "seat", "goods"), on=["game_id", "seat"],
                          how="left")  # fmt: skip
        for good in range(n_goods):
            bit = 1 << good
            made = city.group_by("game_id", "seat", "strategy_name").agg(
                ((pl.col("goods").fill_null(0) & bit) != 0).any().alias("made")
            )
            rows.append(
                made.group_by("strategy_name")
                .agg(
                    pl.col("made").sum().cast(pl.Int64).alias("cities"),
                    pl.len().cast(pl.Int64).alias("seats"),
                )
                .with_columns(
                    pl.lit(gen, pl.Int32).alias("generation"), pl.lit(good, pl.Int32).alias("good")
                )  # fmt: skip
            )
    frame = pl.concat(rows)
    keys = ["generation", "good"]
    if by_strategy:
        keys = ["strategy_name", *keys]
    else:
        frame = frame.group_by(keys).agg(pl.col("cities", "seats").sum())
    tier_names = {v: k for k, v in K.TIER_NAMES.items()}
    frame = frame.with_columns(
        pl.col("good").map_elements(lambda i: tables.good_names[i], return_dtype=pl.Utf8)
        .alias("good_name"),
        pl.col("good").map_elements(lambda i: tier_names[int(tables.goods_tier[i])],
                                    return_dtype=pl.Utf8).alias("tier"),
    )  # fmt: skip
    frame = with_wilson(frame, "cities", "seats", "share")
    return frame.select(
        *keys[:-1], "good", "good_name", "tier", "cities", "seats", "share", "share_lo",
        "share_hi",
    ).sort(keys)  # fmt: skip


def action_mix(run: Run) -> pl.DataFrame | None:
    """Per strategy (and all) and generation: selections and what they became, per seat."""
    if run.events is None or run.tables is None:
        return None
    keys = ["game_id", "turn", "player"]
    events = run.events.filter((pl.col("player") >= 0) & (pl.col("turn") >= 0)).with_columns(
        (pl.col("turn") // TURNS_PER_GENERATION + 1).cast(pl.Int32).alias("generation")
    ).filter(pl.col("generation") <= N_GENERATIONS)  # fmt: skip
    select = events.filter(pl.col("kind") == EV_SELECT)
    chosen = events.filter(pl.col("kind") == EV_DISASTER_SELECT)
    taken = pl.concat([select, chosen.join(select, on=keys, how="anti")]).with_columns(
        pl.lit("selections").alias("what")
    )
    named = {EV_PLACE: "placed", EV_SELL: "sold", EV_CORNERSTONE: "for_cornerstone",
             EV_DISASTER_SELECT: "disaster"}  # fmt: skip
    acts = events.filter(pl.col("kind").is_in(list(named))).with_columns(
        pl.col("kind").replace_strict(named, return_dtype=pl.Utf8).alias("what")
    )
    who = run.players.select("game_id", pl.col("seat").alias("player"), "strategy_name")
    counted = (
        pl.concat([taken, acts])
        .join(who, on=["game_id", "player"], how="inner")
        .group_by("strategy_name", "generation", "what")
        .agg(pl.len().cast(pl.Int64).alias("count"))
        .collect()
        .pivot(on="what", index=["strategy_name", "generation"], values="count")
    )
    columns = ["selections", "placed", "sold", "for_cornerstone", "disaster"]
    names = run.players.select(pl.col("strategy_name").unique()).collect()["strategy_name"]
    grid = pl.DataFrame({"strategy_name": names}).join(
        pl.DataFrame({"generation": list(range(1, N_GENERATIONS + 1))},
                     schema={"generation": pl.Int32}), how="cross")  # fmt: skip
    counted = grid.join(counted, on=["strategy_name", "generation"], how="left").with_columns(
        *(pl.col(c).fill_null(0) if c in counted.columns else pl.lit(0, pl.Int64).alias(c)
          for c in columns)
    )  # fmt: skip
    seats = run.players.group_by("strategy_name").agg(pl.len().alias("seats")).collect()
    pooled = (
        counted.group_by("generation")
        .agg(pl.col(columns).sum())
        .with_columns(
            pl.lit("all").alias("strategy_name"), pl.lit(int(seats["seats"].sum())).alias("seats")
        )
    )
    frame = pl.concat([counted.join(seats, on="strategy_name"), pooled], how="diagonal_relaxed")
    actions = columns[1:]
    return frame.select(
        "strategy_name", "generation", "seats",
        (pl.col("selections") / pl.col("seats")).alias("selections_per_seat"),
        *((pl.col(a) / pl.col("seats")).alias(f"{a}_per_seat") for a in actions),
        *((pl.col(a) / pl.col("selections")).alias(f"{a}_share") for a in actions),
    ).sort(pl.col("strategy_name") == "all", "strategy_name", "generation")  # fmt: skip


def disaster_victims(run: Run) -> pl.DataFrame | None:
    """Per Disaster tile: the seats it hit (one per seat and generation), their effect and
    score lead (cluster-robust over deals), payments and sacrifices. The Disaster of a
    generation is the one selected, else the catalogue's of the logged kind in that deck."""
    if run.events is None or run.tables is None:
        return None
    tables = run.tables
    by_kind = {}
    for tile in range(tables.n_tiles):
        kind, deck = int(tables.tiles[tile, K.C_DISASTER]), int(tables.tiles[tile, K.C_DECK])
        if kind != K.DIS_NONE and 1 <= deck <= N_GENERATIONS:
            by_kind.setdefault((deck, kind), tile)
    gen = (pl.col("turn") // TURNS_PER_GENERATION).clip(0, N_GENERATIONS - 1) + 1
    events = run.events.filter(pl.col("turn") >= 0).with_columns(gen.alias("gen"))
    chosen = (
        events.filter((pl.col("kind") == EV_DISASTER_SELECT) & (pl.col("tile") >= 0))
        .group_by("game_id", "gen").agg(pl.col("tile").last().alias("chosen"))
    )  # fmt: skip
    hits = (
        events.filter(pl.col("kind").is_in([EV_DISASTER_PAY, EV_DISASTER_SACRIFICE])
                      & (pl.col("player") >= 0))
        .join(chosen, on=["game_id", "gen"], how="left")
        .collect()
    )  # fmt: skip
    fallback = [by_kind.get((g, o), -1) for g, o in zip(hits["gen"], hits["other"], strict=True)]
    hits = hits.with_columns(
        pl.coalesce(pl.col("chosen").cast(pl.Int64), pl.Series(fallback, dtype=pl.Int64))
        .alias("disaster"),
        pl.col("player").cast(pl.Int64).alias("seat"),
    ).filter(pl.col("disaster") >= 0)  # fmt: skip
    outcomes = seat_outcomes(run).collect().with_columns(pl.col("seat").cast(pl.Int64))
    hits = hits.join(outcomes.select("game_id", "seat"), on=["game_id", "seat"], how="semi")
    victims = (
        hits.group_by("game_id", "seat", "gen", "disaster")
        .agg((pl.col("kind") == EV_DISASTER_PAY).any().alias("paid"))
        .join(outcomes, on=["game_id", "seat"], how="left")
        .rename({"disaster": "tile"})
    )
    effects = effect_table(victims, ["tile"], name="victim_effect")
    leads = effect_table(victims, ["tile"], "score_diff", None, name="victim_lead")
    counts = hits.group_by(pl.col("disaster").alias("tile")).agg(
        (-pl.col("coins").filter(pl.col("kind") == EV_DISASTER_PAY)).sum().cast(pl.Int64)
        .alias("coins_paid"),
        (pl.col("kind") == EV_DISASTER_SACRIFICE).sum().cast(pl.Int64).alias("tiles_lost"),
        pl.col("game_id").n_unique().cast(pl.Int64).alias("games_hit"),
    ).join(victims.group_by("tile").agg(
        pl.len().cast(pl.Int64).alias("victims"), pl.col("paid").sum().cast(pl.Int64)
    ), on="tile")  # fmt: skip
    frame = counts.select(
        pl.col("tile").cast(pl.Int32), "victims", "paid", "coins_paid", "tiles_lost", "games_hit"
    ).join(
        effects.select(pl.col("tile").cast(pl.Int32), "victim_effect", "victim_effect_lo",
                       "victim_effect_hi"), on="tile", how="left",
    ).join(
        leads.select(pl.col("tile").cast(pl.Int32), "victim_lead", "victim_lead_lo",
                     "victim_lead_hi"), on="tile", how="left",
    )  # fmt: skip
    sacrificed = pl.col("victims") - pl.col("paid")
    return frame.with_columns(
        (pl.col("paid") / pl.col("victims")).alias("paid_share"),
        (pl.col("coins_paid") / pl.col("paid")).alias("coins_per_payment"),
        (pl.col("tiles_lost") / sacrificed).alias("tiles_per_sacrifice"),
    )
