"""``neom strategies``: a game's strategies with their descriptions and parameters, the tuned
sets the game ships, and the sets of a user's strategy file."""

import argparse

from sim.core.commands.options import add_game_options, resolve_game_options
from sim.core.strategies import load_strategy_file, shipped_sets


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "strategies",
        help="list the strategies and their parameters",
        description="List every strategy: name, one-line description, parameters with their "
        "defaults, and the tuned parameter sets the game ships. Use a strategy as NAME or "
        "NAME:param=value,...",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--strategy-file",
        metavar="FILE",
        help="also list the named parameter sets of this TOML strategy file",
    )
    add_game_options(parser, "strategies", data=False)
    parser.set_defaults(func=run)


def _print_sets(title: str, sets: dict, registry) -> None:
    print(f"\n{title}:")
    known = registry.by_name()
    for name, spec in sets.items():
        info = known[spec.name]
        print(f"{name}: {spec.spec}  ({info.name}: {info.description})")


def run(args) -> int:
    game, _, _ = resolve_game_options(args, "strategies")
    registry = game.strategies
    for info in registry.strategies:
        print(f"{info.name}: {info.description}")
        if info.param_names:
            params = ", ".join(
                f"{name}={value:g}"
                for name, value in zip(info.param_names, info.defaults, strict=True)
            )
            print(f"    parameters: {params}")
    shipped = shipped_sets(registry)
    if shipped:
        _print_sets(
            f"tuned sets shipped with {game.title} ({registry.named_sets.name})", shipped, registry
        )
    if args.strategy_file:
        _print_sets(
            f"sets of {args.strategy_file}",
            load_strategy_file(registry, args.strategy_file),
            registry,
        )
    return 0
