"""``neom tune``: CMA-ES search over a strategy's parameters against a field of opponents,
for every game (``--game``): the game supplies its strategies, data, default rules and the
players table's ``strategy``, ``win`` and ``total`` columns through its Game interface, and
the games are played by the generic match player (:mod:`sim.core.match`).

The optimiser is ``cma`` (Hansen's CMA-ES, a maintained library), which adapts a full
covariance over the parameters and copes with noisy fitness. Each generation plays every
candidate on the same deals (common random numbers: the differences between candidates are
not luck of the draw), new deals each generation. The parameters are searched on a scale of
their own (each divided by ``max(|default|, MIN_SCALE)``) so one step size fits all. The
distribution's mean after the last generation (CMA-ES's estimate of the optimum, less noisy
than the best single candidate) is checked against the base strategy on fresh deals, both on
the same deals, and written as a named set of a strategy file (``strategies.params``),
usable by name with ``--strategy-file``. Held fixed: a ``vp`` weight (NEOM's evaluations only
compare values, so one weight sets the scale) and the whole-number parameters (counts such as
Tangram City's planner's ``samples`` and ``candidates``: a search budget, not a value weight,
and not a continuous quantity CMA-ES can step through).
"""

import sys
import time
from dataclasses import dataclass

import numpy as np

from sim.core.commands.options import THREADS, add_game_options, add_run_options
from sim.core.errors import UserError
from sim.core.game import Game, StrategyRegistry
from sim.core.match import play_match
from sim.core.strategies import (
    StrategySpec,
    load_strategy_file,
    parse_strategy,
    resolve_strategy,
    set_name_problem,
    split_strategies,
)
from sim.core.strategy_writer import claim_set, write_set

POPULATION = 12
SIGMA0 = 0.4  # initial step, in units of each parameter's scale
MIN_SCALE = 0.3
GENERATIONS = 30  # CMA-ES needs tens of generations for 15 parameters; noise averages out


def planned_generations(dimensions: int) -> int:
    """Generations the budget is spread over: tens for many parameters (NEOM's 15: 30), fewer
    for a few (Tangram City's planner's one: 12), so each candidate plays more games."""
    return min(GENERATIONS, 10 + 2 * dimensions)


FIXED_PARAMS = ("vp",)  # besides the whole-number ones (see the module docstring)


def register(parser) -> None:
    parser.description = (
        "CMA-ES search over the parameters of --base against --opponents "
        "on paired deals; writes the best set as a strategy file usable by name."
    )
    parser.add_argument("--base", required=True, help="strategy to tune, e.g. builder")
    parser.add_argument(
        "--opponents",
        required=True,
        help="comma-separated opponent strategies, e.g. greedy,merchant",
    )
    add_run_options(
        parser, "--players", "--seed", "--workers", players={"help": "players per game (2-5; 4)"},
        workers=THREADS,
    )  # fmt: skip
    parser.add_argument("--budget", type=int, default=20000, help="games to play in all")
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
    add_game_options(parser, "tune", data=False)  # the sets are tuned on the shipped data
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
    scores = match.column("total").astype(np.float64)
    mine = match.column("strategy") == 0
    margin = (scores[mine] - scores.mean(axis=1)).mean()
    return match.win_share(0) + 1e-3 * margin


def tunable_slots(registry: StrategyRegistry, name: str) -> list[int]:
    """The parameter slots of strategy ``name`` that CMA-ES searches (module docstring)."""
    info = registry.by_name()[name]
    return [
        k
        for k, param in enumerate(info.param_names)
        if param not in FIXED_PARAMS and param not in info.whole
    ]


def default_game(game: Game | None) -> Game:
    """``game``, or the default game (NEOM) of the command line."""
    from sim.core.commands.options import DEFAULT_GAME
    from sim.core.registry import get_game

    return game if game is not None else get_game(DEFAULT_GAME)


def tune(
    data,
    base: StrategySpec,
    opponents: list[StrategySpec],
    n_players: int,
    budget: int,
    seed: int,
    workers: int = 1,
    progress: bool = True,
    game: Game | None = None,
) -> TuneResult:
    """CMA-ES over ``base``'s parameters in ``game`` (default NEOM) on ``data`` (its
    compiled ``arrays``), ``base`` in seat 0 and ``opponents`` in the other seats in turn."""
    import cma

    game = default_game(game)
    registry = game.strategies
    info = registry.by_name()[base.name]
    tunable = tunable_slots(registry, base.name)
    if not tunable:
        raise UserError(f"strategy {base.name!r} has no parameters to tune")
    validation = max(budget // 5, 2 * n_players)
    per_candidate = int(
        np.clip(
            (budget - validation) // (POPULATION * planned_generations(len(tunable))),
            n_players,
            400,
        )
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
    start_time = time.perf_counter()
    for g in range(generations):
        candidates = np.asarray(search.ask())
        scores = np.empty(len(candidates))
        for c, x in enumerate(candidates):
            spec = _with_params(registry, base, tunable, x * scale)
            match = play_match(
                game,
                data,
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
        bar.set_postfix(
            best=f"{scores.max():.3f}",
            median=f"{np.median(scores):.3f}",
            games_s=f"{played / max(time.perf_counter() - start_time, 1e-9):,.0f}",
        )
    bar.close()
    mean = np.asarray(search.mean) * scale
    if bounds is not None:
        mean = np.clip(mean, bounds[:, 0], bounds[:, 1])
    tuned = _with_params(registry, base, tunable, mean)
    fresh = generations * per_candidate
    shares = []
    for spec in (tuned, base):
        match = play_match(
            game,
            data,
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


def _with_params(
    registry: StrategyRegistry, base: StrategySpec, slots: list[int], values: np.ndarray
) -> StrategySpec:
    info = registry.by_name()[base.name]
    params = base.params.copy()
    params[slots] = values
    text = ",".join(f"{name}={params[k]:.4g}" for k, name in enumerate(info.param_names))
    return parse_strategy(registry, f"{base.name}:{text}")


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="tune", unit="gen", disable=not enabled, file=sys.stderr)


def strategy_toml(
    name: str,
    spec: StrategySpec,
    comment: str,
    tuning: dict | None = None,
    registry: StrategyRegistry | None = None,
) -> str:
    registry = registry or default_game(None).strategies
    info = registry.by_name()[spec.name]
    lines = [f"# {comment}", f"[sets.{name}]", f'base = "{spec.name}"']
    lines += [f"{key} = {spec.params[k]:.4g}" for k, key in enumerate(info.param_names)]
    if tuning:
        import tomlkit

        lines += ["", f"[sets.{name}.tuning]", tomlkit.dumps(tuning).rstrip()]
    return "\n".join(lines) + "\n"


def opponent_specs(
    text: str,
    n_players: int,
    strategy_file,
    name: str,
    base: str,
    registry: StrategyRegistry | None = None,
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

    registry = registry or default_game(None).strategies
    texts = split_strategies(text, "--opponents")
    shipped = shipped_file(registry)
    user = read_strategy_file(registry, strategy_file, shipped) if strategy_file else None
    fields = {**(shipped.fields if shipped else {}), **(user.fields if user else {})}
    expanded = expand_field(texts, n_players, fields, "--opponents")
    if expanded is not texts:
        own = [k for k, spec in enumerate(expanded) if spec in (name, base.strip())]
        if not own:  # else the first seat playing --base (a shipped set of it, say), as verify
            named = {**(shipped.sets if shipped else {}), **(user.sets if user else {})}
            own = [
                k
                for k, spec in enumerate(expanded)
                if resolve_strategy(registry, spec, named).name == base.strip()
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


def tuning_table(args, game: Game, result: "TuneResult", opponents: list[StrategySpec]) -> dict:
    """How the set was made, stored beside it (``neom verify`` replays its field)."""
    from datetime import UTC, datetime

    from sim.core.machine import source_commit

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
        "rules_version": game.rules_version,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "commit": source_commit(),
    }


def run(args) -> int:
    from sim.core.commands.options import check_players, resolve_game_options

    game, _, _ = resolve_game_options(args, "tune")
    registry = game.strategies
    check_players(args.players, game.name, at_least=2)
    if args.budget < 100:
        raise UserError(f"--budget must be at least 100 games, got {args.budget}")
    if args.workers < 1:
        raise UserError(f"--workers {args.workers}: must be at least 1")
    # The set's name and the output file are checked before the budget is spent.
    name = args.name if args.name is not None else f"tuned_{args.base.partition(':')[0]}"
    problem = set_name_problem(registry, name, bare=True)
    if problem:
        raise UserError(f"--name {name!r}: {problem}")
    existing = claim_set(registry, args.out, name, args.overwrite) if args.out else None
    named = load_strategy_file(registry, args.strategy_file) if args.strategy_file else {}
    base = resolve_strategy(registry, args.base, named)
    if not tunable_slots(registry, base.name):
        raise UserError(
            f"--base {args.base!r} has no parameters to tune (counts and vp are held fixed)"
        )
    opponents = [
        resolve_strategy(registry, spec, named)
        for spec in opponent_specs(
            args.opponents, args.players, args.strategy_file, name, args.base, registry
        )
    ]
    result = tune(
        game.load_data(None),
        base,
        opponents,
        args.players,
        args.budget,
        args.seed,
        args.workers,
        progress=not args.no_progress,
        game=game,
    )
    on_game = "" if game.name == "neom" else f" --game {game.name}"
    comment = (
        f"neom tune{on_game} --base {args.base} --opponents {args.opponents} "
        f"--players {args.players} --budget {args.budget} --seed {args.seed}: "
        f"win share {result.tuned_share:.3f} (base {result.base_share:.3f}) on fresh deals, "
        f"{result.games} games"
    )
    tuning = tuning_table(args, game, result, opponents)
    text = strategy_toml(name, result.spec, comment, tuning, registry)
    if args.out:
        try:
            write_set(registry, args.out, name, text, existing)
        except UserError:
            print(text, end="", flush=True)  # the tuned set is not lost: its TOML to paste in
            raise
        print(f"wrote {args.out}: set {name!r}; {comment}")
    else:
        print(text, end="")
    return 0
