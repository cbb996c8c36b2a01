"""``neom strategies``: every strategy with its description and parameters (and the sets of a
strategy file)."""

import argparse

from strategies.neom.params import load_strategy_file
from strategies.neom.registry import STRATEGIES, list_strategies


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "strategies",
        help="list the strategies and their parameters",
        description="List every strategy: name, one-line description, parameters with their "
        "defaults. Use a strategy as NAME or NAME:param=value,...",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--strategy-file",
        metavar="FILE",
        help="also list the named parameter sets of this TOML strategy file",
    )
    parser.set_defaults(func=run)


def run(args) -> int:
    for info in list_strategies():
        print(f"{info.name}: {info.description}")
        if info.param_names:
            params = ", ".join(
                f"{name}={value:g}"
                for name, value in zip(info.param_names, info.defaults, strict=True)
            )
            print(f"    parameters: {params}")
    if args.strategy_file:
        named = load_strategy_file(args.strategy_file)
        print(f"\nsets of {args.strategy_file}:")
        for name, spec in named.items():
            info = STRATEGIES[spec.name]
            print(f"{name}: {spec.spec}  ({info.name}: {info.description})")
    return 0
