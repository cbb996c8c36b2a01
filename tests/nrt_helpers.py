"""Helpers of the reference-count tests (tests/test_nrt.py for NEOM, tests/test_tangram_nrt.py
for Tangram City; imported by basename): which compiled functions of a module are compiled
``_nrt=False``, and which parameters a function's ``return`` statements hand back."""

import ast
import importlib
import inspect
import textwrap

from numba.core.registry import CPUDispatcher


def dispatchers(module_name):
    module = importlib.import_module(module_name)
    return {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module_name
    }


def without_nrt(module_name):
    return {
        name for name, d in dispatchers(module_name).items() if d.targetoptions.get("_nrt") is False
    }


def returned_arguments(function) -> list[str]:
    """The parameters of ``function`` that one of its ``return`` statements hands back."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    params = {a.arg for a in definition.args.args}
    found = []
    for node in ast.walk(definition):
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            found += [v.id for v in values if isinstance(v, ast.Name) and v.id in params]
    return found


def functions_returning_an_argument(no_nrt: dict, scalars: dict) -> list[str]:
    """The functions listed in ``no_nrt`` (module -> space-separated names) whose ``return``
    statements hand back a parameter other than the numbers ``scalars`` names (function ->
    parameter names, checked by eye)."""
    returning = []
    for module_name, names in no_nrt.items():
        functions = dispatchers(module_name)
        for name in names.split():
            allowed = set(scalars.get(name, ()))
            if set(returned_arguments(functions[name].py_func)) - allowed:
                returning.append(f"{module_name}.{name}")
    return returning


def lambda_returning_its_argument(row, n):
    if n:
        return n
    return row
