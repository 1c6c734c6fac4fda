"""Plain-NumPy references for simIReff's Gaussian-kernel margin (fastrisk.simulate.rks), with no
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
