"""Tangram City's findings on the generic statistics: what placing each tile is worth, whether
each rule is reached and what reaching it is worth, the flags, and the ranked next steps.

**Tiles.** Every seat is dealt every card (23 tiles a game) and places or declines it, so a
tile's worth is the contrast *placing vs declining it*: in each game where some non-random
seats placed the tile and others declined it, the placers' mean win share above expected (the
seat's strategy's mean share at its player count, ``analysis.core.tabulate``) minus the
decliners', averaged over games with a cluster-robust interval over deals (the paired
"selected vs passed over" of NEOM's tiles). A seat declines a tile that does not fit, which is
more often a seat already behind, so every tile's contrast is positive; the flag reads each
tile against the **median tile** (``analysis.core.tabulate.with_median_flags``, as NEOM's
cornerstones and tiles): a tile whose placing is worth far more than the median tile's is too
strong (a dominant tile), far less too weak. Per strategy (random seats on rows of their own,
never pooled with players) the contrast is the strategy's placers' effect minus its decliners'
(both cluster-robust; their interval combined as if independent: a strategy with one seat a
game has no game with both), flagged against that strategy's median tile, corrected across
every (strategy, tile) cell.

**Rules.** For the planning bonus, the balance bonus and fountains: the share of non-random
seats that reach it (score the bonus, take at least one fountain), with a Wilson interval; a
rule is **dead** when at least ``min_n`` seats played, the interval lies wholly below
``DEAD_SHARE`` (1%) and the one-sided binomial test of "reached by at least 1%" is rejected
after the correction across the rules. What reaching it is worth: the reachers' minus the
non-reachers' win share above expected in the same games (cluster-robust), flagged outside the
band after the correction across rules. Both are observational (a seat reaches a bonus when
its game went well); the design commands (``neom compare --game tangram``, ``neom balance
--game tangram``) are the causal test, and each next step names one.
"""

import math
import shlex

import numpy as np
import polars as pl
from scipy.stats import binom

from analysis.core.batches import Reduction, value
from analysis.core.next_steps import (
    ROBUSTNESS_WEIGHT,
    copy_data_file,
    data_file,
    field_options,
    rate_from,
    rate_moments,
)
from analysis.core.reduce import ClusterMoments, Sums
from analysis.core.stats import DEFAULT_BAND, DEFAULT_MIN_N, Z95, adjust
from analysis.core.tabulate import (
    EXPECTED,
    Flagging,
    chunk_outcomes,
    with_band_flags,
    with_median_flags,
    with_wilson,
)
from analysis.tangram.tables import DEAD_SHARE, RANDOM, is_random, tile_rows_of
from sim.tangram.rules import OPTIONS, make_rules, rules_as_dict

TILESET_PREFIX = "tileset"  # tileset-<digest>.toml in a report folder
TILE_METRIC = (
    "win share above expected, placers minus decliners in the same game, vs the median tile"
)
RULE_METRIC = "share of seats that reach it (score the bonus, take a fountain)"
RULE_EFFECT_METRIC = "win share above expected, reachers minus the others in the same game"
# The rules checked: name, what "reached" is on the players table.
RULES = (
    ("planning bonus", pl.col("planning_bonus") > 0),
    ("balance bonus", pl.col("balance_bonus") > 0),
    ("fountains", pl.col("fountains") > 0),
)
OUTCOME = ("expected", "residual", "deal")
# A step's kind -> the kind of the finding it acts on (findings.json, the marks).
STEP_FINDING = {"dead rule": "rule", "rule": "rule effect", "tile": "tile"}


def steps_note(checked: bool) -> str:
    """How the steps are ranked (HTML), with or without a second field's marks."""
    weight = (
        "robustness weight (1 robust, 0.75 weaker or stronger in the other field, 0.5 vanishes, "
        "appears or not compared, 0.25 reversed; a finding flagged in the other field only "
        "names that field in its command)"
        if checked
        else "robustness weight (0.5: no second field; <code>neom report --check</code> marks "
        "each finding)"
    )
    return (
        "Dead rules first (a bonus or fountains almost no seat reaches: the rule changes almost "
        "no game), then every flagged rule effect and tile ranked by its effect in score-lead "
        "points (the effect over the run's slope of win share on score lead among the non-random "
        "seats) "
        f"× {weight}. Each command names the field, the tile set copied into this folder, "
        "<code>--games</code> and <code>--seed</code>, and runs as pasted from here: <code>neom "
        "compare --game tangram</code> plays the change on the same deals, <code>neom balance "
        "--game tangram</code> searches a bonus for the value that brings the field's edge into "
        "the band, or a dead bonus for the smallest value that brings it alive."
    )


def report_settings(report) -> dict:
    """The report's flag settings (a report object without them: the defaults)."""
    return {
        "method": getattr(report, "correction", "bh"),
        "level": getattr(report, "level", 0.05),
        "band": getattr(report, "band", DEFAULT_BAND),
        "min_n": getattr(report, "min_n", DEFAULT_MIN_N),
    }


def _contrast(rows: pl.DataFrame, group: str, flag: str) -> pl.DataFrame:
    """Per game and ``group``: the mean residual of the rows with ``flag`` 1 minus those with
    0 (``d``), for games that have both, with the game's deal."""
    means = rows.group_by("game_id", group, "deal").agg(
        pl.col("residual").filter(pl.col(flag) == 1).mean().alias("yes"),
        pl.col("residual").filter(pl.col(flag) == 0).mean().alias("no"),
    )
    return means.drop_nulls(["yes", "no"]).with_columns((pl.col("yes") - pl.col("no")).alias("d"))


def _reduce(chunk) -> dict:
    outcomes = chunk.memo(chunk_outcomes)
    rows = tile_rows_of(outcomes, chunk.games, OUTCOME).with_columns(
        (1 - pl.col("declined")).alias("placed")
    )
    played = rows.filter(~is_random(pl.col("strategy_name")))
    seats = outcomes.with_columns(*(expr.cast(pl.Int8).alias(name) for name, expr in RULES)).filter(
        ~is_random(pl.col("strategy_name"))
    )
    rule_rows = pl.concat(
        [
            seats.select("game_id", "deal", "residual", pl.lit(name).alias("rule"),
                         pl.col(name).alias("reached"))
            for name, _ in RULES
        ]
    )  # fmt: skip
    return {
        "tiles": ClusterMoments.of(_contrast(played, "tile", "placed"), ("tile",), "d", None),
        "placed": ClusterMoments.of(rows.filter(pl.col("placed") == 1), ("strategy_name", "tile")),
        "declined": ClusterMoments.of(
            rows.filter(pl.col("placed") == 0), ("strategy_name", "tile")
        ),
        "reached": Sums.of(
            outcomes, ("strategy_name",), pl.len().alias("n"),
            *((expr).sum().alias(name) for name, expr in RULES),
        ),
        "rules": ClusterMoments.of(_contrast(rule_rows, "rule", "reached"), ("rule",), "d", None),
        # The exchange rate among players: a random seat's lead (-85 points, never a win)
        # would flatten the slope to a fraction of a pct-pt per point.
        "rate": rate_moments(seats),
    }  # fmt: skip


FINDINGS = Reduction("tangram.findings", _reduce, needs=(EXPECTED,), tables=("games", "players"))


def _tile_names(run, frame: pl.DataFrame) -> pl.DataFrame:
    ts = run.data.content if run.data is not None else None
    names = [ts.card_name(int(t)) if ts is not None else f"tile {t}" for t in frame["tile"]]
    return frame.with_columns(pl.Series("tile_name", names))


def tile_findings(
    run, method: str = "bh", level: float = 0.05, band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
) -> pl.DataFrame:  # fmt: skip
    """Per tile: ``effect`` (placers minus decliners in the same game, non-random seats;
    ``n`` = such games), ``vs_median`` (the effect minus the median tile's) and ``flag``
    (strong / weak: ``vs_median`` wholly outside +-``band`` after the ``method`` correction,
    at least ``min_n`` games), from :func:`analysis.core.tabulate.with_median_flags`."""
    table = value(run, FINDINGS)["tiles"].effect_table()
    table = with_median_flags(table, Flagging(method, level, band, min_n))
    if run.data is not None:  # every tile, those no game both placed and declined with n = 0
        every = pl.DataFrame(
            {"tile": range(run.data.content.n_tiles)}, schema={"tile": table["tile"].dtype}
        )
        table = every.join(table, on="tile", how="left").with_columns(
            pl.col("n").fill_null(0), pl.col("small").fill_null(True), pl.col("flag").fill_null("")
        )
    return _tile_names(run, table).sort("vs_median", descending=True, nulls_last=True)


def tile_findings_by_strategy(
    run, method: str = "bh", level: float = 0.05, band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
) -> pl.DataFrame:  # fmt: skip
    """Per strategy (random too, on its own rows) and tile: the placers' effect minus the
    decliners' (``effect``, ``n`` = the declining seats, the smaller group), flagged against
    the strategy's median tile and corrected across every cell."""
    stats = value(run, FINDINGS)
    keys = ["strategy_name", "tile"]
    placed = stats["placed"].effect_table("p").select(*keys, "n", "clusters", "p", "p_se")
    declined = (
        stats["declined"]
        .effect_table("d")
        .select(
            *keys, pl.col("n").alias("n_d"), pl.col("clusters").alias("clusters_d"), "d", "d_se"
        )
    )
    frame = placed.join(declined, on=keys, how="inner").filter(pl.col("n_d") > 1)
    se = (pl.col("p_se") ** 2 + pl.col("d_se") ** 2).sqrt()
    frame = frame.select(
        *keys,
        pl.col("n").alias("placed_n"),
        pl.col("n_d").alias("n"),
        pl.min_horizontal("clusters", "clusters_d").alias("clusters"),
        (pl.col("p") - pl.col("d")).alias("effect"),
        se.alias("effect_se"),
    ).with_columns(
        (pl.col("effect") - Z95 * pl.col("effect_se")).alias("effect_lo"),
        (pl.col("effect") + Z95 * pl.col("effect_se")).alias("effect_hi"),
    )
    if frame.height == 0:
        return _tile_names(run, frame.with_columns(pl.lit("").alias("flag")))
    frame = with_median_flags(frame, Flagging(method, level, band, min_n), by=("strategy_name",))
    return _tile_names(run, frame).sort("strategy_name", "tile")


def rule_findings(
    run, method: str = "bh", level: float = 0.05, band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N, share: float = DEAD_SHARE,
) -> pl.DataFrame:  # fmt: skip
    """Per rule: :func:`dead_rules` of its reach, and what reaching it is worth
    (``effect``, reachers minus the others in the same game, ``effect_n`` games; ``flag``
    strong / weak outside the band after the correction across rules)."""
    stats = value(run, FINDINGS)
    reach = dead_rules(stats["reached"].table(), method, level, min_n, share)
    effects = stats["rules"].effect_table()
    if effects.height:
        effects = with_band_flags(effects, Flagging(method, level, band, min_n))
        # The standard error and clusters stay for the skill check (analysis.core.robustness).
        effects = effects.select(
            "rule", pl.col("n").alias("effect_n"), "effect", "effect_lo", "effect_hi",
            "effect_se", pl.col("clusters").alias("effect_clusters"),
            pl.col("small").alias("effect_small"), "flag",
        )  # fmt: skip
    else:
        effects = pl.DataFrame(schema={"rule": pl.Utf8})
    frame = reach.join(effects, on="rule", how="left")
    for column, dtype in (("effect", pl.Float64), ("effect_lo", pl.Float64),
                          ("effect_hi", pl.Float64), ("effect_se", pl.Float64),
                          ("effect_n", pl.Int64), ("effect_clusters", pl.Int64)):  # fmt: skip
        if column not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype).alias(column))
    return frame.with_columns(
        pl.col("flag").fill_null("") if "flag" in frame.columns else pl.lit("").alias("flag"),
        pl.col("effect_small").fill_null(True)
        if "effect_small" in frame.columns
        else pl.lit(True).alias("effect_small"),
    )


def dead_rules(
    sums: pl.DataFrame, method: str = "bh", level: float = 0.05, min_n: int = DEFAULT_MIN_N,
    share: float = DEAD_SHARE,
) -> pl.DataFrame:  # fmt: skip
    """From seat counts per strategy (``strategy_name``, ``n`` and, per rule of
    :data:`RULES` present, the seats that reached it): per rule the share of seats (random
    apart when there are others) that reached it, its Wilson interval, ``dead_p`` (one-sided
    binomial p-value of "reached by at least ``share``"), ``dead_q`` (adjusted across the
    rules by ``method``) and ``dead``: at least ``min_n`` seats, the interval wholly below
    ``share`` and ``dead_q`` < ``level``; ``small``: too few seats to tell."""
    played = sums.filter(~is_random(pl.col("strategy_name")))
    seats = f"all but {RANDOM}" if played.height else "all"
    sums = played if played.height else sums
    n = int(sums["n"].sum()) if sums.height else 0
    rows = [
        {"rule": rule, "seats": seats, "n": n, "reached": int(sums[rule].sum())}
        for rule, _ in RULES
        if rule in sums.columns
    ]
    frame = with_wilson(pl.DataFrame(rows), "reached", "n", "reached_rate")
    reached = frame["reached"].to_numpy()
    p = np.where(frame["n"].to_numpy() >= min_n, binom.cdf(reached, n, share), np.nan)
    q = adjust(p.astype(np.float64), method)
    return frame.with_columns(
        pl.Series("dead_p", p),
        pl.Series("dead_q", q),
        (pl.col("n") < min_n).alias("small"),
    ).with_columns(
        (~pl.col("small") & (pl.col("reached_rate_hi") < share) & (pl.col("dead_q") < level))
        .fill_null(False)
        .alias("dead"),
    )


# --- next steps -------------------------------------------------------------------------------


def _changed_rules(run) -> dict:
    """The run's rules entries (readings, bonus tables) that are not the defaults."""
    printed = rules_as_dict(make_rules())
    ran = dict(run.manifest.get("rules") or printed)
    return {k: v for k, v in ran.items() if printed.get(k) != v}


def _rules_options(run, change: dict) -> list[str]:
    """``--baseline-rules`` with the run's rules where they are not the defaults and
    ``--candidate-rules`` with ``change`` applied to them."""
    differs = _changed_rules(run)
    options = []
    if differs:
        options += ["--baseline-rules", rules_text(differs)]
    return options + ["--candidate-rules", rules_text({**differs, **change})]


def rules_text(entries: dict) -> str:
    return ",".join(
        f"{k}={'/'.join(str(x) for x in v) if isinstance(v, list) else v}"
        for k, v in entries.items()
    )


def _tileset_options(run, flag: str = "--baseline") -> list[str]:
    name = data_file(run, TILESET_PREFIX)
    return [flag, name] if name else []


def compare_command(run, rules_change: dict | None = None, candidate: str | None = None) -> str:
    """``neom compare --game tangram`` of the run's field, tile set, games and seed against a
    candidate tile set file and/or rules change."""
    options = ["--game", "tangram", *field_options(run, _tileset_options(run))]
    if candidate:
        options += ["--candidate", candidate]
    if rules_change:
        options += _rules_options(run, rules_change)
    return f"neom compare {shlex.join(options)}"


def _balance_command(run, name: str, options: list[str]) -> str:
    """``neom balance NAME --game tangram`` of the run's field, tile set, games, seed and
    rules, with the item's ``options``."""
    options = ["--game", "tangram", *field_options(run, _tileset_options(run, "--tileset")),
               *options]  # fmt: skip
    differs = _changed_rules(run)
    if differs:
        options += ["--rules", rules_text(differs)]
    return f"neom balance {shlex.quote(name)} {shlex.join(options)}"


def balance_command(run, lever: str) -> str:
    """``neom balance STRATEGY --game tangram`` for the field's first non-random strategy,
    searching ``lever``."""
    names = [n for n in run.strategy_names if not is_random(n)] or run.strategy_names
    return _balance_command(run, names[0], ["--lever", lever])


def tile_balance_command(run, name: str, candidate: str) -> str:
    """``neom balance TILE --game tangram``: the search of the tile's area, writing the tile
    set with the suggested shape to ``candidate``."""
    return _balance_command(run, name, ["--kind", "tile", "--write-tileset", candidate])


def rule_balance_command(run, rule: str) -> str:
    """``neom balance RULE --game tangram``: the smallest value of the rule's own lever that
    brings it alive."""
    return _balance_command(run, rule, ["--kind", "rule"])


def win_share_per_vp(run) -> float:
    """The run's exchange rate between win share and score lead over the non-random seats
    (``analysis.core.next_steps.rate_from``): a finding's score-lead points equivalent."""
    return rate_from(value(run, FINDINGS).get("rate"))


def _vp(effect, per_vp) -> float:
    if effect is None or not (per_vp and math.isfinite(per_vp) and per_vp > 0):
        return math.nan
    return abs(effect) / per_vp


def _pct(row, column) -> str:
    return (f"{100 * row[column]:.1f}% [{100 * row[f'{column}_lo']:.1f}, "
            f"{100 * row[f'{column}_hi']:.1f}]")  # fmt: skip


def _pts(x, lo, hi) -> str:
    return f"{100 * x:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] pct-pts"


def dead_rule_step(run, row: dict) -> dict:
    """The next step of a dead rule: ranked first (it changes almost no game)."""
    rule = row["rule"]
    if rule == "planning bonus":
        command = compare_command(run, {"planning_bonus": 0})
        fix = ("nothing moves: cut it, or make a full board reachable (more tile area: "
               "`neom tileset validate` warns when the tiles cannot fill the board)")  # fmt: skip
    elif rule == "balance bonus":
        printed = rules_as_dict(make_rules())["balance_bonus"]
        table = printed if "balance_bonus" in _changed_rules(run) else [0] * len(printed)
        command = compare_command(run, {"balance_bonus": table})
        fix = ("the printed table against this one on the same deals"
               if table == printed else "nothing moves: cut it or reprice it")  # fmt: skip
    else:
        command = compare_command(run, {"fountain_kept": "yes"})
        fix = "fountains kept for later (the other reading) on the same deals"
    # Fountains have no numeric lever (a yes/no reading): nothing for balance to search.
    search = (
        f"; or `{rule_balance_command(run, rule)}` searches the smallest {rule} that brings it "
        "alive and measures it again on fresh deals, with the field's edges"
        if rule != "fountains" else ""
    )  # fmt: skip
    text = (
        f"Dead rule: the {rule} is reached by {_pct(row, 'reached_rate')} of {row['n']:,} "
        f"seats ({row['seats']}): it changes almost no game. Next step: `{command}` ({fix})"
        f"{search}."
    )
    return {
        "kind": "dead rule", "name": rule, "first": True, "expected_vp": math.nan,
        "vp_basis": "dead rule, ranked first", "size": "dead rule, ranked first",
        "weight": 1.0, "mark": None, "text": text,
    }  # fmt: skip


def rule_effect_step(run, row: dict, per_vp: float) -> dict:
    rule = row["rule"]
    vp = _vp(row["effect"], per_vp)
    lever = {"planning bonus": "planning_bonus", "balance bonus": "balance_bonus[0]"}.get(rule)
    if lever:
        command = balance_command(run, lever)
        how = f"weigh it against the field's edge: `{command}`"
    else:
        command = compare_command(run, {"fountain_kept": "yes"})
        how = f"test the other fountain reading on the same deals: `{command}`"
    words = "decides games" if row["flag"] == "strong" else "costs the seats that reach it"
    text = (
        f"The {rule} {words}: seats that reach it win "
        f"{_pts(row['effect'], row['effect_lo'], row['effect_hi'])} of win share above expected "
        f"more than the others of the same game ({row['effect_n']:,} games"
        + (f"; about {vp:.1f} score-lead points" if math.isfinite(vp) else "")
        + f"). Next step: {how}."
    )
    return {
        "kind": "rule", "name": rule, "expected_vp": vp, "vp_basis": "score-lead points",
        "weight": ROBUSTNESS_WEIGHT[None], "mark": None, "text": text,
        "lead": (rule, "rule"), "rest": text.split(": ", 1)[1],
    }  # fmt: skip


def tile_step(run, row: dict, per_vp: float) -> dict:
    name = row["tile_name"]
    vp = _vp(row["vs_median"], per_vp)
    strong = row["flag"] == "strong"
    tileset = data_file(run, TILESET_PREFIX) or "TILESET.toml"
    candidate = "candidate.toml"
    command = compare_command(run, candidate=candidate)
    rest = (
        f"placing it rather than declining it is worth "
        f"{_pts(row['vs_median'], row['vs_median_lo'], row['vs_median_hi'])} of win share "
        f"{'more' if strong else 'less'} than placing the median tile ({row['n']:,} games"
        + (f"; about {vp:.1f} score-lead points too {'strong' if strong else 'weak'}"
           if math.isfinite(vp) else "")
        + f"). Next step: `{tile_balance_command(run, name, candidate)}` searches its area "
        "(half-squares, within its card's constraints), measures the suggestion again on fresh "
        f"deals and writes the tile set with it to {candidate}; or by hand: `cp {tileset} "
        f"{candidate}` and make the {name}'s shape "
        f"{'smaller' if strong else 'larger or easier to fit'} in {candidate} (its `shape` "
        f"entry: docs/tangram-tileset.md). Then `{command}` plays it on this run's deals."
    )  # fmt: skip
    return {
        "kind": "tile", "name": name, "expected_vp": vp, "vp_basis": "score-lead points",
        "weight": ROBUSTNESS_WEIGHT[None], "mark": None, "text": f"{name} (tile) {rest}",
        "lead": (name, "tile"), "rest": rest,
    }  # fmt: skip


def _flagged_steps(run, tiles: pl.DataFrame, rules: pl.DataFrame, only=None) -> list[dict]:
    """The steps of ``run``'s flagged tiles and rules (``only``: a set of (finding kind,
    name), the findings to keep; None: all)."""

    def keep(kind, name):
        return only is None or (kind, name) in only

    per_vp = win_share_per_vp(run)
    out = [dead_rule_step(run, row) for row in rules.filter(pl.col("dead")).iter_rows(named=True)
           if keep("rule", row["rule"])]  # fmt: skip
    out += [rule_effect_step(run, row, per_vp)
            for row in rules.filter(pl.col("flag") != "").iter_rows(named=True)
            if keep("rule effect", row["rule"])]  # fmt: skip
    out += [tile_step(run, row, per_vp)
            for row in tiles.filter(pl.col("flag") != "").iter_rows(named=True)
            if keep("tile", row["tile_name"])]  # fmt: skip
    return out


def steps(report, run, tiles: pl.DataFrame, rules: pl.DataFrame, check=None) -> list[dict]:
    """The next steps of the flagged findings (dead rules first), with their commands; the
    run's tile set copied into the report folder for them. With a ``check`` run (its marks
    already on ``report.items``, ``analysis.tangram.check``): the findings flagged in the check
    field only get their steps too (their commands name that field), and every step carries
    its finding's mark and robustness weight."""
    copy_data_file(run, report.out, TILESET_PREFIX)
    out = _flagged_steps(run, tiles, rules)
    if check is None:
        return out
    pooled = [item for item in report.items if "strategy" not in item]
    only_there = {(i["kind"], i["name"]) for i in pooled
                  if not i["flag"] and (i.get("check") or {}).get("flag")}  # fmt: skip
    if only_there:
        settings = report_settings(report)
        out += _flagged_steps(check, tile_findings(check, **settings),
                              rule_findings(check, **settings), only_there)  # fmt: skip
    marked = {(i["kind"], i["name"]): i.get("robustness") for i in pooled}
    for step in out:
        mark = marked.get((STEP_FINDING[step["kind"]], step["name"]))
        step["mark"] = mark
        step["weight"] = ROBUSTNESS_WEIGHT.get(mark, ROBUSTNESS_WEIGHT[None])
    return out


def _simulate_options(run) -> list[str]:
    differs = _changed_rules(run)
    options = ["--game", "tangram", *field_options(run, _tileset_options(run, "--tileset"))]
    for name, option in OPTIONS.items():
        if name in differs:
            options += [option.flag, str(differs[name])]
    return options


def reproduce(run, check=None) -> str:
    """The commands that reproduce the report's figures, from the report folder: the run's
    (and the ``check`` run's) readings as ``simulate`` flags (bonus tables other than the
    printed ones cannot be given to ``simulate``: said in words)."""
    differs = _changed_rules(run)
    tables = {k: v for k, v in differs.items() if k not in OPTIONS}
    note = (
        f" (with the bonus tables {rules_text(tables)}, which neom simulate does not take)"
        if tables
        else ""
    )
    commands = [f"neom simulate {shlex.join(_simulate_options(run))} --events --out runs/main"]
    if check is not None:
        commands.append(
            f"neom simulate {shlex.join(_simulate_options(check))} --events --out runs/check"
        )
    checked = " --check runs/check" if check is not None else ""
    return "; ".join(commands) + f"; neom report runs/main{checked} --out reports/main{note}"
