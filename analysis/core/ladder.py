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

from analysis.core.batches import Execution, Reduction, analyse
from analysis.core.load import open_run
from analysis.core.reduce import Moments, Sums
from analysis.core.stats import wilson_interval
from sim.core.commands.options import (
    add_game_options,
    add_json_file_option,
    add_run_options,
    check_players,
    resolve_game_options,
)
from sim.core.errors import UserError
from sim.core.game import Game
from sim.core.outputs import claim_file, write_file
from sim.core.runner import RunConfig, run_simulation
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


def _rate_stats(frame: pl.DataFrame) -> dict:
    """The statistics of :func:`clustered_rate` from ``deal`` and ``share`` rows (mergeable
    over chunks of whole deals)."""
    per_deal = frame.group_by("deal").agg(pl.col("share").mean())
    return {
        "games": Sums.of(frame, (), pl.len().alias("n"), pl.col("share").sum()),
        "deals": Moments.of(per_deal, (), "share"),
    }


def _rate(stats: dict) -> tuple[float, float, float]:
    games = stats["games"].frame.row(0, named=True)
    n = int(games["n"])
    rate = float(games["share"]) / n
    deals = stats["deals"].table().row(0, named=True)
    k = n / deals["n"]  # games per deal
    binomial = rate * (1.0 - rate)
    clustered = (deals["share_sd"] or 0.0) ** 2 * k if deals["n"] > 1 else 0.0
    design = clustered / binomial if binomial > 0 else 1.0
    effective = n / max(design, 1.0)
    lo, hi = wilson_interval(rate * effective, effective)
    return rate, float(lo), float(hi)


def clustered_rate(share: np.ndarray, deal: np.ndarray) -> tuple[float, float, float]:
    """Mean of ``share`` (the rung's win share per game) and its 95% interval, games clustered
    by ``deal`` (see the module docstring)."""
    return _rate(_rate_stats(pl.DataFrame({"deal": deal, "share": share})))


def _rung_reduce(chunk) -> dict:
    players = int(chunk.info.manifest["players"])
    frame = chunk.players.filter(pl.col("strategy") == 0).select(
        (pl.col("game_id") // players).alias("deal"), pl.col("win_share").alias("share")
    )
    return _rate_stats(frame)


# The rung's (strategy 0's) win share and its spread over deals, chunk by chunk.
RUNG = Reduction("core.ladder", _rung_reduce, tables=("games", "players"))


def play_rung(
    game: Game,
    rung: str,
    below: str,
    players: int,
    games: int,
    seed: int,
    workers: int | None,
    strategy_file: Path | None = None,
    data: Path | None = None,
    rules: dict | None = None,
) -> RungResult:
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(
            data=data,
            rules=dict(rules or {}),
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
        stats = analyse(open_run(config.out), [RUNG], Execution(workers=workers))[RUNG.name]
    rate, lo, hi = _rate(stats)
    return RungResult(rung, below, players, games, rate, lo, hi, result.games_per_s)


def register(parser) -> None:
    parser.description = (
        "Play each rung against the rung below (seats rotated on paired deals) "
        "and print its win rate with a 95% interval. Without --rungs: the game's default "
        "ladder, weakest to strongest."
    )
    parser.add_argument("--rungs", help="strategies, weakest first (comma-separated)")
    add_run_options(
        parser,
        "--players",
        "--games",
        "--seed",
        "--workers",
        players={"default": 2, "help": "players per game (2)"},
        games={"help": "games per rung (2000)"},
    )
    parser.add_argument("--strategy-file", type=Path, help="named sets usable as rungs")
    add_json_file_option(parser, "also write the results")
    add_game_options(parser, "ladder")
    parser.set_defaults(func=run)


def run(args) -> int:
    game, data_path, rules = resolve_game_options(args, "ladder")
    rungs = split_strategies(args.rungs, "--rungs") if args.rungs else game.strategies.ladder
    if len(rungs) < 2:
        raise UserError("--rungs: a ladder needs at least two strategies, weakest first")
    check_players(args.players, game.name, at_least=2)
    games = args.games - args.games % args.players
    if games < args.players:
        raise UserError(f"--games {args.games}: at least {args.players} (one deal per rotation)")
    if args.json:
        claim_file(args.json, "--json", args.overwrite)  # before any game is played
    data = game.load_data(data_path)
    results = []
    print(
        f"{game.title} ladder: {games} {args.players}-player games per rung, seed {args.seed}; "
        f"data: {data.label}"
    )
    for below, rung in zip(rungs, rungs[1:], strict=False):
        result = play_rung(
            game,
            rung,
            below,
            args.players,
            games,
            args.seed,
            args.workers,
            args.strategy_file,
            data=data_path,
            rules=rules,
        )
        results.append(result)
        fair = 1.0 / args.players
        print(
            f"  {rung} vs {below}: {result.win_rate:.3f} [{result.lo:.3f}, {result.hi:.3f}]"
            f" (fair {fair:.3f}; {result.games_per_s:,.0f} games/s)",
            flush=True,
        )
    if args.json:
        # Every row carries the data it was played on, marked when it is a reconstruction.
        label = {"data": data.label, "reconstructed": data.reconstructed}
        rows = [r.as_json() | label for r in results]
        write_file(args.json, json.dumps(rows, indent=1) + "\n", "--json")
    return 0
