"""A stop-gap run writer for Tangram City until ``neom simulate --game tangram`` is wired.

``python -m strategies.tangram.simulate --players 4 --games 20000 --strategies a,b,c,d --out
DIR [--events] [--tileset FILE] [--seats rotate]`` plays the games in this process, batch by
batch (one core), and writes a run folder shaped like the core's: ``manifest.json``,
``tileset.toml`` (the tile set used), and Parquet tables ``games/``, ``players/``,
``events/`` with the record dtypes' columns, plus ``game_id`` (players, events),
``strategy_name`` and ``win_share`` (players) and ``kind_name`` (events), as the core adds
them. Seats are assigned by :func:`sim.core.seeding.assign_seats`.
"""

import argparse
import json
import platform
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sim.core import rng
from sim.core.errors import UserError
from sim.core.seeding import SEAT_MODES, assign_seats, check_game_count
from sim.tangram import GAME, RULES_VERSION
from sim.tangram import constants as K
from sim.tangram import records as R
from sim.tangram.rules import RULE_OPTIONS, make_rules, rules_as_dict
from sim.tangram.tileset import load_tileset
from strategies.tangram.play import STRATEGY_ID_DTYPE, play_batch
from strategies.tangram.registry import parse_strategy

BATCH = 2000


def _column(values: np.ndarray, dtype, name: str) -> np.ndarray:
    info = np.iinfo(dtype)
    if values.size and (values.min() < info.min or values.max() > info.max):
        raise OverflowError(f"column {name!r}: {values.min()}..{values.max()} do not fit {dtype}")
    return values.astype(dtype)


def batch_tables(g, p, e, n_players, strategy_names, events: bool) -> dict[str, pa.Table]:
    """The batch's games, players (and events) tables, as the core would store them."""
    games = {name: _column(g[:, c], R.GAMES[name], name) for c, name in enumerate(R.GAMES.names)}
    rows = p[:, :n_players].reshape(-1, R.N_PLAYER_COLS)
    game_rows = np.repeat(np.arange(g.shape[0]), n_players)
    players = {"game_id": g[game_rows, R.G_GAME_ID]}
    for c, name in enumerate(R.PLAYERS.names):
        players[name] = _column(rows[:, c], R.PLAYERS[name], name)
    players["strategy_name"] = np.array(strategy_names, dtype=object)[rows[:, R.P_STRATEGY]]
    players["win_share"] = rows[:, R.P_WIN] / g[game_rows, R.G_N_WINNERS].astype(np.float64)
    out = {"games": pa.table(games), "players": pa.table(players)}
    if events:
        counts = g[:, R.G_N_EVENTS]
        keep = np.concatenate(
            [
                np.arange(i * R.EVENTS_PER_GAME, i * R.EVENTS_PER_GAME + n)
                for i, n in enumerate(counts)
            ]
        )
        ev = e[keep]
        table = {"game_id": np.repeat(g[:, R.G_GAME_ID], counts)}
        for c, name in enumerate(R.EVENTS.names):
            table[name] = _column(ev[:, c], R.EVENTS[name], name)
        table["kind_name"] = np.array(R.EVENT_KINDS, dtype=object)[ev[:, R.E_KIND]]
        out["events"] = pa.table(table)
    return out


def simulate(
    out,
    players,
    games,
    strategies,
    seed=1,
    seats="rotate",
    events=False,
    tileset=None,
    overwrite=False,
    progress=False,
    **rule_options,
) -> dict:
    """Play the run and write its folder; returns the manifest."""
    out = Path(out)
    if not 1 <= players <= K.MAX_PLAYERS:
        raise UserError(f"--players {players}: must be 1 to {K.MAX_PLAYERS}")
    if len(strategies) == 1:
        strategies = list(strategies) * players
    if len(strategies) != players:
        raise UserError(f"--strategies: {len(strategies)} for {players} players")
    if seats not in SEAT_MODES:
        raise UserError(f"--seats {seats!r}: expected one of {', '.join(SEAT_MODES)}")
    check_game_count(seats, games, players)
    if out.exists() and any(out.iterdir()):
        if not overwrite:
            raise UserError(f"{out}: not empty; pass --overwrite to replace it")
        shutil.rmtree(out)
    specs = [parse_strategy(s) for s in strategies]
    data = load_tileset(tileset)
    rules = make_rules(**rule_options)
    key = rng.master_key(seed)
    names = [s.spec for s in specs]
    strategy_ids = np.array([s.id for s in specs], dtype=STRATEGY_ID_DTYPE)
    params = np.stack([s.params for s in specs]).astype(np.float64)
    for table in ("games", "players", "events") if events else ("games", "players"):
        (out / table).mkdir(parents=True, exist_ok=True)
    (out / data.snapshot_name).write_bytes(data.content.raw)
    started = time.perf_counter()
    for index, first in enumerate(range(0, games, BATCH)):
        ids = np.arange(first, min(first + BATCH, games), dtype=np.int64)
        deals, seat_strategy = assign_seats(key, seats, ids, players)
        n = ids.shape[0]
        g = np.zeros((n, R.N_GAME_COLS), dtype=np.int64)
        p = np.zeros((n, K.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
        e = np.zeros((n * R.EVENTS_PER_GAME if events else 0, R.N_EVENT_COLS), dtype=np.int64)
        play_batch(
            key, ids, deals, seat_strategy, strategy_ids, params, data.arrays, rules, g, p, e
        )
        for name, table in batch_tables(g, p, e, players, names, events).items():
            pq.write_table(table, out / name / f"batch-{index:06d}.parquet", compression="zstd")
        if progress:
            print(f"\r{first + n}/{games} games", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    wall = time.perf_counter() - started
    manifest = {
        "game": GAME.name,
        "rules_version": RULES_VERSION,
        "status": "complete",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "players": players,
        "games": games,
        "seed": seed,
        "seats": seats,
        "events": events,
        "strategies": [
            {
                "index": i,
                "name": s.spec,
                "strategy": s.name,
                "id": s.id,
                "params": [float(x) for x in s.params],
            }
            for i, s in enumerate(specs)
        ],
        "data": {
            "name": data.name,
            "label": data.label,
            "reconstructed": data.reconstructed,
            "digest": data.digest,
            "source": str(data.source),
            "snapshot": data.snapshot_name,
        },
        "rules": rules_as_dict(rules),
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        "timings": {"wall_s": round(wall, 3), "games_per_s": round(games / wall, 1)},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, required=True)
    parser.add_argument("--games", type=int, required=True)
    parser.add_argument("--strategies", required=True, help="one per seat, or one for all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seats", default="rotate", choices=SEAT_MODES)
    parser.add_argument("--events", action="store_true")
    parser.add_argument("--tileset", help="tile-set file (default: packaged)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--overwrite", action="store_true")
    for option in RULE_OPTIONS:
        parser.add_argument(
            option.flag, dest=option.name, default=option.default, choices=list(option.choices)
        )
    args = parser.parse_args(argv)
    try:
        manifest = simulate(
            args.out,
            args.players,
            args.games,
            args.strategies.split(","),
            args.seed,
            args.seats,
            args.events,
            args.tileset,
            args.overwrite,
            progress=sys.stderr.isatty(),
            **{o.name: getattr(args, o.name) for o in RULE_OPTIONS},
        )
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        f"{args.out}: {manifest['games']} games, {manifest['timings']['games_per_s']} games/s; "
        f"tile set: {manifest['data']['label']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
