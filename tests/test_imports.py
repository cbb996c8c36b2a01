"""Imports point one way (issues 16 and 40): the core never imports a game package (only the
registry names them, as strings), the packages import each other without a cycle, so do the
modules, and no import points back up a floor: ``sim`` (rules, runner, store) is the ground,
``strategies`` stands on it and ``analysis`` on both (``sim`` reaches a game's strategies and
report sections through the Game interface's ``"module:attribute"`` references).

Packages are the subpackages ``sim.core``, ``sim.neom``, ``strategies.neom``, ``analysis.core``,
... (and a top-level package's own modules, such as ``sim/__init__.py``, count as that
package). Every ``import`` counts, at module level or inside a function.
"""

import ast
import functools
import re
from pathlib import Path

import pytest

import sim
from sim.core.cache_keys import PACKAGES, _package_modules

ROOT = Path(sim.__file__).resolve().parent.parent
TOP = ("sim", "strategies", "analysis")  # the floors, ground first
CORE = {"sim.core", "analysis.core"}


def _package(module: str) -> str | None:
    """The package a dotted module name belongs to (None: outside the project)."""
    parts = module.split(".")
    if parts[0] not in TOP:
        return None
    if len(parts) > 1 and (ROOT / parts[0] / parts[1]).is_dir():
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def _modules() -> dict[str, Path]:
    """Every module of the three floors by dotted name: the compile cache's own walk of the
    packages it keys (so these checks and the cache's closures agree on what a module is), and
    ``analysis``, which compiles nothing, named the same way."""
    found = _package_modules(ROOT)
    assert set(TOP) == {*PACKAGES, "analysis"}
    for path in (ROOT / "analysis").rglob("*.py"):
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[dotted.removesuffix(".__init__")] = path
    return found


@functools.cache
def _import_nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a module's syntax tree, parsed once per test process: the seven checks
    below read the same tree (parsing it each time was most of their 8 s)."""
    return tuple(ast.walk(ast.parse(path.read_text())))


def package_imports() -> dict[str, set[tuple[str, str]]]:
    """package -> {(imported package, the importing module)} over every import statement."""
    edges: dict[str, set[tuple[str, str]]] = {}
    for module, path in _modules().items():
        source = _package(module)
        edges.setdefault(source, set())
        for node in _import_nodes(path):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                target = _package(name)
                if target is not None and target != source:
                    edges[source].add((target, module))
    return edges


def _imported(node: ast.AST, module: str, path: Path) -> list[str]:
    """The dotted names an import statement names (relative ones made absolute)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    # ``from package import module`` imports that module; ``from module import name`` the module
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def module_imports() -> dict[str, set[str]]:
    """module -> the project's modules it imports (every import statement, anywhere in it)."""
    modules = _modules()
    edges: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges[module] = set()
        for node in _import_nodes(path):
            names = _imported(node, module, path)
            if isinstance(node, ast.ImportFrom):
                # the submodules named, else the module the names come from
                found = [n for n in names[:-1] if n in modules] or [names[-1]]
            else:
                found = names
            for name in found:
                while name and name not in modules:  # ``import a.b.c`` of a name inside c
                    name = name.rpartition(".")[0]
                if name and name != module:
                    edges[module].add(name)
    return edges


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (its nodes in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def games() -> set[str]:
    return {p.name for p in (ROOT / "sim").iterdir() if (p / "__init__.py").is_file()} - {
        "core",
        "tools",
    }


def test_the_core_never_imports_a_game_package():
    edges = package_imports()
    game_packages = {f"{top}.{game}" for top in TOP for game in games()}
    wrong = sorted(
        f"{module} imports {target}"
        for source in CORE
        for target, module in edges.get(source, ())
        if target in game_packages
    )
    assert not wrong, "\n".join(wrong)


def test_packages_import_each_other_without_a_cycle():
    edges = package_imports()
    graph = {source: {target for target, _ in targets} for source, targets in edges.items()}
    cycle = _cycle(graph)
    if cycle:
        via = {
            f"{a} -> {b}: " + ", ".join(sorted(m for t, m in edges[a] if t == b))
            for a, b in zip(cycle, cycle[1:], strict=False)
        }
        raise AssertionError("import cycle: " + " -> ".join(cycle) + "\n" + "\n".join(via))


def test_the_checks_see_a_planted_cycle_and_a_core_import(monkeypatch):
    """The two checks fail on what they guard against (they read the real tree otherwise)."""
    real = package_imports()
    planted = {k: set(v) for k, v in real.items()}
    planted["sim.core"].add(("sim.neom", "sim.core.planted"))
    planted["sim.neom"].add(("sim.core", "sim.neom.x"))
    monkeypatch.setitem(globals(), "package_imports", lambda: planted)
    with pytest.raises(AssertionError, match=re.escape("sim.core.planted imports sim.neom")):
        test_the_core_never_imports_a_game_package()
    with pytest.raises(AssertionError, match="import cycle"):
        test_packages_import_each_other_without_a_cycle()


def test_modules_import_each_other_without_a_cycle():
    """Not only packages: two modules of one package that import each other (even inside a
    function) are a knot to untie, e.g. by moving what both need into a third module."""
    cycle = _cycle(module_imports())
    assert cycle is None, "import cycle between modules: " + " -> ".join(cycle)


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    """Imports from a lower floor to a higher one (``sim`` -> ``strategies`` or ``analysis``,
    ``strategies`` -> ``analysis``)."""
    floor = {top: i for i, top in enumerate(TOP)}
    return sorted(
        f"{source} imports {target}"
        for source, targets in edges.items()
        for target in targets
        if floor[target.split(".")[0]] > floor[source.split(".")[0]]
    )


def test_no_import_points_back_up_a_floor():
    """The benchmarks of ``sim/tools`` play a game's strategies through the Game interface
    (``GAME.play_batch_for``), and ``neom verify``, which tests strategies with the analysis's
    statistics, lives on the analysis floor (``analysis/tools/verify.py``)."""
    wrong = upward_imports(module_imports())
    assert not wrong, "\n".join(wrong)


def test_the_module_checks_see_a_planted_cycle_and_an_upward_arrow():
    """The module checks fail on what they guard against (they read the real tree otherwise)."""
    edges = {k: set(v) for k, v in module_imports().items()}
    assert _cycle(edges) is None
    edges["analysis.neom.levers"].add("analysis.neom.balance")  # balance imports levers
    cycle = _cycle(edges)
    assert cycle is not None and {"analysis.neom.levers", "analysis.neom.balance"} <= set(cycle)
    edges = {k: set(v) for k, v in module_imports().items()}
    edges["sim.tools.bench"].add("strategies.neom.entries")
    edges["strategies.tools.tune"].add("analysis.core.stats")
    assert upward_imports(edges) == [
        "sim.tools.bench imports strategies.neom.entries",
        "strategies.tools.tune imports analysis.core.stats",
    ]


def test_module_imports_reads_every_form_of_import():
    """``from package import module``, ``from module import name``, ``import a.b`` and an
    import inside a function each count as the module they name."""
    edges = module_imports()
    assert "analysis.neom.levers" in edges["analysis.neom.disasters"]  # inside a function
    assert "analysis.core.compare" in edges["analysis.neom.compare"]  # from package import mod
    assert "sim.core.files" in edges["sim.core.store"]  # from module import names
