"""What a benchmark reports about the machine it ran on, the checkout's commit that a tuned set
records, and the environment of a child process that compiles into a cache folder of its own
(every game's benchmarks and the tools use these)."""

import json
import os
import platform
import subprocess
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


def write_benchmark(path: Path, report: dict) -> None:
    """Write a benchmark's ``report`` as indented JSON to ``path`` (its folder made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


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


def git_output(checkout: Path, *args: str) -> str | None:
    """What ``git -C checkout args`` prints (stripped), or None where git fails or is missing."""
    try:
        return subprocess.run(
            ["git", "-C", str(checkout), *args], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def source_commit() -> str:
    """The checkout's commit (``-dirty`` when its Python code has uncommitted changes: the code
    that plays; a strategy file being written or a document does not count), or ``unknown``."""
    root = Path(__file__).resolve().parent.parent.parent  # sim/core/machine.py -> the checkout
    head = git_output(root, "rev-parse", "--short", "HEAD")
    dirty = git_output(root, "status", "--porcelain", "--untracked-files=no", "--", "*.py")
    if head is None or dirty is None:
        return "unknown"
    return head + ("-dirty" if dirty else "")
