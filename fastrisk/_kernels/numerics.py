"""Kernels of the numerical policy (:mod:`fastrisk._numerics`): the relative variance floor with
the ±inf/NaN rule in one pass, and the range check of results. One pass, no temporaries, so the
policy costs nothing next to the statistics it guards."""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit


@njit
def floor_standardise(mean, se, other, c, rtol):
    """Flat arrays: (se, other, t, zero) where ``zero`` marks a standard error that is 0 or
    below the relative floor ``(c-1) r^2 <= rtol c ((c-1) r^2 + 1)`` with r = se / |mean|; there
    se and other are set to 0 and t = mean / se is ±inf (NaN if the mean is 0 too)."""
    n = mean.shape[0]
    se_out = np.empty(n)
    other_out = np.empty(n)
    t = np.empty(n)
    zero = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        m = mean[i]
        s = se[i]
        z = s == 0.0
        if not z and m != 0.0:
            r = s / abs(m)
            if r < 1.0:
                ss = (c - 1) * r * r
                z = ss <= rtol * c * (ss + 1.0)
        zero[i] = z
        if z:
            se_out[i] = 0.0
            other_out[i] = 0.0
            t[i] = math.nan if m == 0.0 else math.copysign(math.inf, m)
        else:
            se_out[i] = s
            other_out[i] = other[i]
            t[i] = m / s
    return se_out, other_out, t, zero


@njit
def out_of_range(values, lo, hi):
    """True if a value is not finite or a non-zero magnitude lies outside [lo, hi]."""
    for i in range(values.shape[0]):
        a = abs(values[i])
        if not a <= hi or (a < lo and a != 0.0):
            return True
    return False
