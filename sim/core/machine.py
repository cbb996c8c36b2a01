"""What a benchmark reports about the machine it ran on, and the environment of a child process
that compiles into a cache folder of its own (every game's benchmarks and the tools use these)."""

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo; elsewhere what ``platform`` knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cache_env(cache, checkout: Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment for a child that compiles into (or loads from) ``cache``
    alone, with ``checkout``'s sources first on its path when given, and ``extra`` variables.

    ``sim`` keys its compile cache under NEOM_NUMBA_CACHE_BASE, which the parent's own import
    of ``sim`` has set to the parent's folder: both variables name ``cache`` so the child's
    cache is its own."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NEOM_NUMBA_CACHE_BASE=str(cache), **extra)
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    return env
