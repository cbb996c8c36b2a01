"""Helpers several test files share: a command's one-line error, a small run folder played in
this process, and a script's games played compiled or interpreted in a fresh process."""

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sim.core import store
from sim.core.runner import RunConfig, run_simulation

TESTS = Path(__file__).resolve().parent
# A small NEOM run (8 random 4-player games in 4 batches), as a config and as a command line.
SMALL = RunConfig(
    out=Path("unused"),
    strategies=("random",) * 4,
    players=4,
    games=8,
    seed=3,
    batch_size=2,
    workers=1,
    progress=False,
)
SIMULATE = ["simulate", "--games", "8", "--batch-size", "2", "--seed", "3", "--workers", "1"]
SIMULATE += ["--strategies", "random,random,random,random"]


def one_line_error(capsys, code: int, *words: str) -> str:
    """The command failed with exactly one line on stderr holding every word."""
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith("neom: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    return err


def interrupt_after(monkeypatch, batches: int, exception=KeyboardInterrupt) -> None:
    """Raise ``exception`` (Ctrl-C by default) when the command is about to write batch number
    ``batches`` + 1."""
    real = store.RunFolder.write_listed_batch
    count = {"n": 0}

    def write(self, *args, **kwargs):
        if count["n"] == batches:
            raise exception()
        count["n"] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(store.RunFolder, "write_listed_batch", write)


@contextlib.contextmanager
def tmpfs(folder: Path, size: str):
    """``folder`` made and mounted as a file system of its own (a tmpfs of ``size``, to make
    read-only or fill), unmounted afterwards; the test is skipped where none can be mounted."""
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def two_player_set(name: str, replaces: str, seed: int | None = 1) -> str:
    """A strategy file's set (TOML) of greedy tuned to replace ``replaces`` in 2-player games
    against it: what ``neom verify`` checks quickly."""
    seed_line = "" if seed is None else f"seed = {seed}\n"
    return (
        f'[sets.{name}]\nbase = "greedy"\n\n[sets.{name}.tuning]\nplayers = 2\n'
        f'opponents = ["{replaces}"]\nreplaces = "{replaces}"\n{seed_line}'
    )


def small_run(out, game: str, strategies, players: int, games: int, seed: int, **options):
    """A run folder through the generic runner: one worker, no progress bar; ``options`` are
    further RunConfig fields."""
    config = RunConfig(
        out=out,
        strategies=tuple(strategies),
        game=game,
        players=players,
        games=games,
        seed=seed,
        workers=1,
        progress=False,
        **options,
    )
    return run_simulation(config)


def script_games(script: str, games, jit: bool):
    """Run ``script`` (``{tests}`` in it: this folder) with ``games`` as its JSON argument,
    compiled or with NUMBA_DISABLE_JIT=1, any RuntimeWarning an error; its printed JSON.
    Interpreted, it runs in a fresh Python (the switch is read at import); compiled, in this
    process, which runs the same compiled code without a second start-up and cache load."""
    import numba

    if jit and not numba.config.DISABLE_JIT:
        import io
        import warnings

        printed = io.StringIO()
        argv, path = sys.argv, list(sys.path)
        try:
            sys.argv = ["-c", json.dumps(games)]
            with contextlib.redirect_stdout(printed), warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                exec(compile(script.format(tests=str(TESTS)), "<script>", "exec"), {})
        finally:
            sys.argv, sys.path[:] = argv, path
        return json.loads(printed.getvalue())
    env = dict(os.environ)
    if not jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::RuntimeWarning",
            "-c",
            script.format(tests=str(TESTS)),
            json.dumps(games),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def neom_setup(tables, n_players, rules, seed):
    """A NEOM game's setup as ``strategies.neom.play.play_game`` draws it (the same calls in
    the same order on the deal stream of game 0 of ``seed``): boards, cornerstone box, the
    shuffled generation decks, the random-disasters turns, then force/ban. Returns
    (gstate, cs_box, decks, deck_sizes)."""
    import numpy as np

    from sim.core import rng
    from sim.neom import constants as K
    from sim.neom import engine as E

    n = tables.n_tiles
    stream = np.zeros(2, dtype=np.uint64)
    rng.seed_state(stream, np.uint64(rng.stream_seed(rng.master_key(seed), 0, rng.DEAL_STREAM)))
    gstate = np.zeros(E.N_GSTATE, dtype=np.int64)
    pstate = np.zeros((n_players, E.N_PSTATE), dtype=np.int64)
    cells = np.full((n_players, K.N_CELLS), K.EMPTY, dtype=np.int16)
    cs_box = np.full(n, -1, dtype=np.int64)
    decks = np.full((E.N_GENERATIONS, n), -1, dtype=np.int64)
    sizes = np.zeros(E.N_GENERATIONS, dtype=np.int64)
    E.deal_boards(
        stream, tables.board_center.shape[0], n_players, pstate, cells, tables.board_center
    )
    E.shuffled_cornerstones(stream, n_players, tables.tiles, rules, cs_box, gstate)
    for g in range(E.N_GENERATIONS):
        sizes[g] = E.build_deck(g + 1, n_players, tables.tiles, rules, decks[g])
        rng.shuffle(stream, decks[g], sizes[g])
        E.draw_random_turn(stream, g + 1, rules, gstate)
    E.apply_interventions(stream, n_players, tables.tiles, rules, cs_box, gstate, decks, sizes)
    return gstate, cs_box, decks, sizes


# The head of a child process's script that lists what it compiles in ``compiled`` (Numba's
# compile events fire for compiles, not for cache loads).
COMPILE_LISTENER = """
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
"""


def placeholder_figures(monkeypatch) -> None:
    """Reports write each figure as a few placeholder bytes instead of rendering it (most of a
    small report's time): for tests that check the report's files, tables and listing, not its
    images. The file set is unchanged."""
    from analysis.core.report import Report

    def figure(self, name, fig, alt):
        (self.out / "figures" / f"{name}.png").write_bytes(b"\x89PNG placeholder")
        return ""

    monkeypatch.setattr(Report, "figure", figure)


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder ``build(folder)`` fills, built once per test session and shared by the files
    (and the pytest-xdist workers) that ask for it by ``name``: the first caller builds it
    under a file lock, the others wait for it and read the same files. Only for deterministic
    builds that the tests read and never change."""
    import fcntl
    import shutil

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the workers' base folders share this parent
    folder = root / f"built-once-{name}"
    with open(root / f"built-once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


# The synthetic run and its whole report, figures rendered, that tests/test_report.py and
# tests/test_analysis_findings.py both read (building it is seconds of the suite's CPU).
REPORT_CATALOG = TESTS.parent / "sim" / "neom" / "data" / "default_catalog.toml"


def _synthetic_report(folder: Path) -> None:
    from analysis.core.report import Report, build_report
    from analysis.neom.synthetic import write_run

    # Built whole even when a caller's module renders placeholder figures.
    assert Report.figure.__module__ == "analysis.core.report", "placeholder figures are on"
    run = write_run(
        folder / "run", n_games=600, strategies={"greedy": 0.3, "random": 0.0}, boosts={3: 1.5},
        catalog_path=REPORT_CATALOG,
    )  # fmt: skip
    build_report(run, folder / "out" / "report")


def synthetic_report(tmp_path_factory) -> tuple[Path, Path]:
    """(run folder, the report's index.html) of a 600-game synthetic run of greedy (+0.3 SD)
    and random seats with cornerstone 3 planted strong (+1.5 SD): the report has every
    section, figure and table."""
    folder = built_once(tmp_path_factory, "synthetic-report", _synthetic_report)
    return folder / "run", folder / "out" / "report" / "index.html"
