"""Tangram City's skill check (``neom report RUN --check RUN2``, the ``add_check`` hook): every
finding of the run marked against the same finding in a run of another field on the same tile
set and rules, with the generic marks of ``analysis.core.robustness`` (robust, weaker /
stronger, vanishes / appears, reversed).

The findings compared, one kind each (``analysis.tangram.findings``):

- ``tile``: what placing the tile is worth against the median tile (``vs_median``), as flagged;
- ``rule``: a rule's reach, compared as the share of seats that reach it minus
  :data:`~analysis.tangram.tables.DEAD_SHARE` (1%), so that its flag ("dead") lies on the
  negative side: a rule dead in one field and reached by significantly more than 1% of seats in
  the other is *reversed*, one dead in one field and about 1% in the other *vanishes* (or
  *appears*). Its standard error is the Wilson interval's half-width over 1.96 (never 0, even
  when no seat reaches it); findings.json keeps the reach itself;
- ``rule effect``: what reaching the rule is worth (reachers minus the others, same game).

Per-strategy tile findings are not marked (the fields' strategies differ: the strong field is
the tuned planner set of the player count in every seat), as NEOM's are not.
"""

import html
import math

import polars as pl

from analysis.core.report import cell_pts, html_table, pct, pct_interval, shown_path
from analysis.core.robustness import (
    count_marks,
    counted_rows,
    counts_words,
    field_name,
    mark_words,
    marks,
    marks_legend,
    named_field,
)
from analysis.core.stats import Z95, spearman_interval
from analysis.core.strategies import run_games
from analysis.tangram import findings, tables

# kind -> (what its items are called in the section, the effect's unit)
KINDS = {
    "tile": ("Tiles: placing vs declining, against the median tile", "pct-pts"),
    "rule": ("Rules reached (dead rules)", "share"),
    "rule effect": ("What reaching a rule is worth", "pct-pts"),
}
# The share a rule's reach is compared against (its flag, "dead", lies below it).
REACH_SHIFT = tables.DEAD_SHARE


def finding_tables(report, run) -> dict[str, tuple[pl.DataFrame, str, str]]:
    """Per kind: the run's effect table in the shape ``robustness.marks`` reads, its key and
    its effect column."""
    settings = findings.report_settings(report)
    rules = findings.rule_findings(run, **settings)
    low, high = pl.col("reached_rate_lo"), pl.col("reached_rate_hi")
    reach = rules.select(
        "rule", "n", "small",
        pl.when(pl.col("dead")).then(pl.lit("dead")).otherwise(pl.lit("")).alias("flag"),
        pl.col("n").alias("clusters"),  # seats: the Wilson interval's sample
        (pl.col("reached_rate") - REACH_SHIFT).alias("effect"),
        (low - REACH_SHIFT).alias("effect_lo"),
        (high - REACH_SHIFT).alias("effect_hi"),
        ((high - low) / (2 * Z95)).alias("effect_se"),
    )  # fmt: skip
    effects = rules.filter(pl.col("effect").is_not_null()).select(
        "rule", pl.col("effect_n").alias("n"), pl.col("effect_small").alias("small"), "flag",
        pl.col("effect_clusters").alias("clusters"), "effect", "effect_lo", "effect_hi",
        "effect_se",
    )  # fmt: skip
    return {
        "tile": (findings.tile_findings(run, **settings), "tile_name", "vs_median"),
        "rule": (reach, "rule", "effect"),
        "rule effect": (effects, "rule", "effect"),
    }


def _reach_back(marked: pl.DataFrame) -> pl.DataFrame:
    """A reach's marks with the shares themselves (findings.json and the page show them)."""
    shifted = [c + s for c in ("effect", "lo", "hi") for s in ("", "_check")]
    return marked.with_columns(pl.col(c) + REACH_SHIFT for c in shifted)


def mark_findings(report, run, check) -> dict[str, pl.DataFrame]:
    """Per kind, the marks table of the run's findings against the check run's
    (``robustness.marks``, keyed by ``name``); the report's findings.json items get their
    marks (``Report.mark``)."""
    main, other = finding_tables(report, run), finding_tables(report, check)
    out = {}
    for kind, (table, key, effect) in main.items():
        marked = marks(table, other[kind][0], key, report.correction, report.level,
                       effect=effect, min_n=report.min_n)  # fmt: skip
        if kind == "rule":
            marked = _reach_back(marked)
        marked = marked.rename({key: "name"})
        report.mark(kind, marked, "name")
        out[kind] = marked
    return out


def _cell(row: dict, suffix: str, unit: str, min_n: int) -> str:
    effect = row.get(f"effect{suffix}")
    if effect is None or (isinstance(effect, float) and math.isnan(effect)):
        return "–"
    lo, hi = row.get(f"lo{suffix}"), row.get(f"hi{suffix}")
    text = pct_interval(effect, lo, hi) if unit == "share" else cell_pts(effect, lo, hi)
    n = row.get(f"n{suffix}") or 0
    if n < min_n:
        return f"({text}, n={n})"
    flag = row.get(f"flag{suffix}") or ""
    return f"{text} {flag}" if flag else text


def _mean_score(run) -> float:
    """The mean final score of the run's non-random seats (random apart, as the findings)."""
    by_strategy = tables.score_distribution(run, ("n_players", "strategy_name"))
    seats = by_strategy.filter(~tables.is_random(pl.col("strategy_name")))
    n = int(seats["n"].sum()) if seats.height else 0
    return float((seats["total"] * seats["n"]).sum() / n) if n else math.nan


def _strong_description(run) -> str:
    """What the shipped strong field is, in its file's words (its tuned sets, verified)."""
    from sim.core.strategies import shipped_file

    return shipped_file(run.game.strategies).fields["strong"].description


def _fields_paragraph(run, check) -> str:
    here, there = field_name(run), field_name(check)
    games, games_check = run_games(run), run_games(check)
    strong = "strong" in (named_field(check), named_field(run))
    not_tuned = f" Tangram City's strong field: {_strong_description(run)}." if strong else ""
    return (
        f"<p><b>Two fields.</b> This run is {html.escape(here)} ({games:,} games); the check run "
        f"<code>{html.escape(shown_path(check.path))}</code> is {html.escape(there)} "
        f"({games_check:,} games), on the same tile set and rules. Its seats (random apart) score "
        f"{_mean_score(check):.1f} points a game on average against {_mean_score(run):.1f} "
        f"here.{html.escape(not_tuned)} Every finding flagged in either field or reversed is "
        f"marked: {marks_legend(there)}.</p>"
    )


def add_check(report, run, check) -> None:
    """Do the conclusions survive skill? Every tile, rule and rule-effect finding of the run
    marked against the check run's (``mark_findings``), a section listing the findings
    flagged in either field or reversed with both fields' figures, and a headline line per
    kind; ``tables/check_<kind>s.csv`` keeps every item's marks."""
    there = field_name(check)
    report.other_field = there
    marked = mark_findings(report, run, check)
    report.fields_html = _fields_paragraph(run, check)
    parts = [
        f"<p>The findings of this run ({html.escape(field_name(run))}) beside "
        f"<code>{html.escape(shown_path(check.path))}</code>, {html.escape(there)}: "
        f"{run_games(run):,} and {run_games(check):,} games. Marks: {marks_legend(there)}; "
        "significant: flagged, or different from zero after the "
        f"{html.escape(report.label.split(' adjusted')[0])} correction across the items of the "
        "kind. A tile is compared against each field's median tile, as it is flagged; a rule's "
        f"reach as the share of seats reaching it minus {REACH_SHIFT:.0%} (dead: below), so a "
        "rule dead in one field and reached by significantly more in the other is "
        "reversed.</p>"
    ]
    for kind, frame in marked.items():
        report.table(f"check_{kind.replace(' ', '_')}s", frame)
        title, unit = KINDS[kind]
        counted = counted_rows(frame)
        count = count_marks(counted.iter_rows(named=True))
        words = counts_words(count, there)
        rank = _rank_words(frame) if kind == "tile" else ""
        report.findings.append(
            f"Skill check ({kind}s, vs {check.path.name}): {rank}of the {counted.height} flagged "
            f"in either field or reversed: {words}."
        )
        parts.append(
            f"<h3>{html.escape(title)}</h3><p>{frame.height} compared; {html.escape(rank)}"
            f"flagged in either field, or reversed: {counted.height} ({html.escape(words)}).</p>"
        )
        if counted.height == 0:  # no empty table under the counts
            continue
        parts += [
            html_table(
                counted,
                [
                    (kind, lambda r: r["name"]),
                    ("robustness", lambda r: mark_words(r["robustness"], there)),
                    ("what changed", lambda r: r["why"]),
                    ("this field [95% CI]", lambda r, u=unit: _cell(r, "", u, report.min_n)),
                    (f"{there} [95% CI]", lambda r, u=unit: _cell(r, "_check", u, report.min_n)),
                ],
            ),  # fmt: skip
        ]
    parts.append(
        f"<p>Reach of each rule in both fields: {_reach_words(marked['rule'], there)}.</p>"
    )
    report.section("check", "Robustness: do the conclusions survive skill?", parts)


def _rank_words(frame: pl.DataFrame) -> str:
    """Spearman rank correlation of the effects tested in both fields, in words."""
    both = frame.filter((pl.col("small") == False) & (pl.col("small_check") == False))  # noqa: E712
    rho = spearman_interval(both["effect"].to_numpy(), both["effect_check"].to_numpy())
    if not math.isfinite(rho["rho"]):
        return ""
    return (
        f"Spearman rank correlation of the effects {rho['rho']:.2f} [{rho['lo']:.2f}, "
        f"{rho['hi']:.2f}] over the {rho['n']} tested in both fields; "
    )


def _reach_words(frame: pl.DataFrame, there: str) -> str:
    return "; ".join(
        f"{html.escape(r['name'])} {pct(r['effect'])} here, {pct(r['effect_check'])} in "
        f"{html.escape(there)}"
        for r in frame.iter_rows(named=True)
        if r["effect"] is not None and r["effect_check"] is not None
    )
