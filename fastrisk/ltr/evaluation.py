"""Baseline rankings, per-query nDCG of rankings as a ScoreMatrix, and the robustness figures.

The robustness figures of a model against a baseline over the queries (Wang, Bennett &
Collins-Thompson, SIGIR 2012; Dinçer, Macdonald & Ounis, SIGIR 2014, Table 3), with
d_q = M_q(model) − M_q(baseline):

- risk/reward = FRisk / FReward = Σ_q max(0, −d_q) / Σ_q max(0, d_q) (from `fastrisk.risk`);
- loss/win = #{q : d_q < 0} / #{q : d_q > 0};
- losses > 20 % = #{q : M_q(model) < 0.8 M_q(baseline)}, a relative loss of more than 20 %.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fastrisk.core.urisk import risk
from fastrisk.data.matrix import ScoreMatrix, as_matrix
from fastrisk.data.results import Result, array, param
from fastrisk.errors import InputError
from fastrisk.ltr.letor import LetorData
from fastrisk.ltr.objective import check_gains, parse_ndcg, query_ndcg

#: Relative loss beyond which a query counts in "losses > 20 %".
BIG_LOSS = 0.2


def _check_data(data) -> LetorData:
    if not isinstance(data, LetorData):
        raise InputError(f"`data` must be LetorData (fastrisk.ltr.read_letor), got {type(data).__name__}")
    return data


def _check_feature(data: LetorData, feature) -> int:
    if isinstance(feature, bool) or not isinstance(feature, numbers.Integral) \
            or not 1 <= feature <= data.n_features:
        raise InputError(f"`feature` must be a LETOR feature id in 1..{data.n_features}, got {feature!r}")
    return int(feature)


def baseline_scores(data: LetorData, feature: int) -> np.ndarray:
    """The scores of the baseline ranking by one feature.

    Parameters
    ----------
    data : LetorData
        The queries and their documents' features.
    feature : int
        A LETOR feature id (1-based, e.g. BM25's).

    Returns
    -------
    ndarray
        One score per document of ``data``.
    """
    data = _check_data(data)
    return data.features[:, _check_feature(data, feature) - 1].copy()


def best_feature(data: LetorData, measure: str = "nDCG@10", *, label_gain=None) -> int:
    """The feature id whose ranking has the best mean ``measure`` on ``data`` (ties: lowest id).

    Parameters
    ----------
    data : LetorData
        The queries and their documents' features and labels.
    measure : str
        ``nDCG@k`` (as `ranking_matrix`).
    label_gain : sequence of float, optional
        Gain of each grade (default LightGBM's, ``2^grade - 1``).

    Returns
    -------
    int
        The feature id (1-based).
    """
    data = _check_data(data)
    k = parse_ndcg(measure)
    gains = check_gains(label_gain, data.labels)
    means = [query_ndcg(data.features[:, j], data.labels, data.boundaries, [k], gains).mean()
             for j in range(data.n_features)]
    return int(np.argmax(means)) + 1


def ranking_matrix(data: LetorData, systems: Mapping, *, measure: str = "nDCG@10", label_gain=None,
                   threads: int | None = None) -> ScoreMatrix:
    """Per-query ``measure`` of the rankings by each system's document scores (systems x queries).

    Rankings sort scores descending, ties in document order; a query without any relevant
    document scores 1 (LightGBM's convention). Every fastrisk risk measure and test applies
    to the result.

    Parameters
    ----------
    data : LetorData
        The queries and their documents' labels.
    systems : mapping
        Name -> one score per document of ``data`` (a model's predictions, a baseline feature).
    measure : str
        ``nDCG@k``.
    label_gain : sequence of float, optional
        Gain of each grade (default LightGBM's, ``2^grade - 1``).
    threads : int, optional
        Numba threads (default: all cores).

    Returns
    -------
    ScoreMatrix
        Systems x queries.
    """
    data = _check_data(data)
    k = parse_ndcg(measure)
    gains = check_gains(label_gain, data.labels)
    if not isinstance(systems, Mapping) or not systems:
        raise InputError("`systems` must map at least one name to document scores")
    rows = []
    for name, scores in systems.items():
        s = np.asarray(scores, dtype=np.float64)
        if s.shape != (data.n_documents,):
            raise InputError(f"system {name!r} must have one score per document ({data.n_documents}), "
                             f"got shape {s.shape}")
        if not np.isfinite(s).all():
            raise InputError(f"system {name!r} has a non-finite score (document {int(np.argmax(~np.isfinite(s)))})")
        rows.append(query_ndcg(s, data.labels, data.boundaries, [k], gains, threads)[:, 0])
    return ScoreMatrix(np.vstack(rows), list(systems), data.qids, f"nDCG@{k}")


@dataclass(frozen=True, repr=False)
class RobustnessResult(Result):
    """Robustness of every system against ``baseline`` over the queries of a ScoreMatrix.

    Arrays over systems: ``mean`` (mean measure), ``wins`` / ``losses`` (queries better /
    worse than the baseline), ``big_losses`` (relative loss > 20 %), ``risk_reward``
    (FRisk / FReward), ``loss_win`` (losses / wins).
    """

    _constants = ("baseline",)
    systems: tuple
    baseline: str
    measure: str
    n_queries: int = param(doc="Number of queries (topics).")
    mean: np.ndarray = array("system", doc="Mean measure of each system.")
    wins: np.ndarray = array("system", doc="Queries on which the system beats the baseline.")
    losses: np.ndarray = array("system", doc="Queries on which the system loses to the baseline.")
    big_losses: np.ndarray = array("system", doc="Queries with a relative loss above 20 % of the baseline's score.")
    risk_reward: np.ndarray = array("system", doc="FRisk / FReward (Wang et al. 2012).")
    loss_win: np.ndarray = array("system", doc="``losses / wins``.")


def robustness(matrix: ScoreMatrix, baseline: str, *, systems=None) -> RobustnessResult:
    """Risk/reward, loss/win and losses > 20 % of ``systems`` against ``baseline``.

    Parameters
    ----------
    matrix : ScoreMatrix
        Per-query scores (e.g. `ranking_matrix`'s).
    baseline : str
        The baseline system.
    systems : sequence of str, optional
        The systems compared (default: all others).

    Returns
    -------
    RobustnessResult
    """

    matrix = as_matrix(matrix)
    if baseline not in matrix.systems:
        raise InputError(f"`baseline` {baseline!r} is not a system of the matrix ({', '.join(matrix.systems)})")
    if systems is None:
        systems = [s for s in matrix.systems if s != baseline]
    systems = list(systems)
    for s in systems:
        if s not in matrix.systems:
            raise InputError(f"`systems`: {s!r} is not a system of the matrix")
    if not systems:
        raise InputError("`systems` must name at least one system besides the baseline")
    b = matrix.scores_of(baseline)
    R = np.vstack([matrix.scores_of(s) for s in systems])
    d = R - b
    res = risk(ScoreMatrix(np.vstack([R, b]), systems + ["__baseline__"], matrix.topics, matrix.measure),
               "__baseline__", alpha=0)
    freward, frisk = res.freward[:-1], res.frisk[:-1]
    wins, losses = (d > 0).sum(1), (d < 0).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        risk_reward = frisk / freward + 0.0
        loss_win = losses / wins
    big = (R < (1.0 - BIG_LOSS) * b).sum(1)
    return RobustnessResult(tuple(systems), baseline, matrix.measure or "", matrix.n_topics, R.mean(1), wins,
                            losses, big, risk_reward, loss_win)
