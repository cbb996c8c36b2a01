"""The balance report of a run: ``index.html`` (self-contained: inline CSS, figures embedded as
base64 PNG), ``summary.md``, ``figures/*.png`` and ``tables/*.csv``."""

import base64
import html
import math
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from analysis.core import figures, seats, strategies
from analysis.core.load import Run, open_run
from sim.core.game import resolve

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
    correction: str = "bh"  # multiple-comparison correction of flagged findings
    level: float = 0.05
    label: str = ""  # the correction and level in words
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


def readings(run: Run) -> list[str]:
    """The rules options the run used, in words (the game's descriptions of its readings)."""
    rules = run.manifest.get("rules", {})
    words = []
    for option in run.game.rule_options:
        labels = {value: label for label, value in option.choices.items()}
        label = labels.get(rules.get(option.name), str(rules.get(option.name)))
        words.append(option.describe.get(label, f"{option.flag} {label}"))
    return words


def _identity(run: Run) -> list[tuple[str, str]]:
    m = run.manifest
    data = m["data"]
    return [
        ("game", f"{run.game.title} (rules version {m['rules_version']})"),
        ("run", str(run.path)),
        ("data", str(data.get("label", run.data_name))),
        ("data digest", str(data.get("digest", ""))[:16]),
        ("players", str(m["players"])),
        ("strategies", ", ".join(s["name"] for s in m["strategies"])),
        ("seats", str(m.get("seats", ""))),
        ("games", str(m["games"])),
        ("seed", str(m["seed"])),
        ("rules", "; ".join(readings(run))),
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


def _html(run: Run, report: Report) -> str:
    notice = ""
    if run.reconstructed:
        notice = (
            '<p class="notice">RECONSTRUCTED data: the tile data behind this report is a '
            "reconstruction, not the published game's. Findings about named tiles describe the "
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
    title = f"{run.game.title} balance report: {run.data_name}, {run.manifest['games']} games"
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        f'<h1>{html.escape(title)}</h1>{notice}<section id="identity">{identity}</section>'
        f'<h2 id="findings">Headline findings</h2><ul class="findings">{findings}</ul>'
        f"<nav>{nav}</nav>{body}</body></html>"
    )


def _summary_md(run: Run, report: Report) -> str:
    lines = [f"# {run.game.title} balance report: {run.data_name}", ""]
    if run.reconstructed:
        lines += ["**RECONSTRUCTED data: findings describe the reconstruction.**", ""]
    lines += [f"- {key}: {value}" for key, value in _identity(run)]
    lines += ["", "## Headline findings", ""] + [f"- {f}" for f in report.findings]
    lines += ["", "Tables: `tables/*.csv`; figures: `figures/*.png`; full report: `index.html`."]
    return "\n".join(lines) + "\n"


def build_report(run, out, correction: str = "bh", level: float = 0.05) -> Path:
    """Analyse the run folder ``run`` and write the report into ``out``; returns index.html.
    The game's own sections (``Game.report_ref``) follow the sections every game shares;
    ``correction`` and ``level`` set how they correct for many comparisons."""
    run = open_run(run)
    out = Path(out)
    for folder in ("figures", "tables"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    method_name = {"bh": "Benjamini-Hochberg", "holm": "Holm"}[correction]
    report = Report(out, correction, level, f"{method_name} adjusted p < {level:g}")
    _strategy_section(report, run)
    _seat_section(report, run)
    resolve(run.game.report_ref)(report, run)
    (out / "summary.md").write_text(_summary_md(run, report), encoding="utf-8")
    index = out / "index.html"
    index.write_text(_html(run, report), encoding="utf-8")
    return index
