"""NEOM's games per CPU-second against OpenSpiel's, on one core, in the same run.

``python -m sim.tools.bench_openspiel`` (``make bench-openspiel``) times, in alternated turns on
one core of one process:

- ``neom simulate`` of 4-player NEOM games, Parquet included (the runner with ``--workers 1``
  plays in this process), for the random lineup and the greedy lineup;
- OpenSpiel's ``hearts`` with 4 players played by Python-driven uniform random rollouts
  (``pyspiel``: sample each chance outcome by its probability, pick each move uniformly among
  the legal actions, until the game ends), the yardstick of issue 36.

Each round measures every job once, in an order that alternates between rounds, so a change in
the machine's load falls on both sides of a ratio; the figures are the rounds' median, minimum
and maximum of games per CPU-second and of the ratio NEOM / hearts. The compile cache is loaded
(and one batch played) before any clock starts. Results go to ``bench/openspiel.json`` with the
machine, load and versions. ``pyspiel`` is an optional dependency: ``pip install -e '.[bench]'``.
"""

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from sim.core.errors import UserError
from sim.core.machine import cpu_model, source_commit, write_benchmark
from sim.core.runner import RunConfig, run_simulation

LINEUPS = {"random": ("random",) * 4, "greedy": ("greedy",) * 4}


def hearts_rollouts(games: int, seed: int) -> int:
    """Plays ``games`` games of 4-player hearts by uniform random rollouts driven from Python;
    returns the moves made (a check that whole games were played)."""
    import pyspiel

    game = pyspiel.load_game("hearts")
    rng = random.Random(seed)
    moves = 0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, probabilities)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            moves += 1
    return moves


def _neom_games(lineup: tuple[str, ...], games: int, seed: int, scratch: Path) -> float:
    """CPU seconds of a ``--workers 1`` run of ``games`` 4-player games (Parquet written)."""
    config = RunConfig(
        out=scratch / "run", strategies=lineup, games=games, seed=seed, workers=1,
        progress=False, overwrite=True,
    )  # fmt: skip
    start = time.process_time()
    run_simulation(config)
    return time.process_time() - start


def _hearts_games(games: int, seed: int) -> float:
    start = time.process_time()
    hearts_rollouts(games, seed)
    return time.process_time() - start


def _summary(values: list[float]) -> dict:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sim.tools.bench_openspiel", description=__doc__
    )
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds (5)")
    parser.add_argument("--random-games", type=int, default=8000, help="random games a turn")
    parser.add_argument("--greedy-games", type=int, default=1200, help="greedy games a turn")
    parser.add_argument("--hearts-games", type=int, default=400, help="hearts games a turn")
    parser.add_argument("--out", type=Path, default=Path("bench/openspiel.json"))
    args = parser.parse_args(argv)
    for option in ("rounds", "random_games", "greedy_games", "hearts_games"):
        if getattr(args, option) < 1:
            raise UserError(
                f"--{option.replace('_', '-')} {getattr(args, option)}: must be 1 or more"
            )
    try:
        spiel_version = version("open_spiel")
    except PackageNotFoundError:
        raise UserError("OpenSpiel (pyspiel) is not installed: pip install -e '.[bench]'") from None
    if args.random_games % 4 or args.greedy_games % 4:
        raise UserError("--random-games and --greedy-games: a multiple of 4 (the players)")

    sizes = {"random": args.random_games, "greedy": args.greedy_games}
    per_s: dict[str, list[float]] = {"random": [], "greedy": [], "hearts": []}
    with tempfile.TemporaryDirectory(prefix="neom-bench-openspiel-") as scratch:
        for lineup in LINEUPS.values():  # load the compile cache outside the clock
            _neom_games(lineup, 8, 0, Path(scratch))
        _hearts_games(2, 0)
        for turn in range(args.rounds):
            jobs = ["random", "hearts", "greedy", "hearts"]
            for job in jobs if turn % 2 == 0 else jobs[::-1]:
                seed = 1000 + turn
                if job == "hearts":
                    cpu = _hearts_games(args.hearts_games, seed)
                    per_s["hearts"].append(args.hearts_games / cpu)
                else:
                    cpu = _neom_games(LINEUPS[job], sizes[job], seed, Path(scratch))
                    per_s[job].append(sizes[job] / cpu)
            print(
                f"round {turn + 1}/{args.rounds}: random {per_s['random'][-1]:,.0f}, greedy "
                f"{per_s['greedy'][-1]:,.0f}, hearts {per_s['hearts'][-1]:,.0f} games per CPU-s",
                flush=True,
            )

    hearts = per_s["hearts"]
    # Each NEOM turn against the hearts turns of its own round (two a round).
    ratios = {
        job: [v / statistics.mean(hearts[2 * i : 2 * i + 2]) for i, v in enumerate(per_s[job])]
        for job in ("random", "greedy")
    }
    report = {
        "what": "4-player games per CPU-second on one core: neom simulate --workers 1 (Parquet "
        "included) vs OpenSpiel hearts by Python-driven uniform random rollouts",
        "machine": cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "commit": source_commit(),
        "versions": {"numba": version("numba"), "open_spiel": spiel_version},
        "rounds": args.rounds,
        "games_a_turn": sizes | {"hearts": args.hearts_games},
        "games_per_cpu_s": {job: _summary(values) for job, values in per_s.items()},
        "ratio_to_hearts": {job: _summary(values) for job, values in ratios.items()},
    }
    write_benchmark(args.out, report)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    raise SystemExit(guarded(main, "python -m sim.tools.bench_openspiel"))
