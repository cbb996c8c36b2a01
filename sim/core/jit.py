"""The one jit decorator of the compiled core.

``cache=True`` so compilation is paid once per machine; ``nogil`` so worker threads can share a
process when a caller wants that. Everything in the hot core uses ``@njit`` from here, so
``NUMBA_DISABLE_JIT=1`` turns the whole core into plain Python for parity tests.
"""

import numba


def njit(*args, **kwargs):
    options = {"cache": True, "nogil": True}
    options.update(kwargs)
    if args and callable(args[0]):
        return numba.njit(**options)(args[0])
    return numba.njit(*args, **options)
