"""ZRisk and GeoRisk of every system over the whole matrix (Dinçer, Macdonald & Ounis, SIGIR 2016).

Every system is a baseline of every other: with system totals S_k, topic totals
T_i and grand total N, the expected cell is e_ik = T_i S_k / N and the standardised cell
z_ik = (X[i,k] - e_ik) / sqrt(e_ik), taken as 0 where e_ik = 0 (a topic or a system that
scores 0 everywhere). Then

- classic: ``ZRisk_k(alpha) = sum_{z>0} z_ik + (1 + alpha) sum_{z<0} z_ik`` and
  ``GeoRisk_k = sqrt(mean_i X[i,k] * Phi(ZRisk_k / c))``;
- minus (Benham, Moffat & Culpepper, AIRS 2019, loss weight alpha_hat = 1 + alpha):
  ``ZRisk⁻ = -ZRisk`` (larger = riskier) and ``GeoRisk⁻ = -sqrt(Eff * Phi(ZRisk⁻ / c))``.

GeoRisk⁻ as Benham et al.'s Table 2 prints it. The table (TREC 2012 Web, ERR@20,
alpha_hat = 2) prints GeoRisk⁻ as negative numbers whose magnitudes are
``sqrt(Eff * Phi(ZRisk⁻ / c))``: uogTrA44xi ZRisk⁻ 5.779, GeoRisk⁻ -0.414; qutwb 8.636,
-0.307. Their eq. 8 (and SPEC §1) writes ``GeoRisk⁻ = sqrt(Eff * Phi(ZRisk⁻ / c))``, which is
never negative, so no reading of the equation gives the table's signs; fastrisk follows the
table, departing from eq. 8 by the leading minus. Phi takes ZRisk⁻ itself (the other sign,
``sqrt(Eff * Phi(-ZRisk⁻ / c))``, is the classic GeoRisk: 0.377 and 0.268 there). GeoRisk⁻ is
not a negation of GeoRisk: Eff enters unchanged, so across systems of different effectiveness
it does not simply reverse the classic ranking; at a given effectiveness a larger ZRisk⁻
gives a larger |GeoRisk⁻|.

With a value function v (Benham, Moffat & Culpepper 2019): ``ZRisk⁻_v = -sum_i v(X[i,k] - e_ik) / sqrt(e_ik)`` and the
classic ``ZRisk_v`` is its negation. For the linear v this is the formula above, since
l(x) / sqrt(e) = l(x / sqrt(e)). Scores must be non-negative (they are effectiveness
values: expected cells are built from totals). Scores so large that their totals overflow
(or so small that they underflow) are rescaled by an exact power of four, under which ZRisk
scales by the square root.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastrisk._kernels import zrisk as _k
from fastrisk._runtime import numerics as _numerics
from fastrisk._runtime.threads import limit_threads, run
from fastrisk._runtime.tstat import CONVENTIONS
from fastrisk.core import batch as _batch
from fastrisk.core.values import resolve_value
from fastrisk.data.matrix import ScoreMatrix, as_matrix
from fastrisk.data.results import Result, array, deprecated_alias
from fastrisk.errors import InputError


@dataclass(frozen=True, repr=False)
class ZRiskResult(Result):
    """ZRisk and GeoRisk ``[alpha, system]`` of every system at every alpha, in ``convention``.

    ``alpha`` and ``loss_weight`` are NaN for a non-linear value function (A = 1); ``given``
    says which of them the user gave. ``effectiveness`` ``[system]`` is mean_i X[i,k].
    ZRisk has no p-value, so it is no test statistic: the result has no ``statistic``
    (``statistic`` is a deprecated alias of ``zrisk``, for one release); publication tables
    show ``zrisk`` by default.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``convention``, ``value``, ``zrisk``, ``georisk``, ``effectiveness``.
    """

    _constants = ("convention", "value")
    _headline = "zrisk"

    systems: tuple
    alpha: np.ndarray
    loss_weight: np.ndarray
    given: str
    convention: str
    value: str
    n_topics: int
    zrisk: np.ndarray = array("alpha", "system")
    georisk: np.ndarray = array("alpha", "system")
    effectiveness: np.ndarray = array("system")

    statistic = deprecated_alias("statistic", "zrisk")

    def row(self, system: str) -> dict:
        """ZRisk and GeoRisk of one system, arrays over alpha."""
        k = self.systems.index(system)
        return {"zrisk": self.zrisk[..., k], "georisk": self.georisk[..., k]}


def _zrisk_iv(matrix, alpha, loss_weight, value, convention):
    if convention not in CONVENTIONS:
        raise InputError(f"`convention` must be 'classic' or 'minus', got {convention!r}")
    if matrix.n_topics < 1 or matrix.n_systems < 1:
        raise InputError(f"ZRisk needs at least one system and one topic; the matrix is {matrix.shape}")
    return resolve_value(value, alpha=alpha, loss_weight=loss_weight)


def _refuse_negative(matrix) -> None:
    V = matrix.values
    negative = V < 0
    if negative.any():
        k, i = (int(j) for j in np.argwhere(negative)[0])
        raise InputError(
            f"ZRisk/GeoRisk need non-negative scores (expected cells are built from totals); system "
            f"{matrix.systems[k]!r} scores {V[k, i]} on topic {matrix.topics[i]!r} "
            f"({int(negative.sum())} negative cell(s) in all)")


def _linear_table(V, loss_weights, sign, threads):
    """(zrisk, georisk) ``[alpha, system]`` and the effectiveness from one kernel call (the
    serial twin for small jobs), or None when the totals need rescaling; -1 when a score is
    negative."""
    ok, negative, stats, eff = run(_k.zrisk_table, _k.zrisk_table_serial, 2 * V.size, threads, V, loss_weights, sign,
                                   2.0 ** -_numerics.SAFE_EXPONENT, 2.0 ** _numerics.SAFE_EXPONENT)
    if negative >= 0:
        return -1
    return (stats[0], stats[1], eff) if ok else None


def zrisk(matrix: ScoreMatrix, *, alpha=None, loss_weight=None, value=None, convention: str = "classic",
          threads: int | None = None) -> ZRiskResult:
    """ZRisk and GeoRisk of every system of ``matrix``, for every alpha in one pass.

    Dinçer, Macdonald & Ounis (SIGIR 2016): ``ZRisk_k = sum_{z>0} z_ik + (1 + alpha)
    sum_{z<0} z_ik`` with ``z_ik = (X[i,k] - e_ik) / sqrt(e_ik)``, ``e_ik = T_i S_k / N``, and
    ``GeoRisk_k = sqrt(Eff_k * Phi(ZRisk_k / c))``, Eff_k the mean score of system k.

    Parameters
    ----------
    matrix : ScoreMatrix or array-like
        Non-negative scores, systems x topics (or a stack of K collections: see
        `fastrisk.batch.stack`).
    alpha, loss_weight : float or sequence of float, optional
        ``alpha >= 0`` or the loss weight ``alpha_hat = 1 + alpha`` (one of them; default
        alpha = 0, 1, 5, 10), for the linear value function.
    value : {"linear", "smooth"} or callable, optional
        Value function of the difference ``X[i,k] - e_ik`` (Benham, Moffat & Culpepper 2019);
        a non-linear one weights losses itself, so it takes no alpha.
    convention : {"classic", "minus"}
        ``"minus"`` (Benham, Moffat & Culpepper, AIRS 2019) reports ``ZRisk⁻ = -ZRisk`` and
        ``GeoRisk⁻ = -sqrt(Eff * Phi(ZRisk⁻ / c))``: the numbers and the signs their Table 2
        prints (e.g. uogTrA44xi -0.414 at loss weight 2); their eq. 8 lacks the leading minus
        (see the module notes). ``sqrt(Eff * Phi(-ZRisk⁻ / c))`` is the classic GeoRisk.
    threads : int, optional
        Numba threads (default: all).

    Returns
    -------
    ZRiskResult
        ``zrisk``, ``georisk`` ``[alpha, system]`` and ``effectiveness`` ``[system]``; of a
        stack, each with a leading ``batch`` axis (the linear value function from one batched
        kernel call, another collection by collection).

    Raises
    ------
    InputError
        On negative scores or a bad option.

    References
    ----------
    Dinçer, B. T., Macdonald, C. & Ounis, I. (2016). Risk-sensitive evaluation and learning to rank using
    multiple baselines. SIGIR 2016.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> res = fastrisk.zrisk(matrix, alpha=[0, 5])
    >>> k = res.systems.index('uogTrA44xi')
    >>> round(float(res.zrisk[1, k]), 3), round(float(res.georisk[1, k]), 4)
    (-31.496, 0.2877)
    """
    if _batch.is_stack(matrix):  # K collections: every array with a leading batch axis
        return _zrisk_of_stack(matrix, alpha, loss_weight, value, convention, threads)
    matrix = as_matrix(matrix)
    vf = _zrisk_iv(matrix, alpha, loss_weight, value, convention)
    sign = -1.0 if convention == "minus" else 1.0
    table = _linear_table(matrix.values, vf.loss_weight, sign, threads) if vf.is_linear else None
    if table == -1 or not vf.is_linear:
        _refuse_negative(matrix)
    if table is not None:  # the usual case: one compiled call
        z, georisk, eff = table
        return ZRiskResult._trusted(systems=matrix.systems, alpha=vf.alpha, loss_weight=vf.loss_weight, given=vf.given,
                           convention=convention, value=vf.name, n_topics=matrix.n_topics, effectiveness=eff,
                           zrisk=z, georisk=georisk)
    V = matrix.values
    c = matrix.n_topics
    topic_totals = V.sum(axis=0)
    system_totals = V.sum(axis=1)
    grand = float(system_totals.sum())
    half = 0
    if vf.is_linear and _numerics.out_of_range(grand):
        # totals overflow (or underflow): X -> X 4^-j leaves e -> e 4^-j and z -> z 2^-j exactly
        half = -(_numerics.power_of_two_scale(_numerics.absmax(V) * V.size) // 2)
        if half:
            V = np.ldexp(V, -2 * half)
            topic_totals, system_totals = V.sum(axis=0), V.sum(axis=1)
            grand = float(system_totals.sum())
    if vf.is_linear:
        with limit_threads(threads, 2 * V.size):  # two sums per cell
            pos, neg = _k.zrisk_parts(V, topic_totals, system_totals, grand)
        z = pos[:, None] + vf.loss_weight[None, :] * neg[:, None]
    else:  # small jobs on the serial twin: no parallel version compiled for them (issue #20)
        z = run(vf.kernel(_k.zrisk_value), vf.kernel(_k.zrisk_value_serial), 2 * V.size, threads,
                V, topic_totals, system_totals, grand)[:, None]
    if convention == "minus":
        z = -z
    eff = system_totals / c
    if half:
        with np.errstate(over="ignore", under="ignore"):  # overflow: checked below
            z, eff = np.ldexp(z, half), np.ldexp(eff, 2 * half)
    _numerics.check_finite(z, "ZRisk")
    _numerics.check_finite(eff, "the mean effectiveness")
    georisk = _k.georisk(eff, np.ascontiguousarray(z), float(c), sign)
    z, georisk = np.ascontiguousarray(z.T), np.ascontiguousarray(georisk.T)  # [alpha, system]
    return ZRiskResult(systems=matrix.systems, alpha=vf.alpha, loss_weight=vf.loss_weight, given=vf.given,
                       convention=convention, value=vf.name, n_topics=c, effectiveness=eff,
                       zrisk=z, georisk=georisk)


def _zrisk_of_stack(data, alpha, loss_weight, value, convention, threads) -> ZRiskResult:
    """`zrisk` of a stack: the batched kernel for the linear value function, else `zrisk` of
    each collection, stacked."""
    st = _batch.stack(data)
    vf = resolve_value(value, alpha=alpha, loss_weight=loss_weight)
    if convention not in CONVENTIONS:
        raise InputError(f"`convention` must be 'classic' or 'minus', got {convention!r}")
    if not vf.is_linear:
        return _batch.stack_results([zrisk(m, alpha=alpha, loss_weight=loss_weight, value=value,
                                           convention=convention, threads=threads) for m in _batch.collections(st)])
    z, georisk, eff = _batch.zrisk_arrays(st, vf.loss_weight, -1.0 if convention == "minus" else 1.0, threads)
    return ZRiskResult._trusted(systems=st.systems, alpha=vf.alpha, loss_weight=vf.loss_weight, given=vf.given,
                                convention=convention, value=vf.name, n_topics=st.shape[2], effectiveness=eff,
                                zrisk=z, georisk=georisk)
