"""NEOM's sections of the balance report (``Game.report_ref``): cornerstones, tiles, score
breakdown and disasters, after the sections every game shares (``analysis.core.report``)."""

import html

import polars as pl

from analysis.core import figures
from analysis.core.load import Run
from analysis.core.report import (
    Report,
    html_table,
    lead_ci,
    num,
    num_interval,
    pct,
    share_ci,
)
from analysis.neom import cornerstones, scores, tiles
from analysis.neom.load import SCORE_COLUMNS

TILE_TABLE_ROWS = 25  # the HTML shows the most extreme tiles; the CSV has them all


def add_sections(report: Report, run: Run) -> None:
    _cornerstone_section(report, run)
    _tile_section(report, run)
    _score_section(report, run)
    _disaster_section(report, run)


def _flag_finding(frame: pl.DataFrame, what: str, correction: str) -> str:
    named = [
        f"{row['tile_name']} ({100 * row['effect']:+.1f} points)"
        for row in frame.filter(pl.col("flag") == "strong").iter_rows(named=True)
    ]
    weak = [
        f"{row['tile_name']} ({100 * row['effect']:+.1f} points)"
        for row in frame.filter(pl.col("flag") == "weak").iter_rows(named=True)
    ]
    if not named and not weak:
        return f"No {what} flagged ({correction})."
    text = []
    if named:
        text.append(f"{len(named)} {what} flagged strong: {', '.join(named)}")
    if weak:
        text.append(f"{len(weak)} flagged weak: {', '.join(weak)}")
    return "; ".join(text) + f" ({correction}; win share above expected)."


def _effect_columns(what: str) -> list[tuple[str, object]]:
    return [
        ("flag", lambda r: r["flag"]),
        (
            f"win share above expected ({what}) [95% CI]",
            lambda r: (
                num_interval(100 * r["effect"], 100 * r["effect_lo"], 100 * r["effect_hi"]) + " pts"
            ),
        ),
        ("q", lambda r: f"{r['effect_q']:.3g}"),
    ]


def _cornerstone_section(report: Report, run: Run) -> None:
    table = cornerstones.cornerstone_table(run, report.correction, report.level)
    label = report.label
    report.table("cornerstones", table)
    report.findings.append(_flag_finding(table, "cornerstones", label))
    has_pick = "mean_pick" in table.columns
    columns = [
        ("cornerstone", lambda r: r["tile_name"]),
        *_effect_columns("drafted"),
        ("drafted (games)", lambda r: pct(r["drafted_rate"])),
        ("kept when dealt", share_ci("kept")),
        *([("mean pick", lambda r: num(r["mean_pick"], 2))] if has_pick else []),
        ("placed when drafted", lambda r: pct(r["placed_rate"])),
        ("mean gen placed", lambda r: num(r["mean_gen"], 2)),
        ("win share placed", share_ci("win_placed")),
        ("drafted, not placed", share_ci("win_unplaced")),
        ("not drafted", lambda r: pct(r["win_not_drafted"])),
        ("score lead (VP) [95% CI]", lead_ci("score_diff")),
    ]
    parts = [
        f"<p>Effect: the drafting seats' mean win share minus the mean win share of their "
        f"strategy at their player count, in percentage points. Flags: {html.escape(label)}; "
        "red = strong, blue = weak. Score lead: the owner's score minus the mean of the other "
        "seats of the same game. Observational: see docs/reports.md.</p>",
        report.figure(
            "cornerstone_effects",
            forest_effect(table, "Cornerstones: drafters' win share above expected (95% CI)"),
            "cornerstone forest plot",
        ),
        html_table(table, columns),
    ]
    if not has_pick:
        parts.append('<p class="note">No event log: draft pick numbers not available.</p>')
    report.section("cornerstones", "Cornerstones", parts)


def forest_effect(table: pl.DataFrame, title: str):
    return figures.forest(
        table.with_columns(
            (pl.col("effect") * 100).alias("effect"),
            (pl.col("effect_lo") * 100).alias("effect_lo"),
            (pl.col("effect_hi") * 100).alias("effect_hi"),
        ),
        "tile_name",
        "effect",
        title,
        "win share above expected (percentage points)",
    )


def _tile_section(report: Report, run: Run) -> None:
    table = tiles.tile_table(run, report.correction, report.level)
    label = report.label
    if table is None:
        report.section(
            "tiles",
            "Tiles",
            [
                '<p class="note">This run has no event log, so there are no tile statistics. '
                "Run <code>neom simulate</code> with events to get them.</p>"
            ],
        )
        return
    report.table("tiles", table)
    report.findings.append(_flag_finding(table, "generation tiles", label))
    shown = (
        table.filter(pl.col("effect").is_not_nan())
        .sort(pl.col("effect").abs(), descending=True)
        .head(TILE_TABLE_ROWS)
    )
    parts = [
        "<p>Seen: times the tile was in a hand a seat chose from (rebuilt from the log, games of "
        "3+ players). Effect: win share of the seats that placed it, above their expected "
        "share. Placing a tile needs coins and goods, so a seat doing well places more: treat "
        f"flags as leads to test, not verdicts. Showing the {TILE_TABLE_ROWS} largest effects; "
        "tables/tiles.csv has every tile.</p>",
        report.figure(
            "tile_effects",
            forest_effect(table, "Generation tiles: placers' win share above expected (95% CI)"),
            "tile forest plot",
        ),
        html_table(
            shown,
            [
                ("tile", lambda r: r["tile_name"]),
                *_effect_columns("placed"),
                (
                    "taken when seen",
                    share_ci("taken_rate"),
                ),
                ("selected", lambda r: r["selected"]),
                ("placed", lambda r: r["placed"]),
                ("sold", lambda r: r["sold"]),
                ("for a cornerstone", lambda r: r["for_cornerstone"]),
                ("win share placed", lambda r: pct(r["win_placed"])),
                (
                    "most often passed over for",
                    lambda r: (
                        f"{r['passed_over_for_name']} ({pct(r['passed_over_share'])})"
                        if r["passed_over_for"] >= 0
                        else "–"
                    ),
                ),
            ],
        ),
    ]
    report.section("tiles", "Tiles", parts)


def _score_section(report: Report, run: Run) -> None:
    summary = scores.score_summary(run)
    report.table("scores", summary)
    players = run.players.select("n_players", "strategy_name", "total").collect()
    categories = SCORE_COLUMNS[:-1]
    parts = [
        report.figure(
            "score_distributions",
            figures.score_distributions(players, "Final score by strategy"),
            "score distributions",
        ),
        report.figure(
            "score_breakdown",
            figures.breakdown_bars(summary, categories, "Mean score breakdown"),
            "score breakdown",
        ),
        html_table(
            summary,
            [
                ("players", lambda r: r["n_players"]),
                ("strategy", lambda r: r["strategy_name"]),
                *((c.replace("_", " "), lambda r, c=c: num(r[c])) for c in categories),
                (
                    "total [95% CI]",
                    lambda r: f"{r['total']:.1f} [{r['total_lo']:.1f}, {r['total_hi']:.1f}]",
                ),
                ("sd", lambda r: num(r["total_sd"])),
                (
                    "10% / 50% / 90%",
                    lambda r: f"{r['total_p10']:.0f} / {r['total_p50']:.0f} / {r['total_p90']:.0f}",
                ),
            ],
        ),
    ]
    report.section("scores", "Scores", parts)


def _disaster_section(report: Report, run: Run) -> None:
    summary = scores.disaster_summary(run)
    frequency = scores.disaster_frequency(run)
    report.table("disasters", summary)
    report.table("disaster_frequency", frequency)
    paid, suffered = summary["paid"].sum(), summary["suffered"].sum()
    if suffered:
        report.findings.append(
            f"Disasters were suffered {suffered} times: paid {pct(paid / suffered)}, "
            f"sacrificed tiles {pct(1 - paid / suffered)}."
        )
    gens = range(1, scores.N_GENERATIONS + 1)
    parts = [
        "<p>How often each generation's disaster happened (someone selected it, or it was "
        "triggered at random in that variant):</p>",
        html_table(
            frequency,
            [
                ("players", lambda r: r["n_players"]),
                ("games", lambda r: r["games"]),
                *(
                    (
                        f"gen {g}",
                        share_ci(f"gen{g}"),
                    )
                    for g in gens
                ),
            ],
        ),
        "<p>Per seat: disasters selected, and how the seats hit resolved them.</p>",
        html_table(
            summary,
            [
                ("players", lambda r: r["n_players"]),
                ("strategy", lambda r: r["strategy_name"]),
                ("selected / game", lambda r: num(r["selected_per_game"], 2)),
                ("suffered / game", lambda r: num(r["suffered_per_game"], 2)),
                (
                    "paid [95% CI]",
                    share_ci("paid_share"),
                ),
                ("coins per payment", lambda r: num(r["coins_per_payment"])),
                ("tiles per sacrifice", lambda r: num(r["tiles_per_sacrifice"], 2)),
            ],
        ),
    ]
    report.section("disasters", "Disasters", parts)
