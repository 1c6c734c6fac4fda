"""Marginal distributions of per-topic scores on [0, 1], after Urbano & Nagler (SIGIR 2018).

Every margin is stored the same way: a support ``values`` with probabilities ``probs``;
*continuous* margins have point masses at exactly 0 and 1 (``probs[0]``, ``probs[-1]``: the
observed proportions of scores 0 and 1, as a hurdle model; AP, nDCG and ERR are 0 on many
topics) and spread ``probs[1 + j]`` uniformly on the bin ``[j, j + 1) / m`` (m = 1,000 bins)
in between; *discrete* margins put ``probs[j]`` on the point ``values[j]``. Sampling is then one inverse-CDF lookup
(jitted, `fastrisk._kernels.simulate.quantiles`), and a margin can be transformed to any
expected value by exponential tilting, ``p'_j ∝ p_j exp(theta v_j)`` (the distribution
closest to the fitted one in Kullback-Leibler divergence with that mean), which keeps the
support and the shape as far as possible. This is how a true effect size delta is created.

Candidates, fitted by maximum likelihood with scipy and chosen by AIC:

- continuous measures (AP, nDCG, ERR), fitted to the scores strictly inside (0, 1): the
  normal truncated to [0, 1], the beta and a Gaussian kernel density reflected at 0 and 1
  (bandwidth by Silverman's rule; its log-likelihood is the leave-one-out one, with one
  parameter, so it does not win by overfitting);
- discrete measures: for P@k (values j / k) the beta-binomial with k trials; for any discrete
  measure (P@k, RR) the empirical distribution over the support, smoothed by spreading
  1/2 of an observation over it (P@k: all k + 1 values; RR: the values observed), with
  (support size - 1) parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from fastrisk.errors import InputError

#: Bins of a continuous margin on [0, 1].
BINS = 1000
_EPS = 1e-4


@dataclass(frozen=True)
class Margin:
    """A fitted margin: ``family``, support ``values`` and ``probs``, ``continuous`` (mass
    spread uniformly over bins of width 1 / len(values)), ``aic`` of the fit, ``mean``."""

    family: str
    values: np.ndarray
    probs: np.ndarray
    continuous: bool
    aic: float

    @property
    def mean(self) -> float:
        return float(self.probs @ self.values)

    @property
    def cdf(self) -> np.ndarray:
        out = np.cumsum(self.probs)
        out /= out[-1]
        return out

    def tilt(self, mean: float) -> Margin:
        """The margin exponentially tilted to expected value ``mean`` (strictly inside the support)."""
        v, p = self.values, self.probs
        lo, hi = float(v[p > 0].min()), float(v[p > 0].max())
        if not lo < mean < hi:
            raise InputError(f"cannot move the {self.family} margin to mean {mean:.4g}: outside its support "
                             f"({lo:.4g}, {hi:.4g})")
        logp = np.log(np.where(p > 0, p, 1e-300))

        def gap(theta):
            w = logp + theta * v
            w = np.exp(w - w.max())
            return (w @ v) / w.sum() - mean

        a, b = -1.0, 1.0
        while gap(a) > 0:
            a *= 2
        while gap(b) < 0:
            b *= 2
        theta = optimize.brentq(gap, a, b, xtol=1e-12)
        w = np.exp(logp + theta * v - (logp + theta * v).max())
        w[p == 0] = 0.0
        return Margin(f"{self.family}+tilt", v, w / w.sum(), self.continuous, self.aic)


def _grid():
    edges = np.linspace(0.0, 1.0, BINS + 1)
    return edges, 0.5 * (edges[:-1] + edges[1:])


def _from_cdf(family, cdf_edges, aic, atoms=(0.0, 0.0)):
    """A continuous margin from the CDF at the bin edges, with point masses ``atoms`` at 0 and 1."""
    _, mid = _grid()
    p = np.maximum(np.diff(cdf_edges), 0.0)
    p = p / p.sum() * (1.0 - atoms[0] - atoms[1])
    return Margin(family, np.concatenate([[0.0], mid, [1.0]]), np.concatenate([[atoms[0]], p, [atoms[1]]]), True,
                  float(aic))


def _fit_truncnorm(x):
    n = len(x)
    half_log_2pi = 0.5 * math.log(2 * math.pi)

    def nll(par):
        mu, ls = par
        sd = math.exp(ls)
        z = special.ndtr((1 - mu) / sd) - special.ndtr(-mu / sd)
        if not z > 0:
            return 1e300
        r = (x - mu) / sd
        return n * (ls + half_log_2pi + math.log(z)) + 0.5 * float(r @ r)

    sd = max(float(np.std(x)), 0.01)
    res = optimize.minimize(nll, [float(np.mean(x)), math.log(sd)], method="Nelder-Mead",
                            options={"xatol": 1e-7, "fatol": 1e-9, "maxiter": 1000})
    mu, sd = res.x[0], math.exp(res.x[1])
    edges, _ = _grid()
    return _from_cdf("truncnorm", special.ndtr((edges - mu) / sd), 2 * 2 + 2 * res.fun)


def _fit_beta(x):
    y = np.clip(x, _EPS, 1 - _EPS)
    a, b, _, _ = stats.beta.fit(y, floc=0, fscale=1)
    ll = stats.beta.logpdf(y, a, b).sum()
    edges, _ = _grid()
    return _from_cdf("beta", stats.beta.cdf(edges, a, b), 2 * 2 - 2 * ll)


def _fit_kde(x):
    n = len(x)
    sd = min(float(np.std(x, ddof=1)), float(np.subtract(*np.percentile(x, [75, 25]))) / 1.349) or float(np.std(x))
    h = max(0.9 * max(sd, 1e-3) * n ** -0.2, 1e-3)
    # leave-one-out log-likelihood
    dens = stats.norm.pdf(x[:, None], x, h) + stats.norm.pdf(x[:, None], -x, h) + stats.norm.pdf(x[:, None], 2 - x, h)
    loo = (dens.sum(axis=1) - stats.norm.pdf(0, 0, h)) / (n - 1)
    ll = np.log(np.maximum(loo, 1e-300)).sum()
    edges, _ = _grid()
    cdf = (stats.norm.cdf(edges[:, None], x, h) - stats.norm.cdf(0, x, h)
           + stats.norm.cdf(edges[:, None], -x, h) - stats.norm.cdf(0, -x, h)
           + stats.norm.cdf(edges[:, None], 2 - x, h) - stats.norm.cdf(0, 2 - x, h)).mean(axis=1)
    return _from_cdf("kde", cdf, 2 * 1 - 2 * ll)


def _fit_betabinom(x, k):
    j = np.rint(x * k).astype(int)

    def nll(par):
        return -stats.betabinom.logpmf(j, k, math.exp(par[0]), math.exp(par[1])).sum()

    res = optimize.minimize(nll, [0.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10})
    a, b = math.exp(res.x[0]), math.exp(res.x[1])
    v = np.arange(k + 1) / k
    return Margin("betabinom", v, stats.betabinom.pmf(np.arange(k + 1), k, a, b), False, float(2 * 2 + 2 * res.fun))


def _fit_empirical(x, support):
    idx = np.abs(support[None, :] - x[:, None]).argmin(axis=1)
    counts = np.bincount(idx, minlength=len(support)) + 0.5 / len(support)
    p = counts / counts.sum()
    ll = (np.log(p[idx])).sum()
    return Margin("empirical", support.astype(float), p, False, float(2 * (len(support) - 1) - 2 * ll))


def _discrete_kind(x):
    """k for P@k-like scores (all j / k), 0 for other discrete scores, None for continuous."""
    u = np.unique(np.round(x, 10))
    for k in (5, 10, 15, 20, 30, 100):
        if np.allclose(u * k, np.rint(u * k), atol=1e-8):
            return k
    pos = u[u > 0]
    if pos.size and len(u) <= len(x) / 2 and (1 / pos).max() < 1e5 and \
            np.allclose(pos, 1 / np.rint(1 / pos), rtol=0, atol=6e-5):  # 1/k, rounded to 4 decimals
        return 0  # reciprocal ranks
    return None


def fit_hurdle_margin(scores, *, kind: str = "auto") -> Margin:
    """Fit every candidate margin to ``scores`` and return the one with the lowest AIC.

    Parameters
    ----------
    scores : array_like
        One system's scores over topics, in [0, 1].
    kind : {"auto", "continuous", "discrete"}
        ``"auto"``: continuous unless the scores are all j / k or reciprocal ranks.

    Returns
    -------
    Margin
    """
    x = np.asarray(scores, dtype=np.float64).reshape(-1)
    if x.size < 3:
        raise InputError(f"a margin needs at least 3 scores, got {x.size}")
    if not np.isfinite(x).all() or (x < 0).any() or (x > 1).any():
        raise InputError("scores must be finite and in [0, 1] to fit a margin")
    if kind not in ("auto", "continuous", "discrete"):
        raise InputError(f"`kind` must be 'auto', 'continuous' or 'discrete', got {kind!r}")
    k = _discrete_kind(x) if kind != "continuous" else None
    if kind == "discrete" and k is None:
        k = 0
    if k is None:
        inner = x[(x > 0) & (x < 1)]
        atoms = (float(np.mean(x == 0)), float(np.mean(x == 1)))
        if inner.size < 3 or np.ptp(inner) == 0:  # (almost) all mass on 0 and 1: a discrete margin
            return _fit_empirical(x, np.unique(x))
        fits = [_fit_truncnorm(inner), _fit_beta(inner), _fit_kde(inner)]
        return min((Margin(f.family, f.values, np.concatenate([[atoms[0]], f.probs[1:-1] * (1 - sum(atoms)),
                                                               [atoms[1]]]), True, f.aic) for f in fits),
                   key=lambda m: m.aic)
    elif k > 0:
        fits = [_fit_betabinom(x, k), _fit_empirical(x, np.arange(k + 1) / k)]
    else:
        fits = [_fit_empirical(x, np.unique(x))]
    return min(fits, key=lambda m: m.aic)
