"""NEOM's sections of the balance report (``Game.report_ref``): cornerstones, tiles, dead and
rare tiles, game flow, score breakdown and disasters, after the sections every game shares
(``analysis.core.report``); ``add_combined`` (several runs) and ``add_check`` (a stronger
field on the same catalogue) are the optional hooks ``build_report`` looks up here."""

import html
import math

import polars as pl

from analysis.core import figures
from analysis.core.load import Run
from analysis.core.report import (
    GAMES_COLUMN,
    PLAYERS_COLUMN,
    STRATEGY_COLUMN,
    Report,
    cell_pts,
    html_table,
    lead_ci,
    mean_ci,
    num,
    p_cell,
    pct,
    pts,
    share_ci,
)
from analysis.core.stats import spearman_interval
from analysis.core.strategies import run_games
from analysis.core.tabulate import sign_disagreements
from analysis.neom import cornerstones, flow, scores, tiles
from analysis.neom.load import SCORE_COLUMNS
from analysis.neom.next_step import VP_RATE, next_steps

TILE_TABLE_ROWS = 25  # the HTML shows the most extreme tiles; the CSV has them all
CS_METRIC = "win_share_above_expected_drafted"
TILE_METRIC = "win_share_above_expected_selected"


def reductions(run: Run) -> list:
    """What NEOM's sections read, chunk by chunk (``analysis.core.batches``)."""
    out = [cornerstones.CORNERSTONES, flow.FLOW, scores.SCORES, VP_RATE]
    return out + ([tiles.TILES] if run.events is not None else [])


def add_sections(report: Report, run: Run) -> None:
    _cornerstone_section(report, run)
    _tile_section(report, run)
    _flow_section(report, run)
    _score_section(report, run)
    _disaster_section(report, run)


def _effect_cell(report: Report, column: str = "effect"):
    """Cell: an effect in pct-pts with its interval; greyed with its n below the minimum."""

    def cell(r):
        text = cell_pts(r[column], r[f"{column}_lo"], r[f"{column}_hi"])
        if r.get("small"):
            return f"{text} (n = {r['n']} < {report.min_n}: not tested)"
        return text

    return cell


def _flag_finding(frame: pl.DataFrame, what: str, report: Report) -> str:
    def named(flag):
        rows = frame.filter(pl.col("flag") == flag).sort(pl.col("effect").abs(), descending=True)
        return [
            f"{r['tile_name']} ({pts(r['effect'], r['effect_lo'], r['effect_hi'])}, n = {r['n']})"
            for r in rows.iter_rows(named=True)
        ]

    strong, weak = named("strong"), named("weak")
    small = int(frame["small"].sum()) if "small" in frame.columns else 0
    tail = f" {small} with fewer than {report.min_n} seats were not tested." if small else ""
    if not strong and not weak:
        return f"No {what} flagged ({report.band_words()}).{tail}"
    text = []
    if strong:
        text.append(f"{len(strong)} {what} flagged strong: {', '.join(strong)}")
    if weak:
        text.append(f"{len(weak)} flagged weak: {', '.join(weak)}")
    return "; ".join(text) + f".{tail}"


def _flag_columns(report: Report, what: str) -> list[tuple[str, object]]:
    return [
        ("flag", lambda r: r["flag"]),
        (f"win share above expected ({what}), pct-pts [95% CI]", _effect_cell(report)),
        ("n", lambda r: r["n"]),
        ("q (band test)", p_cell("effect_q")),
    ]


def forest_effect(table: pl.DataFrame, title: str, min_n: int = 0):
    shown = table.filter(pl.col("n") >= min_n) if "n" in table.columns else table
    return figures.forest(
        shown.with_columns(
            (pl.col("effect") * 100).alias("effect"),
            (pl.col("effect_lo") * 100).alias("effect_lo"),
            (pl.col("effect_hi") * 100).alias("effect_hi"),
        ),
        "tile_name",
        "effect",
        title,
        "win share above expected (pct-pts)",
    )


def _strategy_breakdown(
    report: Report, name: str, table: pl.DataFrame, what: str, kind: str, metric: str
) -> list[str]:
    """The per-strategy effects as a wide table (one column per strategy) and the items on
    which strategies disagree in sign (significantly, corrected across all cells)."""
    report.table(f"{name}_by_strategy", table)
    report.add_items(kind, table, metric, strategy="strategy_name")
    disagree = sign_disagreements(table, "tile_name", report.correction, report.level, report.min_n)
    report.table(f"{name}_strategy_disagreements", disagree)
    for row in disagree.iter_rows(named=True):
        report.findings.append(
            f"Strategies disagree on {what} {row['tile_name']}: better than expected for "
            f"{row['positive']}, worse for {row['negative']} (each significant, "
            f"{report.label.split(' adjusted')[0]}-corrected across every {what} and strategy)."
        )
    names = sorted(table["strategy_name"].unique().to_list())
    cells = table.with_columns(
        pl.struct("effect", "effect_lo", "effect_hi", "n", "flag")
        .map_elements(
            lambda r: (
                f"({100 * r['effect']:+.1f}, n={r['n']})"
                if r["n"] < report.min_n
                else f"{cell_pts(r['effect'], r['effect_lo'], r['effect_hi'])}"
                + (f" {r['flag']}" if r["flag"] else "")
            ),
            return_dtype=pl.Utf8,
        )
        .alias("cell")
    )
    wide = cells.pivot(on="strategy_name", index="tile_name", values="cell").sort("tile_name")
    wide = wide.join(
        disagree.select("tile_name", pl.lit("yes").alias("disagree")), on="tile_name", how="left"
    )
    columns = [(what, lambda r: r["tile_name"])]
    columns += [(f"{s}, pct-pts", lambda r, s=s: r.get(s) or "–") for s in names]
    columns.append(("strategies disagree", lambda r: r["disagree"] or ""))
    shown, note = wide, ""
    if wide.height > 40:
        # The disagreements, then the widest spread between the strategies' tested effects.
        spread = (
            table.filter(pl.col("n") >= report.min_n)
            .group_by("tile_name")
            .agg((pl.col("effect").max() - pl.col("effect").min()).alias("spread"))
        )
        shown = (
            wide.join(spread, on="tile_name", how="left")
            .sort(pl.col("disagree").is_not_null(), pl.col("spread"), descending=True,
                  nulls_last=True)
            .head(max(25, int(wide["disagree"].is_not_null().sum())))
        )  # fmt: skip
        note = (
            f'<p class="note">Showing the {shown.height} {what}s on which strategies disagree '
            f"or differ most; tables/{name}_by_strategy.csv has all {wide.height}.</p>"
        )
    return [
        f"<h3>By strategy</h3><p>The same effect within each strategy (the expected share is "
        f"already the strategy's own). In brackets: fewer than {report.min_n} seats, not "
        "tested. <i>Strategies disagree</i>: one strategy significantly above and another "
        "significantly below expected (zero-tests adjusted across every cell).</p>",
        html_table(shown, columns),
        note,
    ]


def _cornerstone_section(report: Report, run: Run) -> None:
    args = (report.correction, report.level, report.band, report.min_n)
    table = cornerstones.cornerstone_table(run, *args)
    report.table("cornerstones", table)
    report.add_items("cornerstone", table, CS_METRIC)
    report.findings.append(_flag_finding(table, "cornerstones", report))
    report.findings.extend(next_steps(report, "cornerstone", table, run))
    has_pick = "mean_pick" in table.columns
    columns = [
        ("cornerstone", lambda r: r["tile_name"]),
        *_flag_columns(report, "drafted"),
        ("vs median cornerstone, pct-pts", lambda r: cell_pts(r["vs_median"])),
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
        "<p>Effect: the drafting seats' mean win share minus the mean win share of their "
        "strategy at their player count, in percentage points (pct-pts), with a 95% interval "
        "that is cluster-robust over deals. "
        f"Flags: {html.escape(report.band_words())}; red = strong, blue = weak; grey rows "
        "have too few drafters to test. <b>Effects are zero-sum</b>: every seat drafts exactly "
        "three cornerstones, so a few strong ones push every other one below expected; "
        "<i>vs median cornerstone</i> reads each effect against the median cornerstone's "
        "instead. Score lead: the owner's score minus the mean of the other seats of the same "
        "game. Observational: see docs/reports.md.</p>",
        report.figure(
            "cornerstone_effects",
            forest_effect(table, "Cornerstones: drafters' win share above expected (95% CI)"),
            "cornerstone forest plot",
        ),
        html_table(table, columns),
    ]
    if not has_pick:
        parts.append('<p class="note">No event log: draft pick numbers not available.</p>')
    per_strategy = cornerstones.by_strategy(run, *args)
    if per_strategy["strategy_name"].n_unique() > 1:
        parts += _strategy_breakdown(
            report, "cornerstones", per_strategy, "cornerstone", "cornerstone", CS_METRIC
        )
    report.section("cornerstones", "Cornerstones", parts)


def _tile_section(report: Report, run: Run) -> None:
    args = (report.correction, report.level, report.band, report.min_n)
    table = tiles.tile_table(run, *args)
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
    report.add_items("tile", table, TILE_METRIC)
    report.findings.append(_flag_finding(table, "generation tiles", report))
    report.findings.extend(next_steps(report, "tile", table, run))
    tested = table.filter(~pl.col("small") & pl.col("effect").is_not_nan())
    shown = pl.concat(
        [
            table.filter(pl.col("flag") != ""),
            tested.filter(pl.col("flag") == "").sort(pl.col("effect").abs(), descending=True),
        ]
    ).head(TILE_TABLE_ROWS)
    parts = [
        "<p>Tiles are measured where the decision is made: when a seat <i>selects</i> a tile "
        "from its hand (the way 17Lands measures cards). Effect: the selecting seats' win share "
        "above their expected share, pct-pts, cluster-robust 95% interval; "
        f"{html.escape(report.band_words())}. Placing a tile needs coins and goods, so the "
        "win share of placers mostly measures who could pay: it is shown, never flagged. "
        "<i>Passed over</i>: seats that held the tile and took another (rebuilt from the "
        "hands, 3+ players); <i>selected vs passed</i>: the selector's minus the passers' "
        "residual in the same games. Seen: times the tile was in a hand a seat chose from. "
        f"Showing flagged tiles, then the largest tested effects (up to {TILE_TABLE_ROWS}); "
        "tables/tiles.csv has every tile.</p>",
        report.figure(
            "tile_effects",
            forest_effect(
                table,
                f"Tiles: selectors' win share above expected (95% CI, n ≥ {report.min_n})",
                report.min_n,
            ),
            "tile forest plot",
        ),
        html_table(
            shown,
            [
                ("tile", lambda r: r["tile_name"]),
                *_flag_columns(report, "selected"),
                ("taken when seen", share_ci("taken_rate")),
                ("mean turn taken (1-7)", lambda r: num(r["mean_turn"], 1)),
                ("sold when selected", share_ci("sell_rate")),
                ("win share selected", share_ci("win_selected")),
                (
                    "win share placed (n)",
                    lambda r: f"{pct(r.get('win_placed'))} ({r.get('placed_seats') or 0})",
                ),  # fmt: skip
                (
                    "win share passed over (n)",
                    lambda r: f"{pct(r.get('win_passed'))} ({r.get('passed_seats') or 0})",
                ),  # fmt: skip
                (
                    "selected vs passed, pct-pts [95% CI]",
                    lambda r: pts(
                        r.get("sel_vs_passed"), r.get("sel_vs_passed_lo"), r.get("sel_vs_passed_hi")
                    ),
                ),  # fmt: skip
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
    per_strategy = tiles.by_strategy(run, *args)
    if per_strategy is not None and per_strategy["strategy_name"].n_unique() > 1:
        parts += _strategy_breakdown(report, "tiles", per_strategy, "tile", "tile", TILE_METRIC)
    report.section("tiles", "Tiles", parts)
    _dead_section(report, run, table)


def _dead_section(report: Report, run: Run, table: pl.DataFrame) -> None:
    dead = tiles.dead_tiles(run, table)
    if dead is None:
        return
    report.table("dead_tiles", dead)
    n_dead = int(dead["dead"].sum())
    in_play = dead.filter(~pl.col("why").str.starts_with("never dealt"))
    never_dealt = dead.height - in_play.height
    n_games = run_games(run)
    report.findings.append(
        f"{int(in_play['dead'].sum())} generation tiles in play were never placed in {n_games} "
        f"games and {int((~in_play['dead']).sum())} more were placed in fewer than "
        f"{100 * tiles.RARE_SHARE:g}% of games (dead and rare tiles table)"
        + (f"; {never_dealt} are not dealt at this player count." if never_dealt else ".")
    )
    parts = [
        f"<p>Generation tiles (Disasters aside) never placed, or placed in fewer than "
        f"{100 * tiles.RARE_SHARE:g}% of the {n_games} games ({n_dead} never placed). "
        "<i>Why</i> is read from the log: never dealt (not in the deck at this player count, "
        "or left in the box); dealt but always passed over; or, of the selections that were "
        "not placed, the commonest ending: a "
        "prerequisite tile missing from the seller's city, unaffordable (the seller's coins, "
        "rebuilt from the log, below the tile's cheapest coin cost), sold though affordable "
        "in coins (selling paid more, or the goods or a legal square were lacking), or spent "
        "on a cornerstone. It describes these strategies: a stronger field may place them "
        "(see <code>neom report RUN --check RUN2</code>).</p>",
        html_table(
            in_play.sort("placed", "selected"),
            [
                ("tile", lambda r: r["tile_name"]),
                ("gen", lambda r: r["generation"]),
                ("icon", lambda r: f"{r['player_icon']}+"),
                ("seen", lambda r: r["seen"]),
                ("selected", lambda r: r["selected"]),
                ("placed", lambda r: r["placed"]),
                ("sold", lambda r: r["sold"]),
                ("for a cornerstone", lambda r: r["for_cornerstone"]),
                ("why", lambda r: r["why"]),
            ],
        ),
    ]
    if never_dealt:
        names = ", ".join(dead.filter(pl.col("why").str.starts_with("never dealt"))["tile_name"])
        parts.append(f'<p class="note">Not dealt at this player count: {html.escape(names)}.</p>')
    report.section("dead", "Dead and rare tiles", parts)


def _by_generation(
    report: Report, name: str, frame: pl.DataFrame, value: str, title: str, unit: str, columns
) -> list[str]:
    """A per-strategy measure at the end of each generation: the CSV ``name``, its line chart
    (``value`` in ``unit``) and its table (strategy, generation, then ``columns``)."""
    report.table(name, frame)
    chart = figures.lines_by(frame, "generation", value, "strategy_name", title, "generation", unit)
    rows = [STRATEGY_COLUMN, ("generation", lambda r: r["generation"]), *columns]
    return [report.figure(name, chart, f"{unit} by generation"), html_table(frame, rows)]


def _flow_section(report: Report, run: Run) -> None:
    coins = flow.coins_by_generation(run)
    vp = flow.vp_by_generation(run)
    if coins is None and vp is None:
        return
    parts = [
        "<p>How games unfold, per strategy: means over seats with 95% intervals (mean ± "
        "t standard errors, cluster-robust over deals).</p>"
    ]
    if vp is not None:
        parts += _by_generation(
            report, "vp_by_generation", vp, "vp", "Score at the end of each generation", "VP",
            [("VP [95% CI]", mean_ci("vp"))],
        )  # fmt: skip
    if coins is not None:
        parts += _by_generation(
            report, "coins_by_generation", coins, "money_end",
            "Coins held at the end of each generation", "coins",
            [
                ("income", lambda r: num(r["income"])),
                ("sales", lambda r: num(r["sales"])),
                ("goods sold", lambda r: num(r["goods_sold"])),
                ("effects", lambda r: num(r["effects"])),
                ("spent on tiles", lambda r: num(r["tiles_paid"])),
                ("goods bought", lambda r: num(r["goods_bought"])),
                ("disasters", lambda r: num(r["disasters"])),
                ("held at the end [95% CI]", mean_ci("money_end")),
            ],
        )  # fmt: skip
    if vp is None:
        parts.append(
            '<p class="note">VP by generation is recorded with the event log: run '
            "<code>neom simulate --events</code> to see it.</p>"
        )
    report.section("flow", "Game flow", parts)


def _score_section(report: Report, run: Run) -> None:
    summary = scores.score_summary(run)
    report.table("scores", summary)
    histogram = scores.score_histogram(run)
    categories = SCORE_COLUMNS[:-1]
    parts = [
        report.figure(
            "score_distributions",
            figures.score_distributions(histogram, "Final score by strategy", count="count"),
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
                PLAYERS_COLUMN,
                STRATEGY_COLUMN,
                *((c.replace("_", " "), lambda r, c=c: num(r[c])) for c in categories),
                ("total [95% CI]", mean_ci("total")),
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
                PLAYERS_COLUMN,
                GAMES_COLUMN,
                *((f"gen {g}", share_ci(f"gen{g}")) for g in gens),
            ],
        ),
        "<p>Per seat: disasters selected, and how the seats hit resolved them.</p>",
        html_table(
            summary,
            [
                PLAYERS_COLUMN,
                STRATEGY_COLUMN,
                ("selected / game", lambda r: num(r["selected_per_game"], 2)),
                ("suffered / game", lambda r: num(r["suffered_per_game"], 2)),
                ("paid [95% CI]", share_ci("paid_share")),
                ("coins per payment", lambda r: num(r["coins_per_payment"])),
                ("tiles per sacrifice", lambda r: num(r["tiles_per_sacrifice"], 2)),
            ],
        ),
    ]
    report.section("disasters", "Disasters", parts)


# --- several runs, and the skill check ------------------------------------------------------


def _effects(report: Report, run: Run) -> dict[str, pl.DataFrame]:
    args = (report.correction, report.level, report.band, report.min_n)
    out = {"cornerstone": cornerstones.cornerstone_table(run, *args)}
    table = tiles.tile_table(run, *args)
    if table is not None:
        out["tile"] = table
    return out


def _cell(row: dict, suffix: str, min_n: int) -> str:
    effect = row.get(f"effect{suffix}")
    if effect is None or (isinstance(effect, float) and math.isnan(effect)):
        return "–"
    n = row.get(f"n{suffix}") or 0
    if n < min_n:
        return f"({100 * effect:+.1f}, n={n})"
    flag = row.get(f"flag{suffix}") or ""
    return cell_pts(effect, row[f"effect_lo{suffix}"], row[f"effect_hi{suffix}"]) + (
        f" {flag}" if flag else ""
    )


def add_combined(report: Report, runs: list[Run]) -> None:
    """Cornerstone and tile effects of every run side by side (one column per run)."""
    keep = ["tile_name", "n", "effect", "effect_lo", "effect_hi", "flag"]
    for kind in ("cornerstone", "tile"):
        frames = []
        for index, run in enumerate(runs):
            table = _effects(report, run).get(kind)
            if table is None:
                continue
            frames.append(table.select(keep).rename({c: f"{c}_{index}" for c in keep[1:]}))
        if len(frames) < 2:
            continue
        wide = frames[0]
        for frame in frames[1:]:
            wide = wide.join(frame, on="tile_name", how="full", coalesce=True)
        wide = wide.sort("tile_name")
        flagged_any = pl.any_horizontal(
            pl.col(f"flag_{i}").fill_null("") != "" for i in range(len(runs))
            if f"flag_{i}" in wide.columns
        )  # fmt: skip
        report.table(f"combined_{kind}s", wide)
        shown = wide.filter(flagged_any) if wide.height > 40 else wide
        columns = [(kind, lambda r: r["tile_name"])] + [
            (report.run_label(run), lambda r, i=i: _cell(r, f"_{i}", report.min_n))
            for i, run in enumerate(runs)
        ]
        report.sections[-1][2].extend(
            [
                f"<h3>{kind.capitalize()}s, every run</h3>"
                + (
                    f'<p class="note">Showing the {shown.height} flagged in some run; '
                    f"tables/combined_{kind}s.csv has all {wide.height}.</p>"
                    if shown.height < wide.height
                    else ""
                ),  # fmt: skip
                html_table(shown, columns),
            ]
        )


def add_check(report: Report, run: Run, check: Run) -> None:
    """Do the conclusions survive skill? The main run's cornerstone and tile findings beside a
    run of a stronger field on the same catalogue: rank correlation of effects, findings that
    change sign or flag, tiles this field never places that the other field does."""
    from sim.core.errors import UserError

    if run.manifest["data"].get("digest") != check.manifest["data"].get("digest"):
        raise UserError(
            f"--check {check.path}: played on another catalogue than {run.path} (digests differ)"
        )
    main, other = _effects(report, run), _effects(report, check)
    keep = ["tile_name", "n", "small", "effect", "effect_lo", "effect_hi", "flag"]
    parts = [
        f"<p>The findings of this run ({html.escape(', '.join(run.strategy_names))}) beside "
        f"<code>{html.escape(str(check.path))}</code>, a run of another field "
        f"({html.escape(', '.join(check.strategy_names))}) on the same catalogue. A finding "
        "that holds for both fields is about the catalogue; one that changes is about the "
        "players. Rank correlation: Spearman over the items tested in both runs, 95% interval "
        "from Fisher's z (Bonett-Wright variance).</p>"
    ]
    rows = []
    for kind, table in main.items():
        if kind not in other:
            continue
        joined = table.select(keep).join(
            other[kind].select(keep), on="tile_name", how="inner", suffix="_check"
        )
        both = joined.filter(~pl.col("small") & ~pl.col("small_check"))
        rho = spearman_interval(both["effect"].to_numpy(), both["effect_check"].to_numpy())
        rows.append({"kind": kind, **rho})
        changed = joined.filter(
            (pl.col("flag") != pl.col("flag_check"))
            | (
                ~pl.col("small") & ~pl.col("small_check")
                & (((pl.col("effect_lo") > 0) & (pl.col("effect_hi_check") < 0))
                   | ((pl.col("effect_hi") < 0) & (pl.col("effect_lo_check") > 0)))
            )
        ).with_columns(
            pl.when(pl.col("flag") != pl.col("flag_check"))
            .then(pl.lit("flag changes"))
            .otherwise(pl.lit("sign changes"))
            .alias("change")
        )  # fmt: skip
        report.table(f"check_{kind}s", joined)
        report.findings.append(
            f"Skill check ({kind}s, vs {check.path.name}): Spearman "
            f"{num(rho['rho'], 2)} [{num(rho['lo'], 2)}, {num(rho['hi'], 2)}] over "
            f"{rho['n']} tested in both; {changed.height} change sign or flag."
        )
        parts += [
            f"<h3>{kind.capitalize()}s</h3><p>Spearman rank correlation of effects: "
            f"{num(rho['rho'], 2)} [{num(rho['lo'], 2)}, {num(rho['hi'], 2)}] over {rho['n']} "
            f"{kind}s tested in both runs. Findings that change sign (both intervals clear of "
            f"0, on opposite sides) or flag: {changed.height}.</p>",
            html_table(
                changed,
                [
                    (kind, lambda r: r["tile_name"]),
                    ("change", lambda r: r["change"]),
                    ("this run", lambda r: _cell(r, "", report.min_n)),
                    ("check run", lambda r: _cell(r, "_check", report.min_n)),
                ],
            ),
        ]
    if run.events is not None and check.events is not None:
        dead = tiles.dead_tiles(run, main.get("tile"))
        placed_other = other["tile"].select("tile_name", pl.col("placed").alias("placed_check"))
        n_check = run_games(check)
        revived = (
            dead.filter(pl.col("dead"))
            .join(placed_other, on="tile_name", how="inner")
            .filter(pl.col("placed_check") > 0)
            .with_columns((pl.col("placed_check") / n_check).alias("placed_check_per_game"))
            .sort("placed_check", descending=True)
        )
        report.table("check_revived_tiles", revived)
        report.findings.append(
            f"Skill check: {revived.height} tiles this field never places are placed by the "
            f"{check.path.name} field"
            + (
                f" (most: {revived['tile_name'][0]}, {revived['placed_check'][0]} times in "
                f"{n_check} games)."
                if revived.height
                else "."
            )  # fmt: skip
        )
        parts += [
            "<h3>Tiles this field never places that the other field does</h3>",
            html_table(
                revived,
                [
                    ("tile", lambda r: r["tile_name"]),
                    ("why never placed here", lambda r: r["why"]),
                    ("placed by the other field", lambda r: r["placed_check"]),
                    ("per game", lambda r: f"{r['placed_check_per_game']:.3f}"),
                ],
            ),
        ]
    report.table("check_correlation", pl.DataFrame(rows))
    report.section("check", "Do the conclusions survive skill?", parts)
