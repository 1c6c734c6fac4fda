"""Plain-NumPy references for simIReff's Gaussian-kernel margin (fastrisk.simulate._r.rks), with no
binning: the exact two-stage direct plug-in bandwidth (Wand & Jones 1995, sec. 3.6: psi6 and
psi4 summed over all n^2 pairs, normal-reference scale min(sd, IQR / 1.349) as
``KernSmooth::dpik(scalest = "minim")``) and the exact Gaussian KDE. ks and KernSmooth bin the
data on 401 points; these are what the binned versions approximate."""

from __future__ import annotations

import math

import numpy as np


def exact_dpik(x) -> float:
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    q1, q3 = np.quantile(x, [0.25, 0.75])
    s = min(float(np.std(x, ddof=1)), float(q3 - q1) / 1.349)
    d = (x[:, None] - x[None, :]).ravel()
    rt = math.sqrt(2 * math.pi)

    def psi(r, g):  # (1 / (n^2 g^(r+1))) sum_ij phi^(r)((x_i - x_j) / g), phi^(r) = He_r phi
        z = d / g
        he = z ** 6 - 15 * z ** 4 + 45 * z ** 2 - 15 if r == 6 else z ** 4 - 6 * z ** 2 + 3
        return float(np.sum(he * np.exp(-0.5 * z * z) / rt)) / (n * n * g ** (r + 1))

    psi8 = 105.0 / (32.0 * math.sqrt(math.pi) * s ** 9)  # normal reference
    psi6 = psi(6, (30.0 / (rt * psi8 * n)) ** (1 / 9))
    psi4 = psi(4, (-6.0 / (rt * psi6 * n)) ** (1 / 7))
    return float((1.0 / (2 * math.sqrt(math.pi) * psi4 * n)) ** 0.2)


def gauss_kde(x, h, q) -> np.ndarray:
    """mean_i phi_h(q - x_i)."""
    x = np.asarray(x, dtype=np.float64)
    q = np.atleast_1d(np.asarray(q, dtype=np.float64))
    z = (q[:, None] - x[None, :]) / h
    return np.exp(-0.5 * z * z).mean(axis=1) / (h * math.sqrt(2 * math.pi))


def gauss_cdf(x, h, q) -> np.ndarray:
    """mean_i Phi((q - x_i) / h)."""
    from scipy import special

    x = np.asarray(x, dtype=np.float64)
    q = np.atleast_1d(np.asarray(q, dtype=np.float64))
    return special.ndtr((q[:, None] - x[None, :]) / h).mean(axis=1)


def ks_loglik(x, h) -> float:
    """simIReff's nks log-likelihood for bandwidth h, the way ks computes its estimate but by
    other means: linear binning with ``np.add.at`` on ks's 401-point grid (min(x) - 3.7 h ..
    max(x) + 3.7 h), the kernel sum taken directly (no FFT; weights up to ceiling(4 h / delta)
    cells), ``np.interp`` for ``dkde``, and ks's ``pkde`` at 0 and 1 (the trapezoids of the grid
    cells up to the one holding q, plus the part of that cell up to q) for the truncation."""
    x = np.asarray(x, dtype=np.float64)
    m = 401
    a, b = x.min() - 3.7 * h, x.max() + 3.7 * h
    delta = (b - a) / (m - 1)
    pts = a + delta * np.arange(m)
    pos = (x - a) / delta
    ix = np.floor(pos).astype(int)
    fx = pos - ix
    counts = np.zeros(m + 1)
    np.add.at(counts, ix, 1 - fx)
    np.add.at(counts, ix + 1, fx)
    counts = counts[:m]
    big_l = min(math.ceil(4 * h / delta), m - 1)
    lag = np.arange(m)[:, None] - np.arange(m)[None, :]
    w = np.where(np.abs(lag) <= big_l - 1, np.exp(-0.5 * (lag * delta / h) ** 2) / (h * math.sqrt(2 * math.pi)), 0.0)
    est = w @ counts / counts.sum()
    trap = np.minimum(est[:-1], est[1:]) * delta + 0.5 * np.abs(np.diff(est)) * delta

    def pkde(q):
        i = int(np.searchsorted(pts, q, side="right"))  # grid points <= q
        if i == 0:
            return 0.0
        if i >= m:
            return 1.0
        f = np.interp(q, pts, est)
        d = q - pts[i - 1]
        return min(1.0, trap[:i].sum() + min(f, est[i - 1]) * d + 0.5 * abs(f - est[i - 1]) * d)

    mass = pkde(1.0) - pkde(0.0)
    return float(np.log(np.interp(x, pts, est) / mass).sum())
