"""simIReff's Gaussian-kernel margin (``effCont_nks``) as R computes it: ``ks::kde(x)`` in one
dimension with its default plug-in bandwidth, ``ks::dkde`` / ``ks::pkde`` / ``ks::qkde`` on its
grid estimate, simIReff's truncation to [0, 1] (``effContTrunc``) and its mean and variance
integrals (``effContMean`` / ``effContVar``: R's ``integrate``).

Sources (ks 1.14.0 as installed with R 4.2.2, printed from R, and its C code, ``src/ks.c``;
KernSmooth 2.23-20's R code and ``src/linbin.f``); each step in R's order of operations:

- bandwidth (`dpik`): ``ks::hpi(x)`` = ``KernSmooth::dpik(x, level = 2, gridsize = 401)``:
  scale min(IQR / 1.349, sd) (R's type-7 quartiles, ``sqrt(var(x))``), the standardised data
  linearly binned (Fortran ``linbin``, truncate = TRUE: a point at or beyond the last grid
  point, usually the maximum itself, is dropped) on 401 points from its min to its max, then
  the binned kernel functional estimates psi6 and psi4 (``bkfe``: kernel weights up to
  (4 + r) g, an FFT convolution, divided by the squared bin total);
- grid estimate (`kde_grid`): ``kde()`` bins (d = 1, n > 1: ``default.bflag``) on 401 points
  from min(x) - 3.7 h to max(x) + 3.7 h (``binning``: ``seq(a, b, length = 401)``; h taken
  back from H = h^2 as sqrt(h^2)), ``massdist1d`` linear binning, then ``kdde.binned.1d``:
  normal weights up to ceiling(4 h / delta) cells divided by the bin total, convolved by
  ``symconv.1d`` (FFT, zero-padded to a power of two);
- ``dkde`` = ``predict.kde`` = ``grid.interp`` -> C ``interp1d``: linear interpolation of the
  grid estimate, the end values outside it (`dkde`);
- ``pkde`` = ``integral.kde(density = TRUE)``: for q in grid cell i, the trapezoid sums of
  cells 1..i plus a partial trapezoid of cell i (so the full cell i is counted once more than
  its share: ks's arithmetic, kept), 0 below the grid, 1 at or above its end, capped at 1
  (`pkde`);
- ``qkde``: ``pkde`` at the grid points, ``findInterval``, linear interpolation between grid
  points (R stops where those probabilities are not sorted) (`qkde_table`, the kernel's `qkde_trunc`);
- simIReff: F01 = pkde(c(0, 1)); truncated density dkde(x) / (F1 - F0); truncated quantile
  cap(qkde(p (F1 - F0) + F0), 0, 1); df = mean(dnorm(0, sd = h) / dkde(x)); logLik =
  sum(log(truncated density)); E and Var by ``integrate`` (abs.tol 1e-6, 500 subdivisions).

The ks version: the study ran in early 2019 (ks 1.11.3 / 1.11.4). ks's CHANGELOG between 1.11.3
and 1.14.0 touches this path once: 1.11.6 "Changed dkde() to be an alias for predict.kde()";
before, ``dkde(x, fhat)`` was ``kde(x = fhat$x, h = fhat$h, eval.points = x)$estimate``, which
since 1.11.0 (binned = default.bflag, TRUE for d = 1, n > 1) computes the same binned grid
estimate (same data, same h) and returns ``predict(fhat, x = eval.points)``: the same numbers.
``default.bflag``, ``default.gridsize``, ``hpi``'s call of ``dpik``, ``integral.kde`` and
``qkde`` read the same in both versions.

R's sums (``sum``, ``mean``) accumulate in long double (`fastrisk.simulate._r.rmath`); R's ``fft``
is R's own (Singleton's mixed radix, `fastrisk.simulate._r._kernels.rks.r_fft`, bit for bit): between
clusters of scores more than 4 bandwidths apart the grid estimate is FFT rounding noise
(+-1e-15), and whether ``qkde`` stops there (``findInterval`` on a decreasing ``pkde``) turns
on that noise: with numpy's FFT 12 of R's 313 successful fits on the AP / nDCG@20 / ERR@20
reference runs would fail, and 2 of R's 5 failures would not.
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np
from scipy import LowLevelCallable

from fastrisk.simulate._r._kernels import rks as _k
from fastrisk.simulate._r.rmath import _ldsum, _r_integrate01, r_dnorm, r_mean, r_quantile7, r_sd

#: ``default.gridsize(1)`` / ``default.bgridsize(1)``: points of ks's (and dpik's) grids.
GRIDSIZE = 401
#: ``kde()``'s ``supp``: the grid extends this many bandwidths beyond the data.
SUPP = 3.7


def r_seq(a: float, b: float, m: int) -> np.ndarray:
    """R's ``seq(a, b, length = m)`` (``seq.default``): a, a + i (b - a) / (m - 1), b."""
    out = a + np.arange(m, dtype=np.float64) * ((b - a) / (m - 1))
    out[0], out[-1] = a, b
    return out


def linbin(x, a: float, b: float, m: int) -> np.ndarray:
    """KernSmooth's Fortran ``linbin`` with ``truncate = TRUE``: points outside [a, b), and one
    landing on the last grid point, are dropped."""
    g = np.zeros(m)
    delta = (b - a) / (m - 1)
    for v in np.asarray(x, dtype=np.float64).tolist():
        lxi = (v - a) / delta + 1
        li = int(lxi)  # Fortran int(): toward zero
        rem = lxi - li
        if 1 <= li < m:
            g[li - 1] += 1 - rem
            g[li] += rem
    return g


def massdist1d(x, a: float, b: float, m: int) -> np.ndarray:
    """ks's C ``massdist1d`` (unit weights): linear binning, the outer halves kept at the ends."""
    est = np.zeros(m)
    delta = (b - a) / (m - 1)
    for v in np.asarray(x, dtype=np.float64).tolist():
        pos = (v - a) / delta
        ix = math.floor(pos)
        fx = pos - ix
        if 0 <= ix <= m - 2:
            est[ix] += 1 - fx
            est[ix + 1] += fx
        elif ix == -1:
            est[0] += fx
        elif ix == m - 1:
            est[ix] += 1 - fx
    return est


def _fft_conv(u, v) -> np.ndarray:
    """``Re(fft(fft(u) * fft(v), inverse = TRUE))`` with R's ``fft`` (`fastrisk.simulate._r._kernels.rks`)."""
    zero = np.zeros(len(u))
    ur, ui = _k.r_fft(np.ascontiguousarray(u, dtype=np.float64), zero, False)
    vr, vi = _k.r_fft(np.ascontiguousarray(v, dtype=np.float64), zero, False)
    re, _ = _k.r_fft(ur * vr - ui * vi, ur * vi + ui * vr, True)  # C99 complex product
    return re


def bkfe(gcounts, drv: int, h: float, a: float, b: float) -> float:
    """KernSmooth's ``bkfe(gcounts, drv, h, range.x = c(a, b), binned = TRUE)``: the binned
    estimate of psi_drv = int f^(drv) f."""
    gcounts = np.asarray(gcounts, dtype=np.float64)
    m = len(gcounts)
    n = _ldsum(gcounts)
    delta = (b - a) / (m - 1)
    big_l = min(math.floor((4 + drv) * h / delta), m)
    if big_l == 0:
        raise ValueError("bkfe: binning grid too coarse for the bandwidth")
    arg = np.arange(big_l + 1, dtype=np.float64) * delta / h
    kappa = r_dnorm(arg, 1.0) / h ** (drv + 1)
    h0, h1, hn = np.ones_like(arg), arg, np.ones_like(arg)
    for i in range(2, drv + 1):
        hn = arg * h1 - (i - 1) * h0
        h0, h1 = h1, hn
    kappa = hn * kappa
    p = 2 ** math.ceil(math.log(m + big_l + 1) / math.log(2))
    kap = np.concatenate([kappa, np.zeros(p - 2 * big_l - 1), kappa[1:][::-1]])
    gc = np.concatenate([gcounts, np.zeros(p - m)])
    conv = _fft_conv(kap, gc) / p
    return _ldsum(gcounts * conv[:m]) / (n * n)


def dpik(x) -> float:
    """``KernSmooth::dpik(x, scalest = "minim", level = 2, gridsize = 401)``, ``ks::hpi``'s
    bandwidth in one dimension. ValueError where R stops (a zero scale estimate)."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    a, b = float(x.min()), float(x.max())
    scalest = min((r_quantile7(x, 0.75) - r_quantile7(x, 0.25)) / 1.349, r_sd(x))
    if scalest == 0:
        raise ValueError("dpik: scale estimate is zero for input data")
    mu = r_mean(x)
    sx = (x - mu) / scalest
    sa, sb = (a - mu) / scalest, (b - mu) / scalest
    gcounts = linbin(sx, sa, sb, GRIDSIZE)
    del0 = 1 / (4 * math.pi) ** (1 / 10)
    alpha = (2 * math.sqrt(2) ** 9 / (7 * n)) ** (1 / 9)
    psi6 = bkfe(gcounts, 6, alpha, sa, sb)
    alpha = (-3 * math.sqrt(2 / math.pi) / (psi6 * n)) ** (1 / 7)
    psi4 = bkfe(gcounts, 4, alpha, sa, sb)
    return scalest * del0 * (1 / (psi4 * n)) ** (1 / 5)


def symconv1d(keval, gcounts) -> np.ndarray:
    """ks's ``symconv.1d``: the symmetric kernel ``keval`` convolved with the bin counts."""
    m, nk = len(gcounts), len(keval)
    half = (nk + 1) // 2
    p = 2 ** math.ceil(math.log2(m + nk))
    kz, cz = np.zeros(p), np.zeros(p)
    kz[:nk] = keval
    cz[half - 1:half - 1 + m] = gcounts
    return (_fft_conv(kz, cz) / p)[nk - 1:nk - 1 + m]


def kde_grid(x, h: float) -> tuple[np.ndarray, np.ndarray]:
    """``ks::kde(x, h = h)`` in one dimension (binned): (eval.points, estimate)."""
    x = np.asarray(x, dtype=np.float64)
    hb = math.sqrt(h * h)  # binning() takes h back from H = h^2
    a, b = float(x.min()) - SUPP * hb, float(x.max()) + SUPP * hb
    pts = r_seq(a, b, GRIDSIZE)
    counts = massdist1d(x, pts[0], pts[-1], GRIDSIZE)
    n = _ldsum(counts)
    m = GRIDSIZE
    lo, hi = float(pts.min()), float(pts.max())
    big_l = min(math.ceil(4 * h * (m - 1) / (hi - lo)), m - 1)
    delta = (hi - lo) / (m - 1)
    grid1 = np.arange(-(big_l - 1), big_l, dtype=np.float64)
    keval = r_dnorm(delta * grid1, h) / n
    return pts, symconv1d(keval, counts)


def dkde(q, pts, est) -> np.ndarray:
    """``ks::dkde`` (``predict.kde`` -> C ``interp1d``): linear interpolation of the grid
    estimate, its end values outside the grid."""
    q = np.atleast_1d(np.asarray(q, dtype=np.float64))
    m = len(pts)
    a, b = pts[0], pts[-1]
    delta = (b - a) / (m - 1)
    pos = (q - a) / delta
    ix = np.floor(pos)
    fx = pos - ix
    ix = ix.astype(np.int64)
    inner = (ix >= 0) & (ix <= m - 2)
    j = np.clip(ix, 0, m - 2)
    out = est[j] * (1 - fx) + est[j + 1] * fx
    return np.where(inner, out, np.where(ix < 0, est[0], est[-1]))


def _trapezoids(pts, est) -> np.ndarray:
    """integral.kde's ``simp.rule``: per cell, min(f_i, f_i+1) del + 1/2 |f_i+1 - f_i| del."""
    d = np.diff(pts)
    return np.minimum(est[:-1], est[1:]) * d + 1 / 2 * np.abs(np.diff(est)) * d


def pkde(q, pts, est) -> np.ndarray:
    """``ks::pkde`` (``integral.kde(density = TRUE)``), ks's arithmetic (see the module doc)."""
    q = np.atleast_1d(np.asarray(q, dtype=np.float64))
    m = len(pts)
    cum = np.cumsum(_trapezoids(pts, est).astype(np.longdouble)).astype(np.float64)  # sum(simp.rule[1:qi])
    qi = np.searchsorted(pts, q, side="right")  # findInterval
    out = np.zeros(len(q))
    for k, (v, i) in enumerate(zip(q.tolist(), qi.tolist())):
        if i == 0:
            continue
        if i >= m:
            out[k] = 1.0
            continue
        e0 = est[i - 1]
        fq = (est[i] - e0) / (pts[i] - pts[i - 1]) * (v - pts[i - 1]) + e0
        dq = v - pts[i - 1]
        out[k] = cum[i - 1] + (min(fq, e0) * dq + 1 / 2 * abs(fq - e0) * dq)
    out[out >= 1] = 1.0
    return out


def qkde_table(pts, est) -> np.ndarray:
    """``pkde(fhat$eval.points)``, the probabilities ``qkde`` interpolates between; ValueError
    where they are not sorted (R's ``findInterval`` stops)."""
    cum = np.cumsum(_trapezoids(pts, est).astype(np.longdouble)).astype(np.float64)
    c = np.concatenate([cum, [1.0]])  # pkde at grid point i < M: cells 1..i; at the last: 1
    c[c >= 1] = 1.0
    if np.any(np.diff(c) < 0):
        raise ValueError("qkde: 'vec' must be sorted non-decreasingly")
    return c


class KsMargin:
    """``effCont_nks(x)``: ks's grid estimate for bandwidth ``h`` (`dpik` when None), truncated
    to [0, 1] as simIReff's ``effContTrunc``; ``df``, ``loglik``, ``aic``, ``mean``, ``var``
    as simIReff computes them (ValueError where R stops)."""

    def __init__(self, x, h: float | None = None):
        x = np.asarray(x, dtype=np.float64)
        self.h = dpik(x) if h is None else float(h)
        if not (math.isfinite(self.h) and self.h > 0):
            raise ValueError("no plug-in bandwidth")
        self.pts, self.est = kde_grid(x, self.h)
        self.cum = qkde_table(self.pts, self.est)
        self.f0, self.f1 = (float(v) for v in pkde([0.0, 1.0], self.pts, self.est))
        fx = dkde(x, self.pts, self.est)
        self.df = r_mean(r_dnorm([0.0], self.h)[0] / fx)
        td = fx / (self.f1 - self.f0)
        td[(x < 0) | (x > 1)] = 0.0
        self.loglik = _ldsum([math.log(v) if v > 0 else -math.inf for v in td.tolist()])
        self.aic = 2 * self.df - 2 * self.loglik
        self.mean = _r_integrate01(lambda p: float(self.quantile(p)[0]), 1e-6, 500)
        self.var = _r_integrate01(lambda p: float(self.quantile(p)[0]) ** 2, 1e-6, 500) - self.mean ** 2

    def rdata(self) -> np.ndarray:
        """`transformed_moments`'s data for this margin (its truncated ``qkde``)."""
        m = len(self.pts)
        return np.concatenate([[8 + 2 * m, 0, 1, 1, 1, self.f0, self.f1, m], self.pts, self.cum])

    def density(self, q) -> np.ndarray:
        """effContTrunc's ``td``: dkde / (F1 - F0), 0 outside [0, 1]."""
        q = np.atleast_1d(np.asarray(q, dtype=np.float64))
        y = dkde(q, self.pts, self.est) / (self.f1 - self.f0)
        y[(q < 0) | (q > 1)] = 0.0
        return y

    def cdf(self, q) -> np.ndarray:
        """effContTrunc's ``tp``: cap((pkde - F0) / (F1 - F0), 0, 1)."""
        return np.clip((pkde(q, self.pts, self.est) - self.f0) / (self.f1 - self.f0), 0.0, 1.0)

    def quantile(self, p) -> np.ndarray:
        """effContTrunc's ``tq``: cap(qkde(p (F1 - F0) + F0), 0, 1)."""
        p = np.atleast_1d(np.asarray(p, dtype=np.float64))
        return _k.qkde_trunc(p, self.f0, self.f1, self.pts, self.cum)

    def sampled_cdf(self, q) -> np.ndarray:
        """The CDF whose inverse is `quantile` (what R draws from: ``qeff`` = ``tq``): qkde's
        piecewise-linear CDF through (grid point, pkde there), truncated to [0, 1]."""
        q = np.atleast_1d(np.asarray(q, dtype=np.float64))
        c = np.interp(q, self.pts, self.cum)
        return np.clip((c - self.f0) / (self.f1 - self.f0), 0.0, 1.0)


def rdata(family: str, params: dict) -> np.ndarray:
    """`transformed_moments`'s data for a truncated normal or beta margin."""
    if family == "norm":
        return np.array([7, 1, 1, 1, 1, params["mu"], params["sigma"]], dtype=np.float64)
    return np.array([7, 2, 1, 1, 1, params["shape1"], params["shape2"]], dtype=np.float64)


#: Slots of `transformed_moments`' memo of qfun (p, qfun(p), generation: 3 doubles each).
MEMO_SLOTS = 1 << 13
_work = threading.local()  # a thread's buffer: the margin's data, then the memo


def transformed_moments(data: np.ndarray, a: float, b: float) -> tuple[float, float]:
    """simIReff's ``effTransform_inner(eff, a, b)`` mean and variance: ``effContMean(qfun)``
    and ``effContVar(qfun, E)``, qfun(p) = qeff(qbeta(p, a, b)), by R's ``integrate`` (abs.tol
    1e-6, 500 subdivisions; ValueError where it stops, as R's does, which stops effTransform).
    ``data``: `KsMargin.rdata` or `rdata` (a, b written into it). qbeta is
    `fastrisk.simulate._r._kernels.rmath.qbeta` (scipy's ``betaincinv``, itself R's ``qbeta``
    to ~1e-15, to ~1e-14). The variance integral reuses the mean's values of qfun where it
    evaluates it at the same p (a memo in the callback's data, emptied for each call: the same
    numbers, about half the evaluations of qfun; see
    `fastrisk.simulate._r._kernels.rks.transformed_quantile`; `evaluations` counts them)."""
    data[2], data[3] = a, b
    n = int(data[0])
    buf = getattr(_work, "buf", None)
    if buf is None or len(buf) < n + 3 + 3 * MEMO_SLOTS:
        buf = _work.buf = np.zeros(n + 3 + 3 * MEMO_SLOTS)
        _work.gen, _work.n = 0.0, n
    if n != _work.n:  # the memo moved: no stale slot may carry the new generation
        buf[n:] = 0.0
        _work.n = n
    _work.gen += 1.0
    buf[:n] = data[:n]
    buf[n], buf[n + 1], buf[n + 2] = _work.gen, MEMO_SLOTS, 0.0
    f = LowLevelCallable(_k.transformed_quantile().ctypes, ctypes.c_void_p(buf.ctypes.data),
                         "double (int, double *, void *)")
    buf[4] = 1.0
    e = _r_integrate01(f, 1e-6, 500)
    buf[4] = 2.0
    m2 = _r_integrate01(f, 1e-6, 500)
    return e, m2 - e * e


def evaluations() -> int:
    """The values of qfun the thread's last `transformed_moments` computed (its cost; also where
    R's integrate stopped it)."""
    return int(_work.buf[_work.n + 2])
