"""Worker processes of the command's process (simulate's batches, report's chunks): what every
backend shares, kept apart from the runner so that a worker imports no more than it needs."""

import os
import signal
import socket
import threading
import time
from contextlib import contextmanager

# How often a worker checks that the command's process is still its parent.
PARENT_CHECK_S = 0.5

_watchdog: threading.Thread | None = None


def worker_setup(parent: tuple[str, int]) -> None:
    """In a worker process started by the command's process (a loky or local Dask worker):
    ignore Ctrl-C (the command stops its workers itself; a terminal's Ctrl-C reaches every
    process of the group) and start a thread that ends the worker as soon as the command's
    process is gone (killed with ``kill -9`` too), so workers never outlive the command.
    Nothing in the command's own process or on another machine (a remote Dask worker has its
    own parent)."""
    global _watchdog
    host, pid = parent
    if _watchdog is not None or not pid or os.getpid() == pid:
        return
    if os.getppid() != pid or socket.gethostname() != host:
        return
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == pid:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)  # the parent is gone: nobody will read this worker's results

    _watchdog = threading.Thread(target=watch, name="neom-parent-watch", daemon=True)
    _watchdog.start()


def worker_start(parent: tuple[str, int]) -> None:
    """The initializer of every worker process the command starts (loky): if the command's
    process is already gone (killed while this worker started), end at once; else watch it
    (:func:`worker_setup`)."""
    host, pid = parent
    if pid and socket.gethostname() == host and os.getppid() != pid:
        os._exit(1)
    worker_setup(parent)


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, e.g. a container's or taskset's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@contextmanager
def sigint_ignored():
    """SIGINT ignored while worker processes are started, so that they ignore it too (Python
    keeps an inherited ignored SIGINT ignored): a terminal's Ctrl-C reaches every process of
    the group, and the command, not each worker, reports it, in one line. Only the main thread
    can set handlers (elsewhere this does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
