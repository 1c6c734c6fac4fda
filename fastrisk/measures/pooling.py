"""Pooling bias and score adjustment (Webber & Park, SIGIR 2009), on dense-id runs.

* `build_pool` — the depth-k membership index: one bit per (document, system), so
  the pool of any subset of systems is a bitwise test, never a set union.
* `score_against_pool` — score runs when only a subset's pool is judged, unjudged
  documents *assumed irrelevant* or removed (*condensed*, padded with non-relevant ones).
* `leave_one_out` — each system scored against the pool of all the others.
* `loo_adjustment` (Algorithm 1) and `common_topic_adjustment` (Algorithm 2,
  variance eqs. 3/7 and the accuracy condition eq. 6).
* `pooling_experiment` (Algorithm 3 and the Figure 1 bias study): MAE tables for
  unadjusted, mixed, adjusted (common topics) and leave-one-out adjusted estimates.
* `pooling_comparison`: the same experiment for several measures on the same draws, so the
  measures built for incomplete judgments — bpref (Buckley & Voorhees, SIGIR 2004), infAP
  (Yilmaz & Aslam, CIKM 2006), condensed lists (``judged_only=True``, Sakai, SIGIR 2007) —
  sit in one bias and MAE table beside the adjusted scores of AP or RBP.

Conventions. The *true* score of a run is its score against all the qrels (same mode);
the *unpooled* score is its score against the pool of the sampled systems, which excludes
it. Topics without a positive judgment are left out, as in `fastrisk.measures.metrics.evaluate`.

The bias of a run is ``true - unpooled`` (positive: the pool under-rates it). Eq. 6 is read
as: the common-topic adjustment is expected to help when the squared bias exceeds the
adjusted estimator's variance ``(N - n)/(n N) * sigma_a^2``.

Two options follow the paper's protocol or depart from it, each named after what it does:

* ``pooled_unjudged``: what a document inside the pool but absent from the qrels counts as.
  ``"unjudged"`` (default): it stays unjudged, so the mode decides (assumed irrelevant, or
  removed by condensed scoring). ``"nonrelevant"``: Webber & Park's protocol (SIGIR
  2009): a pooled document is judged, and one the qrels do not grade is judged
  non-relevant, so condensed scoring keeps it in the ranking. Then a document counts as
  judged in an unpooled score when it is in the sampled systems' pool, and in the true score
  when it is graded or in the pool of all the systems. Under ``mode="assumed"`` both
  choices give the same numbers, except RBP's residual (which counts unjudged documents).
* ``ideal``: where the normaliser of nDCG (the ideal DCG) and of AP, R-precision and recall
  (R) comes from in a pooled score. ``"pool"`` (default): the positive judgments inside the
  pool scored against, which is what an experimenter who judged only that pool can compute.
  ``"full"``: every positive judgment of the topic, as the true score uses, so a pooled score
  differs from the true one only through the unjudged documents of the ranking. Measures
  without a normaliser (P, RBP, ERR, RR) are the same under both.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from fastrisk._kernels import _interrupt
from fastrisk._kernels import metrics as _km
from fastrisk._kernels import pooling as _kp
from fastrisk._kernels._jit import run_strided
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.threads import limit_threads, thread_count
from fastrisk._runtime.validation import choice, positive_int
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.data.results import Result, array, param
from fastrisk.data.runs import RunSet
from fastrisk.errors import InputError
from fastrisk.measures.metrics import (
    Measure,
    _as_qrels,
    _as_runs,
    _check_err_grades,
    judgments,
    parse_measure,
    topic_normalisers,
)

__all__ = [
    "Pool", "build_pool", "score_against_pool", "leave_one_out", "LeaveOneOut",
    "loo_adjustment", "LooAdjustment", "common_topic_adjustment", "CommonTopicAdjustment",
    "pooling_experiment", "PoolingExperiment", "pooling_comparison", "PoolingComparison",
]

MODES = {"assumed": _km.MODE_ASSUMED, "condensed": _km.MODE_CONDENSED}
#: What a pooled document without a judgment counts as (see the module doc).
POOLED_UNJUDGED = ("unjudged", "nonrelevant")
#: Where a pooled score's normaliser (ideal DCG, R) comes from (see the module doc).
IDEALS = ("pool", "full")
DEFAULT_WIDTHS = (2, 4, 10, 20, 40)
DEFAULT_COMMON = (10, 20, 40, 100)


# ---------------------------------------------------------------------------------------
# the membership index


@dataclass(frozen=True, eq=False)
class Pool:
    """Depth-``depth`` pool membership of every system of ``runs``.

    ``member[pool_offsets[t] + d, s // 64] >> (s % 64) & 1`` is 1 when system ``s`` ranks
    document ``d`` of topic ``t`` in its top ``depth``.
    """

    runs: RunSet
    depth: int
    pool_offsets: np.ndarray
    member: np.ndarray

    @property
    def n_words(self) -> int:
        return self.member.shape[1]

    def mask(self, systems=None) -> np.ndarray:
        """Bitmask of a subset of systems (names or positions; None = all)."""
        idx = range(self.runs.n_systems) if systems is None else [self.runs._system_index(s) for s in systems]
        m = np.zeros(self.n_words, dtype=np.uint64)
        for s in idx:
            m[s >> 6] |= np.uint64(1) << np.uint64(s & 63)
        return m

    def documents(self, topic, systems=None) -> list[str]:
        """Names of the documents of ``topic`` in the pool of ``systems`` (None = all)."""
        t = self.runs.topics.index(str(topic)) if not isinstance(topic, (int, np.integer)) else int(topic)
        m = self.mask(systems)
        lo, hi = int(self.pool_offsets[t]), int(self.pool_offsets[t + 1])
        hits = np.flatnonzero((self.member[lo:hi] & m).any(axis=1))
        return [self.runs.docid(t, int(d)) for d in hits]


def _depth_iv(depth) -> int:
    return positive_int(depth, "depth")


def build_pool(runs: RunSet, depth: int = 10) -> Pool:
    """The depth-``depth`` membership index of ``runs`` (cached on the RunSet).

    Parameters
    ----------
    runs : RunSet
        The runs.
    depth : int
        Pool depth.

    Returns
    -------
    Pool
        Membership of each pooled document, per topic.

    References
    ----------
    Webber, W. & Park, L. A. F. (2009). Score adjustment for correction of pooling bias. SIGIR 2009.

    Voorhees, E. M. & Harman, D. K. (eds.) (2005). TREC: Experiment and Evaluation in Information Retrieval. MIT
    Press.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> pool = fastrisk.build_pool(runs, 10)
    >>> pool.depth
    10
    """
    depth = _depth_iv(depth)
    key = ("pool", depth)
    hit = runs._cache.get(key)
    if hit is not None:
        return hit
    sizes = runs.pool_size(depth)
    offsets = np.zeros(runs.n_topics + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    nwords = max(1, (runs.n_systems + 63) // 64)
    member = np.zeros((int(offsets[-1]), nwords), dtype=np.uint64)
    _kp.build_membership(runs.docs, runs.lengths, offsets, depth, member)
    pool = Pool(runs, depth, offsets, member)
    runs._cache[key] = pool
    return pool


@dataclass(frozen=True, eq=False)
class _Context:
    """Everything the pooled-scoring kernels need, for one (runs, qrels, depth, measure, mode,
    pooled_unjudged, ideal)."""

    runs: RunSet
    pool: Pool
    grades: np.ndarray
    pos_offsets: np.ndarray
    pos_ids: np.ndarray
    ideal_norm: np.ndarray
    max_pos: int
    topic_idx: np.ndarray
    measure: Measure
    k: int
    mode: int
    true_scores: np.ndarray = field(repr=False)

    def kernel_tail(self):
        code, p, rel, maxg, residual = self.measure.kernel_args()
        return self.mode, code, self.k, p, rel, maxg, residual

    def data(self):
        r = self.runs
        return (r.docs, r.lengths, r.doc_offsets, self.grades, self.pool.member,
                self.pool.pool_offsets, self.pos_offsets, self.pos_ids, self.ideal_norm)


def _mode_iv(mode) -> int:
    if mode not in MODES:
        raise InputError(f"`mode` must be one of {', '.join(MODES)}; got {mode!r}")
    return MODES[mode]


def _options_iv(pooled_unjudged, ideal) -> None:
    choice(pooled_unjudged, "pooled_unjudged", POOLED_UNJUDGED)
    choice(ideal, "ideal", IDEALS)


def _pooled_as_judged(runs: RunSet, pool: Pool, grades: np.ndarray) -> np.ndarray:
    """``grades`` with every document of the all-systems pool that has no judgment (-1) set to
    0: judged non-relevant (Webber & Park's protocol)."""
    out = grades.copy()
    for t in range(runs.n_topics):
        lo = int(runs.doc_offsets[t])
        npool = int(pool.pool_offsets[t + 1] - pool.pool_offsets[t])
        g = out[lo:lo + npool]
        g[g < 0] = 0
    return out


def _context(runs, qrels, measure, depth, mode, pooled_unjudged="unjudged", ideal="pool") -> _Context:
    mode_code = _mode_iv(mode)
    _options_iv(pooled_unjudged, ideal)
    runs = _as_runs(runs)
    qrels = _as_qrels(qrels)
    measure = parse_measure(measure)
    if measure.judged_only:  # a condensed-list measure (trec_eval -J) is scored condensed in any mode
        mode_code = _km.MODE_CONDENSED
    pool = build_pool(runs, depth)
    j, judged = judgments(runs, qrels, measure)
    topic_idx = np.flatnonzero(j.has_relevant).astype(np.int64)
    if topic_idx.size == 0:
        raise InputError("no topic of the runs has a positive judgment in the qrels")
    # positive judged documents inside the all-systems pool (for pooled nDCG ideals)
    pos_ids, pos_offsets = [], [0]
    for t in range(runs.n_topics):
        npool = int(pool.pool_offsets[t + 1] - pool.pool_offsets[t])
        g = j.grades[runs.doc_offsets[t]:runs.doc_offsets[t] + npool]
        ids = np.flatnonzero(g > 0)
        pos_ids.append(ids)
        pos_offsets.append(pos_offsets[-1] + len(ids))
    pos_offsets = np.asarray(pos_offsets, dtype=np.int64)
    pos = np.concatenate(pos_ids).astype(np.int64) if pos_ids else np.zeros(0, np.int64)
    max_pos = int(np.diff(pos_offsets).max()) if runs.n_topics else 0
    _check_err_grades(qrels, measure)
    k = measure.depth(runs.depth)
    code, p, rel, maxg, residual = measure.kernel_args()
    full_norm = topic_normalisers(j, judged, measure, k)  # from every judgment of the topic
    grades = _pooled_as_judged(runs, pool, j.grades) if pooled_unjudged == "nonrelevant" else j.grades
    true = np.empty((runs.n_systems, runs.n_topics), dtype=np.float64)
    run_strided(_km.score_all, thread_count(true.size * k), runs.docs, runs.lengths, runs.doc_offsets, grades,
                full_norm, code, k, p, rel, maxg, residual, mode_code, true)
    ideal_norm = full_norm if ideal == "full" else np.full_like(full_norm, np.nan)
    return _Context(runs, pool, grades, pos_offsets, pos, ideal_norm, max_pos, topic_idx, measure, k,
                    mode_code, true)


def _systems_iv(runs: RunSet, systems, name: str) -> np.ndarray:
    if systems is None:
        return np.arange(runs.n_systems, dtype=np.int64)
    if isinstance(systems, (str, int, np.integer)):
        systems = [systems]
    idx = [runs._system_index(s) for s in systems]
    if len(set(idx)) != len(idx):
        raise InputError(f"`{name}` names a system twice")
    if not idx:
        raise InputError(f"`{name}` must name at least one system")
    return np.asarray(idx, dtype=np.int64)


# ---------------------------------------------------------------------------------------
# scoring against a pool


def score_against_pool(runs, qrels, measure="RBP(rel=1,p=0.8)@10", *, pool_systems=None, depth=10,
                       mode="assumed", systems=None, pooled_unjudged="unjudged", ideal="pool",
                       threads=None) -> ScoreMatrix:
    """Scores of ``systems`` when only the depth-``depth`` pool of ``pool_systems`` is judged.

    Webber & Park (SIGIR 2009): a document outside the pool is unjudged even if the qrels
    grade it.

    Parameters
    ----------
    runs, qrels
        A `RunSet` (or run files) and the qrels.
    measure : str
        Measure name as ir_measures writes it (default RBP(rel=1,p=0.8)@10, the paper's).
    pool_systems : sequence, optional
        Names or positions of the pooled systems (default: all).
    depth : int
        Pool depth.
    mode : {"assumed", "condensed"}
        Unjudged documents assumed irrelevant, or removed from the ranking (condensed).
    systems : sequence, optional
        The systems to score (default: all).
    pooled_unjudged : {"unjudged", "nonrelevant"}
        What a pooled document absent from the qrels counts as: unjudged (default), or
        judged non-relevant as in Webber & Park's protocol (condensed scoring keeps it).
    ideal : {"pool", "full"}
        Normaliser of nDCG/AP/R-prec/recall from the positive judgments inside the pool
        (default) or from every positive judgment of the topic.
    threads : int, optional
        Numba threads (default: all).

    Returns
    -------
    ScoreMatrix
        Systems x judged topics (topics with a positive judgment).

    References
    ----------
    Webber, W. & Park, L. A. F. (2009). Score adjustment for correction of pooling bias. SIGIR 2009.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> m = fastrisk.score_against_pool(runs, qrels, 'AP', pool_systems=runs.systems[:2], depth=10)
    >>> m
    ScoreMatrix(4 systems x 50 topics, measure='AP (pool depth 10, assumed)')
    >>> print(np.round(m.values.mean(axis=1), 4))
    [0.3497 0.304  0.3492 0.2928]
    """

    ctx = _context(runs, qrels, measure, depth, mode, pooled_unjudged, ideal)
    runs = ctx.runs
    sys_idx = _systems_iv(runs, systems, "systems")
    mask = ctx.pool.mask(_systems_iv(runs, pool_systems, "pool_systems").tolist())
    options = (", pooled unjudged = non-relevant" if pooled_unjudged == "nonrelevant" else "") + (
        ", ideal from every judgment" if ideal == "full" else "")
    out = np.empty((len(sys_idx), len(ctx.topic_idx)), dtype=np.float64)
    with limit_threads(threads):
        run_strided(_kp.pooled_scores, thread_count(out.size * ctx.k, threads), sys_idx, ctx.topic_idx, *ctx.data(),
                    ctx.max_pos, mask, *ctx.kernel_tail(), out)
    return ScoreMatrix(out, [runs.systems[i] for i in sys_idx], [runs.topics[i] for i in ctx.topic_idx],
                       measure=f"{ctx.measure.name} (pool depth {ctx.pool.depth}, {mode}{options})")


@dataclass(frozen=True, repr=False)
class LeaveOneOut(Result):
    """Each system's mean score against all judgments (``true``) and against the pool of the
    other systems (``unpooled``); ``bias = true - unpooled``; arrays ``[system]``.

    Long form (one row per system): ``system``, ``true``, ``unpooled``, ``bias``.
    """

    _derived = {"bias": ("system",)}

    systems: tuple
    measure: str
    depth: int = param(doc="Pool depth k: the top k documents of each pooled run are judged.")
    mode: str = param(doc="How unjudged documents are scored: ``assumed`` (assumed irrelevant) or ``condensed`` "
                          "(removed).")
    pooled_unjudged: str = param(doc="What a pooled document absent from the qrels counts as: ``unjudged`` or "
                                     "``nonrelevant`` (Webber & Park's protocol).")
    ideal: str = param(doc="Where a pooled score's normaliser (ideal DCG, R) comes from: ``pool`` (the judged pool) or "
                           "``full`` (every positive judgment).")
    true: np.ndarray = array("system", doc="Each system's mean score against all judgments.")
    unpooled: np.ndarray = array("system", doc="Each system's mean score against the pool of the other systems.")

    @property
    def bias(self) -> np.ndarray:
        return self.true - self.unpooled


def leave_one_out_means(ctx: _Context, held_out: np.ndarray, pool_mask: np.ndarray, threads=None) -> np.ndarray:
    """Mean unpooled score of ``held_out[i]`` against the pool of ``pool_mask`` minus itself
    (inside ``limit_threads(threads)``)."""
    out = np.empty(len(held_out), dtype=np.float64)
    with _interrupt.stoppable() as stop:
        run_strided(_kp.leave_one_out_scores, thread_count(out.size * ctx.topic_idx.size * ctx.k, threads),
                    np.asarray(held_out, np.int64), pool_mask, ctx.topic_idx, *ctx.data(), ctx.max_pos,
                    *ctx.kernel_tail(), out, stop)
    return out


def leave_one_out(runs, qrels, measure="RBP(rel=1,p=0.8)@10", *, depth=10, mode="assumed",
                  systems=None, pooled_unjudged="unjudged", ideal="pool", threads=None) -> LeaveOneOut:
    """Score every system (or ``systems``) against the pool of all the *other* systems.

    Parameters
    ----------
    runs, qrels, measure, depth, mode, systems, pooled_unjudged, ideal, threads
        As in `score_against_pool`.

    Returns
    -------
    LeaveOneOut
        ``true`` and ``unpooled`` mean scores ``[system]``.

    References
    ----------
    Zobel, J. (1998). How reliable are the results of large-scale information retrieval experiments? SIGIR 1998.

    Webber, W. & Park, L. A. F. (2009). Score adjustment for correction of pooling bias. SIGIR 2009.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> res = fastrisk.leave_one_out(runs, qrels, 'AP', depth=10)
    >>> print(np.round(res.bias, 3))
    [-0.207 -0.178 -0.227 -0.183]
    """

    ctx = _context(runs, qrels, measure, depth, mode, pooled_unjudged, ideal)
    idx = _systems_iv(ctx.runs, systems, "systems")
    with limit_threads(threads):
        unpooled = leave_one_out_means(ctx, idx, ctx.pool.mask(), threads)
    true = ctx.true_scores[idx][:, ctx.topic_idx].mean(axis=1)
    return LeaveOneOut(systems=tuple(ctx.runs.systems[i] for i in idx), measure=ctx.measure.name,
                       depth=ctx.pool.depth, mode=mode, pooled_unjudged=pooled_unjudged, ideal=ideal,
                       true=true, unpooled=unpooled)


# ---------------------------------------------------------------------------------------
# Algorithm 1 and Algorithm 2


@dataclass(frozen=True, repr=False)
class LooAdjustment(Result):
    """Algorithm 1: ``estimate = unpooled + adjustment``, the adjustment being the mean over
    pooled systems ``s`` of (score on the full pool - score on the pool with ``s`` replaced by
    the new run). ``deltas[i]`` (``[system]``) belongs to ``pooled[i]``.

    Long form (one row per pooled system): ``system``, ``delta``.
    """

    _coords = {"system": {"system": "pooled"}}

    new: str = param(doc="Name of the run being adjusted (not in the pool).")
    pooled: tuple = param(doc="Names of the pooled systems (the labels of ``deltas``).")
    pooled_unjudged: str = param(doc="What a pooled document absent from the qrels counts as: ``unjudged`` or "
                                     "``nonrelevant`` (Webber & Park's protocol).")
    ideal: str = param(doc="Where a pooled score's normaliser (ideal DCG, R) comes from: ``pool`` (the judged pool) or "
                           "``full`` (every positive judgment).")
    unpooled: float = param(doc="The new run's mean score against the pool.")
    adjustment: float = param(doc="Mean over pooled systems of (score on the full pool - score with the system "
                                  "replaced).")
    estimate: float = param(doc="Adjusted score, ``unpooled + adjustment`` (Algorithm 1).")
    true: float = param(doc="The new run's mean score against all judgments.")
    deltas: np.ndarray = array("system", column="delta", doc="Each pooled system's score change when the new run "
                                                             "replaces it in the pool.")


def loo_adjustment(runs, qrels, measure="RBP(rel=1,p=0.8)@10", *, pooled, new, depth=10,
                   mode="assumed", pooled_unjudged="unjudged", ideal="pool") -> LooAdjustment:
    """Algorithm 1 (leave-one-out adjustment) for the unpooled run ``new`` given the ``pooled`` systems.

    ``pooled_unjudged`` and ``ideal`` are as in `score_against_pool`.

    Parameters
    ----------
    runs, qrels, measure, depth, mode, pooled_unjudged, ideal
        As in `score_against_pool`.
    pooled : sequence
        Names or positions of the pooled systems.
    new : str or int
        The unpooled run.

    Returns
    -------
    LooAdjustment
        ``estimate = unpooled + adjustment`` and the per-system ``deltas``.

    References
    ----------
    Webber, W. & Park, L. A. F. (2009). Score adjustment for correction of pooling bias. SIGIR 2009.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> res = fastrisk.loo_adjustment(runs, qrels, 'AP', pooled=runs.systems[:3], new=runs.systems[3])
    >>> round(float(res.unpooled), 4), round(float(res.estimate), 4), round(float(res.true), 4)
    (0.2856, 0.3022, 0.1022)
    """
    ctx = _context(runs, qrels, measure, depth, mode, pooled_unjudged, ideal)
    pooled_idx = _systems_iv(ctx.runs, pooled, "pooled")
    r = int(_systems_iv(ctx.runs, [new], "new")[0])
    if r in set(pooled_idx.tolist()):
        raise InputError(f"`new` system {ctx.runs.systems[r]!r} must not be one of the `pooled` systems")
    mask = ctx.pool.mask(pooled_idx.tolist())
    N = len(ctx.topic_idx)
    buf = np.empty(ctx.k, np.int64)
    tmp = np.empty(max(ctx.max_pos, 1), ctx.grades.dtype)
    scratch = np.empty(N, np.float64)
    deltas = np.empty(len(pooled_idx), np.float64)
    tail = ctx.kernel_tail()
    unpooled = _kp.mean_pooled(r, ctx.topic_idx, *ctx.data(), mask, *tail, buf, tmp, scratch)
    a = _kp.loo_adjustment(pooled_idx, r, ctx.topic_idx, *ctx.data(), mask, *tail, buf, tmp, scratch, deltas)
    true = float(ctx.true_scores[r, ctx.topic_idx].mean())
    return LooAdjustment(new=ctx.runs.systems[r], pooled=tuple(ctx.runs.systems[i] for i in pooled_idx),
                         pooled_unjudged=pooled_unjudged, ideal=ideal,
                         unpooled=float(unpooled), adjustment=float(a), estimate=float(unpooled + a), true=true,
                         deltas=deltas)


@dataclass(frozen=True, repr=False)
class CommonTopicAdjustment(Result):
    """Algorithm 2: ``estimate = mean(unpooled) + adjustment``, ``adjustment`` the mean of
    ``true - unpooled`` over the ``n`` common topics; ``variance`` eq. 7 (eq. 3 with the
    sample variance ``s_a^2``); ``accurate`` the estimated eq. 6 condition.

    Long form: one row, ``estimate``, ``adjustment``, ``unpooled``, ``variance``,
    ``standard_error``, ``accurate`` (``n`` and ``N`` in the metadata).
    """

    estimate: float = array(doc="Adjusted mean score, ``mean(unpooled) + adjustment`` (Algorithm 2).")
    adjustment: float = array(doc="Mean of ``true - unpooled`` over the n common topics.")
    unpooled: float = array(doc="Mean unpooled score over all N topics.")
    variance: float = array(doc="Estimated variance of ``estimate``, eq. 7 (eq. 3 with the sample variance s_a^2).")
    standard_error: float = array()
    n: int = param(0, doc="Number of common topics (scored against every judgment).")
    N: int = param(0, doc="Number of topics.")
    accurate: bool = array(default=False, doc="Eq. 6 estimated: the adjustment is expected to help.")


def common_topic_adjustment(unpooled, true_common, common) -> CommonTopicAdjustment:
    """Algorithm 2 for one run.

    ``unpooled``: its per-topic unpooled scores on all ``N`` topics; ``common``: positions (or a
    boolean mask) of the ``n`` fully judged common topics; ``true_common``: its true scores on
    those topics, in the same order.

    Parameters
    ----------
    unpooled : array_like
        The run's unpooled per-topic scores, ``(N,)``.
    true_common : array_like
        Its true scores on the common topics, ``(n,)``.
    common : array_like of int or bool
        Positions (or a mask) of the common topics.

    Returns
    -------
    CommonTopicAdjustment
        The adjusted estimate, its variance and whether it is accurate.

    References
    ----------
    Webber, W. & Park, L. A. F. (2009). Score adjustment for correction of pooling bias. SIGIR 2009.

    Examples
    --------
    >>> import fastrisk
    >>> import numpy as np
    >>> unpooled = np.array([0.20, 0.30, 0.25, 0.40])
    >>> res = fastrisk.common_topic_adjustment(unpooled, np.array([0.26, 0.33]), [0, 1])
    >>> round(float(res.estimate), 4), round(float(res.adjustment), 4), res.n, res.N
    (0.3325, 0.045, 2, 4)
    """
    unpooled = np.asarray(unpooled, dtype=np.float64)
    if unpooled.ndim != 1 or unpooled.size < 2 or not np.all(np.isfinite(unpooled)):
        raise InputError("`unpooled` must be a 1-d array of at least 2 finite per-topic scores")
    N = unpooled.size
    common = np.asarray(common)
    if common.dtype == bool:
        if common.shape != unpooled.shape:
            raise InputError(f"boolean `common` must have length {N}, got {common.size}")
        common = np.flatnonzero(common)
    if common.ndim != 1 or not np.issubdtype(common.dtype, np.integer) or common.size < 2:
        raise InputError("`common` must list at least 2 topic positions (or be a boolean mask)")
    if common.min() < 0 or common.max() >= N or len(np.unique(common)) != common.size:
        raise InputError(f"`common` must hold distinct topic positions in 0..{N - 1}")
    true_common = np.asarray(true_common, dtype=np.float64)
    if true_common.shape != common.shape or not np.all(np.isfinite(true_common)):
        raise InputError(f"`true_common` must hold {common.size} finite scores, one per common topic")
    n = common.size
    d = true_common - unpooled[common]
    a = float(d.mean())
    var = (N - n) / N * float(d.var(ddof=1)) / n
    return CommonTopicAdjustment(float(unpooled.mean() + a), a, float(unpooled.mean()), var,
                                 float(np.sqrt(var)), n, N, bool(a * a > var))


# ---------------------------------------------------------------------------------------
# Algorithm 3: the resampling experiment


@dataclass(frozen=True, repr=False)
class PoolingExperiment(Result):
    """Result of `pooling_experiment`.

    Arrays ``[width, repeat]``: ``true``/``unpooled`` r's mean scores, ``loo_adjustment``
    Algorithm 1's ``a``, ``bias``; ``[width, repeat, n]`` (n: common-topic size):
    ``adjusted_abs``/``mixed_abs``/``adjusted_err``/``adjusted_sq``/``variance_estimate`` the
    means over the J topic draws, ``accurate`` eq. 6 (population values); ``systems``
    ``[width, repeat, member]``: r then the pooled ones (indices into ``system_names``, -1 padded).

    Long form (one row per width, repeat, n): ``width``, ``repeat``, ``n``, ``true``,
    ``unpooled``, ``loo_adjustment``, ``adjusted_abs``, ``mixed_abs``, ``adjusted_err``,
    ``adjusted_sq``, ``variance_estimate``, ``accurate``, ``bias``. `mae_long` and
    `mae_table` summarise it as the paper's tables.
    """

    _coords = {"width": {"width": "widths"}, "n": {"n": "common_topics"}}
    _derived = {"bias": ("width", "repeat")}
    _table = ("width", "repeat", "n")

    widths: tuple = param(doc="Pool widths w (numbers of pooled systems), the labels of the ``width`` dim.")
    common_topics: tuple = param(doc="Numbers n of common topics (Algorithm 2), the labels of the ``n`` dim.")
    repeats: int = param(doc="Draws of pooled systems and unpooled run per width.")
    topic_repeats: int = param(doc="Draws J of the common topics for each n.")
    n_topics: int
    measure: str
    depth: int = param(doc="Pool depth k: the top k documents of each pooled run are judged.")
    mode: str = param(doc="How unjudged documents are scored: ``assumed`` (assumed irrelevant) or ``condensed`` "
                          "(removed).")
    pooled_unjudged: str = param(doc="What a pooled document absent from the qrels counts as: ``unjudged`` or "
                                     "``nonrelevant`` (Webber & Park's protocol).")
    ideal: str = param(doc="Where a pooled score's normaliser (ideal DCG, R) comes from: ``pool`` (the judged pool) or "
                           "``full`` (every positive judgment).")
    seed: int
    system_names: tuple = param(doc="Names of the systems that ``systems`` indexes.")
    systems: np.ndarray = array("width", "repeat", "member", column="system_index",
                                doc="Members of each draw: the unpooled run r, then the pooled systems (indices into "
                                    "``system_names``, -1 padded).")
    true: np.ndarray = array("width", "repeat", doc="The unpooled run's true mean score (against every judgment).")
    unpooled: np.ndarray = array("width", "repeat", doc="The unpooled run's mean score against the pool of the sampled "
                                                        "systems.")
    loo_adjustment: np.ndarray = array("width", "repeat", doc="Algorithm 1's leave-one-out adjustment ``a`` of the "
                                                              "unpooled run.")
    adjusted_abs: np.ndarray = array("width", "repeat", "n", doc="Mean over the J topic draws of |common-topic adjusted"
                                                                 " estimate - true| (Algorithm 2).")
    mixed_abs: np.ndarray = array("width", "repeat", "n", doc="Mean over the J topic draws of |mixed estimate - true| "
                                                              "(true scores on the n common topics, unpooled ones "
                                                              "elsewhere).")
    adjusted_err: np.ndarray = array("width", "repeat", "n", doc="Mean signed error of the common-topic adjusted "
                                                                 "estimate (adjusted - true).")
    adjusted_sq: np.ndarray = array("width", "repeat", "n", doc="Mean squared error of the common-topic adjusted "
                                                                "estimate.")
    variance_estimate: np.ndarray = array("width", "repeat", "n", doc="Mean of the estimated variance of the adjusted "
                                                                      "estimate, eq. 7: ``(N - n)/(n N) s_a^2``.")
    accurate: np.ndarray = array("width", "repeat", "n", doc="Eq. 6 with population values: the squared bias exceeds "
                                                             "the adjusted estimator's variance.")

    @property
    def bias(self) -> np.ndarray:
        """(width, repeat) unpooled bias ``true - unpooled`` of the sampled run."""
        return self.true - self.unpooled

    def mae_long(self) -> pa.Table:
        """Long MAE table: ``width, n, estimator, mae`` (n null for estimators not using it)."""
        rows = {"width": [], "n": [], "estimator": [], "mae": []}

        def add(width, n, estimator, mae):
            for key, value in zip(rows, (width, n, estimator, float(mae))):
                rows[key].append(value)

        unadj = np.abs(self.bias).mean(axis=1)
        loo = np.abs(self.true - (self.unpooled + self.loo_adjustment)).mean(axis=1)
        for wi, w in enumerate(self.widths):
            add(w, None, "unadjusted", unadj[wi])
            add(w, None, "leave-one-out", loo[wi])
            for ni, n in enumerate(self.common_topics):
                add(w, n, "mixed", self.mixed_abs[wi, :, ni].mean())
                add(w, n, "adjusted", self.adjusted_abs[wi, :, ni].mean())
        return pa.table({"width": pa.array(rows["width"], pa.int64()), "n": pa.array(rows["n"], pa.int64()),
                         "estimator": pa.array(rows["estimator"], pa.string()),
                         "mae": pa.array(rows["mae"], pa.float64())})

    def mae_table(self) -> pa.Table:
        """The paper's Tables 1-4 layout: one row per pool width; columns ``unadjusted``,
        ``leave-one-out``, then ``mixed n=..`` and ``adjusted n=..`` for each common-topic size."""
        cols = {"width": pa.array(list(self.widths), pa.int64()),
                "unadjusted": np.abs(self.bias).mean(axis=1),
                "leave-one-out": np.abs(self.true - (self.unpooled + self.loo_adjustment)).mean(axis=1)}
        for ni, n in enumerate(self.common_topics):
            cols[f"mixed n={n}"] = self.mixed_abs[:, :, ni].mean(axis=1)
        for ni, n in enumerate(self.common_topics):
            cols[f"adjusted n={n}"] = self.adjusted_abs[:, :, ni].mean(axis=1)
        return pa.table(cols)

    def bias_distribution(self) -> pa.Table:
        """Figure 1: per pool width the mean and quartiles of the unpooled bias ``true - unpooled``."""
        b = self.bias
        q = np.quantile(b, [0.0, 0.25, 0.5, 0.75, 1.0], axis=1)
        return pa.table({"width": pa.array(list(self.widths), pa.int64()), "mean": b.mean(axis=1),
                         "min": q[0], "q1": q[1], "median": q[2], "q3": q[3], "max": q[4]})


def _int_list_iv(values, name: str, lo: int, hi: int | None = None) -> tuple:
    if isinstance(values, numbers.Integral):
        values = (values,)
    try:
        out = tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be a list of integers, got {values!r}") from None
    if not out:
        raise InputError(f"`{name}` must hold at least one value")
    for v in out:
        if v < lo or (hi is not None and v > hi):
            rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            raise InputError(f"`{name}` values must be in {rng}, got {v}")
    return out


_count_iv = positive_int


def pooling_experiment(runs, qrels, measure="RBP(rel=1,p=0.8)@10", *, depth=10, widths=None,
                       repeats=100, common_topics=None, topic_repeats=200, mode="assumed",
                       pooled_unjudged="unjudged", ideal="pool", rng=None, threads=None) -> PoolingExperiment:
    """Webber & Park's Algorithm 3: for each pool width ``w`` and each of ``repeats`` draws,
    pool ``w`` random systems to depth ``depth``, take another random system ``r`` as unpooled,
    and measure the error of r's unpooled, leave-one-out adjusted, mixed and common-topic
    adjusted mean scores; common topics are ``topic_repeats`` random draws of each size in
    ``common_topics``. Parallel over (width, repeat); the same ``rng`` gives the same numbers
    whatever the thread count. Defaults are the paper's grid (widths 2, 4, 10, 20, 40; n = 10,
    20, 40, 100), keeping the widths and sizes the data allows (w < systems, n < topics).
    ``pooled_unjudged="nonrelevant"`` with ``mode="condensed"`` is the paper's protocol (pooled
    documents without a judgment are judged non-relevant); ``ideal`` is as in
    `score_against_pool`.

    Parameters
    ----------
    runs, qrels, measure, depth, mode, pooled_unjudged, ideal
        As in `score_against_pool`.
    widths : sequence of int, optional
        Pool widths (default: the paper's that the data allows).
    repeats : int
        Draws per width.
    common_topics : sequence of int, optional
        Numbers of common topics (default: the paper's that the data allows).
    topic_repeats : int
        Draws of each number of common topics.
    rng : int, SeedSequence or Generator, optional
        Seed; the same seed gives the same numbers for any thread count.
    threads : int, optional
        Numba threads (default: all).

    Returns
    -------
    PoolingExperiment
        Errors per (width, repeat) and per number of common topics.

    References
    ----------
    Webber, W. & Park, L. A. F. (2009). Score adjustment for correction of pooling bias. SIGIR 2009.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> res = fastrisk.pooling_experiment(runs, qrels, 'AP', widths=[2], repeats=4, common_topics=[10], topic_repeats=20, rng=1)
    >>> res.adjusted_abs.shape
    (1, 4, 1)
    >>> round(float(res.bias.mean()), 4)
    -0.1981
    """
    return _experiment(_context(runs, qrels, measure, depth, mode, pooled_unjudged, ideal), widths, repeats,
                       common_topics, topic_repeats, mode, pooled_unjudged, ideal, resolve_seed(rng), threads)


def _experiment(ctx: _Context, widths, repeats, common_topics, topic_repeats, mode, pooled_unjudged, ideal, rseed,
                threads) -> PoolingExperiment:
    """`pooling_experiment` of one measure's context with the resolved ``rseed`` (a `fastrisk._runtime.rng.Seed`)."""
    S, N = ctx.runs.n_systems, len(ctx.topic_idx)
    if widths is None:
        widths = [w for w in DEFAULT_WIDTHS if w < S] or [S - 1]
    if common_topics is None:
        common_topics = [n for n in DEFAULT_COMMON if n < N] or [N]
    widths = _int_list_iv(widths, "widths", 1)
    if max(widths) + 1 > S:
        raise InputError(f"`widths` up to {max(widths)} need at least {max(widths) + 1} systems "
                         f"(pooled + one unpooled); the runs have {S}")
    common = _int_list_iv(common_topics, "common_topics", 2)
    if max(common) > N:
        raise InputError(f"`common_topics` up to {max(common)} exceed the {N} judged topics")
    repeats = _count_iv(repeats, "repeats")
    topic_repeats = _count_iv(topic_repeats, "topic_repeats")
    W, C = len(widths), len(common)
    out_sys = np.full((W, repeats, 1 + max(widths)), -1, dtype=np.int64)
    out_true = np.empty((W, repeats))
    out_unp = np.empty((W, repeats))
    out_loo = np.empty((W, repeats))
    out_stats = np.zeros((W, repeats, C, 5))
    out_cond = np.zeros((W, repeats, C), dtype=np.bool_)
    # per draw: r and each pooled system scored twice on N topics to depth k, then the topic draws
    work = repeats * (sum(2 * w + 1 for w in widths) * N * ctx.k + W * topic_repeats * sum(common))
    with limit_threads(threads), _interrupt.stoppable() as stop:
        run_strided(_kp.algorithm3, thread_count(work, threads), rseed.kernel, np.asarray(widths, np.int64), repeats,
                    np.asarray(common, np.int64), topic_repeats, S, ctx.true_scores, ctx.topic_idx, *ctx.data(),
                    ctx.max_pos, *ctx.kernel_tail(), ctx.pool.n_words, out_sys, out_true, out_unp, out_loo,
                    out_stats, out_cond, stop)
    out_stats /= topic_repeats
    return PoolingExperiment(
        widths=widths, common_topics=common, repeats=repeats, topic_repeats=topic_repeats, n_topics=N,
        measure=ctx.measure.name, depth=ctx.pool.depth, mode=mode, pooled_unjudged=pooled_unjudged, ideal=ideal,
        seed=rseed.recorded, system_names=ctx.runs.systems,
        systems=out_sys, true=out_true, unpooled=out_unp, loo_adjustment=out_loo, adjusted_abs=out_stats[..., 0],
        mixed_abs=out_stats[..., 1], adjusted_err=out_stats[..., 2], adjusted_sq=out_stats[..., 3],
        variance_estimate=out_stats[..., 4], accurate=out_cond)


# ---------------------------------------------------------------------------------------
# several measures on the same draws


@dataclass(frozen=True, repr=False)
class PoolingComparison(Result):
    """Result of `pooling_comparison`: `PoolingExperiment`'s arrays with a leading ``measure``
    axis, every measure scored on the same draws of pooled systems, unpooled run and common
    topics. ``result["Bpref"]`` is one measure's `PoolingExperiment`; `mae_table`,
    `mae_long` and `bias_distribution` are its tables stacked, with a ``measure`` column first.
    """

    _coords = {"measure": {"measure": "measures"}, "width": {"width": "widths"}, "n": {"n": "common_topics"}}
    _derived = {"bias": ("measure", "width", "repeat")}
    _table = ("measure", "width", "repeat", "n")

    measures: tuple = param(doc="Names of the measures (the labels of the ``measure`` dim).")
    widths: tuple = param(doc="Pool widths w (numbers of pooled systems), the labels of the ``width`` dim.")
    common_topics: tuple = param(doc="Numbers n of common topics (Algorithm 2), the labels of the ``n`` dim.")
    repeats: int = param(doc="Draws of pooled systems and unpooled run per width.")
    topic_repeats: int = param(doc="Draws J of the common topics for each n.")
    n_topics: int
    depth: int = param(doc="Pool depth k: the top k documents of each pooled run are judged.")
    mode: str = param(doc="How unjudged documents are scored: ``assumed`` (assumed irrelevant) or ``condensed`` "
                          "(removed).")
    pooled_unjudged: str = param(doc="What a pooled document absent from the qrels counts as: ``unjudged`` or "
                                     "``nonrelevant`` (Webber & Park's protocol).")
    ideal: str = param(doc="Where a pooled score's normaliser (ideal DCG, R) comes from: ``pool`` (the judged pool) or "
                           "``full`` (every positive judgment).")
    seed: int
    system_names: tuple = param(doc="Names of the systems that ``systems`` indexes.")
    systems: np.ndarray = array("width", "repeat", "member", column="system_index",
                                doc="Members of each draw: the unpooled run r, then the pooled systems (indices into "
                                    "``system_names``, -1 padded).")
    true: np.ndarray = array("measure", "width", "repeat", doc="The unpooled run's true mean score (against every "
                                                               "judgment).")
    unpooled: np.ndarray = array("measure", "width", "repeat", doc="The unpooled run's mean score against the pool of "
                                                                   "the sampled systems.")
    loo_adjustment: np.ndarray = array("measure", "width", "repeat", doc="Algorithm 1's leave-one-out adjustment ``a`` "
                                                                         "of the unpooled run.")
    adjusted_abs: np.ndarray = array("measure", "width", "repeat", "n", doc="Mean over the J topic draws of |common-"
                                                                            "topic adjusted estimate - true| (Algorithm"
                                                                            " 2).")
    mixed_abs: np.ndarray = array("measure", "width", "repeat", "n", doc="Mean over the J topic draws of |mixed "
                                                                         "estimate - true| (true scores on the n common"
                                                                         " topics, unpooled ones elsewhere).")
    adjusted_err: np.ndarray = array("measure", "width", "repeat", "n", doc="Mean signed error of the common-topic "
                                                                            "adjusted estimate (adjusted - true).")
    adjusted_sq: np.ndarray = array("measure", "width", "repeat", "n", doc="Mean squared error of the common-topic "
                                                                           "adjusted estimate.")
    variance_estimate: np.ndarray = array("measure", "width", "repeat", "n", doc="Mean of the estimated variance of the"
                                                                                 " adjusted estimate, eq. 7: ``(N - "
                                                                                 "n)/(n N) s_a^2``.")
    accurate: np.ndarray = array("measure", "width", "repeat", "n", doc="Eq. 6 with population values: the squared bias"
                                                                        " exceeds the adjusted estimator's variance.")

    @property
    def bias(self) -> np.ndarray:
        """(measure, width, repeat) unpooled bias ``true - unpooled`` of the sampled run."""
        return self.true - self.unpooled

    def __getitem__(self, measure) -> PoolingExperiment:
        name = measure if measure in self.measures else parse_measure(measure).name
        if name not in self.measures:
            raise InputError(f"measure {name!r} was not in the comparison; have {list(self.measures)}")
        i = self.measures.index(name)
        return PoolingExperiment(
            widths=self.widths, common_topics=self.common_topics, repeats=self.repeats,
            topic_repeats=self.topic_repeats, n_topics=self.n_topics, measure=name, depth=self.depth, mode=self.mode,
            pooled_unjudged=self.pooled_unjudged, ideal=self.ideal, seed=self.seed, system_names=self.system_names,
            systems=self.systems, true=self.true[i], unpooled=self.unpooled[i], loo_adjustment=self.loo_adjustment[i],
            adjusted_abs=self.adjusted_abs[i], mixed_abs=self.mixed_abs[i], adjusted_err=self.adjusted_err[i],
            adjusted_sq=self.adjusted_sq[i], variance_estimate=self.variance_estimate[i], accurate=self.accurate[i])

    def _stacked(self, table: str) -> pa.Table:
        parts = []
        for name in self.measures:
            t = getattr(self[name], table)()
            parts.append(t.add_column(0, "measure", pa.array([name] * t.num_rows, pa.string())))
        return pa.concat_tables(parts)

    def mae_table(self) -> pa.Table:
        """`PoolingExperiment.mae_table` of each measure: one row per (measure, width)."""
        return self._stacked("mae_table")

    def mae_long(self) -> pa.Table:
        """`PoolingExperiment.mae_long` of each measure: ``measure, width, n, estimator, mae``."""
        return self._stacked("mae_long")

    def bias_distribution(self) -> pa.Table:
        """`PoolingExperiment.bias_distribution` of each measure: one row per (measure, width)."""
        return self._stacked("bias_distribution")


#: The classic comparison: AP, its judged-only relatives, and the paper's RBP.
COMPARISON_MEASURES = ("AP", "Bpref", "infAP", "AP(judged_only=True)", "RBP(rel=1,p=0.8)@10")


def pooling_comparison(runs, qrels, measures=COMPARISON_MEASURES, *, depth=10, widths=None, repeats=100,
                       common_topics=None, topic_repeats=200, mode="assumed", pooled_unjudged="unjudged",
                       ideal="pool", rng=None, threads=None) -> PoolingComparison:
    """`pooling_experiment` for each of ``measures`` on the same random draws.

    Each measure's experiment runs with the same seed: its random stream per (width, repeat)
    depends only on the seed and the task (`fastrisk._kernels._random`), so every measure
    sees the same pooled systems, unpooled run and common topics, and the bias of bpref,
    infAP or a condensed-list measure (Buckley & Voorhees, SIGIR 2004; Yilmaz & Aslam, CIKM
    2006; Sakai, SIGIR 2007) compares draw by draw with AP's and with the adjusted estimates of
    Webber & Park (SIGIR 2009).

    Parameters
    ----------
    runs, qrels, depth, widths, repeats, common_topics, topic_repeats, mode, pooled_unjudged, ideal, rng, threads
        As in `pooling_experiment`; a ``judged_only`` measure is scored condensed whatever ``mode``.
    measures : sequence of str
        Measure names (default: AP, Bpref, infAP, AP(judged_only=True) and RBP(rel=1,p=0.8)@10).

    Returns
    -------
    PoolingComparison
        The experiments' arrays with a leading ``measure`` axis, and their stacked tables.

    References
    ----------
    Webber, W. & Park, L. A. F. (2009). Score adjustment for correction of pooling bias. SIGIR 2009.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> runs = fastrisk.read_runs(datasets.path('trec2012-web/runs'), pattern='*filtered*')
    >>> qrels = fastrisk.read_qrels(datasets.path('trec2012-web/qrels.adhoc.txt'))
    >>> res = fastrisk.pooling_comparison(runs, qrels, ['AP', 'Bpref'], widths=[2], repeats=4, common_topics=[10], topic_repeats=20, rng=1)
    >>> res.measures, res.adjusted_abs.shape
    (('AP', 'Bpref'), (2, 1, 4, 1))
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    try:
        parsed = [parse_measure(m) for m in measures]
    except TypeError:
        raise InputError(f"`measures` must be a list of measure names, got {measures!r}") from None
    names = [m.name for m in parsed]
    if not names or len(set(names)) != len(names):
        raise InputError(f"`measures` must name at least one measure, each once; got {names}")
    rseed = resolve_seed(rng)
    runs, qrels = _as_runs(runs), _as_qrels(qrels)
    exps = [_experiment(_context(runs, qrels, m, depth, mode, pooled_unjudged, ideal), widths, repeats, common_topics,
                        topic_repeats, mode, pooled_unjudged, ideal, rseed, threads) for m in parsed]
    first = exps[0]
    stack = {f: np.stack([getattr(e, f) for e in exps]) for f in (
        "true", "unpooled", "loo_adjustment", "adjusted_abs", "mixed_abs", "adjusted_err", "adjusted_sq",
        "variance_estimate", "accurate")}
    return PoolingComparison(
        measures=tuple(names), widths=first.widths, common_topics=first.common_topics, repeats=first.repeats,
        topic_repeats=first.topic_repeats, n_topics=first.n_topics, depth=first.depth, mode=mode,
        pooled_unjudged=pooled_unjudged, ideal=ideal, seed=rseed.recorded, system_names=first.system_names,
        systems=first.systems, **stack)
