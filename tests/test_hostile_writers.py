"""One writer per run folder, and no orphans (issue 25): a run folder is locked (the operating
system's lock, held for the whole of ``simulate``, ``--resume`` and ``--overwrite``), so a
second writer is one line naming the live one and never records it as killed; workers watch
the command's process from the moment they start, so killing it during their start-up leaves
none behind."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_helpers import one_line_error

from sim.core.cli import main
from sim.core.store import read_run

ROOT = Path(__file__).resolve().parent.parent
SIMULATE = ["simulate", "--batch-size", "4", "--seed", "3"]
SIMULATE += ["--strategies", "random,random,random,random"]
TWO_CORES = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else True,
    reason="needs 2 cores for worker processes",
)


def neom(*args: str) -> list[str]:
    return [sys.executable, "-m", "sim.core.cli", *args]


def wait_for(condition, process, timeout: float = 120, step: float = 0.01) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if process is not None and process.poll() is not None:
            pytest.fail(f"the command ended first ({process.returncode})")
        time.sleep(step)
    pytest.fail(f"not within {timeout} s")


def batches(out: Path) -> int:
    folder = out / "players"
    return len(list(folder.glob("batch-*.parquet"))) if folder.is_dir() else 0


def test_a_second_writer_is_refused_naming_the_live_one(tmp_path, capsys):
    out = tmp_path / "run"
    args = [*SIMULATE, "--games", "40000", "--workers", "1", "--out", str(out)]
    live = subprocess.Popen(
        neom(*args), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(lambda: batches(out) >= 2, live)
        host = socket.gethostname()
        for flags in ([], ["--resume"], ["--overwrite"]):
            argv = [*SIMULATE, "--games", "40000", "--workers", "1", "--out", str(out)]
            code = main([*argv, *flags])
            one_line_error(capsys, code, str(out), f"PID {live.pid}", host, "started")
        assert live.poll() is None, "the live run was disturbed"
        live.send_signal(signal.SIGINT)
        _, err = live.communicate(timeout=60)
    finally:
        if live.poll() is None:
            live.kill()
    assert live.returncode == 130, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["ended"] for s in manifest["sessions"]] == ["interrupted"]


def test_two_runs_started_together_leave_one_whole_run(tmp_path):
    out = tmp_path / "run"
    args = [*SIMULATE, "--games", "400", "--workers", "1", "--out", str(out)]
    processes = [
        subprocess.Popen(
            neom(*args), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=300), *p.communicate()) for p in processes]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 1], results
    ((_, _, err),) = [r for r in results if r[0] == 1]
    assert err.startswith("neom: error: ") and err.count("\n") == 1, err
    assert str(out) in err and "PID" in err and "started" in err, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and len(manifest["sessions"]) == 1
    assert read_run(out).games.collect().height == 400


def _session_processes(sid: int) -> dict[int, str]:
    """The processes of session ``sid`` (pid -> command line, empty for a zombie). Polled every
    few ms while the workers start: only the session's members' command lines are read (all
    of the machine's took 7 ms of CPU a poll)."""
    psutil = pytest.importorskip("psutil")
    found = {}
    for pid in psutil.pids():
        try:
            if os.getsid(pid) != sid:
                continue
        except (ProcessLookupError, PermissionError):
            continue
        try:
            found[pid] = " ".join(psutil.Process(pid).cmdline())
        except (psutil.ZombieProcess, psutil.AccessDenied):
            found[pid] = ""
        except psutil.NoSuchProcess:
            continue
    return found


def _workers(sid: int) -> int:
    return sum("popen_loky" in line for line in _session_processes(sid).values())


@TWO_CORES
def test_killing_the_parent_while_workers_start_leaves_none_behind(tmp_path):
    """The reported case: killed after its 2 loky workers were started but before either had
    played a batch, the command left them (and loky's resource trackers) running for minutes.
    (A local Dask cluster's workers watch their parent themselves: they always ended.)"""
    pytest.importorskip("psutil")
    out = tmp_path / "run"
    args = [*SIMULATE, "--games", "40000", "--workers", "2"]
    parent = subprocess.Popen(
        neom(*args, "--out", str(out)),
        cwd=ROOT,
        start_new_session=True,  # its workers share its session: found after it is gone
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sid = parent.pid
    try:
        wait_for(lambda: _workers(sid) >= 2, parent, step=0.005)
        time.sleep(0.3)  # the workers are starting: importing, loading the compiled game
        assert batches(out) == 0
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 20
        while _session_processes(sid) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _session_processes(sid)
        assert not left, f"processes outlived the command: {left}"
    finally:
        for pid in _session_processes(sid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
