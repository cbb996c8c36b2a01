"""Say so while the compiled game core compiles, instead of sitting silent.

The first call of a game's compiled code on a machine (or after its code changed) compiles it
and stores it in the compile cache; later calls load it in a second. ``compile_notice`` wraps
such a first call: when it is still running after a second, it prints one line naming what is
compiling and how long it took last time (or the game's own estimate), and at the end how long
it took, which it records beside the compile cache for next time.
"""

import json
import os
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

SILENT_SECONDS = 1.0  # a cached load takes less; a compile takes far more
TIMES_FILE = "compile_seconds.json"


def _times_path() -> Path | None:
    base = os.environ.get("NEOM_NUMBA_CACHE_BASE")
    return Path(base) / TIMES_FILE if base else None


def _last_time(name: str) -> float | None:
    path = _times_path()
    try:
        return float(json.loads(path.read_text())[name])
    except (AttributeError, OSError, ValueError, KeyError, TypeError):
        return None


def _record_time(name: str, seconds: float) -> None:
    path = _times_path()
    if path is None:
        return
    try:
        times = json.loads(path.read_text()) if path.is_file() else {}
        times = times if isinstance(times, dict) else {}
        times[name] = round(seconds, 1)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(times, indent=1) + "\n")
    except (OSError, ValueError):
        pass  # only a hint for next time: never a reason to fail


@contextmanager
def compile_notice(title: str, estimate_s: float, stream=None, code=None):
    """Around the first call of ``title``'s compiled code (see the module docstring).
    ``code``: the compiled function about to be called; when it is known to load from the
    compile cache (``jit.has_cached_code``) nothing is said, however long the load takes on a
    busy machine, and nothing recorded (a slow load must not become the next estimate)."""
    from sim.core import jit  # here: the drivers importing this module stay out of the cache key

    if code is not None and jit.has_cached_code(code):
        yield
        return
    stream = stream or sys.stderr
    said = threading.Event()
    last = _last_time(title)
    about = last if last is not None else estimate_s

    def say() -> None:
        said.set()
        print(
            f"neom: compiling the {title} game core (once per machine and code version, "
            f"about {about:.0f} s)...",
            file=stream,
            flush=True,
        )

    timer = threading.Timer(SILENT_SECONDS, say)
    timer.daemon = True
    start = time.perf_counter()
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if said.is_set():
            seconds = time.perf_counter() - start
            print(f"neom: compiled in {seconds:.0f} s", file=stream, flush=True)
            _record_time(title, seconds)
