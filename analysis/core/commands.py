"""``neom report RUN --out reports/NAME``: write a run's balance report, print index.html's path.

The report folder is the command's own (``sim.core.outputs``): ``--out`` is a new or empty
folder or an earlier report, which lists its files in ``neom-listing.json``; any other folder is
refused untouched. The report is built in a hidden folder next to ``--out`` and published when it
is whole: the earlier report's listed files (each still as written: one the user changed since
is refused by name) are replaced, anything else in the folder is kept, and a failure (a crash,
a full disk, a read-only folder) leaves the folder as it was.
"""

from collections.abc import Callable
from pathlib import Path

from analysis.core.stats import CORRECTIONS
from sim.core.errors import UserError


def register(parser) -> None:
    parser.description = "Analyse a run folder from `neom simulate` and write its balance report."
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
    add_flagging_options(parser)
    parser.add_argument(
        "--check",
        default=None,
        metavar="RUN2",
        help="a run of a stronger field on the same catalogue: adds a section setting the "
        "findings side by side",
    )
    parser.add_argument(
        "--probe",
        type=int,
        default=0,
        metavar="N",
        help="NEOM: replay the top N flagged items on the run's deals with their VP moved "
        "toward the band, for VP equivalents from their own slope (1-3 x --probe-games games "
        "each; default 0: none)",
    )
    parser.add_argument(
        "--probe-games",
        type=int,
        default=None,
        metavar="G",
        help="games per played value of a probe (default 8000, at most the run's)",
    )
    add_execution_options(parser)
    parser.set_defaults(func=run_report)


def add_flagging_options(parser) -> None:
    """--level, --band, --min-n: how an effect is flagged, as the report and a comparison
    flag it."""
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
    from sim.core.workers import check_scheduler

    workers = getattr(args, "workers", None)
    if workers is not None and workers < 1:
        raise UserError(f"--workers {workers}: must be at least 1")
    check_scheduler(getattr(args, "scheduler", None), getattr(args, "backend", "local"))
    return Execution(
        workers=workers,
        backend=getattr(args, "backend", "local"),
        scheduler=getattr(args, "scheduler", None),
    )


def run_report(args) -> int:
    # Imported here so that `neom --help` does not load polars and matplotlib.
    from analysis.core.report import build_report
    from sim.core.commands.options import check_min_n

    if not 0.0 < args.level < 1.0:
        raise UserError(f"--level {args.level}: must be between 0 and 1")
    if not 0.0 <= args.band < 100.0:
        raise UserError(f"--band {args.band}: must be between 0 and 100 pct-pts")
    check_min_n(args.min_n)
    probe_n = getattr(args, "probe", 0) or 0
    probe_games = getattr(args, "probe_games", None)
    if probe_n < 0:
        raise UserError(f"--probe {probe_n}: must be 0 or more items")
    if probe_games is not None and probe_games < 1:
        raise UserError(f"--probe-games {probe_games}: must be at least 1")
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
            # The earlier report's probes are read from --out, the new ones written in folder.
            probe={"items": probe_n, "games": probe_games, "previous": out / "vp_probes.json"},
        )

    index = write_report(out, build)
    print(index)
    return 0


def write_report(out: Path, build: Callable[[Path], Path]) -> Path:
    """Build a report with ``build(folder)`` (returns its index.html) in a hidden folder next
    to ``out`` and publish it there (see the module docstring); return ``out``'s index.html."""
    from sim.core.outputs import claim_folder, publish, staging_folder, writer_lock

    out = Path(out)
    command = "neom report"
    with writer_lock(
        out,
        command,
        "report folder",
        check=lambda: claim_folder(out, command, replaces_own=True),
    ) as claim:
        with staging_folder(out) as staging:
            try:
                index = build(staging)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                raise UserError(f"--out {out}: cannot write the report ({reason})") from None
            publish(staging, claim)
    return out / Path(index).relative_to(staging)


def claim_json(args, out: Path):
    """``--json``'s path, checked to lie outside ``out`` and claimed before any game (on
    ``--resume`` only checked: :func:`play_into_folder` claims it once the result is known not
    to be complete yet); None without ``--json`` or on ``--resume``."""
    from sim.core.outputs import check_outside, claim_file

    if not args.json:
        return None
    check_outside(args.json, "--json", out)
    return None if args.resume else claim_file(args.json, "--json", args.overwrite)


def play_into_folder(args, out: Path, json_path, command: str, what: str, parameters, runs,
                     configs, write) -> bool:  # fmt: skip
    """The result folder ``out`` of ``command``, which plays ``configs`` (its run folders
    ``runs``, each already checked) and writes what it finds from them: the folder is claimed
    with ``parameters``, the runs are played or resumed, ``write(staging)`` writes the folder's
    files and returns ``--json``'s content (written to ``json_path``, from
    :func:`claim_json`), and the folder is published. False, with a note, where the ``what``
    is already complete."""
    import sys

    from sim.core.outputs import (
        claim_file,
        claim_folder,
        publish,
        staging_folder,
        write_file,
        writer_lock,
    )
    from sim.core.runner import run_simulation

    def claim():
        return claim_folder(
            out,
            command,
            overwrite=args.overwrite,
            resume=args.resume,
            parameters=parameters,
            runs=runs,
        )

    with writer_lock(out, command, f"{what} folder", check=claim) as claimed:
        if claimed.state == "complete":
            print(
                f"neom: note: {out}: the {what} is already complete; nothing to do", file=sys.stderr
            )
            return False
        if args.json and args.resume:
            json_path = claim_file(args.json, "--json")
        for config in configs:
            run_simulation(config)
        with staging_folder(out) as staging:
            json_text = write(staging)
            publish(staging, claimed)
        if json_path is not None:
            write_file(json_path, json_text, "--json")
    return True
