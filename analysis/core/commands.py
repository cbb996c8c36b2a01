"""``neom report RUN --out reports/NAME``: write a run's balance report, print index.html's path.

The report is built in a hidden folder next to ``--out`` and renamed into place when it is
whole, so a failure (a crash, a full disk, a read-only folder) leaves no half-written report:
the folder is as it was. ``--out`` is a new or empty folder or a previous report; a previous
report's files (``index.html``, ``summary.md``, ``findings.json``, ``figures/*.png``,
``tables/*.csv``) are replaced and anything else in it is kept; any other folder is refused.
"""

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from analysis.core.stats import CORRECTIONS
from sim.core.errors import UserError

REPORT_FILES = ("index.html", "summary.md", "findings.json")
REPORT_FOLDERS = {"figures": ".png", "tables": ".csv"}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write the balance report (HTML, Markdown, figures, CSV tables) of a run folder",
        description="Analyse a run folder from `neom simulate` and write its balance report.",
    )
    parser.add_argument(
        "run",
        nargs="+",
        help="run folder (manifest.json, catalog.toml, Parquet tables); several: the first is "
        "reported in full and all of them side by side (e.g. one run per player count)",
    )
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
    parser.add_argument(
        "--band",
        type=float,
        default=2.0,
        help="practical band in pct-pts of win share: an effect is flagged only when its whole "
        "interval lies outside +-BAND (2)",
    )
    parser.add_argument(
        "--min-n",
        type=int,
        default=100,
        help="seats below which an effect is not tested nor flagged (100)",
    )
    parser.add_argument(
        "--check",
        default=None,
        metavar="RUN2",
        help="a run of a stronger field on the same catalogue: adds a section setting the "
        "findings side by side",
    )
    add_execution_options(parser)
    parser.set_defaults(func=run_report)


def add_execution_options(parser) -> None:
    """--workers, --backend, --scheduler: where a run is read chunk by chunk (as simulate)."""
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes reading the run (default: all cores for a large run, else 1)",
    )
    parser.add_argument("--backend", choices=("local", "dask"), default="local")
    parser.add_argument(
        "--scheduler", default=None, help="Dask scheduler address (default: a local cluster)"
    )


def execution_of(args):
    """The ``analysis.core.batches.Execution`` the options ask for."""
    from analysis.core.batches import Execution

    workers = getattr(args, "workers", None)
    if workers is not None and workers < 1:
        raise UserError(f"--workers {workers}: must be at least 1")
    return Execution(
        workers=workers,
        backend=getattr(args, "backend", "local"),
        scheduler=getattr(args, "scheduler", None),
    )


def run_report(args) -> int:
    # Imported here so that `neom --help` does not load polars and matplotlib.
    from analysis.core.report import build_report

    if not 0.0 < args.level < 1.0:
        raise UserError(f"--level {args.level}: must be between 0 and 1")
    if not 0.0 <= args.band < 100.0:
        raise UserError(f"--band {args.band}: must be between 0 and 100 pct-pts")
    if args.min_n < 2:
        raise UserError(f"--min-n {args.min_n}: must be at least 2")
    execution = execution_of(args)
    runs = args.run if isinstance(args.run, list) else [args.run]
    out = Path(args.out) if args.out else Path("reports") / Path(runs[0]).resolve().name

    def build(folder: Path) -> Path:
        return build_report(
            runs if len(runs) > 1 else runs[0],
            folder,
            correction=args.correction,
            level=args.level,
            band=args.band / 100.0,
            min_n=args.min_n,
            check=args.check,
            execution=execution,
        )

    index = write_report(out, build)
    print(index)
    return 0


def _is_report_file(path: Path, folder: str = "") -> bool:
    """A file a report writes: ``index.html``, ``summary.md``, ``figures/*.png``,
    ``tables/*.csv`` (regular files, not links)."""
    if path.is_symlink() or not path.is_file():
        return False
    if folder:
        return path.suffix == REPORT_FOLDERS[folder]
    return path.name in REPORT_FILES


def check_report_folder(out: Path) -> None:
    """Refuse an ``--out`` that is not a new or empty folder or a previous report."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UserError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not _is_report_file(out / "index.html"):
        raise UserError(
            f"--out {out}: not empty and not a report folder (no index.html): will not write "
            "into it"
        )


def write_report(out: Path, build: Callable[[Path], Path]) -> Path:
    """Build a report with ``build(folder)`` (returns its index.html) in a hidden folder next
    to ``out`` and move it into place; return ``out``'s index.html. On any failure the
    hidden folder is removed and ``out`` is left as it was."""
    out = Path(out)
    check_report_folder(out)
    made = [parent for parent in out.parents if not parent.exists()]  # deepest first
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # mkdtemp's folder is private; a report is not
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write the report ({exc.strerror})") from None
    try:
        index = build(staging)
        _move_into_place(staging, out)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)  # the staging folder is wholly ours
        for parent in made:  # and so are the folders made for it, if still empty
            try:
                parent.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc)
            raise UserError(f"--out {out}: cannot write the report ({reason})") from None
        raise
    return out / Path(index).relative_to(staging)


def _move_into_place(staging: Path, out: Path) -> None:
    """Rename the finished report to ``out``. A previous report there is first renamed
    aside; its report files are then deleted and anything else in it moved into the new one."""
    if not out.exists():
        os.rename(staging, out)
        return
    if not any(out.iterdir()):
        out.rmdir()
        os.rename(staging, out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    old.rmdir()
    os.rename(out, old)
    os.rename(staging, out)
    for entry in sorted(old.iterdir()):
        if entry.name in REPORT_FOLDERS and entry.is_dir() and not entry.is_symlink():
            for inner in sorted(entry.iterdir()):
                if _is_report_file(inner, entry.name):
                    inner.unlink()
                elif not (out / entry.name / inner.name).exists():
                    (out / entry.name).mkdir(exist_ok=True)
                    os.rename(inner, out / entry.name / inner.name)
            if not any(entry.iterdir()):
                entry.rmdir()
        elif _is_report_file(entry):
            entry.unlink()
        elif not (out / entry.name).exists():
            os.rename(entry, out / entry.name)
    if not any(old.iterdir()):
        old.rmdir()
