"""Deliberately plain references for the batched kernels and the test battery.

Never imports fastrisk's kernels: the counter-based streams are re-implemented with Python
integers and every statistic is a loop over topics.
"""

from __future__ import annotations

import itertools
import math

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def mix64(z: int) -> int:
    z &= _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def stream_state(seed: int, stream: int) -> int:
    return mix64(seed ^ mix64((stream + _GOLDEN) & _MASK))


class Replicate:
    """The stream of replicate ``b`` of collection ``k`` (tag 0 bootstrap, 1 sign flips)."""

    def __init__(self, seed: int, k: int, tag: int, b: int):
        self.state = stream_state(stream_state(seed, 2 * k + tag), b)

    def u64(self) -> int:
        self.state = (self.state + _GOLDEN) & _MASK
        return mix64(self.state)

    def topics(self, c: int) -> list[int]:
        out = []
        while len(out) < c:
            z = self.u64()
            out.append(((z & 0xFFFFFFFF) * c) >> 32)
            if len(out) < c:
                out.append(((z >> 32) * c) >> 32)
        return out

    def signs(self, c: int) -> list[float]:
        out = []
        while len(out) < c:
            z = self.u64()
            for j in range(64):
                if len(out) == c:
                    break
                out.append(1.0 if (z >> j) & 1 else -1.0)
        return out


def risk_scores(r, b, alpha):
    return [(ri - bi) * (1 + alpha) if ri - bi < 0 else ri - bi for ri, bi in zip(r, b)]


def urisk_se(x):
    """(mean, s/sqrt(c), jackknife SE) of a list."""
    c = len(x)
    m = sum(x) / c
    s = math.sqrt(sum((v - m) ** 2 for v in x) / (c - 1))
    loo = [(sum(x) - v) / (c - 1) for v in x]
    lm = sum(loo) / c
    sej = math.sqrt((c - 1) / c * sum((v - lm) ** 2 for v in loo))
    return m, s / math.sqrt(c), sej


def zrisk_georisk(X, loss_weight):
    """ZRisk and GeoRisk of every system (rows of X) over the collection X (S lists of c)."""
    S, c = len(X), len(X[0])
    T = [sum(X[s][i] for s in range(S)) for i in range(c)]
    N = sum(T)
    out = []
    for s in range(S):
        Sk = sum(X[s])
        z = 0.0
        for i in range(c):
            e = T[i] * Sk / N if N > 0 else 0.0
            if e > 0:
                v = (X[s][i] - e) / math.sqrt(e)
                z += v if v > 0 else loss_weight * v
        phi = 0.5 * math.erfc(-(z / c) / math.sqrt(2))
        out.append((z, math.sqrt(Sk / c * phi)))
    return out


def bootstrap_counts(x, seed, k, B):
    """[#{d* >= m}, #{d* <= m}, #{|d*| >= |m|}] of the shifted bootstrap of the mean of x."""
    c = len(x)
    m = sum(x) / c
    tol = 1e-12 * sum(abs(v) for v in x) / c
    ge = le = ab = 0
    for b in range(B):
        idx = Replicate(seed, k, 0, b).topics(c)
        d = sum(x[i] for i in idx) / c - m
        ge += d >= m - tol
        le += d <= m + tol
        ab += abs(d) >= abs(m) - tol
    return ge, le, ab


def sign_flip_counts(h, seed, k, B, exact):
    """[#{sum(s h) >= sum(h)}, #{<= sum(h)}] over B random (or all 2^c) sign patterns."""
    c = len(h)
    obs = sum(h)
    tol = 1e-12 * sum(abs(v) for v in h)
    ge = le = 0
    patterns = itertools.product((-1.0, 1.0), repeat=c) if exact else (
        Replicate(seed, k, 1, b).signs(c) for b in range(B))
    for s in patterns:
        t = sum(si * hi for si, hi in zip(s, h))
        ge += t >= obs - tol
        le += t <= obs + tol
    return ge, le


def signed_rank(d):
    """(W+, n non-zero, sum(t^3 - t)) with zeros dropped and average ranks for ties."""
    nz = [v for v in d if v != 0]
    a = sorted(abs(v) for v in nz)
    ranks = {}
    for v in set(a):
        pos = [i + 1 for i, u in enumerate(a) if u == v]
        ranks[v] = sum(pos) / len(pos)
    ties = sum(a.count(v) ** 3 - a.count(v) for v in set(a))
    return sum(ranks[abs(v)] for v in nz if v > 0), len(nz), ties


def zrisk_georisk_diff(x, y):
    """ZRisk(y) - ZRisk(x) and GeoRisk(y) - GeoRisk(x) in the collection [x, y] at alpha = 0."""
    (zx, gx), (zy, gy) = zrisk_georisk([list(x), list(y)], 1.0)
    return zy - zx, gy - gx
