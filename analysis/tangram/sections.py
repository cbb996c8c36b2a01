"""Tangram City's report sections: ``add_sections(report, run)``.

Uses only the report object's API (``report.section(key, title, parts)`` with HTML strings,
``report.table(name, frame)`` for a CSV, ``report.figure(name, fig, alt)`` for an ``<img>``,
``report.findings``, and where the report has them ``report.items`` / ``report.add_items`` for
findings.json and ``report.steps`` for the ranked next steps, ``add_next_steps``) and the run's
``players``, ``games``, ``events``, ``manifest`` and ``data``. Every section says when the tile
set is a RECONSTRUCTION.
"""

import html

import polars as pl

from analysis.core import figures
from analysis.core.next_steps import rank_steps, write_steps
from analysis.core.report import (
    PLAYERS_COLUMN,
    SCORE_QUANTILES_COLUMN,
    SEATS_COLUMN,
    SHARE_UNIT,
    STRATEGY_COLUMN,
    TILE_COLUMN,
    cell_pts,
    clean,
    html_table,
    lead_ci,
    mean_ci,
    num,
    num_interval,
    pct,
    share_ci,
)
from analysis.tangram import findings, tables
from analysis.tangram.check import add_check  # noqa: F401  (the report's --check hook)

TILE_ROWS = 23


def _add_item(report, item: dict) -> None:
    """One findings.json object (reports without findings.json skip it)."""
    items = getattr(report, "items", None)
    if items is None:
        return
    item = {k: v if isinstance(v, str) else clean(v) for k, v in item.items()}
    label = getattr(report, "data_label", "")
    items.append({**item, "data": label} if label else item)


def _data_note(run) -> str:
    label = html.escape(tables.data_label(run))
    if tables.reconstructed(run):
        return (
            f'<p class="notice">Tile set: {label}. Shapes, "!" pairs and start pieces are a '
            "reconstruction: findings about named tiles describe it, not the published "
            "game.</p>"
        )
    return f"<p>Tile set: {label}.</p>"


def score_section(report, run) -> None:
    by_seat = tables.score_distribution(run)
    by_strategy = tables.score_distribution(run, ("n_players", "strategy_name"))
    rounds = tables.round_scores(run)
    report.table("tangram_scores_by_seat", by_seat)
    report.table("tangram_scores_by_strategy", by_strategy)
    report.table("tangram_round_scores", rounds)
    for row in by_strategy.iter_rows(named=True):
        report.findings.append(
            f"{row['strategy_name']} ({row['n_players']} players) scores "
            f"{row['total']:.1f} [{row['total_lo']:.1f}, {row['total_hi']:.1f}] on average "
            f"(rounds {row['rounds_total']:.1f}, planning {row['planning_bonus']:.1f}, balance "
            f"{row['balance_bonus']:.1f})."
        )
    histogram = tables.score_histogram(run)
    columns = [
        PLAYERS_COLUMN,
        SEATS_COLUMN,
        ("mean score [95% CI]", mean_ci("total")),
        SCORE_QUANTILES_COLUMN,
        ("min / max", lambda r: f"{r['total_min']} / {r['total_max']}"),
        ("rounds", lambda r: num(r["rounds_total"])),
        ("planning", lambda r: num(r["planning_bonus"])),
        ("balance", lambda r: num(r["balance_bonus"])),
        ("win share [95% CI]", share_ci("win_share")),
    ]
    parts = [
        _data_note(run),
        "<p>Final score = the six round scores (largest fully built rectangle each round) + "
        "planning bonus + balance bonus. Intervals: 95%, normal for means, Wilson for "
        "shares.</p>",
        report.figure(
            "tangram_score_distributions",
            figures.score_distributions(
                histogram,
                "Tangram City: final score by strategy",
                run.game.score_unit,
                count="count",
            ),
            "score distributions",
        ),
        "<h3>By strategy</h3>",
        html_table(by_strategy, [STRATEGY_COLUMN, *columns]),
        "<h3>By seat</h3>",
        html_table(by_seat, [("seat", lambda r: r["seat"]), *columns]),
        "<h3>Mean score of each round scoring</h3>",
        html_table(
            rounds,
            [
                PLAYERS_COLUMN,
                STRATEGY_COLUMN,
                *((f"round {k}", lambda r, k=k: num(r[f"round_{k}"])) for k in range(1, 7)),
            ],
        ),
    ]
    report.section("tangram_scores", "Scores", parts)


def start_section(report, run) -> None:
    roles = tables.round_one_roles(run)
    diffs = tables.role_differences(roles)
    report.table("tangram_round_one_roles", roles)
    report.table("tangram_role_differences", diffs)
    for row in diffs.iter_rows(named=True):
        report.findings.append(
            f"{row['n_players']} players, {row['comparison']}: "
            f"{num_interval(row['diff'], row['diff_lo'], row['diff_hi'])} points."
        )
    parts = [
        "<p>Round-1 roles are set by the rules, not by play (the first start player is a "
        "reading: see the run's rules), and round 1's cards follow from the start player: with "
        "2-3 players everyone holds a card of their own; with 4 the start player and the next "
        "seat hold one each and the other two share one; with 5 only the start player holds one "
        "and the others share in pairs. Differences in final score between the roles measure "
        "the value of the start marker and of a card of one's own (Welch 95% intervals).</p>",
        html_table(
            roles,
            [
                PLAYERS_COLUMN,
                ("round-1 role", lambda r: r["role"]),
                SEATS_COLUMN,
                ("mean score [95% CI]", mean_ci("total")),
                ("win share [95% CI]", share_ci("win_share")),
                ("fair share", lambda r: pct(r["fair"])),
            ],
        ),
    ]
    if diffs.height:
        parts.append(
            html_table(
                diffs,
                [
                    PLAYERS_COLUMN,
                    ("comparison", lambda r: r["comparison"]),
                    ("score difference [95% CI]", lead_ci("diff")),
                ],
            )
        )
    report.section("tangram_start", "Start marker and hand cards", parts)


def bonus_section(report, run) -> None:
    rates = tables.bonus_rates(run)
    report.table("tangram_bonuses", rates)
    settings = findings.report_settings(report)
    rules = findings.rule_findings(run, **settings)
    report.table("tangram_rules_reached", rules)
    for row in rules.iter_rows(named=True):
        reached = share_ci("reached_rate")(row)
        if row["dead"]:
            report.findings.append(
                f"Dead rule: the {row['rule']} is reached by {reached} of {row['n']} seats "
                f"({row['seats']}), the whole interval below {tables.DEAD_SHARE:.0%}: it "
                "changes almost no game."
            )
        if row["flag"]:
            report.findings.append(
                f"The {row['rule']}: seats that reach it win "
                f"{cell_pts(row['effect'], row['effect_lo'], row['effect_hi'])} pct-pts of win "
                f"share above expected more than the others of the same game "
                f"({row['effect_n']} games; flagged {row['flag']})."
            )
        _add_item(
            report,
            {
                "kind": "rule",
                "name": row["rule"],
                "metric": findings.RULE_METRIC,
                "effect": row["reached_rate"],
                "lo": row["reached_rate_lo"],
                "hi": row["reached_rate_hi"],
                "n": row["n"],
                "flag": "dead" if row["dead"] else None,
                "unit": SHARE_UNIT,
            },
        )
        if row["effect"] is not None:
            _add_item(
                report,
                {
                    "kind": "rule effect",
                    "name": row["rule"],
                    "metric": findings.RULE_EFFECT_METRIC,
                    "effect": row["effect"],
                    "lo": row["effect_lo"],
                    "hi": row["effect_hi"],
                    "n": row["effect_n"],
                    "flag": row["flag"] or None,
                },
            )
    for row in rates.iter_rows(named=True):
        report.findings.append(
            f"{row['strategy_name']} ({row['n_players']} players) scores the planning bonus in "
            f"{share_ci('planning_rate')(row)} of games and levels its balance markers in "
            f"{share_ci('level_rate')(row)}."
        )
    parts = [
        "<p>Planning bonus: all 49 squares built at the end. Balance bonus: by the distance "
        "between the red and green markers (printed: 0 &rarr; 20, 1-2 &rarr; 10, 3-4 &rarr; 5, "
        "5+ &rarr; 0).</p>",
        f"<p>A rule (a bonus scored, at least one fountain taken) is dead when at least "
        f"{settings['min_n']} seats (random seats apart) played, the 95% interval of the share "
        f"that reaches it lies wholly below {tables.DEAD_SHARE:.0%} and the one-sided binomial "
        f"test of &ldquo;reached by at least {tables.DEAD_SHARE:.0%}&rdquo; is rejected after "
        f"the {settings['method']} correction across the rules. What reaching it is worth: "
        "the reachers' minus the other seats' win share above expected in the same games "
        "(95% intervals clustered by deal), flagged outside "
        f"&plusmn;{100 * settings['band']:g} pct-pts after the correction; observational (a "
        "seat reaches a bonus when its game goes well).</p>",
        html_table(
            rules,
            [
                ("rule", lambda r: r["rule"]),
                ("seats", lambda r: f"{r['n']} ({r['seats']})"),
                ("reached by [95% CI]", share_ci("reached_rate")),
                (
                    "dead rule",
                    lambda r: "DEAD" if r["dead"] else ("too few seats" if r["small"] else "no"),
                ),
                (
                    "reached minus not, same game: pct-pts [95% CI]",
                    lambda r: (
                        "–"
                        if r["effect"] is None
                        else cell_pts(r["effect"], r["effect_lo"], r["effect_hi"])
                        + f" (n = {r['effect_n']})"
                    ),
                ),
                ("flag", lambda r: r["flag"] or ("too few" if r["effect_small"] else "")),
            ],
        ),
        html_table(
            rates,
            [
                PLAYERS_COLUMN,
                STRATEGY_COLUMN,
                SEATS_COLUMN,
                ("planning bonus [95% CI]", share_ci("planning_rate")),
                ("markers level [95% CI]", share_ci("level_rate")),
                ("any balance bonus [95% CI]", share_ci("balance_rate")),
                ("mean balance bonus [95% CI]", mean_ci("balance_bonus")),
                ("mean distance", lambda r: num(r["distance"], 2)),
                ("full squares", lambda r: num(r["full_squares"])),
                ("declined tiles", lambda r: num(r["tiles_declined"], 2)),
                ("fountains", lambda r: num(r["fountains"], 2)),
            ],
        ),
    ]
    report.section("tangram_bonuses", "Planning and balance bonuses", parts)


def tile_section(report, run) -> None:
    pooled = tables.tile_table(run)
    by_strategy = tables.tile_table(run, ("strategy_name",))
    report.table("tangram_tiles", pooled)
    report.table("tangram_tiles_by_strategy", by_strategy)
    settings = findings.report_settings(report)
    effects = tables.tile_effects(run, **settings)
    report.table("tangram_tile_effects", effects)
    worth = findings.tile_findings(run, **settings)
    worth_by_strategy = findings.tile_findings_by_strategy(run, **settings)
    report.table("tangram_tile_findings", worth)
    report.table("tangram_tile_findings_by_strategy", worth_by_strategy)
    add_items = getattr(report, "add_items", None)  # reports without findings.json skip it
    if add_items is not None:
        add_items("tile", worth, findings.TILE_METRIC, effect="vs_median")
        add_items("tile", worth_by_strategy, findings.TILE_METRIC, strategy="strategy_name",
                  effect="vs_median")  # fmt: skip
    for row in worth.filter(pl.col("flag") != "").iter_rows(named=True):
        report.findings.append(
            f"{row['tile_name']} ({'too strong' if row['flag'] == 'strong' else 'too weak'}): "
            f"placing it rather than declining it is worth "
            f"{cell_pts(row['vs_median'], row['vs_median_lo'], row['vs_median_hi'])} pct-pts of "
            f"win share more than placing the median tile ({row['n']} games with both; flagged "
            f"outside +-{100 * settings['band']:g} pct-pts after the {settings['method']} "
            "correction)."
        )
    for row in worth_by_strategy.filter(pl.col("flag") != "").iter_rows(named=True):
        report.findings.append(
            f"{row['strategy_name']} seats alone: placing {row['tile_name']} is worth "
            f"{cell_pts(row['vs_median'], row['vs_median_lo'], row['vs_median_hi'])} pct-pts "
            f"more than placing their median tile ({row['n']} declines; {row['flag']})."
        )
    top = pooled.sort("decline_rate", descending=True).row(0, named=True)
    report.findings.append(
        f"Most declined tile: {top['tile_name']} ({share_ci('decline_rate')(top)} of seats)."
    )
    moved = pooled.filter(
        (pl.col("late_minus_early_score_lo") > 0) | (pl.col("late_minus_early_score_hi") < 0)
    )
    report.findings.append(
        f"{moved.height} of {pooled.height} tiles change the final score by when their card "
        "comes (early: rounds 1-2, late: rounds 5-6; 95% intervals excluding 0, not corrected "
        "for the 23 tests)."
    )
    forest = pooled.with_columns(
        pl.col("late_minus_early_score").alias("effect"),
        pl.col("late_minus_early_score_lo").alias("effect_lo"),
        pl.col("late_minus_early_score_hi").alias("effect_hi"),
    )
    parts = [
        _data_note(run),
        "<p>Decline rate: share of seats that set the tile aside (strategies pooled, "
        f"{html.escape(pooled['seats'][0] if pooled.height else 'all')} seats; "
        "tables/tangram_tiles_by_strategy.csv splits them, random seats too). Card order: the "
        "deal is random, so when a tile's card comes is independent of the seat; the "
        "late-minus-early differences (rounds 5-6 vs rounds 1-2) show how much its order "
        "matters, for declining it and for the final score. Tiles marked (!) are "
        "near-identical pairs.</p>",
        report.figure(
            "tangram_tile_order",
            figures.forest(
                forest,
                "tile_name",
                "effect",
                "Final score when the card comes late minus early (95% CI)",
                "points (late - early)",
            ),
            "tile order effects",
        ),
        html_table(
            pooled.sort("decline_rate", descending=True).head(TILE_ROWS),
            [
                TILE_COLUMN,
                ("area", lambda r: f"{r['area']:g}"),
                ("declined [95% CI]", share_ci("decline_rate")),
                ("early", share_ci("early_rate")),
                ("late", share_ci("late_rate")),
                (
                    "late - early",
                    lambda r: (
                        num_interval(
                            100 * r["late_minus_early_rate"],
                            100 * r["late_minus_early_rate_lo"],
                            100 * r["late_minus_early_rate_hi"],
                        )
                        + " pts"
                    ),
                ),
                ("score: late - early [95% CI]", lead_ci("late_minus_early_score")),
            ],
        ),
    ]
    parts += [
        "<h3>What placing each tile is worth</h3>",
        f"<p>In each game where some seats (random seats apart) placed the tile and others "
        f"declined it: the placers' win share above expected (their strategy's mean share at "
        f"their player count) minus the decliners', averaged over those games, 95% intervals "
        f"clustered by deal. Every tile's is positive (a seat declines what does not fit, "
        f"more often when behind), so each is read against the median tile: a tile is "
        f"flagged too strong (or too weak) when at least {settings['min_n']} games have both "
        f"and its difference from the median tile lies wholly outside "
        f"+-{100 * settings['band']:g} pct-pts after the {settings['method']} correction "
        "across tiles. tables/tangram_tile_findings_by_strategy.csv has it per strategy "
        "(random on rows of its own).</p>",
        html_table(
            worth,
            [
                TILE_COLUMN,
                ("games with both", lambda r: r["n"]),
                (
                    "placed minus declined: pct-pts [95% CI]",
                    lambda r: cell_pts(r["effect"], r["effect_lo"], r["effect_hi"]),
                ),
                (
                    "vs the median tile [95% CI]",
                    lambda r: cell_pts(r["vs_median"], r["vs_median_lo"], r["vs_median_hi"]),
                ),
                ("flag", lambda r: r["flag"] or ("too few" if r["small"] else "")),
            ],
        ),
        "<h3>Win share of the seats that declined each tile</h3>",
        "<p>Win share above the seat's expectation (its strategy's mean share at its player "
        "count), random seats apart, for the seats that declined the tile and those that "
        "placed it; 95% intervals clustered by deal; shown, not flagged (the flags are "
        "the placing-vs-declining contrast above; the CSV keeps this table's band test). "
        "Observational: seats decline a tile that fits badly, so this says how "
        "much having to decline it went with losing, not that declining caused it.</p>",
        html_table(
            effects.sort("n", descending=True, nulls_last=True),
            [
                TILE_COLUMN,
                ("declined by", lambda r: r["n"] or 0),
                (
                    "declined: pct-pts [95% CI]",
                    lambda r: (
                        cell_pts(r["effect"], r["effect_lo"], r["effect_hi"])
                        if r["effect"] is not None
                        else "–"
                    ),
                ),
                ("", lambda r: "too few" if r["small"] else ""),
                (
                    "placed: pct-pts [95% CI]",
                    lambda r: (
                        cell_pts(r["placed_effect"], r["placed_effect_lo"], r["placed_effect_hi"])
                        if r["placed_effect"] is not None
                        else "–"
                    ),
                ),
            ],
        ),
    ]
    report.section("tangram_tiles", "Tiles: declines and card order", parts)


def reductions(run) -> list:
    """What Tangram City's sections read, chunk by chunk (``analysis.core.batches``)."""
    return [tables.TABLES, tables.TILE_EFFECTS, findings.FINDINGS]


def add_next_steps(report, run, check=None) -> None:
    """The ranked next steps of the flagged findings (dead rules first), each with a command
    that runs as pasted from the report folder (the tile set is copied there), weighted by its
    finding's mark against ``check`` (when given), and the commands that reproduce the run."""
    settings = findings.report_settings(report)
    worth = findings.tile_findings(run, **settings)
    rules = findings.rule_findings(run, **settings)
    write_steps(report, rank_steps(findings.steps(report, run, worth, rules, check)))
    report.reproduce = findings.reproduce(run, check)
    report.steps_note = findings.steps_note(check is not None)
    report.data_word = "tile set"


def add_sections(report, run) -> None:
    """Add Tangram City's sections (scores, start marker and hand cards, bonuses, tiles)."""
    score_section(report, run)
    start_section(report, run)
    bonus_section(report, run)
    tile_section(report, run)


def comparison_section(report, run_a, run_b, label_a: str = "A", label_b: str = "B") -> None:
    """An A/B section from two paired runs (analysis.tangram.compare)."""
    from analysis.tangram.compare import paired_differences

    frame = paired_differences(run_a, run_b)
    overall = paired_differences(run_a, run_b, by=())
    report.table("tangram_ab", frame)
    row = overall.row(0, named=True)
    total = lead_ci("total_diff")(row)
    planning = lead_ci("planning_bonus_diff")(row)
    report.findings.append(
        f"{label_b} minus {label_a}, same deals: final score {total} points per seat; "
        f"planning bonus {planning}."
    )
    columns = [("strategy", lambda r: r.get("strategy_name", "all")), SEATS_COLUMN]
    for metric in ("total", "rounds_total", "planning_bonus", "balance_bonus", "win_share"):
        columns.append(
            (
                f"{metric.replace('_', ' ')}: {label_b} - {label_a}",
                lead_ci(f"{metric}_diff", 3 if metric == "win_share" else 2),
            )
        )
    parts = [
        f"<p>{html.escape(label_a)} vs {html.escape(label_b)}, the same deals and seats: paired "
        "differences (B - A) per seat, 95% intervals.</p>",
        html_table(
            pl.concat(
                [frame, overall.with_columns(pl.lit("all").alias("strategy_name"))],
                how="diagonal_relaxed",
            ),
            columns,
        ),
    ]
    report.section("tangram_ab", f"A/B: {label_a} vs {label_b}", parts)
