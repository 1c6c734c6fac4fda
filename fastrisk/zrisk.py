"""ZRisk and GeoRisk of every system over the whole matrix (Dinçer, Macdonald & Ounis, SIGIR 2016).

Every system is a baseline of every other (SPEC §3): with system totals S_k, topic totals
T_i and grand total N, the expected cell is e_ik = T_i S_k / N and the standardised cell
z_ik = (X[i,k] - e_ik) / sqrt(e_ik), taken as 0 where e_ik = 0 (a topic or a system that
scores 0 everywhere). Then

- classic: ``ZRisk_k(alpha) = sum_{z>0} z_ik + (1 + alpha) sum_{z<0} z_ik`` and
  ``GeoRisk_k = sqrt(mean_i X[i,k] * Phi(ZRisk_k / c))``;
- minus (Benham, Moffat & Culpepper 2019, loss weight alpha_hat = 1 + alpha):
  ``ZRisk⁻ = -ZRisk`` (larger = riskier) and ``GeoRisk⁻ = sqrt(Eff * Phi(ZRisk⁻ / c))``.

With a value function v (SPEC §4): ``ZRisk⁻_v = -sum_i v(X[i,k] - e_ik) / sqrt(e_ik)`` and the
classic ``ZRisk_v`` is its negation. For the linear v this is the formula above, since
l(x) / sqrt(e) = l(x / sqrt(e)). Scores must be non-negative (they are effectiveness
values: expected cells are built from totals).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastrisk._inference import CONVENTIONS
from fastrisk._kernels import zrisk as _k
from fastrisk._results import Result, array
from fastrisk._threads import limit_threads
from fastrisk.errors import InputError
from fastrisk.matrix import ScoreMatrix
from fastrisk.values import resolve_value

@dataclass(frozen=True, repr=False)
class ZRiskResult(Result):
    """ZRisk and GeoRisk ``[alpha, system]`` of every system at every alpha, in ``convention``.

    ``alpha`` and ``loss_weight`` are NaN for a non-linear value function (A = 1); ``given``
    says which of them the user gave. ``effectiveness`` ``[system]`` is mean_i X[i,k].
    ``statistic`` is ZRisk.

    Long form (one row per alpha, system): ``alpha``, ``loss_weight``, ``system``,
    ``convention``, ``value``, ``zrisk``, ``georisk``, ``effectiveness``.
    """

    _constants = ("convention", "value")

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

    @property
    def statistic(self) -> np.ndarray:
        return self.zrisk

    def row(self, system: str) -> dict:
        """ZRisk and GeoRisk of one system, arrays over alpha."""
        k = self.systems.index(system)
        return {"zrisk": self.zrisk[:, k], "georisk": self.georisk[:, k]}


def _zrisk_iv(matrix, alpha, loss_weight, value, convention):
    if not isinstance(matrix, ScoreMatrix):
        raise InputError(f"`matrix` must be a ScoreMatrix, got {type(matrix).__name__}")
    if convention not in CONVENTIONS:
        raise InputError(f"`convention` must be 'classic' or 'minus', got {convention!r}")
    if matrix.n_topics < 1 or matrix.n_systems < 1:
        raise InputError(f"ZRisk needs at least one system and one topic; the matrix is {matrix.shape}")
    V = matrix.values
    negative = V < 0
    if negative.any():
        k, i = (int(j) for j in np.argwhere(negative)[0])
        raise InputError(
            f"ZRisk/GeoRisk need non-negative scores (expected cells are built from totals); system "
            f"{matrix.systems[k]!r} scores {V[k, i]} on topic {matrix.topics[i]!r} "
            f"({int(negative.sum())} negative cell(s) in all)")
    return resolve_value(value, alpha=alpha, loss_weight=loss_weight)


def zrisk(matrix: ScoreMatrix, *, alpha=None, loss_weight=None, value=None, convention: str = "classic",
          threads: int | None = None) -> ZRiskResult:
    """ZRisk and GeoRisk of every system of ``matrix``, for every alpha in one pass.

    ``alpha`` (>= 0) or ``loss_weight`` (alpha_hat = 1 + alpha), one number or many (default
    alpha = 0, 1, 5, 10), for the linear value function; ``value`` is ``"linear"`` (default),
    ``"smooth"`` or a jitted scalar function of the difference X[i,k] - e_ik (it weights
    losses itself, so no alpha). ``convention="minus"`` reports ZRisk⁻ = -ZRisk and
    GeoRisk⁻ = sqrt(Eff * Phi(ZRisk⁻ / c)). Raises :class:`InputError` on negative scores.
    """
    vf = _zrisk_iv(matrix, alpha, loss_weight, value, convention)
    V = matrix.values
    c = matrix.n_topics
    topic_totals = V.sum(axis=0)
    system_totals = V.sum(axis=1)
    grand = float(system_totals.sum())
    with limit_threads(threads, 2 * V.size):  # two sums per cell
        if vf.is_linear:
            pos, neg = _k.zrisk_parts(V, topic_totals, system_totals, grand)
            z = pos[:, None] + vf.loss_weight[None, :] * neg[:, None]
        else:
            z = _k.zrisk_value(V, topic_totals, system_totals, grand, vf.func)[:, None]
    if convention == "minus":
        z = -z
    eff = system_totals / c
    georisk = _k.georisk(eff, np.ascontiguousarray(z), float(c))
    z, georisk = np.ascontiguousarray(z.T), np.ascontiguousarray(georisk.T)  # [alpha, system]
    return ZRiskResult(systems=matrix.systems, alpha=vf.alpha, loss_weight=vf.loss_weight, given=vf.given,
                       convention=convention, value=vf.name, n_topics=c, effectiveness=eff,
                       zrisk=z, georisk=georisk)
