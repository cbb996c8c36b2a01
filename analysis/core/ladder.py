"""``neom ladder``: each rung of a skill ladder against the rung below, on paired deals.

A match plays ``--games`` games of ``--players`` seats through the runner with seats rotated,
so every deal is played once per rotation and each strategy meets the same deals from every
seat. With 2 players the rung takes one seat and the rung below the other; with more, the rung
takes one seat against copies of the rung below (a fair share is then 1/players).

The win rate is the rung's mean win share (a k-way shared win counts 1/k). Its 95% interval
is Wilson's, on an effective number of games: the rotations of one deal are not independent
(the deal decides much of the outcome), so the number of games is divided by the design effect
(variance of the per-deal mean win share against the binomial variance; at least 1).
"""

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from analysis.core.stats import wilson_interval
from sim.core.errors import UserError
from sim.core.game import Game
from sim.core.registry import get_game
from sim.core.runner import RunConfig, run_simulation
from sim.core.store import read_run
from sim.core.strategies import split_strategies


@dataclass(frozen=True)
class RungResult:
    rung: str
    below: str
    players: int
    games: int
    win_rate: float
    lo: float
    hi: float
    games_per_s: float

    def as_json(self) -> dict:
        return {
            "rung": self.rung,
            "below": self.below,
            "players": self.players,
            "games": self.games,
            "win_rate": round(self.win_rate, 4),
            "lo": round(self.lo, 4),
            "hi": round(self.hi, 4),
        }


def clustered_rate(share: np.ndarray, deal: np.ndarray) -> tuple[float, float, float]:
    """Mean of ``share`` (the rung's win share per game) and its 95% interval, games clustered
    by ``deal`` (see the module docstring)."""
    n = share.size
    rate = float(share.mean())
    per_deal = (
        pl.DataFrame({"deal": deal, "share": share})
        .group_by("deal")
        .agg(pl.col("share").mean(), pl.len().alias("k"))
    )
    k = float(per_deal["k"].mean())
    binomial = rate * (1.0 - rate)
    clustered = float(per_deal["share"].var(ddof=1) or 0.0) * k if per_deal.height > 1 else 0.0
    design = clustered / binomial if binomial > 0 else 1.0
    effective = n / max(design, 1.0)
    lo, hi = wilson_interval(rate * effective, effective)
    return rate, float(lo), float(hi)


def play_rung(
    game: Game,
    rung: str,
    below: str,
    players: int,
    games: int,
    seed: int,
    workers: int | None,
    strategy_file: Path | None = None,
) -> RungResult:
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(
            out=Path(tmp) / "match",
            strategies=(rung,) + (below,) * (players - 1),
            game=game.name,
            players=players,
            games=games,
            seed=seed,
            strategy_file=strategy_file,
            seats="rotate",
            workers=workers,
            batch_size=max(players, min(1000, games // 8 // players * players)),
            progress=None,  # on a terminal: games done, rate and ETA (slow rungs: the searches)
            command="neom ladder",
        )
        result = run_simulation(config)
        frame = (
            read_run(config.out)
            .players.filter(pl.col("strategy") == 0)
            .select("game_id", "win_share")
            .collect()
        )
    share = frame["win_share"].to_numpy()
    deal = frame["game_id"].to_numpy() // players
    rate, lo, hi = clustered_rate(share, deal)
    return RungResult(rung, below, players, games, rate, lo, hi, result.games_per_s)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "ladder",
        help="each rung of a skill ladder against the rung below, on paired deals",
        description="Play each rung against the rung below (seats rotated on paired deals) "
        "and print its win rate with a 95% interval. Without --rungs: the game's default "
        "ladder, weakest to strongest.",
    )
    parser.add_argument("--game", default=None, help="the game (default: neom)")
    parser.add_argument("--rungs", help="strategies, weakest first (comma-separated)")
    parser.add_argument("--players", type=int, default=2, help="players per game (2)")
    parser.add_argument("--games", type=int, default=2000, help="games per rung (2000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None, help="worker processes (all)")
    parser.add_argument("--strategy-file", type=Path, help="named sets usable as rungs")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the results")
    parser.set_defaults(func=run)


def run(args) -> int:
    game = get_game(args.game)
    rungs = split_strategies(args.rungs, "--rungs") if args.rungs else game.strategies.ladder
    if len(rungs) < 2:
        raise UserError("--rungs: a ladder needs at least two strategies, weakest first")
    if not 2 <= args.players <= game.max_players:
        raise UserError(f"--players {args.players}: must be 2 to {game.max_players}")
    games = args.games - args.games % args.players
    if games < args.players:
        raise UserError(f"--games {args.games}: at least {args.players} (one deal per rotation)")
    results = []
    print(f"{game.title} ladder: {games} {args.players}-player games per rung, seed {args.seed}")
    for below, rung in zip(rungs, rungs[1:], strict=False):
        result = play_rung(
            game, rung, below, args.players, games, args.seed, args.workers, args.strategy_file
        )
        results.append(result)
        fair = 1.0 / args.players
        print(
            f"  {rung} vs {below}: {result.win_rate:.3f} [{result.lo:.3f}, {result.hi:.3f}]"
            f" (fair {fair:.3f}; {result.games_per_s:,.0f} games/s)",
            flush=True,
        )
    if args.json:
        try:
            args.json.write_text(json.dumps([r.as_json() for r in results], indent=1) + "\n")
        except OSError as exc:
            raise UserError(f"--json {args.json}: cannot write ({exc.strerror})") from None
    return 0
