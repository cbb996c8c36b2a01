"""neom-sim: the NEOM catalogue, compiled game core and runner."""

import ast
import hashlib
import os
import shutil
import sys
from pathlib import Path

__version__ = "0.1.0"
PACKAGES = ("sim", "strategies")


def _compiled_sources(root: Path) -> list[Path]:
    """The source files compiled code depends on: the jit decorator's module, every module of
    sim/ and strategies/ (subpackages included) that imports it, and every module of those
    packages they import, directly or not (their constants are frozen into the compiled code).
    Drivers such as the CLI, the runner or the benchmarks, and the packages' ``__init__``
    (a game's declaration), are left out, so editing them recompiles nothing."""
    files = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    pending = [
        name for name, path in files.items() if "from sim.core.jit import" in path.read_text()
    ]
    pending.append("sim.core.jit")
    needed = set()
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.add(name)
        for node in ast.walk(ast.parse(files[name].read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" for a in node.names]
                # A package's __init__ declares the game, it holds nothing compiled code reads.
                if node.module in files and files[node.module].name != "__init__.py":
                    targets.append(node.module)
            else:
                continue
            pending.extend(t for t in targets if t in files)
    return sorted(files[name] for name in needed)


def _sources_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in _compiled_sources(root):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


KEPT_CACHES = 3  # compile caches of other source versions kept beside the current one


def _prune_stale_caches(base: Path, current: str, keep: int = KEPT_CACHES) -> None:
    """Delete the compile caches of older source versions in ``base`` but the ``keep`` most
    recently used, so that editing compiled code does not pile up a cache per edit (tens of
    megabytes each). Only folders named like a digest are touched."""
    if not base.is_dir():
        return
    others = [
        p
        for p in base.iterdir()
        if p.is_dir()
        and p.name != current
        and len(p.name) == 16
        and all(c in "0123456789abcdef" for c in p.name)
    ]
    others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in others[keep:]:
        shutil.rmtree(stale, ignore_errors=True)


def _numba_cache_dir() -> str:
    """A compile-cache folder named after a digest of the compiled code's sources.

    Numba's cache notices edits only in a function's own file, not in the modules it calls, so a
    cached game loop could silently run an old engine. Keying the folder on every source the
    compiled code depends on makes any such edit start a fresh cache. Set before numba is first
    imported (sim.jit).
    """
    root = Path(__file__).resolve().parent.parent
    # Worker processes inherit the keyed folder: remember the base so they do not nest it.
    base = (
        os.environ.get("NEOM_NUMBA_CACHE_BASE")
        or os.environ.get("NUMBA_CACHE_DIR")
        or str(root / ".numba_cache")
    )
    os.environ["NEOM_NUMBA_CACHE_BASE"] = base
    digest = _sources_digest(root)
    folder = Path(base) / digest
    if folder.is_dir():
        os.utime(folder)  # its modification time marks its last use (_prune_stale_caches)
    else:
        _prune_stale_caches(Path(base), digest)
    return str(folder)


if "numba" not in sys.modules:
    os.environ["NUMBA_CACHE_DIR"] = _numba_cache_dir()
