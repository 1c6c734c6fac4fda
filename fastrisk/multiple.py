"""Many comparisons: p-value adjustments and the randomised Tukey HSD test over all pairs.

- :func:`adjust_pvalues` — Bonferroni, Holm (step-down) and Benjamini-Hochberg (FDR, via
  ``scipy.stats.false_discovery_control``) along one axis of a p-value array.
- :func:`tukey_hsd` — the randomised Tukey HSD test IR evaluation uses (Carterette 2012;
  Sakai 2014): in every trial the scores of the systems are permuted independently within
  each topic, and the null distribution is that of the largest difference between any two
  system means (the range). A pair is significant when its observed difference is rarely
  exceeded by the range, which controls the family-wise error over all pairs at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastrisk._kernels import resampling as _k
from fastrisk._random import resolve_seed
from fastrisk._results import Result, array
from fastrisk._threads import limit_threads
from fastrisk.errors import InputError
from fastrisk.matrix import ScoreMatrix
from fastrisk.resampling import _as_scores_array, _choice, _positive_int

CORRECTIONS = ("holm", "bonferroni", "bh", "none")


def _pvalues_iv(pvalues) -> np.ndarray:
    try:
        p = np.array(pvalues, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`pvalues` must be an array of numbers, got {type(pvalues).__name__}") from None
    if np.isnan(p).any():
        raise InputError("`pvalues` must not contain NaN")
    if ((p < 0) | (p > 1)).any():
        raise InputError(f"`pvalues` must lie in [0, 1], got values from {p.min()} to {p.max()}")
    return p


def adjust_pvalues(pvalues, method: str = "holm", *, axis: int = -1) -> np.ndarray:
    """Adjusted p-values along ``axis``: ``'holm'``, ``'bonferroni'``, ``'bh'`` or ``'none'``.

    Holm: sort ascending, ``p_(j) (m - j + 1)`` made monotone by a running maximum, capped
    at 1; Bonferroni: ``min(1, m p)``; BH: :func:`scipy.stats.false_discovery_control`.
    """
    _choice(method, "method", CORRECTIONS)
    p = _pvalues_iv(pvalues)
    if p.ndim == 0:
        return p.copy()
    p = np.moveaxis(p, axis, -1)
    m = p.shape[-1]
    if method == "none" or m == 0:
        out = p.copy()
    elif method == "bonferroni":
        out = np.minimum(1.0, p * m)
    elif method == "bh":
        from scipy.stats import false_discovery_control

        out = false_discovery_control(p, axis=-1, method="bh")
    else:
        order = np.argsort(p, axis=-1, kind="stable")
        ps = np.take_along_axis(p, order, axis=-1)
        adj = np.minimum(1.0, np.maximum.accumulate(ps * (m - np.arange(m)), axis=-1))
        out = np.empty_like(p)
        np.put_along_axis(out, order, adj, axis=-1)
    return np.moveaxis(out, -1, axis)


@dataclass(frozen=True, repr=False)
class TukeyHSDResult(Result):
    """Randomised Tukey HSD over all pairs ``(i, j)``, ``i < j`` (arrays ``[pair]``).

    ``statistic`` is mean_i - mean_j; ``pvalue`` ``(#{range_b >= |diff|} + 1) / (B + 1)``;
    ``means`` ``[system]``; ``null_distribution`` the ``[replicate]`` ranges;
    ``pvalue_matrix()`` the symmetric S x S table.

    Long form (one row per pair): ``system``, ``baseline`` (the pair's first and second
    system), ``statistic``, ``pvalue``.
    """

    _coords = {"pair": {"system": "system_a", "baseline": "system_b"}}
    _table = ("pair",)

    system_a: tuple
    system_b: tuple
    systems: tuple
    replicates: int
    seed: int
    statistic: np.ndarray = array("pair")
    pvalue: np.ndarray = array("pair")
    means: np.ndarray = array("system")
    null_distribution: np.ndarray = array("replicate")

    def pvalue_matrix(self) -> np.ndarray:
        S = len(self.systems)
        out = np.ones((S, S))
        I, J = np.triu_indices(S, 1)
        out[I, J] = self.pvalue
        out[J, I] = self.pvalue
        return out


def tukey_hsd(data, *, replicates: int = 10000, rng=None, threads: int | None = None) -> TukeyHSDResult:
    """Randomised Tukey HSD test of every pair of systems (rows of ``data``: a ScoreMatrix
    or an S x c array). Same ``rng`` -> bit-identical p-values whatever ``threads``."""
    B = _positive_int(replicates, "replicates")
    if isinstance(data, ScoreMatrix):
        V, names = data.values, data.systems
    else:
        V = _as_scores_array(data)
        names = tuple(str(i) for i in range(V.shape[0]))
    S, c = V.shape
    if S < 2:
        raise InputError(f"Tukey HSD needs at least 2 systems, got {S}")
    seed = resolve_seed(rng)
    null = np.empty(B)
    with limit_threads(threads):
        _k.tukey_range_null(np.ascontiguousarray(V.T), seed, null)
    means = V.mean(axis=1)
    I, J = np.triu_indices(S, 1)
    diff = means[I] - means[J]
    obs = np.abs(diff)
    srt = np.sort(null)
    tol = obs * np.finfo(np.float64).eps * 100
    count = B - np.searchsorted(srt, obs - tol, side="left")
    pvalue = (count + 1) / (B + 1)
    return TukeyHSDResult(system_a=tuple(names[i] for i in I), system_b=tuple(names[j] for j in J),
                          systems=tuple(names), replicates=B, seed=seed, statistic=diff, pvalue=pvalue, means=means,
                          null_distribution=null)
