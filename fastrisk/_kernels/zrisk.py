"""ZRisk/GeoRisk kernels: standardised cells of every system, one parallel pass (Dinçer,
Macdonald & Ounis, SIGIR 2016; value functions: Benham, Moffat & Culpepper 2019).

Expected cell e_ik = T_i * S_k / N (topic total, system total, grand total); the standardised
cell is (X[i,k] - e_ik) / sqrt(e_ik), taken as 0 where e_ik = 0.
"""

from __future__ import annotations

import math

import numpy as np

from fastrisk._kernels._jit import helper, njit, pjit, prange, serial
from fastrisk._kernels.risk import ROWS, _value  # _value: the value kernels' value function (see with_value)


@helper
def topic_factors(topic_totals, grand):
    """Per topic: T_i / N and its square root, so that e_ik = (T_i / N) S_k and
    sqrt(e_ik) = sqrt(T_i / N) sqrt(S_k): one division per cell and no square root."""
    c = topic_totals.shape[0]
    share = np.zeros(c)
    root = np.zeros(c)
    if grand > 0.0:
        for i in range(c):
            share[i] = topic_totals[i] / grand
            root[i] = math.sqrt(share[i])
    return share, root


@helper
def cell_sums(x, share, root, sk):
    """Sums of the positive and of the negative standardised cells of one system's row ``x``
    (system total ``sk``; topic factors of `topic_factors`). The one scalar core of
    `zrisk_parts`, the small-call kernel and the batched
    `fastrisk._kernels.batch.zrisk_batch`."""
    p = 0.0
    n = 0.0
    rk = math.sqrt(sk)
    for i in range(x.shape[0]):
        e = share[i] * sk
        if e > 0.0:
            z = (x[i] - e) / (root[i] * rk)
            p += max(z, 0.0)  # min/max, not a branch (adding 0.0 is exact)
            n += min(z, 0.0)
    return p, n


@pjit
def zrisk_parts(V, topic_totals, system_totals, grand):
    """Per system (rows of V, (S, c)): the sums of positive and of negative standardised cells.

    ZRisk with loss weight w = 1 + alpha is ``pos + w * neg``, for any number of alphas.
    """
    S = V.shape[0]
    pos = np.zeros(S)
    neg = np.zeros(S)
    share, root = topic_factors(topic_totals, grand)
    for k in prange(S):
        pos[k], neg[k] = cell_sums(V[k], share, root, system_totals[k])
    return pos, neg


@helper
def topic_major(V, k0, k1):
    """Rows ``k0 .. k1 - 1`` of V (S, c), transposed to (c, k1 - k0): systems innermost."""
    c = V.shape[1]
    D = np.empty((c, k1 - k0))
    for k in range(k1 - k0):
        for i in range(c):
            D[i, k] = V[k0 + k, i]
    return D


@helper
def cell_sums_rows(V, k0, k1, share, root, system_totals, pos, neg):
    """`cell_sums` of the systems ``k0 .. k1 - 1`` into ``pos[k0:k1]``, ``neg[k0:k1]``.

    The same operations in the same order for each system, so the same numbers bit for bit,
    with the systems innermost (a topic-major copy of the block): the loop runs over
    contiguous systems and vectorises (the divisions too) without reassociating any sum. The
    test ``e > 0`` is a select (adding 0.0 is exact), as in `cell_sums`.
    """
    D = topic_major(V, k0, k1)
    n = k1 - k0
    sk = np.empty(n)
    rk = np.empty(n)
    for k in range(n):
        sk[k] = system_totals[k0 + k]
        rk[k] = math.sqrt(sk[k])
    p = np.zeros(n)
    q = np.zeros(n)
    z = np.empty(n)
    # few arrays per loop (LLVM vectorises a loop only if it can check at run time that the
    # arrays it writes do not overlap the others, and gives up beyond a few pairs)
    for i in range(V.shape[1]):
        s = share[i]
        r = root[i]
        for k in range(n):
            e = s * sk[k]
            zk = np.divide(D[i, k] - e, r * rk[k])  # numpy's division: no zero check, so it vectorises
            z[k] = zk if e > 0.0 else 0.0
        for k in range(n):
            p[k] += max(z[k], 0.0)
        for k in range(n):
            q[k] += min(z[k], 0.0)
    for k in range(n):
        pos[k0 + k] = p[k]
        neg[k0 + k] = q[k]


@helper
def row_totals(V, k0, k1, out):
    """``out[k] = sum_i V[k, i]`` (i ascending from 0.0, the order `cell_sums`'s callers sum a
    row in) for the rows ``k0 .. k1 - 1``, four rows at a time: four independent sums in
    flight instead of one chain, each in its own order (the same numbers bit for bit)."""
    c = V.shape[1]
    k = k0
    while k + 4 <= k1:
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for i in range(c):
            a0 += V[k, i]
            a1 += V[k + 1, i]
            a2 += V[k + 2, i]
            a3 += V[k + 3, i]
        out[k] = a0
        out[k + 1] = a1
        out[k + 2] = a2
        out[k + 3] = a3
        k += 4
    while k < k1:
        acc = 0.0
        for i in range(c):
            acc += V[k, i]
        out[k] = acc
        k += 1


@pjit
def zrisk_table(V, loss_weights, sign, lo, hi):
    """Linear ZRisk and GeoRisk of every system in one call, totals included.

    Returns ``ok``, the flat index of the first negative cell (-1 if none), ``stats``
    ``[2, alpha, system]`` (ZRisk and GeoRisk in the convention of ``sign``, see
    `georisk_cell`) and the effectiveness ``[system]``. ``ok`` is False when a score is
    negative, the grand total lies outside [lo, hi] (the caller rescales) or a result is not
    finite; the other outputs are then unspecified. Blocks of `ROWS` systems, topic-major
    (`row_totals`, `cell_sums_rows`): the numbers of `cell_sums` bit for bit.
    """
    S, c = V.shape
    A = loss_weights.shape[0]
    topic_totals = np.zeros(c)
    lowest = np.zeros(c)  # per topic: min(0, its scores), a select (no reduction): vectorised
    for k in range(S):
        for i in range(c):
            v = V[k, i]
            topic_totals[i] += v
            lowest[i] = v if v < lowest[i] else lowest[i]
    first_negative = -1
    if lowest.min() < 0.0:
        for j in range(S * c):
            if V[j // c, j % c] < 0.0:
                first_negative = j
                break
    blocks = (S + ROWS - 1) // ROWS
    system_totals = np.empty(S)
    for t in prange(blocks):
        row_totals(V, t * ROWS, min(t * ROWS + ROWS, S), system_totals)
    grand = 0.0
    for k in range(S):
        grand += system_totals[k]
    stats = np.empty((2, A, S))
    eff = np.empty(S)
    ok = first_negative < 0 and (grand == 0.0 or lo <= grand <= hi)
    if ok:
        share, root = topic_factors(topic_totals, grand)
        pos = np.empty(S)
        neg = np.empty(S)
        for t in prange(blocks):
            cell_sums_rows(V, t * ROWS, min(t * ROWS + ROWS, S), share, root, system_totals, pos, neg)
        for k in prange(S):
            eff[k] = system_totals[k] / c
            for a in range(A):
                z = sign * (pos[k] + loss_weights[a] * neg[k])
                stats[0, a, k] = z
                stats[1, a, k] = georisk_cell(eff[k], z, c, sign)
        for k in range(S):
            for a in range(A):
                if not math.isfinite(stats[0, a, k]):
                    ok = False
    return ok, first_negative, stats, eff


zrisk_table_serial = serial(zrisk_table)


@pjit
def zrisk_value(V, topic_totals, system_totals, grand):
    """Per system: sum_i _value(X[i,k] - e_ik) / sqrt(e_ik) over cells with e_ik > 0 (``_value``:
    see `fastrisk._kernels._jit.with_value`)."""
    S, c = V.shape
    out = np.zeros(S)
    for k in prange(S):
        acc = 0.0
        sk = system_totals[k]
        for i in range(c):
            e = topic_totals[i] * sk / grand if grand > 0.0 else 0.0
            if e > 0.0:
                acc += _value(V[k, i] - e) / math.sqrt(e)
        out[k] = acc
    return out


zrisk_value_serial = serial(zrisk_value)


@helper
def georisk_cell(eff, z, c, sign):
    """GeoRisk of one system: ``sign * sqrt(eff * Phi(z / c))``, z its ZRisk in the convention.

    Classic (sign +1): GeoRisk = sqrt(Eff Phi(ZRisk / c)) (Dinçer, Macdonald & Ounis 2016).
    Minus (sign -1, z = ZRisk⁻): GeoRisk⁻ = -sqrt(Eff Phi(ZRisk⁻ / c)), the numbers and signs
    Benham, Moffat & Culpepper (AIRS 2019) print in their Table 2 (see `fastrisk.core.zrisk`).
    """
    phi = 0.5 * math.erfc(-(z / c) / math.sqrt(2.0))
    return sign * math.sqrt(eff * phi)


@njit
def georisk(eff, z, c, sign):
    """GeoRisk (S, A) of `georisk_cell` for ZRisk ``z`` (S, A) in the convention of ``sign``."""
    S, A = z.shape
    out = np.empty((S, A))
    for k in range(S):
        for a in range(A):
            out[k, a] = georisk_cell(eff[k], z[k, a], c, sign)
    return out
