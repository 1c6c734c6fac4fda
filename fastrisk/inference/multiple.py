"""Many comparisons: p-value adjustments and the randomised Tukey HSD test over all pairs.

- `adjust_pvalues` — every correction of statsmodels' ``multipletests`` (Bonferroni, Šidák,
  Holm, Holm-Šidák, Simes-Hochberg, Hommel, Benjamini-Hochberg, Benjamini-Yekutieli, the
  two-stage BH and BKY procedures, Gavrilov-Benjamini-Sarkar) under statsmodels' names and
  aliases (PyTerrier passes them through: ``hs``, ``h``, ``fdr_bh``, ...), computed here as
  statsmodels computes them, along one axis of a p-value array.
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
from fastrisk.inference.resampling._engine import _positive_int
from fastrisk.inference.resampling._scores import _as_scores_array

#: Canonical correction -> its accepted names: statsmodels' ``multipletests`` names and aliases
#: (``statsmodels.stats.multitest._alias_list``), fastrisk's earlier ``"bh"``, and ``"none"``.
_ALIASES = {
    "bonferroni": ("b", "bonf", "bonferroni"),
    "sidak": ("s", "sidak"),
    "holm": ("h", "holm"),
    "holm-sidak": ("hs", "holm-sidak"),
    "simes-hochberg": ("sh", "simes-hochberg"),
    "hommel": ("ho", "hommel"),
    "fdr_bh": ("fdr_bh", "fdr_i", "fdr_p", "fdri", "fdrp", "bh"),
    "fdr_by": ("fdr_by", "fdr_n", "fdr_c", "fdrn", "fdrcorr", "by"),
    "fdr_tsbh": ("fdr_tsbh", "fdr_2sbh"),
    "fdr_tsbky": ("fdr_tsbky", "fdr_2sbky", "fdr_twostage"),
    "fdr_gbs": ("fdr_gbs",),
    "none": ("none",),
}
#: Every accepted correction name -> its canonical name.
CORRECTION_NAMES = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}
#: The canonical corrections.
CORRECTIONS = tuple(_ALIASES)
#: The corrections whose adjusted p-values depend on the level (statsmodels' ``alpha``).
LEVEL_DEPENDENT = ("fdr_tsbh", "fdr_tsbky")


def correction_name(method, param: str = "correction") -> str:
    """The canonical name of a correction given by any statsmodels name or alias.

    Parameters
    ----------
    method : str
        A name or alias of statsmodels' ``multipletests`` (``"hs"``, ``"fdr_i"``, ...), ``"bh"``
        or ``"none"``, in any case.
    param : str
        The option to name in the error (``"correction"``, ``"--correction"``).

    Returns
    -------
    str
        The canonical name (``"hs"`` -> ``"holm-sidak"``); `InputError` naming ``param`` for
        anything else.
    """
    name = CORRECTION_NAMES.get(method.lower()) if isinstance(method, str) else None
    if name is None:
        if isinstance(method, str) and method.lower() in ("lfdr", "lfdr_sl"):
            raise InputError(f"`{param}` 'lfdr' (statsmodels' local FDR support line) estimates local false "
                             "discovery rates, not adjusted p-values; use 'fdr_bh' or another correction")
        raise InputError(f"`{param}` must be one of {', '.join(CORRECTIONS)} (or a statsmodels alias: "
                         f"{', '.join(a for a in CORRECTION_NAMES if a not in CORRECTIONS)}), got {method!r}")
    return name


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
    in each family (NaN entries are not members); ``method`` the adjustment; ``axis`` the axis
    that holds a family.
    """

    def __new__(cls, values, m, method: str, axis: int = -1):
        obj = np.asarray(values).view(cls)
        obj.m = m
        obj.method = method
        obj.axis = axis
        return obj

    def __array_finalize__(self, obj) -> None:
        self.m = getattr(obj, "m", None)
        self.method = getattr(obj, "method", None)
        self.axis = getattr(obj, "axis", -1)

    def to_arrow(self) -> pa.Table:
        """Long form: one row per entry (``index_0``, ``index_1``, ... its position),
        ``pvalue_adjusted``, ``family_size`` (m of its family, the family along ``axis``) and
        ``method``."""
        values = np.asarray(self)
        idx = np.indices(values.shape).reshape(values.ndim, -1)
        if values.ndim > 1:
            m = np.broadcast_to(np.expand_dims(np.asarray(self.m), self.axis % values.ndim), values.shape)
        else:
            m = np.broadcast_to(np.asarray(self.m), values.shape)
        cols = {f"index_{k}": idx[k] for k in range(values.ndim)}
        cols.update(pvalue_adjusted=values.reshape(-1), family_size=np.asarray(m).reshape(-1),
                    method=np.full(values.size, self.method, dtype=object))
        return pa.table(cols)

    def to_pandas(self):
        require("pandas", what="to_pandas()")
        return self.to_arrow().to_pandas()

    def _repr_html_(self) -> str:
        return html_table(self.to_arrow(), f"AdjustedPValues(method={self.method}, shape={self.shape})")


def _adjust_pvalues_iv(pvalues, method, axis, level):
    name = correction_name(method, "method")
    p = _pvalues_iv(pvalues)
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or (p.ndim and not -p.ndim <= axis < p.ndim):
        raise InputError(f"`axis` must be an axis of `pvalues` (ndim {p.ndim}), got {axis!r}")
    if not (isinstance(level, (int, float, np.floating)) and 0 < level < 1):
        raise InputError(f"`level` must be a number in (0, 1), got {level!r}")
    return name, p


def adjust_pvalues(pvalues, method: str = "holm", *, axis: int = -1, level: float = 0.05) -> AdjustedPValues:
    """Adjusted p-values along ``axis``, as statsmodels' ``multipletests`` computes them.

    With the family's p-values sorted ascending, p_(1) <= ... <= p_(m), and j = 1..m:

    - ``bonferroni`` (``b``): min(1, m p); ``sidak`` (``s``): 1 - (1 - p)^m;
    - ``holm`` (``h``, Holm 1979): running maximum of (m - j + 1) p_(j); ``holm-sidak``
      (``hs``): running maximum of 1 - (1 - p_(j))^(m - j + 1);
    - ``simes-hochberg`` (``sh``, Hochberg 1988): running minimum from the top of
      (m - j + 1) p_(j); ``hommel`` (``ho``, Hommel 1988): statsmodels' algorithm, for each
      subset size k = m..2, c_k = min_i k p_(m-k+i) / i raised into the last k and
      min(k p, c_k) into the others;
    - ``fdr_bh`` (``bh``, Benjamini & Hochberg 1995): running minimum from the top of
      m p_(j) / j; ``fdr_by`` (Benjamini & Yekutieli 2001): the same times sum_{i<=m} 1/i;
    - ``fdr_tsbh``, ``fdr_tsbky`` (Benjamini, Krieger & Yekutieli 2006; one iteration, as
      statsmodels' default ``maxiter=1``): BH at level ``level`` (BKY: ``level / (1 + level)``)
      estimates m0 = m - R; BH again at the level times m / m0, its p-values times m0 / m
      (BKY: times 1 + level); with R = 0 or m the first stage's (BKY: times 1 + level);
    - ``fdr_gbs`` (Gavrilov, Benjamini & Sarkar 2009): q_j = (m + 1 - j) / j · p_(j) /
      (1 - p_(j)), a running maximum, then a running minimum from the top;
    - ``none``. Every result is capped at 1.

    The family is the non-NaN entries: a NaN (e.g. the p-value of the baseline compared with
    itself, which every fastrisk test reports as NaN) is skipped and stays NaN, so ``m``
    counts only real comparisons. The result records ``m`` (per family), ``method`` and ``axis``.

    Parameters
    ----------
    pvalues : array_like
        p-values in [0, 1] (NaN skipped), e.g. ``result.pvalue`` ``[alpha, system]``.
    method : str
        The correction: one of statsmodels' ``multipletests`` names or aliases (``holm``/``h``,
        ``bonferroni``/``b``, ``sidak``/``s``, ``holm-sidak``/``hs``, ``simes-hochberg``/``sh``,
        ``hommel``/``ho``, ``fdr_bh``/``bh``, ``fdr_by``, ``fdr_tsbh``, ``fdr_tsbky``,
        ``fdr_gbs``), or ``none``.
    axis : int
        The axis that holds one family (default: the last, systems, per alpha).
    level : float
        The FDR level of the two-stage procedures (statsmodels' ``alpha``; their adjusted
        p-values depend on it); unused by the others.

    Returns
    -------
    AdjustedPValues
        An array of the input's shape with attributes ``m``, ``method`` and ``axis``.

    References
    ----------
    S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6
    (1979). Y. Hochberg, Biometrika 75 (1988). G. Hommel, Biometrika 75 (1988).
    Y. Benjamini & Y. Hochberg, JRSS B 57 (1995). Y. Benjamini & D. Yekutieli, Ann. Statist. 29
    (2001). Y. Benjamini, A. Krieger & D. Yekutieli, Biometrika 93 (2006). J. Gavrilov,
    Y. Benjamini & S. Sarkar, Ann. Statist. 37 (2009). statsmodels'
    ``statsmodels.stats.multitest.multipletests``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrisk import adjust_pvalues
    >>> np.round(adjust_pvalues([0.01, 0.04, 0.03, np.nan], "holm"), 4).tolist()
    [0.03, 0.06, 0.06, nan]
    >>> adjust_pvalues([[0.01, 0.2], [0.02, 0.5], [0.04, 0.9]], "hs", axis=0).m.tolist()
    [3, 3]
    """
    method, p = _adjust_pvalues_iv(pvalues, method, axis, level)
    if p.ndim == 0:
        return AdjustedPValues(p.copy(), int(not np.isnan(p)), method, axis)
    p = np.moveaxis(p, axis, -1)
    flat = p.reshape(-1, p.shape[-1])
    out = np.full_like(flat, np.nan)
    sizes = np.zeros(flat.shape[0], dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):  # p = 1 (Šidák, GBS) and p = 0: limits, as statsmodels
        for row in range(flat.shape[0]):
            member = ~np.isnan(flat[row])
            sizes[row] = int(member.sum())
            out[row, member] = _adjust_1d(flat[row, member], method, level)
    out = np.moveaxis(out.reshape(p.shape), -1, axis)
    m = int(sizes[0]) if p.ndim == 1 else sizes.reshape(p.shape[:-1])
    return AdjustedPValues(out, m, method, axis)


def _bh_sorted(ps: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """BH's step-up on sorted p-values: running minimum from the top of p / factor."""
    return np.minimum.accumulate((ps / factor)[::-1])[::-1]


def _adjust_1d(p: np.ndarray, method: str, level: float = 0.05) -> np.ndarray:
    """One family's adjusted p-values, in statsmodels' expressions and order of operations."""
    m = p.shape[0]
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * float(m))
    if method == "sidak":
        return np.minimum(1.0, -np.expm1(m * np.log1p(-p)))
    order = np.argsort(p, kind="stable")
    ps = p[order]
    down = np.arange(m, 0, -1)  # m - j + 1
    ecdf = np.arange(1, m + 1) / float(m)  # j / m
    if method == "holm":
        adj = np.maximum.accumulate(ps * down)
    elif method == "holm-sidak":
        adj = np.maximum.accumulate(-np.expm1(down * np.log1p(-ps)))
    elif method == "simes-hochberg":
        adj = np.minimum.accumulate((down * ps)[::-1])[::-1]
    elif method == "hommel":
        adj = ps.copy()
        for k in range(m, 1, -1):
            c = np.min(k * ps[-k:] / np.arange(1, k + 1.0))
            adj[-k:] = np.maximum(adj[-k:], c)
            adj[:-k] = np.maximum(adj[:-k], np.minimum(k * ps[:-k], c))
    elif method == "fdr_bh":
        adj = _bh_sorted(ps, ecdf)
    elif method == "fdr_by":
        adj = _bh_sorted(ps, ecdf / np.sum(1.0 / np.arange(1, m + 1)))
    elif method in ("fdr_tsbh", "fdr_tsbky"):
        adj = _two_stage(ps, ecdf, level, method == "fdr_tsbky")
    elif method == "fdr_gbs":
        j = np.arange(1, m + 1)
        q = (m + 1.0 - j) / j * ps / (1.0 - ps)
        adj = np.minimum.accumulate(np.maximum.accumulate(q)[::-1])[::-1]
    else:  # pragma: no cover - correction_name admits only the names above
        raise InputError(f"unknown correction {method!r}")
    adj = np.minimum(adj, 1.0)
    out = np.empty_like(p)
    out[order] = adj
    return out


def _two_stage(ps: np.ndarray, ecdf: np.ndarray, level: float, bky: bool) -> np.ndarray:
    """statsmodels' ``fdrcorrection_twostage`` with ``maxiter=1`` on sorted p-values."""
    m = ps.shape[0]
    fact = 1.0 + level if bky else 1.0
    first = level / fact
    raw = _bh_sorted(ps, ecdf)
    raw[raw > 1] = 1
    rejected = int((ps <= ecdf * first).sum() and np.flatnonzero(ps <= ecdf * first).max() + 1)
    if rejected in (0, m):
        return raw * fact
    m0 = 1.0 * m - rejected
    adj = _bh_sorted(ps, ecdf)
    adj[adj > 1] = 1
    adj = adj * (m0 * 1.0 / m)
    return adj * (1.0 + level) if bky else adj


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
        The seed, recorded in the result as ``seed`` (``rng=res.seed`` reproduces ``res``).
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
    rseed = resolve_seed(rng)
    seed = rseed.kernel
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
                          systems=tuple(names), replicates=B, seed=rseed.recorded, statistic=diff, pvalue=pvalue, means=means,
                          null_distribution=null)
