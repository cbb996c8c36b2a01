"""How many games does ``neom compare`` need to see a change? Power from one large comparison.

    python -m analysis.neom.power reports/NAME --item "Starter Homes" --blocks 100,200,300,600

reads the two run folders of a finished ``neom compare`` (``reports/NAME/runs/``), cuts the
games into disjoint blocks of whole deals, and in each block repeats the comparison's test of
the item (its paired shift, win share and score lead) as ``neom compare`` would at that many
games. The share of blocks whose test is significant is the power at that game count (disjoint
deals are independent, so the blocks are independent replications); it prints it beside the
normal-approximation forecast from the full run's standard error, and the same for the
unpaired shift (the two sides' intervals combined as if the runs were independent), which
shows what the pairing buys.
"""

import argparse
import json
import math
import sys
from pathlib import Path

from analysis.core.stats import Z95

Z80 = 0.8416212335729143


def _shift_tests(base_long, cand_long, games, kind: str, item: str) -> dict:
    from analysis.core.compare import paired_effect_shifts

    out = {}
    for value, name in (("residual", "win"), ("score_diff", "lead")):
        b = base_long[kind].filter(base_long[kind]["tile_name"] == item)
        c = cand_long[kind].filter(cand_long[kind]["tile_name"] == item)
        table = paired_effect_shifts(b, c, games, value=value)
        if table.height == 0:
            out[name] = None
            continue
        row = table.row(0, named=True)
        unpaired = math.sqrt(row["se_b"] ** 2 + row["se_c"] ** 2)
        out[name] = {
            "shift": row["shift"],
            "se": row["shift_se"],
            "p": row["shift_p"],
            "se_unpaired": unpaired,
            "p_unpaired": math.erfc(abs(row["shift"]) / unpaired / math.sqrt(2))
            if unpaired
            else 1.0,
        }
    return out


def power(folder: Path, item: str, blocks: list[int], level: float = 0.05) -> dict:
    import polars as pl

    from analysis.core.load import open_run
    from analysis.core.tabulate import deals
    from analysis.neom.compare import _long_tables

    base, cand = open_run(folder / "runs" / "baseline"), open_run(folder / "runs" / "candidate")
    games = deals(base).collect().sort("game_id")
    longs = _long_tables(base), _long_tables(cand)
    kind = next(k for k, frame in longs[0].items() if (frame["tile_name"] == item).any())
    n_players = int(base.manifest["players"])
    total_games = games.height
    full = _shift_tests(*longs, games, kind, item)
    result = {"item": item, "kind": kind, "games": total_games, "full": full, "blocks": []}
    deal_of_game = games["game_id"].to_numpy() // n_players
    for size in blocks:
        deals_per_block = max(size // n_players, 2)
        n_blocks = (total_games // n_players) // deals_per_block
        hits = {"win": 0, "lead": 0, "win_unpaired": 0, "lead_unpaired": 0, "either": 0}
        for b in range(n_blocks):
            keep = (deal_of_game // deals_per_block) == b
            sub = games.filter(pl.Series(keep))
            ids = sub.select("game_id")
            part = [{k: v.join(ids, on="game_id", how="semi") for k, v in side.items()}
                    for side in longs]  # fmt: skip
            tests = _shift_tests(*part, sub, kind, item)
            for name in ("win", "lead"):
                test = tests.get(name)
                if test is None:
                    continue
                hits[name] += bool(test["p"] < level)
                hits[f"{name}_unpaired"] += bool(test["p_unpaired"] < level)
            # neom compare's verdict on a changed item: Holm over its two measures.
            p_values = [t["p"] for t in tests.values() if t is not None]
            hits["either"] += bool(p_values and min(p_values) < level / len(p_values))
        row = {"games": deals_per_block * n_players, "replications": n_blocks}
        row["compare_verdict_power"] = hits["either"] / n_blocks if n_blocks else math.nan
        for name in ("win", "lead"):
            test = full[name]
            se_n = test["se"] * math.sqrt(total_games / row["games"])
            se_u = test["se_unpaired"] * math.sqrt(total_games / row["games"])
            row[f"{name}_power"] = hits[name] / n_blocks if n_blocks else math.nan
            row[f"{name}_power_unpaired"] = (
                hits[f"{name}_unpaired"] / n_blocks if n_blocks else math.nan
            )
            row[f"{name}_forecast"] = _normal_power(test["shift"], se_n)
            row[f"{name}_forecast_unpaired"] = _normal_power(test["shift"], se_u)
        result["blocks"].append(row)
    for name in ("win", "lead"):
        test = full[name]
        for kind_se, key in (("se", "paired"), ("se_unpaired", "unpaired")):
            ratio = (Z95 + Z80) * test[kind_se] / abs(test["shift"]) if test["shift"] else math.inf
            result[f"{name}_games_for_80_{key}"] = math.ceil(total_games * ratio**2)
    return result


def _normal_power(shift: float, se: float) -> float:
    if not se or math.isnan(se):
        return math.nan
    z = abs(shift) / se
    return 0.5 * math.erfc((Z95 - z) / math.sqrt(2))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a finished neom compare --out folder")
    parser.add_argument("--item", required=True, help="the changed tile or cornerstone")
    parser.add_argument("--blocks", default="100,200,400", help="game counts to test")
    parser.add_argument("--json", default=None, help="write the result here")
    args = parser.parse_args(argv)
    result = power(args.folder, args.item, [int(b) for b in args.blocks.split(",")])
    text = json.dumps(result, indent=1)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    sys.exit(guarded(main, "python -m analysis.neom.power"))
