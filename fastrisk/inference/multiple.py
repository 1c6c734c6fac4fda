"""Many comparisons: p-value adjustments and the randomised Tukey HSD test over all pairs.

- `adjust_pvalues` — Bonferroni, Holm (step-down) and Benjamini-Hochberg (FDR, via
  ``scipy.stats.false_discovery_control``) along one axis of a p-value array.
- `tukey_hsd` — the randomised Tukey HSD test IR evaluation uses (Carterette 2012;
  Sakai 2014): in every trial the scores of the systems are permuted independently within
  each topic, and the null distribution is that of the largest difference between any two
  system means (the range). A pair is significant when its observed difference is rarely
  exceeded by the range, which controls the family-wise error over all pairs at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import pyarrow as pa

from fastrisk._kernels import resampling as _k
from fastrisk._runtime.aliases import SeedLike
from fastrisk._runtime.extras import require
from fastrisk._runtime.resources import check_memory
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads
from fastrisk.data.matrix import ScoreMatrix, as_matrix, is_frame
from fastrisk.data.results import Result, array, html_table, param
from fastrisk.errors import InputError
from fastrisk.inference.resampling._engine import _choice, _positive_int
from fastrisk.inference.resampling._scores import _as_scores_array

CORRECTIONS = ("holm", "bonferroni", "bh", "none")


def _pvalues_iv(pvalues) -> np.ndarray:
    try:
        p = np.array(pvalues, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`pvalues` must be an array of numbers, got {type(pvalues).__name__}") from None
    present = p[~np.isnan(p)]
    if ((present < 0) | (present > 1)).any():
        raise InputError(f"`pvalues` must lie in [0, 1] (NaN marks a non-member of the family), got values "
                         f"from {present.min()} to {present.max()}")
    return p


class AdjustedPValues(np.ndarray):
    """Adjusted p-values: an ndarray of the input's shape that also records the family.

    ``m`` (an int array over the other axes, an int for 1-D input) is the number of p-values
    in each family (NaN entries are not members); ``method`` the adjustment.
    """

    def __new__(cls, values, m, method: str):
        obj = np.asarray(values).view(cls)
        obj.m = m
        obj.method = method
        return obj

    def __array_finalize__(self, obj) -> None:
        self.m = getattr(obj, "m", None)
        self.method = getattr(obj, "method", None)

    def to_arrow(self) -> pa.Table:
        """Long form: one row per entry (``index_0``, ``index_1``, ... its position),
        ``pvalue_adjusted``, ``family_size`` (m of its family) and ``method``."""
        values = np.asarray(self)
        idx = np.indices(values.shape).reshape(values.ndim, -1)
        m = np.broadcast_to(np.expand_dims(np.asarray(self.m), -1) if values.ndim > 1 else self.m, values.shape)
        cols = {f"index_{k}": idx[k] for k in range(values.ndim)}
        cols.update(pvalue_adjusted=values.reshape(-1), family_size=np.asarray(m).reshape(-1),
                    method=np.full(values.size, self.method, dtype=object))
        return pa.table(cols)

    def to_pandas(self):
        require("pandas", what="to_pandas()")
        return self.to_arrow().to_pandas()

    def _repr_html_(self) -> str:
        return html_table(self.to_arrow(), f"AdjustedPValues(method={self.method}, shape={self.shape})")


def adjust_pvalues(pvalues, method: str = "holm", *, axis: int = -1) -> AdjustedPValues:
    """Adjusted p-values along ``axis``: ``'holm'``, ``'bonferroni'``, ``'bh'`` or ``'none'``.

    Holm: sort ascending, ``p_(j) (m - j + 1)`` made monotone by a running maximum, capped
    at 1; Bonferroni: ``min(1, m p)``; BH: `scipy.stats.false_discovery_control`.

    The family is the non-NaN entries: a NaN (e.g. the p-value of the baseline compared with
    itself, which every fastrisk test reports as NaN) is skipped and stays NaN, so ``m``
    counts only real comparisons. The result records ``m`` (per family) and ``method``.

    Parameters
    ----------
    pvalues : array_like
        p-values in [0, 1] (NaN skipped), e.g. ``result.pvalue`` ``[alpha, system]``.
    method : {"holm", "bonferroni", "bh", "none"}
        The correction (Holm 1979; Bonferroni; Benjamini & Hochberg 1995).
    axis : int
        The axis that holds one family (default: the last, systems, per alpha).

    Returns
    -------
    AdjustedPValues
        An array of the input's shape with attributes ``m`` and ``method``.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of Statistics
    6(2), 65-70.

    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful approach
    to multiple testing. JRSS B 57(1), 289-300.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> p = fastrisk.risk(matrix, baseline, alpha=[0, 5]).pvalue
    >>> adjusted = fastrisk.adjust_pvalues(p, 'holm')
    >>> print(np.round(adjusted[:, :4], 3))
    [[0.426 0.13  0.693 1.   ]
     [0.042 0.028 0.049 0.125]]
    """
    _choice(method, "method", CORRECTIONS)
    p = _pvalues_iv(pvalues)
    if p.ndim == 0:
        return AdjustedPValues(p.copy(), int(not np.isnan(p)), method)
    p = np.moveaxis(p, axis, -1)
    flat = p.reshape(-1, p.shape[-1])
    out = np.full_like(flat, np.nan)
    sizes = np.zeros(flat.shape[0], dtype=np.int64)
    for row in range(flat.shape[0]):
        member = ~np.isnan(flat[row])
        sizes[row] = int(member.sum())
        out[row, member] = _adjust_1d(flat[row, member], method)
    out = np.moveaxis(out.reshape(p.shape), -1, axis)
    m = int(sizes[0]) if p.ndim == 1 else sizes.reshape(p.shape[:-1])
    return AdjustedPValues(out, m, method)


def _adjust_1d(p: np.ndarray, method: str) -> np.ndarray:
    m = p.shape[0]
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    if method == "bh":
        from scipy.stats import false_discovery_control  # scipy.stats: ~0.3 s to import, needed here only

        return false_discovery_control(p, method="bh")
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty_like(p)
    out[order] = adj
    return out


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

    system_a: tuple = param(doc="First system of each pair (the ``system`` column).")
    system_b: tuple = param(doc="Second system of each pair (the ``baseline`` column).")
    systems: tuple
    replicates: int
    seed: int
    statistic: np.ndarray = array("pair")
    pvalue: np.ndarray = array("pair")
    means: np.ndarray = array("system", doc="Mean score of each system over the topics.")
    null_distribution: np.ndarray = array("replicate")

    def pvalue_matrix(self) -> np.ndarray:
        S = len(self.systems)
        out = np.ones((S, S))
        I, J = np.triu_indices(S, 1)
        out[I, J] = self.pvalue
        out[J, I] = self.pvalue
        return out


#: Element-operations per kernel call: about a quarter of a second, so that Ctrl-C is seen within a second.
CHUNK_WORK = 50_000_000


def _chunk(work_per_replicate: int) -> int:
    return max(1, CHUNK_WORK * numba.get_num_threads() // max(1, work_per_replicate))


def tukey_hsd(data, *, replicates: int = 10000, rng: SeedLike = None, threads: int | None = None) -> TukeyHSDResult:
    """Randomised Tukey HSD test of every pair of systems (rows of ``data``: a ScoreMatrix
    or an S x c array). Same ``rng`` -> bit-identical p-values whatever ``threads`` (and
    whatever the chunks the replicates are drawn in; Ctrl-C interrupts between chunks).
    A replicate count whose null distribution would not fit in memory is refused with a
    `ResourceError`.

    Parameters
    ----------
    data : MatrixLike or array_like
        Systems × topics scores.
    replicates : int
        Randomisations of the null distribution of the largest pairwise difference.
    rng : SeedLike
        The seed (recorded in the result).
    threads : int, optional
        Numba threads for this call.

    Returns
    -------
    TukeyHSDResult
        The mean difference and p-value of every pair.

    References
    ----------
    Carterette, B. (2012). Multiple testing in statistical analysis of systems-based information retrieval
    experiments. ACM TOIS 30(1), 4.

    Sakai, T. (2014). Statistical reform in information retrieval? SIGIR Forum 48(1), 3-12.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> small = matrix.select(['uogTrA44xi', 'srchvrs12c09', 'qutwb'])
    >>> res = fastrisk.tukey_hsd(small, replicates=1000, rng=1)
    >>> print(np.round(res.pvalue, 3))
    [0.973 0.006 0.012]
    """
    B = _positive_int(replicates, "replicates")
    if is_frame(data):
        data = as_matrix(data, "data")
    if isinstance(data, ScoreMatrix):
        V, names = data.values, data.systems
    else:
        V = _as_scores_array(data)
        names = tuple(str(i) for i in range(V.shape[0]))
    S, c = V.shape
    if S < 2:
        raise InputError(f"Tukey HSD needs at least 2 systems, got {S}")
    check_memory(16.0 * B, f"Tukey HSD with {B} replicates (the null distribution and its sorted copy)",
                 "use fewer replicates (10**5 give p-values to within about 0.003)")
    seed = resolve_seed(rng)
    null = np.empty(B)
    scores_t = np.ascontiguousarray(V.T)
    step = _chunk(S * c)
    with limit_threads(threads):
        # chunks of about a quarter of a second, so that Ctrl-C is seen between them
        for start in range(0, B, step):
            _k.tukey_range_null(scores_t, seed, start, null[start:start + step])
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
