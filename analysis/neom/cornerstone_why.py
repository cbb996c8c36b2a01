"""Why a drafted cornerstone is not built: each action of one instrumented seat, measured.

``python -m analysis.neom.cornerstone_why --games 200 --seed 3801 [--set NAME=SPEC ...]``

Plays 4-player games of the strong field whose seat 0 stops the game loop before each of its
selections and actions (an ``expert`` seat, ``strategies.neom.play.advance``); the decision is
then taken outside the loop by the seat's tuned set (``dispatch.choose_in``), exactly as inside
(tests/test_search.py::test_stopping_and_resuming_changes_nothing), and the option values the
evaluation gave (``evaluate.evaluated_values``) are recorded. Seat 0 plays each tuned set of the
field in turn (the others keep their seats). For each cornerstone seat 0 drafted: on how many of
its actions it could be built (listed by the engine), why not otherwise (the generation's
cornerstone limit, too few coins for its cheapest requirement option, or requirements / no
square), and when it could: what took the action instead (placing the selected tile or
selling it) and by how much value. Writes a CSV per cornerstone and prints it.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per tuned set in seat 0")
    parser.add_argument("--seed", type=int, default=3801)
    parser.add_argument("--catalog", default="default")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        help="NAME=SPEC: play SPEC wherever the field names NAME (e.g. a tuned set with "
        "overrides); repeatable",
    )
    parser.add_argument("--by-set", action="store_true", help="a row per tuned set too")
    parser.add_argument("--out", default=None, help="CSV of the per-cornerstone figures")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    args = parser.parse_args(argv)

    from sim.core.errors import UserError
    from sim.core.outputs import claim_file, write_file

    try:  # before any game: an existing or unwritable --out is one line
        if args.out:
            claim_file(args.out, "--out", args.overwrite)
    except UserError as exc:
        print(exc, file=sys.stderr)
        return 2

    from sim.core import rng
    from sim.core.batch import STRATEGY_ID_DTYPE
    from sim.neom import constants as K
    from sim.neom import engine as E
    from sim.neom import records as R
    from sim.neom.catalog import load_catalog
    from sim.neom.tables import make_rules
    from strategies.neom import play as G
    from strategies.neom.archetypes import PARAM_NAMES
    from strategies.neom.dispatch import choose_in, values_in
    from strategies.neom.pieces import addresses, new_memos
    from strategies.neom.registry import parse_strategy, resolve_strategy
    from strategies.neom.steps import addresses as step_addresses

    tables = load_catalog(args.catalog) if args.catalog != "default" else load_catalog()
    overrides = {}
    for item in args.set:
        name, _, spec = item.partition("=")
        if not spec:
            print(f"--set {item!r}: expected NAME=SPEC", file=sys.stderr)
            return 2
        overrides[name] = spec
    field = ["tuned_denier_4p", "tuned_builder_4p", "tuned_industrialist_4p", "tuned_merchant_4p"]
    specs = {name: resolve_strategy(overrides.get(name, name)) for name in field}
    per = defaultdict(lambda: defaultdict(float))  # (set, cornerstone) -> counts
    for index, own in enumerate(field):
        mine = specs[own]
        weights = [f"{k}={float(mine.params[i])!r}" for i, k in enumerate(PARAM_NAMES)]
        weights += [f"{k}_4p={float(mine.params[i])!r}" for i, k in enumerate(PARAM_NAMES)]
        seat0 = parse_strategy(f"expert:{','.join(weights)}")
        lineup = [seat0, *[specs[n] for n in field if n != own]]
        ids = np.array([s.id for s in lineup], dtype=STRATEGY_ID_DTYPE)
        params = np.stack([s.params for s in lineup])
        batch = G.batch_scratch(
            ids, params, addresses(ids), step_addresses(), new_memos(tables.n_tiles)
        )
        for g in range(args.games):
            players = np.zeros((1, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int64)
            events = np.zeros((R.MAX_EVENTS_PER_GAME, R.N_EVENT_COLS), dtype=np.int64)
            seats = np.arange(4, dtype=np.int32)
            game, _ = G.new_game(
                0, rng.master_key(args.seed * 1000 + index * 100_000 + g), 0, 0, seats, batch,
                tables.arrays, make_rules(K.V_STANDARD), players, events,
            )  # fmt: skip
            row = np.zeros(R.N_GAME_COLS, dtype=np.int64)
            game_rows = defaultdict(lambda: defaultdict(float))
            while G.advance(game, row) == G.PAUSED:
                seat, acting = G.step_seat(game.gstate[E.GS_STEP], game.gstate[E.GS_TURN], 4)
                n = G.list_actions(0, game) if acting else G.list_selections(0, game)
                decision = E.D_ACTION if acting else E.D_SELECT
                if acting and game.pstate[0, E.PS_N_CS] > 0:
                    values = np.empty(n)
                    values_in(mine.params, decision, n, 0, game, game.memos[0], values)
                k = 0 if n == 1 else choose_in(
                    mine.id, mine.params, game.strat_rng[0], decision, n, 0, game,
                    game.memos[0],
                )  # fmt: skip
                if acting and game.pstate[0, E.PS_N_CS] > 0:
                    opts = game.options[:n]
                    gen = game.gstate[E.GS_GEN]
                    summary = game.summaries[0]
                    in_city = bin(int(summary[E.SM_CORNERSTONES])).count("1")
                    money = game.pstate[0, E.PS_MONEY]
                    chosen_kind = opts[k, E.OPT_KIND]
                    sell = max(
                        (values[j] for j in range(n) if opts[j, E.OPT_KIND] == E.A_SELL),
                        default=np.nan,
                    )
                    place = max(
                        (values[j] for j in range(n) if opts[j, E.OPT_KIND] == E.A_PLACE),
                        default=-np.inf,
                    )
                    for slot in range(game.pstate[0, E.PS_N_CS]):
                        cs = int(game.cs_hands[0, slot])
                        c = game_rows[cs]
                        c["held"] += 1
                        rows = [j for j in range(n)
                                if opts[j, E.OPT_KIND] == E.A_CORNERSTONE
                                and opts[j, E.OPT_TILE] == cs]  # fmt: skip
                        if not rows:
                            cheapest = min(
                                int(game.req[cs, o, K.R_COST])
                                for o in range(tables.tiles[cs, K.C_N_REQ_OPTIONS])
                            )
                            if in_city >= gen:
                                c["limit"] += 1
                            elif money < cheapest:
                                c["coins"] += 1
                            else:
                                c["other"] += 1
                            continue
                        c["listed"] += 1
                        best = max(values[j] for j in rows)
                        if chosen_kind == E.A_CORNERSTONE and opts[k, E.OPT_TILE] == cs:
                            c["built"] += 1
                            continue
                        c["gap"] += values[k] - best
                        c[f"vs_sell{gen}"] += best - sell
                        c[f"n{gen}"] += 1
                        c["below_sell"] += best < sell
                        if chosen_kind == E.A_PLACE:
                            c["lost_place"] += 1
                            c["gap_place"] += place - best
                        elif chosen_kind == E.A_SELL:
                            c["lost_sell"] += 1
                            c["gap_sell"] += sell - best
                        else:
                            c["lost_other_cs"] += 1
                G.force(game, k)
            for cs, c in game_rows.items():
                total = per[(own, cs)]
                total["drafters"] += 1
                total["built_games"] += c["built"] > 0
                for key, value in c.items():
                    total[key] += value
    for (_, cs), t in list(per.items()):  # the field's seats together
        for key, value in t.items():
            per[("all", cs)][key] += value
    rows = []
    for (own, cs), t in sorted(per.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if own != "all" and not args.by_set:
            continue
        lost = t["listed"] - t["built"]
        rows.append(
            {
                "cornerstone": tables.tile_names[cs],
                "set": own,
                "drafters": int(t["drafters"]),
                "built_rate": t["built_games"] / t["drafters"],
                "actions_held": t["held"] / t["drafters"],
                "share_listed": t["listed"] / t["held"],
                "share_limit": t["limit"] / t["held"],
                "share_coins": t["coins"] / t["held"],
                "share_other": t["other"] / t["held"],
                "lost_to_place": t["lost_place"] / max(lost, 1),
                "lost_to_sell": t["lost_sell"] / max(lost, 1),
                "below_sell": t["below_sell"] / max(lost, 1),
                "gap_when_listed": t["gap"] / max(lost, 1),
                **{f"vs_sell_g{g}": t[f"vs_sell{g}"] / max(t[f"n{g}"], 1) for g in (1, 2, 3)},
            }
        )
    import polars as pl

    frame = pl.DataFrame(rows)
    if args.out:
        try:
            write_file(args.out, frame.write_csv(), "--out")
        except UserError as exc:
            print(exc, file=sys.stderr)
            return 2
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=250, float_precision=2):
        print(frame)
    return 0


if __name__ == "__main__":
    sys.exit(main())
