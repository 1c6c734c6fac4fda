"""Sampling kernels of the simulated collections: uniforms, inverse CDFs.

Trial ``t`` draws from its own counter-based stream ``(seed, t)``, so a trial's collection,
runs and topic scores depend only on the study seed and ``t``: never on threads, on the
chunking of trials into sweep jobs, or on the order jobs run in.
"""

from __future__ import annotations

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange
from fastrisk._kernels._random import next_double, stream_state


@pjit
def trial_uniforms(seed, trials, n):
    """Two rows of n uniforms (0, 1) per trial (``trials``: global trial indices): (T, 2, n)."""
    T = trials.shape[0]
    out = np.empty((T, 2, n))
    for q in prange(T):
        state = stream_state(seed, trials[q])
        for r in range(2):
            for i in range(n):
                state, u = next_double(state)
                out[q, r, i] = u if u > 0.0 else 0.5 / 9007199254740992.0
    return out


@njit
def quantiles(cdf, values, continuous, u, out):
    """Inverse CDF: ``out[i] = F^{-1}(u[i])``. Discrete margins put mass j on ``values[j]``;
    continuous ones have atoms at 0 (j = 0) and 1 (j = m + 1) and spread the mass of
    j = 1..m uniformly over the bin [j - 1, j) / m."""
    n = cdf.shape[0]
    m = n - 2
    for i in range(u.shape[0]):
        j = np.searchsorted(cdf, u[i], side="left")
        if j >= n:
            j = n - 1
        if continuous and 0 < j < n - 1:
            lo = cdf[j - 1]
            w = cdf[j] - lo
            frac = (u[i] - lo) / w if w > 0.0 else 0.5
            out[i] = (j - 1 + min(max(frac, 0.0), 1.0)) / m
        else:
            out[i] = values[j]
