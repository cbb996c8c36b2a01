"""The balance report of a run: ``index.html`` (self-contained: inline CSS, figures embedded as
base64 PNG), ``summary.md``, ``figures/*.png`` and ``tables/*.csv``."""

import base64
import html
import importlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from analysis.core import figures, games, seats, strategies
from analysis.core.batches import Execution, Reduction, analyse, progress_bar, value
from analysis.core.inputs import (
    check_comparable,
    check_together,
    combined_data_label,
    run_labels,
)
from analysis.core.load import Run, open_run
from analysis.core.robustness import mark_words
from analysis.core.stats import DEFAULT_BAND, DEFAULT_MIN_N
from analysis.core.tabulate import EXPECTED, Flagging, with_band_flags
from sim.core.errors import UserError
from sim.core.game import resolve

CSS = """
body { font-family: system-ui, sans-serif; max-width: 84rem; margin: 1rem auto; padding: 0 1rem;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 2px solid #ccc; margin-top: 2.2rem; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.6rem 0; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.45rem; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
.notice { background: #fff3cd; border: 2px solid #c4a000; padding: 0.6rem 1rem; font-weight: bold; }
.findings li { margin: 0.25rem 0; } .flag-strong { color: #cc0000; font-weight: bold; }
.flag-weak { color: #3465a4; font-weight: bold; } img { max-width: 100%; }
.note { color: #555; font-size: 0.9rem; } nav a { margin-right: 0.8rem; }
tr.small td { color: #999; } ol.ranked li { margin: 0.2rem 0; }
th { font-weight: 600; } td { overflow-wrap: break-word; } td.text { text-align: left; }
.glance { font-size: 1.05rem; } .glance li { margin: 0.3rem 0; }
.robust { color: #4e9a06; font-weight: bold; } .reversed { color: #75507b; font-weight: bold; }
.weaker, .stronger { color: #8f5902; font-weight: bold; }
.vanishes, .appears { color: #ce5c00; font-weight: bold; }
.fields { background: #f4f6f9; padding: 0.6rem 1rem; }
details.identity summary { cursor: pointer; color: #555; } .steps li { margin: 0.35rem 0; }
code { font-size: 0.85em; background: #f3f3f3; padding: 0 0.2em; overflow-wrap: anywhere; }
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


def lead_ci(column: str, digits: int = 1):
    """Cell: the signed mean in ``column`` with its interval columns."""
    return lambda r: num_interval(r[column], r[f"{column}_lo"], r[f"{column}_hi"], digits)


def mean_ci(column: str, digits: int = 1):
    """Cell: the mean in ``column`` with its interval columns, unsigned."""
    return lambda r: (
        f"{num(r[column], digits)} [{num(r[f'{column}_lo'], digits)}, "
        f"{num(r[f'{column}_hi'], digits)}]"
    )


def p_cell(column: str):
    """Cell: the p- or q-value in ``column`` to 3 significant digits ("–" when there is none)."""
    return lambda r: "–" if r[column] is None or math.isnan(r[column]) else f"{r[column]:.3g}"


# The columns most tables start with: (header, cell) pairs for html_table.
PLAYERS_COLUMN = ("players", lambda r: r["n_players"])
STRATEGY_COLUMN = ("strategy", lambda r: r["strategy_name"])
SEATS_COLUMN = ("seats", lambda r: r["n"])
GAMES_COLUMN = ("games", lambda r: r["games"])
TILE_COLUMN = ("tile", lambda r: r["tile_name"])  # a tile table's (both games name their tiles)
# The score quantiles of tabulate.with_mean_interval's ``quantiles`` (both games' score tables).
SCORE_QUANTILES_COLUMN = (
    "10% / 50% / 90%",
    lambda r: f"{r['total_p10']:.0f} / {r['total_p50']:.0f} / {r['total_p90']:.0f}",
)


def plain_columns(*names: str) -> list[tuple[str, object]]:
    """Columns shown as stored, each headed by its own name."""
    return [(name, lambda r, name=name: r[name]) for name in names]


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
            if not css and _is_words(text):
                css = ' class="text"'
            cells.append(f"<td{css}>{html.escape(text)}</td>")
        css_row = ' class="small"' if row.get("small") else ""
        rows.append(f"<tr{css_row}>{''.join(cells)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


_NUMBER = re.compile(r"^[\s+\-−–±≤≥(\[~]*(\d|nan|inf|–$)")


def _is_words(text: str) -> bool:
    """A cell of words (names, reasons, lists), left-aligned; numbers stay right-aligned."""
    return len(text) > 12 and not _NUMBER.match(text)


LONG_NAME = 24  # a strategy label longer than this, with parameters, gets a short name


def short_names(labels) -> dict[str, str]:
    """Each strategy label that spells out parameters (``base:param=value,...``) and is longer
    than LONG_NAME characters, by a short name: its base strategy and a number, ``greedy#1``,
    numbered in the order given."""
    out: dict[str, str] = {}
    counts: dict[str, int] = {}
    for label in dict.fromkeys(labels):
        base, colon, _ = label.partition(":")
        if colon and len(label) > LONG_NAME:
            counts[base] = counts.get(base, 0) + 1
            out[label] = f"{base}#{counts[base]}"
    return out


def _shorten(text: str, names: dict[str, str], escaped: bool = True) -> str:
    """``text`` with every long strategy label replaced by its short name (longest first, so
    a label that contains another is replaced whole)."""
    for label in sorted(names, key=len, reverse=True):
        text = text.replace(html.escape(label) if escaped else label, names[label])
    return text


def _names_legend(names: dict[str, str]) -> str:
    if not names:
        return ""
    rows = "".join(
        f'<tr><td>{html.escape(short)}</td><td class="text"><code>{html.escape(label)}</code>'
        "</td></tr>"
        for label, short in names.items()
    )
    return (
        '<p class="note">Strategies named by their parameters are shown by a short name:</p>'
        f"<table><tr><th>short name</th><th>strategy (as in the tables/*.csv files)</th></tr>"
        f"{rows}</table>"
    )


# How each metric of findings.json reads in the report.
METRIC_WORDS = {
    "win_share_above_expected_drafted": "drafters' win share above expected",
    "win_share_vs_median_cornerstone_drafted": "drafters' win share against the median cornerstone",
    "win_share_above_expected_selected": "selectors' win share above expected",
    "win_share_vs_median_tile_of_generation_selected": (
        "selectors' win share against the median tile of its generation"
    ),
    "win_share_above_expected_chosen": "choosers' win share above expected",
    "win_share_minus_fair": "win share above the fair share",
}


def clean(value):
    """A JSON-safe value: NaN and infinities become null, numpy scalars plain Python."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def pts(x, lo=None, hi=None, digits: int = 1, unit: str = " pct-pts") -> str:
    """A win-share difference (a fraction) in percentage points, with its interval; tables
    whose header names the unit pass ``unit=""``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return f"{100 * x:+.{digits}f}{unit}"
    return f"{100 * x:+.{digits}f} [{100 * lo:+.{digits}f}, {100 * hi:+.{digits}f}]{unit}"


def cell_pts(x, lo=None, hi=None) -> str:
    """``pts`` for a table cell under a header that says pct-pts."""
    return pts(x, lo, hi, unit="")


@dataclass
class Report:
    out: Path
    correction: str = "bh"  # multiple-comparison correction of flagged findings
    level: float = 0.05
    label: str = ""  # the flag rule in words
    band: float = DEFAULT_BAND  # practical-significance band (win share, a fraction)
    min_n: int = DEFAULT_MIN_N  # seats below which nothing is tested or flagged
    data_label: str = ""  # a reconstruction's label: carried by every exported file
    sections: list[tuple[str, str, list[str]]] = field(default_factory=list)  # id, title, html
    findings: list[str] = field(default_factory=list)  # headline lines in words
    items: list[dict] = field(default_factory=list)  # findings.json
    # Several runs side by side (analysis.core.inputs): each run's label (folder, players, and
    # its data and rules where they differ), the data of all of them for the combined tables
    # ("" when they share it), and identity rows naming the other runs.
    labels: dict = field(default_factory=dict)
    combined_label: str = ""
    other_runs: list[tuple[str, str]] = field(default_factory=list)
    # The page's top (pictures first): short sentences, figures (HTML), and, with a second
    # field (``--check``), the paragraph saying what the two fields were and its name.
    glance: list[str] = field(default_factory=list)
    glance_html: list[str] = field(default_factory=list)
    fields_html: str = ""
    other_field: str = ""
    cache: dict = field(default_factory=dict)  # a game's tables derived once per run
    # Strategies named by their whole parameter string, by their short names (the page shows
    # the short name and lists both once; CSV tables and findings.json keep the whole label).
    short_names: dict = field(default_factory=dict)
    # Every next step ranked by expected VP x robustness (the game's ``add_next_steps``), and
    # the commands that reproduce the figures (run from the report folder).
    steps: list = field(default_factory=list)
    reproduce: str = ""
    steps_note: str = ""  # how the steps are ranked (HTML; "" = NEOM's STEPS_NOTE)
    data_word: str = "catalogue"  # what the copied data file is, in the reproduce line
    # ``neom report --probe``: items to probe, games per side and the earlier report's cache
    # (a game's sections read it; {} = no probe).
    probe: dict = field(default_factory=dict)
    score_unit: str = "VP"  # the game's Game.score_unit: what scores and leads are counted in

    @property
    def flagging(self) -> Flagging:
        """How this report flags its tables' items."""
        return Flagging(self.correction, self.level, self.band, self.min_n)

    def run_label(self, run: Run) -> str:
        """How ``run`` is named beside the report's other runs."""
        return self.labels.get(run.path, run_label(run))

    def table(self, name: str, frame: pl.DataFrame) -> None:
        """Write tables/NAME.csv, every row carrying the data it describes: a table with its
        own ``data`` column (one per run) keeps it; a table of every run (``combined_*``) on
        different data names all of them; any other table carries the main run's label."""
        label = self.data_label
        if name.startswith("combined_") and self.combined_label:
            label = self.combined_label
        if label and "data" not in frame.columns:
            frame = frame.with_columns(pl.lit(label).alias("data"))
        frame.write_csv(self.out / "tables" / f"{name}.csv")

    def figure(self, name: str, fig, alt: str) -> str:
        figures.rename_texts(fig, self.short_names)
        data = figures.png_bytes(fig, self.data_label)
        (self.out / "figures" / f"{name}.png").write_bytes(data)
        encoded = base64.b64encode(data).decode("ascii")
        return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'

    def section(self, key: str, title: str, parts: list[str]) -> None:
        self.sections.append((key, title, parts))

    def add_items(
        self,
        kind: str,
        frame: pl.DataFrame,
        metric: str,
        name: str = "tile_name",
        strategy: str | None = None,
        effect: str = "effect",
    ) -> None:
        """One findings.json object per row of an effect table: kind, name, metric, effect,
        lo, hi, n, flag (null unless flagged), and strategy for per-strategy rows."""
        for row in frame.iter_rows(named=True):
            item = {
                "kind": kind,
                "name": str(row[name]),
                "metric": metric,
                "effect": clean(row[effect]),
                "lo": clean(row[f"{effect}_lo"]),
                "hi": clean(row[f"{effect}_hi"]),
                "n": clean(row["n"]),
                "flag": row.get("flag") or None,
            }
            if strategy is not None:
                item["strategy"] = str(row[strategy])
            if self.data_label:
                item["data"] = self.data_label
            self.items.append(item)

    def mark(self, kind: str, marks: pl.DataFrame, key: str = "tile_name") -> None:
        """Give the pooled findings of ``kind`` their ``robustness`` (and ``check``: the same
        finding in the other field) from an :func:`analysis.core.robustness.marks` table."""
        by_name = {str(row[key]): row for row in marks.iter_rows(named=True)}
        for item in self.items:
            if item["kind"] != kind or "strategy" in item or item["name"] not in by_name:
                continue
            row = by_name[item["name"]]
            item["robustness"] = row["robustness"]
            if row.get("n_check") is not None:
                item["check"] = {
                    "effect": clean(row["effect_check"]),
                    "lo": clean(row["lo_check"]),
                    "hi": clean(row["hi_check"]),
                    "n": clean(row["n_check"]),
                    "flag": row["flag_check"] or None,
                }

    def band_words(self) -> str:
        return (
            f"flagged only when the whole 95% interval lies outside ±{100 * self.band:g} "
            f"pct-pts and the {self.label}, from at least {self.min_n} seats"
        )


def readings(run: Run) -> list[str]:
    """The rules the run used, in words: each rules option's reading (the game's
    descriptions), marked when it is not the default, then the rules' own tables (such as
    Tangram City's bonus tables) and any experiment intervention (``Game.intervention_rules``)."""
    rules = run.manifest.get("rules", {})
    words = []
    known = set()
    for option in run.game.rule_options:
        known.add(option.name)
        labels = {value: label for label, value in option.choices.items()}
        value = rules.get(option.name, option.choices[option.default])
        label = labels.get(value, str(value))
        text = option.describe.get(label, f"{option.flag} {label}")
        if label != option.default:
            text += f" [not the default: {option.flag} {label}]"
        words.append(text)
    for key, value in rules.items():
        if key in known or value in (-1, None):
            continue
        if key not in run.game.intervention_rules:
            # The rules' own tables (Tangram City's bonus tables), not an intervention.
            words.append(f"{key.replace('_', ' ')}: {value}")
            continue
        shown = run.tile_name(int(value)) if key.endswith("_tile") and run.tables else value
        words.append(f"experiment intervention: {key.replace('_', ' ')} = {shown}")
    return words


def _identity(run: Run) -> list[tuple[str, str]]:
    m = run.manifest
    data = m["data"]
    return [
        ("game", f"{run.game.title} (rules version {m['rules_version']})"),
        ("run", shown_path(run.path)),
        ("data", str(data.get("label", run.data_name))),
        ("data digest", str(data.get("digest", ""))[:16]),
        ("players", str(m["players"])),
        ("strategies", ", ".join(s["name"] for s in m["strategies"])),
        ("seats", str(m.get("seats", ""))),
        ("games", str(m["games"])),
        ("seed", str(m["seed"])),
        ("rules", "; ".join(readings(run))),
    ]


def shown_path(path) -> str:
    """A run folder as a report shows it: relative to the working folder when it is inside
    it, else its name alone (a shared report shows no folder of the author's machine)."""
    path = Path(path)
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return path.name


def _fair_share_effects(report: Report, run: Run, key: str):
    """Per player count and ``key`` (strategy_name; seat, in games of 2+ players): the win
    share minus the fair share (1 / players), cluster-robust by deal, flagged with the band
    like every other effect."""
    source = strategies.STRATEGIES if key == "strategy_name" else seats.SEATS
    table = value(run, source)["fair"].effect_table()
    return with_band_flags(table, report.flagging).sort("n_players", key)


def strategy_effects(report: Report, run: Run) -> pl.DataFrame:
    """Each strategy's win share minus the fair share (see _fair_share_effects)."""
    return _fair_share_effects(report, run, "strategy_name")


def _strategy_section(report: Report, run: Run) -> None:
    shares = strategies.win_shares(run)
    pairs = strategies.head_to_head(run)
    rating = strategies.ratings(run, pairs)
    effects = strategy_effects(report, run)
    report.table("strategies", shares)
    report.table("strategy_effects", effects)
    report.table("head_to_head", pairs)
    report.table("ratings", rating)
    report.add_items(
        "strategy",
        effects.with_columns(
            (pl.col("strategy_name") + " (" + pl.col("n_players").cast(pl.Utf8) + "p)").alias(
                "label"
            )
        ),
        "win_share_minus_fair",
        name="label",
    )
    for (n_players,), part in shares.partition_by("n_players", as_dict=True).items():
        best = part.sort("share", descending=True).row(0, named=True)
        if part.height == 1:
            report.findings.append(
                f"{best['strategy_name']} is the only strategy of the {n_players}-player games "
                "(mirror games): no strategy comparison."
            )
            continue
        report.findings.append(
            f"{best['strategy_name']} wins {share_ci('share')(best)} of {n_players}-player "
            f"games (fair share {pct(best['fair'])})."
        )
        worst = part.sort("share").row(0, named=True)
        report.glance.append(
            f"Strategies ({n_players} players): {best['strategy_name']} wins most, "
            f"{pct(best['share'])} of games; {worst['strategy_name']} least, "
            f"{pct(worst['share'])} (fair share {pct(best['fair'])})."
        )
    parts = [
        "<p>Win share: a sole win counts 1, a k-way shared win 1/k. Intervals are 95% Wilson "
        "(they hold at small n). <i>Above fair</i>: win share minus the fair share, with a "
        "95% interval that is cluster-robust over deals (rotated seats replay each deal); "
        f"{html.escape(report.band_words())}.</p>",
        html_table(
            shares.join(
                effects.select(
                    "n_players", "strategy_name", "flag", "effect", "effect_lo", "effect_hi"
                ),
                on=["n_players", "strategy_name"],
                how="left",
            ),  # fmt: skip
            [
                PLAYERS_COLUMN,
                STRATEGY_COLUMN,
                SEATS_COLUMN,
                ("win share [95% CI]", share_ci("share")),
                ("fair share", lambda r: pct(r["fair"])),
                (
                    "above fair, pct-pts [95% CI]",
                    lambda r: cell_pts(r["effect"], r["effect_lo"], r["effect_hi"]),
                ),
                ("flag", lambda r: r["flag"] or ""),
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
                    GAMES_COLUMN,
                    ("A above B [95% CI]", share_ci("share")),
                    (
                        f"score lead ({run.game.score_unit}) [95% CI]",
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
                    STRATEGY_COLUMN,
                    ("rating", lambda r: num(r["rating"], 0)),
                    ("P(above an average strategy)", lambda r: pct(r["p_beat_average"])),
                    ("comparisons", lambda r: f"{r['comparisons']:.0f}"),
                ],
            ),
        ]
    report.section("strategies", "Strategies", parts)


def _seat_section(report: Report, run: Run) -> None:
    shares = seats.seat_shares(run)
    balance = seats.balance(run, level=report.level)
    effects = _fair_share_effects(report, run, "seat")
    report.table("seats", shares)
    report.table("seat_balance", balance)
    report.add_items(
        "seat",
        effects.with_columns(
            (
                "seat "
                + pl.col("seat").cast(pl.Utf8)
                + " ("
                + pl.col("n_players").cast(pl.Utf8)
                + "p)"
            ).alias("label")  # fmt: skip
        ),
        "win_share_minus_fair",
        name="label",
    )
    for row in balance.iter_rows(named=True):
        if row["n_players"] <= 1:
            continue
        test = f"χ²({row['df']}) = {row['chi2']:.2f}, p = {row['p']:.3g}"
        if row["significant"]:
            verdict = (
                f"the seat matters: best seat {row['best_seat']}, worst seat {row['worst_seat']}"
            )
        else:
            verdict = "no evidence that the seat matters (no best or worst seat named)"
        report.findings.append(
            f"Seats in {row['n_players']}-player games: {test}: {verdict}; balance "
            f"{row['balance']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}]."
        )
        report.glance.append(
            f"Seats ({row['n_players']} players): "
            + (
                f"the seat matters (p = {row['p']:.2g}): seat {row['best_seat']} wins most, "
                f"seat {row['worst_seat']} least."
                if row["significant"]
                else "no evidence that the seat matters."
            )
        )
    parts = [
        "<p>The seat test: a Wald χ² test that every seat has the same mean win share, on each "
        "game's seat win shares (shared wins split) with a covariance that is cluster-robust "
        "over deals, P − 1 degrees of freedom. A best and a worst seat are named only when "
        f"p &lt; {report.level:g}. Balance = 1 − (largest gap between two seats' win shares); "
        "1 is perfectly even, but sampling noise alone keeps it below 1 (perfectly fair seats "
        "give about 0.99 in 20,000 games), so it is a size, not a test.</p>",
        html_table(
            balance,
            [
                PLAYERS_COLUMN,
                GAMES_COLUMN,
                ("χ² (df)", lambda r: f"{num(r['chi2'], 2)} ({r['df']})"),
                ("p", p_cell("p")),
                (
                    "balance [95% CI]",
                    lambda r: f"{r['balance']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]",
                ),
                ("best seat", lambda r: "–" if r["best_seat"] is None else r["best_seat"]),
                ("worst seat", lambda r: "–" if r["worst_seat"] is None else r["worst_seat"]),
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
            shares.join(
                effects.select("n_players", "seat", "effect", "effect_lo", "effect_hi", "flag"),
                on=["n_players", "seat"],
                how="left",
            ),  # fmt: skip
            [
                PLAYERS_COLUMN,
                ("seat", lambda r: r["seat"]),
                ("win share [95% CI]", share_ci("share")),
                (
                    "above fair, pct-pts [95% CI]",
                    lambda r: cell_pts(r["effect"], r["effect_lo"], r["effect_hi"]),
                ),
                ("flag", lambda r: r["flag"] or ""),
                ("mean score", lambda r: num(r["mean_score"])),
            ],
        ),
    ]
    report.section("seats", "Seats", parts)


def _closeness_section(report: Report, run: Run) -> None:
    result = games.closeness(run)
    if result is None:
        return
    table, margins = result
    report.table("closeness", table)
    unit = run.game.score_unit
    for row in table.iter_rows(named=True):
        report.glance.append(
            f"Closeness ({row['n_players']} players): half the games are won by "
            f"{num(row['median_margin'], 0)} {unit} or less; {pct(row['close_share'])} by 2 "
            f"{unit} or less."
        )
        report.findings.append(
            f"{row['n_players']}-player games are won by {num(row['median_margin'], 0)} {unit} "
            f"(median margin; mean {num(row['mean_margin'])}); {pct(row['close_share'])} are "
            f"decided by 2 {unit} or less and {pct(row['shared_share'])} end in a shared win."
        )
    parts = [
        "<p>Margin of victory: the winners' score minus the best score of a non-winner "
        "(a shared win has margin 0 only if every seat shares it; otherwise the gap to the "
        f"best non-winner). Close: decided by 2 {unit} or less. Intervals: 95% Wilson.</p>",
        html_table(
            table,
            [
                PLAYERS_COLUMN,
                GAMES_COLUMN,
                (f"median margin ({unit})", lambda r: num(r["median_margin"], 0)),
                (f"mean margin ({unit})", lambda r: num(r["mean_margin"])),
                ("90th percentile", lambda r: num(r["p90_margin"], 0)),
                (f"decided by ≤ 2 {unit} [95% CI]", share_ci("close_share")),
                ("shared wins [95% CI]", share_ci("shared_share")),
            ],
        ),
        report.figure(
            "margin_of_victory",
            figures.histograms(
                margins,
                "n_players",
                "margin",
                "Margin of victory",
                f"winners' score − best other score ({unit})",
                count="count",
            ),
            "margin of victory",
        ),  # fmt: skip
    ]
    report.section("closeness", "Closeness", parts)


def ranked(report: Report) -> list[dict]:
    """The pooled findings flagged in this field or the other one, or reversed (the set every
    count of marks reads, ``robustness.is_counted``): robust first, then reversed, weaker or
    stronger, vanishing or appearing, not compared; each group largest effect first."""
    from analysis.core.robustness import RANK, is_counted

    flagged = [
        item for item in report.items
        if "strategy" not in item
        and is_counted(item.get("robustness"), item["flag"], (item.get("check") or {}).get("flag"))
    ]  # fmt: skip
    return sorted(
        flagged,
        key=lambda item: (RANK.get(item.get("robustness"), 3), -abs(item["effect"] or 0.0)),
    )


def _side_cell(flag, effect, lo, hi, unit: str = "") -> str:
    text = pct_interval(effect, lo, hi) if unit == SHARE_UNIT else cell_pts(effect, lo, hi)
    return f"{flag} {text}" if flag else text


# An item whose effect is a share of seats (a rule's reach), not a win-share difference: shown
# in per cent, left out of the pct-pts forest.
SHARE_UNIT = "share"


def headline(report: Report, limit: int = 20) -> str:
    """The ranked findings (:func:`ranked`): mark, kind, name, measure, the effect in this
    field (and in the other one), its score-unit equivalent and its links."""
    rows = ranked(report)
    if not rows:
        return f"<p>No finding flagged ({html.escape(report.band_words())}).</p>"
    other = report.other_field
    unit = html.escape(report.score_unit)
    cells = []
    for rank, item in enumerate(rows[:limit], start=1):
        mark = item.get("robustness")
        check = item.get("check") or {}
        vp = item.get("vp_equivalent")
        here = _side_cell(item["flag"], item["effect"], item["lo"], item["hi"], item.get("unit"))
        row = [f"<td>{rank}</td>"]
        if other:
            row.append(f'<td class="{mark}">{html.escape(mark_words(mark, other))}</td>')
        row += [
            f"<td>{html.escape(item['kind'])}</td>",
            f"<td>{html.escape(item['name'])}</td>",
            f"<td>{html.escape(METRIC_WORDS.get(item['metric'], item['metric']))}</td>",
            f"<td>{html.escape(here)} (n = {item['n']})</td>",
        ]
        if other:
            there = _side_cell(check.get("flag"), check.get("effect"), check.get("lo"),
                               check.get("hi"), item.get("unit"))  # fmt: skip
            row.append(f"<td>{html.escape(there)}" + (f" (n = {check['n']})" if check else "")
                       + "</td>")  # fmt: skip
        row += [
            f"<td>{'–' if vp is None else f'{vp:+.1f}'}</td>",
            f"<td>{html.escape(item.get('links') or '')}</td>",
        ]
        cells.append(f"<tr>{''.join(row)}</tr>")
    more = (
        f'<p class="note">{len(rows) - limit} more flagged findings in findings.json.</p>'
        if len(rows) > limit
        else ""
    )
    order = (
        "robust findings first, then reversed, weaker or stronger, vanishing or appearing; "
        if other
        else ""
    )
    head = (
        "<tr><th>#</th>"
        + ("<th>robustness</th>" if other else "")
        + "<th>kind</th><th>name</th><th>measured as</th>"
        "<th>this field: flag, effect (pct-pts) [95% CI]</th>"
        + (f"<th>{html.escape(other)}: flag, effect [95% CI]</th>" if other else "")
        + f"<th>{unit} equivalent</th><th>links</th></tr>"
    )
    return (
        f"<p>Ranked {order}by the size of the effect; {html.escape(report.band_words())}. "
        f"{unit} equivalent: the effect at this run's exchange rate between win share and score "
        f"lead, or {unit} on the item (see <i>What to change first</i>).</p>"
        f"<table>{head}{''.join(cells)}</table>{more}"
    )


def _effect_words(item: dict) -> str:
    if item.get("unit") == SHARE_UNIT:
        return pct_interval(item["effect"], item["lo"], item["hi"]) + " of seats"
    return pts(item["effect"], item["lo"], item["hi"])


def _check_words(item: dict, check: dict) -> str:
    """The other field's estimate of ``item``, in the item's unit (a share of seats or pct-pts)."""
    return _effect_words({**check, "unit": item.get("unit")})


def headline_lines(report: Report, limit: int = 20) -> list[str]:
    lines = []
    for rank, item in enumerate(ranked(report)[:limit], start=1):
        mark = (
            f"[{mark_words(item['robustness'], report.other_field)}] "
            if report.other_field and item.get("robustness")
            else ""
        )
        check = item.get("check") or {}
        there = ""
        if report.other_field and check:
            there = (
                f"; {report.other_field}: {check.get('flag') or 'not flagged'} "
                f"{_check_words(item, check)}"
            )
        lines.append(
            f"{rank}. {mark}{item['flag'] or 'not flagged'} {item['kind']} {item['name']}: "
            f"{_effect_words(item)} "
            f"({METRIC_WORDS.get(item['metric'], item['metric'])}; n = {item['n']}){there}"
        )
    return lines


def _findings_figure(report: Report) -> str:
    rows = []
    for item in ranked(report):
        check = item.get("check") or {}
        if item["effect"] is None or item["lo"] is None or item.get("unit") == SHARE_UNIT:
            continue
        rows.append(
            {
                "label": f"{item['name']} ({item['kind']})",
                "effect": 100 * item["effect"],
                "lo": 100 * item["lo"],
                "hi": 100 * item["hi"],
                "robustness": item.get("robustness"),
                **(
                    {
                        "effect_check": 100 * check["effect"],
                        "lo_check": 100 * check["lo"],
                        "hi_check": 100 * check["hi"],
                    }
                    if check.get("effect") is not None and check.get("lo") is not None
                    else {}
                ),
            }
        )
    if not rows:
        return ""
    shown = "" if len(rows) <= figures.MAX_FOREST_ROWS else f", the first {figures.MAX_FOREST_ROWS}"
    return report.figure(
        "findings",
        figures.findings_forest(
            rows,
            f"Flagged findings, ranked as the table below{shown} (95% CI)",
            f"effect (pct-pts of win share; grey: the ±{100 * report.band:g} pct-pts band)",
            report.other_field,
            100 * report.band,
        ),
        "forest plot of the flagged findings, coloured by robustness",
    )


HEADLINE_STEPS = 10  # ranked next steps shown at the top; tables/next_steps.csv has them all
# How the steps are ranked, in words (a game's add_next_steps may say it its own way).
STEPS_NOTE = (
    "Every next step ranked by expected VP per edit × robustness weight (robust 1, weaker or "
    "stronger 0.75, vanishes or appears 0.5, reversed 0.25, not compared 0.5), a chain no city "
    "completes first: a group of flags that share a tag and a direction, and a systemic problem "
    "(tiles the sale beats, cornerstones nobody builds, goods few cities make), rank by their VP "
    "per item; a member far stronger or weaker than its group is listed alone. Each command "
    "names the field, the catalogue file, <code>--games</code>, <code>--seed</code> and "
    "<code>--lever</code>."
)


def _step_size(step: dict, unit: str) -> str:
    """What a step is ranked by, in words: its expected score in ``unit`` (per item, for a step
    over several items) and its robustness weight."""
    vp = step.get("expected_vp")
    if step.get("first"):
        return html.escape(step.get("size") or step.get("vp_basis") or "ranked first")
    if step.get("size"):
        return f"{html.escape(step['size'])} × robustness {step['weight']:.2f}"
    if vp is None or not math.isfinite(vp):
        return f"{html.escape(unit)} not measured × robustness {step['weight']:.2f}"
    basis = html.escape(step.get("vp_basis") or unit)
    items = step.get("items", 1)
    size = (f"expected {abs(vp) / items:.1f} {basis} each, {items} items, {abs(vp):.1f} in all"
            if items > 1 else f"expected {abs(vp):.1f} {basis}")  # fmt: skip
    return f"{size} × robustness {step['weight']:.2f}"


def _ranked_steps_html(report: Report) -> str:
    """The game's ranked next steps (``Report.steps``): at most HEADLINE_STEPS."""
    lines = []
    for step in report.steps[:HEADLINE_STEPS]:
        mark = step.get("mark")
        words = html.escape(mark_words(mark, report.other_field))
        if step.get("lead"):  # a single item: its name first, then its kind and mark
            name, kind = step["lead"]
            tag = f'<span class="{mark}">{words}</span>' if report.other_field and mark else ""
            body = (f"<b>{html.escape(name)}</b> ({html.escape(kind)}{', ' if tag else ''}{tag}) "
                    + _code_spans(step["rest"]))  # fmt: skip
        else:
            tag = f'<span class="{mark}">{words}</span>: ' if report.other_field and mark else ""
            body = tag + _code_spans(step["text"])
        lines.append(f"<li>{body} <i>({_step_size(step, report.score_unit)})</i></li>")
    more = len(report.steps) - HEADLINE_STEPS
    reproduce = (
        f'<p class="note">The figures come from (run in the report folder, where the '
        f"{report.data_word} is copied under its digest): "
        f"<code>{html.escape(report.reproduce)}</code>.</p>"
        if report.reproduce
        else ""
    )
    note = report.steps_note or STEPS_NOTE
    return (
        f'<h3 id="next">What to change first</h3><p class="note">{note}</p>'
        f'<ol class="steps">{"".join(lines)}</ol>'
        + (f'<p class="note">{more} more in tables/next_steps.csv.</p>' if more > 0 else "")
        + reproduce
    )


def _steps_html(report: Report) -> str:
    """The ranked next steps when the game gives them, else the next step of every ranked
    finding that has one, in the headline's order."""
    if report.steps:
        return _ranked_steps_html(report)
    items = [item for item in ranked(report) if item.get("next_step")]
    if not items:
        return ""
    lines = []
    for item in items:
        mark = item.get("robustness")
        tag = (
            f'<span class="{mark}">{html.escape(mark_words(mark, report.other_field))}</span>: '
            if report.other_field and mark
            else ""
        )
        lines.append(f"<li>{tag}{_code_spans(item['next_step'])}</li>")
    return (
        '<h3 id="next">What to do next</h3><p class="note">For each flagged finding: its '
        f"{html.escape(report.score_unit)} equivalent and the commands that find a value "
        "bringing it into the band (<code>neom balance</code>) and test it by playing with it "
        "forced or banned (<code>neom "
        f'experiment</code>).</p><ul class="steps">{"".join(lines)}</ul>'
    )


def _code_spans(text: str) -> str:
    """Escape ``text`` and show its `backquoted` parts as code."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _identity_line(run: Run) -> str:
    m = run.manifest
    strategies = ", ".join(s["name"] for s in m["strategies"])
    return (
        f"{m['games']} games · {m['players']} players · {strategies} · seed {m['seed']} · "
        f"{run.data_name}"
    )


def _html(run: Run, report: Report) -> str:
    notice = ""
    if run.reconstructed:
        notice = (
            '<p class="notice">RECONSTRUCTED data: the tile data behind this report is a '
            "reconstruction, not the published game's. Findings about named tiles describe the "
            "reconstruction.</p>"
        )
    identity_rows = _identity(run) + report.other_runs
    identity = html_table(
        pl.DataFrame(
            {"key": [k for k, _ in identity_rows], "value": [v for _, v in identity_rows]}
        ),
        [("", lambda r: r["key"]), ("", lambda r: r["value"])],
    )
    glance = "".join(f"<li>{html.escape(line)}</li>" for line in report.glance)
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in report.findings)
    nav = "".join(f'<a href="#{key}">{html.escape(title)}</a>' for key, title, _ in report.sections)
    body = "".join(
        f'<h2 id="{key}">{html.escape(title)}</h2>' + "".join(parts)
        for key, title, parts in report.sections
    )
    title = f"{run.game.title} balance report: {run.data_name}, {run.manifest['games']} games"
    page = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        f'<h1>{html.escape(title)}</h1>{notice}<section id="identity">'
        f'<details class="identity"><summary>The run: {html.escape(_identity_line(run))} '
        f"(details)</summary>{identity}</details>NAMES_LEGEND</section>"
        f'<h2 id="glance">At a glance</h2>{_steps_html(report) if report.steps else ""}'
        f"{report.fields_html}{_findings_figure(report)}"
        f'<ul class="glance">{glance}</ul>{"".join(report.glance_html)}'
        f'<h2 id="findings">Headline findings</h2>{headline(report)}'
        f"{'' if report.steps else _steps_html(report)}"
        f'<nav>{nav}<a href="#words">All findings in words</a></nav>{body}'
        f'<h2 id="words">All findings in words</h2><ul class="findings">{findings}</ul>'
        "</body></html>"
    )
    page = _shorten(page, report.short_names)
    return page.replace("NAMES_LEGEND", _names_legend(report.short_names), 1)


def _summary_md(run: Run, report: Report) -> str:
    lines = [f"# {run.game.title} balance report: {run.data_name}", ""]
    if run.reconstructed:
        lines += ["**RECONSTRUCTED data: findings describe the reconstruction.**", ""]
    lines += [f"- {key}: {value}" for key, value in _identity(run) + report.other_runs]
    lines += ["", "## At a glance", ""]
    if report.fields_html:
        lines += [_plain(report.fields_html), ""]
    lines += [f"- {line}" for line in report.glance]
    lines += ["", "## Headline findings", ""]
    ranked_lines = headline_lines(report)
    lines += ranked_lines or [f"No finding flagged ({report.band_words()})."]
    steps = [item["next_step"] for item in ranked(report) if item.get("next_step")]
    if report.steps:
        lines += ["", "## What to change first", ""] + [
            f"{i}. {step['text']}" for i, step in enumerate(report.steps[:HEADLINE_STEPS], 1)
        ]
        if report.reproduce:
            lines += ["", f"The figures come from: `{report.reproduce}`"]
    if steps:
        lines += ["", "## Every flagged item's next step", ""] + [f"- {step}" for step in steps]
    lines += ["", "## All findings in words", ""] + [f"- {f}" for f in report.findings]
    lines += ["", "Tables: `tables/*.csv`; figures: `figures/*.png`; findings: `findings.json`; "
              "full report: `index.html`."]  # fmt: skip
    text = _shorten("\n".join(lines), report.short_names, escaped=False)
    if report.short_names:
        text += "\n\nStrategies named by their parameters, by their short names:\n\n" + "\n".join(
            f"- {short}: `{label}`" for label, short in report.short_names.items()
        )
    return text + "\n"


def _plain(text: str) -> str:
    """An HTML paragraph as plain text (tags dropped, entities read)."""
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", text)).strip()


CORE_REDUCTIONS = (strategies.STRATEGIES, seats.SEATS, games.CLOSENESS, EXPECTED)


def report_reductions(run: Run) -> list[Reduction]:
    """The reductions a report on ``run`` reads: the shared sections' and the game's own
    (its report module's ``reductions(run)``)."""
    game_reductions = _game_hook(run, "reductions")
    return [*CORE_REDUCTIONS, *(game_reductions(run) if game_reductions else ())]


def _game_hook(run: Run, name: str):
    """An optional function ``name`` of the module the game's report sections live in."""
    module = importlib.import_module(run.game.report_ref.partition(":")[0])
    return getattr(module, name, None)


def build_report(
    run,
    out,
    correction: str = "bh",
    level: float = 0.05,
    band: float = DEFAULT_BAND,
    min_n: int = DEFAULT_MIN_N,
    check=None,
    execution: Execution | None = None,
    probe: dict | None = None,
) -> Path:
    """Analyse the run folder ``run`` (or a list of run folders: the first is reported in full,
    all of them side by side in a combined section) and write the report into ``out``; returns
    index.html. The game's own sections (``Game.report_ref``) follow the sections every game
    shares; ``correction``, ``level``, ``band`` and ``min_n`` set when an effect is flagged.
    ``check``: a run of a stronger field on the same data, set beside the main run's findings
    (the game's ``add_check`` section). ``execution``: where the runs are read, chunk by chunk
    (``analysis.core.batches``; default: worker processes for a large run). ``probe``: the
    game's paired probes of its flagged items (NEOM: ``items``, ``games``, ``previous``)."""
    paths = list(run) if isinstance(run, (list, tuple)) else [run]
    runs = [open_run(path) for path in paths]
    main = runs[0]
    check_together(runs)
    check_run = open_run(check) if check is not None else None
    if check_run is not None:
        check_comparable(main, check_run)
    # Every statistic the sections read, each run read once per pass, chunk by chunk.
    for each in runs + ([check_run] if check_run is not None else []):
        analyse(each, report_reductions(each), execution)
    out = Path(out)
    for folder in ("figures", "tables"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    method_name = {"bh": "Benjamini-Hochberg", "holm": "Holm"}[correction]
    data_label = (
        str(main.manifest["data"].get("label", main.data_name)) if main.reconstructed else ""
    )
    report = Report(
        out,
        correction,
        level,
        f"{method_name} adjusted p < {level:g}",
        band,
        min_n,
        data_label,
        score_unit=main.game.score_unit,
    )
    every = [*runs, check_run] if check_run is not None else runs
    report.probe = dict(probe or {})
    report.short_names = short_names(name for run in every for name in run.strategy_names)
    if len(runs) > 1:
        report.labels = run_labels(runs)
        report.combined_label = combined_data_label(runs)
        report.other_runs = [
            (f"also: {report.run_label(other)}", _data_shown(other)) for other in runs[1:]
        ]
    sections = [
        ("strategies", lambda: _strategy_section(report, main)),
        ("seats", lambda: _seat_section(report, main)),
        ("closeness", lambda: _closeness_section(report, main)),
        (main.game.title, lambda: resolve(main.game.report_ref)(report, main)),
    ]
    if len(runs) > 1:
        combined = _game_hook(main, "add_combined")
        sections.append(("all runs", lambda: _combined_strategies(report, runs)))
        if combined is not None:
            sections.append(("all runs' effects", lambda: combined(report, runs)))
    if check_run is not None:
        hook = _game_hook(main, "add_check")
        if hook is None:
            raise UserError(f"--check: {main.game.title} reports have no skill check")
        sections.append(("skill check", lambda: hook(report, main, check_run)))
    if check_run is not None:
        sections.append(("robustness", lambda: _check_shared(report, main, check_run)))
    if report.probe.get("items"):
        # Before the sections: the game's next steps read the probed slopes.
        if not main.game.probe_ref:
            raise UserError(f"--probe: {main.game.title} reports have no probes")
        resolve(main.game.probe_ref)(report, main)
    with progress_bar(execution, len(sections), "section", "sections") as bar:
        for name, add in sections:
            bar.set_postfix_str(name)
            add()
            bar.update(1)
    finish = _game_hook(main, "add_next_steps")
    if finish is not None:
        finish(report, main, check_run)
    for item in report.items:
        item.setdefault("robustness", None)
    (out / "findings.json").write_text(
        json.dumps(report.items, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "summary.md").write_text(_summary_md(main, report), encoding="utf-8")
    index = out / "index.html"
    index.write_text(_html(main, report), encoding="utf-8")
    return index


def _check_shared(report: Report, run: Run, check: Run) -> None:
    """Robustness of the sections every game shares: each seat's and each strategy's effect
    against the same seat or strategy in the other field (strategies only match by name)."""
    from analysis.core.robustness import marks

    args = (report.correction, report.level)
    for kind, key, name in (
        ("seat", "seat", lambda f: "seat " + f["seat"].cast(pl.Utf8)),
        ("strategy", "strategy_name", lambda f: f["strategy_name"]),
    ):
        frames = []
        for each in (run, check):
            table = _fair_share_effects(report, each, key)
            frames.append(
                table.with_columns(
                    (name(table) + " (" + table["n_players"].cast(pl.Utf8) + "p)").alias("label")
                )
            )
        report.mark(kind, marks(frames[0], frames[1], "label", *args, min_n=report.min_n), "label")
    from analysis.core.robustness import REVERSED, ROBUST, count_marks, counts_words

    flagged = ranked(report)
    count = count_marks(flagged)
    other = report.other_field or f"the {check.path.name} run"
    words = (
        f"Robustness against {other}: of the {len(flagged)} findings flagged in either field "
        f"or reversed, {counts_words(count, other)}."
    )
    for mark in (ROBUST, REVERSED):
        names = [f"{i['name']} ({i['kind']})" for i in flagged if i.get("robustness") == mark]
        if names:
            words += f" {mark.capitalize()}: {', '.join(names)}."
    report.glance.insert(0, words)


def run_label(run: Run) -> str:
    """How a run is named beside others: its folder and player count (``Report.run_label``
    adds its data and rules where the runs differ)."""
    return f"{run.path.name} ({run.manifest['players']}p)"


def _data_shown(run: Run) -> str:
    """A run's data as every output shows it: its label (a reconstruction says so)."""
    return str(run.manifest["data"].get("label", run.data_name))


def _combined_strategies(report: Report, runs: list[Run]) -> None:
    """Strategy win shares and the seat test of every run side by side."""
    frames = []
    seat_rows = []
    for run in runs:
        label = report.run_label(run)
        shares = strategies.win_shares(run).with_columns(
            pl.lit(label).alias("run"), pl.lit(_data_shown(run)).alias("data")
        )
        frames.append(shares)
        for row in seats.balance(run, n_boot=200, level=report.level).iter_rows(named=True):
            seat_rows.append({"run": label, **row, "data": _data_shown(run)})
    table = pl.concat(frames, how="diagonal_relaxed")
    report.table("combined_strategies", table)
    seat_table = pl.DataFrame(seat_rows)
    report.table("combined_seats", seat_table)
    report.section(
        "combined",
        "All runs side by side",
        [
            f"<p>{len(runs)} runs: the first ({html.escape(report.run_label(runs[0]))}) is "
            "reported in full above; here every run's strategy win shares and seat test, then "
            "(below) the cornerstone and tile effects per run. Each run's data and rules:</p>"
            + "<ul>"
            + "".join(
                f"<li>{html.escape(report.run_label(r))}: {html.escape(_data_shown(r))}; "
                f"{html.escape('; '.join(readings(r)))}</li>"
                for r in runs
            )
            + "</ul>",
            html_table(
                table,
                [
                    ("run", lambda r: r["run"]),
                    PLAYERS_COLUMN,
                    STRATEGY_COLUMN,
                    SEATS_COLUMN,
                    ("win share [95% CI]", share_ci("share")),
                    ("fair share", lambda r: pct(r["fair"])),
                ],
            ),
            html_table(
                seat_table,
                [
                    ("run", lambda r: r["run"]),
                    PLAYERS_COLUMN,
                    (
                        "seat test",
                        lambda r: f"χ²({r['df']}) = {num(r['chi2'], 2)}, p = {num(r['p'], 3)}",
                    ),  # fmt: skip
                    (
                        "best / worst seat",
                        lambda r: (
                            "–" if not r["significant"] else f"{r['best_seat']} / {r['worst_seat']}"
                        ),
                    ),  # fmt: skip
                ],
            ),
        ],
    )
