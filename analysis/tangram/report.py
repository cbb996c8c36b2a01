"""A stop-gap standalone report of a Tangram City run, until ``neom report`` is generic.

``python -m analysis.tangram.report RUN --out DIR [--compare OTHER_RUN]`` writes
``DIR/index.html`` (self-contained), ``DIR/summary.md``, ``DIR/tables/*.csv`` and
``DIR/figures/*.png``: the run's identity (saying RECONSTRUCTION when the tile set is one), the
strategies' win shares, then :func:`analysis.tangram.sections.add_sections`, and with
``--compare`` an A/B section of the two runs on the same deals.
"""

import argparse
import html
import sys
from pathlib import Path

import polars as pl

from analysis.core.report import CSS, Report, html_table, num, pct
from analysis.tangram import tables
from analysis.tangram.load import open_run
from analysis.tangram.sections import _mean, _share, add_sections, comparison_section
from sim.core.errors import UserError
from sim.tangram.rules import describe_rules, rules_from_dict


def _identity(run) -> list[tuple[str, str]]:
    m = run.manifest
    return [
        ("run", str(run.path)),
        ("game", "Tangram City"),
        ("tile set", tables.data_label(run)),
        ("tile-set digest", str(m["data"].get("digest", ""))[:16]),
        ("players", str(m["players"])),
        ("strategies", ", ".join(s["name"] for s in m["strategies"])),
        ("seats", str(m.get("seats", ""))),
        ("games", str(m["games"])),
        ("seed", str(m["seed"])),
        *(("rule", line) for line in describe_rules(rules_from_dict(m["rules"]))),
    ]


def strategy_section(report, run) -> None:
    shares = tables.strategy_shares(run)
    report.table("tangram_strategies", shares)
    for row in shares.iter_rows(named=True):
        report.findings.append(
            f"{row['strategy_name']} wins {_share('share')(row)} of its seats in "
            f"{row['n_players']}-player games (fair share {pct(row['fair'])})."
        )
    report.section(
        "strategies",
        "Strategies",
        [
            "<p>Win share: a sole win counts 1, a k-way shared win 1/k; 95% Wilson intervals.</p>",
            html_table(
                shares,
                [
                    ("players", lambda r: r["n_players"]),
                    ("strategy", lambda r: r["strategy_name"]),
                    ("seats", lambda r: r["n"]),
                    ("win share [95% CI]", _share("share")),
                    ("fair", lambda r: pct(r["fair"])),
                    ("mean score [95% CI]", _mean("total")),
                ],
            ),
        ],
    )


def build_report(run_path, out, compare=None) -> Path:
    run = open_run(run_path)
    out = Path(out)
    for folder in ("figures", "tables"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    report = Report(out)
    strategy_section(report, run)
    add_sections(report, run)
    if compare is not None:
        comparison_section(report, run, open_run(compare), str(run_path), str(compare))
    identity = _identity(run)
    title = f"Tangram City report: {tables.data_label(run)}, {run.manifest['games']} games"
    notice = ""
    if tables.reconstructed(run):
        notice = (
            '<p class="notice">RECONSTRUCTED tile set: the tile shapes, "!" pairs and start '
            "pieces behind this report are a reconstruction, not the published game. Findings "
            "about named tiles describe the reconstruction.</p>"
        )
    table = html_table(
        pl.DataFrame({"key": [k for k, _ in identity], "value": [v for _, v in identity]}),
        [("", lambda r: r["key"]), ("", lambda r: r["value"])],
    )
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in report.findings)
    nav = "".join(f'<a href="#{k}">{html.escape(t)}</a>' for k, t, _ in report.sections)
    body = "".join(
        f'<h2 id="{k}">{html.escape(t)}</h2>' + "".join(parts) for k, t, parts in report.sections
    )
    (out / "index.html").write_text(
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
        f"{html.escape(title)}</title><style>{CSS}</style></head><body><h1>"
        f"{html.escape(title)}</h1>{notice}{table}<h2>Headline findings</h2><ul "
        f'class="findings">{findings}</ul><nav>{nav}</nav>{body}</body></html>',
        encoding="utf-8",
    )
    lines = [f"# {title}", ""]
    if tables.reconstructed(run):
        lines += ["**RECONSTRUCTED tile set: findings describe the reconstruction.**", ""]
    lines += [f"- {k}: {v}" for k, v in identity]
    lines += ["", "## Headline findings", ""] + [f"- {f}" for f in report.findings]
    lines += ["", f"Wall time of the run: {num(run.manifest['timings']['wall_s'])} s."]
    (out / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out / "index.html"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--out", required=True)
    parser.add_argument("--compare", help="a second run on the same deals: adds an A/B section")
    args = parser.parse_args(argv)
    try:
        index = build_report(args.run, args.out, args.compare)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(index)
    return 0


if __name__ == "__main__":
    sys.exit(main())
