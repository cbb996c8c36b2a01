"""Helpers several test files share: a command's one-line error, a small run folder played in
this process, and a script's games played compiled or interpreted in a fresh process."""

import json
import os
import subprocess
import sys
from pathlib import Path

from sim.core.runner import RunConfig, run_simulation

TESTS = Path(__file__).resolve().parent


def one_line_error(capsys, code: int, *words: str) -> str:
    """The command failed with exactly one line on stderr holding every word."""
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith("neom: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    return err


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
    """Run ``script`` (``{tests}`` in it: this folder) in a fresh Python with ``games`` as its
    JSON argument, compiled or with NUMBA_DISABLE_JIT=1, any RuntimeWarning an error; its
    printed JSON."""
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
