"""The command table of ``neom``: the listing comes from it without importing any command's
module, and each module defines the command the table names it for."""

import argparse
import importlib
import subprocess
import sys

from sim.core.cli import all_commands
from sim.core.game import RuleOption

LISTING = """
import contextlib, io, sys
from sim.core.cli import all_commands, main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    main(["--help"])  # argparse prints the help and exits
modules = [module for _, module, _ in all_commands() if module in sys.modules]
print(modules)
print(out.getvalue())
"""


def test_listing_imports_no_command_module():
    shown = subprocess.run(
        [sys.executable, "-c", LISTING], capture_output=True, text=True, check=True
    ).stdout
    assert shown.startswith("[]\n")
    listing = " ".join(shown.split())  # argparse wraps long help lines
    for name, _, what in all_commands():
        assert f"{name} {' '.join(what.split())}" in listing


def test_each_module_defines_the_command_it_is_named_for():
    for name, module, _ in all_commands():
        parser = argparse.ArgumentParser(prog=f"neom {name}")
        importlib.import_module(module).register(parser)
        assert parser.format_usage() != f"usage: neom {name} [-h]\n", name  # arguments added


def test_rule_option_flag_is_the_name_unless_given():
    choices = {"yes": 1, "no": 0}
    plain = RuleOption(name="fountain_kept", choices=choices, default="no", help="")
    assert plain.flag == "--fountain-kept"
    named = RuleOption(
        name="neighborhood_through_any", choices=choices, default="no", help="", flag="--nb"
    )
    assert named.flag == "--nb"
