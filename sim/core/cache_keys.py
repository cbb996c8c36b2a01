"""The compile cache's keys: where each compiled module's entries live (its path relative to the
checkout and a digest of its sources and every package module it imports), and the cache's base
folder. ``sim.core.jit`` files every compiled function's entries by them; ``import sim`` sets the
base before Numba is imported. Editing this module changes every key (it is in every closure).
"""

import ast
import functools
import hashlib
import os
import re
import shutil
from pathlib import Path

PACKAGES = ("sim", "strategies")
ROOT = Path(__file__).resolve().parents[2]
# Bump when the layout of the compile cache or the meaning of its keys changes.
CACHE_LAYOUT = "2"


def _package_modules(root: Path) -> dict[str, Path]:
    files = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def _import_statements(source: str):
    """The import statements of ``source``, at any depth (a function's lazy imports too), read
    from its lines without parsing the whole file (which costs half a second per checkout). A
    docstring line that reads like an import only adds a dependency: never unsafe."""
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        i += 1
        if not text.startswith(("import ", "from ")):
            continue
        if "(" in text and ")" not in text:
            while i < len(lines) and ")" not in lines[i - 1]:
                text += " " + lines[i].strip()
                i += 1
        try:
            yield from ast.parse(text.split("#")[0]).body
        except SyntaxError:
            continue


def _imports(files: dict[str, Path], name: str) -> set[str]:
    """The package modules ``name`` imports (absolute imports; a package's ``__init__`` named
    in ``from package import x`` is left out: it declares a game, compiled code reads nothing
    of it)."""
    found = set()
    for node in _import_statements(files[name].read_text()):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [f"{node.module}.{a.name}" for a in node.names]
            if node.module in files and files[node.module].name != "__init__.py":
                targets.append(node.module)
        else:
            continue
        found.update(t for t in targets if t in files)
    return found


def _closure(files: dict[str, Path], graph: dict[str, set[str]], start: list[str]) -> set[str]:
    needed = set()
    pending = list(start)
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.add(name)
        if name not in graph:
            graph[name] = _imports(files, name)
        pending.extend(graph[name])
    return needed


_USES_NJIT = re.compile(r"^\s*from sim\.core\.jit import .*\b(njit|cfunc)\b", re.MULTILINE)


def _compiled_modules(files: dict[str, Path]) -> list[str]:
    """The modules that compile code: those importing the jit decorator, and the decorator's."""
    names = [name for name, path in files.items() if _USES_NJIT.search(path.read_text())]
    return sorted({*names, "sim.core.jit"})


def _compiled_sources(root: Path) -> list[Path]:
    """The source files compiled code depends on: the jit decorator's module, every module of
    sim/ and strategies/ (subpackages included) that imports it, and every module of those
    packages they import, directly or not (their constants are frozen into the compiled code).
    Drivers such as the CLI, the runner or the benchmarks, and the packages' ``__init__``
    (a game's declaration), are left out, so editing them recompiles nothing."""
    files = _package_modules(root)
    return sorted(files[name] for name in _closure(files, {}, _compiled_modules(files)))


def _digest(root: Path, paths, hashes: dict[Path, bytes] | None = None) -> str:
    """A digest of these files' paths (relative to ``root``) and contents."""
    hashes = {} if hashes is None else hashes
    digest = hashlib.sha256(CACHE_LAYOUT.encode())
    for path in sorted(paths):
        if path not in hashes:
            hashes[path] = hashlib.sha256(path.read_bytes()).digest()
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + hashes[path])
    return digest.hexdigest()[:16]


def _sources_digest(root: Path) -> str:
    """A digest of every source compiled code depends on."""
    return _digest(root, _compiled_sources(root))


@functools.cache
def _module_closures(root: Path) -> dict[str, frozenset[str]]:
    """Each compiled module's package modules: itself and every one it imports, directly or
    not (what its compiled code can contain). Read once per process."""
    files = _package_modules(root)
    graph: dict[str, set[str]] = {}
    return {name: frozenset(_closure(files, graph, [name])) for name in _compiled_modules(files)}


@functools.cache
def _module_digests(root: Path) -> dict[str, str]:
    """Each compiled module's digest, of the sources in its closure (``_module_closures``);
    under ``"*"``, of every compiled source (``_sources_digest``)."""
    files = _package_modules(root)
    hashes: dict[Path, bytes] = {}
    closures = _module_closures(root)
    digests = {
        name: _digest(root, [files[m] for m in closure], hashes)
        for name, closure in closures.items()
    }
    everything = set().union(*closures.values())
    digests["*"] = _digest(root, [files[m] for m in everything], hashes)
    return digests


def cache_key(source: str, own_globals: bool = True) -> tuple[str, str] | None:
    """Where a compiled function of the source file ``source`` has its compile-cache entries:
    (its folder relative to the cache base, the digest its entries are stamped with); None for
    a file outside this checkout's packages (Numba's own cache folders then serve).

    The folder is named after the file's path relative to the checkout and the digest of what
    its compiled code depends on (``_module_digests``), so two clones or worktrees of the same
    code share one cache, editing a module starts a new folder for it and for the modules that
    import it, directly or not, and for no other, and stale code never loads. A function
    compiled over other globals than its module's (a copy rebuilt over another namespace) may
    depend on any compiled source, so it is keyed on all of them (``own_globals`` False)."""
    try:
        relative = Path(source).resolve().relative_to(ROOT)
    except ValueError:
        return None
    if relative.parts[0] not in PACKAGES or relative.suffix != ".py":
        return None
    parts = relative.with_suffix("").parts
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    digests = _module_digests(ROOT)
    digest = digests.get(module, digests["*"]) if own_globals else digests["*"]
    folder = relative.parent / f"{relative.stem}-{digest}"
    return folder.as_posix(), digest


KEPT_CACHES = 3  # compile caches of other source versions kept beside the current one


def _prune_stale_caches(
    base: Path, current: str, keep: int = KEPT_CACHES, prefix: str = ""
) -> None:
    """Delete the compile caches of older source versions in ``base`` but the ``keep`` most
    recently used, so that editing compiled code does not pile up a cache per edit. Only
    folders named ``prefix`` + a 16-hex digest are touched (a module's folders, ``play-<digest>``;
    with no prefix, the whole-checkout folders of the layout before ``CACHE_LAYOUT`` 2)."""
    if not base.is_dir():
        return
    used = []  # (last used, folder)
    for p in base.iterdir():
        digest = p.name[len(prefix) :]
        if (
            p.name != current
            and p.name.startswith(prefix)
            and len(digest) == 16
            and all(c in "0123456789abcdef" for c in digest)
        ):
            try:  # another process may prune the same folder between the listing and here
                if p.is_dir():
                    used.append((p.stat().st_mtime, p))
            except FileNotFoundError:
                continue
    used.sort(key=lambda pair: pair[0], reverse=True)
    for _, stale in used[keep:]:
        shutil.rmtree(stale, ignore_errors=True)


def default_cache_base() -> Path:
    """The compile cache when neither NEOM_NUMBA_CACHE_BASE nor NUMBA_CACHE_DIR names one: a
    folder per user, shared by every clone and worktree (their entries are keyed on relative
    paths and source digests, ``cache_key``)."""
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache_home) / "neom-sim" / "numba"


def _numba_cache_base() -> str:
    """The compile cache's base folder; ``sim.core.jit`` files each compiled module's entries
    under it (``cache_key``). Worker processes inherit it through NEOM_NUMBA_CACHE_BASE."""
    base = (
        os.environ.get("NEOM_NUMBA_CACHE_BASE")
        or os.environ.get("NUMBA_CACHE_DIR")
        or str(default_cache_base())
    )
    os.environ["NEOM_NUMBA_CACHE_BASE"] = base
    _prune_stale_caches(Path(base), "")  # folders of the previous layout
    return base
