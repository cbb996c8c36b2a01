"""Worker processes of the command's process (simulate's batches, report's chunks): what every
backend shares, kept apart from the runner so that a worker imports no more than it needs."""

import os
import re
import signal
import socket
import threading
import time
import warnings
from contextlib import AbstractContextManager, contextmanager, nullcontext

from sim.core.errors import UserError

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


@contextmanager
def loky_results(
    function,
    tasks,
    *,
    workers: int,
    parent: tuple[str, int],
    in_flight: int,
    died: str,
    starting: AbstractContextManager | None = None,
):
    """``function(*task)`` for each of ``tasks`` in ``workers`` loky processes, yielded in the
    order they finish; ``in_flight`` tasks per worker dispatched ahead, one task per dispatch,
    so memory in flight stays bounded. Each worker watches the command's process from the
    moment it starts (loky runs the initializer first), so a command killed while its workers
    start leaves none behind; they ignore Ctrl-C (:func:`sigint_ignored`). ``starting`` is
    entered while they start (for example an environment they inherit). A dead worker is one
    line, ``died``."""
    import joblib
    from joblib.externals.loky.process_executor import BrokenProcessPool

    with joblib.parallel_config(backend="loky", initializer=worker_start, initargs=(parent,)):
        parallel = joblib.Parallel(
            n_jobs=workers,
            return_as="generator_unordered",
            pre_dispatch=f"{in_flight} * n_jobs",
            batch_size=1,
        )
    with sigint_ignored(), starting or nullcontext():
        results = parallel(joblib.delayed(function)(*task) for task in tasks)
    try:
        yield results
    except BrokenProcessPool:
        raise UserError(died) from None
    finally:
        with warnings.catch_warnings():
            # Stopped early (Ctrl-C, an error): joblib warns that finished tasks went unused or
            # that tasks in flight were cancelled (a run plays them again on --resume).
            warnings.filterwarnings("ignore", "(?s).*tasks have been successfully executed")
            warnings.filterwarnings("ignore", "(?s).*still being processed by the workers")
            results.close()


# The transports a Dask client reaches a scheduler by (distributed.comm: inproc is this
# process's own, ucx a removed plugin).
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss")
_HOST = re.compile(r"[A-Za-z0-9_.-]+")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?")


@contextmanager
def dask_client(workers: int, scheduler: str | None, silence_logs: int, local_env=nullcontext):
    """A Dask client of the cluster at ``scheduler``, or of a local cluster of ``workers``
    one-thread processes started with Ctrl-C ignored (see ``sigint_ignored``) inside
    ``local_env()`` and logging at ``silence_logs`` and above; closed (the local cluster too)
    when done."""
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except OSError as exc:
            raise UserError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
        cluster = None
    else:
        with sigint_ignored(), local_env():
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=silence_logs,
            )
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def check_scheduler(address: str | None, backend: str) -> None:
    """``--scheduler``, checked before anything is played or written: it needs ``--backend
    dask`` (elsewhere nothing would read it), and is ``[SCHEME://]HOST:PORT`` (distributed
    would fail on anything else with a traceback only once the run has started)."""
    if address is None:
        return
    if backend != "dask":
        raise UserError(
            f"--scheduler needs --backend dask (the {backend} backend uses no scheduler)"
        )
    expected = "expected HOST:PORT or SCHEME://HOST:PORT, e.g. tcp://127.0.0.1:8786"
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme not in SCHEDULER_SCHEMES:
        raise UserError(
            f"--scheduler {address!r}: unknown scheme {scheme!r} (one of "
            f"{', '.join(SCHEDULER_SCHEMES)}); {expected}"
        )
    if rest.startswith("["):  # an IPv6 address: [::1]:8786
        host, close, port = rest[1:].partition("]")
        good_host = bool(close) and _IPV6.fullmatch(host) is not None and port.startswith(":")
        port = port[1:]
    else:
        host, colon, port = rest.rpartition(":")
        good_host = bool(colon) and _HOST.fullmatch(host) is not None
    if not good_host or not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise UserError(f"--scheduler {address!r}: not a scheduler address; {expected}")
