"""The Tangram City strategy ladder: each rung a 2-player match on the same deals, seats rotated.

``python -m strategies.tangram.ladder [--deals N] [--seed S] [--out FILE]`` plays greedy vs
random and planner vs greedy: every deal twice, once with each strategy in seat 0, so seat and
deal effects cancel. For each match it reports the upper strategy's share of games (a win 1,
a shared win 1/2) with its 95% Wilson interval, its outright wins, ties and losses, and its mean
score lead with the interval of the paired mean (the two seats of one game are paired).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from analysis.core.stats import paired_difference, wilson_interval
from sim.core import rng
from sim.tangram import constants as K
from sim.tangram import records as R
from sim.tangram.rules import make_rules
from sim.tangram.tileset import load_tileset
from strategies.tangram.play import STRATEGY_ID_DTYPE, play_batch
from strategies.tangram.registry import parse_strategy

RUNGS = (("greedy", "random"), ("planner", "greedy"))


def match(upper: str, lower: str, deals: int, seed: int = 1, data=None, rules=None) -> dict:
    """``upper`` vs ``lower`` on ``deals`` deals, each played with both seatings."""
    data = load_tileset() if data is None else data
    rules = make_rules() if rules is None else rules
    specs = [parse_strategy(upper), parse_strategy(lower)]
    n = 2 * deals
    ids = np.arange(n, dtype=np.int64)
    seats = np.tile(np.array([[0, 1], [1, 0]], dtype=np.int32), (deals, 1))
    games = np.zeros((n, R.N_GAME_COLS), dtype=np.int64)
    players = np.zeros((n, K.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
    start = time.thread_time()
    play_batch(
        rng.master_key(seed),
        ids,
        ids // 2,
        seats,
        np.array([s.id for s in specs], dtype=STRATEGY_ID_DTYPE),
        np.stack([s.params for s in specs]).astype(np.float64),
        data.arrays,
        rules,
        games,
        players,
        np.zeros((0, R.N_EVENT_COLS), dtype=np.int64),
    )
    cpu = time.thread_time() - start
    up = players[:, :2, R.P_STRATEGY] == 0
    total_up = players[:, :2, R.P_TOTAL][up]
    total_low = players[:, :2, R.P_TOTAL][~up]
    wins = int((total_up > total_low).sum())
    ties = int((total_up == total_low).sum())
    share = (wins + 0.5 * ties) / n
    lo, hi = wilson_interval(wins + 0.5 * ties, n)
    lead = paired_difference(total_up, total_low)
    return {
        "upper": specs[0].spec,
        "lower": specs[1].spec,
        "players": 2,
        "deals": deals,
        "games": n,
        "seed": seed,
        "wins": wins,
        "ties": ties,
        "losses": n - wins - ties,
        "share": share,
        "share_lo": float(lo),
        "share_hi": float(hi),
        "mean_upper": float(total_up.mean()),
        "mean_lower": float(total_low.mean()),
        "lead": lead["mean"],
        "lead_lo": lead["lo"],
        "lead_hi": lead["hi"],
        "cpu_s": round(cpu, 2),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000, help="deals per rung (x2 games)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("bench") / "tangram_ladder.json")
    parser.add_argument(
        "--rung",
        action="append",
        metavar="UPPER,LOWER",
        help="a match to play (default: greedy,random and planner,greedy)",
    )
    args = parser.parse_args(argv)
    rungs = [tuple(r.split(",", 1)) for r in args.rung] if args.rung else RUNGS
    data = load_tileset()
    results = []
    print(f"Tangram City ladder, 2 players, seats rotated; tile set: {data.label}")
    for upper, lower in rungs:
        r = match(upper, lower, args.deals, args.seed, data)
        results.append(r)
        print(
            f"  {r['upper']} vs {r['lower']}: {100 * r['share']:.1f}% "
            f"[{100 * r['share_lo']:.1f}, {100 * r['share_hi']:.1f}] of {r['games']} games "
            f"(won {r['wins']}, tied {r['ties']}, lost {r['losses']}); mean score "
            f"{r['mean_upper']:.1f} vs {r['mean_lower']:.1f}, lead {r['lead']:+.1f} "
            f"[{r['lead_lo']:+.1f}, {r['lead_hi']:+.1f}]; {r['cpu_s']} s CPU"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"tileset": data.label, "results": results}, indent=1), encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
