"""The ``neom`` command line.

Each command lives in its own module exposing ``register(subparsers)``, which adds the
command's parser and sets ``func`` to a function taking the parsed arguments and returning an
exit code. Modules are imported lazily so that ``neom catalog`` does not load the analysis stack.
A user's mistake raises :class:`sim.errors.UserError`: one line on stderr, exit 1, no traceback.
"""

import argparse
import importlib
import sys

from sim.core.errors import UserError

# (command name, module that registers it)
COMMANDS = (
    ("catalog", "sim.neom.commands.catalog"),
    ("score", "sim.neom.commands.score"),
    ("play", "sim.neom.commands.play"),
    ("simulate", "sim.core.commands.simulate"),
    ("strategies", "strategies.neom.commands"),
    ("tune", "strategies.tools.tune"),
    ("report", "analysis.core.commands"),
    ("experiment", "analysis.neom.experiment"),
    ("compare", "analysis.neom.compare"),
)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neom", description="NEOM strategy simulator and balance analytics."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = [name for name, _ in COMMANDS]
    wanted = argv[0] if argv and argv[0] in names else None
    for name, module_name in COMMANDS:
        # Import only the module of the command asked for; all of them for help or a typo.
        if wanted is None or wanted == name:
            importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"neom: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("neom: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error of ours.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
