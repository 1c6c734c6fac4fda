"""Counter-based random streams: SplitMix64 seeded by a hash of (seed, stream).

Every replicate (or iteration) of a random procedure draws from its own stream, so its
numbers depend only on ``(seed, stream)`` and never on the thread that runs it or on how
the replicates are chunked. Steele, Lea & Flood, "Fast splittable pseudorandom number
generators" (OOPSLA 2014).
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import helper

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TWO53 = 1.0 / 9007199254740992.0


@helper
def mix64(z):
    """SplitMix64 finaliser: a bijective 64-bit hash."""
    z = np.uint64(z)
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@helper
def stream_state(seed, stream):
    """Initial state of stream ``stream`` under ``seed`` (both non-negative integers)."""
    return mix64(np.uint64(seed) ^ mix64(np.uint64(stream) + _GOLDEN))


@helper
def next_u64(state):
    """Advance ``state``; return ``(state, 64 random bits)``."""
    state = state + _GOLDEN
    return state, mix64(state)


@helper
def next_double(state):
    """Advance ``state``; return ``(state, u)`` with ``u`` uniform on [0, 1)."""
    state, z = next_u64(state)
    return state, np.float64(z >> np.uint64(11)) * _TWO53


@helper
def next_below(state, n):
    """Advance ``state``; return ``(state, k)`` with ``k`` uniform on {0, ..., n-1}."""
    state, u = next_double(state)
    k = np.int64(u * n)
    if k >= n:  # guard against rounding at the top end
        k = n - 1
    return state, k
