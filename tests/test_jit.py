"""What sim.core.jit does to Numba: inlining copies IR in linear time without changing the
compiled code, and ``has_cached_code`` tells a cold compile from a cache load."""

import os
import subprocess
import sys
import textwrap

import numba
import pytest

from sim.core import jit

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compiles on purpose")

# A function with nested inline="always" callees, several blocks each.
INLINED = textwrap.dedent(
    """
    import numpy as np
    from numba import njit

    @njit(inline="always")
    def leaf(a, i):
        if a[i] > 0:
            return a[i] * 2
        for k in range(i):
            a[k] += 1
        return -a[i]

    @njit(inline="always")
    def middle(a, i):
        total = 0
        for k in range(i):
            if k % 2:
                total += leaf(a, k)
            else:
                total -= leaf(a, k)
        return total + leaf(a, i)

    @njit
    def outer(a, n):
        total = 0
        for i in range(n):
            total += middle(a, i) + middle(a, n - i)
        return total

    outer(np.ones(10, dtype=np.int64), 5)
    """
)


def llvm_of_outer(linear: bool) -> str:
    code = (
        "import sys\n"
        "from numba.core import inline_closurecall\n"
        + ("import sim.core.jit\n" if linear else "")
        + "print('linear', getattr(inline_closurecall.InlineWorker.inline_ir, '_linear_copy', "
        "False), file=sys.stderr)\n" + INLINED + "print(outer.inspect_llvm(outer.signatures[0]))\n"
    )
    env = dict(os.environ)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert f"linear {linear}" in done.stderr
    return done.stdout


def test_the_linear_inline_copy_is_in_place():
    assert jit.LINEAR_INLINE_COPY
    assert jit.linear_inline_copy()  # applying it again changes nothing


def test_the_linear_inline_copy_compiles_the_same_code():
    assert llvm_of_outer(linear=True) == llvm_of_outer(linear=False)


CACHED = textwrap.dedent(
    """
    from sim.core.jit import njit

    @njit
    def twice(x):
        return 2 * x
    """
)


def test_has_cached_code_tells_a_compile_from_a_cache_load(tmp_path):
    (tmp_path / "cached_module.py").write_text(CACHED)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]),
        NUMBA_CACHE_DIR=str(tmp_path / "cache"),
        NEOM_NUMBA_CACHE_BASE=str(tmp_path / "cache"),
    )
    check = (
        "from cached_module import twice\n"
        "from sim.core.jit import has_cached_code\n"
        "print(has_cached_code(twice))\n"
        "twice(3)\n"
        "print(has_cached_code(twice))\n"
    )

    def run() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", check], capture_output=True, text=True, env=env, check=True
        )
        return done.stdout.split()

    # First process: nothing cached, then compiled (and cached).
    assert run() == ["False", "True"]
    # A fresh process finds it in the cache before calling anything.
    assert run() == ["True", "True"]
