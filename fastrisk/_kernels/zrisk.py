"""ZRisk/GeoRisk kernels: standardised cells of every system, one parallel pass (Dinçer,
Macdonald & Ounis, SIGIR 2016; value functions: Benham, Moffat & Culpepper 2019).

Expected cell e_ik = T_i * S_k / N (topic total, system total, grand total); the standardised
cell is (X[i,k] - e_ik) / sqrt(e_ik), taken as 0 where e_ik = 0.
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import njit, pjit, prange


@njit
def cell_sums(x, topic_totals, sk, grand):
    """One system's sums of positive and of negative standardised cells: ``x`` its scores,
    ``sk`` their total, ``topic_totals`` and ``grand`` the collection's. The one scalar core of
    :func:`zrisk_parts` and the batched :func:`fastrisk._kernels.batch.zrisk_batch`."""
    p = 0.0
    n = 0.0
    for i in range(x.shape[0]):
        e = topic_totals[i] * sk / grand if grand > 0.0 else 0.0
        if e > 0.0:
            z = (x[i] - e) / math.sqrt(e)
            if z > 0.0:
                p += z
            else:
                n += z
    return p, n


@pjit
def zrisk_parts(V, topic_totals, system_totals, grand):
    """Per system (rows of V, (S, c)): the sums of positive and of negative standardised cells.

    ZRisk with loss weight w = 1 + alpha is ``pos + w * neg``, for any number of alphas.
    """
    S = V.shape[0]
    pos = np.zeros(S)
    neg = np.zeros(S)
    for k in prange(S):
        pos[k], neg[k] = cell_sums(V[k], topic_totals, system_totals[k], grand)
    return pos, neg


@pjit
def zrisk_value(V, topic_totals, system_totals, grand, value):
    """Per system: sum_i value(X[i,k] - e_ik) / sqrt(e_ik) over cells with e_ik > 0."""
    S, c = V.shape
    out = np.zeros(S)
    for k in prange(S):
        acc = 0.0
        sk = system_totals[k]
        for i in range(c):
            e = topic_totals[i] * sk / grand if grand > 0.0 else 0.0
            if e > 0.0:
                acc += value(V[k, i] - e) / math.sqrt(e)
        out[k] = acc
    return out


@njit
def georisk(eff, z, c):
    """GeoRisk (S, A) = sqrt(eff_k * Phi(z_ka / c)), Phi the standard normal CDF."""
    S, A = z.shape
    out = np.empty((S, A))
    for k in range(S):
        for a in range(A):
            phi = 0.5 * math.erfc(-(z[k, a] / c) / math.sqrt(2.0))
            out[k, a] = math.sqrt(eff[k] * phi)
    return out
