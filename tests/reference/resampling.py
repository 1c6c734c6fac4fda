"""Deliberately plain reference implementations for the resampling tests.

Nothing here imports fastrisk's kernels: the counter-based stream (SplitMix64 keyed by
(seed, stream)) is re-implemented with Python integers, and every procedure is a loop.
"""

from __future__ import annotations

import itertools
import math

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _mix64(z: int) -> int:
    z &= _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


class Stream:
    """The stream ``(seed, stream)``: ``u64()``, ``double()``, ``below(n)``."""

    def __init__(self, seed: int, stream: int):
        self.state = _mix64(seed ^ _mix64((stream + _GOLDEN) & _MASK))

    def u64(self) -> int:
        self.state = (self.state + _GOLDEN) & _MASK
        return _mix64(self.state)

    def double(self) -> float:
        return (self.u64() >> 11) * (1.0 / 9007199254740992.0)

    def below(self, n: int) -> int:
        return min(int(self.double() * n), n - 1)


def topics_below(seed: int, b: int, n: int, count: int) -> list[int]:
    """``count`` uniform draws from {0, ..., n-1} of stream ``(seed, b)``: Lemire's
    multiply-shift on 32-bit words, the high then the low half of each 64-bit draw,
    k = (x n) >> 32, a word rejected when (x n) mod 2^32 < 2^32 mod n."""
    s = Stream(seed, b)
    out: list[int] = []
    words: list[int] = []
    while len(out) < count:
        if not words:
            z = s.u64()
            words = [z & 0xFFFFFFFF, z >> 32]  # popped from the end: the high half first
        m = words.pop() * n
        if m & 0xFFFFFFFF >= (1 << 32) % n:
            out.append(m >> 32)
    return out


def resampled_topics(seed: int, b: int, c: int) -> list[int]:
    """The topics drawn (with replacement) by bootstrap replicate ``b``."""
    return topics_below(seed, b, c, c)


def bootstrap_statistics(rows, seed: int, B: int, statistic=None) -> list[list[float]]:
    """out[k][b] = statistic of row k resampled by replicate b (default: the mean)."""
    out = []
    for row in rows:
        c = len(row)
        vals = []
        for b in range(B):
            sample = [row[i] for i in resampled_topics(seed, b, c)]
            vals.append(sum(sample) / c if statistic is None else statistic(sample))
        out.append(vals)
    return out


def signs(seed: int, b: int, c: int) -> list[float]:
    """The +-1 pattern of permutation replicate ``b``: 64 bits per draw, lowest bit first."""
    s = Stream(seed, b)
    out = []
    bits = 0
    left = 0
    for _ in range(c):
        if left == 0:
            bits = s.u64()
            left = 64
        out.append(1.0 if bits & 1 else -1.0)
        bits >>= 1
        left -= 1
    return out


def exact_permutation_pvalues(d, alpha: float = 0.0) -> tuple[float, float, float]:
    """(two-sided, less, greater) p-values of mean(x(d)) over all 2^c sign patterns."""
    def score(v):
        return v * (1.0 + alpha) if v < 0 else v

    c = len(d)
    obs = sum(score(v) for v in d) / c
    null = []
    for pattern in itertools.product((1.0, -1.0), repeat=c):
        null.append(sum(score(s * v) for s, v in zip(pattern, d)) / c)
    tol = abs(obs) * 2.220446049250313e-14
    n = len(null)
    less = sum(1 for t in null if t <= obs + tol) / n
    greater = sum(1 for t in null if t >= obs - tol) / n
    return min(1.0, 2 * min(less, greater)), less, greater


def jackknife(row, statistic) -> tuple[float, float, float, list[float], list[float]]:
    """(theta, SE_J, bias_J, leave-one-out values, pseudo-values), SPEC §2."""
    c = len(row)
    theta = statistic(list(row))
    loo = [statistic([row[j] for j in range(c) if j != i]) for i in range(c)]
    dot = sum(loo) / c
    se = math.sqrt((c - 1) / c * sum((t - dot) ** 2 for t in loo))
    bias = (c - 1) * (dot - theta)
    pseudo = [c * theta - (c - 1) * t for t in loo]
    return theta, se, bias, loo, pseudo


def quantile_linear(values, q: float) -> float:
    """NumPy's default ('linear') quantile: interpolate the order statistics at q (n - 1)."""
    v = sorted(values)
    h = q * (len(v) - 1)
    lo = math.floor(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def holm(p) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p[i]))
        out[i] = running
    return out


def benjamini_hochberg(p) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 1.0
    for j in range(m - 1, -1, -1):
        i = order[j]
        running = min(running, p[i] * m / (j + 1))
        out[i] = min(1.0, running)
    return out


def tukey_ranges(scores, seed: int, B: int) -> list[float]:
    """Randomised Tukey HSD null: ranges of system means after permuting within topics."""
    S = len(scores)
    c = len(scores[0])
    out = []
    for b in range(B):
        s = Stream(seed, b)
        sums = [0.0] * S
        for i in range(c):
            perm = list(range(S))
            for k in range(S - 1, 0, -1):
                j = s.below(k + 1)
                perm[k], perm[j] = perm[j], perm[k]
            for k in range(S):
                sums[k] += scores[perm[k]][i]
        out.append((max(sums) - min(sums)) / c)
    return out
