"""Kernels of the numerical policy (`fastrisk._numerics`): the relative variance floor with
the ±inf/NaN rule in one pass, and the range check of results. One pass, no temporaries, so the
policy costs nothing next to the statistics it guards."""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit

#: Relative variance floor (see `fastrisk._numerics`): a centred sum of squares at most
#: ``VARIANCE_RTOL * c * sum x^2`` is rounding noise.
VARIANCE_RTOL = 4.0 * 2.220446049250313e-16


@njit
def floored_t(m, s, c, rtol):
    """(zero, t) for a mean ``m`` with standard error ``s`` over ``c`` topics: ``zero`` when s is 0
    or below the relative floor ``(c-1) r^2 <= rtol c ((c-1) r^2 + 1)`` with r = s / |m|; t is
    then ±inf (NaN if m is 0 too), else m / s. The one rule every kernel applies."""
    z = s == 0.0
    if not z and m != 0.0:
        r = s / abs(m)
        if r < 1.0:
            ss = (c - 1) * r * r
            z = ss <= rtol * c * (ss + 1.0)
    if z:
        return True, (math.nan if m == 0.0 else math.copysign(math.inf, m))
    return False, m / s


@njit
def floor_standardise(mean, se, other, c, rtol):
    """Flat arrays: (se, other, t, zero) by `floored_t`; where ``zero``, se and other are 0."""
    n = mean.shape[0]
    se_out = np.empty(n)
    other_out = np.empty(n)
    t = np.empty(n)
    zero = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        z, t[i] = floored_t(mean[i], se[i], c, rtol)
        zero[i] = z
        se_out[i] = 0.0 if z else se[i]
        other_out[i] = 0.0 if z else other[i]
    return se_out, other_out, t, zero


@njit
def out_of_range(values, lo, hi):
    """True if a value is not finite or a non-zero magnitude lies outside [lo, hi]."""
    for i in range(values.shape[0]):
        a = abs(values[i])
        if not a <= hi or (a < lo and a != 0.0):
            return True
    return False
