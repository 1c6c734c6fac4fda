"""Plain references for the user's own pair study (`fastrisk.simulate.empirical`,
`fastrisk.simulate.pair`): the empirical-population null's shift as a root found by bisection,
and the rejection counts under that null as a slow loop over trials (draws from the plain
SplitMix64 streams, p-values from `reference.riskinference` and SciPy's t test). Never imports
the code under test."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from reference import riskinference as ri
from reference.resampling import Stream


def urisk_value(d, alpha):
    d = np.asarray(d, dtype=float)
    return d + alpha * np.minimum(d, 0.0)


def shift_root(d, alpha, target=0.0):
    """c with mean(v(d + c)) = target: bisection on [-2, 2] (mean(v) is increasing in c) to
    adjacent floats."""
    def f(c):
        return float(np.mean(urisk_value(np.asarray(d, dtype=float) + c, alpha))) - target

    lo, hi = -2.0, 2.0
    assert f(lo) < 0 < f(hi)
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return lo if abs(f(lo)) <= abs(f(hi)) else hi


def derived_seed(seed, *keys):
    """The study's per-group seed: NumPy's SeedSequence of (seed, keys), its first 64-bit word
    shifted right by one."""
    return int(np.random.SeedSequence([int(seed), *[int(k) for k in keys]]).generate_state(1, np.uint64)[0] >> 1)


def _pvalue(name, x, lo, hi, seed, row, B, level):
    """Two-sided p-value of one row."""
    if name == "t":
        return stats.ttest_1samp(x, 0.0).pvalue
    if name == "edgeworth":
        return ri.edgeworth(x)[0]
    if name == "johnson":
        return ri.johnson(x)[0]
    if name == "hall":
        return ri.hall(x)[0]
    if name == "el-bartlett":
        return ri.el_bartlett(x)[0]
    if name == "bootstrap-t-symmetric":
        return ri.bootstrap_t_symmetric(x, seed, B, row=row)[0]
    if name == "exact":
        return ri.betting(x, lo, hi, seed, B, row=row, level=level)[0]
    raise KeyError(name)


def empirical_hits(d, alpha, target, n, trials, draw_seed, name, pvalue_seed, B=0, level=0.05):
    """Two-sided rejections at ``level`` of inference ``name`` in ``trials`` trials of the
    empirical-population null (topics drawn with replacement from the pair's shifted topics,
    trial t from stream (draw_seed, t), topic floor(u N)); a trial without variation is no
    rejection."""
    d = np.asarray(d, dtype=float)
    c = shift_root(d, alpha, target)
    pop = urisk_value(d + c, alpha)
    lo, hi = float(urisk_value(c - 1.0, alpha)), float(urisk_value(1.0 + c, alpha))
    N = len(pop)
    hits = 0
    for t in range(trials):
        s = Stream(draw_seed, t)
        x = np.array([pop[s.below(N)] for _ in range(n)])
        if np.ptp(x) == 0:
            continue
        p = _pvalue(name, x, lo, hi, pvalue_seed, t, B, level)
        hits += bool(p <= level) and not math.isnan(p)
    return hits
