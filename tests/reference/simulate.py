"""Plain-NumPy/scipy references for the published simulation protocol (tests only)."""

from __future__ import annotations

import numpy as np
from scipy import integrate, stats

from reference import batch as _batch
from reference.batch import Replicate


def kept_runs(V):
    """removeDuplicates then removeBottom(p = .1) of the study's R/common.R, by loops."""
    S = V.shape[0]
    dup = []
    for i in range(S - 1):
        for j in range(i + 1, S):
            if all(abs(a - b) <= 1e-5 for a, b in zip(V[i], V[j])) and j not in dup:
                dup.append(j)
    rest = [s for s in range(S) if s not in dup]
    means = [float(np.mean(V[s])) for s in rest]
    q = np.percentile(means, 10)  # R's type-7 quantile
    return [s for s, m in zip(rest, means) if m >= q], sorted(dup), [s for s, m in zip(rest, means) if m < q]


def loglik(margin, x):
    """Log-likelihood of the scores x under a fitted simIReff margin, from its parameters."""
    x = np.asarray(x, dtype=float)
    p, fam = margin.params, margin.family
    xc = np.clip(x, 1e-6, 1 - 1e-6)
    if fam == "norm":
        mu, sd = p["mu"], p["sigma"]
        return float(stats.truncnorm.logpdf(x, -mu / sd, (1 - mu) / sd, mu, sd).sum())
    if fam == "beta":
        return float(stats.beta.logpdf(xc, p["shape1"], p["shape2"]).sum())
    if fam == "nks":  # ks's binned estimate (tests/reference/kde.py)
        from tests.reference.kde import ks_loglik

        return ks_loglik(x, p["h"])
    if fam == "bks":
        b = p["b"]

        def f(t):
            return np.mean(stats.beta.pdf(xc, t / b + 1, (1 - t) / b + 1))

        total = integrate.quad(f, 0, 1, limit=200)[0]
        return float(sum(np.log(f(v) / total) for v in xc))
    sup = margin.points
    j = np.array([int(np.argmin(np.abs(sup - v))) for v in x])
    if fam == "bbinom":
        return float(stats.betabinom.logpmf(j, len(sup) - 1, p["alpha"], p["beta"]).sum())
    lam = p["bw"]  # dks: Wang & van Ryzin kernel, normalised over the support
    d = np.array([np.mean([(1 - lam) if s == o else 0.5 * (1 - lam) * lam ** abs(s - o) for o in j])
                  for s in range(len(sup))])
    d /= d.sum()
    return float(np.log(d[j]).sum())


def bootstrap_centred(d, seed, k, B):
    """R/test.cpp testCpp_bootstrap: replicate means centred by their own mean; counts of
    (>= mean, |.| >= |mean|), with the kernel's tolerance and its replicate draws."""
    c = len(d)
    m = sum(d) / c
    tol = 1e-12 * sum(abs(v) for v in d) / c
    means = [sum(d[i] for i in Replicate(seed, k, 0, b).topics(c)) / c for b in range(B)]
    centre = sum(means) / B
    r = [v - centre for v in means]
    return sum(v >= m - tol for v in r), sum(abs(v) >= abs(m) - tol for v in r)


def r_mean(d) -> float:
    """R's mean: a long-double running sum / n, corrected by the mean of the residuals."""
    n = len(d)
    s = np.longdouble(0)
    for v in d:
        s += np.longdouble(v)
    s /= n
    t = np.longdouble(0)
    for v in d:
        t += np.longdouble(v) - s
    return float(s + t / n)


def flips(d, seed, k, B):
    """R/test.cpp testCpp_permutation: B random sign flips; the flipped mean summed in order in
    double, compared with R's mean with no tolerance; counts of (>= mean, |.| >= |mean|)."""
    m = r_mean(d)
    ge = ab = 0
    for b in range(B):
        xb = 0.0
        for s, v in zip(Replicate(seed, k, 1, b).signs(len(d)), d):
            xb += s * v
        xb /= len(d)
        ge += xb >= m
        ab += abs(xb) >= abs(m)
    return ge, ab


def tawn_cdf(u, v, theta, psi1, psi2):
    """VineCopula's Tawn copula CDF (``src/evCopula.c``: C(u, v) = (uv)^A(w), w = log v /
    log uv, A(t) = (1 - psi1)(1 - t) + (1 - psi2) t + ((psi2 t)^theta + (psi1 (1 - t))^theta)^(1 /
    theta)). VineCopula's family 104 has psi2 = 1 (``TawnPDF(u, v, theta, par2, 1)``), 204 has
    psi1 = 1."""
    t = np.log(v) / np.log(u * v)
    A = (1 - psi1) * (1 - t) + (1 - psi2) * t + ((psi2 * t) ** theta + (psi1 * (1 - t)) ** theta) ** (1 / theta)
    return (u * v) ** A


def tawn_pdf(u, v, theta, psi1, psi2, h=1e-5):
    """Density of `tawn_cdf` by central differences."""
    def cdf(a, b):
        return tawn_cdf(a, b, theta, psi1, psi2)

    return (cdf(u + h, v + h) - cdf(u + h, v - h) - cdf(u - h, v + h) + cdf(u - h, v - h)) / (4 * h * h)


def tawn_h1(u, v, theta, psi1, psi2, h=1e-6):
    """dC(u, v) / du of `tawn_cdf` (VineCopula's ``Hfunc1``, P(V <= v | U = u)) by central
    differences."""
    return (tawn_cdf(u + h, v, theta, psi1, psi2) - tawn_cdf(u - h, v, theta, psi1, psi2)) / (2 * h)


def copula_loglik_grid(cop, u, grid):
    """Log-likelihood of a one-parameter pyvinecopulib copula at each parameter of ``grid``."""
    out = []
    for p in grid:
        cop.parameters = np.array([[p]])
        out.append(float(cop.loglik(u)))
    return np.array(out)


# ------------------------------------------------------------------ VineCopula's preselection (presel)
def presel_indices(u):
    """(c1, c2) of VineCopula's ``todo_fams_presel`` by loops over the points: the sign of
    Kendall's tau (counted pair by pair) picks the two quadrants of the normal scores
    (upper right / lower left when tau > 0, lower right / upper left otherwise); each c is
    the textbook Pearson correlation of the points strictly inside its quadrant."""
    conc = np.sum(np.sign(np.subtract.outer(u[:, 0], u[:, 0])) * np.sign(np.subtract.outer(u[:, 1], u[:, 1])))
    z = [(a, b) for a, b in stats.norm.ppf(u)]
    quads = (((1, 1), (-1, -1)) if conc > 0 else ((1, -1), (-1, 1)))
    out = []
    for sx, sy in quads:
        pts = [(a, b) for a, b in z if sx * a > 0 and sy * b > 0]
        if len(pts) < 2:
            out.append(float("nan"))
            continue
        ma = sum(a for a, _ in pts) / len(pts)
        mb = sum(b for _, b in pts) / len(pts)
        sab = sum((a - ma) * (b - mb) for a, b in pts)
        saa = sum((a - ma) ** 2 for a, _ in pts)
        sbb = sum((b - mb) ** 2 for _, b in pts)
        out.append(sab / np.sqrt(saa * sbb))
    return out[0], out[1]


# R/BiCop.R's fams11, fams00, fams10, fams01, posfams, negfams, written out
_F11 = [13, 4, 6, 7, 17, 8, 9, 19, 10, 104, 204]
_F00 = [3, 14, 16, 7, 17, 18, 9, 19, 20, 114, 214]
_F10 = [23, 34, 36, 27, 37, 38, 29, 39, 40, 134, 234]
_F01 = [33, 24, 26, 27, 37, 28, 29, 39, 30, 124, 224]
_POS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 16, 17, 18, 19, 20, 104, 114, 204, 214]
_NEG = [1, 2, 5, 23, 24, 26, 27, 28, 29, 30, 33, 34, 36, 37, 38, 39, 40, 124, 134, 224, 234]


def presel_families(tau, c1, c2):
    """``todo_fams_presel``'s branches in R's order, one by one (tau > 0: c1 = c11,
    c2 = c00; tau < 0: c1 = c10, c2 = c01)."""
    if tau > 0:
        if c1 - c2 > 0.3:
            return [0, 2] + _F11
        if c1 - c2 > 0.05:
            return [0, 1, 2, 5, 20] + _F11
        if c1 - c2 < -0.3:
            return [0, 2] + _F00
        if c1 - c2 < -0.05:
            return [0, 1, 2, 5, 10] + _F00
        return [0] + _POS
    if c1 - c2 < -0.3:
        return [0, 2] + _F10
    if c1 - c2 < -0.05:
        return [0, 1, 2, 5, 30] + _F10
    if c1 - c2 > 0.3:
        return [0, 2] + _F01
    if c1 - c2 > 0.05:
        return [0, 1, 2, 5, 40] + _F01
    return [0] + _NEG


def kernel_seed(seed: int) -> int:
    """The kernels' 63-bit seed of a result's recorded integer seed: NumPy's SeedSequence(seed),
    its first 64-bit word >> 1 (`fastrisk._runtime.rng.resolve_seed`)."""
    return int(np.random.SeedSequence(int(seed)).generate_state(1, np.uint64)[0] >> np.uint64(1))


def assert_resampled_p_values(std, urb, d, key, k, B):
    """Pair k's bootstrap and permutation p-values of a battery result (``std``: fastrisk's
    tests, ``urb``: ``protocol="urbano2019"``) against the one-replicate-at-a-time references on
    the draws of stream key ``key`` (B resamples; ``d``: the pair's differences)."""
    ge, le, ab = _batch.bootstrap_counts(d, kernel_seed(std.seed), key, B)
    np.testing.assert_allclose(std.pvalue[k, 3], np.array([ab + 1, le + 1, ge + 1]) / (B + 1))
    ge, le = _batch.sign_flip_counts([v / 2 for v in d], kernel_seed(std.seed), key, B, exact=False)
    pg, pl = (ge + 1) / (B + 1), (le + 1) / (B + 1)
    np.testing.assert_allclose(std.pvalue[k, 4], [min(1, 2 * min(pg, pl)), pl, pg])
    ge, ab = bootstrap_centred(d, kernel_seed(urb.seed), key, B)
    assert urb.p("bootstrap", "greater")[k] == round(ge / B, 6)
    assert urb.p("bootstrap", "two-sided")[k] == round(ab / B, 6)
    ge, ab = flips(d, kernel_seed(urb.seed), key, B)
    assert urb.p("permutation", "greater")[k] == round(ge / B, 6)
    assert urb.p("permutation", "two-sided")[k] == round(ab / B, 6)
