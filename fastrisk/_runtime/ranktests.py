"""p-values of the rank and sign tests from their sufficient statistics, vectorised.

The Wilcoxon signed-rank test and the sign test of the simulation battery
(`fastrisk.simulate.battery`) and of `fastrisk.wilcoxon_test` / `fastrisk.sign_test`: the
statistics come from the kernels of `fastrisk._kernels.battery` (W+ with average ranks, the
number of non-zero differences, the tie term, the number of zeros; the counts above and below),
the p-values are formed here, once for every pair, with scipy's distributions:

- Wilcoxon: the exact null distribution of W+ (`fastrisk._kernels.battery.wilcoxon_cdf_table`)
  for n <= ``exact_max`` non-zero differences without ties or zeros, as ``scipy.stats.wilcoxon``
  (``method="auto"``) and R's ``wilcox.test`` decide; else the normal approximation with the tie
  correction of the variance, n(n + 1)(2n + 1)/24 - sum(t^3 - t)/48, and optionally the
  continuity correction.
- sign: the exact binomial test of k successes in n fair trials, two-sided 2 min(P(X <= k),
  P(X >= k)) capped at 1, as ``scipy.stats.binomtest(k, n, 0.5)``.

Each returns ``(K, 3)``: two-sided, less, greater.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import special

from fastrisk._kernels import battery as _k

#: Largest n with the exact Wilcoxon distribution (as R and scipy).
WILCOXON_EXACT_MAX = 50


@functools.lru_cache(maxsize=1)
def wilcoxon_cdf():
    """P(W+ <= w) for n = 0..`WILCOXON_EXACT_MAX` (rows), computed once."""
    return _k.wilcoxon_cdf_table(WILCOXON_EXACT_MAX)


def binomial_cdf(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """P(X <= k) for X ~ Binomial(n, 1/2) (exact, scipy's bdtr; 1 for k >= n), for each pair:
    computed once per distinct (n, k), so memory and time grow with the trials, never with
    n^2 (a table over 0..max n took (n + 1)^2 doubles: 3.2 GiB at 20,000 topics)."""
    key = n.astype(np.int64) * (int(n.max(initial=0)) + 1) + np.minimum(k, n)
    uniq, inverse = np.unique(key, return_inverse=True)
    un, uk = np.divmod(uniq, int(n.max(initial=0)) + 1)
    return np.where(uk >= un, 1.0, special.bdtr(uk, un, 0.5))[inverse.reshape(-1)].reshape(k.shape)


def wilcoxon_p(stats, correction, exact_max=WILCOXON_EXACT_MAX):
    """p-values (K, 3) of the signed-rank statistic from the kernel's statistics rows ``stats``
    (`wilcoxon_p_of` on their W+, n, tie and zero columns)."""
    return wilcoxon_p_of(stats[:, _k.WPLUS], stats[:, _k.WN], stats[:, _k.WTIES], stats[:, _k.WZERO], correction,
                         exact_max)


def wilcoxon_p_of(w, n, ties, nzero, correction, exact_max=WILCOXON_EXACT_MAX):
    """p-values (K, 3) of the signed-rank statistic W+ ``w`` over ``n`` non-zero differences
    (tie term ``ties``, ``nzero`` zeros): exact table (n <= ``exact_max``) or tie-corrected normal."""
    ni = n.astype(np.int64)
    exact = (ni <= exact_max) & (ties == 0) & (nzero == 0) & (ni > 0)
    out = np.full((len(w), 3), np.nan)
    if exact.any():
        table = wilcoxon_cdf()
        we, ne = w[exact], ni[exact]
        lo = np.ceil(we).astype(np.int64)
        hi = np.floor(we).astype(np.int64)
        p_less = table[ne, lo]
        p_greater = np.where(hi > 0, 1.0 - table[ne, np.maximum(hi - 1, 0)], 1.0)
        out[exact, 1] = p_less
        out[exact, 2] = p_greater
        out[exact, 0] = np.clip(2 * np.minimum(p_less, p_greater), 0, 1)
    approx = ~exact & (ni > 0)
    if approx.any():
        na, wa = n[approx], w[approx]
        mn = na * (na + 1) / 4
        sigma = np.sqrt((na * (na + 1) * (2 * na + 1) - ties[approx] / 2) / 24)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (wa - mn) / sigma
            if correction:
                zg = z - 0.5 / sigma
                zl = z + 0.5 / sigma
                z2 = z - np.sign(z) * 0.5 / sigma
            else:
                zg = zl = z2 = z
        out[approx, 2] = special.ndtr(-zg)
        out[approx, 1] = special.ndtr(zl)
        out[approx, 0] = np.minimum(1.0, 2 * np.minimum(special.ndtr(-z2), special.ndtr(z2)))
    return out


def sign_p(k, n):
    """Exact binomial p-values (K, 3) of k successes in n fair trials (NaN for n = 0)."""
    k = k.astype(np.int64)
    n = n.astype(np.int64)
    p_less = binomial_cdf(k, n)
    p_greater = binomial_cdf(n - k, n)  # P(X >= k) = P(X <= n - k) by symmetry
    two = np.minimum(1.0, 2 * np.minimum(p_less, p_greater))
    out = np.stack([two, p_less, p_greater], axis=-1)
    out[n == 0] = np.nan
    return out
