"""The balance report of a run: ``index.html`` (self-contained: inline CSS, figures embedded as
base64 PNG), ``summary.md``, ``figures/*.png`` and ``tables/*.csv``."""

import base64
import html
import math
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from analysis.core import figures, seats, strategies
from analysis.core.load import SCORE_COLUMNS, Run, open_run
from analysis.neom import cornerstones, scores, tiles

TILE_TABLE_ROWS = 25  # the HTML shows the most extreme tiles; the CSV has them all

CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 1rem auto; padding: 0 1rem;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 2px solid #ccc; margin-top: 2.2rem; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.6rem 0; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.45rem; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
.notice { background: #fff3cd; border: 2px solid #c4a000; padding: 0.6rem 1rem; font-weight: bold; }
.findings li { margin: 0.25rem 0; } .flag-strong { color: #cc0000; font-weight: bold; }
.flag-weak { color: #3465a4; font-weight: bold; } img { max-width: 100%; }
.note { color: #555; font-size: 0.9rem; } nav a { margin-right: 0.8rem; }
"""


def pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def pct_interval(x, lo, hi) -> str:
    if x is None or math.isnan(x):
        return "–"
    if lo is None or math.isnan(lo):
        return pct(x)
    return f"{100 * x:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def num(x, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def num_interval(x, lo, hi, digits: int = 1) -> str:
    if x is None or math.isnan(x):
        return "–"
    if lo is None or math.isnan(lo):
        return num(x, digits)
    return f"{x:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def share_ci(column: str):
    """Cell: the share in ``column`` with its interval columns, in percent."""
    return lambda r: pct_interval(r[column], r[f"{column}_lo"], r[f"{column}_hi"])


def lead_ci(column: str):
    """Cell: the signed mean in ``column`` with its interval columns."""
    return lambda r: num_interval(r[column], r[f"{column}_lo"], r[f"{column}_hi"])


def html_table(frame: pl.DataFrame, columns: list[tuple[str, object]]) -> str:
    """``columns``: (header, function of a row dict -> text) pairs."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h, _ in columns)
    rows = []
    for row in frame.iter_rows(named=True):
        cells = []
        for _, cell in columns:
            text = str(cell(row))
            flag = row.get("flag")
            css = f' class="flag-{flag}"' if flag and text == flag else ""
            cells.append(f"<td{css}>{html.escape(text)}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


@dataclass
class Report:
    out: Path
    sections: list[tuple[str, str, list[str]]] = field(default_factory=list)  # id, title, html
    findings: list[str] = field(default_factory=list)

    def table(self, name: str, frame: pl.DataFrame) -> None:
        frame.write_csv(self.out / "tables" / f"{name}.csv")

    def figure(self, name: str, fig, alt: str) -> str:
        data = figures.png_bytes(fig)
        (self.out / "figures" / f"{name}.png").write_bytes(data)
        encoded = base64.b64encode(data).decode("ascii")
        return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'

    def section(self, key: str, title: str, parts: list[str]) -> None:
        self.sections.append((key, title, parts))


def _identity(run: Run) -> list[tuple[str, str]]:
    m = run.manifest
    strategy_text = ", ".join(
        f"{s['name']}" + (f" ({s['spec']})" if s.get("spec") not in (None, s["name"]) else "")
        for s in m["strategies"]
    )
    catalog = m["catalog"]
    return [
        ("run", str(run.path)),
        ("catalogue", f"{run.catalog_name}" + (" (RECONSTRUCTED)" if run.reconstructed else "")),
        ("catalogue digest", str(catalog.get("digest", ""))[:16]),
        ("variant", str(m["variant"])),
        ("players", str(m["players"])),
        ("strategies", strategy_text),
        ("seats", str(m.get("seats", ""))),
        ("games", str(m["games"])),
        ("seed", str(m["seed"])),
        ("rules", str(m.get("rules", ""))),
    ]


def _strategy_section(report: Report, run: Run) -> None:
    shares = strategies.win_shares(run)
    pairs = strategies.head_to_head(run)
    rating = strategies.ratings(run, pairs)
    report.table("strategies", shares)
    report.table("head_to_head", pairs)
    report.table("ratings", rating)
    for (n_players,), part in shares.partition_by("n_players", as_dict=True).items():
        best = part.sort("share", descending=True).row(0, named=True)
        lead = "" if part.height > 1 else " (the only strategy: mirror games)"
        report.findings.append(
            f"{best['strategy_name']} wins {share_ci('share')(best)} of {n_players}-player "
            f"games{lead} (fair share {pct(best['fair'])})."
        )
    parts = [
        "<p>Win share: a sole win counts 1, a k-way shared win 1/k. Intervals are 95% Wilson.</p>",
        html_table(
            shares,
            [
                ("players", lambda r: r["n_players"]),
                ("strategy", lambda r: r["strategy_name"]),
                ("seats", lambda r: r["n"]),
                (
                    "win share [95% CI]",
                    share_ci("share"),
                ),
                ("fair share", lambda r: pct(r["fair"])),
                ("mean score", lambda r: num(r["mean_score"])),
            ],
        ),
        report.figure(
            "strategy_win_share",
            figures.grouped_bars(
                shares,
                "n_players",
                "strategy_name",
                "share",
                "Win share by strategy (95% CI; dashes: fair share)",
                "win share (fraction of games)",
                reference="fair",
            ),
            "win share by strategy",
        ),
    ]
    if pairs.height:
        names = sorted(set(run.strategy_names) | set(pairs["a"].to_list()))
        parts += [
            "<h3>Head to head</h3><p>Share of meetings in the same game where A ranks above B "
            "(ties 1/2) and A's mean score lead, each with mean &plusmn; 1.96 standard errors "
            "over games. All player counts pooled.</p>",
            report.figure(
                "strategy_matrix",
                figures.heat_map(pairs, names, "Head to head: A ranks above B"),
                "strategy matrix",
            ),
            html_table(
                pairs,
                [
                    ("A", lambda r: r["a"]),
                    ("B", lambda r: r["b"]),
                    ("games", lambda r: r["games"]),
                    (
                        "A above B [95% CI]",
                        share_ci("share"),
                    ),
                    (
                        "score lead (VP) [95% CI]",
                        lambda r: num_interval(
                            r["score_diff"], r["score_diff_lo"], r["score_diff_hi"]
                        ),
                    ),
                ],
            ),
            "<h3>Rating</h3><p>Bradley-Terry fit on all pairwise meetings, in Elo points "
            "(+400 = 10 to 1 odds). No interval: read the head-to-head table for uncertainty.</p>",
            html_table(
                rating,
                [
                    ("strategy", lambda r: r["strategy_name"]),
                    ("rating", lambda r: num(r["rating"], 0)),
                    ("P(above an average strategy)", lambda r: pct(r["p_beat_average"])),
                    ("comparisons", lambda r: f"{r['comparisons']:.0f}"),
                ],
            ),
        ]
    report.section("strategies", "Strategies", parts)


def _seat_section(report: Report, run: Run) -> None:
    shares = seats.seat_shares(run)
    balance = seats.balance(run)
    report.table("seats", shares)
    report.table("seat_balance", balance)
    for row in balance.iter_rows(named=True):
        if row["n_players"] > 1:
            report.findings.append(
                f"Seat balance {row['balance']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}] in "
                f"{row['n_players']}-player games (best seat {row['best_seat']}, "
                f"worst seat {row['worst_seat']})."
            )
    parts = [
        "<p>Seat balance = 1 - (largest gap between two seats' win shares); 1 is perfectly "
        "even. Its interval is a bootstrap over games; sampling noise alone keeps it below 1.</p>",
        html_table(
            balance,
            [
                ("players", lambda r: r["n_players"]),
                ("games", lambda r: r["games"]),
                (
                    "balance [95% CI]",
                    lambda r: f"{r['balance']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]",
                ),
                ("best seat", lambda r: r["best_seat"]),
                ("worst seat", lambda r: r["worst_seat"]),
            ],
        ),
        report.figure(
            "seat_win_share",
            figures.grouped_bars(
                shares,
                "n_players",
                "seat",
                "share",
                "Win share by seat (95% CI; dashes: fair share)",
                "win share (fraction of games)",
                reference="fair",
            ),
            "win share by seat",
        ),
        html_table(
            shares,
            [
                ("players", lambda r: r["n_players"]),
                ("seat", lambda r: r["seat"]),
                (
                    "win share [95% CI]",
                    share_ci("share"),
                ),
                ("mean score", lambda r: num(r["mean_score"])),
            ],
        ),
    ]
    report.section("seats", "Seats", parts)


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


def _cornerstone_section(report: Report, run: Run, method: str, level: float, label: str) -> None:
    table = cornerstones.cornerstone_table(run, method, level)
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


def _tile_section(report: Report, run: Run, method: str, level: float, label: str) -> None:
    table = tiles.tile_table(run, method, level)
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


def _html(run: Run, report: Report) -> str:
    notice = ""
    if run.reconstructed:
        notice = (
            '<p class="notice">RECONSTRUCTED catalogue: the tile data behind this report is a '
            "reconstruction, not the printed game. Findings about named tiles describe the "
            "reconstruction.</p>"
        )
    identity = html_table(
        pl.DataFrame(
            {"key": [k for k, _ in _identity(run)], "value": [v for _, v in _identity(run)]}
        ),
        [("", lambda r: r["key"]), ("", lambda r: r["value"])],
    )
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in report.findings)
    nav = "".join(f'<a href="#{key}">{html.escape(title)}</a>' for key, title, _ in report.sections)
    body = "".join(
        f'<h2 id="{key}">{html.escape(title)}</h2>' + "".join(parts)
        for key, title, parts in report.sections
    )
    title = f"NEOM balance report: {run.catalog_name}, {run.manifest['games']} games"
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        f'<h1>{html.escape(title)}</h1>{notice}<section id="identity">{identity}</section>'
        f'<h2 id="findings">Headline findings</h2><ul class="findings">{findings}</ul>'
        f"<nav>{nav}</nav>{body}</body></html>"
    )


def _summary_md(run: Run, report: Report) -> str:
    lines = [f"# NEOM balance report: {run.catalog_name}", ""]
    if run.reconstructed:
        lines += ["**RECONSTRUCTED catalogue: findings describe the reconstruction.**", ""]
    lines += [f"- {key}: {value}" for key, value in _identity(run)]
    lines += ["", "## Headline findings", ""] + [f"- {f}" for f in report.findings]
    lines += ["", "Tables: `tables/*.csv`; figures: `figures/*.png`; full report: `index.html`."]
    return "\n".join(lines) + "\n"


def build_report(run, out, correction: str = "bh", level: float = 0.05) -> Path:
    """Analyse the run folder ``run`` and write the report into ``out``; returns index.html."""
    run = open_run(run)
    out = Path(out)
    for folder in ("figures", "tables"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    report = Report(out)
    method_name = {"bh": "Benjamini-Hochberg", "holm": "Holm"}[correction]
    label = f"{method_name} adjusted p < {level:g}"
    _strategy_section(report, run)
    _seat_section(report, run)
    _cornerstone_section(report, run, correction, level, label)
    _tile_section(report, run, correction, level, label)
    _score_section(report, run)
    _disaster_section(report, run)
    (out / "summary.md").write_text(_summary_md(run, report), encoding="utf-8")
    index = out / "index.html"
    index.write_text(_html(run, report), encoding="utf-8")
    return index
