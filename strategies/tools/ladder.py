"""The skill ladder, measured: ``python -m strategies.tools.ladder``.

For each rung after the first: its win rate against the rung below in 2-player games, and its
share of the wins with one seat against three seats of the rung below in 4-player games (a
fair share is 0.25), with 95% Wilson intervals; seats rotate, every game is a fresh deal of
one master seed. Then the average winning score per player count with one strategy on every
seat. Prints Markdown (the tables of docs/strategies.md).
"""

import argparse
import math
import sys

import numpy as np

from sim.neom import records as R
from sim.neom.catalog import load_catalog
from strategies.neom.registry import load_strategy_file, resolve_strategy
from strategies.tools.arena import play_match

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (``successes`` may be fractional: shared
    wins count as a fraction)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def rung_rows(tables, specs, names, games, seed, workers):
    rows = []
    for k in range(1, len(specs)):
        pair = [specs[k], specs[k - 1]]
        row = [f"{names[k]} vs {names[k - 1]}"]
        for lineup in ([0, 1], [0, 1, 1, 1]):
            match = play_match(tables, pair, lineup, games, seed, workers=workers)
            share = match.win_share(0)
            low, high = wilson(share * games, games)
            row.append(f"{share:.3f} [{low:.3f}, {high:.3f}]")
            row.append(f"{games / match.seconds:,.0f}")
        rows.append(row)
    return rows


def winning_score_rows(tables, specs, names, games, seed, workers):
    rows = []
    for spec, name in zip(specs, names, strict=True):
        row = [name]
        for n_players in (2, 3, 4, 5):
            match = play_match(tables, [spec], [0] * n_players, games, seed, workers=workers)
            winning = match.games[:, R.G_WINNING_SCORE].astype(np.float64)
            half = Z95 * winning.std(ddof=1) / math.sqrt(games)
            row.append(f"{winning.mean():.1f} ± {half:.1f}")
        rows.append(row)
    return rows


def table(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m strategies.tools.ladder", description=__doc__)
    parser.add_argument(
        "--rungs", default="random,greedy,builder", help="strategies, weakest first"
    )
    parser.add_argument("--games", type=int, default=20000, help="games per match")
    parser.add_argument(
        "--score-games", type=int, default=2000, help="games per winning-score cell"
    )
    parser.add_argument("--score-strategies", default="greedy,builder")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--workers", type=int, default=2, help="threads playing games")
    parser.add_argument("--strategy-file", help="named sets usable as rungs")
    args = parser.parse_args(argv)
    named = load_strategy_file(args.strategy_file) if args.strategy_file else {}
    names = [s.strip() for s in args.rungs.split(",") if s.strip()]
    specs = [resolve_strategy(s, named) for s in names]
    tables = load_catalog()
    print(f"Ladder: {args.games} games per match, seed {args.seed}, catalogue {tables.name}\n")
    header = ["rung", "2p win rate [95% CI]", "2p games/s", "4p win share [95% CI]", "4p games/s"]
    print(table(header, rung_rows(tables, specs, names, args.games, args.seed, args.workers)))
    sys.stdout.flush()
    score_names = [s.strip() for s in args.score_strategies.split(",") if s.strip()]
    score_specs = [resolve_strategy(s, named) for s in score_names]
    print(
        f"\nAverage winning score (± 95% CI), {args.score_games} games, "
        "same strategy on all seats\n"
    )
    rows = winning_score_rows(
        tables, score_specs, score_names, args.score_games, args.seed, args.workers
    )
    print(table(["strategy", "2 players", "3 players", "4 players", "5 players"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
