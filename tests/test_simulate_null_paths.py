"""The cheaper paths of the risk-null calibration (issue #28) give the numbers of the plain ones:
effTransform's integrals with the memo of qfun, a discrete effTransform summed over the atoms
that carry mass, and `PairLaw` over those atoms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

import fastrisk
from fastrisk.simulate import nulls
from fastrisk.simulate._r import rks
from fastrisk.simulate._r.roptim import EPS, optim_lbfgsb
from fastrisk.simulate.simireff import TRANSFORM_TOL, UNREACHED, SimMargin, margin_from


def _moments(data, a, b):
    try:
        return rks.transformed_moments(data.copy(), a, b)
    except ValueError as exc:  # R's integrate stops: the same message either way
        return str(exc)


def test_transformed_moments_memo_gives_the_integrals_bit_for_bit(monkeypatch):
    scores = fastrisk.data.datasets.trec_matrix("adhoc5_ap").values[0]
    data = [rks.rdata("norm", {"mu": -9.994915691379218, "sigma": 1.5049653018322982}),
            rks.rdata("norm", {"mu": 0.2, "sigma": 0.15}),
            rks.rdata("beta", {"shape1": 1.3, "shape2": 4.0}),
            rks.KsMargin(scores).rdata(),
            rks.rdata("norm", {"mu": -2.7558215051697883, "sigma": 0.8914654816064158})]
    ab = [(1.0, 1.0), (1.0, 1.2), (1.3, 1.0), (1.001, 1.0313496724944247), (2.5, 1.0), (1.0, 3.0)]
    with_memo = [_moments(d, a, b) for d in data for a, b in ab]
    monkeypatch.setattr(rks, "MEMO_SLOTS", 0)  # no slot: every value of qfun computed
    plain = [_moments(d, a, b) for d in data for a, b in ab]
    assert with_memo == plain
    assert all(isinstance(v, tuple) for v in plain[:4 * len(ab)])
    monkeypatch.setattr(rks, "MEMO_SLOTS", 4)  # a memo that fills up: what it cannot keep is computed
    assert [_moments(d, a, b) for d in data for a, b in ab] == plain
    # the reference of the integrals themselves: a midpoint rule of qfun
    n = 20_000
    q = _truncnorm_quantile(special.betaincinv(1.3, 1.0, (np.arange(n) + 0.5) / n))
    e, v = rks.transformed_moments(data[1].copy(), 1.3, 1.0)
    assert e == pytest.approx(np.mean(q), abs=2e-6) and v == pytest.approx(np.var(q), abs=5e-6)


def _truncnorm_quantile(v):
    """The truncated normal N(0.2, 0.15^2) on [0, 1]: its quantile by scipy."""
    lo, hi = stats.norm.cdf([(0 - 0.2) / 0.15, (1 - 0.2) / 0.15])
    return 0.2 + 0.15 * stats.norm.ppf(lo + v * (hi - lo))


def _rr_like():
    """A discrete margin on RR's lattice (0 and 1/r, r <= 1000) whose mass sits on 30 points."""
    points = np.concatenate([[0.0], 1.0 / np.arange(1000, 0, -1)])
    pmf = np.zeros(len(points))
    rng = np.random.default_rng(4)
    pmf[np.r_[0, rng.choice(np.arange(1, 990), 25, replace=False), 995, 997, 999, 1000]] = rng.random(30) + 0.1
    return SimMargin("dks(1)", {}, 1.0, 0.0, False, points, np.cumsum(pmf / pmf.sum()))


def _plain_discrete_transform(m, target):
    """effTransform of a discrete margin as written before: effDisc_new's sum over every point."""
    cdf = np.clip(m.cdf, 0.0, 1.0)

    def gap2(p):
        new = np.maximum.accumulate(special.betainc(p[0], p[1], cdf))
        d = float(np.cumsum(m.points * np.diff(new, prepend=0.0), dtype=np.longdouble)[-1]) - target
        return d * d

    res = optim_lbfgsb(gap2, [1.0, 1.0], lower=[1.0, 1.0], factr=TRANSFORM_TOL * TRANSFORM_TOL / EPS)
    if res.convergence != 0 or abs(m.with_beta(*res.par).mean - target) > UNREACHED:
        return None
    return res.par


def test_discrete_efftransform_over_the_atoms_with_mass_is_the_same_search():
    m = _rr_like()
    assert np.count_nonzero(np.diff(m.cdf, prepend=0.0)) == 30
    reached = 0
    for off in (-0.1, -0.03, -0.004, 0.0, 0.02, 0.08):
        got = m.transformed(m.mean + off)
        want = _plain_discrete_transform(m, m.mean + off)
        assert (got is None) == (want is None)
        if want is not None:
            assert got.transform == tuple(want)
        reached += want is not None
    assert reached >= 4


@pytest.mark.parametrize("first", [True, False])
def test_pair_law_over_the_atoms_with_mass_matches_monte_carlo(first):
    import pyvinecopulib as pv  # optional heavy dependency, as in the other simulate tests

    cop = pv.Bicop(family=pv.BicopFamily.clayton, rotation=0, parameters=np.array([[1.5]]))
    b = _rr_like()
    pmf = np.zeros(1001)
    pmf[[0, 500, 800, 900, 950, 999, 1000]] = [0.3, 0.05, 0.05, 0.1, 0.1, 0.1, 0.3]
    e = SimMargin("dks(2)", {}, 1.0, 0.0, False, b.points, np.cumsum(pmf)).with_beta(1.0, 1.4)
    rng = np.random.default_rng(7)
    n = 400_000
    u = rng.random((n, 2))
    w = np.asarray(cop.hinv1(u))
    ub, ue = (u[:, 0], w) if first else (w, u[:, 0])

    def q(m, v):
        return m.points[np.minimum(np.searchsorted(m.cdf, v), len(m.points) - 1)]

    for null in (nulls.RiskNull("urisk", 5.0), nulls.RiskNull("smooth")):
        x = null.value(q(e, ue) - q(b, ub))
        got = nulls.PairLaw(b, cop, first).expectation(null, e)[0]
        assert abs(got - x.mean()) <= 4 * x.std() / math.sqrt(n) + 1e-5


@pytest.mark.slow
def test_search_budget_fails_a_costly_search_the_same_whatever_was_cached():
    # adhoc5_ap's run 6: a truncated normal (R's integrals of its quantile are the costly ones)
    scores = fastrisk.data.datasets.trec_matrix("adhoc5_ap").values[6]
    m = margin_from("norm", {"mu": -2.7558215051697883, "sigma": 0.8914654816064158}, scores, "AP")
    warm = {}
    for off in (0.02, -0.02):
        nulls.transformed(m, m.mean + off, warm)
    for off in (0.01, 0.025):
        want = m.transformed(m.mean + off)
        assert want is not None
        assert nulls.transformed(m, m.mean + off, {}, 1e3) is None  # (1, 1)'s integrals alone cost more
        for budget in (1e4, 3e4, 1e5, math.inf):
            cold = nulls.transformed(m, m.mean + off, {}, budget)
            hot = nulls.transformed(m, m.mean + off, dict(warm), budget)
            assert (cold is None) == (hot is None), budget
            if cold is not None:  # what it returns is effTransform's margin
                assert cold.transform == hot.transform == want.transform
        assert nulls.transformed(m, m.mean + off, {}, math.inf).transform == want.transform
