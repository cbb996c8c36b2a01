"""Imports point one way (issue 16): the core never imports a game package (only the registry
names them, as strings), and the packages import each other without a cycle.

Packages are the subpackages ``sim.core``, ``sim.neom``, ``strategies.neom``, ``analysis.core``,
... (and a top-level package's own modules, such as ``sim/__init__.py``, count as that
package). Every ``import`` counts, at module level or inside a function.
"""

import ast
from pathlib import Path

import sim

ROOT = Path(sim.__file__).resolve().parent.parent
TOP = ("sim", "strategies", "analysis")
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
    found = {}
    for top in TOP:
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def package_imports() -> dict[str, set[tuple[str, str]]]:
    """package -> {(imported package, the importing module)} over every import statement."""
    edges: dict[str, set[tuple[str, str]]] = {}
    for module, path in _modules().items():
        source = _package(module)
        edges.setdefault(source, set())
        for node in ast.walk(ast.parse(path.read_text())):
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
    try:
        test_the_core_never_imports_a_game_package()
    except AssertionError as exc:
        assert "sim.core.planted imports sim.neom" in str(exc)
    else:
        raise AssertionError("the core check missed sim.core -> sim.neom")
    try:
        test_packages_import_each_other_without_a_cycle()
    except AssertionError as exc:
        assert "import cycle" in str(exc)
    else:
        raise AssertionError("the cycle check missed sim.core <-> sim.neom")
