"""NEOM's sections of the balance report (``Game.report_ref``): cornerstones, tiles, dead and
rare tiles, the economy behind them, Disasters, game flow and scores, after the sections every
game shares (``analysis.core.report``); ``add_combined`` (several runs) and ``add_check`` (a
stronger field on the same catalogue: every finding marked robust, weaker/stronger,
vanishes/appears or reversed: ``analysis.core.robustness``) are
the optional hooks ``build_report`` looks up here."""

import html
import math
import shlex

import polars as pl

from analysis.core import figures, robustness
from analysis.core.load import Run
from analysis.core.next_steps import VP_RATE, write_steps
from analysis.core.report import (
    GAMES_COLUMN,
    PLAYERS_COLUMN,
    SCORE_QUANTILES_COLUMN,
    STRATEGY_COLUMN,
    TILE_COLUMN,
    Report,
    cell_pts,
    html_table,
    lead_ci,
    mean_ci,
    num,
    p_cell,
    pct,
    pct_interval,
    plain_columns,
    pts,
    share_ci,
    shown_path,
)
from analysis.core.robustness import (
    count_marks,
    counted_rows,
    counts_words,
    mark_words,
    marks,
    marks_legend,
    verified_leads,
)
from analysis.core.stats import spearman_interval
from analysis.core.strategies import run_games
from analysis.core.tabulate import sign_disagreements, with_band_flags
from analysis.neom import cornerstones, disasters, economy, flow, scores, tiles
from analysis.neom import next_step as next_step_module
from analysis.neom.load import SCORE_COLUMNS
from analysis.neom.next_step import next_steps
from analysis.neom.usage import USAGE_FLOORS, usage_table
from sim.neom.constants import N_GENERATIONS

TILE_TABLE_ROWS = 25  # the HTML shows the most extreme tiles; the CSV has them all
CS_METRIC = "win_share_vs_median_cornerstone_drafted"
TILE_METRIC = "win_share_vs_median_tile_of_generation_selected"
DISASTER_METRIC = "win_share_above_expected_chosen"
RARELY_BUILT = 0.05  # a cornerstone placed in fewer of its drafts is "rarely built"
KINDS = ("cornerstone", "tile", "disaster")
GENERATION_COLUMN = ("gen", lambda r: r["generation"])  # a generation tile's (beside its name)


def reductions(run: Run) -> list:
    """What NEOM's sections read, chunk by chunk (``analysis.core.batches``)."""
    out = [cornerstones.CORNERSTONES, flow.FLOW, scores.SCORES, VP_RATE]
    if run.events is not None:
        out += [tiles.TILES, economy.ECONOMY, disasters.DISASTERS]
    return out


def add_sections(report: Report, run: Run) -> None:
    _cornerstone_section(report, run)
    _tile_section(report, run)
    _economy_section(report, run)
    _disaster_section(report, run)
    _flow_section(report, run)
    _score_section(report, run)


# --- the tables every section and the skill check read, derived once per run ---------------


def split_disasters(table: pl.DataFrame, run: Run, report: Report):
    """The tile table without the Disasters and the Disasters' rows, each flagged on its own
    (the correction runs across the tiles, and across the Disasters): a tile against the
    median tile of its generation (``tiles.with_generation_median_flags``; ``flag_vs_expected``
    beside it), a Disaster against its chooser's expected share."""
    flagging = report.flagging
    chosen = pl.Series([disasters.is_disaster(run.tables, int(t)) for t in table["tile"]],
                       dtype=pl.Boolean)  # fmt: skip
    return (
        tiles.with_generation_median_flags(table.filter(~chosen), run.tables, *flagging),
        with_band_flags(table.filter(chosen), flagging),
    )


def derived(report: Report, run: Run) -> dict:
    """The run's cornerstone table, tile table (``tile``: Disasters apart, ``tile_all``: the
    table as ``tiles.tile_table`` gives it), Disaster table, dead tiles and the goods produced
    at the end (``good_share``: good -> share of cities), computed once per report."""
    key = ("neom", id(run))
    if key in report.cache:
        return report.cache[key]
    flagging = report.flagging
    out = {"cornerstone": cornerstones.cornerstone_table(run, flagging)}
    table = tiles.tile_table(run, flagging)
    if table is not None:
        out["tile_all"] = table
        out["tile"], out["disaster"] = split_disasters(table, run, report)
        out["dead"] = tiles.dead_tiles(run, table)
        goods = economy.goods_by_generation(run)
        if goods is not None:
            out["goods"] = goods
            final = goods.filter(pl.col("generation") == N_GENERATIONS)
            out["good_share"] = dict(zip(final["good"].to_list(), final["share"].to_list(),
                                         strict=True))  # fmt: skip
    report.cache[key] = out
    return out


def _links(report: Report, run: Run, tile: int) -> str:
    if run.tables is None:
        return ""
    return economy.links(run.tables, tile, derived(report, run).get("good_share"))


def _add_links(report: Report, kind: str, table: pl.DataFrame, run: Run) -> None:
    """Each flagged finding's links (prerequisites, what requires it, goods it needs)."""
    flagged = {str(r["tile_name"]): int(r["tile"]) for r in table.iter_rows(named=True)
               if r["flag"]}  # fmt: skip
    for item in report.items:
        if item["kind"] == kind and "strategy" not in item and item["name"] in flagged:
            item["links"] = _links(report, run, flagged[item["name"]])


def _effect_cell(report: Report, column: str = "effect"):
    """Cell: an effect in pct-pts with its interval; greyed with its n below the minimum."""

    def cell(r):
        text = cell_pts(r[column], r[f"{column}_lo"], r[f"{column}_hi"])
        if r.get("small"):
            return f"{text} (n = {r['n']} < {report.min_n}: not tested)"
        return text

    return cell


def _named(frame: pl.DataFrame, flag: str, effect: str = "effect") -> list[str]:
    rows = frame.filter(pl.col("flag") == flag).sort(pl.col(effect).abs(), descending=True)
    return [
        f"{r['tile_name']} ({pts(r[effect], r[f'{effect}_lo'], r[f'{effect}_hi'])}, n = {r['n']})"
        for r in rows.iter_rows(named=True)
    ]


def _flag_finding(frame: pl.DataFrame, what: str, report: Report, effect: str = "effect",
                  against: str = "") -> str:  # fmt: skip
    strong, weak = _named(frame, "strong", effect), _named(frame, "weak", effect)
    small = int(frame["small"].sum()) if "small" in frame.columns else 0
    tail = f" {small} with fewer than {report.min_n} seats were not tested." if small else ""
    if not strong and not weak:
        return f"No {what} flagged{against} ({report.band_words()}).{tail}"
    text = []
    if strong:
        text.append(f"{len(strong)} {what} flagged strong{against}: {', '.join(strong)}")
    if weak:
        text.append(f"{len(weak)} flagged weak: {', '.join(weak)}")
    return "; ".join(text) + f".{tail}"


def _glance_flags(frame: pl.DataFrame, what: str, against: str = "") -> str:
    """A short sentence: how many of ``what`` are flagged each way, naming a few."""

    def few(flag) -> str:
        """How many are flagged ``flag``, naming a few ("" where none is)."""
        names = frame.filter(pl.col("flag") == flag)["tile_name"].to_list()
        if not names:
            return ""
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        return f"{len(names)} too {flag} ({shown})"

    parts = [part for part in (few("strong"), few("weak")) if part]
    if not parts:
        return f"{what.capitalize()}: none flagged{against}."
    return f"{what.capitalize()}{against}: " + "; ".join(parts) + "."


def _flag_columns(report: Report, what: str, effect: str = "effect") -> list[tuple[str, object]]:
    return [
        ("flag", lambda r: r["flag"]),
        (what, _effect_cell(report, effect)),
        ("n", lambda r: r["n"]),
        ("q (band test)", p_cell(f"{effect}_q")),
    ]


def _links_column(report: Report, run: Run):
    return ("links (flagged rows)", lambda r: _links(report, run, int(r["tile"])) if r["flag"]
            else "")  # fmt: skip


def forest_effect(table: pl.DataFrame, title: str, min_n: int = 0, effect: str = "effect",
                  xlabel: str = "win share above expected (pct-pts)"):  # fmt: skip
    shown = table.filter(pl.col("n") >= min_n) if "n" in table.columns else table
    return figures.forest(
        shown.with_columns(
            (pl.col(effect) * 100).alias("effect"),
            (pl.col(f"{effect}_lo") * 100).alias("effect_lo"),
            (pl.col(f"{effect}_hi") * 100).alias("effect_hi"),
        ),
        "tile_name",
        "effect",
        title,
        xlabel,
    )


def _strategy_breakdown(
    report: Report, name: str, table: pl.DataFrame, what: str, kind: str, metric: str,
    effect: str = "effect",
) -> list[str]:  # fmt: skip
    """The per-strategy effects as a wide table (one column per strategy) and the items on
    which strategies disagree in sign (significantly, corrected across all cells)."""
    report.table(f"{name}_by_strategy", table)
    report.add_items(kind, table, metric, strategy="strategy_name", effect=effect)
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
        pl.struct(
            pl.col(effect).alias("e"), pl.col(f"{effect}_lo").alias("lo"),
            pl.col(f"{effect}_hi").alias("hi"), "n", "flag",
        )
        .map_elements(
            lambda r: (
                f"({100 * r['e']:+.1f}, n={r['n']})"
                if r["n"] < report.min_n
                else f"{cell_pts(r['e'], r['lo'], r['hi'])}"
                + (f" {r['flag']}" if r["flag"] else "")
            ),
            return_dtype=pl.Utf8,
        )
        .alias("cell")
    )  # fmt: skip
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
            .agg((pl.col(effect).max() - pl.col(effect).min()).alias("spread"))
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
    reference = (
        f"the strategy's median {what}" + (" of its generation" if what == "tile" else "")
        if effect == "vs_median"
        else "expected"
    )
    return [
        f"<h3>By strategy</h3><p>The same effect within each strategy, against {reference} "
        f"(the expected share is already the strategy's own). In brackets: fewer than "
        f"{report.min_n} seats, not tested. <i>Strategies disagree</i>: one strategy "
        "significantly above and another significantly below expected (zero-tests adjusted "
        "across every cell).</p>",
        html_table(shown, columns),
        note,
    ]


# --- cornerstones and tiles ---------------------------------------------------------------------


def _never_built(table: pl.DataFrame) -> tuple[list[str], list[str]]:
    """(cornerstones drafted but never placed, those placed in under RARELY_BUILT of their
    drafts), each with its draft rate."""
    drafted = table.filter(pl.col("drafted") > 0)
    never = drafted.filter(pl.col("placed") == 0).sort("drafted", descending=True)
    rare = drafted.filter((pl.col("placed") > 0) & (pl.col("placed_rate") < RARELY_BUILT)).sort(
        "placed_rate"
    )
    return (
        [f"{r['tile_name']} (drafted in {pct(r['drafted_rate'])} of games)"
         for r in never.iter_rows(named=True)],
        [f"{r['tile_name']} ({pct(r['placed_rate'])} of its drafts)"
         for r in rare.iter_rows(named=True)],
    )  # fmt: skip


def _flagged_against_median(report, run, kind, table, metric, what, against) -> None:
    """A table of ``kind`` flagged on its effect against the median item (``vs_median``): its
    CSV, its items and links, the finding, the glance line and the next steps."""
    report.table(f"{kind}s", table)
    report.add_items(kind, table, metric, effect="vs_median")
    _add_links(report, kind, table, run)
    report.findings.append(_flag_finding(table, what, report, "vs_median", against))
    report.glance.append(_glance_flags(table, what, against))
    next_steps(report, kind, table, run, effect="vs_median")


def _cornerstone_section(report: Report, run: Run) -> None:
    flagging = report.flagging
    table = derived(report, run)["cornerstone"]
    against = " against the median cornerstone"
    _flagged_against_median(report, run, "cornerstone", table, CS_METRIC, "cornerstones", against)
    never, rare = _never_built(table)
    if never or rare:
        line = (f"Drafted, never built: {', '.join(never)}" if never else "") + (
            f"{'; r' if never else 'R'}arely built (under {pct(RARELY_BUILT)} of drafts): "
            f"{', '.join(rare)}" if rare else ""
        )  # fmt: skip
        report.findings.append(line + ".")
        names = [n.split(" (")[0] for n in never]
        report.glance.append(
            f"Drafted, never built: {', '.join(names)}." if names else line.split(": ", 1)[0]
            + f": {len(rare)} cornerstones."
        )  # fmt: skip
    has_pick = "mean_pick" in table.columns
    columns = [
        ("cornerstone", lambda r: r["tile_name"]),
        *_flag_columns(report, "vs median cornerstone (flagged), pct-pts [95% CI]", "vs_median"),
        ("above expected, pct-pts [95% CI]", _effect_cell(report)),
        ("drafted (games)", lambda r: pct(r["drafted_rate"])),
        ("kept when dealt", share_ci("kept")),
        *([("mean pick", lambda r: num(r["mean_pick"], 2))] if has_pick else []),
        ("placed when drafted", lambda r: pct(r["placed_rate"])),
        ("mean gen placed", lambda r: num(r["mean_gen"], 2)),
        ("win share: placed", share_ci("win_placed")),
        ("win share: drafted, not placed", share_ci("win_unplaced")),
        ("win share: not drafted", lambda r: pct(r["win_not_drafted"])),
        ("score lead (VP) [95% CI]", lead_ci("score_diff")),
        _links_column(report, run),
    ]
    parts = [
        "<p>Effect: the drafting seats' mean win share minus the mean win share of their "
        "strategy at their player count, in percentage points (pct-pts), with a 95% interval "
        "that is cluster-robust over deals. <b>Effects are zero-sum</b>: every seat drafts "
        "exactly three cornerstones, so a few strong ones push every other one below "
        "expected. The flag therefore reads each effect <i>against the median cornerstone</i> "
        "(the median moves by at most one rank when one cornerstone dominates, so a dominant "
        "cornerstone flags itself and not the rest; it is also what <code>neom balance</code> "
        "brings a cornerstone back to): "
        f"{html.escape(report.band_words())}; red = strong, blue = weak; grey rows have too few "
        "drafters to test. The effect against the expected share is shown beside it. Win "
        "shares: of the seats that placed it, drafted it and never placed it, did not draft "
        "it. Score lead: the owner's score minus the mean of the other seats of the same "
        "game. Observational: see docs/reports.md.</p>",
        report.figure(
            "cornerstone_effects",
            forest_effect(
                table,
                "Cornerstones: drafters' win share against the median cornerstone (95% CI)",
                effect="vs_median",
                xlabel="win share against the median cornerstone (pct-pts)",
            ),
            "cornerstone forest plot",
        ),  # fmt: skip
        html_table(table, columns),
    ]
    if not has_pick:
        parts.append('<p class="note">No event log: draft pick numbers not available.</p>')
    per_strategy = cornerstones.by_strategy(run, flagging)
    if per_strategy["strategy_name"].n_unique() > 1:
        parts += _strategy_breakdown(report, "cornerstones", per_strategy, "cornerstone",
                                     "cornerstone", CS_METRIC, effect="vs_median")  # fmt: skip
    report.section("cornerstones", "Cornerstones", parts)


def _tile_section(report: Report, run: Run) -> None:
    flagging = report.flagging
    found = derived(report, run)
    if "tile" not in found:
        report.section(
            "tiles",
            "Tiles",
            [
                '<p class="note">This run has no event log, so there are no tile statistics. '
                "Run <code>neom simulate</code> with events to get them.</p>"
            ],
        )
        return
    table = found["tile"]
    against = " against the median tile of their generation"
    _flagged_against_median(report, run, "tile", table, TILE_METRIC, "generation tiles", against)
    tested = table.filter(~pl.col("small") & pl.col("vs_median").is_not_nan())
    shown = pl.concat(
        [
            table.filter(pl.col("flag") != ""),
            tested.filter(pl.col("flag") == "").sort(pl.col("vs_median").abs(), descending=True),
        ]
    ).head(TILE_TABLE_ROWS)
    parts = [
        "<p>Tiles are measured where the decision is made: when a seat <i>selects</i> a tile "
        "from its hand (the way 17Lands measures cards). Effect: the selecting seats' win share "
        "above their expected share, pct-pts, cluster-robust 95% interval. <b>Selections are "
        "zero-sum</b> within a generation (a seat takes seven tiles of each), so one dominant "
        "tile pushes every other below expected: the flag reads each effect <i>against the "
        "median tile of its generation</i>, as cornerstones are read against the median "
        "cornerstone, so a planted tile flags itself and leaves the others' flags in place; "
        f"{html.escape(report.band_words())}. The effect against the expected share is shown "
        "beside it (<code>flag_vs_expected</code> in tables/tiles.csv). Disasters are apart "
        "(their own section). "
        "Placing a tile needs coins and goods, so the "
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
                f"Tiles: selectors' win share against the median tile of their generation "
                f"(95% CI, n ≥ {report.min_n})",
                report.min_n,
                effect="vs_median",
                xlabel="win share against the generation's median tile (pct-pts)",
            ),
            "tile forest plot",
        ),
        html_table(
            shown,
            [
                TILE_COLUMN,
                GENERATION_COLUMN,
                *_flag_columns(
                    report, "vs its gen's median tile (flagged), pct-pts [95% CI]", "vs_median"
                ),  # fmt: skip
                (
                    "above expected, pct-pts [95% CI] (its flag)",
                    lambda r: (
                        cell_pts(r["effect"], r["effect_lo"], r["effect_hi"])
                        + (f" {r['flag_vs_expected']}" if r.get("flag_vs_expected") else "")
                    ),
                ),
                ("taken when seen", share_ci("taken_rate")),
                ("mean turn taken (1-7)", lambda r: num(r["mean_turn"], 1)),
                ("sold when selected", share_ci("sell_rate")),
                ("win share: selected", share_ci("win_selected")),
                (
                    "win share: placed (n)",
                    lambda r: f"{pct(r.get('win_placed'))} ({r.get('placed_seats') or 0})",
                ),  # fmt: skip
                (
                    "win share: passed over (n)",
                    lambda r: f"{pct(r.get('win_passed'))} ({r.get('passed_seats') or 0})",
                ),  # fmt: skip
                (
                    "selected vs passed, pct-pts [95% CI]",
                    lambda r: cell_pts(
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
                _links_column(report, run),
            ],
        ),
    ]
    per_strategy = tiles.by_strategy(run, flagging)
    if per_strategy is not None and per_strategy["strategy_name"].n_unique() > 1:
        chosen = pl.Series([disasters.is_disaster(run.tables, int(t))
                            for t in per_strategy["tile"]], dtype=pl.Boolean)  # fmt: skip
        per_strategy = tiles.with_generation_median_flags(
            per_strategy.filter(~chosen), run.tables, *flagging, by=("strategy_name",)
        )
        parts += _strategy_breakdown(report, "tiles", per_strategy, "tile", "tile", TILE_METRIC,
                                     effect="vs_median")  # fmt: skip
    report.section("tiles", "Tiles", parts)
    _dead_section(report, run, found["dead"])


def _dead_section(report: Report, run: Run, dead: pl.DataFrame | None) -> None:
    if dead is None:
        return
    report.table("dead_tiles", dead)
    in_play = dead.filter(~pl.col("why").str.starts_with("never dealt"))
    never_dealt = dead.height - in_play.height
    n_games = run_games(run)
    n_dead = int(in_play["dead"].sum())
    n_rare = int((~in_play["dead"]).sum())
    dealt_words = f"; {never_dealt} more are not dealt at this player count" if never_dealt else ""
    report.findings.append(
        f"{n_dead} generation tiles in play were never placed in {n_games} games and {n_rare} "
        f"more were placed in fewer than {100 * tiles.RARE_SHARE:g}% of games (dead and rare "
        f"tiles table){dealt_words}."
    )
    report.glance.append(
        f"Dead tiles: {n_dead} of the generation tiles dealt were never placed, {n_rare} more "
        f"rarely{dealt_words}."
    )
    parts = [
        f"<p>Generation tiles (Disasters aside) dealt at this player count and never placed "
        f"({n_dead}), or placed in fewer than {100 * tiles.RARE_SHARE:g}% of the {n_games} games "
        f"({n_rare}){dealt_words} (listed below the table). "
        "<i>Why</i> is read from the log: dealt but always passed over; or, of the selections "
        "that were not placed, the commonest ending: a "
        "prerequisite tile missing from the seller's city, a required good no city of the game "
        "produced, unaffordable (the seller's coins, rebuilt from the log, below the tile's "
        "cheapest coin cost), sold though affordable "
        "in coins (selling paid more, or the goods or a legal square were lacking), or spent "
        "on a cornerstone. The economy section below says which goods are missing and why. It "
        "describes these strategies: a stronger field may place them "
        "(see <code>neom report RUN --check RUN2</code>).</p>",
        html_table(
            in_play.sort("placed", "selected"),
            [
                TILE_COLUMN,
                GENERATION_COLUMN,
                ("icon", lambda r: f"{r['player_icon']}+"),
                *plain_columns("seen", "selected", "placed", "sold"),
                ("for a cornerstone", lambda r: r["for_cornerstone"]),
                ("why", lambda r: r["why"]),
                ("links", lambda r: _links(report, run, int(r["tile"]))),
            ],
        ),
    ]
    if never_dealt:
        names = ", ".join(dead.filter(pl.col("why").str.starts_with("never dealt"))["tile_name"])
        parts.append(
            f'<p class="note">Not dealt at this player count ({never_dealt}): '
            f"{html.escape(names)}.</p>"
        )
    report.section("dead", "Dead and rare tiles", parts)


# --- the economy: goods, the action mix, dominated tiles -------------------------------------


def _placements(report: Report, run: Run) -> tuple[dict[int, int], dict[int, str]]:
    """(tile -> placements in the run, tile -> why it is rarely placed) for generation tiles
    and cornerstones."""
    found = derived(report, run)
    placed = dict(zip(found["tile_all"]["tile"].to_list(), found["tile_all"]["placed"].to_list(),
                      strict=True))  # fmt: skip
    why = {}
    if found.get("dead") is not None:
        why = dict(zip(found["dead"]["tile"].to_list(), found["dead"]["why"].to_list(),
                       strict=True))  # fmt: skip
    for row in found["cornerstone"].iter_rows(named=True):
        placed[int(row["tile"])] = int(row["placed"])
        why[int(row["tile"])] = (
            f"a cornerstone placed in {pct(row['placed_rate'])} of its drafts "
            f"(drafted in {pct(row['drafted_rate'])} of games)"
        )
    return placed, why


def _economy_section(report: Report, run: Run) -> None:
    found = derived(report, run)
    goods = found.get("goods")
    if goods is None:
        return
    report.table("goods_by_generation", goods)
    report.table("goods_by_generation_by_strategy", economy.goods_by_generation(run, True))
    chains = good_chains(report, run)
    report.table("goods", chains)
    failing = chains.filter(pl.col(f"share_gen{N_GENERATIONS}") < economy.LOW_SHARE)
    here = field_name(run)
    tiers = failing.group_by("tier").len()
    tier_words = ", ".join(f"{r['len']} {r['tier']}" for r in tiers.sort("tier").iter_rows(
        named=True))  # fmt: skip
    first_failures = list(dict.fromkeys(f.split(":")[0] for f in failing["fails_at"] if f))
    if failing.height:
        shares = ", ".join(
            f"{r['good_name']} {pct(r[f'share_gen{N_GENERATIONS}'])}"
            for r in failing.sort(f"share_gen{N_GENERATIONS}").iter_rows(named=True)
        )
        report.glance.append(
            f"Economy ({here}): {failing.height} of {chains.height} goods ({tier_words}) are "
            "produced by "
            f"fewer than {pct(economy.LOW_SHARE)} of cities at the end ({shares}); their chains "
            f"fail first at {', '.join(first_failures[:5])}"
            + (f" and {len(first_failures) - 5} more" if len(first_failures) > 5 else "")
            + "."
        )
        report.findings.append(
            f"Goods almost never produced in {here} (share of cities at the end): "
            + "; ".join(
                f"{r['good_name']} {pct(r[f'share_gen{N_GENERATIONS}'])}, fails at {r['fails_at']}"
                for r in failing.iter_rows(named=True)
            )
            + "."
        )
    chart = report.figure(
        "economy",
        figures.share_grid(
            goods.sort("tier", "good"), "good_name", "generation", "share",
            "Goods: share of cities producing each at the end of each generation",
            "end of generation", groups="tier",
        ),
        "economy chart: share of cities producing each good by generation",
    )  # fmt: skip
    report.glance_html.append(chart)
    parts = [
        "<p>Which goods the cities produce: per good, the share of all cities (seats) whose "
        "city produces it at the end of each generation (rebuilt from the log: the City "
        "Center, every placement, a sacrificed tile removed). A good produced by fewer than "
        f"{pct(economy.LOW_SHARE)} of cities at the end <i>fails</i>; its chain is followed "
        "upstream (the producer placed most, then the scarcest good of its cheapest-to-meet "
        "requirement) to the first link that fails while what it needs is there: that is "
        "where a designer should look. <i>Needed by</i>: tiles whose every requirement option "
        "needs the good (one option: in brackets). The chart is at the top of the report "
        '(<a href="#glance">at a glance</a>).</p>',
        html_table(
            chains,
            [
                ("good", lambda r: r["good_name"]),
                ("tier", lambda r: r["tier"]),
                *(
                    (f"end of gen {g}", lambda r, g=g: pct(r[f"share_gen{g}"]))
                    for g in range(1, N_GENERATIONS + 1)
                ),  # fmt: skip
                ("made by (placements)", lambda r: r["producers"] or "–"),
                ("needed by", lambda r: _needed_by(r)),
                ("its chain, upstream", lambda r: r["chain"] or "–"),
                ("fails first at, and why", lambda r: r["fails_at"] or "–"),
            ],
        ),
    ]
    mix = economy.action_mix(run)
    if mix is not None:
        report.table("action_mix", mix)
        pooled = mix.filter(pl.col("strategy_name") == "all")
        per_game = {a: float(pooled[f"{a}_per_seat"].sum()) for a in economy.ACTIONS}
        selections = float(pooled["selections_per_seat"].sum())
        report.glance.append(
            f"Actions: a seat sells {per_game['sold']:.1f} of its {selections:.0f} selections, "
            f"places {per_game['placed']:.1f} and discards {per_game['for_cornerstone']:.1f} "
            "to build cornerstones."
        )
        report.findings.append(
            "A seat's selections over the game: "
            + ", ".join(f"{per_game[a]:.2f} {economy.ACTION_WORDS[a]}" for a in economy.ACTIONS)
            + f" of {selections:.1f} (per generation: action_mix table)."
        )
        parts += [
            "<h3>What seats do with their selections</h3><p>Each turn a seat selects one tile "
            "and places it, sells it for 5 coins, discards it to build a cornerstone, or (a "
            "Disaster) chooses the Disaster. Shares of the selections per generation, all "
            "strategies; the table gives each strategy's means per seat.</p>",
            report.figure(
                "action_mix",
                figures.stacked_shares(
                    pooled,
                    "generation",
                    {f"{a}_share": economy.ACTION_WORDS[a] for a in economy.ACTIONS},
                    "What the selections became, per generation",
                    "generation",
                ),
                "action mix by generation",
            ),  # fmt: skip
            html_table(
                mix,
                [
                    STRATEGY_COLUMN,
                    ("generation", lambda r: r["generation"]),
                    *(
                        (
                            f"{economy.ACTION_WORDS[a]} (per seat)",
                            lambda r, a=a: (
                                num(r[f"{a}_per_seat"], 2) + f" ({pct(r[f'{a}_share'])})"
                            ),
                        )
                        for a in economy.ACTIONS
                    ),  # fmt: skip
                ],
            ),
        ]
    parts += _dominated_parts(report, run)
    parts += _usage_parts(report, run)
    report.section("economy", f"Economy of {field_name(run)}: goods, actions, usage, dominated "
                   "tiles", parts)  # fmt: skip


def usage(report: Report, run: Run) -> pl.DataFrame | None:
    """``usage.usage_table`` of the run, derived once."""
    found = derived(report, run)
    if "usage" not in found and run.tables is not None:
        found["usage"] = usage_table(run.tables, found["cornerstone"], found.get("tile_all"))
    return found.get("usage")


def _usage_parts(report: Report, run: Run) -> list[str]:
    table = usage(report, run)
    if table is None:
        return []
    report.table("usage", table)
    kept_floor, built_floor = USAGE_FLOORS
    columns = [
        ("kind", lambda r: r["kind"]),
        ("gen", lambda r: r["generation"] or "–"),
        ("item", lambda r: r["tile_name"]),
        ("offered", lambda r: r["offered"]),
        ("kept when offered", lambda r: f"{r['taken']} "
         f"({pct_interval(r['kept_rate'], r['kept_rate_lo'], r['kept_rate_hi'])})"),
        ("built (placed) of kept", lambda r: f"{r['built']} of {r['kept']} "
         f"({pct_interval(r['built_rate'], r['built_rate_lo'], r['built_rate_hi'])})"),
        ("sold", lambda r: f"{r['sold']} ({pct(r['sold_rate'])})"),
        ("discarded for a cornerstone", lambda r: r["for_cornerstone"]),
        ("below floor", lambda r: r["below_floor"] or ""),
    ]  # fmt: skip
    below = table.filter(pl.col("below_floor") != "")
    n_cornerstones = int((table["kind"] == "cornerstone").sum())
    floors = (
        f"kept in at least {100 * kept_floor:.0f}% of the deals that offer it, built by at least "
        f"{100 * built_floor:.0f}% of the seats that keep it"
    )
    if below.height:
        items = "".join(
            f"<li><b>{html.escape(r['tile_name'])}</b> ({r['kind']}): kept in "
            f"{pct_interval(r['kept_rate'], r['kept_rate_lo'], r['kept_rate_hi'])} of "
            f"{r['offered']:,} offers, built by "
            f"{pct_interval(r['built_rate'], r['built_rate_lo'], r['built_rate_hi'])} of its "
            f"{r['kept']:,} keepers; below the {r['below_floor']} floor. Next step: "
            f"<code>{html.escape(_usage_command(r, run))}</code></li>"
            for r in below.iter_rows(named=True)
        )
        flagged = (
            f"<p><b>{below.height} of {n_cornerstones} cornerstones miss a usage floor</b> "
            f"({floors}; "
            "a one-sided binomial test of each count against its floor, the table's tests "
            "corrected together, Benjamini-Hochberg at 5%): a card nobody wants is a design "
            f"problem even when its win share is in the band.</p><ul>{items}</ul>"
        )
    else:
        flagged = (
            f"<p>Every cornerstone meets the usage floors ({floors}), or too few offers tell.</p>"
        )
    return [
        f"<h3>Usage of every cornerstone and tile</h3><p>Offered: a cornerstone dealt into a "
        "draft hand, a tile seen in a hand a seat chose from (games of 3 or more players); "
        "kept when offered: drafted or taken from those offers; built: placed (share of the "
        "seats that kept it); sold: a tile's selections sold (share of keeps). Every item of the "
        f"catalogue has a row, zeros included ({table.height} rows: "
        f"{int((table['kind'] == 'cornerstone').sum())} cornerstones, "
        f"{int((table['kind'] == 'tile').sum())} tiles; tables/usage.csv; 95% Wilson "
        "intervals).</p>",
        flagged,
        "<details><summary>The usage table</summary>" + html_table(table, columns) + "</details>",
    ]


def _usage_command(row: dict, run: Run) -> str:
    """The balance search toward the usage floors, for a cornerstone (the usage goal takes
    cornerstones and tiles alike)."""
    return next_step_module.balance_command(str(row["tile_name"]), run, None, ["--goal", "usage"])


def good_chains(report: Report, run: Run) -> pl.DataFrame:
    """The run's goods and their chains (``economy.good_chains``), derived once per run."""
    found = derived(report, run)
    if "chains" not in found:
        placed, why = _placements(report, run)
        found["chains"] = economy.good_chains(found["goods"], placed, run_games(run),
                                              run.tables, why)  # fmt: skip
    return found["chains"]


def economy_field_lines(both: pl.DataFrame, here: str, there: str) -> list[str]:
    """Glance lines from each good's share of cities at the end in both fields (``share``,
    ``share_check``, ``fails_at_check``): the goods this field makes in under
    ``economy.LOW_SHARE`` of its cities while the other makes them, and the goods the other
    field fails while this one makes them (a broken chain one field never reaches)."""
    low = economy.LOW_SHARE
    only_there = both.filter((pl.col("share") < low) & (pl.col("share_check") >= low))
    only_here = both.filter((pl.col("share") >= low) & (pl.col("share_check") < low))
    lines = []
    if only_there.height:
        rows = list(only_there.iter_rows(named=True))
        lines.append(
            f"Economy per field: {here} makes "
            + ", ".join(f"{r['good_name']} in {pct(r['share'])}" for r in rows)
            + f" of its cities while {there} makes "
            + ", ".join(f"{r['good_name']} in {pct(r['share_check'])}" for r in rows)
            + f": these goods' chains are read in {there} (tables/check_goods.csv)."
        )
    if only_here.height:
        lines.append(
            f"Economy ({there}): "
            + "; ".join(
                f"{r['good_name']} in {pct(r['share_check'])} of its cities (here "
                f"{pct(r['share'])}), fails at {r['fails_at_check'] or '–'}"
                for r in only_here.iter_rows(named=True)
            )
            + "."
        )
    return lines


def _economy_check(report: Report, run: Run, check: Run) -> list[str]:
    """The economy of both fields: each good's share of cities at the end in each, and glance
    lines for the goods one field makes in under ``economy.LOW_SHARE`` of its cities while the
    other makes them (a broken chain the main field never reaches shows in the other)."""
    if derived(report, run).get("goods") is None or derived(report, check).get("goods") is None:
        return []
    end = f"share_gen{N_GENERATIONS}"
    here, there = field_name(run), field_name(check)
    mine = good_chains(report, run).select("good_name", pl.col(end).alias("share"), "fails_at")
    theirs = good_chains(report, check).select(
        "good_name", pl.col(end).alias("share_check"), pl.col("fails_at").alias("fails_at_check")
    )
    both = mine.join(theirs, on="good_name")
    report.table("check_goods", both)
    # Beside the main field's economy line, where a designer reads the economy.
    at = next((i + 1 for i, line in enumerate(report.glance) if line.startswith("Economy (")),
              len(report.glance))  # fmt: skip
    report.glance[at:at] = economy_field_lines(both, here, there)
    return [
        f"<h3>Economy in each field</h3><p>Each good's share of cities producing it at the end, "
        f"in {html.escape(here)} and in {html.escape(there)}; a share under "
        f"{pct(economy.LOW_SHARE)} fails.</p>",
        html_table(
            both,
            [
                ("good", lambda r: r["good_name"]),
                (here, lambda r: pct(r["share"])),
                (there, lambda r: pct(r["share_check"])),
                (f"fails at ({there})", lambda r: r["fails_at_check"] or "–"),
            ],
        ),
    ]


def _needed_by(row: dict) -> str:
    every, some = row["needed_by_every_option"], row["needed_by_some_option"]
    text = every or ""
    if some:
        text += f" ({some})" if text else f"({some})"
    return text or "–"


def _dominated_parts(report: Report, run: Run) -> list[str]:
    table = economy.dominated_tiles(run.tables)
    measured = derived(report, run)["tile_all"].select(
        pl.col("tile").cast(pl.Int64),
        "selected",
        "placed",
        "sell_rate",
        "sell_rate_lo",
        "sell_rate_hi",
    )
    table = table.join(measured, on="tile", how="left")
    report.table("dominated_tiles", table)
    dominated = table.filter(pl.col("dominated"))
    if dominated.height:
        names = dominated["tile_name"].to_list()
        report.glance.append(
            f"Dominated: selling beats placing {len(names)} tiles even at their best "
            f"({', '.join(names[:4])}" + (f" and {len(names) - 4} more" if len(names) > 4 else "")
            + ")."
        )  # fmt: skip
        report.findings.append(
            f"{len(names)} tiles whose whole value is coins and printed VP are worth less placed "
            f"than sold, even placed on the first turn of their generation: "
            + ", ".join(
                f"{r['tile_name']} ({r['value']} coins vs {r['sale']}; not at income "
                f"{r['income_needed']}+"
                + (f" or cost {r['max_cost']}-" if r["max_cost"] >= 0 else "")
                + ")"
                for r in dominated.iter_rows(named=True)
            )
            + "."
        )
    return [
        "<h3>Dominated tiles: when the sale beats placing</h3><p>For each generation tile "
        "whose whole value is coins and printed VP (no effects, goods, power, protection nor "
        "Neighborhoods), its value placed at its best: on the first turn of its generation, so "
        "it collects every income left (one at the end of each generation from its own), "
        "paying its cheapest option's coins with the goods at hand, printed VP counted at the "
        "end-game rate of 2 coins per VP. <i>Dominated</i>: the 5-coin sale is worth more. "
        "The last columns say at which income, or up to which cost, it would not be. Not "
        "valued: what placing it does for other tiles' effects that count its type, and the "
        f"square it takes. {dominated.height} of {table.height} such tiles are dominated; "
        "tables/dominated_tiles.csv has them all.</p>",
        html_table(
            table.filter(pl.col("dominated") | (pl.col("value") <= 2 * pl.col("sale"))),
            [
                TILE_COLUMN,
                GENERATION_COLUMN,
                ("income × incomes", lambda r: f"{r['income']} × {r['incomes']}"),
                ("coins on placement", lambda r: r["coins_on_place"]),
                ("cost", lambda r: r["cost"]),
                ("VP", lambda r: r["vp"]),
                ("value placed (coins)", lambda r: r["value"]),
                ("dominated by the sale", lambda r: "yes" if r["dominated"] else "no"),
                ("not dominated at income", lambda r: f"≥ {r['income_needed']}"),
                ("or at cost", lambda r: f"≤ {r['max_cost']}" if r["max_cost"] >= 0 else "none"),
                ("sold when selected", share_ci("sell_rate")),
                ("placed", lambda r: r["placed"] if r["placed"] is not None else "–"),
            ],
        ),
    ]


# --- Disasters --------------------------------------------------------------------------------


def _disaster_section(report: Report, run: Run) -> None:
    found = derived(report, run)
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
    parts = []
    chooser = found.get("disaster")
    if chooser is not None and chooser.height:
        victims = disasters.victim_table(run)
        table = chooser
        if victims is not None:
            table = chooser.join(victims.with_columns(pl.col("tile").cast(chooser["tile"].dtype)),
                                 on="tile", how="left")  # fmt: skip
        table = table.with_columns(
            pl.Series("levers", [disasters.levers(run, name) for name in table["tile_name"]],
                      dtype=pl.Utf8)
        )  # fmt: skip
        report.table("disaster_effects", table)
        report.add_items("disaster", table, DISASTER_METRIC)
        next_steps(report, "disaster", table, run)
        for row in table.iter_rows(named=True):
            words = _disaster_words(row, report)
            report.findings.append(words)
        report.glance.append(_glance_flags(table, "disasters (for the chooser)"))
        parts += [
            "<p>A Disaster is selected like a tile and never placed: its chooser is spared, "
            "every other seat (but the insured) pays coins or sacrifices tiles. <i>Chooser</i>: "
            "the selecting seats' win share above expected (flagged, "
            f"{html.escape(report.band_words())}, corrected across the Disasters); a negative "
            "effect means choosing it costs the chooser (the selection is not a tile for its "
            "city). <i>Victims</i>: the seats it hit, win share above expected and score lead "
            "(VP above the mean of the other seats of the game), with how they resolved it. "
            "<i>Lever</i>: a Disaster's own numbers count for nothing, so what moves it is the "
            "cost of the tiles that protect against it or insure it (<code>neom balance "
            "NAME</code> searches them).</p>",
            html_table(
                table,
                [
                    ("Disaster", lambda r: r["tile_name"]),
                    *_flag_columns(report, "chooser: win share above expected, pct-pts [95% CI]"),
                    ("victims (seats hit)", lambda r: r.get("victims") or 0),
                    (
                        "victims: win share above expected, pct-pts [95% CI]",
                        lambda r: cell_pts(
                            r.get("victim_effect"),
                            r.get("victim_effect_lo"),
                            r.get("victim_effect_hi"),
                        ),
                    ),
                    (
                        "victims: score lead (VP) [95% CI]",
                        lambda r: (
                            lead_ci("victim_lead")(r) if r.get("victim_lead") is not None else "–"
                        ),
                    ),
                    ("victims who paid", lambda r: pct(r.get("paid_share"))),
                    ("coins per payment", lambda r: num(r.get("coins_per_payment"))),
                    ("tiles per sacrifice", lambda r: num(r.get("tiles_per_sacrifice"), 2)),
                    ("lever", lambda r: r["levers"] or "–"),
                ],
            ),  # fmt: skip
        ]
    gens = range(1, scores.N_GENERATIONS + 1)
    parts += [
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


def _disaster_words(row: dict, report: Report) -> str:
    chooser = pts(row["effect"], row["effect_lo"], row["effect_hi"])
    if row["small"]:
        chooser = f"not tested (n = {row['n']} < {report.min_n})"
    text = f"Disaster {row['tile_name']}: for the chooser {chooser}"
    if row.get("flag"):
        text += f" ({row['flag']})"
    if row.get("victims"):
        text += (
            f"; for its {row['victims']} victims "
            f"{pts(row['victim_effect'], row['victim_effect_lo'], row['victim_effect_hi'])} "
            f"win share, {row['victim_lead']:+.2f} VP of score lead; they paid "
            f"{pct(row['paid_share'])} of the time"
        )
    if row.get("levers"):
        text += f"; lever: {row['levers']}"
    return text + "."


# --- game flow and scores ---------------------------------------------------------------------


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
            figures.score_distributions(
                histogram, "Final score by strategy", run.game.score_unit, count="count"
            ),
            "score distributions",
        ),
        report.figure(
            "score_breakdown",
            figures.breakdown_bars(
                summary, categories, "Mean score breakdown", run.game.score_unit
            ),
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
                SCORE_QUANTILES_COLUMN,
            ],
        ),
    ]
    report.section("scores", "Scores", parts)


# --- several runs, and the skill check ------------------------------------------------------


def _effects(report: Report, run: Run) -> dict[str, tuple[pl.DataFrame, str]]:
    """Each kind's effect table and the column its flag reads."""
    found = derived(report, run)
    out = {"cornerstone": (found["cornerstone"], "vs_median")}
    if found.get("tile") is not None:
        out["tile"] = (found["tile"], "vs_median")
    if found.get("disaster") is not None:
        out["disaster"] = (found["disaster"], "effect")
    return out


def _cell(row: dict, suffix: str, min_n: int) -> str:
    effect = row.get(f"effect{suffix}")
    if effect is None or (isinstance(effect, float) and math.isnan(effect)):
        return "–"
    n = row.get(f"n{suffix}") or 0
    if n < min_n:
        return f"({100 * effect:+.1f}, n={n})"
    flag = row.get(f"flag{suffix}") or ""
    lo = row.get(f"effect_lo{suffix}", row.get(f"lo{suffix}"))
    hi = row.get(f"effect_hi{suffix}", row.get(f"hi{suffix}"))
    return cell_pts(effect, lo, hi) + (f" {flag}" if flag else "")


def add_combined(report: Report, runs: list[Run]) -> None:
    """Cornerstone, tile and Disaster effects of every run side by side (one column per run;
    a cornerstone's against the median cornerstone, as it is flagged)."""
    for kind in KINDS:
        frames = []
        for index, run in enumerate(runs):
            found = _effects(report, run).get(kind)
            if found is None:
                continue
            table, effect = found
            keep = table.select(
                "tile_name", "n", pl.col(effect).alias("effect"),
                pl.col(f"{effect}_lo").alias("effect_lo"),
                pl.col(f"{effect}_hi").alias("effect_hi"), "flag",
            )  # fmt: skip
            frames.append(keep.rename({c: f"{c}_{index}" for c in keep.columns[1:]}))
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


# The four archetypes `make run` checks the strong field against (README: "the archetype
# field"): named so, in any seat order, so that a mark reads "weaker in the archetype field".
ARCHETYPE_FIELD = frozenset({"greedy", "builder", "merchant", "industrialist"})


def field_name(run: Run) -> str:
    """How a run's field is named (``robustness.field_name``), the archetype field by name."""
    return robustness.field_name(run, {ARCHETYPE_FIELD: "the archetype field"})


def field_words(run: Run) -> str:
    """A field's name with its strategies, once (where the fields are introduced)."""
    name = field_name(run)
    if name.startswith("the field "):
        return name
    return f"{name} ({', '.join(dict.fromkeys(run.strategy_names))})"


def _mean_score(run: Run) -> tuple[float, int]:
    sums = scores.score_summary(run)
    n = int(sums["n"].sum())
    return float((sums["total"] * sums["n"]).sum() / n) if n else math.nan, n


def _half_width(table: pl.DataFrame, effect: str) -> float:
    tested = table.filter(~pl.col("small"))
    if tested.height == 0:
        return math.nan
    return float(((tested[f"{effect}_hi"] - tested[f"{effect}_lo"]) / 2).median())


def _fields_paragraph(report: Report, run: Run, check: Run, precision: list[dict]) -> str:
    here, there = field_name(run), field_name(check)
    games, games_check = run_games(run), run_games(check)
    size = (
        f"The runs differ in size ({games:,} and {games_check:,} games), chosen for equal precision"
        if games != games_check
        else f"Both runs have {games:,} games"
    )
    widths = "; ".join(
        f"{r['kind']}s ±{100 * r['here']:.2f} here, ±{100 * r['there']:.2f} there"
        for r in precision
    )
    mean, mean_check = _mean_score(run)[0], _mean_score(check)[0]
    leads = verified_leads(check)
    strength = f"Its seats score {mean_check:.1f} VP per game on average against {mean:.1f} here. "
    if leads:
        low = min(leads, key=lambda r: r["lead"])
        high = max(leads, key=lambda r: r["lead"])
        strength += (
            f"Each of its sets beat the archetype it replaces, seated in that field, by "
            f"{low['lead']:+.3f} ({low['set']} over {low['replaces']}) to {high['lead']:+.3f} "
            f"({high['set']} over {high['replaces']}) win share (neom verify, "
            f"{leads[0]['games']:,} games per match; docs/strategies.md). "
        )
    return (
        f'<p class="fields"><b>Two fields, one catalogue.</b> This run is {html.escape(here)} '
        f"({games:,} games); the check run <code>{html.escape(shown_path(check.path))}</code> is "
        f"{html.escape(field_words(check))} ({games_check:,} games). {html.escape(strength)}"
        f"{html.escape(size)}: the median half-width of the 95% intervals of the tested "
        f"effects, in pct-pts, is {html.escape(widths)}. Every finding flagged in either field "
        f"or reversed is marked: {marks_legend(there)}. A robust finding is about the "
        "catalogue; one that vanishes, appears or reverses is about the players.</p>"
    )


def add_check(report: Report, run: Run, check: Run) -> None:
    """Do the conclusions survive skill? Every cornerstone, tile and Disaster finding of the
    main run marked against a run of another field on the same catalogue (robust, weaker,
    stronger, vanishes, appears,
    reversed: ``analysis.core.robustness``), the rank correlation of the effects, what changed,
    and the tiles this field never places that the other field does."""
    from sim.core.errors import UserError

    if run.manifest["data"].get("digest") != check.manifest["data"].get("digest"):
        raise UserError(
            f"--check {check.path}: played on another catalogue than {run.path} (digests differ)"
        )
    main, other = _effects(report, run), _effects(report, check)
    there = field_name(check)
    report.other_field = there
    rows, precision, parts = [], [], []
    for kind, (table, effect) in main.items():
        if kind not in other:
            continue
        other_table = other[kind][0]
        marked = marks(table, other_table, "tile_name", report.correction, report.level,
                       effect=effect, min_n=report.min_n)  # fmt: skip
        report.mark(kind, marked)
        report.table(f"check_{kind}s", marked)
        precision.append({"kind": kind, "here": _half_width(table, effect),
                          "there": _half_width(other_table, effect)})  # fmt: skip
        both = marked.filter(
            (pl.col("small") == False) & (pl.col("small_check") == False)  # noqa: E712
        )  # fmt: skip
        rho = spearman_interval(both["effect"].to_numpy(), both["effect_check"].to_numpy())
        rows.append({"kind": kind, **rho})
        # A flag of the other field only: its next step and links come from that run.
        only_there = marked.filter((pl.col("flag") == "") & (pl.col("flag_check") != ""))
        next_steps(report, kind, other_table, check, effect=effect,
                   names=only_there["tile_name"].to_list())  # fmt: skip
        _add_links(report, kind, other_table.filter(
            pl.col("tile_name").is_in(only_there["tile_name"].to_list())), check)  # fmt: skip
        changed = counted_rows(marked)
        count = count_marks(changed.iter_rows(named=True))
        report.findings.append(
            f"Skill check ({kind}s, vs {check.path.name}): Spearman "
            f"{num(rho['rho'], 2)} [{num(rho['lo'], 2)}, {num(rho['hi'], 2)}] over "
            f"{rho['n']} tested in both; of the {changed.height} flagged in either field or "
            f"reversed: {counts_words(count, there)}."
        )
        parts += [
            f"<h3>{kind.capitalize()}s</h3><p>Spearman rank correlation of the effects: "
            f"{num(rho['rho'], 2)} [{num(rho['lo'], 2)}, {num(rho['hi'], 2)}] over {rho['n']} "
            f"{kind}s tested in both runs. Flagged in either field, or reversed: "
            f"{changed.height} ({html.escape(counts_words(count, there))}).</p>",
            html_table(
                changed,
                [
                    (kind, lambda r: r["tile_name"]),
                    ("robustness", lambda r: mark_words(r["robustness"], there)),
                    ("what changed", lambda r: r["why"]),
                    ("this field, pct-pts [95% CI]", lambda r: _cell(r, "", report.min_n)),
                    (f"{there}, pct-pts [95% CI]", lambda r: _cell(r, "_check", report.min_n)),
                ],
            ),  # fmt: skip
        ]
    report.fields_html = _fields_paragraph(report, run, check, precision)
    intro = [
        f"<p>The findings of this run ({html.escape(field_name(run))}) beside "
        f"<code>{html.escape(shown_path(check.path))}</code>, "
        f"{html.escape(field_words(check))}, on the same catalogue: "
        f"{run_games(run):,} and {run_games(check):,} games"
        + (" (the runs differ in size)" if run_games(run) != run_games(check) else "")
        + f". Marks: {marks_legend(there)}; significant: flagged, or "
        f"different from zero after the {html.escape(report.label.split(' adjusted')[0])} "
        "correction across the items of the kind. A cornerstone is compared against each "
        "field's median cornerstone, as it is flagged. Rank correlation: Spearman over the "
        "items tested in both runs, 95% interval from Fisher's z (Bonett-Wright variance).</p>",
        html_table(
            pl.DataFrame(precision),
            [
                ("kind", lambda r: r["kind"]),
                ("median 95% half-width here, pct-pts", lambda r: f"±{100 * r['here']:.2f}"),
                (f"in {there}, pct-pts", lambda r: f"±{100 * r['there']:.2f}"),
            ],
        ),
    ]
    parts = intro + parts
    if run.events is not None and check.events is not None:
        dead = derived(report, run)["dead"]
        placed_other = derived(report, check)["tile_all"].select(
            "tile_name", pl.col("placed").alias("placed_check")
        )
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
                    TILE_COLUMN,
                    ("why never placed here", lambda r: r["why"]),
                    ("placed by the other field", lambda r: r["placed_check"]),
                    ("per game", lambda r: f"{r['placed_check_per_game']:.3f}"),
                ],
            ),
        ]
    parts += _economy_check(report, run, check)
    report.table("check_correlation", pl.DataFrame(rows))
    report.section("check", "Robustness: do the conclusions survive skill?", parts)


# --- what to change first: every next step, ranked -------------------------------------------


def _item_steps(report: Report, run: Run, check: Run | None) -> list[dict]:
    """The flagged (or reversed) pooled findings of cornerstones, tiles and Disasters that
    have a next step, with their VP, mark and robustness weight."""
    from analysis.core.report import ranked

    ids = {}
    for each in (run, check):
        if each is None:
            continue
        for kind, (table, _) in _effects(report, each).items():
            for name, tile in table.select("tile_name", "tile").iter_rows():
                ids.setdefault((kind, str(name)), int(tile))
    out = []
    for item in ranked(report):
        if item["kind"] not in KINDS or not item.get("next_step"):
            continue
        check_side = item.get("check") or {}
        flagged_here = bool(item["flag"])
        side = item if flagged_here or not check_side else check_side
        flag = item["flag"] or check_side.get("flag") or ""
        vp = item.get("vp_equivalent")
        mark = item.get("robustness")
        # The item first, then its kind and mark: a designer scans the list for names.
        rest = item["next_step"].removeprefix("Next step: ").removeprefix(item["name"]).lstrip()
        there = field_name(check) if check is not None else ""
        lead = f"{item['name']} ({item['kind']}" + (f", {mark_words(mark, there)})" if there
                                                     and mark else ")")  # fmt: skip
        out.append(
            {
                "kind": item["kind"],
                "name": item["name"],
                "tile": ids.get((item["kind"], item["name"]), -1),
                "direction": flag or ("strong" if (side.get("effect") or 0) > 0 else "weak"),
                "effect": side.get("effect"),
                "lo": side.get("lo"),
                "hi": side.get("hi"),
                "vp": math.nan if vp is None else float(vp),
                "vp_basis": item.get("vp_basis", next_step_module.BASIS_LEAD),
                "mark": mark,
                "weight": next_step_module.ROBUSTNESS_WEIGHT.get(mark, 0.5),
                "text": f"{lead} {rest}",
                "lead": (item["name"], item["kind"]),
                "rest": rest,
            }
        )
    return out


def _group_steps(report: Report, run: Run, singles: list[dict]) -> tuple[list[dict], list[dict]]:
    """Tile flags that share a tag and a direction, as one systemic step per group; the
    single steps left."""
    tiles_only = [s for s in singles if s["kind"] == "tile" and s["tile"] >= 0
                  and s["effect"] is not None and s["lo"] is not None]  # fmt: skip
    groups, _ = next_step_module.group_flags(tiles_only, run.tables)
    grouped = {id(m) for g in groups for m in g["members"]}
    steps = []
    for group in groups:
        members = group["members"]
        summary = next_step_module.group_summary(members)
        words = "too strong" if group["direction"] == "strong" else "too weak"
        names = ", ".join(m["name"] for m in members)
        vp = summary["vp"]
        command = (
            "neom balance --all --goals tiles --out balance/"
            + group["tag"]
            + " "
            + shlex.join(next_step_module.field_options(run))
        )
        steps.append(
            {
                "kind": "group",
                "name": f"{len(members)} {group['tag']} tiles {words}",
                "members": names,
                "effect": summary["effect"],
                "lo": summary["lo"],
                "hi": summary["hi"],
                "vp": vp,
                "expected_vp": abs(vp) * len(members) if math.isfinite(vp) else math.nan,
                "items": len(members),
                "vp_basis": members[0]["vp_basis"],
                "weight": summary["weight"],
                "mark": None,
                "text": (
                    f"Systemic: {len(members)} {group['tag']} tiles flagged {group['direction']} "
                    f"({names}): mean {pts(summary['effect'], summary['lo'], summary['hi'])} "
                    f"against their generation's median tile"
                    + (f", about {abs(vp):.1f} VP each" if math.isfinite(vp) else "")
                    + f". Next step: move them together, not one by one: `{command}` (a "
                    "whole-catalogue pass on the tile goals; each member's own command is in "
                    "findings.json)."
                ),
            }
        )
    left = [s for s in singles if id(s) not in grouped]
    for s in left:
        s["expected_vp"] = abs(s["vp"]) if math.isfinite(s["vp"]) else math.nan
    return steps, left


def _systemic_steps(report: Report, run: Run, check: Run | None) -> list[dict]:
    """Sale-dominated tiles, cornerstones drafted and never built, goods no city makes."""
    steps = []
    options = next_step_module.field_options(run)
    found = derived(report, run)
    if run.tables is not None and found.get("tile_all") is not None:
        dominated = economy.dominated_tiles(run.tables).filter(pl.col("dominated"))
        selected = found["tile_all"].select(pl.col("tile").cast(pl.Int64), "selected")
        dominated = dominated.join(selected, on="tile", how="left").filter(
            pl.col("selected").fill_null(0) > 0
        )
        if dominated.height:
            short = [(r["sale"] - r["value"]) / economy.MONEY_PER_VP
                     for r in dominated.iter_rows(named=True)]  # fmt: skip
            top = dominated.sort("selected", descending=True).row(0, named=True)
            command = (
                f"neom balance {shlex.quote(top['tile_name'])} "
                f"{shlex.join(options + ['--lever', 'income'])}"
            )
            steps.append(
                {
                    "kind": "dominated",
                    "name": f"{dominated.height} tiles worth less placed than sold",
                    "members": ", ".join(dominated["tile_name"].to_list()),
                    "vp": sum(short) / len(short),
                    "expected_vp": sum(short),
                    "items": dominated.height,
                    "vp_basis": "VP short of the sale (catalogue arithmetic)",
                    "weight": 1.0,
                    "mark": None,
                    "text": (
                        f"Systemic: selling beats placing {dominated.height} tiles dealt in "
                        "this run even at their best ("
                        + ", ".join(dominated["tile_name"].to_list()[:6])
                        + (" ..." if dominated.height > 6 else "")
                        + f"), {sum(short):.1f} VP short of the sale in all. Next step: raise "
                        "their income or lower their cost to the figures of "
                        f"tables/dominated_tiles.csv; the most selected first: `{command}`."
                    ),
                }
            )
    cs = found["cornerstone"]
    never = cs.filter((pl.col("drafted") > 0) & (pl.col("placed") == 0))
    if never.height:
        built_there = set()
        if check is not None:
            other = derived(report, check)["cornerstone"]
            built_there = set(other.filter(pl.col("placed") > 0)["tile_name"].to_list())
        top = never.sort("drafted", descending=True).row(0, named=True)
        names = never["tile_name"].to_list()
        lever = shlex.join(options + ["--lever", "cost"])
        command = f"neom balance {shlex.quote(top['tile_name'])} {lever}"
        per_vp = next_step_module.win_share_per_vp(run)
        vps = [abs(v) / per_vp for v in never["vs_median"].to_list()
               if v is not None and math.isfinite(v) and per_vp and per_vp > 0]  # fmt: skip
        steps.append(
            {
                "kind": "unbuilt",
                "name": f"{never.height} cornerstones drafted, never built",
                "members": ", ".join(names),
                "vp": sum(vps) / len(vps) if vps else math.nan,
                "expected_vp": sum(vps) if vps else math.nan,
                "items": never.height,
                "vp_basis": next_step_module.BASIS_LEAD,
                "weight": 1.0 if check is not None and not (set(names) & built_there) else 0.5,
                "mark": None,
                "text": (
                    f"Systemic: {never.height} cornerstones are drafted and never built "
                    f"({', '.join(names)})"
                    + (
                        f"; {len(set(names) & built_there)} of them are built in "
                        f"{field_name(check)}"
                        if check is not None
                        else ""
                    )
                    + f". Next step: make them buildable (cost, goods): `{command}`."
                ),
            }
        )
    for each in (run, check):
        if each is None or derived(report, each).get("goods") is None:
            continue
        end = f"share_gen{N_GENERATIONS}"
        failing = good_chains(report, each).filter(pl.col(end) < economy.LOW_SHARE)
        if each is check:
            # A good both fields fail is the main field's step already.
            mine = good_chains(report, run).filter(pl.col(end) < economy.LOW_SHARE)
            failing = failing.filter(~pl.col("good_name").is_in(mine["good_name"].to_list()))
        if failing.height == 0:
            continue
        low = set()
        if check is not None:
            other = good_chains(report, check if each is run else run)
            low = set(other.filter(pl.col(end) < economy.LOW_SHARE)["good_name"].to_list())
        # The scarcest good's failing link first: the command targets it.
        failing = failing.sort(end)
        # A chain the main field never completes is apart: every tile needing its good is out
        # of the game, so it is ranked first (its VP is not measured).
        dead = failing.filter(pl.col(end) < DEAD_SHARE) if each is run else failing[:0]
        rare = failing.filter(~pl.col("good_name").is_in(dead["good_name"].to_list()))
        for part, is_dead in ((dead, True), (rare, False)):
            if part.height:
                steps.append(_goods_step(part, each, check, is_dead, low, end))
    return steps


# A good made by fewer of the main field's cities than this at the end is a dead chain (the
# planted Gold break: 0.0%; the strong field makes every good of v2 in >= 2.4% of its cities).
DEAD_SHARE = 0.01


def _goods_step(failing: pl.DataFrame, each: Run, check: Run | None, dead: bool, low: set,
                end: str) -> dict:  # fmt: skip
    """One step for goods made by too few cities of ``each``'s field (``dead``: by almost
    none of the main field's): where their chains fail first and the goods pass that
    repairs the scarcest (``neom balance --all --goals goods --items GOOD``)."""
    names = set(each.tables.tile_names) if each.tables is not None else set()
    first = [w for w in dict.fromkeys((f or "").split(":")[0] for f in failing["fails_at"])
             if w in names]  # fmt: skip
    good = failing["good_name"][0]
    command = (
        "neom balance --all --goals goods --items "
        + shlex.quote(good)
        + f" --out balance/{good.lower().replace(' ', '-')} "
        + shlex.join(next_step_module.field_options(each))
    )
    goods = ", ".join(f"{r['good_name']} {pct(r[end])}" for r in failing.iter_rows(named=True))
    in_both = check is not None and all(g in low for g in failing["good_name"].to_list())
    why = f"; their chains fail first at {', '.join(first[:5])}" if first else ""
    if dead:
        fails = (failing["fails_at"][0] or "").strip()
        text = (
            f"Dead chain: almost no city of {field_name(each)} makes "
            + (f"{good} ({goods})" if failing.height == 1 else f"these goods ({goods})")
            + (f"; {good} fails at {fails}" if fails else why)
            + ". Every tile that needs them is out of the game. Next step, the scarcest first: "
            f"`{command}` (a pass on the goods goal: producers' costs, requirements; "
            "tables/goods.csv)."
        )
    else:
        text = (
            f"Systemic: {failing.height} goods are made by fewer than "
            f"{pct(economy.LOW_SHARE)} of the cities of {field_name(each)} ({goods})"
            + (" and of the other field" if in_both else "")
            + why
            + f". Next step: `{command}` (tables/goods.csv, tables/check_goods.csv)."
        )
    return {
        "kind": "dead_chain" if dead else "goods",
        "name": f"dead chain: {failing.height} goods" if dead else f"{failing.height} goods "
        f"made by under {pct(economy.LOW_SHARE)} of the cities of {field_name(each)}",
        "members": goods,
        "vp": math.nan,
        # Not measured in VP: ranked as 1 VP per failing good (a dead chain: first).
        "expected_vp": float(failing.height),
        "items": failing.height,
        "first": dead,
        "vp_basis": "dead chain, ranked first" if dead
        else "goods, not measured in VP (ranked as 1 VP each)",
        "size": "dead chain, ranked first" if dead else f"{failing.height} goods, not measured "
        "in VP (ranked as 1 VP each)",
        "weight": 1.0 if check is None or in_both or dead else 0.5,
        "mark": None,
        "text": text,
    }  # fmt: skip


def add_next_steps(report: Report, run: Run, check: Run | None = None) -> None:
    """Every next step ranked by expected VP x robustness weight (``next_step``): groups of
    tile flags sharing a tag and a direction, the systemic problems, then the single items;
    the catalogue copied into the report folder for the commands; tables/next_steps.csv."""
    for each in (run, check):
        if each is not None:
            next_step_module.copy_catalogue(each, report.out)
    singles = _item_steps(report, run, check)
    groups, singles = (
        _group_steps(report, run, singles) if run.tables is not None else ([], singles)
    )
    steps = next_step_module.rank_steps(groups + _systemic_steps(report, run, check) + singles)
    write_steps(report, steps)
    cmd = _reproduce(run, check)
    report.reproduce = cmd


def _reproduce(run: Run, check: Run | None) -> str:
    """The commands that reproduce the report's figures, from the report folder."""
    lines = []
    for each, name in ((run, "main"), (check, "check")):
        if each is None:
            continue
        options = next_step_module.field_options(each)
        lines.append(f"neom simulate {shlex.join(options)} --events --out runs/{name}")
    report_cmd = "neom report runs/main" + (" --check runs/check" if check is not None else "")
    return "; ".join(lines + [report_cmd + " --out reports/main"])
