"""Deliberately plain references for the meta-evaluation kernels (fastrisk._kernels.metaeval).

Never imports fastrisk's kernels: the counter-based draws are `batch.Replicate`'s Python
integers, every sum is a loop over topics (vectorised over replicates only, which keeps each
replicate's order of additions), every selection a full sort.
"""

from __future__ import annotations

import math

import numpy as np

from reference.batch import _GOLDEN, _MASK, Replicate, mix64, stream_state


def resample_counts(seed: int, B: int, c: int) -> np.ndarray:
    """(B, c): C[b, i] = times topic i is drawn in bootstrap resample b (key 0, tag 0)."""
    C = np.zeros((B, c))
    for b in range(B):
        for i in Replicate(seed, 0, 0, b).topics(c):
            C[b, i] += 1.0
    return C


def _abs_t(s1, s2, c):
    with np.errstate(divide="ignore", invalid="ignore"):
        m = s1 / c
        ss = np.maximum(s2 - s1 * m, 0.0)
        t = np.abs(m / np.sqrt(ss / (c - 1) / c))
    return np.where(np.isnan(t), 0.0, t)


def _kth(stat, k):
    """(value, replicate) of the k-th largest, the lowest replicate among equal values."""
    v = sorted(stat.tolist())[len(stat) - k]
    return v, int(np.flatnonzero(stat == v)[0])


def sakai_pair(X, e, b, alpha, studentized, C, k):
    """Sakai (2006)'s paired bootstrap test of x = d + alpha min(d, 0), d = X[e] - X[b]:
    (mean(x), observed, count, threshold, difference required)."""
    c = X.shape[1]
    x = []
    for i in range(c):
        d = X[e, i] - X[b, i]
        x.append(d + alpha * d if d < 0.0 else d)
    t = 0.0
    for v in x:
        t += v
    mean = t / c
    w = [v - mean for v in x]
    s2 = 0.0
    for v in w:
        s2 += v * v
    if studentized:
        with np.errstate(divide="ignore", invalid="ignore"):
            o = abs(np.float64(mean) / np.sqrt(np.float64(s2) / (c - 1) / c))
        obs = 0.0 if np.isnan(o) else float(o)
    else:
        obs = abs(mean)
    B = C.shape[0]
    r1 = np.zeros(B)
    r2 = np.zeros(B)
    for i in range(c):
        r1 = r1 + C[:, i] * w[i]
        r2 = r2 + C[:, i] * (w[i] * w[i])
    mm = np.abs(r1 / c)
    st = _abs_t(r1, r2, c) if studentized else mm
    count = int(np.sum(st >= obs))
    v, r = _kth(st, k)
    return mean, obs, count, v, float(mm[r])


def zrisk_resampled(X, lw, cnt, n=None):
    """(ZRisk, GeoRisk) of every system over the whole matrix X (S x c) in the resample with
    topic counts cnt (Dinçer, Macdonald & Ounis 2016; topic totals of the original matrix), n
    topics in the resample (default c)."""
    S, c = X.shape
    n = c if n is None else n
    T = [0.0] * c
    for s in range(S):
        for i in range(c):
            T[i] += X[s, i]
    tot = []
    for s in range(S):
        t = 0.0
        for i in range(c):
            t += cnt[i] * X[s, i]
        tot.append(t)
    N = 0.0
    for v in tot:
        N += v
    z_out, g_out = [], []
    for s in range(S):
        Sk = tot[s]
        z = 0.0
        for i in range(c):
            if cnt[i] == 0.0:
                continue
            e = T[i] * Sk / N if N > 0.0 else 0.0
            if e > 0.0:
                v = (X[s, i] - e) / math.sqrt(e)
                z += cnt[i] * (v if v >= 0.0 else lw * v)
        phi = 0.5 * math.erfc(-(z / n) / math.sqrt(2.0))
        z_out.append(z)
        g_out.append(math.sqrt(max(Sk, 0.0) / n * phi))
    return np.array(z_out), np.array(g_out)


def zrisk_pairs(X, lw, C, k, which, pairs):
    """The shift test of ZRisk (which 0) or GeoRisk (1) differences: per pair (delta, count,
    threshold)."""
    V = zrisk_resampled(X, lw, np.ones(X.shape[1]))[which]
    R = np.array([zrisk_resampled(X, lw, C[r])[which] for r in range(C.shape[0])])
    out = []
    for a, b in pairs:
        dl = V[a] - V[b]
        st = np.abs((R[:, a] - R[:, b]) - dl)
        out.append((dl, int(np.sum(st >= abs(dl))), _kth(st, k)[0]))
    return out


def _below(state: int, n: int):
    state = (state + _GOLDEN) & _MASK
    u = float(mix64(state) >> 11) * (1.0 / 9007199254740992.0)
    j = int(u * n)
    return state, min(j, n - 1)


def split(seed: int, trial: int, c: int, m: int) -> list[int]:
    """The first m of a partial Fisher-Yates shuffle of range(c) from stream (seed, trial)."""
    perm = list(range(c))
    st = stream_state(seed, trial)
    for j in range(m):
        st, u = _below(st, c - j)
        q = j + u
        perm[j], perm[q] = perm[q], perm[j]
    return perm[:m]


def _pair_value(X, e, b, idx, lw, trisk):
    x = []
    for i in idx:
        d = X[e, i] - X[b, i]
        x.append(d if d >= 0.0 else lw * d)
    t = 0.0
    for v in x:
        t += v
    n = len(idx)
    m = t / n
    if not trisk:
        return m
    ss = 0.0
    for v in x:
        ss += (v - m) * (v - m)
    with np.errstate(divide="ignore", invalid="ignore"):
        tt = np.float64(m) / np.sqrt(np.float64(ss) / (n - 1) / n)
    return 0.0 if np.isnan(tt) else float(tt)


def _values(X, idx, lw, statistic):
    if statistic == "mean":
        out = []
        for s in range(X.shape[0]):
            a = 0.0
            for i in idx:
                a += X[s, i]
            out.append(a / len(idx))
        return out
    cnt = np.zeros(X.shape[1])
    cnt[list(idx)] = 1.0
    z, g = zrisk_resampled(X, lw, cnt, len(idx))
    return list(z if statistic == "zrisk" else g)


def swap_counts(X, sizes, trials, seed, edges, relative, statistic="mean", lw=1.0):
    """Voorhees & Buckley's swap counts (total, swaps) per size and bin, by plain loops."""
    S = X.shape[0]
    total = np.zeros((len(sizes), len(edges)), np.int64)
    swaps = np.zeros_like(total)

    def add(z, v, a, b):
        ks = [q for q in range(len(edges)) if v >= edges[q]]
        if ks:
            total[z, ks[-1]] += 1
            swaps[z, ks[-1]] += a * b < 0

    for z, n in enumerate(sizes):
        for t in range(trials):
            sel = split(seed, z * trials + t, X.shape[1], 2 * n)
            A, Bs = sel[:n], sel[n:]
            if statistic in ("urisk", "trisk"):
                for i in range(S):
                    for j in range(S):
                        if i != j:
                            va = _pair_value(X, i, j, A, lw, statistic == "trisk")
                            vb = _pair_value(X, i, j, Bs, lw, statistic == "trisk")
                            add(z, abs(va), va, vb)
                continue
            ma, mb = _values(X, A, lw, statistic), _values(X, Bs, lw, statistic)
            for i in range(S):
                for j in range(i + 1, S):
                    da, db = ma[i] - ma[j], mb[i] - mb[j]
                    v = abs(da)
                    if relative:
                        top = max(ma[i], ma[j])
                        v = v / top if top > 0 else 0.0
                    add(z, v, da, db)
    return total, swaps
