"""``neom strategies``: a game's strategies with their descriptions and parameters, the tuned
sets and fields the game ships (each set's rules version and verification), and the sets and
fields of a user's strategy file."""

import argparse

from sim.core.commands.options import add_game_options, resolve_game_options
from sim.core.strategies import StrategyFile, read_strategy_file, shipped_file


def register(parser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = (
        "List every strategy: name, one-line description, parameters with their "
        "defaults, and the tuned parameter sets the game ships. Use a strategy as NAME or "
        "NAME:param=value,..."
    )
    parser.add_argument(
        "--strategy-file",
        metavar="FILE",
        help="also list the named parameter sets of this TOML strategy file",
    )
    add_game_options(parser, "strategies", data=False)
    parser.set_defaults(func=run)


def _print_file(title: str, read: StrategyFile, registry, rules_version: str) -> None:
    print(f"\n{title}:")
    known = registry.by_name()
    for name, spec in read.sets.items():
        info = known[spec.name]
        print(f"{name}: {spec.spec}  ({info.name}: {info.description})")
        tables = read.tables.get(name, {})
        tuning = tables.get("tuning", {})
        if "rules_version" in tuning:
            made = f"    tuned under rules {tuning['rules_version']}"
            if tuning.get("rules_version") != rules_version:
                made += f" (the game's rules are now {rules_version})"
            print(made)
        verification = tables.get("verification")
        if isinstance(verification, dict):
            for line in verification_lines(name, verification):
                print(f"    {line.strip()}" if line.startswith(" ") else f"    verified: {line}")
        else:
            print("    not verified")
    for field in read.fields.values():
        print(f"field {field.name}: {field.description}".rstrip(": "))
        for players, specs in field.tables.items():
            print(f"    {players} player{'s' if players > 1 else ''}: {', '.join(specs)}")


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
    shipped = shipped_file(registry)
    if shipped:
        title = f"tuned sets and fields shipped with {game.title} ({registry.named_sets.name})"
        _print_file(title, shipped, registry, game.rules_version)
    if args.strategy_file:
        read = read_strategy_file(registry, args.strategy_file, shipped)
        _print_file(f"sets of {args.strategy_file}", read, registry, game.rules_version)
    return 0


def verification_lines(name: str, table: dict) -> list[str]:
    """A set's stored verification in words (``neom verify`` writes it)."""
    verdict = "passed" if table.get("passed") is True else "FAILED"
    lines = [
        f"{verdict} against {table.get('replaces')} ({table.get('players')} players, rules "
        f"{table.get('rules_version')}, seed {table.get('seed')}, {table.get('date')}, "
        f"commit {table.get('commit')})"
        + (
            ": it plays as what it replaces (the same parameters, so the same games): no lead"
            if table.get("same_as_replaced") is True
            else ""
        )
    ]
    for field in ("tuned", "mixed"):
        check = table.get(field)
        if not isinstance(check, dict):
            continue
        try:
            lines.append(
                f"    {field} field ({', '.join(check['others'])}), {check['games']:,} games: "
                f"win share {check['share']:.3f} [{check['share_lo']:.3f}, "
                f"{check['share_hi']:.3f}] vs {check['replaced_share']:.3f} "
                f"[{check['replaced_lo']:.3f}, {check['replaced_hi']:.3f}], lead "
                f"{check['lead']:+.3f} [{check['lead_lo']:+.3f}, {check['lead_hi']:+.3f}]"
            )
        except (KeyError, TypeError, ValueError):
            lines.append(f"    {field} field: incomplete figures")
    return lines
