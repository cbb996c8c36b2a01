"""Per-game random streams for the compiled core.

A run's master seed goes through ``numpy.random.SeedSequence`` once, giving a 128-bit key.
Each game's streams are derived from (key, deal index, stream number) by splitmix64 mixing, in
compiled code, so seeding a million games costs nothing and any game can be replayed alone.
Stream 0 is the deal (chance drawn by the engine); stream 1 + s is seat s's strategy. A stream's
state is a ``uint64[2]`` array advanced by xoroshiro128+.
"""

import functools

import numba
import numpy as np

from sim.core.jit import njit

DEAL_STREAM = 0

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_R24 = np.uint64(24)
_L16 = np.uint64(16)
_R37 = np.uint64(37)
_L64 = np.uint64(64)


def wraps_silently(function):
    """uint64 arithmetic wraps modulo 2**64 by design. Compiled code wraps silently; under
    NUMBA_DISABLE_JIT numpy scalars wrap the same way but warn, so the interpreted functions
    run with overflow warnings off (compiled code is left as it is)."""
    if not numba.config.DISABLE_JIT:
        return function

    @functools.wraps(function)
    def wrapping(*args):
        with np.errstate(over="ignore"):
            return function(*args)

    return wrapping


def master_key(master_seed: int) -> np.ndarray:
    """The run's 128-bit key from its master seed (uint64[2])."""
    return np.random.SeedSequence(master_seed).generate_state(2, np.uint64)


@wraps_silently
@njit(_nrt=False)
def splitmix64(x):
    z = x + _GOLDEN
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(_nrt=False)
def stream_seed(key, deal_index, stream):
    """The seed of one stream of one game: depends only on (key, deal_index, stream)."""
    h = splitmix64(key[0] ^ splitmix64(np.uint64(deal_index)))
    h = splitmix64(h ^ key[1])
    return splitmix64(h ^ splitmix64(np.uint64(stream) + _GOLDEN))


@njit(_nrt=False)
def seed_state(state, seed):
    """Fill a uint64[2] xoroshiro128+ state from one 64-bit seed."""
    state[0] = splitmix64(np.uint64(seed))
    state[1] = splitmix64(state[0])
    if state[0] == 0 and state[1] == 0:
        state[1] = np.uint64(1)


@njit(_nrt=False)
def _rotl(x, k):
    return (x << k) | (x >> (_L64 - k))


@wraps_silently
@njit(_nrt=False)
def next_u64(state):
    s0 = state[0]
    s1 = state[1]
    result = s0 + s1
    s1 ^= s0
    state[0] = _rotl(s0, _R24) ^ s1 ^ (s1 << _L16)
    state[1] = _rotl(s1, _R37)
    return result


@njit(_nrt=False)
def randint(state, n):
    """Uniform integer in [0, n) for n >= 1 (multiply-shift on the top 32 bits)."""
    top = next_u64(state) >> np.uint64(32)
    return np.int64((top * np.uint64(n)) >> np.uint64(32))


@njit(_nrt=False)
def shuffle(state, arr, n):
    """Fisher-Yates shuffle of arr[:n] in place."""
    for i in range(n - 1, 0, -1):
        j = randint(state, i + 1)
        tmp = arr[i]
        arr[i] = arr[j]
        arr[j] = tmp
