"""neom-sim: the NEOM catalogue, compiled game core and runner."""

import hashlib
import os
import sys
from pathlib import Path

__version__ = "0.1.0"


def _numba_cache_dir() -> str:
    """A compile-cache folder named after a digest of the compiled packages' sources.

    Numba's cache notices edits only in a function's own file, not in the modules it calls, so a
    cached game loop could silently run an old engine. Keying the folder on every source file
    makes any edit start a fresh cache. Set before numba is first imported (sim.jit).
    """
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in ("sim", "strategies"):
        for path in sorted((root / package).glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    # Worker processes inherit the keyed folder: remember the base so they do not nest it.
    base = (
        os.environ.get("NEOM_NUMBA_CACHE_BASE")
        or os.environ.get("NUMBA_CACHE_DIR")
        or str(root / ".numba_cache")
    )
    os.environ["NEOM_NUMBA_CACHE_BASE"] = base
    return os.path.join(base, digest.hexdigest()[:16])


if "numba" not in sys.modules:
    os.environ["NUMBA_CACHE_DIR"] = _numba_cache_dir()
