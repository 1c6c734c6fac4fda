"""Paired rank and sign tests of every system against a baseline: `wilcoxon_test`, `sign_test`.

The same inputs and result shape as `fastrisk.t_test` (``[alpha, system]``: per-topic scores
x_i = d_i + α min(d_i, 0) of d = system − baseline, α = 0 the plain differences). The
statistics come from the simulation battery's kernels (`fastrisk._kernels.battery`), the
p-values from `fastrisk._runtime.ranktests`, so both paths give the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastrisk._kernels import battery as _k
from fastrisk._runtime.ranktests import WILCOXON_EXACT_MAX, sign_p, wilcoxon_p
from fastrisk._runtime.validation import flag
from fastrisk.data.results import array
from fastrisk.inference.resampling._engine import ALTERNATIVES, _choice
from fastrisk.inference.resampling._scores import _scores, _self_columns
from fastrisk.inference.resampling.results import _Labelled

__all__ = ["RankTestResult", "sign_test", "wilcoxon_test"]

_TAIL = {"two-sided": 0, "less": 1, "greater": 2}


@dataclass(frozen=True, repr=False)
class RankTestResult(_Labelled):
    """A paired rank or sign test of every system against the baseline; arrays ``[alpha, system]``:
    ``statistic`` (scipy's: Wilcoxon min(W+, W−) two-sided, else W+; sign: the number of topics
    with x > 0), ``pvalue``, ``n`` (topics with x ≠ 0), ``urisk`` (the mean of x).

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``baseline``, ``statistic``, ``urisk``, ``pvalue``, ``n``.
    """

    pvalue: np.ndarray = array("alpha", "system", default=None)
    n: np.ndarray = array("alpha", "system", default=None, doc="topics with a non-zero score x_i (the test's n)")
    test: str = "wilcoxon"
    alternative: str = "two-sided"


def _stats(y: np.ndarray) -> np.ndarray:
    """(A*S, N_STATS) rank and sign statistics of the rows of y [alpha, system, topic]."""
    D = np.ascontiguousarray(y.reshape(-1, y.shape[-1]), dtype=np.float64)
    out = np.zeros((D.shape[0], _k.N_STATS))
    _k.rank_sign_stats(D, out)
    return out


def _paired_iv(alternative, correction):
    _choice(alternative, "alternative", ALTERNATIVES)
    flag(correction, "correction")


def _run(test, data, baseline, alpha, loss_weight, alternative, correction, missing):
    sc = _scores(data, baseline, alpha=alpha, loss_weight=loss_weight, value=None, pairs=False, missing=missing,
                 flipped=False)
    y = sc.y
    A, S = y.shape[0], y.shape[1]
    st = _stats(y)
    if test == "wilcoxon":
        P = wilcoxon_p(st, bool(correction), WILCOXON_EXACT_MAX)
        n = st[:, _k.WN]
        wplus = st[:, _k.WPLUS]
        stat = np.minimum(wplus, n * (n + 1) / 2 - wplus) if alternative == "two-sided" else wplus
    else:
        n = st[:, _k.SPOS] + st[:, _k.SNEG]
        ok = ~np.isnan(n)
        P = np.full((len(n), 3), np.nan)
        P[ok] = sign_p(st[ok, _k.SPOS], n[ok])
        stat = st[:, _k.SPOS]
    p = P[:, _TAIL[alternative]].reshape(A, S)
    stat = stat.reshape(A, S).copy()
    n = n.reshape(A, S).copy()
    self_rows = _self_columns(sc)
    p[:, self_rows] = np.nan
    stat[:, self_rows] = np.nan
    return RankTestResult(statistic=stat, urisk=y.mean(axis=-1), pvalue=p, n=n, test=test, alternative=alternative,
                          **sc.labels())


def wilcoxon_test(data, baseline=None, *, alpha=None, loss_weight=None, alternative: str = "two-sided",
                  correction: bool = False, missing: str = "raise") -> RankTestResult:
    """Wilcoxon signed-rank test of every system against ``baseline``, per alpha.

    On the per-topic scores x_i = d_i + α min(d_i, 0), d = system − baseline (α = 0: the paired
    differences), zero scores are dropped (``zero_method="wilcox"``) and the n others ranked by
    |x_i| with average ranks for ties; W+ = Σ_{x_i > 0} rank_i. The p-value is exact (the null
    distribution of W+ over the 2^n sign patterns) for n <= 50 without ties or zeros, else from
    the normal approximation z = (W+ − n(n+1)/4) / σ, σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48, with
    a continuity correction of 0.5 if ``correction`` — as ``scipy.stats.wilcoxon`` (defaults:
    ``zero_method="wilcox"``, ``correction=False``, ``method="auto"``) and R's ``wilcox.test``,
    except that scipy (>= 1.13) runs a permutation test for n <= 13 with ties or zeros where this
    (as R) uses the normal approximation. Parapar et al. (2021) and Otero, Parapar & Barreiro
    (2025) recommend it (with Benjamini-Hochberg) for IR evaluation.

    Parameters
    ----------
    data : MatrixLike
        Systems × topics scores (a `ScoreMatrix`, a frame or an array), as `fastrisk.t_test`.
    baseline : BaselineLike
        The system (name or position) or baseline every system is compared with.
    alpha, loss_weight : AlphaLike, optional
        Risk sensitivity of the scores x (default α = 0, 1, 5, 10 as `fastrisk.t_test`).
    alternative : {"two-sided", "less", "greater"}
        "greater": the system's scores tend to exceed the baseline's.
    correction : bool
        Continuity correction of the normal approximation (scipy's ``correction``).
    missing : {"raise", ...}
        Missing scores, as `fastrisk.risk`.

    Returns
    -------
    RankTestResult
        ``statistic`` (scipy's), ``pvalue``, ``n`` and ``urisk`` ``[alpha, system]``; the
        baseline against itself is NaN.

    References
    ----------
    F. Wilcoxon, "Individual comparisons by ranking methods", Biometrics Bulletin 1 (1945).
    J. Parapar, D. E. Losada, M. A. Presedo-Quindimil & A. Barreiro, "Using score distributions
    to compare statistical significance tests for information retrieval evaluation", JASIST 71
    (2020) / SAC 2021. D. Otero, J. Parapar & Á. Barreiro, ECIR 2025.

    Examples
    --------
    >>> import fastrisk
    >>> m, b = fastrisk.data.datasets.trec2012_web("err20")
    >>> res = fastrisk.wilcoxon_test(m, b, alpha=0)
    >>> res.pvalue.shape == (1, m.n_systems)
    True
    """
    _paired_iv(alternative, correction)
    return _run("wilcoxon", data, baseline, alpha, loss_weight, alternative, correction, missing)


def sign_test(data, baseline=None, *, alpha=None, loss_weight=None, alternative: str = "two-sided",
              missing: str = "raise") -> RankTestResult:
    """Sign test of every system against ``baseline``, per alpha.

    Of the per-topic scores x_i = d_i + α min(d_i, 0), d = system − baseline, the zeros are
    dropped; with k = #{x_i > 0} among the n others, k ~ Binomial(n, 1/2) under the null. p-values
    are exact: two-sided min(1, 2 min(P(X <= k), P(X >= k))), "greater" P(X >= k), "less"
    P(X <= k), as ``scipy.stats.binomtest(k, n, 0.5)``.

    Parameters
    ----------
    data : MatrixLike
        Systems × topics scores, as `fastrisk.t_test`.
    baseline : BaselineLike
        The system (name or position) or baseline every system is compared with.
    alpha, loss_weight : AlphaLike, optional
        Risk sensitivity of the scores x (default α = 0, 1, 5, 10 as `fastrisk.t_test`).
    alternative : {"two-sided", "less", "greater"}
        "greater": the system wins more topics than it loses.
    missing : {"raise", ...}
        Missing scores, as `fastrisk.risk`.

    Returns
    -------
    RankTestResult
        ``statistic`` (k), ``pvalue``, ``n`` and ``urisk`` ``[alpha, system]``; NaN where
        n = 0 and for the baseline against itself.

    References
    ----------
    W. J. Conover, *Practical Nonparametric Statistics*, 3rd ed., Wiley (1999), §3.4.
    J. Urbano, H. Lima & A. Hanjalic, "Statistical significance testing in information
    retrieval: an empirical analysis of type I, type II and type III errors", SIGIR 2019.

    Examples
    --------
    >>> import fastrisk
    >>> m, b = fastrisk.data.datasets.trec2012_web("err20")
    >>> res = fastrisk.sign_test(m, b, alpha=[0, 5])
    >>> res.pvalue.shape == (2, m.n_systems)
    True
    """
    _paired_iv(alternative, False)
    return _run("sign", data, baseline, alpha, loss_weight, alternative, False, missing)
