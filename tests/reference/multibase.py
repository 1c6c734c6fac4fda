"""Deliberately plain loop implementations for ZRisk/GeoRisk, all-baseline tables and PCA.

Never imports fastrisk's kernels. Matrices are (S systems, c topics) nested lists/arrays.
"""

from __future__ import annotations

import math


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def zrisk_classic(V, value):
    """sum_i value(X[i,k] - e_ik) / sqrt(e_ik) per system, e_ik > 0 cells only (classic sign)."""
    S, c = len(V), len(V[0])
    sys_tot = [sum(V[k][i] for i in range(c)) for k in range(S)]
    top_tot = [sum(V[k][i] for k in range(S)) for i in range(c)]
    grand = sum(sys_tot)
    out = []
    for k in range(S):
        acc = 0.0
        for i in range(c):
            e = top_tot[i] * sys_tot[k] / grand if grand > 0 else 0.0
            if e > 0:
                acc += value(V[k][i] - e) / math.sqrt(e)
        out.append(acc)
    return out


def linear(loss_weight):
    return lambda x: x if x >= 0 else loss_weight * x


def georisk(V, z):
    c = len(V[0])
    return [math.sqrt(sum(V[k]) / c * phi(z[k] / c)) for k in range(len(V))]


def pair_risk(r, b, alpha):
    """URisk, SE, TRisk of system r against baseline b (two-pass variance)."""
    c = len(r)
    x = []
    for i in range(c):
        d = r[i] - b[i]
        x.append(d if d >= 0 else (1 + alpha) * d)
    mean = sum(x) / c
    var = sum((v - mean) ** 2 for v in x) / (c - 1)
    se = math.sqrt(var / c)
    if se > 0:
        t = mean / se
    else:
        t = math.nan if mean == 0 else math.copysign(math.inf, mean)
    return mean, se, t


def table(V, alphas):
    """urisk, se, trisk as nested lists [system][baseline][alpha]."""
    S = len(V)
    U = [[[0.0] * len(alphas) for _ in range(S)] for _ in range(S)]
    E = [[[0.0] * len(alphas) for _ in range(S)] for _ in range(S)]
    T = [[[0.0] * len(alphas) for _ in range(S)] for _ in range(S)]
    for a in range(S):
        for b in range(S):
            for k, al in enumerate(alphas):
                U[a][b][k], E[a][b][k], T[a][b][k] = pair_risk(V[a], V[b], al)
    return U, E, T


def ranks_desc(values, ordinal=False):
    """Rank 1 = largest; ties averaged, or by position when ``ordinal``."""
    n = len(values)
    out = [0.0] * n
    for j in range(n):
        greater = sum(1 for m in range(n) if values[m] > values[j])
        equal_before = sum(1 for m in range(j) if values[m] == values[j])
        equal = sum(1 for m in range(n) if values[m] == values[j])
        out[j] = greater + equal_before + 1.0 if ordinal else greater + (equal + 1) / 2.0
    return out


def ranks_desc_without(values, skip, ordinal=False):
    """:func:`ranks_desc` of every value but position ``skip`` (None: all); ``skip`` gets NaN."""
    if skip is None:
        return ranks_desc(values, ordinal)
    rest = ranks_desc([v for j, v in enumerate(values) if j != skip], ordinal)
    return rest[:skip] + [math.nan] + rest[skip:]


def covariance(V):
    """Topic x topic covariance over systems (S - 1 degrees of freedom)."""
    S, c = len(V), len(V[0])
    mean = [sum(V[k][i] for k in range(S)) / S for i in range(c)]
    C = [[0.0] * c for _ in range(c)]
    for i in range(c):
        for j in range(c):
            C[i][j] = sum((V[k][i] - mean[i]) * (V[k][j] - mean[j]) for k in range(S)) / (S - 1)
    return mean, C


# ---------------------------------------------------------------------- test data builders
def matrix_of(V):
    """A ScoreMatrix with systems s0, s1, ... and topics t0, t1, ... around an (S, c) array."""
    import numpy as np

    from fastrisk.data.matrix import ScoreMatrix

    V = np.asarray(V, dtype=np.float64)
    return ScoreMatrix(V, [f"s{k}" for k in range(V.shape[0])], [f"t{i}" for i in range(V.shape[1])])


def web2012_49():
    """The 48 runs of TREC 2012 Web (ERR@20) plus the official baseline indriCASP: 49 systems."""
    from fastrisk.data.datasets import trec2012_web

    m, base = trec2012_web("err20")
    return m.with_system("indriCASP", [base[t] for t in m.topics])
