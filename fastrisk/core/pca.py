"""Principal component analysis of a system x topic matrix (Dinçer, Ounis & Macdonald, ECIR 2014).

Systems are the observations and topics the variables; the matrix is centred by each topic's
mean over the systems (not scaled). Components come from NumPy's SVD of the centred matrix;
each component's sign is fixed so that its largest-magnitude loading is positive, which makes
the result deterministic. Extra points, e.g. virtual baselines (MEAN, MEDIAN, MAX), are
centred with the systems' topic means and projected into the same space; they do not
influence the components.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from fastrisk._runtime.validation import flag
from fastrisk.core.baselines import Baseline
from fastrisk.data.matrix import ScoreMatrix, as_matrix
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError


@dataclass(frozen=True, repr=False)
class PCAResult(Result):
    """``scores`` ``[system, component]``: the systems' coordinates on the first m components;
    ``components`` ``[component, topic]``: unit loadings over topics; ``explained_variance``
    and ``explained_variance_ratio`` ``[component]`` (variance with S - 1 degrees of freedom;
    ratios over the total variance); ``mean`` ``[topic]``: the topic means used for centring;
    ``extra_scores`` ``[extra, component]`` for the points named ``extra_names``.

    Long form (one row per system, component): ``system``, ``component`` (0-based),
    ``score``, ``explained_variance``, ``explained_variance_ratio``, ``singular_value``;
    ``to_arrow(("extra", "component"))`` gives the extra points' ``extra_score``;
    `coordinates` the wide map table (one row per point, ``pc1`` .. ``pcm``).
    """

    _coords = {"extra": {"extra": "extra_names"}}
    _table = ("system", "component")

    systems: tuple
    topics: tuple
    extra_names: tuple = param(doc="Names of the extra points projected onto the components (the ``extra`` dim).")
    center: bool = param(doc="Whether the topic means were subtracted before the decomposition.")
    scores: np.ndarray = array("system", "component", column="score", doc="The systems' coordinates on the first m "
                                                                          "components.")
    components: np.ndarray = array("component", "topic", column="loading", doc="Unit loadings of each component over "
                                                                               "the topics.")
    explained_variance: np.ndarray = array("component", doc="Variance along each component (S - 1 degrees of freedom).")
    explained_variance_ratio: np.ndarray = array("component", doc="Share of the total variance along each component.")
    singular_values: np.ndarray = array("component", column="singular_value", doc="Singular values of the (centred) "
                                                                                  "system x topic matrix.")
    mean: np.ndarray = array("topic", doc="Topic means used for centring (zeros when ``center`` is False).")
    extra_scores: np.ndarray = array("extra", "component", column="extra_score", doc="Coordinates of the extra points "
                                                                                     "``extra_names`` on the "
                                                                                     "components.")

    def transform(self, points) -> np.ndarray:
        """Project (k, c) points (or one (c,) point) into the component space."""
        pts = np.asarray(points, dtype=np.float64)
        if pts.ndim == 1:
            pts = pts[None, :]
        if pts.ndim != 2 or pts.shape[1] != len(self.topics):
            raise InputError(f"points must have one score per topic ({len(self.topics)}), got shape {pts.shape}")
        return (pts - self.mean) @ self.components.T

    def coordinates(self) -> pa.Table:
        """The PCA map: one row per point (systems, then extra points): name, kind, pc1 ... pcm."""
        names = list(self.systems) + list(self.extra_names)
        kinds = ["system"] * len(self.systems) + ["extra"] * len(self.extra_names)
        coords = np.vstack([self.scores, self.extra_scores])
        cols = {"name": pa.array(names, pa.string()), "kind": pa.array(kinds, pa.string())}
        for j in range(coords.shape[1]):
            cols[f"pc{j + 1}"] = coords[:, j]
        return pa.table(cols)


def _extra_points(extra, extra_names, n_topics):
    if extra is None:
        if extra_names is not None:
            raise InputError("`extra_names` given without `extra` points")
        return (), np.empty((0, n_topics))
    if isinstance(extra, Baseline):
        extra = [extra]
    if isinstance(extra, Mapping):
        names = [str(k) for k in extra]
        rows = [np.asarray(v.values if isinstance(v, Baseline) else v, dtype=np.float64).reshape(-1)
                for v in extra.values()]
    elif isinstance(extra, (list, tuple)) and extra and all(isinstance(b, Baseline) for b in extra):
        names = [b.name for b in extra]
        rows = [np.asarray(b.values, dtype=np.float64).reshape(-1) for b in extra]
    else:
        try:
            arr = np.asarray(extra, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"`extra` must be a (k, c) array, a mapping name -> scores or Baselines, "
                             f"got {type(extra).__name__}") from None
        if arr.ndim == 1:
            arr = arr[None, :]
        rows = list(arr) if arr.ndim == 2 else [arr]
        names = [f"extra{j + 1}" for j in range(len(rows))] if extra_names is None else [str(n) for n in extra_names]
        if len(names) != len(rows):
            raise InputError(f"`extra_names` has {len(names)} name(s) for {len(rows)} extra point(s)")
    for name, row in zip(names, rows):
        if row.shape != (n_topics,):
            raise InputError(f"extra point {name!r} must have one score per topic ({n_topics}), got "
                             f"{row.size} value(s) (a leave-one-out baseline has one row per system: "
                             "project it with `transform`)")
        if not np.isfinite(row).all():
            raise InputError(f"extra point {name!r} has non-finite scores")
    return tuple(names), np.vstack(rows) if rows else np.empty((0, n_topics))


def pca(matrix: ScoreMatrix, n_components: int | None = None, *, extra=None, extra_names=None,
        center: bool = True) -> PCAResult:
    """PCA of ``matrix`` with topics as variables (centred, not scaled).

    ``center=False`` decomposes the raw matrix (no topic means subtracted; ``mean`` is 0 and
    the ratios are s_j^2 / sum s^2): the uncentred decomposition whose percentages Dinçer,
    Ounis & Macdonald (ECIR 2014) report.

    ``n_components``: how many to keep (default: all, min(S, c)). ``extra``: points projected
    into the same space: a (k, c) array (named by ``extra_names``), a mapping name -> (c,)
    scores, or `Baseline` objects such as ``virtual_baseline(m, "mean")``.

    Parameters
    ----------
    matrix : ScoreMatrix
        Systems × topics; topics are the variables.
    n_components : int, optional
        Components kept (default: all, min(S, c)).
    extra : array_like or mapping or sequence of Baseline, optional
        Points projected into the same space.
    extra_names : sequence of str, optional
        Names of the rows of an ``extra`` array.
    center : bool
        Subtract the topic means (default); False for the uncentred decomposition.

    Returns
    -------
    PCAResult
        Scores of systems and extra points, components, explained variance ratios.

    References
    ----------
    Dinçer, B. T., Ounis, I. & Macdonald, C. (2014). Tackling biased baselines in the risk-sensitive evaluation
    of retrieval systems. ECIR 2014.

    Pearson, K. (1901). On lines and planes of closest fit to systems of points in space. Philosophical Magazine
    2(11), 559-572.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.pca(matrix, 2)
    >>> res.scores.shape, res.components.shape
    ((48, 2), (2, 50))
    >>> print(np.round(res.explained_variance_ratio, 3))
    [0.287 0.135]
    """
    matrix = as_matrix(matrix)
    S, c = matrix.shape
    if S < 2:
        raise InputError(f"PCA needs at least 2 systems; the matrix has {S}")
    full = min(S, c)
    if n_components is None:
        n_components = full
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral) \
            or not 1 <= n_components <= full:
        raise InputError(f"`n_components` must be an integer in [1, {full}] (min of systems and topics), "
                         f"got {n_components!r}")
    flag(center, "center")
    names, points = _extra_points(extra, extra_names, c)
    X = matrix.values
    mean = X.mean(axis=0) if center else np.zeros(c)
    centred = X - mean
    U, s, Vt = np.linalg.svd(centred, full_matrices=False)
    signs = np.sign(Vt[np.arange(Vt.shape[0]), np.argmax(np.abs(Vt), axis=1)])
    signs[signs == 0] = 1.0
    Vt = Vt * signs[:, None]
    var = s ** 2 / (S - 1)
    total = var.sum()
    ratio = var / total if total > 0 else np.zeros_like(var)
    m = int(n_components)
    comps = np.ascontiguousarray(Vt[:m])
    return PCAResult(systems=matrix.systems, topics=matrix.topics, center=bool(center), scores=centred @ comps.T, components=comps,
                     explained_variance=var[:m], explained_variance_ratio=ratio[:m], singular_values=s[:m],
                     mean=mean, extra_names=names, extra_scores=(points - mean) @ comps.T)
