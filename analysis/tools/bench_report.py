"""Report benchmark: peak memory and throughput of ``neom report`` as the run grows.

``python -m analysis.tools.bench_report`` simulates random 4-player runs (fast to play) of each
size asked for (default: 150,000 and 1,000,000 games with events, 1,000,000 without), then
times ``neom report`` on each in a child process under ``/usr/bin/time -v`` while a thread
samples the resident memory of the report's whole process tree (the command and its
workers). It records, per run: wall time, CPU time, games/s, the largest single process's
peak RSS (time -v's figure) and the process tree's peak RSS, each also per game; then each
goal of issue 29 (peak memory <= 2 GB whatever the size; >= 5,000 games/s with events and
>= 20,000 without; memory and time per game flat between the sizes) as met or not. Results
go to ``bench/report.json`` with the machine's facts (CPU, cores, load before and after).
Runs are played into ``--runs`` (a temporary folder by default) and deleted at the end
unless ``--keep``: 1,000,000 games with events take about 750 MB of disk.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from sim.core.machine import cpu_model, write_benchmark

GOAL_PEAK_MB = 2048
GOAL_GAMES_PER_S = {True: 5000, False: 20000}
# "Flat": per game, the largest run needs no more than this times the smallest run's time,
# and its peak memory is no more than this times the smallest run's (memory per game falls
# as the run grows, since it is bounded).
FLAT_RATIO = 1.25
DEFAULT_SIZES = "150000:events,1000000:events,1000000:plain"
SAMPLE_EVERY_S = 0.1


class TreeSampler(threading.Thread):
    """Samples the summed RSS of a process and its descendants until it ends."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.peak = 0
        self.peak_one = 0

    def run(self) -> None:
        while True:
            try:
                processes = [self.process, *self.process.children(recursive=True)]
            except psutil.Error:
                return
            total = 0
            for process in processes:
                try:
                    rss = process.memory_info().rss
                except psutil.Error:
                    continue
                total += rss
                self.peak_one = max(self.peak_one, rss)
            self.peak = max(self.peak, total)
            if not self.process.is_running() or self.process.status() == psutil.STATUS_ZOMBIE:
                return
            time.sleep(SAMPLE_EVERY_S)


def _neom() -> str:
    return str(Path(sys.executable).with_name("neom"))


def _simulate(run: Path, games: int, events: bool, workers: int, seed: int) -> float:
    command = [
        _neom(), "simulate", "--players", "4", "--games", str(games),
        "--strategies", "random,random,random,random", "--seed", str(seed),
        "--workers", str(workers), "--out", str(run), "--overwrite",
    ] + (["--events"] if events else [])  # fmt: skip
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _time_v(stderr: str) -> dict:
    """The fields of ``/usr/bin/time -v`` the benchmark reads."""
    fields = {
        "user_s": r"User time \(seconds\): ([\d.]+)",
        "system_s": r"System time \(seconds\): ([\d.]+)",
        "max_rss_kb": r"Maximum resident set size \(kbytes\): (\d+)",
    }
    out = {}
    for key, pattern in fields.items():
        match = re.search(pattern, stderr)
        out[key] = float(match.group(1)) if match else None
    return out


def measure(run: Path, out: Path, workers: int, games: int, events: bool) -> dict:
    time_v = shutil.which("time") or "/usr/bin/time"
    command = [_neom(), "report", str(run), "--out", str(out), "--workers", str(workers)]
    if Path(time_v).exists():
        command = [time_v, "-v", *command]
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = TreeSampler(process.pid)
    sampler.start()
    _, stderr = process.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    if process.returncode:
        raise RuntimeError(f"neom report {run} failed:\n{stderr.decode()[-2000:]}")
    fields = _time_v(stderr.decode())
    cpu = (fields["user_s"] or 0.0) + (fields["system_s"] or 0.0)
    largest = fields["max_rss_kb"] * 1024 if fields["max_rss_kb"] else sampler.peak_one
    tree = max(sampler.peak, largest)
    return {
        "games": games,
        "events": events,
        "workers": workers,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "games_per_s": round(games / wall, 1),
        "games_per_cpu_s": round(games / cpu, 1) if cpu else None,
        "us_per_game": round(1e6 * wall / games, 2),
        "cpu_us_per_game": round(1e6 * cpu / games, 2),
        "peak_rss_mb": round(largest / 2**20, 1),  # /usr/bin/time -v: the largest process
        "peak_tree_rss_mb": round(tree / 2**20, 1),  # the command and its workers together
        "tree_bytes_per_game": round(tree / games, 1),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }


def goals(results: list[dict]) -> list[dict]:
    """Each goal of issue 29 with the figure measured and whether it is met."""
    out = []
    for r in results:
        label = f"{r['games']:,} games {'with' if r['events'] else 'without'} events"
        out.append({
            "goal": f"peak memory <= {GOAL_PEAK_MB} MB ({label})",
            "measured": f"{r['peak_tree_rss_mb']} MB (whole process tree; largest process "
                        f"{r['peak_rss_mb']} MB)",
            "met": r["peak_tree_rss_mb"] <= GOAL_PEAK_MB,
        })  # fmt: skip
        target = GOAL_GAMES_PER_S[r["events"]]
        out.append({
            "goal": f">= {target:,} games/s ({label})",
            "measured": f"{r['games_per_s']:,.0f} games/s ({r['games_per_cpu_s']:,.0f} per "
                        f"CPU-second; load {r['load_average_before']})",
            "met": r["games_per_s"] >= target,
        })  # fmt: skip
    with_events = sorted((r for r in results if r["events"]), key=lambda r: r["games"])
    if len(with_events) >= 2:
        small, large = with_events[0], with_events[-1]
        time_ratio = large["cpu_us_per_game"] / small["cpu_us_per_game"]
        memory_ratio = large["peak_tree_rss_mb"] / small["peak_tree_rss_mb"]
        growth = large["games"] / small["games"]
        out.append({
            "goal": f"time per game flat ({small['games']:,} -> {large['games']:,} games)",
            "measured": f"CPU per game x{time_ratio:.2f} ({small['cpu_us_per_game']} -> "
                        f"{large['cpu_us_per_game']} us)",
            "met": time_ratio <= FLAT_RATIO,
        })  # fmt: skip
        out.append({
            "goal": f"memory flat ({small['games']:,} -> {large['games']:,} games)",
            "measured": f"peak x{memory_ratio:.2f} ({small['peak_tree_rss_mb']} -> "
                        f"{large['peak_tree_rss_mb']} MB) for x{growth:.1f} games",
            "met": memory_ratio <= FLAT_RATIO,
        })  # fmt: skip
    return out


def _sizes(text: str) -> list[tuple[int, bool]]:
    sizes = []
    for part in filter(None, text.split(",")):
        games, _, kind = part.partition(":")
        sizes.append((int(games), kind.strip() != "plain"))
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analysis.tools.bench_report",
                                     description=__doc__.split("\n\n")[0])  # fmt: skip
    parser.add_argument("--sizes", default=DEFAULT_SIZES,
                        help=f"GAMES:events|plain,... (default {DEFAULT_SIZES})")  # fmt: skip
    parser.add_argument("--workers", type=int, default=2, help="report workers (2)")
    parser.add_argument("--runs", type=Path, default=None, help="where to play the runs")
    parser.add_argument("--keep", action="store_true", help="keep the runs (reused if there)")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--out", type=Path, default=Path("bench/report.json"))
    args = parser.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="neom-bench-report-"))
    runs = args.runs or scratch
    results = []
    try:
        for games, events in _sizes(args.sizes):
            run = runs / f"random4p-{games}-{'events' if events else 'plain'}"
            simulated = None
            if not (run / "manifest.json").is_file():
                simulated = round(_simulate(run, games, events, args.workers, args.seed), 1)
            result = measure(run, scratch / f"report-{run.name}", args.workers, games, events)
            result["simulate_s"] = simulated
            results.append(result)
            print(json.dumps(result), flush=True)
            if not args.keep:
                shutil.rmtree(run, ignore_errors=True)
            shutil.rmtree(scratch / f"report-{run.name}", ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report = {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cores_available": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "strategies": "random,random,random,random",
        "players": 4,
        "runs": results,
        "goals": goals(results),
    }  # fmt: skip
    write_benchmark(args.out, report)
    for goal in report["goals"]:
        print(f"{'met    ' if goal['met'] else 'NOT MET'}  {goal['goal']}: {goal['measured']}")
    return 0


if __name__ == "__main__":
    from sim.core.cli import guarded

    raise SystemExit(guarded(main, "python -m analysis.tools.bench_report"))
