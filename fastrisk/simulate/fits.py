"""The fitted models of Urbano, Lima & Hanjalic (SIGIR 2019): per collection, a margin per run
(simIReff) and a bivariate copula per pair of runs (VineCopula's ``BiCopSelect``), built
once, in parallel, and cached in a versioned JSON file keyed by the matrix's hash.

Where each choice comes from (repositories ``julian-urbano/sigir2019-statistical``, "the
study", and ``julian-urbano/simIReff``, "simIReff"):

- runs kept (`kept_runs`): the study's ``R/common.R`` ``removeDuplicates`` (a run whose
  scores are all within 1e-5 of an earlier run's is dropped) then ``removeBottom(p = .1)``
  (runs whose mean is below the 10 % quantile of the run means, R's type-7 quantile, are
  dropped; means as R's ``colMeans`` sums them, `r_col_means`), as called by ``R/01-margins.R`` and ``R/03-bicops.R``;
- margins (`fit_margin`): ``R/01-margins.R`` calls ``effContFitAndSelect(x, method =
  "AIC")`` for AP, nDCG@20 and ERR@20 and ``effDiscFitAndSelect(x, support(measure))`` for
  P@10 and RR. simIReff ``R/effFit.R``: the continuous candidates are the normal truncated
  to [0, 1] (``effCont_norm``: MLE with sigma >= 0.05 by R's L-BFGS-B on R's objective,
  skipped where R's fit or its mean / variance integrals fail, see `_norm`), the beta (``effCont_beta``: scores
  capped to [1e-6, 1 - 1e-6], MLE with shapes >= 1), a Gaussian kernel density truncated to
  [0, 1] (``effCont_nks``: ``ks::kde`` with its plug-in bandwidth ``ks::hpi`` = ``KernSmooth::dpik``, scale
  min(sd, IQR / 1.349), both binned on ks's grids and convolved by R's own FFT, then ks's
  ``dkde`` / ``pkde`` / ``qkde`` truncated by ``effContTrunc``, as R computes them
  (`fastrisk.simulate.rks`); effective df mean(phi_h(0) / fhat(x_i))) and Chen's beta-kernel density (``effCont_bks``: ``bde``
  ``betakernel`` with its default bandwidth b = n^(-2/5), normalised to integrate to 1,
  df mean(K_b(x_i; x_i) / fhat(x_i))); the discrete ones are the beta-binomial over the
  support index (``effDisc_bbinom``: MLE with shapes >= 1, df 2) and the discrete kernel
  smoother (``effDisc_dks``: Wang & van Ryzin's ordered kernel, least-squares
  cross-validated bandwidth as ``np::npudensbw(bwmethod = "cv.ls")`` computes it, the
  integral of fhat^2 taken over the categories observed in the run, see `lscv_bandwidth`;
  multiplied by 1, 2, 5 and 10, a multiplied bandwidth > 1 fails; the estimate normalised
  over the support; df mean((1 - bw) / f(x_i))). A candidate that
  fails is skipped (``try`` in ``effFit``). Selection (``effSelect``): the lowest
  AIC = 2 df - 2 loglik. Supports (``support()``): P@k j / k; RR 0 and 1 / k, k = 1..1000;
- effect sizes (`SimMargin.transformed`): simIReff ``R/effTransform.R``: the new CDF
  is the Beta(a, b) CDF of the old one (cummax), a, b >= 1, found by R's
  ``optim(c(1, 1), method = "L-BFGS-B", lower = c(1, 1))`` on the squared distance to the
  target mean (``factr = abs.tol^2 / eps``, abs.tol = 1e-5; the transformed mean of a
  continuous margin is ``effTransform_inner``'s, R's ``integrate`` of qeff(qbeta(p, a, b)),
  `fastrisk.simulate.rks.transformed_moments`); R's optimizer failing (code
  52: the iterate reaches the target before the relative-reduction test fires and the next
  line search finds no decrease in the rounding noise, ~9 % of the study's P@10 pairs)
  stops effTransform, and the study skips the pair. We run R's optimizer as R does
  (`fastrisk.simulate.roptim`: L-BFGS-B 2.3, R's numerical gradient). Deviation: a converged
  search whose mean misses the target by more than 0.01 (a target out of reach, where
  effTransform would return the margin as the search stalled) is a failure too;
- copulas (`fit_copula`): ``R/03-bicops.R``: ``pobs(x, ties.method = "random")`` of
  runs (i, j), i < j (the study's draw of those ties, on forked workers, cannot be repeated;
  ours is seeded from the scores and ``ties_seed``, `ties_base_seed`), then ``BiCopSelect(u1, u2, selectioncrit = "AIC")`` with its defaults
  (VineCopula, ``R/BiCopSelect.R``, ``R/BiCopEst.R``, ``R/BiCop.R``): the independence
  copula and every family of ``posfams`` (empirical Kendall's tau > 0) or ``negfams`` (< 0)
  with their rotations -- Gaussian, t, Clayton, Gumbel, Frank, Joe, BB1, BB6, BB7, BB8 and
  the two-parameter Tawn types 1 and 2 (`VC_FAMILIES`) -- each by maximum likelihood in the
  bounds of ``MLE_intern`` / ``MLE_intern_Tawn`` (`VC_BOUNDS`, `_fit_family`), the lowest
  AIC = -2 loglik + 2 k wins (`select_copula`). Before fitting, ``BiCopSelect``'s default
  ``presel = TRUE`` swaps ``todo_fams`` for ``todo_fams_presel`` (`preselect`): the
  families whose tail asymmetry contradicts the data's are not fitted. Densities and
  sampling are ``pyvinecopulib``'s (Tawn type 1 is its Tawn with psi2 = 1, type 2 with
  psi1 = 1). Deviation: parameters beyond what ``pyvinecopulib`` represents (Clayton > 28,
  Gumbel > 50, Frank |theta| > 35, Joe > 30: Frank's binds from |tau| ~ 0.89, the others above
  0.93; 8 of the 52,538 bundled pairs, always toward weaker dependence) are capped there.

Continuous margins are tabulated: the CDF at ``GRID + 1`` equally spaced points of [0, 1],
linear in between (sampling is exact for that representation); a margin's ``mean`` and
``variance`` are simIReff's (``$mean``, ``$var``: for the truncated normal and the Gaussian
kernel R's integrals, `SimMargin.moments`), which choose the H1 pairs and targets as in the
study.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import hashlib
import json
import math
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import optimize, special, stats

from fastrisk.errors import InputError
from fastrisk.simulate import rks, rmath
from fastrisk.simulate.rmath import r_quantile7
from fastrisk.simulate.roptim import EPS, optim_lbfgsb

#: Version of the fitted-model files (bump when a fit changes).
FIT_VERSION = 7
#: Intervals of the tabulated CDF of a continuous margin.
GRID = 4096
#: Tolerance of effTransform (simIReff's ``abs.tol``).
TRANSFORM_TOL = 1e-5
#: A transformed margin whose mean misses its target by more than this did not reach it.
UNREACHED = 0.01
_CAP = 1e-6  # simIReff ``cap``

#: Measures of the study (names as in its ``R/common.R``) -> (kind, support or None).
CONTINUOUS = ("ap", "ndcg20", "err20")
DISCRETE = ("p10", "rr")
_ALIASES = {"ap": "ap", "map": "ap", "ndcg20": "ndcg20", "ndcg@20": "ndcg20", "err20": "err20", "err@20": "err20",
            "p10": "p10", "p@10": "p10", "rr": "rr", "mrr": "rr", "recip_rank": "rr"}


def canonical_measure(name) -> str:
    """'AP', 'nDCG@20', 'ERR@20', 'P@10', 'RR' (or 'ap', 'ndcg20', ...) -> the study's key."""
    key = _ALIASES.get(str(name).strip().lower())
    if key is None:
        raise InputError(f"unknown simulation measure {name!r}: one of AP, nDCG@20, ERR@20, P@10, RR")
    return key


def support(measure: str) -> np.ndarray | None:
    """Discrete support of a measure (simIReff ``support``), None for continuous measures."""
    m = canonical_measure(measure)
    if m == "rr":
        return np.concatenate([[0.0], 1.0 / np.arange(1000, 0, -1)])
    if m == "p10":
        return np.arange(11) / 10.0
    return None


# ================================================================== runs kept
def kept_runs(values: np.ndarray, *, tol: float = 1e-5, bottom: float = 0.1) -> tuple[np.ndarray, dict]:
    """Rows of ``values`` (systems x topics) kept by the study: duplicates, then the bottom 10 %.

    Returns (kept row indices, {"duplicates": [...], "bottom": [...]})."""
    V = np.asarray(values, dtype=np.float64)
    S = V.shape[0]
    dup = set()
    for i in range(S - 1):  # removeDuplicates: j is dropped if it duplicates any earlier i
        close = np.all(np.abs(V[i + 1:] - V[i]) <= tol, axis=1)
        dup.update((i + 1 + np.flatnonzero(close)).tolist())
    rest = np.array([s for s in range(S) if s not in dup], dtype=np.int64)
    mu = r_col_means(V[rest])
    q = r_quantile7(mu, bottom)
    keep = mu >= q
    return rest[keep], {"duplicates": sorted(dup), "bottom": rest[~keep].tolist()}


def r_col_means(V) -> np.ndarray:
    """R's ``colMeans`` of each row of ``V``: a sequential sum in extended precision divided
    by n, rounded to double (R's ``do_colsum``). On lattice scores (P@10) a run's mean can sit
    on the 10 % quantile exactly, and a double sum one ulp below it drops a run R keeps
    (adhoc8_p10 run25: 0.18999999999999997 against R's 0.19)."""
    X = np.asarray(V, dtype=np.longdouble)
    return (np.cumsum(X, axis=-1)[..., -1] / X.shape[-1]).astype(np.float64)


# ================================================================== margins
@dataclass(frozen=True)
class SimMargin:
    """A simIReff margin: ``family``, its ``params``, ``df`` and ``aic``; the CDF tabulated at
    ``points`` (continuous: GRID + 1 points of [0, 1], linear in between; discrete: the
    support); ``transform`` (a, b) when it is a transformed margin; ``moments``: (mean,
    variance) as simIReff computes them where those are not the tabulated CDF's own (the
    truncated normal's and the Gaussian kernel's: R's integrals or truncnorm's formulas), else
    None. What is sampled is always the tabulated CDF."""

    family: str
    params: dict
    df: float
    aic: float
    continuous: bool
    points: np.ndarray = field(repr=False)
    cdf: np.ndarray = field(repr=False)
    transform: tuple | None = None
    moments: tuple | None = None
    rdata: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def mean(self) -> float:
        """simIReff's ``$mean`` (`moments`), else the tabulated CDF's."""
        if self.moments is not None:
            return float(self.moments[0])
        return _mean(self.points, self.cdf, self.continuous)

    @property
    def variance(self) -> float:
        """simIReff's ``$var`` (`moments`), else the tabulated CDF's (exact for it: uniform
        within each grid cell)."""
        if self.moments is not None:
            return float(self.moments[1])
        if self.continuous:
            a, b = self.points[:-1], self.points[1:]
            m2 = float(np.sum(np.diff(self.cdf) * (a * a + a * b + b * b) / 3.0))
        else:
            m2 = float(np.dot(self.points ** 2, np.diff(np.concatenate([[0.0], self.cdf]))))
        return m2 - self.mean ** 2

    def kernel_arrays(self):
        """(cdf, values, continuous) for `fastrisk._kernels.simulate.quantiles`."""
        if self.continuous:
            return (np.concatenate([[0.0], self.cdf[1:], [1.0]]),
                    np.concatenate([[0.0], 0.5 * (self.points[:-1] + self.points[1:]), [1.0]]), True)
        return np.ascontiguousarray(self.cdf), np.ascontiguousarray(self.points), False

    def quantile(self, u) -> np.ndarray:
        from fastrisk._kernels import simulate as _k

        u = np.ascontiguousarray(np.asarray(u, dtype=np.float64).reshape(-1))
        out = np.empty_like(u)
        c, v, cont = self.kernel_arrays()
        _k.quantiles(c, v, cont, u, out)
        return out

    def with_beta(self, a: float, b: float) -> SimMargin:
        new = special.betainc(a, b, np.clip(self.cdf, 0.0, 1.0))
        new = np.maximum.accumulate(new)  # effTransform_inner: cummax
        return SimMargin(f"t({self.family})", self.params, self.df, self.aic, self.continuous, self.points, new,
                         (float(a), float(b)))

    def transformed(self, target: float) -> SimMargin | None:
        """simIReff's ``effTransform`` to expected value ``target``; None where R's
        optimizer does not converge there or stops with an error (``effTransform`` stops; the
        study's ``try`` skips the pair). Deviation: effTransform does not check a converged
        search against the target, so for a target out of reach it returns the margin where the
        search stalled; we return None when the mean misses the target by more than
        `UNREACHED` (0.01: the study's deltas never come near it -- on its 2,224 converged P@10
        transformations at delta 0.05 R's largest miss is 1.4e-4 -- while a stalled search
        misses by 0.1 or more).

        R's L-BFGS-B (`fastrisk.simulate.roptim.optim_lbfgsb`) from (a, b) = (1, 1), a, b >= 1,
        on the squared gap of the transformed mean to the target, ``factr = abs.tol^2 / eps``:
        for the truncated normal, beta and Gaussian-kernel margins effTransform_inner's mean,
        R's ``integrate`` of qeff(qbeta(p, a, b)) (its variance integral too: where either
        stops, R's optim stops; `fastrisk.simulate.rks.transformed_moments`); for the others
        `with_beta`'s mean (a discrete margin's summed in R's order, as effDisc_new)."""
        target = float(target)
        cdf = np.clip(self.cdf, 0.0, 1.0)
        rdata = None if self.rdata is None else self.rdata.copy()

        def gap2(p):  # with_beta(a, b).mean - target, squared as R's (x - m)^2: x * x
            if rdata is not None:  # effTransform_inner's mean (and variance: both can stop R)
                d = rks.transformed_moments(rdata, p[0], p[1])[0] - target
                return d * d
            new = np.maximum.accumulate(special.betainc(p[0], p[1], cdf))
            if self.continuous:
                d = _mean(self.points, new, True) - target
            else:  # effDisc_new's sum(support * d), summed as R's sum() does (long double, in order)
                d = float(np.cumsum(self.points * np.diff(new, prepend=0.0), dtype=np.longdouble)[-1]) - target
            return d * d

        try:
            res = optim_lbfgsb(gap2, [1.0, 1.0], lower=[1.0, 1.0], factr=TRANSFORM_TOL * TRANSFORM_TOL / EPS)
        except ValueError:  # R's optim stops with an error (a non-finite value): so does effTransform
            return None
        if res.convergence != 0:
            return None
        out = self.with_beta(*res.par)
        return out if abs(out.mean - target) <= UNREACHED else None


def _mean(points, cdf, continuous) -> float:
    if continuous:  # int_0^1 (1 - F), F linear between grid points
        return float(np.sum((1.0 - 0.5 * (cdf[:-1] + cdf[1:])) * np.diff(points)))
    return float(np.dot(points, np.diff(np.concatenate([[0.0], cdf]))))


def _edges():
    return np.linspace(0.0, 1.0, GRID + 1)


def _cont(family, params, df, ll, cdf_edges) -> SimMargin:
    cdf = np.clip(np.asarray(cdf_edges, dtype=np.float64), 0.0, 1.0)
    cdf = np.maximum.accumulate((cdf - cdf[0]) / (cdf[-1] - cdf[0]))
    return SimMargin(family, params, float(df), float(2 * df - 2 * ll), True, _edges(), cdf)


def _with_r(m: SimMargin, moments=None) -> SimMargin:
    """``m`` with simIReff's own moments (None: the tabulated CDF's) and the data of its quantile
    function for effTransform's integrals (`fastrisk.simulate.rks.transformed_moments`)."""
    return dataclasses.replace(m, moments=moments, rdata=rks.rdata(m.family, m.params))


# ---------------------------------------------------------------- continuous candidates
def _norm(x, params=None):
    """effCont_norm: normal truncated to [0, 1], ``MASS::fitdistr`` with sigma >= 0.05.

    Computed as R computes it (`fastrisk.simulate.rmath`): the objective
    ``-sum(log(truncnorm::dtruncnorm(x, 0, 1, mu, sigma)))`` with R's ``pnorm``, truncnorm's
    density (1 / (b - a) = 1 wherever the normalising constant underflows) and R's long-double
    ``sum``, from R's ``mean`` and ``sd``, by R's own L-BFGS-B (maxit 100, central-difference
    gradient); the candidate is skipped where fitdistr stops with an error ("optimization
    failed" unless optim converged, optim's own errors, or ``solve`` of its Hessian) or where
    effCont_norm's mean / variance integrals do; its mean and variance are effCont_norm's
    (`rmath.norm_moments`: those integrals, or truncnorm's formulas). On AP,
    nDCG@20 and ERR@20 the likelihood often has no finite maximum (it keeps rising as
    mu -> -inf): the fit is chaotic there and its outcome turns on the objective's last bits
    (tests/data/rnorm_fits.csv, tests/data/simireff_margins_*)."""
    if params is None:
        mu, sd, ll = rmath.fitdistr_norm(x)
        params = {"mu": mu, "sigma": sd}
    mu, sd = params["mu"], params["sigma"]
    moments = rmath.norm_moments(mu, sd)  # where effCont_norm's integrals fail, R's try skips it
    ll = -rmath.truncnorm_nll(x, mu, sd)
    return _with_r(_cont("norm", params, 2, ll, special.ndtr((_edges() - mu) / sd)), moments)


def _beta(x, params=None):
    """effCont_beta: beta on scores capped to [1e-6, 1 - 1e-6], MLE with shapes >= 1."""
    xc = np.clip(x, _CAP, 1 - _CAP)
    if params is None:
        m, v = float(np.mean(xc)), float(np.var(xc, ddof=1))
        s0 = m * (m * (1 - m) / v - 1) if v > 0 else 1.0  # the study's start (both shapes)
        s0 = min(max(s0, 1.0), 1e3) if np.isfinite(s0) else 1.0
        lx, l1x = np.log(xc).sum(), np.log1p(-xc).sum()
        n = len(xc)

        def nll(p):
            a, b = p
            return -((a - 1) * lx + (b - 1) * l1x - n * special.betaln(a, b))

        res = optimize.minimize(nll, [s0, s0], method="L-BFGS-B", bounds=[(1.0, None), (1.0, None)])
        params = {"shape1": float(res.x[0]), "shape2": float(res.x[1])}
    a, b = params["shape1"], params["shape2"]
    ll = float(stats.beta.logpdf(xc, a, b).sum())
    return _with_r(_cont("beta", params, 2, ll, special.betainc(a, b, _edges())))


def hpi(x) -> float:
    """``ks::hpi(x)``: ``KernSmooth::dpik(x, level = 2, gridsize = 401)`` as R computes it
    (binned; `fastrisk.simulate.rks.dpik`)."""
    return rks.dpik(x)


def _nks(x, params=None):
    """effCont_nks: ``ks::kde`` (bandwidth ``ks::hpi``) truncated to [0, 1], as R computes it
    (`fastrisk.simulate.rks`: ks's binned grid estimate, ``dkde`` / ``pkde`` / ``qkde``, R's
    ``integrate``; ValueError where R stops). The tabulated CDF is the one R draws from (the
    inverse of simIReff's truncated ``qkde``: linear between ks's grid points); its atoms at 0
    and 1 (the ``cap`` of the quantile, ~1e-4 and ~1e-6) are spread over the first and last
    grid cells (F(0) = 0 and F(1) = 1, as every tabulated margin), which moves the mean by
    < 1e-7. Its ``mean`` and ``variance`` (`SimMargin.moments`) are simIReff's: R's integrals
    of the truncated qkde (``effContMean`` / ``effContVar``), which are up to 1.3e-4 / 5e-4
    off those of what R samples (``integrate``'s error on a piecewise-linear integrand)."""
    k = rks.KsMargin(x, None if params is None else params["h"])
    cdf = np.maximum.accumulate(k.sampled_cdf(_edges()))
    cdf[0], cdf[-1] = 0.0, 1.0
    return SimMargin("nks", {"h": k.h}, k.df, k.aic, True, _edges(), cdf, None, (k.mean, k.var), k.rdata())


def _bks(x, params=None):
    """effCont_bks: Chen's (1999) beta-kernel density (``bde``, bandwidth n^(-2/5)), normalised."""
    xc = np.clip(x, _CAP, 1 - _CAP)
    b = len(xc) ** -0.4 if params is None else params["b"]

    lx, l1x = np.log(xc), np.log1p(-xc)

    def dens(t):  # mean_i Beta(x_i; t / b + 1, (1 - t) / b + 1)
        t = np.asarray(t, dtype=np.float64)
        a1, b1 = t / b, (1 - t) / b
        return np.exp(a1[:, None] * lx + b1[:, None] * l1x - special.betaln(a1 + 1, b1 + 1)[:, None]).mean(axis=1)

    e = _edges()
    f = dens(e)
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (f[:-1] + f[1:]) * np.diff(e))])
    total = cum[-1]
    fx = dens(xc)
    k0 = stats.beta.pdf(xc, xc / b + 1, (1 - xc) / b + 1)
    return _cont("bks", {"b": float(b)}, float(np.mean(k0 / fx)), float(np.log(fx / total).sum()), cum)


# ---------------------------------------------------------------- discrete candidates
def _match(x, sup):
    """simIReff ``matchTol``: index of the support point within 1e-4 of each score."""
    i = np.abs(sup[None, :] - x[:, None]).argmin(axis=1)
    if (np.abs(sup[i] - x) > 1e-4).any():
        bad = x[np.abs(sup[i] - x) > 1e-4][0]
        raise InputError(f"score {bad!r} is not on the measure's support")
    return i


def _disc(family, params, df, ll, sup, p) -> SimMargin:
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    return SimMargin(family, params, float(df), float(2 * df - 2 * ll), False, sup, cdf)


def _bbinom(x, sup, params=None):
    """effDisc_bbinom: beta-binomial over the support index, MLE with shapes >= 1.

    simIReff starts ``MASS::fitdistr`` (R's L-BFGS-B, shapes >= 1) at the method-of-moments
    shapes. The likelihood is flat along the shapes (RR's reach the thousands), where L-BFGS-B
    on the raw shapes stops early; we maximise over log-shapes >= 0 to tight tolerances from
    the moment start (projected into the bounds) and from (1, 1), and keep the better: within
    1e-5 of R's log-likelihood on every P@10 and RR run of the bundled collections
    (``tests/data/simireff_discrete_bbinom.csv``; the raw-shape search was up to 5.6 below)."""
    k = len(sup) - 1
    j = _match(x, sup)
    if params is None:
        m, v = float(j.mean()), float(j.var(ddof=1))
        den = k * (v / m - m - 1) + m if m > 0 else float("nan")
        s1, s2 = (k * m - v) / den, (k - m) * (k - v / m) / den
        if not (np.isfinite(s1) and np.isfinite(s2)):
            raise ValueError("no beta-binomial start")

        u, cnt = np.unique(j, return_counts=True)

        def nll(t):  # - log-likelihood up to the binomial coefficients: beta functions of the counts
            a, b = math.exp(t[0]), math.exp(t[1])
            return -float(cnt @ special.betaln(u + a, k - u + b) - len(j) * special.betaln(a, b))

        best = None
        for start in ((s1, s2), (1.0, 1.0)):
            t0 = [math.log(min(max(s, 1.0), 1e8)) for s in start]
            res = optimize.minimize(nll, t0, method="L-BFGS-B", bounds=[(0.0, None), (0.0, None)],
                                    options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 2000})
            if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
                best = res
        if best is None:
            raise ValueError("beta-binomial fit failed")
        params = {"alpha": math.exp(best.x[0]), "beta": math.exp(best.x[1])}
    a, b = params["alpha"], params["beta"]
    p = stats.betabinom.pmf(np.arange(k + 1), k, a, b)
    return _disc("bbinom", params, 2, float(np.log(p[j]).sum()), sup, p)


def _wvr_density(sup_n, j, lam):
    """Wang & van Ryzin ordered-kernel estimate at every support index from observations
    ``j`` (indices): l(x, X) = 1 - lam if x = X, else (1 - lam) / 2 lam^|x - X|."""
    u, c = np.unique(j, return_counts=True)
    dist = np.abs(np.arange(sup_n)[:, None] - u[None, :])
    with np.errstate(under="ignore"):
        K = np.where(dist == 0, 1 - lam, 0.5 * (1 - lam) * lam ** dist)
    return K @ c / len(j)


@functools.lru_cache(maxsize=4096)
def _lscv(j: tuple, sup_n: int) -> float:
    j = np.asarray(j)
    n = len(j)
    seen = np.unique(j)

    def cv(lam):
        f = _wvr_density(sup_n, j, lam)
        loo = (f[j] * n - (1 - lam)) / (n - 1)
        return float(f[seen] @ f[seen] - 2 * loo.mean())

    grid = np.linspace(0.0, 1.0, 101)
    vals = [cv(g) for g in grid]
    g = int(np.argmin(vals))
    lo, hi = grid[max(g - 1, 0)], grid[min(g + 1, 100)]
    res = optimize.minimize_scalar(cv, bounds=(lo, hi), method="bounded", options={"xatol": 1e-8})
    return float(res.x) if res.fun <= vals[g] else float(grid[g])


def lscv_bandwidth(j, sup_n) -> float:
    """Least-squares cross-validated bandwidth of the ordered kernel (``np::npudensbw``,
    ``bwmethod = "cv.ls"``, ``okertype = "wangvanryzin"``): minimises
    sum_z fhat(z)^2 - 2 / n sum_i fhat_{-i}(x_i) over lambda in [0, 1] (a grid of 0.01,
    then a bounded search around its best point), with z over the values *observed* in
    ``j``, not the whole support: np's integral of fhat^2 is the ordered convolution kernel
    (``kernel_ordered_convolution`` in np's ``src/kernel.c``) summed over the categories
    that ``determine_categorical_vals`` (``src/jksum.c``) collects from the data, whatever
    the factor's levels. np searches by Powell's method from lambda = 0.5 (one start,
    ``nmulti`` = min(5, dimensions)); ours is a global search of the same objective."""
    return _lscv(tuple(int(v) for v in j), int(sup_n))


def _dks(x, sup, mult, params=None):
    """effDisc_dks(mult): discrete kernel smoother, LSCV bandwidth times ``mult``."""
    j = _match(x, sup)
    bw = (lscv_bandwidth(j, len(sup)) * mult) if params is None else params["bw"]
    if bw > 1:
        raise ValueError("(multiplied) bandwidth too large")
    d = _wvr_density(len(sup), j, bw)
    d = d / d.sum()
    return _disc(f"dks({mult})", {"bw": float(bw), "mult": mult}, float(np.mean((1 - bw) / d[j])),
                 float(np.log(d[j]).sum()), sup, d)


def _candidates(measure):
    sup = support(measure)
    if sup is None:
        return {"norm": _norm, "beta": _beta, "nks": _nks, "bks": _bks}
    out = {"bbinom": lambda x, params=None: _bbinom(x, sup, params)}
    for m in (1, 2, 5, 10):
        out[f"dks({m})"] = (lambda mm: lambda x, params=None: _dks(x, sup, mm, params))(m)
    return out


def fit_margin(scores, measure: str) -> SimMargin:
    """simIReff's effContFitAndSelect / effDiscFitAndSelect (AIC) for one run's scores."""
    x = np.asarray(scores, dtype=np.float64).reshape(-1)
    if x.size < 3 or not np.isfinite(x).all() or (x < 0).any() or (x > 1).any():
        raise InputError("a margin needs at least 3 finite scores in [0, 1]")
    best = None
    for fit in _candidates(measure).values():
        try:
            with np.errstate(all="ignore"):
                m = fit(x)
        except (ValueError, FloatingPointError, ZeroDivisionError, OverflowError):
            continue  # effFit: try(...), a failed candidate is skipped
        if np.isfinite(m.aic) and (best is None or m.aic < best.aic):
            best = m
    if best is None:
        raise InputError("unable to fit a margin (every candidate failed)")
    return best


def margin_from(family: str, params: dict, scores, measure: str) -> SimMargin:
    """Rebuild a fitted margin from its family and parameters (and the run's scores)."""
    x = np.asarray(scores, dtype=np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        return _candidates(measure)[family](x, params=params)


# ================================================================== copulas
def pobs(x, y, seed: int) -> np.ndarray:
    """(n, 2) pseudo-observations rank / (n + 1), ties broken at random (``pobs(ties.method = "random")``)."""
    from fastrisk.simulate.collections import pseudo_observations

    return pseudo_observations(x, y, seed)


#: VineCopula's family codes (``allfams``, ``R/BiCop.R``) -> (pyvinecopulib family, rotation,
#: Tawn type or 0). Type 1 Tawn (104, ...) is pyvinecopulib's Tawn with psi2 = 1, type 2
#: (204, ...) with psi1 = 1 (``src/likelihood.c`` calls ``TawnPDF(u, v, theta, par2, 1)``
#: for 104 and ``(theta, 1, par2)`` for 204; the densities agree to 1e-5, see the tests).
#: Rotations: 1x = 180, 2x = 90, 3x = 270 degrees.
VC_FAMILIES = {
    0: ("indep", 0, 0), 1: ("gaussian", 0, 0), 2: ("student", 0, 0), 5: ("frank", 0, 0),
    **{b + 10 * k: (name, r, 0) for b, name in ((3, "clayton"), (4, "gumbel"), (6, "joe"), (7, "bb1"),
                                              (8, "bb6"), (9, "bb7"), (10, "bb8"))
       for k, r in enumerate((0, 180, 90, 270))},
    **{100 * t + 4 + 10 * k: ("tawn", r, t) for t in (1, 2) for k, r in enumerate((0, 180, 90, 270))},
}
#: ``posfams`` and ``negfams`` (``R/BiCop.R``): the families BiCopSelect fits when the
#: empirical Kendall's tau is positive / negative (``todo_fams``), with the independence copula.
VC_POSITIVE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 16, 17, 18, 19, 20, 104, 114, 204, 214)
VC_NEGATIVE = (0, 1, 2, 5, 23, 24, 26, 27, 28, 29, 30, 33, 34, 36, 37, 38, 39, 40, 124, 134, 224, 234)
#: VineCopula's families with more dependence near one corner (u, v) of the unit square
#: (``R/BiCop.R``: ``fams11``, ``fams00``, ``fams10``, ``fams01``), in its order: the
#: candidates `preselect` keeps when the data's dependence leans to that corner.
VC_CORNER = {
    (1, 1): (13, 4, 6, 7, 17, 8, 9, 19, 10, 104, 204),
    (0, 0): (3, 14, 16, 7, 17, 18, 9, 19, 20, 114, 214),
    (1, 0): (23, 34, 36, 27, 37, 38, 29, 39, 40, 134, 234),
    (0, 1): (33, 24, 26, 27, 37, 28, 29, 39, 30, 124, 224),
}
#: Bounds of |parameter| in VineCopula's ``MLE_intern`` (``R/BiCopEst.R``): one-parameter
#: families by ``optimize`` on the interval; (theta, delta) of the BB families (``max.BB``
#: defaults BB1 (5, 6), BB6 (6, 6), BB7 (5, 6), BB8 (6, 1) and the lower bounds there), the t
#: copula's (rho, nu) with ``max.df = 30``, by L-BFGS-B.
VC_BOUNDS = {
    "gaussian": ((-0.9999, 0.9999),), "clayton": ((1e-4, 100.0),), "gumbel": ((1.0001, 100.0),),
    "frank": ((-100.0, 100.0),), "joe": ((1.0001, 50.0),),
    "student": ((-0.9999, 0.9999), (2.0001, 30.0)),
    "bb1": ((0.001, 5.0), (1.001, 6.0)), "bb6": ((1.001, 6.0), (1.001, 6.0)),
    "bb7": ((1.001, 5.0), (0.001, 6.0)), "bb8": ((1.001, 6.0), (0.001, 1.0)),
}


def kendall_tau(u) -> float:
    """Kendall's tau-b of the two columns (VineCopula's ``fasttau``, Knight's algorithm)."""
    return float(stats.kendalltau(u[:, 0], u[:, 1]).statistic)


@functools.lru_cache(maxsize=None)
def _pv_bounds(family: str):
    import pyvinecopulib as pv

    c = pv.Bicop(family=getattr(pv.BicopFamily, family))
    return c.parameters_lower_bounds.reshape(-1), c.parameters_upper_bounds.reshape(-1)


def _bounds(family: str, tau: float) -> tuple:
    """VineCopula's bounds of (|par|, |par2|) intersected with what pyvinecopulib represents
    (it caps Clayton at 28, Gumbel at 50, Frank at 35, Joe at 30 and BB7's delta below at
    0.01: the only place where a VineCopula fit can differ: Frank from |tau| ~ 0.89, the others
    above 0.93)."""
    lo, hi = _pv_bounds(family)
    if family == "tawn":  # MLE_intern_Tawn: theta in [1.001, 20], psi in tau - 0.1 .. tau + 0.2
        t = abs(tau)
        vc = ((1.001, 20.0), (max(t - 0.1, 1e-4), min(t + 0.2, 0.99)))
        lo, hi = lo[::-1][:2], hi[::-1][:2]  # (theta, psi) against pyvinecopulib's (.., psi, theta)
    else:
        vc = VC_BOUNDS[family]
    return tuple((max(a, float(b)), min(c, float(d))) for (a, c), b, d in zip(vc, lo, hi))


def _params(family: str, ttype: int, x) -> np.ndarray:
    """pyvinecopulib's parameter column from VineCopula's (par, par2) magnitudes."""
    if family == "tawn":
        theta, psi = x
        return np.array([[psi], [1.0], [theta]]) if ttype == 1 else np.array([[1.0], [psi], [theta]])
    return np.asarray(x, dtype=np.float64).reshape(-1, 1)


def _loglik_fn(u, family: str, rotation: int, ttype: int):
    import pyvinecopulib as pv

    cop = pv.Bicop(family=getattr(pv.BicopFamily, family), rotation=rotation)
    par = np.array(_params(family, ttype, (1.5, 0.5) if family == "tawn" else cop.parameters.reshape(-1)))
    slots = ((2, 0) if ttype == 1 else (2, 1)) if family == "tawn" else tuple(range(len(par)))

    def ll(x):
        for k, v in zip(slots, x):
            par[k, 0] = v
        try:
            cop.parameters = par
            v = cop.loglik(u)
        except (ValueError, RuntimeError):
            return -1e250
        return v if math.isfinite(v) and v > -1e250 else -1e250  # VineCopula's floor
    return ll


_R_TOL = np.finfo(float).eps ** 0.25  # R's optimize(tol = .Machine$double.eps^0.25)


def _r_lbfgsb(ll, start, bounds, *, maxit: int = 500):
    """R's ``optim(start, ll, method = "L-BFGS-B", lower, upper, control = list(fnscale = -1,
    maxit = maxit))``: R's defaults (lmm = 5, factr = 1e7, pgtol = 0) and its central-difference
    gradient (ndeps = 1e-3, steps shortened at the bounds), maximising ``ll``."""
    lo = np.array([v[0] for v in bounds])
    hi = np.array([v[1] for v in bounds])

    def fg(x):
        f = -ll(x)
        g = np.empty(len(x))
        for k in range(len(x)):
            up, dn = x.copy(), x.copy()
            up[k] = min(x[k] + 1e-3, hi[k])
            dn[k] = max(x[k] - 1e-3, lo[k])
            g[k] = (-ll(up) + ll(dn)) / (up[k] - dn[k])
        return f, g

    x0 = np.clip(np.asarray(start, dtype=np.float64), lo, hi)
    res = optimize.minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=list(zip(lo, hi)),
                            options={"maxiter": maxit, "maxcor": 5, "ftol": 1e7 * np.finfo(float).eps, "gtol": 0.0})
    return -float(res.fun), tuple(float(v) for v in res.x)


@functools.lru_cache(maxsize=1)
def _pv_mle():
    import pyvinecopulib as pv

    return pv.FitControlsBicop(parametric_method="mle")


def _fit_family(u, code: int, tau: float):
    """VineCopula's ``BiCopEst.intern(method = "mle")`` for one family code: (loglik,
    VineCopula parameter magnitudes) in ``MLE_intern``'s bounds.

    One-parameter families: Brent's method on VineCopula's interval, as R's ``optimize``.
    Two-parameter families: the unconstrained maximum is pyvinecopulib's MLE in its own
    (wider) box; when it lies in VineCopula's box it is VineCopula's maximum too. Otherwise
    the t copula with nu above VineCopula's ``max.df`` = 30 is refitted on the face nu = 30
    (rho by Brent's method); a BB family outside its ``max.BB`` box is refitted in that box
    by `_r_lbfgsb` from the clamped maximum (VineCopula starts from BB1 (0.5, 1.5), BB6
    (1.5, 1.5), BB7 and BB8 (1.5, 0.5): the same maximum when the likelihood is unimodal in
    the box). Every two-parameter Tawn is fitted as ``MLE_intern_Tawn`` does (`_r_lbfgsb`
    from theta = 1 + 6 |tau|, psi = min(|tau| + 0.1, 0.999))."""
    import pyvinecopulib as pv

    family, rotation, ttype = VC_FAMILIES[code]
    if family == "indep":
        return 0.0, ()
    b = _bounds(family, tau)
    ll = _loglik_fn(u, family, rotation, ttype)
    if family == "tawn":
        return _r_lbfgsb(ll, (1 + 6 * abs(tau), min(abs(tau) + 0.1, 0.999)), b)
    if len(b) == 1:  # optimize(t_LL, interval = c(low, up), maximum = TRUE): Brent's fmin
        res = optimize.minimize_scalar(lambda p: -ll((p,)), bounds=b[0], method="bounded",
                                       options={"xatol": _R_TOL})
        return -float(res.fun), (float(res.x),)
    cop = pv.Bicop(family=getattr(pv.BicopFamily, family), rotation=rotation)
    cop.fit(u, _pv_mle())
    x = cop.parameters.reshape(-1).astype(np.float64)
    if all(lo <= v <= hi for v, (lo, hi) in zip(x, b)):
        return float(cop.loglik(u)), tuple(x.tolist())
    if family == "student" and b[0][0] <= x[0] <= b[0][1] and x[1] > b[1][1]:
        nu = b[1][1]
        res = optimize.minimize_scalar(lambda r: -ll((r, nu)), bounds=b[0], method="bounded",
                                       options={"xatol": 1e-6})
        return -float(res.fun), (float(res.x), nu)
    return _r_lbfgsb(ll, [min(max(v, lo), hi) for v, (lo, hi) in zip(x, b)], b)


def corner_correlations(u, tau: float) -> tuple[float, float]:
    """The asymmetry indices of VineCopula's ``todo_fams_presel``: on the normal scores
    z = Phi^-1(u), Pearson's correlation of the points in the two quadrants along the
    direction of dependence, (upper right z1 > 0 and z2 > 0, lower left z1 < 0 and z2 < 0)
    when ``tau`` > 0, (lower right z1 > 0 and z2 < 0, upper left z1 < 0 and z2 > 0)
    otherwise; NaN for a quadrant with fewer than two points."""
    z = stats.norm.ppf(np.asarray(u, dtype=np.float64))
    s1, s2 = (1, 1) if tau > 0 else (1, -1)
    out = []
    for sign in (1, -1):
        q = z[(sign * s1 * z[:, 0] > 0) & (sign * s2 * z[:, 1] > 0)]
        out.append(float(np.corrcoef(q[:, 0], q[:, 1])[0, 1]) if len(q) > 1 else math.nan)
    return out[0], out[1]


def preselect(u, tau: float) -> tuple:
    """The family codes ``BiCopSelect(presel = TRUE)`` fits: VineCopula's ``todo_fams_presel``
    (``R/preprocessors.R``; read in the fork ``larryleihua/VineCopula``, commit 13fceb2, the
    copy of the upstream file that holds it; ``R/BiCopSelect.R`` upstream swaps it in for
    ``todo_fams`` when ``presel``, its default, and ``R/03-bicops.R`` keeps the default).

    With positive ``tau`` and the `corner_correlations` (c11, c00), d = c11 - c00:
    d > 0.3 keeps the independence copula, the t copula and the families with more
    dependence near (1, 1) (`VC_CORNER`); 0.05 < d <= 0.3 those, the Gaussian, Frank and
    the survival BB8 (code 20); d < -0.3 and -0.3 <= d < -0.05 the same towards (0, 0)
    (with BB8, code 10); |d| <= 0.05 every positive family (``posfams``). With negative
    ``tau``, d = c10 - c01 (there a stronger dependence makes a quadrant's c more negative):
    d < -0.3 / -0.05 lean to (1, 0) (the extra code 30), d > 0.3 / 0.05 to (0, 1) (code 40),
    else ``negfams``. ``tau`` = 0: every family. Codes in VineCopula's order (its
    ``which.min`` keeps the first on ties). A quadrant with fewer than two points (c NaN;
    R's ``if`` would stop there; none of the AP and nDCG@20 pairs) keeps ``todo_fams``'s set."""
    if tau == 0:
        return tuple(sorted(VC_FAMILIES))
    pos = tau > 0
    c1, c2 = corner_correlations(u, tau)
    d = c1 - c2
    if not math.isfinite(d) or abs(d) <= 0.05:
        return VC_POSITIVE if pos else VC_NEGATIVE
    # the corner the dependence leans to, and the BB8 rotation kept beside it
    if pos:
        corner, bb8 = ((1, 1), 20) if d > 0 else ((0, 0), 10)
    else:
        corner, bb8 = ((1, 0), 30) if d < 0 else ((0, 1), 40)
    if abs(d) > 0.3:
        return (0, 2) + VC_CORNER[corner]
    return (0, 1, 2, 5, bb8) + VC_CORNER[corner]


def select_copula(u) -> dict:
    """VineCopula's ``BiCopSelect(u1, u2, selectioncrit = "AIC")`` on pseudo-observations
    ``u`` (n, 2): the families `preselect` keeps for the empirical tau (a subset of the
    independence copula and ``posfams`` or ``negfams``), each by `_fit_family`, the lowest
    AIC = -2 loglik + 2 k (k = 0, 1 or 2) wins (the first on ties, in VineCopula's order)."""
    tau = kendall_tau(u)
    codes = preselect(u, tau)
    best = None
    for code in codes:
        ll, par = _fit_family(u, code, tau)
        aic = -2 * ll + 2 * len(par)
        if best is None or aic < best[0]:
            best = (aic, code, par, ll)
    aic, code, par, ll = best
    family, rotation, ttype = VC_FAMILIES[code]
    params = [] if family == "indep" else _params(family, ttype, par).reshape(-1).tolist()
    return {"family": family, "rotation": rotation if family != "indep" else 0, "parameters": params,
            "vinecopula": code, "loglik": ll, "aic": aic}


def fit_copula(x, y, *, seed: int = 0) -> dict:
    """The copula of runs (x, y) as a dict {family, rotation, parameters (pyvinecopulib's),
    vinecopula (the family code), loglik, aic}: `select_copula` on `pobs`."""
    return select_copula(pobs(np.asarray(x), np.asarray(y), seed))


def bicop(spec: dict):
    """A ``pyvinecopulib.Bicop`` from `fit_copula`'s dict."""
    import pyvinecopulib as pv

    par = np.asarray(spec["parameters"], dtype=np.float64).reshape(-1, 1)
    fam = getattr(pv.BicopFamily, spec["family"])
    if fam == pv.BicopFamily.indep:
        return pv.Bicop(family=fam)
    return pv.Bicop(family=fam, rotation=int(spec["rotation"]), parameters=par)


# ================================================================== collection fits
def _data_hash(values, measure: str, prefix: str = "") -> str:
    h = hashlib.sha256()
    h.update(f"{prefix}{canonical_measure(measure)}:{np.asarray(values).shape}".encode())
    h.update(np.ascontiguousarray(np.asarray(values, dtype=np.float64)).tobytes())
    return h.hexdigest()


def matrix_hash(values, measure: str, ties_seed: int = 0) -> str:
    """The key of a collection's fit: its scores, measure, `FIT_VERSION` and ``ties_seed``."""
    return _data_hash(values, measure, f"v{FIT_VERSION}:ties{int(ties_seed)}:")


def ties_base_seed(values, measure: str, ties_seed: int = 0) -> int:
    """Seed of the copulas' random tie-breaking (`pobs`) in a collection: from its scores,
    measure and ``ties_seed`` only, so a new `FIT_VERSION` does not draw new ties. The
    study's own draw cannot be repeated: ``R/03-bicops.R`` calls ``pobs(ties.method =
    "random")`` inside ``foreach %dopar%`` on forked workers, whose R seeds differ from run to
    run; ``ties_seed`` picks another draw, to measure how much the results depend on it."""
    return int(_data_hash(values, measure, f"ties{int(ties_seed)}:")[:8], 16)


def cache_dir(cache=None) -> Path:
    """``cache`` or ``$FASTRISK_CACHE/simulate`` or ``~/.cache/fastrisk/simulate``."""
    if cache not in (None, True):
        return Path(cache)
    base = os.environ.get("FASTRISK_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "fastrisk") / "simulate"


@dataclass
class CollectionFit:
    """Fitted models of one collection: runs ``kept`` (rows of the matrix), their margins,
    the copula of each pair (i < j of positions in ``kept``)."""

    name: str
    measure: str
    hash: str
    kept: np.ndarray
    removed: dict
    margins: list
    copulas: dict
    values: np.ndarray = field(repr=False)
    source: str = "fitted"  # or "cache:<path>"
    path: Path | None = None
    h1: dict = field(default_factory=dict, repr=False)
    ties_seed: int = 0
    _dirty: bool = field(default=False, repr=False)
    _bicops: dict = field(default_factory=dict, repr=False)
    _transforms: dict = field(default_factory=dict, repr=False)

    @property
    def n_runs(self) -> int:
        return len(self.kept)

    def copula(self, i: int, j: int):
        """Bicop of kept positions (i, j), i < j."""
        key = (i, j)
        if key not in self._bicops:
            self._bicops[key] = bicop(self.copulas[f"{i},{j}"])
        return self._bicops[key]

    def h1_pairs(self, delta: float):
        """The study's ``R/02-margins_transform.R`` for effect ``delta``: baselines are the
        bottom 75 % of runs by margin mean (the top round(0.25 S) dropped); for each, the 10
        other runs whose mean is closest to mu_b + delta, their own margin transformed to
        mean mu_b + delta (`SimMargin.transformed`). Returns ({baseline: [(e, (a, b)),
        ...]} for the baselines with at least one success, where e's margin transformed is
        ``margins[e].with_beta(a, b)``; the number of transformations that failed: those pairs
        are skipped, as the study's ``try`` skips them)."""
        key = f"{float(delta):.10g}"
        if key not in self._transforms:
            if key not in self.h1:
                self.h1[key] = h1_transforms(self.margins, float(delta))
                self._dirty = True
            doc = self.h1[key]
            pairs = {int(b): [(int(e), (float(a), float(bb))) for e, a, bb in lst] for b, lst in doc["pairs"].items()}
            self._transforms[key] = (pairs, int(doc["failed"]))
        return self._transforms[key]

    def save(self) -> None:
        """Write the fit (with the transformations computed so far) to its cache file."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.to_json()))
        os.replace(tmp, self.path)
        self._dirty = False

    def to_json(self) -> dict:
        return {"version": FIT_VERSION, "name": self.name, "measure": self.measure, "hash": self.hash,
                "ties_seed": self.ties_seed, "kept": self.kept.tolist(), "removed": self.removed,
                "margins": [{"family": m.family, "params": m.params, "df": m.df, "aic": m.aic} for m in self.margins],
                "copulas": self.copulas, "h1": self.h1, "values": self.values.tolist()}


def h1_transforms(margins, delta: float) -> dict:
    """The effect-size transformations of `CollectionFit.h1_pairs` for one collection's
    ``margins`` and ``delta``, as stored in the fit file: {"pairs": {baseline: [[e, a, b],
    ...]}, "failed": n} (a job of `prepare_h1`)."""
    mu = np.array([m.mean for m in margins])
    S = len(mu)
    order = np.argsort(-mu, kind="stable")
    baselines = order[round(S * 0.25):]  # R's round (half to even), as Python's
    out, failed = {}, 0
    for i in sorted(int(v) for v in baselines):
        js = [int(j) for j in np.argsort(np.abs(mu - mu[i] - delta), kind="stable") if j != i][:10]
        ok = []
        for j in js:
            t = margins[j].transformed(mu[i] + delta)
            if t is None:
                failed += 1
            else:
                ok.append([j, t.transform[0], t.transform[1]])
        if ok:
            out[str(i)] = ok
    return {"pairs": out, "failed": failed}


def prepare_h1(fits, deltas, *, executor=None) -> None:
    """Compute the transformations ``fits`` lack for ``deltas`` (one job per collection and
    delta, on ``executor`` as `fit_collections` runs its jobs; R's optimizer takes ~8 ms a
    transformation), keep them in each fit and write its cache file."""
    submit = _submitter(executor)
    jobs = []
    for fit in fits:
        for delta in deltas:
            key = f"{float(delta):.10g}"
            if key not in fit.h1:
                jobs.append((fit, key, submit(h1_transforms, fit.margins, float(delta))))
    for fit, key, job in jobs:
        fit.h1[key] = _result(job, fit.name)
        fit._dirty = True
    for fit in {id(f): f for f, _, _ in jobs}.values():
        fit.save()


def _fit_pairs(values, pairs, base_seed) -> dict:
    """Worker: copulas of the given (i, j) pairs of rows of ``values``."""
    from fastrisk._threads import blas_threads

    with blas_threads(1):  # scipy's L-BFGS-B calls BLAS on 2-vectors: a thread pool costs ~2 ms a call
        return {f"{i},{j}": fit_copula(values[i], values[j], seed=base_seed + i * 100_003 + j) for i, j in pairs}


def _fit_margins(values, measure) -> list:
    from fastrisk._threads import blas_threads

    with blas_threads(1):
        return [(m.family, m.params) for m in (fit_margin(v, measure) for v in values)]


def load_fit(path, h: str | None = None, values=None) -> CollectionFit | None:
    """The fit stored at ``path`` (None if missing, unreadable, of another version or, when
    ``h`` is given, of another matrix). ``values``: the matrix (systems x topics), needed only
    for files written without the kept runs' scores."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if doc.get("version") != FIT_VERSION or (h is not None and doc.get("hash") != h):
        return None
    kept = np.asarray(doc["kept"], dtype=np.int64)
    if "values" in doc:
        V = np.asarray(doc["values"], dtype=np.float64)
    else:
        if values is None:
            from fastrisk.datasets import trec_matrix

            values = trec_matrix(doc["name"]).values
        V = np.asarray(values, dtype=np.float64)[kept]
    measure = doc["measure"]
    margins = [margin_from(m["family"], m["params"], V[i], measure) for i, m in enumerate(doc["margins"])]
    return CollectionFit(doc["name"], measure, doc["hash"], kept, doc["removed"], margins, doc["copulas"], V,
                         source=f"cache:{path}", path=path, h1=doc.get("h1", {}), ties_seed=int(doc.get("ties_seed", 0)))


def _chunks(pairs, n):
    return [pairs[k:k + n] for k in range(0, len(pairs), n)]


def fit_collections(collections, measure=None, *, executor=None, cache=None, refit: bool = False,
                    progress=None, ties_seed: int = 0) -> dict:
    """Fitted models of bundled collections (names) or ``{name: ScoreMatrix}``: loaded from the
    cache when its hash and version match, otherwise fitted (pairs in chunks on ``executor``,
    any ``concurrent.futures`` executor or a Dask client; None: in-process) and stored.
    ``ties_seed``: which draw of the copulas' random tie-breaking (`ties_base_seed`)."""
    from fastrisk.datasets import trec_matrix

    items = dict(collections) if isinstance(collections, dict) else {n: None for n in collections}
    if isinstance(ties_seed, bool) or not isinstance(ties_seed, numbers.Integral) or not 0 <= ties_seed < 2**32:
        raise InputError(f"`ties_seed` must be an integer in [0, 2**32), got {ties_seed!r}")
    out, todo = {}, {}
    cdir = cache_dir(cache) if cache is not False else None
    for name, mat in items.items():
        meas = canonical_measure(measure if measure is not None else name.partition("_")[2])
        values = np.asarray((mat if mat is not None else trec_matrix(name)).values, dtype=np.float64)
        if values.ndim != 2 or values.shape[0] < 3:
            raise InputError(f"collection {name!r}: a fit needs a systems x topics matrix with >= 3 systems")
        h = matrix_hash(values, meas, ties_seed)
        path = None if cdir is None else cdir / f"{name}-{h[:16]}.json"
        got = None if (refit or path is None) else load_fit(path, h, values)
        if got is not None:
            out[name] = got
        else:
            todo[name] = (meas, values, h, path)
    if not todo:
        return out
    submit = _submitter(executor)
    futures = {}
    for name, (meas, values, h, path) in todo.items():
        kept, removed = kept_runs(values)
        V = values[kept]
        S = len(kept)
        pairs = [(i, j) for i in range(S) for j in range(i + 1, S)]
        seed = ties_base_seed(values, meas, ties_seed)
        futures[name] = (kept, removed, V, submit(_fit_margins, V, meas),
                         [submit(_fit_pairs, V, c, seed) for c in _chunks(pairs, 200)])
    for name, (kept, removed, V, fm, fcs) in futures.items():
        meas, values, h, path = todo[name]
        margins = [margin_from(f, p, V[i], meas) for i, (f, p) in enumerate(_result(fm, name))]
        copulas = {}
        for f in fcs:
            copulas.update(_result(f, name))
        fit = CollectionFit(name, meas, h, kept, removed, margins, copulas, V, path=path, ties_seed=int(ties_seed))
        if path is not None:
            fit.save()
            fit.source = f"fitted:{path}"
        out[name] = fit
    return {n: out[n] for n in items}


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def _submitter(executor):
    if executor is None:
        return lambda fn, *a: _Done(fn(*a))
    if hasattr(executor, "get_executor") and not hasattr(executor, "map_async"):
        executor = executor.get_executor()  # a Dask client
    return executor.submit


def _result(f, name):
    """A fit job's result; a job lost with its worker (a broken pool, a killed Dask worker) is an
    `InputError` naming the collection (the collections fitted before it stay cached)."""
    try:
        return f.result()
    except (cf.BrokenExecutor, cf.CancelledError) as exc:
        lost = exc
    except Exception as exc:
        if type(exc).__name__ != "KilledWorker":
            raise
        lost = exc
    raise InputError(f"fitting collection {name!r}: a job was lost with its worker "
                     f"({type(lost).__name__}: {lost}); run again") from lost
