"""``neom compare``: an A/B design report of two catalogues played on the same seeds.

Both catalogues are played through the runner with the same master seed, game ids, seats and
strategies, so strategy and seat outcomes pair game by game (paired differences with 95%
intervals). Cornerstones and tiles are matched by name; their effects (from
``analysis.cornerstones`` / ``analysis.tiles``) come from different seats in the two runs, so a
shift's interval combines the two standard errors. The first screen answers "did the change
fix the imbalance?": each cornerstone or tile flagged in the baseline, still flagged or not.
"""

import html
import math
from pathlib import Path

from sim.core.errors import UserError
from sim.neom.constants import VARIANT_NAMES

BASELINE = "baseline"
CANDIDATE = "candidate"
Z95 = 1.959963984540054


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="A/B report: two catalogues played on the same seeds",
        description="Play a baseline and a candidate catalogue on the same seeds and write a "
        "report of what moved (HTML, Markdown, CSV).",
    )
    parser.add_argument("--baseline", required=True, help="baseline catalogue (TOML)")
    parser.add_argument("--candidate", required=True, help="candidate catalogue (TOML)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=2000, help="games per catalogue (2000)")
    parser.add_argument(
        "--strategies", required=True, help="one strategy per seat, comma-separated"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant", default="standard", choices=tuple(VARIANT_NAMES))
    parser.add_argument("--workers", type=int, default=None, help="worker processes (all)")
    parser.add_argument("--out", default=None, help="report folder (default: reports/compare)")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace the runs of an earlier comparison"
    )
    parser.add_argument(
        "--level", type=float, default=0.05, help="adjusted p-value below which to flag (0.05)"
    )
    parser.set_defaults(func=run_compare)


def paired_by_group(base, cand, group: str):
    """Per ``group`` value: paired differences (candidate - baseline) of win share and total
    score over the seats of the same game."""
    import polars as pl

    from analysis.core.stats import paired_difference

    joined = base.join(cand, on=["game_id", "seat"], suffix="_b")
    rows = []
    for (key,), part in joined.group_by(group, maintain_order=True):
        row = {group: key, "n": part.height}
        for name, column in (("win", "win_share"), ("score", "total")):
            diff = paired_difference(part[f"{column}_b"].to_numpy(), part[column].to_numpy())
            row[f"{name}_base"] = float(part[column].mean())
            row[f"{name}_cand"] = float(part[f"{column}_b"].mean())
            row[f"{name}_shift"] = diff["mean"]
            row[f"{name}_shift_lo"] = diff["lo"]
            row[f"{name}_shift_hi"] = diff["hi"]
        rows.append(row)
    return pl.DataFrame(rows).sort(group)


def effect_shifts(base, cand):
    """Match two effect tables (cornerstone_table / tile_table) by tile name: flags and effects
    before and after, and the shift with an interval from both standard errors."""
    import polars as pl

    keep = ["tile_name", "flag", "effect", "effect_lo", "effect_hi", "effect_q"]
    joined = base.select(keep).join(
        cand.select(keep), on="tile_name", how="full", suffix="_cand", coalesce=True
    )
    se = lambda suffix: (pl.col(f"effect_hi{suffix}") - pl.col(f"effect_lo{suffix}")) / (2 * Z95)  # noqa: E731
    shift_se = (se("") ** 2 + se("_cand") ** 2).sqrt()
    return (
        joined.with_columns(
            (pl.col("effect_cand") - pl.col("effect")).alias("shift"),
            pl.col("flag").fill_null("absent"),
            pl.col("flag_cand").fill_null("absent"),
        )
        .with_columns(
            (pl.col("shift") - Z95 * shift_se).alias("shift_lo"),
            (pl.col("shift") + Z95 * shift_se).alias("shift_hi"),
        )
        .sort("tile_name")
    )


def verdicts(shifts, what: str) -> list[str]:
    """One line per item flagged in the baseline, or a line saying none was."""
    flagged = shifts.filter(shifts["flag"].is_in(["strong", "weak"]))
    if flagged.height == 0:
        lines = [f"No {what} flagged in the baseline."]
    else:
        lines = []
        for r in flagged.iter_rows(named=True):
            if r["flag_cand"] == "absent":
                state = "not in the candidate"
            elif r["flag_cand"] == r["flag"]:
                state = f"STILL flagged {r['flag']}"
            elif r["flag_cand"] == "":
                # Only a shift whose interval excludes 0, towards fair, counts as a fix.
                toward = r["shift_hi"] < 0 if r["flag"] == "strong" else r["shift_lo"] > 0
                state = (
                    "FIXED: no longer flagged"
                    if toward
                    else "no longer flagged, but the shift is not significant"
                )
            else:
                state = f"now flagged {r['flag_cand']}"
            lines.append(
                f"{what[:-1].capitalize()} {r['tile_name']} (baseline: {r['flag']}): {state}; "
                f"shift {_pts(r['shift'], r['shift_lo'], r['shift_hi'])}."
            )
    new = shifts.filter(
        shifts["flag_cand"].is_in(["strong", "weak"]) & ~shifts["flag"].is_in(["strong", "weak"])
    )
    for r in new.iter_rows(named=True):
        lines.append(f"Newly flagged {r['flag_cand']} in the candidate: {r['tile_name']}.")
    return lines


def _pts(x, lo, hi) -> str:
    from analysis.core.report import num_interval

    if x is None or lo is None or math.isnan(x):
        return "–"
    return num_interval(100 * x, 100 * lo, 100 * hi) + " pts"


def _config(args, catalog: str, out: Path):
    from sim.core.runner import RunConfig
    from sim.core.strategies import split_strategies

    return RunConfig(
        out=out,
        strategies=split_strategies(args.strategies),
        players=args.players,
        games=args.games,
        seed=args.seed,
        data=Path(catalog),
        rules={"variant": VARIANT_NAMES[args.variant]},
        workers=args.workers,
        events=True,  # tile statistics come from the event log
        overwrite=args.overwrite,
        progress=False,
        command="neom compare",
    )


def _shift_section(report, name: str, title: str, shifts, what: str) -> None:
    from analysis.core import figures
    from analysis.core.report import html_table

    report.table(f"{name}_shifts", shifts)
    shown = shifts.filter(shifts["shift"].is_not_null() & shifts["shift"].is_not_nan())
    figure = figures.forest(
        shown.select(
            "tile_name",
            (shown["shift"] * 100).alias("shift"),
            (shown["shift_lo"] * 100).alias("shift_lo"),
            (shown["shift_hi"] * 100).alias("shift_hi"),
        ),
        "tile_name",
        "shift",
        f"{title}: shift of the effect, candidate - baseline (95% CI)",
        "percentage points",
    )
    columns = [
        (what, lambda r: r["tile_name"]),
        ("flag before", lambda r: r["flag"]),
        ("flag after", lambda r: r["flag_cand"]),
        ("effect before", lambda r: _pts(r["effect"], r["effect_lo"], r["effect_hi"])),
        (
            "effect after",
            lambda r: _pts(r["effect_cand"], r["effect_lo_cand"], r["effect_hi_cand"]),
        ),
        ("shift [95% CI]", lambda r: _pts(r["shift"], r["shift_lo"], r["shift_hi"])),
        ("q after", lambda r: "–" if r["effect_q_cand"] is None else f"{r['effect_q_cand']:.3g}"),
    ]
    order = shown.sort(shown["shift"].abs(), descending=True)
    report.section(
        name,
        title,
        [
            "<p>Effect: win share above the seat's expected share (see the balance report). "
            "The two runs' owners are different seats, so the shift's interval combines both "
            "standard errors.</p>",
            report.figure(f"{name}_shifts", figure, f"{title} shifts"),
            html_table(order, columns),
        ],
    )


def _paired_section(report, name: str, title: str, frame, label: str) -> None:
    from analysis.core.report import html_table, num_interval, pct

    report.table(name, frame)
    columns = [
        (label, lambda r: str(r[frame.columns[0]])),
        ("pairs", lambda r: r["n"]),
        ("win share before → after", lambda r: f"{pct(r['win_base'])} → {pct(r['win_cand'])}"),
        (
            "Δ win share [95% CI]",
            lambda r: _pts(r["win_shift"], r["win_shift_lo"], r["win_shift_hi"]),
        ),
        ("score before → after", lambda r: f"{r['score_base']:.1f} → {r['score_cand']:.1f}"),
        (
            "Δ score [95% CI]",
            lambda r: num_interval(r["score_shift"], r["score_shift_lo"], r["score_shift_hi"], 2),
        ),
    ]
    report.section(
        name,
        title,
        [
            "<p>Paired: the same game and seat under both catalogues (candidate - baseline).</p>",
            html_table(frame, columns),
        ],
    )


def build_comparison(base_path, cand_path, out, level: float = 0.05) -> Path:
    """Write the A/B report of two run folders played on the same seeds; returns index.html."""
    import polars as pl

    from analysis.core.load import open_run
    from analysis.core.report import CSS, Report
    from analysis.neom import cornerstones, tiles

    base, cand = open_run(base_path), open_run(cand_path)
    if (base.manifest["seed"], base.manifest["games"], base.manifest["players"]) != (
        cand.manifest["seed"],
        cand.manifest["games"],
        cand.manifest["players"],
    ):
        raise UserError(f"{base_path} and {cand_path}: not played on the same seeds and games")
    out = Path(out)
    for folder in ("figures", "tables"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    report = Report(out)
    columns = ["game_id", "seat", "strategy_name", "win_share", "total"]
    base_players = base.players.select(columns).collect()
    cand_players = cand.players.select(columns).collect()
    strategies = paired_by_group(base_players, cand_players, "strategy_name")
    seats = paired_by_group(base_players, cand_players, "seat")

    cs_shifts = effect_shifts(
        cornerstones.cornerstone_table(base, level=level),
        cornerstones.cornerstone_table(cand, level=level),
    )
    findings = verdicts(cs_shifts, "cornerstones")
    base_tiles, cand_tiles = (
        tiles.tile_table(base, level=level),
        tiles.tile_table(cand, level=level),
    )
    tile_shifts = None
    if base_tiles is not None and cand_tiles is not None:
        tile_shifts = effect_shifts(base_tiles, cand_tiles)
        findings += verdicts(tile_shifts, "tiles")
    moved = strategies.filter((pl.col("win_shift_lo") > 0) | (pl.col("win_shift_hi") < 0))
    findings += [
        f"Strategy {r['strategy_name']}: win share "
        f"{_pts(r['win_shift'], r['win_shift_lo'], r['win_shift_hi'])}."
        for r in moved.iter_rows(named=True)
    ] or ["No strategy's win share moved significantly (95% paired intervals include 0)."]
    report.findings.extend(findings)

    _shift_section(report, "cornerstones", "Cornerstones", cs_shifts, "cornerstone")
    if tile_shifts is not None:
        _shift_section(report, "tiles", "Generation tiles", tile_shifts, "tile")
    _paired_section(report, "strategies", "Strategies", strategies, "strategy")
    _paired_section(report, "seats", "Seats", seats, "seat")

    identity = [
        ("baseline", f"{base.data_name} ({base.path})"),
        ("candidate", f"{cand.data_name} ({cand.path})"),
        ("players / games / seed", f"{base.manifest['players']} / {base.manifest['games']} / "
         f"{base.manifest['seed']}"),
        ("strategies", ", ".join(base.strategy_names)),
        ("flags", f"Benjamini-Hochberg adjusted p < {level:g}, within each run"),
    ]  # fmt: skip
    reconstructed = base.reconstructed or cand.reconstructed
    title = f"NEOM A/B comparison: {base.data_name} vs {cand.data_name}"
    notice = (
        '<p class="notice">RECONSTRUCTED catalogue involved: findings describe the '
        "reconstruction.</p>"
        if reconstructed
        else ""
    )
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in identity
    )
    nav = "".join(f'<a href="#{key}">{html.escape(t)}</a>' for key, t, _ in report.sections)
    body = "".join(
        f'<h2 id="{key}">{html.escape(t)}</h2>' + "".join(parts)
        for key, t, parts in report.sections
    )
    items = "".join(f"<li>{html.escape(f)}</li>" for f in report.findings)
    page = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}'
        f"</title><style>{CSS}</style></head><body><h1>{html.escape(title)}</h1>{notice}"
        f'<table>{rows}</table><h2 id="findings">Did the change fix the imbalance?</h2>'
        f'<ul class="findings">{items}</ul><nav>{nav}</nav>{body}</body></html>'
    )
    summary = [f"# {title}", ""] + [f"- {k}: {v}" for k, v in identity]
    summary += ["", "## Did the change fix the imbalance?", ""] + [f"- {f}" for f in findings]
    (out / "summary.md").write_text("\n".join(summary) + "\n", encoding="utf-8")
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def run_compare(args) -> int:
    from sim.core.runner import run_simulation

    for option, path in (("--baseline", args.baseline), ("--candidate", args.candidate)):
        if not Path(path).is_file():
            raise UserError(f"{option} {path}: no such catalogue file")
    if not 0.0 < args.level < 1.0:
        raise UserError(f"--level {args.level}: must be between 0 and 1")
    out = Path(args.out) if args.out else Path("reports") / "compare"
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    runs = out / "runs"
    run_simulation(_config(args, args.baseline, runs / BASELINE))
    run_simulation(_config(args, args.candidate, runs / CANDIDATE))
    print(build_comparison(runs / BASELINE, runs / CANDIDATE, out, level=args.level))
    return 0
