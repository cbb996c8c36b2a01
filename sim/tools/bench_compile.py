"""``python -m sim.tools.bench_compile``: the cold compile of the NEOM game core, timed.

What a new user pays once per machine before the first game (``make run``, ``make test``): the
compiled ``play_batch`` of a lineup (by default ``make run``'s): the entry that plays it
(``strategies.neom.entries``), which compiles the strategies of that entry only. Each repeat
is a fresh Python process with an empty compile cache of its own (a new temporary folder),
which imports the game core and calls ``play_batch`` on zero games, so the call is
compilation and nothing else. Wall and CPU seconds (user + system) are reported for the call
and for the whole process, with the machine's facts (CPU, cores, load, what else was
running), to stdout and to ``bench/compile.json``.

    python -m sim.tools.bench_compile [--repeat 2] [--checkout DIR] [--functions 20]
                                      [--lineup expert,tuned_builder_2p] [--build [--jobs N]]

``--parallel`` times the lineup's pieces (the NEOM loop and each strategy family it plays,
compiled independently) built side by side, one process each, ``--jobs`` at once (``python -m
sim.tools.build_cache --lineup``): what a first run of that lineup could take on this many
cores. ``--build`` times instead what ``make install`` compiles: ``python -m sim.tools.build_cache``
(every entry of every game, ``--jobs`` processes at once; default one a core) into an empty
cache, wall and CPU of the whole build, with its progress lines.

``--checkout`` times another checkout of the project (a ``git worktree add --detach`` of an
older commit) the same way; ``--functions`` prints the functions that took longest to
compile (inclusive: a function's time contains its callees'); ``--lineup`` times another
lineup's pieces (NEOM: the loop, or the search entry for a lineup with ``expert``, and the
families its strategies belong to).
"""

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sim.core.machine import cache_env, cpu_model, git_output, write_benchmark

RESULTS = Path("bench") / "compile.json"
DEFAULT_LINEUP = "greedy,builder,merchant,industrialist"  # make run's (RUN_STRATEGIES)

# Runs in the fresh process, with the checkout on PYTHONPATH: every version of the project since
# the sim/neom layout, before and after play_batch took the Game interface's signature.
CHILD = r"""
import json, os, sys, time
wall0 = time.perf_counter()
cpu0 = time.process_time()
timings = {}
if int(os.environ.get("NEOM_BENCH_FUNCTIONS", "0")):
    from numba.core import event

    class Listener(event.Listener):
        def __init__(self):
            self.stack = []

        def on_start(self, ev):
            name = ev.data["dispatcher"].py_func.__qualname__ if "dispatcher" in ev.data else "?"
            self.stack.append((name, time.perf_counter()))

        def on_end(self, ev):
            name, start = self.stack.pop()
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - start

    event.register("numba:compile", Listener())
import numpy as np
from sim.core import rng

key = rng.master_key(1)
ids = np.zeros(0, dtype=np.int64)
try:  # the Game interface: what the runner calls, through play_arrays, on zero games
    from sim.core.batch import play_arrays
    from sim.neom import GAME

    data = GAME.load_data(None).arrays
    registry = GAME.strategies
    strategy_ids = [info.id for info in registry.strategies]
    lineup = os.environ.get("NEOM_BENCH_LINEUP", "")
    if lineup:  # --lineup: the entry that lineup uses
        from sim.core.strategies import resolve_strategy, split_strategies

        strategy_ids = [resolve_strategy(registry, s).id for s in split_strategies(lineup)]
    elif hasattr(GAME, "play_batch_for"):  # '': every strategy but the searches
        from strategies.neom.registry import SEARCH_IDS

        strategy_ids = [i for i in strategy_ids if i not in SEARCH_IDS]
    strategy_ids = np.array(strategy_ids)
    params = np.zeros((len(strategy_ids), registry.n_params))
    args = (GAME, key, ids, ids, np.zeros((0, 4)), strategy_ids, params, data, GAME.make_rules())

    def compile_once():
        play_arrays(*args, events=True)

except ImportError:  # before the interface: play_batch called as the runner called it
    from sim.neom import records as R
    from sim.neom.catalog import load_catalog
    from sim.neom.tables import make_rules
    from strategies.neom.play import STRATEGY_ID_DTYPE, play_batch
    from strategies.neom.registry import N_PARAMS, list_strategies

    tables = load_catalog()
    strategy_ids = np.array([info.id for info in list_strategies()], dtype=STRATEGY_ID_DTYPE)
    args = (
        key, ids, ids, np.zeros((0, 4), dtype=np.int32), 4, strategy_ids,
        np.zeros((len(strategy_ids), N_PARAMS)), tables.tiles, tables.req, tables.effects,
        tables.goods_tier, tables.board_center, make_rules(),
        np.zeros((0, R.N_GAME_COLS), dtype=np.int64),
        np.zeros((0, R.MAX_PLAYERS, R.N_PLAYER_COLS), dtype=np.int32),
        np.zeros((0, R.N_EVENT_COLS), dtype=np.int32),
    )

    def compile_once():
        play_batch(*args)

wall1 = time.perf_counter()
cpu1 = time.process_time()
compile_once()
wall2 = time.perf_counter()
cpu2 = time.process_time()
top = sorted(timings.items(), key=lambda item: -item[1])
print(json.dumps({
    "import_wall": wall1 - wall0,
    "import_cpu": cpu1 - cpu0,
    "compile_wall": wall2 - wall1,
    "compile_cpu": cpu2 - cpu1,
    "functions": top[: int(os.environ.get("NEOM_BENCH_FUNCTIONS", "0"))],
}))
"""


def busy_processes(threshold: float = 20.0) -> list[str]:
    """Other processes using a good share of a core right now (what else was running)."""
    try:
        import psutil
    except ImportError:
        return ["(psutil not installed: not checked)"]
    procs = list(psutil.process_iter(["pid", "name", "cmdline"]))
    for proc in procs:
        try:
            proc.cpu_percent(None)
        except psutil.Error:
            pass
    time.sleep(1.0)
    busy = []
    mine = os.getpid()
    for proc in procs:
        try:
            share = proc.cpu_percent(None)
            if share >= threshold and proc.pid != mine:
                command = " ".join(proc.info["cmdline"] or [proc.info["name"] or "?"])
                busy.append(f"{share:.0f}% {command[:100]}")
        except psutil.Error:
            pass
    return busy


def git_revision(checkout: Path) -> str:
    return git_output(checkout, "describe", "--always", "--dirty") or "unknown"


def _cold_run(checkout: Path, argv: list[str], **extra: str):
    """Run ``argv`` in ``checkout`` as a fresh process with an empty cache folder of its own;
    (the finished process, its wall, user, system and CPU seconds)."""
    with tempfile.TemporaryDirectory(prefix="neom-cold-cache-") as cache:
        env = cache_env(cache, checkout, **extra)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, cwd=checkout, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = after.ru_utime - before.ru_utime
    system = after.ru_stime - before.ru_stime
    times = {"process_wall": wall, "process_user": user, "process_sys": system}
    return done, times | {"process_cpu": user + system}


def cold_compile(checkout: Path, functions: int = 0, lineup: str = "") -> dict:
    """Time one cold compile: a fresh process, an empty cache folder of its own."""
    done, times = _cold_run(
        checkout,
        [sys.executable, "-c", CHILD],
        NEOM_BENCH_FUNCTIONS=str(functions),
        NEOM_BENCH_LINEUP=lineup,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_compile: the compile failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1]) | times


def cold_build(checkout: Path, jobs: int, lineup: str = "") -> dict:
    """Time one cold ``build_cache`` (of the NEOM lineup's pieces only, when given): a fresh
    process tree, an empty cache folder of its own."""
    only = ["--game", "neom", "--lineup", lineup] if lineup else []
    argv = [sys.executable, "-m", "sim.tools.build_cache", "--jobs", str(jobs), *only]
    done, times = _cold_run(checkout, argv)
    if done.returncode != 0:
        raise SystemExit(f"bench_compile: the build failed:\n{done.stdout}{done.stderr}")
    return times | {"lines": done.stdout.strip().splitlines()}


def machine_facts() -> dict:
    import llvmlite
    import numba
    import numpy

    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "numpy": numpy.__version__,
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.tools.bench_compile", description=__doc__)
    parser.add_argument("--repeat", type=int, default=2, help="cold compiles, one after another")
    parser.add_argument("--checkout", type=Path, default=None, help="another checkout to time")
    parser.add_argument("--functions", type=int, default=0, help="list the N slowest functions")
    parser.add_argument(
        "--lineup",
        default=DEFAULT_LINEUP,
        help="compile the entry this lineup uses (e.g. random, greedy, expert,tuned_builder_2p; "
        f"default: make run's, {DEFAULT_LINEUP}; '': every strategy but the searches)",
    )
    parser.add_argument(
        "--build", action="store_true", help="time make install's build of every entry instead"
    )
    parser.add_argument(
        "--parallel",
        action="store_true",
        help="time the lineup's pieces built side by side instead (build_cache --lineup: the "
        "loop and each strategy family in a process of its own, --jobs at once)",
    )
    parser.add_argument(
        "--jobs", type=int, default=0, help="--build, --parallel: processes (0: one a core)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        raise SystemExit("bench_compile: --repeat must be at least 1")
    if args.jobs < 0:
        raise SystemExit("bench_compile: --jobs must be 0 or more")
    checkout = (args.checkout or Path(__file__).resolve().parents[2]).resolve()
    facts = machine_facts()
    if args.build or args.parallel:
        return bench_build(args, checkout, facts)
    runs = []
    others = []
    for r in range(args.repeat):
        others.append(busy_processes())
        load_before = os.getloadavg()
        run = cold_compile(checkout, args.functions, args.lineup)
        run["load_before"] = load_before
        run["load_after"] = os.getloadavg()
        runs.append(run)
        print(
            f"cold compile {r + 1}/{args.repeat}: play_batch {run['compile_wall']:.1f} s wall, "
            f"{run['compile_cpu']:.1f} s CPU; whole process {run['process_wall']:.1f} s wall, "
            f"{run['process_cpu']:.1f} s CPU ({run['process_user']:.1f} user + "
            f"{run['process_sys']:.1f} sys); load average {run['load_before'][0]:.2f} before",
            flush=True,
        )
        for name, seconds in run.pop("functions"):
            print(f"  {seconds:8.1f} s  {name}")
    summary = {
        key: {"min": min(r[key] for r in runs), "median": statistics.median(r[key] for r in runs)}
        for key in ("compile_wall", "compile_cpu", "process_wall", "process_cpu")
    }
    report = {
        "what": (
            f"cold compile of the play_batch of the lineup {args.lineup}"
            if args.lineup
            else "cold compile of the play_batch of every strategy but the searches"
        )
        + ", fresh process, empty cache",
        "checkout": str(checkout),
        "revision": git_revision(checkout),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": facts,
        "others_running": others,
        "runs": runs,
        "summary": summary,
    }
    print(
        f"play_batch cold compile: {summary['compile_wall']['median']:.1f} s wall / "
        f"{summary['compile_cpu']['median']:.1f} s CPU (median of {len(runs)}); "
        f"whole process {summary['process_wall']['median']:.1f} s wall / "
        f"{summary['process_cpu']['median']:.1f} s CPU; {facts['cpu']}, {facts['cores']} cores"
    )
    if any(others):
        print(f"also running: {others}")
    write_benchmark(args.out, report)
    print(f"written: {args.out}")
    return 0


def bench_build(args, checkout: Path, facts: dict) -> int:
    jobs = args.jobs or os.cpu_count() or 1
    runs = []
    for r in range(args.repeat):
        load_before = os.getloadavg()
        others = busy_processes()
        run = cold_build(checkout, jobs, args.lineup if args.parallel else "")
        run.update(load_before=load_before, load_after=os.getloadavg(), others_running=others)
        runs.append(run)
        for line in run["lines"]:
            print(f"  {line}")
        print(
            f"cold build {r + 1}/{args.repeat} ({jobs} jobs): {run['process_wall']:.1f} s wall, "
            f"{run['process_cpu']:.1f} s CPU; load average {load_before[0]:.2f} before, "
            f"{run['load_after'][0]:.2f} after",
            flush=True,
        )
    report = {
        "what": (
            f"cold build_cache of the pieces of the lineup {args.lineup}"
            if args.parallel
            else "cold build_cache of every entry of every game"
        )
        + f", {jobs} jobs, empty cache",
        "checkout": str(checkout),
        "revision": git_revision(checkout),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": facts,
        "runs": runs,
        "summary": {
            key: {
                "min": min(r[key] for r in runs),
                "median": statistics.median(r[key] for r in runs),
            }
            for key in ("process_wall", "process_cpu")
        },
    }
    write_benchmark(args.out, report)
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    sys.exit(guarded(main, "python -m sim.tools.bench_compile"))
