"""``neom tune``: CMA-ES search over a strategy's parameters against a field of opponents.

The optimiser is ``cma`` (Hansen's CMA-ES, a maintained library), which adapts a full
covariance over the parameters and copes with noisy fitness. Each generation plays every
candidate on the same deals (common random numbers: the differences between candidates are
not luck of the draw), new deals each generation. The parameters are searched on a scale of
their own (each divided by ``max(|default|, MIN_SCALE)``) so one step size fits all. The
distribution's mean after the last generation (CMA-ES's estimate of the optimum, less noisy
than the best single candidate) is checked against the base strategy on fresh deals, both on
the same deals, and written as a named set of a strategy file (``strategies.params``),
usable by name with ``--strategy-file``. The ``vp`` weight is held fixed: the evaluation only
compares values, so one weight sets the scale.
"""

import sys
from dataclasses import dataclass

import numpy as np

from sim.core.errors import UserError
from sim.core.strategies import StrategySpec, set_name_problem, split_strategies
from sim.core.strategy_writer import claim_set, write_set
from sim.neom.catalog import load_catalog
from strategies.neom.registry import (
    REGISTRY,
    STRATEGIES,
    load_strategy_file,
    parse_strategy,
    resolve_strategy,
)
from strategies.tools.arena import play_match

POPULATION = 12
SIGMA0 = 0.4  # initial step, in units of each parameter's scale
MIN_SCALE = 0.3
GENERATIONS = 30  # CMA-ES needs tens of generations for 15 parameters; noise averages out
FIXED_PARAMS = ("vp",)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "tune",
        help="tune a strategy's parameters against opponents (CMA-ES)",
        description="CMA-ES search over the parameters of --base against --opponents "
        "on paired deals; writes the best set as a strategy file usable by name.",
    )
    parser.add_argument("--base", required=True, help="strategy to tune, e.g. builder")
    parser.add_argument(
        "--opponents",
        required=True,
        help="comma-separated opponent strategies, e.g. greedy,merchant",
    )
    parser.add_argument("--players", type=int, default=4, help="players per game (2-5)")
    parser.add_argument("--budget", type=int, default=20000, help="games to play in all")
    parser.add_argument("--seed", type=int, default=1, help="master seed of the deals")
    parser.add_argument("--workers", type=int, default=1, help="threads playing games")
    parser.add_argument("--name", help="name of the tuned set (default tuned_BASE)")
    parser.add_argument(
        "--out",
        help="strategy TOML file to write the set into (default: print it); an existing "
        "strategy file keeps its other sets",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace a set of the same name in --out"
    )
    parser.add_argument("--strategy-file", help="named sets usable as base or opponents")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


@dataclass(frozen=True)
class TuneResult:
    spec: StrategySpec
    tuned_share: float  # win share of the tuned set on fresh deals
    base_share: float  # win share of the base on the same deals
    games: int  # games played in all


def lineup(n_players: int, n_opponents: int) -> list[int]:
    """Seat 0's strategy is the candidate (index 0); the others cycle through the opponents."""
    return [0] + [1 + k % n_opponents for k in range(n_players - 1)]


def fitness(match) -> float:
    """Win share of strategy 0, with its mean score margin over the table as a tie-break."""
    from sim.neom import records as R

    scores = match.players[:, :, R.P_SCORE_TOTAL].astype(np.float64)
    mine = match.players[:, :, R.P_STRATEGY] == 0
    margin = (scores[mine] - scores.mean(axis=1)).mean()
    return match.win_share(0) + 1e-3 * margin


def tune(
    tables,
    base: StrategySpec,
    opponents: list[StrategySpec],
    n_players: int,
    budget: int,
    seed: int,
    workers: int = 1,
    progress: bool = True,
) -> TuneResult:
    import cma

    info = STRATEGIES[base.name]
    tunable = [k for k, name in enumerate(info.param_names) if name not in FIXED_PARAMS]
    if not tunable:
        raise UserError(f"strategy {base.name!r} has no parameters to tune")
    validation = max(budget // 5, 2 * n_players)
    per_candidate = int(
        np.clip((budget - validation) // (POPULATION * GENERATIONS), n_players, 400)
    )
    generations = max(1, (budget - validation) // (POPULATION * per_candidate))
    start = base.params[tunable].copy()
    scale = np.maximum(np.abs(start), MIN_SCALE)
    bounds = np.array([info.bounds[k] for k in tunable]) if info.bounds else None
    options = {
        "popsize": POPULATION,
        # cma's own sampling: the same seed gives the same search (cma reads 0 as "time")
        "seed": seed % (2**32 - 1) + 1,
        "verbose": -9,
        "maxiter": generations,
    }
    if bounds is not None:
        options["bounds"] = [list(bounds[:, 0] / scale), list(bounds[:, 1] / scale)]
    search = cma.CMAEvolutionStrategy(start / scale, SIGMA0, options)
    seats = lineup(n_players, len(opponents))
    played = 0
    bar = _progress(generations, progress)
    for g in range(generations):
        candidates = np.asarray(search.ask())
        scores = np.empty(len(candidates))
        for c, x in enumerate(candidates):
            spec = _with_params(base, tunable, x * scale)
            match = play_match(
                tables,
                [spec, *opponents],
                seats,
                per_candidate,
                seed,
                workers=workers,
                first_deal=g * per_candidate,
            )
            scores[c] = fitness(match)
            played += per_candidate
        search.tell(list(candidates), list(-scores))  # cma minimises
        bar.update(1)
        bar.set_postfix(best=f"{scores.max():.3f}", median=f"{np.median(scores):.3f}")
    bar.close()
    mean = np.asarray(search.mean) * scale
    if bounds is not None:
        mean = np.clip(mean, bounds[:, 0], bounds[:, 1])
    tuned = _with_params(base, tunable, mean)
    fresh = generations * per_candidate
    shares = []
    for spec in (tuned, base):
        match = play_match(
            tables,
            [spec, *opponents],
            seats,
            validation // 2,
            seed,
            workers=workers,
            first_deal=fresh,
        )
        shares.append(match.win_share(0))
        played += validation // 2
    return TuneResult(tuned, shares[0], shares[1], played)


def _with_params(base: StrategySpec, slots: list[int], values: np.ndarray) -> StrategySpec:
    info = STRATEGIES[base.name]
    params = base.params.copy()
    params[slots] = values
    text = ",".join(f"{name}={params[k]:.4g}" for k, name in enumerate(info.param_names))
    return parse_strategy(f"{base.name}:{text}")


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="tune", unit="gen", disable=not enabled, file=sys.stderr)


def strategy_toml(name: str, spec: StrategySpec, comment: str, tuning: dict | None = None) -> str:
    info = STRATEGIES[spec.name]
    lines = [f"# {comment}", f"[sets.{name}]", f'base = "{spec.name}"']
    lines += [f"{key} = {spec.params[k]:.4g}" for k, key in enumerate(info.param_names)]
    if tuning:
        import tomlkit

        lines += ["", f"[sets.{name}.tuning]", tomlkit.dumps(tuning).rstrip()]
    return "\n".join(lines) + "\n"


def opponent_specs(
    text: str, n_players: int, strategy_file, name: str, base: str
) -> tuple[str, ...]:
    """``--opponents`` as specs. A named field (``strong``) stands for its list for the player
    count with the tuned set's own seat taken out (the seat named like the set or like
    ``--base``, else the first seat playing ``--base``: a user's set may not take a shipped
    set's name), so the set is tuned in the field it will play in. UserError when more
    opponents are named than there are other seats."""
    from sim.core.strategies import (
        expand_field,
        read_strategy_file,
        resolve_strategy,
        shipped_file,
    )

    texts = split_strategies(text, "--opponents")
    shipped = shipped_file(REGISTRY)
    user = read_strategy_file(REGISTRY, strategy_file, shipped) if strategy_file else None
    fields = {**(shipped.fields if shipped else {}), **(user.fields if user else {})}
    expanded = expand_field(texts, n_players, fields, "--opponents")
    if expanded is not texts:
        own = [k for k, spec in enumerate(expanded) if spec in (name, base.strip())]
        if not own:  # else the first seat playing --base (a shipped set of it, say), as verify
            named = {**(shipped.sets if shipped else {}), **(user.sets if user else {})}
            own = [
                k
                for k, spec in enumerate(expanded)
                if resolve_strategy(REGISTRY, spec, named).name == base.strip()
            ]
        if own:
            expanded = expanded[: own[0]] + expanded[own[0] + 1 :]
    if len(expanded) > n_players - 1:
        raise UserError(
            f"--opponents {text}: {len(expanded)} strategies for the {n_players - 1} other "
            f"seat{'s' if n_players > 2 else ''} of a {n_players}-player game"
            + (
                " (the field has no seat named like the set or --base)"
                if expanded is not texts
                else ""
            )
        )
    return expanded


def tuning_table(args, result: "TuneResult", opponents: list[StrategySpec]) -> dict:
    """How the set was made, stored beside it (``neom verify`` replays its field)."""
    from datetime import UTC, datetime

    from sim.core.machine import source_commit
    from sim.core.registry import get_game

    return {
        "base": args.base,
        "opponents": [spec.label for spec in opponents],
        # exactly as they played, so verify replays this field after the sets are re-tuned
        "opponent_specs": [spec.spec for spec in opponents],
        "players": args.players,
        "budget": args.budget,
        "seed": args.seed,
        "games": result.games,
        "share": round(result.tuned_share, 4),
        "base_share": round(result.base_share, 4),
        "rules_version": get_game("neom").rules_version,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "commit": source_commit(),
    }


def run(args) -> int:
    from sim.core.commands.options import check_players

    check_players(args.players, at_least=2)
    if args.budget < 100:
        raise UserError(f"--budget must be at least 100 games, got {args.budget}")
    if args.workers < 1:
        raise UserError(f"--workers {args.workers}: must be at least 1")
    # The set's name and the output file are checked before the budget is spent.
    name = args.name if args.name is not None else f"tuned_{args.base.partition(':')[0]}"
    problem = set_name_problem(REGISTRY, name, bare=True)
    if problem:
        raise UserError(f"--name {name!r}: {problem}")
    existing = claim_set(REGISTRY, args.out, name, args.overwrite) if args.out else None
    named = load_strategy_file(args.strategy_file) if args.strategy_file else {}
    base = resolve_strategy(args.base, named)
    if not STRATEGIES[base.name].param_names:
        raise UserError(f"--base {args.base!r} has no parameters to tune")
    opponents = [
        resolve_strategy(spec, named)
        for spec in opponent_specs(
            args.opponents, args.players, args.strategy_file, name, args.base
        )
    ]
    tables = load_catalog()
    result = tune(
        tables,
        base,
        opponents,
        args.players,
        args.budget,
        args.seed,
        args.workers,
        progress=not args.no_progress,
    )
    comment = (
        f"neom tune --base {args.base} --opponents {args.opponents} --players {args.players} "
        f"--budget {args.budget} --seed {args.seed}: win share {result.tuned_share:.3f} "
        f"(base {result.base_share:.3f}) on fresh deals, {result.games} games"
    )
    tuning = tuning_table(args, result, opponents)
    text = strategy_toml(name, result.spec, comment, tuning)
    if args.out:
        try:
            write_set(REGISTRY, args.out, name, text, existing)
        except UserError:
            print(text, end="", flush=True)  # the tuned set is not lost: its TOML to paste in
            raise
        print(f"wrote {args.out}: set {name!r}; {comment}")
    else:
        print(text, end="")
    return 0
