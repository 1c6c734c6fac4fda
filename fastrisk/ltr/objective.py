r"""Risk-sensitive LambdaRank objectives (URisk, SARO, FARO) for LightGBM.

LambdaRank (Burges 2010), as LightGBM's ``lambdarank`` objective defines it: for every pair
(h, l) of a query with grade(h) > grade(l) and at least one of them in the top
``truncation_level`` of the current ranking, with ρ = 1 / (1 + exp(σ (s_h − s_l))),

    λ_h −= σ ρ |ΔNDCG| w,   λ_l += σ ρ |ΔNDCG| w,   h_h, h_l += σ² ρ (1 − ρ) |ΔNDCG| w,

|ΔNDCG| = (2^{l_h} − 1 − 2^{l_l} + 1) |D(r_h) − D(r_l)| / maxDCG@truncation_level,
D(r) = 1 / log2(2 + r), divided by 0.01 + |s_h − s_l| when ``norm`` (LightGBM's
``lambdarank_norm``), and every λ, h of the query finally scaled by log2(1 + S) / S with S
the query's Σ 2σρ|ΔNDCG|. Plain LambdaRank has w = 1.

Risk-sensitive swap weight (Wang, Bennett & Collins-Thompson, SIGIR 2012). Their
objective over the N training queries is T = (1/N)[Σ_{d_q ≥ 0} d_q + (1 + α) Σ_{d_q < 0} d_q]
with d_q = M_q − B_q the difference between the model's and the baseline's measure (here
nDCG@k) on query q — URisk. Per query the contribution is f(d_q) with f(x) = x for x ≥ 0
and (1 + α) x for x < 0. Swapping the pair changes M_q by ΔM (signed) and T_q by
ΔT = f(d + ΔM) − f(d):

- no crossing, d, d + ΔM ≥ 0:        ΔT = ΔM
- no crossing, d, d + ΔM < 0:        ΔT = (1 + α) ΔM
- win → loss (d ≥ 0 > d + ΔM):       ΔT = ΔM + α (d + ΔM), |ΔT| = |ΔM| + α |d + ΔM|
- loss → win (d < 0 ≤ d + ΔM):       ΔT = ΔM − α d,       |ΔT| = |ΔM| + α |d|

All four are |ΔT| = |ΔM| (1 + α φ) with φ ∈ [0, 1] the share of the interval between d and
d + ΔM that lies below 0 (φ = 1[d < 0] when ΔM = 0, e.g. both documents below rank k).
The objective uses w = 1 + α φ on LambdaRank's |ΔNDCG| (the constant 1/N is dropped, as
LambdaRank drops it). φ is evaluated on the measure (nDCG@k of the current ranking against
the baseline's), the λ magnitude stays LambdaRank's, so α = 0 is LambdaRank exactly.

Adaptive variants (Dinçer, Macdonald & Ounis, SIGIR 2014, section 6): after the first
boosting iteration, TR_q = x_q / s_x of the model against the baseline at α
(`fastrisk.topic_risk`) gives α'_q = [1 − Φ(TR_q)] α (`fastrisk.adaptive_risk`),
fixed for the remaining iterations; the first iteration uses α'_q = α. SARO replaces α by
α'_q in the URisk weight above (losses only); FARO weights every swap of query q by
w = 1 + α'_q.
"""

from __future__ import annotations

import numbers
import re

import numpy as np

from fastrisk._kernels import ltr as _k
from fastrisk._runtime.threads import limit_threads
from fastrisk.core.urisk import adaptive_risk
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError

KINDS = ("lambdarank", "urisk", "saro", "faro")
#: LightGBM's default label gains 2^l - 1, l = 0..30.
DEFAULT_GAINS = 2.0 ** np.arange(31) - 1.0
_NDCG = re.compile(r"^\s*ndcg@(\d+)\s*$", re.IGNORECASE)


def parse_ndcg(measure) -> int:
    """The cutoff k of ``"nDCG@k"`` (the only measure the objectives and the evaluation use)."""
    m = _NDCG.match(measure) if isinstance(measure, str) else None
    if m is None or int(m.group(1)) < 1:
        raise InputError(f"`measure` must be 'nDCG@k' with k >= 1, got {measure!r}")
    return int(m.group(1))


def check_gains(label_gain, labels=None) -> np.ndarray:
    gains = DEFAULT_GAINS if label_gain is None else np.asarray(label_gain, dtype=np.float64)
    if gains.ndim != 1 or gains.size == 0 or not np.isfinite(gains).all():
        raise InputError("`label_gain` must be a non-empty list of finite gains, one per grade")
    if labels is not None and labels.size and labels.max() >= gains.size:
        raise InputError(f"grade {int(labels.max())} has no gain: `label_gain` covers grades 0..{gains.size - 1}")
    return gains


def check_groups(labels, group, what: str = "training data") -> tuple[np.ndarray, np.ndarray]:
    """Integer labels (>= 0) and query boundaries from LightGBM-style ``group`` sizes."""
    y = np.asarray(labels, dtype=np.float64)
    if y.ndim != 1:
        raise InputError(f"the labels of the {what} must be one-dimensional")
    bad = ~np.isfinite(y) | (y < 0) | (y != np.round(y))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"the labels of the {what} must be integer grades >= 0; document {i} has {y[i]}")
    if group is None:
        raise InputError(f"the {what} has no query groups (give `group` to the LightGBM Dataset)")
    g = np.asarray(group)
    if g.ndim != 1 or g.size == 0 or (g < 1).any() or int(g.sum()) != y.size:
        raise InputError(f"the query sizes of the {what} must be positive and add up to its {y.size} documents")
    return y.astype(np.int64), np.concatenate([[0], np.cumsum(g)]).astype(np.int64)


def _inverse(x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    np.divide(1.0, x, out=out, where=x > 0)
    return out


def query_ndcg(scores, labels, boundaries, ks, gains, threads=None) -> np.ndarray:
    """nDCG@k of the ranking by ``scores`` (stable; 1 for queries without gain).

    Parameters
    ----------
    scores : array_like of float
        One score per document.
    labels : ndarray of int
        Relevance grades.
    boundaries : ndarray of int
        Query boundaries (n_queries + 1 offsets).
    ks : sequence of int
        The cut-offs k.
    gains : ndarray of float
        Gain of each grade.
    threads : int, optional
        Numba threads (default: all cores).

    Returns
    -------
    ndarray, shape (n_queries, len(ks))
    """
    ks = np.asarray(ks, dtype=np.int64)
    inv = np.stack([_inverse(_k.ideal_dcg(labels, boundaries, gains, int(k))) for k in ks], axis=1)
    with limit_threads(threads, labels.size * 8):
        return _k.ndcg(np.ascontiguousarray(scores, dtype=np.float64), labels, boundaries, gains, ks, inv)


class LambdaObjective:
    """A LightGBM custom objective: ``lgb.train({"objective": obj, ...}, train_set)``.

    Called as ``obj(preds, train_set)`` it returns the gradients and Hessians of the current
    scores. The query groups and labels are read from ``train_set`` at the first call; a
    call with all scores equal (the start of a training) restarts the adaptive state, so
    one objective can train several models one after the other. After the first iteration
    ``adaptive_alpha`` holds the SARO/FARO per-query α'_q.
    """

    def __init__(self, kind, alpha, baseline, k, sigmoid, truncation_level, norm, gains, threads):
        self.kind = kind
        self.alpha = alpha
        self.k = k
        self.measure = f"nDCG@{k}"
        self.sigmoid = sigmoid
        self.truncation_level = truncation_level
        self.norm = norm
        self.gains = gains
        self.threads = threads
        self._baseline_scores = baseline
        self._ready = False
        self._data_id = None
        self.adaptive_alpha = None
        self.iteration = 0

    def __repr__(self) -> str:
        return (f"LambdaObjective(kind={self.kind!r}, alpha={self.alpha}, measure={self.measure!r}, "
                f"truncation_level={self.truncation_level}, norm={self.norm}, sigmoid={self.sigmoid})")

    # ------------------------------------------------------------------ set-up
    def _setup(self, labels, group) -> None:
        y, bounds = check_groups(labels, group)
        check_gains(self.gains, y)
        if self._baseline_scores is not None and len(self._baseline_scores) != y.size:
            raise InputError(f"`baseline` has {len(self._baseline_scores)} scores but the training data has "
                             f"{y.size} documents")
        self.labels, self.boundaries = y, bounds
        nq = bounds.size - 1
        self.inv_max_dcg = _inverse(_k.ideal_dcg(y, bounds, self.gains, self.truncation_level))
        self.inv_idcg_k = _inverse(_k.ideal_dcg(y, bounds, self.gains, self.k))
        if self._baseline_scores is not None:
            self.baseline_measure = query_ndcg(self._baseline_scores, y, bounds, [self.k], self.gains,
                                               self.threads)[:, 0]
        else:
            self.baseline_measure = np.zeros(nq)
        sizes = np.diff(bounds)
        depth = sizes if self.truncation_level <= 0 else np.minimum(sizes, self.truncation_level)
        self._work = int((sizes * depth).sum())
        self._ready = True
        self.reset()

    def reset(self) -> None:
        """Forget the adaptive weights: the next call is a first iteration."""
        self.iteration = 0
        self.adaptive_alpha = None
        if self._ready:
            self.alpha_q = np.full(self.boundaries.size - 1, 0.0 if self.kind == "lambdarank" else self.alpha)

    def _adapt(self, scores) -> None:
        """SARO/FARO: α'_q from TR_q of the current model against the baseline (fastrisk.adaptive_risk)."""

        model = query_ndcg(scores, self.labels, self.boundaries, [self.k], self.gains, self.threads)[:, 0]
        nq = model.size
        matrix = ScoreMatrix(np.vstack([model, self.baseline_measure]), ["model", "baseline"], range(nq),
                             self.measure)
        res = adaptive_risk(matrix, "baseline", alpha=[self.alpha], method=self.kind, threads=self.threads)
        self.adaptive_alpha = np.asarray(res.adaptive_alpha[0, 0], dtype=np.float64)
        self.alpha_q = self.adaptive_alpha.copy()

    # ------------------------------------------------------------------ gradients
    def gradients(self, scores, labels=None, group=None):
        """(gradients, Hessians, model nDCG@k per query) at ``scores``.

        ``labels``/``group`` (query sizes) are needed the first time (or to change data).
        """
        if labels is not None:
            self._setup(labels, group)
        elif not self._ready:
            raise InputError("the first call needs the `labels` and `group` of the training data")
        s = np.ascontiguousarray(scores, dtype=np.float64)
        if s.ndim != 1 or s.size != self.labels.size:
            raise InputError(f"`scores` must have one value per training document ({self.labels.size}), "
                             f"got shape {s.shape}")
        if not np.isfinite(s).all():
            raise InputError("`scores` must be finite")
        if s.size and s.min() == s.max():
            self.reset()
        if self.kind in ("saro", "faro") and self.iteration == 1 and self.alpha > 0:
            self._adapt(s)
        with limit_threads(self.threads, self._work):
            grad, hess, m = _k.lambdarank_gradients(
                s, self.labels, self.boundaries, self.gains, self.inv_max_dcg, float(self.sigmoid),
                int(self.truncation_level), bool(self.norm), self.baseline_measure, self.alpha_q,
                self.kind == "faro", self.k, self.inv_idcg_k)
        self.iteration += 1
        return grad, hess, m

    def __call__(self, preds, train_data):
        labels = group = None
        if not self._ready or self._data_id != id(train_data):
            labels, group = train_data.get_label(), train_data.get_group()
        grad, hess, _ = self.gradients(preds, labels, group)
        self._data_id = id(train_data)
        return grad, hess


def _objective_iv(kind, alpha, baseline, measure, sigmoid, truncation_level, norm, label_gain):
    if kind not in KINDS:
        raise InputError(f"`kind` must be one of {', '.join(KINDS)}, got {kind!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not np.isfinite(alpha) or alpha < 0:
        raise InputError(f"`alpha` must be a number >= 0, got {alpha!r}")
    if kind == "lambdarank" and alpha != 0:
        raise InputError(f"`alpha` must be 0 for kind='lambdarank' (use 'urisk', 'saro' or 'faro'), got {alpha}")
    k = parse_ndcg(measure)
    if not (isinstance(sigmoid, numbers.Real) and sigmoid > 0):
        raise InputError(f"`sigmoid` must be a number > 0, got {sigmoid!r}")
    if truncation_level is None:
        truncation_level = 0
    if isinstance(truncation_level, bool) or not isinstance(truncation_level, numbers.Integral) \
            or truncation_level < 0:
        raise InputError(f"`truncation_level` must be a positive integer or None (all pairs), got "
                         f"{truncation_level!r}")
    if not isinstance(norm, (bool, np.bool_)):
        raise InputError(f"`norm` must be True or False, got {norm!r}")
    gains = check_gains(label_gain)
    base = None
    if baseline is not None:
        base = np.asarray(baseline, dtype=np.float64)
        if base.ndim != 1:
            raise InputError("`baseline` must be one score per training document (a 1-d array)")
        if not np.isfinite(base).all():
            i = int(np.argmax(~np.isfinite(base)))
            raise InputError(f"`baseline` scores must be finite; document {i} has {base[i]}")
    elif kind != "lambdarank":
        raise InputError(f"kind={kind!r} needs a `baseline`: one score per training document "
                         "(e.g. fastrisk.ltr.baseline_scores(train, feature=...))")
    return float(alpha), base, k, float(sigmoid), int(truncation_level), bool(norm), gains


def objective(kind: str = "lambdarank", *, alpha: float = 0.0, baseline=None, measure: str = "nDCG@10",
              sigmoid: float = 1.0, truncation_level: int | None = 30, norm: bool = True, label_gain=None,
              threads: int | None = None) -> LambdaObjective:
    """A LambdaRank objective for LightGBM, plain or risk-sensitive against ``baseline``.

    Parameters
    ----------
    kind : "lambdarank", "urisk", "saro" or "faro"
        Plain LambdaRank (LightGBM's built-in ``lambdarank``), URisk (Wang et al. 2012), or
        the semi-/fully adaptive weights of Dinçer, Macdonald & Ounis (SIGIR 2014).
    alpha : float
        Risk weight α >= 0 (0 for ``lambdarank``; ``urisk`` with α = 0 is LambdaRank).
    baseline : array
        One baseline score per training document (in the Dataset's order), e.g. a BM25
        feature column; its nDCG@k per query is B_q.
    measure : "nDCG@k"
        The measure M of the risk weights (d_q = M_q − B_q).
    sigmoid, truncation_level, norm, label_gain
        As LightGBM's ``sigmoid``, ``lambdarank_truncation_level`` (None: all pairs),
        ``lambdarank_norm`` and ``label_gain`` (default 2^l − 1).
    threads : int, optional
        Numba threads of the gradient kernel.

    Returns
    -------
    LambdaObjective
        A callable ``(preds, dataset) -> (grad, hess)`` for ``lightgbm.train``.

    The formulas and the derivation of the risk-sensitive swap weight are in the module
    docstring (`fastrisk.ltr.objective`).
    """
    alpha, base, k, sigmoid, trunc, norm, gains = _objective_iv(kind, alpha, baseline, measure, sigmoid,
                                                               truncation_level, norm, label_gain)
    return LambdaObjective(kind, alpha, base, k, sigmoid, trunc, norm, gains, threads)
