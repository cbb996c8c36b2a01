"""Runner benchmark: games/s with 1 and 2 worker processes, and peak memory of a long run.

``python -m sim.tools.bench_runner`` plays the same run with ``--workers 1`` and ``--workers 2``,
twice each: the clock of a run starts after the parent's compile/warm-up, so the first ("cold")
run includes the workers' start-up (imports, loading the compiled cache) as a user sees it,
and the second ("warm") reuses the same worker processes, giving the steady throughput the
speed-up is computed from. Then a long run with events while a thread samples the resident
memory of this process and all its children. Results go to ``bench/runner.json``.
"""

import argparse
import json
import os
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

import psutil

from sim.core.machine import write_benchmark
from sim.core.runner import RunConfig, run_simulation

SAMPLE_EVERY_S = 0.2


class MemorySampler(threading.Thread):
    """Samples the RSS of this process plus its children until stopped."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples: list[tuple[float, int]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        me = psutil.Process()
        start = time.perf_counter()
        while not self._stop_event.wait(SAMPLE_EVERY_S):
            rss = 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    rss += process.memory_info().rss
                except psutil.Error:  # a worker that just exited
                    continue
            self.samples.append((time.perf_counter() - start, rss))

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def _mib(n_bytes: int) -> float:
    return round(n_bytes / 2**20, 1)


def _cpu_seconds() -> float:
    """CPU time of this process and its live children (the workers)."""
    total = 0.0
    me = psutil.Process()
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def measure(config: RunConfig) -> dict:
    cpu_before = _cpu_seconds()
    result = run_simulation(config)
    cpu_s = _cpu_seconds() - cpu_before
    return {
        "workers": config.workers,
        "games": result.games_played,
        "wall_s": round(result.wall_s, 2),
        "warmup_s": round(result.warmup_s, 2),
        "games_per_s": round(result.games_per_s, 1),
        # Includes the warm-up; on a shared machine this shows the cost per game apart from
        # the cores the run actually got.
        "cpu_s": round(cpu_s, 2),
        "games_per_cpu_s": round(result.games_played / cpu_s, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.tools.bench_runner", description=__doc__)
    parser.add_argument("--games", type=int, default=10000, help="games of the scaling runs")
    parser.add_argument("--long-games", type=int, default=60000, help="games of the long run")
    parser.add_argument("--strategies", default="greedy,random,greedy,random")
    parser.add_argument("--batch-size", type=int, default=RunConfig.batch_size)
    parser.add_argument("--out", type=Path, default=Path("bench/runner.json"))
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="neom-bench-") as scratch:
        base = RunConfig(
            out=Path(scratch) / "run",
            strategies=tuple(args.strategies.split(",")),
            games=args.games,
            batch_size=args.batch_size,
            progress=False,
            overwrite=True,
        )
        # joblib keeps the loky workers of the first run alive for the second.
        one, two = ([measure(replace(base, workers=w)) for _ in ("cold", "warm")] for w in (1, 2))
        sampler = MemorySampler()
        sampler.start()
        long_run = measure(replace(base, games=args.long_games, workers=2, events=True))
        sampler.stop()

    rss = [r for _, r in sampler.samples]
    report = {
        "cpu_count": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "strategies": args.strategies,
        "batch_size": args.batch_size,
        "workers_1": {"cold": one[0], "warm": one[1]},
        "workers_2": {"cold": two[0], "warm": two[1]},
        "speedup_2_workers": round(two[1]["games_per_s"] / one[1]["games_per_s"], 3),
        "speedup_2_workers_cold": round(two[0]["games_per_s"] / one[0]["games_per_s"], 3),
        "long_run": long_run
        | {
            "events": True,
            "peak_rss_mib": _mib(max(rss)),
            # Flat memory: the second half of the run peaks no higher than the first.
            "peak_rss_first_half_mib": _mib(max(rss[: len(rss) // 2])),
            "peak_rss_second_half_mib": _mib(max(rss[len(rss) // 2 :])),
            "samples": len(rss),
        },
    }
    write_benchmark(args.out, report)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    raise SystemExit(guarded(main, "python -m sim.tools.bench_runner"))
