"""Risk-sensitive tests under their own null (issue #28): the calibration of
`fastrisk.simulate.nulls`, the battery's bootstrap_risk@a and trisk_smooth, and the
hypothesis each study rate carries."""

from __future__ import annotations

import concurrent.futures as cf
import json
import math

import numpy as np
import pytest
from reference.batch import Replicate
from scipy import integrate, optimize, stats

import fastrisk
from fastrisk._runtime.rng import resolve_seed
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.simulate import battery, fits, nulls, type1
from fastrisk.simulate.simireff import GRID, SimMargin, margin_from


# ------------------------------------------------------------------ plain references
def _gaussian_urisk(m, s, alpha):
    """URisk_alpha of d ~ N(m, s^2): E[d] + alpha E[min(d, 0)], E[min(d, 0)] = m Phi(-m/s) - s phi(m/s)."""
    return m + alpha * (m * stats.norm.cdf(-m / s) - s * stats.norm.pdf(m / s))


def _gaussian_margin(mean, sd):
    """A continuous SimMargin whose tabulated CDF is N(mean, sd^2) on GRID + 1 points of [0, 1]."""
    x = np.linspace(0.0, 1.0, GRID + 1)
    cdf = stats.norm.cdf((x - mean) / sd)
    cdf = (cdf - cdf[0]) / (cdf[-1] - cdf[0])
    return SimMargin("gauss", {}, 2.0, 0.0, True, x, cdf)


def _gaussian_copula(rho):
    import pyvinecopulib as pv

    return pv.Bicop(family=pv.BicopFamily.gaussian, parameters=np.array([[rho]]))


def _mc_expectation(b_margin, e_margin, cop, b_first, null, n, seed):
    """Plain Monte-Carlo: copula draws by inverse h-function, margins by np.interp of their
    tabulated CDFs (continuous) or a search of their steps (discrete)."""
    rng = np.random.default_rng(seed)
    u = rng.random((n, 2))
    w = np.asarray(cop.hinv1(u))
    ub, ue = (u[:, 0], w) if b_first else (w, u[:, 0])

    def q(m, v):
        if m.continuous:
            return np.interp(v, m.cdf, m.points)
        return m.points[np.minimum(np.searchsorted(m.cdf, v), len(m.points) - 1)]

    x = null.value(q(e_margin, ue) - q(b_margin, ub))
    return x.mean(), x.std() / math.sqrt(n)


# ------------------------------------------------------------------ closed forms and the root-finder
@pytest.mark.parametrize("m, s", [(0.0, 0.1), (0.03, 0.2), (-0.05, 0.07)])
def test_gaussian_expectations_are_the_closed_forms(m, s):
    for null in (nulls.RiskNull("urisk", 1.0), nulls.RiskNull("urisk", 5.0), nulls.RiskNull("smooth")):
        quad = integrate.quad(lambda d: null.value(d) * stats.norm.pdf(d, m, s), m - 12 * s, m + 12 * s,
                              epsabs=1e-13, points=[0.0], limit=200)[0]
        assert nulls.gaussian_expectation(null, m, s) == pytest.approx(quad, abs=1e-11)
    assert nulls.gaussian_expectation(nulls.RiskNull("urisk", 2.0), m, s) == pytest.approx(
        _gaussian_urisk(m, s, 2.0), abs=1e-15)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [1.0, 5.0])
def test_root_finder_hits_the_gaussian_urisk_null_to_1e6(alpha):
    # d = E - B on a Gaussian joint law: B ~ N(0.5, 0.06^2), E ~ N(mu, 0.07^2), Gaussian copula rho = 0.6,
    # so d ~ N(mu - 0.5, s^2) with s^2 = 0.06^2 + 0.07^2 - 2 * 0.6 * 0.06 * 0.07 (both margins > 7 sd
    # inside [0, 1], so their tabulated truncation moves nothing at 1e-9)
    s = math.sqrt(0.06 ** 2 + 0.07 ** 2 - 2 * 0.6 * 0.06 * 0.07)
    exact = 0.5 + optimize.brentq(lambda m: _gaussian_urisk(m, s, alpha), -1, 1, xtol=1e-15)
    null = nulls.RiskNull("urisk", alpha)
    # every cell of the tabulated margins (the default coarsens e to CELLS cells: a 5e-6 error here)
    law = nulls.PairLaw(_gaussian_margin(0.5, 0.06), _gaussian_copula(0.6), True, cells=GRID)

    def f(mu):
        return (mu, *law.expectation(null, _gaussian_margin(mu, 0.07)))

    mu, value, steps = nulls.newton_root(f, 0.5, 0.0, tol=1e-9, steps=20)
    assert abs(value) <= 1e-9 and steps < 20
    assert mu == pytest.approx(exact, abs=1e-6)
    # the same root-finder on the closed form itself
    got = nulls.newton_root(lambda m: (m, _gaussian_urisk(m, s, alpha), 1 + alpha * stats.norm.cdf(-m / s)),
                            0.0, 0.0, tol=1e-13, steps=30)
    assert 0.5 + got[0] == pytest.approx(exact, abs=1e-9)


@pytest.mark.slow
def test_pair_law_matches_monte_carlo_on_gaussian_and_discrete_margins():
    cop = _gaussian_copula(-0.3)
    b, e = _gaussian_margin(0.35, 0.12), _gaussian_margin(0.4, 0.15)
    support = np.arange(11) / 10  # a P@10-like lattice
    pmf = stats.binom.pmf(np.arange(11), 10, 0.4)
    disc = SimMargin("binom", {}, 2.0, 0.0, False, support, np.cumsum(pmf))
    for null in (nulls.RiskNull("urisk", 5.0), nulls.RiskNull("smooth")):
        for bm, em, first in ((b, e, True), (b, e, False), (disc, e, True), (b, disc, False), (disc, disc, True)):
            got = nulls.PairLaw(bm, cop, first).expectation(null, em)[0]
            mc, se = _mc_expectation(bm, em, cop, first, null, 400_000, 3)
            assert abs(got - mc) <= 4 * se + 1e-5, (null, bm.family, em.family, first)


def test_gaussian_first_estimate_solves_the_gaussian_equation():
    for null in (nulls.RiskNull("urisk", 1.0), nulls.RiskNull("urisk", 5.0), nulls.RiskNull("smooth")):
        for target in (0.0, 0.05):
            m = nulls.gaussian_shift(null, 0.15, target)
            assert nulls.gaussian_expectation(null, m, 0.15) == pytest.approx(target, abs=1e-12)
    assert nulls.gaussian_shift(nulls.RiskNull("urisk", 0.0), 0.2, 0.03) == pytest.approx(0.03, abs=1e-12)


def test_risk_null_names_and_bad_input():
    assert nulls.RiskNull("urisk", 1.0).name == "URisk_1"
    assert nulls.RiskNull("smooth").name == "URisk_s"
    assert nulls.RiskNull("urisk", 5.0).key(0.05) == "urisk:5:0.05"
    with pytest.raises(fastrisk.errors.InputError, match="family"):
        nulls.RiskNull("zrisk")
    with pytest.raises(fastrisk.errors.InputError, match="alpha"):
        nulls.RiskNull("urisk", -1.0)


# ------------------------------------------------------------------ the battery
def _pairs(K=6, c=25, seed=4):
    rng = np.random.default_rng(seed)
    V = rng.beta(2, 5, (K, 2, c))
    V[:, 1] = np.clip(V[:, 1] + rng.normal(0, 0.05, (K, c)), 0, 1)
    return V


@pytest.mark.parametrize("protocol", ["standard", "urbano2019"])
def test_trisk_at_zero_is_the_paired_t_test(protocol):
    V = _pairs(K=40)
    res = battery(V, replicates=0, trisk_alpha=[0.0, 1.0], protocol=protocol)
    np.testing.assert_array_equal(res.pvalue[:, res.tests.index("trisk@0")], res.pvalue[:, res.tests.index("t")])
    np.testing.assert_allclose(res.pvalue[:, 0, 0], stats.ttest_rel(V[:, 1], V[:, 0], axis=1).pvalue, rtol=1e-9,
                               atol=5e-7 if protocol == "urbano2019" else 0)  # the study rounds p to 6 decimals
    # the risk core's own TRisk as alpha -> 0 is the t statistic
    tiny = battery(V, replicates=0, trisk_alpha=[1e-300], protocol=protocol)
    np.testing.assert_allclose(tiny.statistic[:, 5], res.statistic[:, 0], rtol=1e-12)


def test_bootstrap_risk_counts_match_the_reference_draws():
    V = _pairs(K=3, c=17)
    B = 120
    res = battery(V, replicates=B, rng=9, trisk_alpha=[1.0, 5.0])
    for a in (1.0, 5.0):
        j = res.tests.index(f"bootstrap_risk@{a:g}")
        for k in range(3):
            d = V[k, 1] - V[k, 0]
            x = [v + a * min(v, 0.0) for v in d]
            total = sum(x)
            tol = 1e-12 * sum(abs(v) for v in x)
            reps = [sum(x[i] for i in Replicate(resolve_seed(res.seed).kernel, k, 0, b).topics(17)) - total for b in range(B)]
            ge = sum(r >= total - tol for r in reps)
            le = sum(r <= total + tol for r in reps)
            ab = sum(abs(r) >= abs(total) - tol for r in reps)
            assert res.pvalue[k, j].tolist() == pytest.approx([(ab + 1) / (B + 1), (le + 1) / (B + 1), (ge + 1) / (B + 1)])
            assert res.statistic[k, j] == pytest.approx(np.mean(x))


@pytest.mark.slow
def test_bootstrap_risk_at_zero_is_the_bootstrap_and_agrees_with_fastrisk_bootstrap():
    V = _pairs(K=4, c=30)
    res = battery(V, replicates=400, rng=2, trisk_alpha=[0.0])
    np.testing.assert_array_equal(res.p("bootstrap_risk@0"), res.p("bootstrap"))
    # fastrisk.bootstrap's shift test of URisk_5 (its own streams): the same test within Monte-Carlo error
    res = battery(V, replicates=4000, rng=2, trisk_alpha=[5.0])
    for k in range(4):
        m = ScoreMatrix(V[k], systems=["b", "e"], topics=[str(i) for i in range(30)])
        boot = fastrisk.bootstrap(m, "b", alpha=5.0, replicates=4000, rng=1, test="shift", method="percentile")
        p = float(boot.pvalue[0, list(boot.systems).index("e")])
        assert res.p("bootstrap_risk@5")[k] == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / 4000) + 2e-3)


def test_trisk_smooth_is_fastrisks_smooth_trisk():
    V = _pairs(K=5, c=30)
    res = battery(V, replicates=0)
    for k in range(5):
        m = ScoreMatrix(V[k], systems=["b", "e"], topics=[str(i) for i in range(30)])
        r = fastrisk.risk(m, "b", value="smooth")
        t = float(np.asarray(r.trisk).reshape(-1)[list(r.systems).index("e")])
        assert res.statistic[k, res.tests.index("trisk_smooth")] == pytest.approx(t, rel=1e-9)
        s = nulls.RiskNull("smooth").value(V[k, 1] - V[k, 0])
        p = stats.ttest_1samp(s, 0.0).pvalue
        assert res.p("trisk_smooth")[k] == pytest.approx(p, rel=1e-9)


# ------------------------------------------------------------------ calibrated pairs of a fitted collection
def _tiny():
    m = fastrisk.data.datasets.trec_matrix("web2012_err20")
    return ScoreMatrix(m.values[::12][:5, :30], list(m.systems[::12][:5]), m.topics[:30], m.measure)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("fits")


@pytest.mark.slow
def test_calibrated_pairs_hold_their_null_and_are_cached(cache):
    fit = fits.fit_collections({"tiny": _tiny()}, "err20", cache=cache)["tiny"]
    null = nulls.RiskNull("urisk", 5.0)
    pairs, skipped = fit.null_pairs(null, 0.0)
    fit.save()
    assert pairs and skipped >= 0
    again = fits.load_fit(fit.path)
    assert null.key(0.0) in again.nulls
    checked = 0
    for b, lst in list(pairs.items())[:2]:
        for e, (a, bb) in lst[:2]:
            assert min(a, bb) == 1.0  # effTransform moves one shape (what `_surrogate` starts from)
            em = fit.margins[e].with_beta(a, bb)
            law = nulls.PairLaw(fit.margins[b], fit.copula(min(b, e), max(b, e)), b < e)
            value = law.expectation(null, em)[0]
            assert abs(value) <= nulls.TOL
            # plain Monte-Carlo of the same sampler
            mc, se = _mc_expectation(fit.margins[b], em, fit.copula(min(b, e), max(b, e)), b < e, null, 300_000, b)
            assert abs(mc - value) <= 4 * se + 1e-4
            checked += 1
    assert checked >= 2


def _eleven():
    """13 runs of which the study keeps 11: the fewest the risk nulls' pairs (drawn as H1 pairs: a
    baseline and its 10 nearest runs) allow."""
    m = fastrisk.data.datasets.trec_matrix("web2013_err20")
    return ScoreMatrix(m.values[:13, :30], m.systems[:13], m.topics[:30], m.measure)


@pytest.mark.slow
def test_type1_names_the_hypothesis_of_every_rate_and_trisk0_is_t(cache):
    res = type1("err20", collections={"eleven": _eleven()}, topics=12, trials=200, replicates=30, rng=5,
                trisk_alpha=[0.0, 1.0, 5.0], progress=False, cache=cache)
    hyp = dict(zip(res.tests, res.hypotheses))
    assert hyp["t"] == hyp["permutation"] == hyp["trisk@0"] == "same margins"
    assert hyp["trisk@1"] == hyp["bootstrap_risk@1"] == "URisk_1 = 0"
    assert hyp["trisk@5"] == "URisk_5 = 0" and hyp["trisk_smooth"] == "URisk_s = 0"
    long = res.to_pandas()
    assert set(long.loc[long.test == "trisk@5", "hypothesis"]) == {"URisk_5 = 0"}
    np.testing.assert_array_equal(res.rate[:, res.tests.index("trisk@0")], res.rate[:, res.tests.index("t")])
    (table,) = res.tables().values()
    assert list(table.columns[11:]) == [  # after the study's tests, the risk tests, each under its own null
        f"{t}_{tail} [{h}]" for tail in (1, 2) for t, h in (
            ("trisk0", "same margins"), ("trisk1", "URisk_1 = 0"), ("trisk5", "URisk_5 = 0"), ("zrisk", "same margins"),
            ("georisk", "same margins"), ("trisk_smooth", "URisk_s = 0"), ("bootstrap_risk0", "same margins"),
            ("bootstrap_risk1", "URisk_1 = 0"), ("bootstrap_risk5", "URisk_5 = 0"))]
    assert list(table.columns[:11]) == ["alpha", "t1", "w1", "s1", "b1", "p1", "t2", "w2", "s2", "b2", "p2"]
    assert set(json.loads(res.skipped)) == {"URisk_1 = 0", "URisk_5 = 0", "URisk_s = 0"}
    pytest.importorskip("matplotlib")
    from fastrisk.viz import plot

    labels = [t.get_text() for t in plot.simulation_rates(res).get_legend().get_texts()]
    assert "trisk@1 [URisk_1 = 0]" in labels and "t-test [same margins]" in labels


# ------------------------------------------------------------------ the fast path is the same calibration
def _adhoc5_margin(row, family, params):
    """A margin of adhoc5_ap's run ``row`` (kept as fitted: no duplicates or bottom runs among 0-7)."""
    scores = fastrisk.data.datasets.trec_matrix("adhoc5_ap").values[row]
    return margin_from(family, params, scores, "AP")


@pytest.mark.slow
def test_memoised_transform_is_efftransform_bit_for_bit():
    # the truncated-normal margins of adhoc5_ap's runs 5 and 6 (R's integrals, the slow ones; run 6
    # fails at -0.01: L-BFGS-B's abnormal termination in the line search) and its run 0's kernel margin
    cases = [(5, "norm", {"mu": -9.994915691379218, "sigma": 1.5049653018322982}),
             (6, "norm", {"mu": -2.7558215051697883, "sigma": 0.8914654816064158}),
             (0, "nks", {"h": 0.035019273559960366})]
    failed = 0
    for row, family, params in cases:
        m = _adhoc5_margin(row, family, params)
        moments = {}
        for off in (0.01, -0.01, 0.025, 0.012, -0.03):
            want = m.transformed(m.mean + off)
            got = nulls.transformed(m, m.mean + off, moments)
            assert (got is None) == (want is None), (row, off)
            if want is not None:
                assert got.transform == want.transform  # the same R optimizer path: the same floats
                np.testing.assert_array_equal(got.cdf, want.cdf)
            failed += want is None
        known = len(moments)
        assert nulls.transformed(m, m.mean + 0.025, moments).transform == m.transformed(m.mean + 0.025).transform
        assert len(moments) == known and (1.0, 1.0) in moments  # a search again: no new integral
    assert failed >= 1


def test_calibration_in_parts_is_the_calibration_in_one_job(cache, monkeypatch):
    fit = fits.fit_collections({"tiny": _tiny()}, "err20", cache=cache)["tiny"]
    specs = [("urisk", 1.0, 0.0), ("smooth", 0.0, 0.02)]
    whole = nulls.null_transforms(fit.margins, fit.copulas, fit.values, specs)
    base = nulls.protocol_baselines(fit.margins)
    assert len(base) >= 2 and base == sorted(base, key=lambda i: -fit.margins[i].mean)
    parts = nulls.merge_transforms(nulls.null_transforms(fit.margins, fit.copulas, fit.values, specs, [b])
                                   for b in reversed(base))
    assert json.dumps(parts) == json.dumps(whole)  # the same pairs, counts and order
    # prepare_nulls on a pool: one job per NULL_CHUNK baselines, merged
    monkeypatch.setattr(fits, "NULL_CHUNK", 1)
    fresh = fits.fit_collections({"tiny": _tiny()}, "err20", cache=False)["tiny"]
    with cf.ThreadPoolExecutor(2) as ex:
        fits.prepare_nulls([fresh], [nulls.RiskNull("urisk", 1.0), nulls.RiskNull("smooth")], [0.0], executor=ex)
    assert json.dumps(fresh.nulls["urisk:1:0"]) == json.dumps(whole["urisk:1:0"])
    assert sum(len(v) for v in fresh.nulls["smooth:0:0"]["pairs"].values()) > 0
