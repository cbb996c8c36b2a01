"""The ``neom`` command line.

Each command is named in a table here with its one-line help, and lives in its own module
exposing ``register(parser)``, which gives the command's parser its description and arguments and
sets ``func`` to a function taking the parsed arguments and returning an exit code. Only the module
of the command asked for is imported: ``neom catalog`` does not load the analysis stack, and
``neom --help`` or a mistyped command imports none.
A user's mistake raises :class:`sim.core.errors.UserError`: one line on stderr, exit 1, no
traceback; so does an operating-system failure (a full disk, a read-only folder) that no command
reported in its own words.
"""

import argparse
import importlib
import shlex
import sys
from collections.abc import Callable

from sim.core.errors import UserError
from sim.core.registry import game_names, get_game

# Commands every game shares: (command name, module whose register(parser) defines it, one-line
# help for ``neom --help``, here so that listing the commands imports none of them).
COMMANDS = (
    ("simulate", "sim.core.commands.simulate", "play many games and write Parquet tables"),
    (
        "report",
        "analysis.core.commands",
        "write the balance report (HTML, Markdown, figures, CSV tables) of a run folder",
    ),
    ("play", "sim.core.commands.play", "play one game and tell it turn by turn"),
    (
        "score",
        "sim.core.commands.score",
        "score one position (JSON) and print the breakdown as JSON",
    ),
    ("strategies", "sim.core.commands.strategies", "list the strategies and their parameters"),
    (
        "ladder",
        "analysis.core.ladder",
        "each rung of a skill ladder against the rung below, on paired deals",
    ),
    (
        "compare",
        "analysis.core.compare",
        "A/B report: two data files (catalogues, tile sets) or two rules readings played on the "
        "same deals",
    ),
    (
        "experiment",
        "analysis.core.experiment",
        "paired experiment: force an item on a seat (NEOM: first draft pick / first selection of "
        "its generation) or ban it, same deals twice",
    ),
    (
        "balance",
        "analysis.core.balance",
        "the lever value (NEOM: VP, cost, ...; Tangram City: a tile's area, a bonus) that brings "
        "an item's effect into the band, measured on paired deals and re-measured on fresh ones; "
        "NEOM --all: a whole-catalogue pass",
    ),
    ("tune", "strategies.tools.tune", "tune a strategy's parameters against opponents (CMA-ES)"),
    (
        "verify",
        "analysis.tools.verify",
        "check that tuned sets beat what they replace, on fresh deals",
    ),
)


def all_commands() -> tuple[tuple[str, str, str], ...]:
    """The shared commands, then each game's own (NEOM's catalog, ...)."""
    own = tuple(command for name in game_names() for command in get_game(name).commands)
    return COMMANDS + tuple(dict.fromkeys(own))


def _given_game(argv: list[str]) -> str | None:
    """The value of ``--game`` in ``argv`` (``--game X`` or ``--game=X``), if any."""
    for i, arg in enumerate(argv):
        if arg == "--game" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--game="):
            return arg.partition("=")[2]
    return None


# Shared commands without --game, and why: the game comes with their input.
GAME_FROM_INPUT = {"report": "a run folder records its game, and report reads it from there"}


def refuse_other_games(argv: list[str]) -> None:
    """``--game`` where it does not apply, in one line saying why: on a command whose input
    names the game (:data:`GAME_FROM_INPUT`), and on a game's own command (``Game.commands``:
    NEOM's catalog, Tangram City's tileset) given another game, rather than
    argparse's reading of ``--game`` as an abbreviation (``verify --game tangram`` was
    ``--games tangram``) or an unknown argument."""
    if not argv:
        return
    name = _given_game(argv[1:])
    if name is not None and argv[0] in GAME_FROM_INPUT:
        raise UserError(f"neom {argv[0]}: --game does not apply: {GAME_FROM_INPUT[argv[0]]}")
    if name not in game_names():
        return
    owners = {g: what for g in game_names() for c, _, what in get_game(g).commands if c == argv[0]}
    if not owners or name in owners:
        return
    what = next(iter(owners.values()))  # the command's one-line help, as `neom --help` shows
    titles = " and ".join(get_game(g).title for g in owners)
    game = get_game(name)
    own = ", ".join(c for c, _, _ in game.commands) or "none"
    raise UserError(
        f"neom {argv[0]}: --game {name} does not apply: {argv[0]} is {titles}'s own command "
        f"({what}), built on its data and strategies; {game.title}'s own commands: {own}"
    )


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neom",
        description="Strategy simulator and balance analytics for tile-placement board games "
        f"({', '.join(get_game(name).title for name in game_names())}).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = argv[0] if argv else None
    for name, module_name, what in all_commands():
        command = subparsers.add_parser(name, help=what)
        if name == wanted:  # only its module: the others' arguments are not needed
            importlib.import_module(module_name).register(command)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv

    def command() -> int:
        refuse_other_games(argv)
        args = build_parser(argv).parse_args(argv)
        # What a run folder records as its command: the arguments this call was given, not
        # the process's own (a test, a tool or a pytest worker calls main() with its own list).
        args.command_line = shlex.join(["neom", *argv])
        return int(args.func(args) or 0)

    return guarded(command)


def guarded(command: Callable[[], int | None], prog: str = "neom") -> int:
    """``command()``'s exit code, with the command line's error handling: a user's mistake or
    a failure of the machine is one line on stderr (``prog: error: ...``) and exit 1, an
    interrupt one line and 130. Every documented ``python -m`` module's main runs through
    this too (``sys.exit(guarded(main, "python -m ..."))``)."""
    try:
        return int(command() or 0)
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error of ours.
        sys.stderr.close()
        return 0
    except OSError as exc:
        # A failure of the machine rather than of the input (a full disk, a read-only or
        # vanished folder) that no command turned into its own message: still one line.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{prog}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{prog}: error: out of memory", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
