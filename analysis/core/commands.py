"""``neom report RUN --out reports/NAME``: write a run's balance report, print index.html's path."""

from pathlib import Path

from analysis.core.stats import CORRECTIONS
from sim.core.errors import UserError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write the balance report (HTML, Markdown, figures, CSV tables) of a run folder",
        description="Analyse a run folder from `neom simulate` and write its balance report.",
    )
    parser.add_argument("run", help="run folder (manifest.json, catalog.toml, Parquet tables)")
    parser.add_argument(
        "--out", help="report folder (default: reports/<run folder name>)", default=None
    )
    parser.add_argument(
        "--correction",
        choices=sorted(CORRECTIONS),
        default="bh",
        help="multiple-comparison correction for flags: bh = Benjamini-Hochberg (default), "
        "holm = Holm",
    )
    parser.add_argument(
        "--level", type=float, default=0.05, help="adjusted p-value below which to flag (0.05)"
    )
    parser.set_defaults(func=run_report)


def run_report(args) -> int:
    # Imported here so that `neom --help` does not load polars and matplotlib.
    from analysis.core.report import build_report

    if not 0.0 < args.level < 1.0:
        raise UserError(f"--level {args.level}: must be between 0 and 1")
    out = Path(args.out) if args.out else Path("reports") / Path(args.run).resolve().name
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    print(build_report(args.run, out, correction=args.correction, level=args.level))
    return 0
