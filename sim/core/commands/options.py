"""The command-line options every game-generic command shares: ``--game``, and each game's data
file flag and rules options (``sim.core.game.RuleOption``), in one argument group per game.

Every game's flags are offered (with no default), and ``resolve_game_options`` refuses a flag
that does not belong to the chosen game, so ``--help`` lists them all and a mistake gets one
line.
"""

import argparse
from pathlib import Path

from sim.core.errors import UserError
from sim.core.game import Game, RuleOption, resolve
from sim.core.registry import DEFAULT_GAME, game_names, get_game


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _games() -> list[Game]:
    return [get_game(name) for name in game_names()]


def add_game_option(parser) -> None:
    """``--game``: one of the registered games."""
    parser.add_argument(
        "--game",
        choices=game_names(),
        default=DEFAULT_GAME,
        help=f"the game (default: {DEFAULT_GAME})",
    )


def add_game_options(parser: argparse.ArgumentParser, command: str, data: bool = True) -> None:
    """``--game`` and, per game, its data flag (when ``data``) and the rules options it offers
    to ``command``."""
    add_game_option(parser)
    seen: set[str] = set()
    for game in _games():
        group = parser.add_argument_group(f"{game.title} options (--game {game.name})")
        if data and game.data_flag not in seen:
            seen.add(game.data_flag)
            names = f" or a shipped one's name ({', '.join(game.data_names)})"
            group.add_argument(
                game.data_flag,
                type=Path,
                metavar="FILE",
                help=f"{game.title} data file{names if game.data_names else ''} (default: the "
                "shipped one, a reconstruction)",
            )
        for option in game.rule_options:
            if command in option.commands and option.flag not in seen:
                seen.add(option.flag)
                group.add_argument(
                    option.flag,
                    metavar="|".join(option.choices),
                    help=f"{option.help} (default: {option.default})",
                )


def _label(option: RuleOption, given: str | None) -> str:
    label = option.default if given is None else given
    if label not in option.choices:
        raise UserError(f"{option.flag} {label!r}: expected one of {', '.join(option.choices)}")
    return label


def resolve_game_options(args, command: str) -> tuple[Game, Path | None, dict]:
    """The chosen game, its data file (None: the default) and the rules values of the options
    given, after refusing any flag of another game."""
    game = get_game(args.game)
    own = {game.data_flag} | {o.flag for o in game.rule_options if command in o.commands}
    for other in _games():
        flags = [other.data_flag] + [o.flag for o in other.rule_options]
        for flag in flags:
            if flag not in own and getattr(args, _dest(flag), None) is not None:
                raise UserError(f"{flag} is not an option of --game {game.name}")
    rules = {
        option.name: option.choices[_label(option, getattr(args, _dest(option.flag), None))]
        for option in game.rule_options
        if command in option.commands
    }
    return game, getattr(args, _dest(game.data_flag), None), rules


# --- options several commands share, declared and checked in one place -------------------------

# The options of a field of games (flag -> argparse keywords), declared once: a command adds
# those it offers with add_run_options, changing a keyword where its meaning differs (what
# --games counts, a ladder's two players).
RUN_OPTIONS = {
    "--players": {"type": int, "default": 4, "help": "players per game (4)"},
    "--games": {"type": int, "default": 2000, "help": "games per side (2000)"},
    "--strategies": {"required": True, "help": "one strategy per seat, comma-separated"},
    "--seed": {"type": int, "default": 1, "help": "master seed of the deals (1)"},
    "--workers": {"type": int, "default": None, "help": "worker processes (all)"},
}
# --workers of the commands that play matches in threads of one process (tune, verify).
THREADS = {"type": int, "default": 1, "help": "threads playing games (1)"}
# What a result depends on of them: the flags a listing records (``run_parameters``).
RESULT_FLAGS = ("--players", "--games", "--strategies", "--seed")


def add_run_options(parser, *flags: str, **changed: dict) -> None:
    """The options ``flags`` of :data:`RUN_OPTIONS` (default: all), in that order; ``changed``:
    per option's name (``games``) the keywords that replace its own."""
    for flag in flags or RUN_OPTIONS:
        parser.add_argument(flag, **(RUN_OPTIONS[flag] | changed.get(_dest(flag), {})))


def run_parameters(args) -> dict:
    """The run options a result depends on (:data:`RESULT_FLAGS`), by flag, as a listing
    records them so that ``--resume`` continues only the same run."""
    from sim.core.strategies import split_strategies

    given = {flag: getattr(args, _dest(flag)) for flag in RESULT_FLAGS}
    return given | {"--strategies": list(split_strategies(args.strategies))}


def add_again_options(parser, noun: str) -> None:
    """``--overwrite`` or ``--resume`` (not both) of a command whose folder a listing names
    (``noun``: what it holds, "comparison")."""
    again = parser.add_mutually_exclusive_group()
    again.add_argument(
        "--overwrite",
        action="store_true",
        help=f"replace an earlier {noun} (what its listing names) and the --json file",
    )
    again.add_argument("--resume", action="store_true", help=f"continue an interrupted {noun}")


MIN_SAMPLE = 2  # --min-n: a spread (and so an interval) needs two seats


def check_players(players: int, game: str | None = None, at_least: int | None = None) -> None:
    """``--players``: a count ``game`` (default: NEOM) can be played with; ``at_least``: the
    command's own floor (a ladder or a tuning match needs an opponent: 2). Checked first, so
    that no later rule (a multiple of the player count, a division by it) sees a count no
    game has."""
    rules = get_game(game or DEFAULT_GAME)
    low = max(rules.min_players, at_least or 0)
    if not low <= players <= rules.max_players:
        raise UserError(f"--players {players}: must be between {low} and {rules.max_players}")


def check_min_n(min_n: int) -> None:
    """``--min-n``: the seats below which an effect is not tested."""
    if min_n < MIN_SAMPLE:
        raise UserError(f"--min-n {min_n}: must be at least {MIN_SAMPLE}")


def add_json_file_option(parser, help: str) -> None:
    """``--json FILE`` (``help``: what it holds) and ``--overwrite``, which replaces it."""
    parser.add_argument("--json", metavar="FILE", help=help)
    parser.add_argument(
        "--overwrite", action="store_true", help="replace the --json file if it exists"
    )


def game_part(game: Game, field: str, missing: str):
    """What ``game`` supplies to a design command (compare, experiment, balance): the object
    its ``field`` (``"compare_ref"``, ...) names, imported; a game that names none gets the one
    line ``missing``."""
    ref = getattr(game, field)
    if not ref:
        raise UserError(missing)
    return resolve(ref)


def game_parts(field: str) -> list[tuple[Game, object | None]]:
    """Every game with what it supplies to a design command (``field``: the ``Game`` field
    naming it), None where it supplies nothing."""
    return [(g, resolve(getattr(g, field)) if getattr(g, field) else None) for g in _games()]


def add_part_options(parser, parts) -> None:
    """Each game's own options of a design command (``parts``: :func:`game_parts`; a part has
    ``options``: (flag, argparse keywords)), in one argument group per game, each flag once."""
    seen = set()
    for game, part in parts:
        if part is None:
            continue
        group = parser.add_argument_group(f"{game.title} options (--game {game.name})")
        for flag, keywords in part.options:
            if flag not in seen:
                seen.add(flag)
                group.add_argument(flag, **keywords)


def refuse_other_parts(args, game: Game, field: str, command: str) -> None:
    """Refuse an option of another game's part (``field``: the ``Game`` field naming the
    parts) given other than its default (every game's options are offered for every game)."""
    parts = game_parts(field)
    mine = next(part for other, part in parts if other.name == game.name)
    own = {flag for flag, _ in mine.options} if mine else set()
    for _, part in parts:
        for flag, keywords in part.options if part else ():
            given = getattr(args, _dest(flag), None)
            store_true = keywords.get("action") == "store_true"
            default = keywords.get("default", False if store_true else None)
            if flag not in own and given != default:
                raise UserError(f"{command}: {flag} is not an option of --game {game.name}")
