"""The published protocol of Urbano, Lima & Hanjalic (SIGIR 2019), point by point: copula
families and fitting, simIReff margins and effTransform, run filtering, H1 construction,
the study's battery, the tables' layout and their independence of chunking and executor."""

from __future__ import annotations

import concurrent.futures as cf
import json

import numpy as np
import pytest
from reference import simulate as ref
from reference.margins import np_cv_ls
from scipy import stats

import fastrisk
from fastrisk._runtime.rng import resolve_seed
from fastrisk.cli import main
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import battery, copulas, fits, measures, power, simireff, type1, type3
from fastrisk.simulate._r import rmath
from fastrisk.simulate.studies import ALPHAS, resolve


def _tiny(name="web2013_err20", runs=8, topics=30):
    m = fastrisk.data.datasets.trec_matrix(name)
    return ScoreMatrix(m.values[:runs, :topics], m.systems[:runs], m.topics[:topics], m.measure)


@pytest.fixture(scope="module")
def tiny():
    return {"tiny": _tiny()}


@pytest.fixture(scope="module")
def eleven():
    """13 runs, of which the study keeps 11: the fewest its H1 pairs allow (a baseline and its 10
    nearest runs; fewer is an error, tests/test_simulate_runs_needed.py)."""
    return {"eleven": _tiny(runs=13)}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One directory of fitted models for the module: the tiny collection is fitted once."""
    return tmp_path_factory.mktemp("fits")


# ------------------------------------------------------------------ copulas
def test_copula_families_and_bounds_are_vinecopulas():
    # VineCopula R/BiCop.R: posfams <- c(1:10, 13, 14, 16:20, 104, 114, 204, 214),
    # negfams <- c(1, 2, 5, 23, 24, 26:30, 33, 34, 36:40, 124, 134, 224, 234); BiCopSelect
    # fits c(0, posfams) or c(0, negfams) by the sign of the empirical tau (todo_fams)
    assert copulas.VC_POSITIVE == (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 16, 17, 18, 19, 20, 104, 114, 204, 214)
    assert copulas.VC_NEGATIVE == (0, 1, 2, 5, 23, 24, 26, 27, 28, 29, 30, 33, 34, 36, 37, 38, 39, 40, 124, 134, 224,
                                234)
    assert copulas.VC_FAMILIES[14] == ("gumbel", 180, 0) and copulas.VC_FAMILIES[27] == ("bb1", 90, 0)
    assert copulas.VC_FAMILIES[3] == ("clayton", 0, 0) and copulas.VC_FAMILIES[36] == ("joe", 270, 0)
    assert sorted(copulas.VC_FAMILIES) == sorted(set(copulas.VC_POSITIVE + copulas.VC_NEGATIVE))
    assert copulas.VC_FAMILIES[39] == ("bb7", 270, 0) and copulas.VC_FAMILIES[224] == ("tawn", 90, 2)
    # R/BiCopEst.R MLE_intern: optimize() intervals, max.BB = list(BB1 = c(5, 6), BB6 = c(6, 6),
    # BB7 = c(5, 6), BB8 = c(6, 1)) with lower bounds (0.001, 1.001), (1.001, 1.001), (1.001, 0.001),
    # (1.001, 0.001), the t copula's rho in +-0.9999 and nu in [2.0001, max.df = 30]
    assert copulas.VC_BOUNDS["clayton"] == ((1e-4, 100.0),) and copulas.VC_BOUNDS["gumbel"] == ((1.0001, 100.0),)
    assert copulas.VC_BOUNDS["frank"] == ((-100.0, 100.0),) and copulas.VC_BOUNDS["joe"] == ((1.0001, 50.0),)
    assert copulas.VC_BOUNDS["student"] == ((-0.9999, 0.9999), (2.0001, 30.0))
    assert copulas.VC_BOUNDS["bb1"] == ((0.001, 5.0), (1.001, 6.0)) and copulas.VC_BOUNDS["bb8"] == ((1.001, 6.0), (0.001, 1.0))
    # MLE_intern_Tawn: theta in [1.001, 20], psi in [max(tau - 0.1, 1e-4), min(tau + 0.2, 0.99)]
    assert np.allclose(copulas._bounds("tawn", 0.5), ((1.001, 20.0), (0.4, 0.7)))
    assert np.allclose(copulas._bounds("tawn", -0.85), ((1.001, 20.0), (0.75, 0.99)))
    # what pyvinecopulib cannot represent is capped at its bounds
    assert copulas._bounds("clayton", 0.5) == ((1e-4, 28.0),)


@pytest.mark.parametrize("code", [104, 114, 124, 134, 204, 214, 224, 234])
def test_tawn_types_are_vinecopulas(code):
    """Every rotation of both Tawn types: pyvinecopulib's density is VineCopula's (``LL_mod2``)
    and so is the h-function that BiCopSim inverts (``Hfunc1``, u2 given u1), so a pair is
    simulated with VineCopula's law."""
    rng = np.random.default_rng(code)
    u = rng.uniform(0.05, 0.95, size=(20, 2))
    u1, u2 = u[:, 0], u[:, 1]
    family, rot, ttype = copulas.VC_FAMILIES[code]
    assert family == "tawn" and ttype == code // 100 and rot == {0: 0, 1: 180, 2: 90, 3: 270}[code % 100 // 10]
    psi = (0.4, 1.0) if ttype == 1 else (1.0, 0.4)
    cop = copulas.bicop({"family": "tawn", "rotation": rot, "parameters": copulas._params("tawn", ttype, (3.0, 0.4))
                      .reshape(-1).tolist()})
    # LL_mod2: 114 is c(1 - u, 1 - v), 124 / 224 c(v, 1 - u), 134 / 234 c(1 - v, u)
    a, b = {0: (u1, u2), 180: (1 - u1, 1 - u2), 90: (u2, 1 - u1), 270: (1 - u2, u1)}[rot]
    assert cop.pdf(u) == pytest.approx(ref.tawn_pdf(a, b, 3.0, *psi), rel=1e-5)
    # Hfunc1: 114 is 1 - h(1 - u, 1 - v); 124 / 224 h(1 - u, v) and 134 / 234 1 - h(u, 1 - v) with
    # the two psi swapped (C(a, b; psi1, psi2) = C(b, a; psi2, psi1): the same law)
    q = psi[::-1]
    h = {0: lambda: ref.tawn_h1(u1, u2, 3.0, *psi), 180: lambda: 1 - ref.tawn_h1(1 - u1, 1 - u2, 3.0, *psi),
         90: lambda: ref.tawn_h1(1 - u1, u2, 3.0, *q), 270: lambda: 1 - ref.tawn_h1(u1, 1 - u2, 3.0, *q)}[rot]()
    np.testing.assert_allclose(cop.hfunc1(u), h, atol=1e-6)
    w = rng.uniform(size=20)
    np.testing.assert_allclose(cop.hfunc1(np.column_stack([u1, cop.hinv1(np.column_stack([u1, w]))])), w, atol=1e-6)


def test_a_tawn_fit_recovers_its_parameters_and_is_selected():
    import pyvinecopulib as pv

    true = copulas.bicop({"family": "tawn", "rotation": 0, "parameters": [0.6, 1.0, 4.0]})  # VineCopula 104
    u = copulas.pobs(*true.sample(1500, seeds=[1, 2]).T, 0)
    ll, (theta, psi) = copulas._fit_family(u, 104, copulas.kendall_tau(u))
    assert theta == pytest.approx(4.0, abs=0.6) and psi == pytest.approx(0.6, abs=0.06)
    got = copulas.select_copula(u)
    assert got["vinecopula"] == 104 and got["family"] == "tawn" and got["parameters"][1] == 1.0
    assert got["aic"] == pytest.approx(-2 * ll + 4)
    assert copulas.bicop(got).loglik(u) == pytest.approx(ll)
    assert isinstance(copulas.bicop(got), pv.Bicop)


@pytest.mark.parametrize("family,code", [("clayton", 3), ("gumbel", 14), ("joe", 6), ("gaussian", 1)])
def test_bounded_one_parameter_mle_is_the_clamped_one(family, code):
    """The log-likelihood is unimodal in the parameter, so VineCopula's optimize() on its
    interval ends at the clamp of the unbounded maximum: checked on a grid over the interval
    for weak (MLE below the lower bound) and strong dependence."""
    import pyvinecopulib as pv

    for k, rho in enumerate((0.0, 0.5, 0.9)):
        z = np.random.default_rng(k).multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=60)
        u = copulas.pobs(z[:, 0], z[:, 1], k)
        tau = copulas.kendall_tau(u)
        if tau <= 0:
            continue
        (lo, hi), = copulas._bounds(family, tau)
        grid = np.linspace(lo, hi, 400)
        ll = ref.copula_loglik_grid(pv.Bicop(family=getattr(pv.BicopFamily, family), rotation=copulas.VC_FAMILIES[code][1]),
                                    u, grid)
        peak = int(np.argmax(ll))
        assert np.all(np.diff(ll[:peak + 1]) >= -1e-9) and np.all(np.diff(ll[peak:]) <= 1e-9)  # unimodal
        got, (par,) = copulas._fit_family(u, code, tau)
        assert lo <= par <= hi and got >= ll.max() - 1e-3  # R's tolerance: 1.2e-4 in the parameter


def test_the_t_copula_keeps_nu_at_most_30():
    z = np.random.default_rng(3).multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=300)
    u = copulas.pobs(z[:, 0], z[:, 1], 0)
    ll, (rho, nu) = copulas._fit_family(u, 2, copulas.kendall_tau(u))
    assert 2.0001 <= nu <= 30.0 and abs(rho) < 0.9999
    face = max(copulas._loglik_fn(u, "student", 0, 0)((r, 30.0)) for r in np.linspace(0.3, 0.8, 501))
    assert ll >= face - 1e-6


def test_a_bb_family_beyond_vinecopulas_box_is_refitted_inside_it():
    """BB7 with delta = 12 (pyvinecopulib allows 25, VineCopula's max.BB 6): the fit stays in
    VineCopula's box and is at least as good as any point of a grid over the box's face."""
    true = copulas.bicop({"family": "bb7", "rotation": 0, "parameters": [1.5, 12.0]})
    u = copulas.pobs(*true.sample(300, seeds=[4, 5]).T, 0)
    ll, (theta, delta) = copulas._fit_family(u, 9, copulas.kendall_tau(u))
    (tlo, thi), (dlo, dhi) = copulas._bounds("bb7", 0.8)
    assert tlo <= theta <= thi and dlo <= delta <= dhi == 6.0
    f = copulas._loglik_fn(u, "bb7", 0, 0)
    assert ll >= max(f((t, 6.0)) for t in np.linspace(tlo, thi, 200)) - 1e-3


def _pairs_through(margin, cop, T=3000, n=50, seed=2):
    rng = np.random.default_rng(seed)
    u1, w = rng.random(T * n), rng.random(T * n)
    u2 = cop.hinv1(np.column_stack([u1, w]))
    return np.stack([margin.quantile(u1).reshape(T, n), margin.quantile(u2).reshape(T, n)], axis=1)


def test_an_asymmetric_copula_with_one_margin_makes_wilcoxon_liberal_a_gaussian_one_does_not():
    import pyvinecopulib as pv

    margin = simireff.fit_margin(np.random.default_rng(1).beta(0.8, 3, size=200), "ap")
    tawn = pv.Bicop(family=pv.BicopFamily.tawn, parameters=np.array([[0.2], [1.0], [8.0]]))
    gauss = pv.Bicop(family=pv.BicopFamily.gaussian, parameters=np.array([[np.sin(np.pi * tawn.tau / 2)]]))
    se = np.sqrt(0.05 * 0.95 / 3000)
    rates = {}
    for name, cop in (("tawn", tawn), ("gauss", gauss)):
        res = battery(_pairs_through(margin, cop), replicates=0, protocol="urbano2019")
        rates[name] = {t: np.mean(res.p(t, "two-sided") <= 0.05) for t in ("t", "wilcoxon")}
    assert rates["tawn"]["wilcoxon"] > 0.05 + 4 * se
    assert abs(rates["gauss"]["wilcoxon"] - 0.05) < 4 * se
    for name in rates:  # same margin: the mean difference is 0 and the t-test stays nominal
        assert abs(rates[name]["t"] - 0.05) < 4 * se


# ------------------------------------------------------------------ preselection (BiCopSelect presel = TRUE)
def _sample(family, rotation, par, n=1000, seed=7):
    import pyvinecopulib as pv

    cop = pv.Bicop(family=getattr(pv.BicopFamily, family), rotation=rotation, parameters=np.array(par, dtype=float))
    return copulas.pobs(*cop.sample(n, seeds=[seed, seed + 1]).T, 0)


# (pyvinecopulib family, rotation, parameters), the VineCopula codes of that copula and of its
# mirror image, which puts the tail dependence in the opposite corner
_ASYMMETRIC = [
    (("clayton", 0, [[3.0]]), 3, 13), (("clayton", 0, [[0.5]]), 3, 13), (("clayton", 180, [[3.0]]), 13, 3),
    (("gumbel", 0, [[2.5]]), 4, 14), (("gumbel", 0, [[1.3]]), 4, 14), (("clayton", 90, [[3.0]]), 23, 33),
    (("gumbel", 270, [[2.5]]), 34, 24), (("joe", 90, [[1.5]]), 26, 36), (("tawn", 0, [[0.6], [1.0], [4.0]]), 104, 114),
]


@pytest.mark.parametrize("spec, own, mirror", _ASYMMETRIC)
def test_preselection_keeps_the_rotation_of_the_data_and_drops_its_mirror(spec, own, mirror):
    u = _sample(*spec)
    tau = copulas.kendall_tau(u)
    c1, c2 = ref.presel_indices(u)
    assert copulas.corner_correlations(u, tau) == pytest.approx((c1, c2), abs=1e-12)
    got = copulas.preselect(u, tau)
    assert got == tuple(ref.presel_families(tau, c1, c2))  # R's branches and order
    assert own in got and mirror not in got and 0 in got and 2 in got  # independence and t always stay
    assert abs(c1 - c2) > 0.05
    if abs(c1 - c2) > 0.3:  # strong asymmetry: the symmetric one-parameter families go too
        assert 1 not in got and 5 not in got
    else:
        assert 1 in got and 5 in got


def test_both_strengths_of_asymmetry_are_exercised():
    d = []
    for spec, _, _ in _ASYMMETRIC:
        u = _sample(*spec)
        d.append(abs(np.subtract(*copulas.corner_correlations(u, copulas.kendall_tau(u)))))
    assert any(v > 0.3 for v in d) and any(0.05 < v <= 0.3 for v in d)


@pytest.mark.parametrize("spec", [("frank", 0, [[5.0]]), ("gaussian", 0, [[-0.6]]), ("student", 0, [[0.5], [4.0]])])
def test_radially_symmetric_data_keep_every_family_of_the_sign_of_tau(spec):
    """Adding the mirror image (1 - u, 1 - v) of every point makes the two quadrants the same
    point set reflected: c1 = c2, so nothing is dropped beyond the other sign's families."""
    u = _sample(*spec, n=600)
    u = np.vstack([u, 1 - u])
    tau = copulas.kendall_tau(u)
    c1, c2 = ref.presel_indices(u)
    assert c1 == pytest.approx(c2, abs=1e-9)
    want = copulas.VC_POSITIVE if tau > 0 else copulas.VC_NEGATIVE
    assert copulas.preselect(u, tau) == want == tuple(ref.presel_families(tau, c1, c2))
    assert 1 in want and 5 in want


def test_a_quadrant_without_two_points_keeps_the_families_of_the_sign_of_tau():
    u = np.array([[0.1, 0.2], [0.2, 0.1], [0.3, 0.4], [0.4, 0.3], [0.9, 0.8], [0.6, 0.2], [0.45, 0.35]])
    tau = copulas.kendall_tau(u)
    c1, c2 = ref.presel_indices(u)
    assert tau > 0 and np.isnan(c1) and not np.isnan(c2)
    assert copulas.preselect(u, tau) == copulas.VC_POSITIVE


def test_select_copula_fits_only_the_preselected_families(monkeypatch):
    u = _sample("clayton", 90, [[3.0]], n=200)
    fitted, real = [], copulas._fit_family

    def spy(u_, code, tau):
        fitted.append(code)
        return real(u_, code, tau)

    monkeypatch.setattr(copulas, "_fit_family", spy)
    got = copulas.select_copula(u)
    assert tuple(fitted) == copulas.preselect(u, copulas.kendall_tau(u))
    assert got["vinecopula"] in fitted and 33 not in fitted and 5 not in fitted


# ------------------------------------------------------------------ margins
@pytest.mark.parametrize("name, rows", [("adhoc8_ap", (0, 7, 40)), ("web2012_err20", (1, 9)),
                                        ("adhoc6_p10", (2, 30)), ("adhoc6_rr", (3,))])
def test_margins_are_simireffs_candidates_chosen_by_aic(name, rows):
    V = fastrisk.data.datasets.trec_matrix(name).values
    measure = name.partition("_")[2]
    expected = ({"norm", "beta", "nks", "bks"} if measure == "ap" or measure == "err20"
                else {"bbinom", "dks(1)", "dks(2)", "dks(5)", "dks(10)"})
    assert set(simireff._candidates(measure)) == expected
    for r in rows:
        best = simireff.fit_margin(V[r], measure)
        aics = {}
        for fam, fn in simireff._candidates(measure).items():
            try:
                aics[fam] = fn(V[r]).aic
            except ValueError:
                pass
        assert best.family == min(aics, key=aics.get)
        # bks normalises by the trapezoid sum over the CDF grid, the reference by quad: ~1e-6 apart
        rel = 2e-6 if best.family == "bks" else 1e-9
        assert best.aic == pytest.approx(2 * best.df - 2 * ref.loglik(best, V[r]), rel=rel, abs=1e-9)


def test_truncated_normal_and_beta_respect_simireffs_bounds():
    x = np.full(30, 0.4) + np.linspace(-1e-3, 1e-3, 30)  # tiny spread: sigma at its bound 0.05
    m = simireff._norm(x)
    assert m.params["sigma"] == pytest.approx(0.05)
    ll = stats.truncnorm.logpdf(x, -m.params["mu"] / 0.05, (1 - m.params["mu"]) / 0.05, m.params["mu"], 0.05).sum()
    assert m.aic == pytest.approx(2 * 2 - 2 * ll)
    u = np.r_[np.zeros(10), np.ones(10), np.linspace(0.01, 0.99, 10)]  # U-shaped: shapes at their bound 1
    b = simireff._beta(u)
    assert b.params["shape1"] >= 1 and b.params["shape2"] >= 1
    assert b.params["shape1"] == pytest.approx(1.0, abs=1e-6)


def test_rr_support_is_zero_and_reciprocal_ranks_to_1000():
    s = measures.support("RR")
    assert len(s) == 1001 and s[0] == 0 and s[1] == pytest.approx(1 / 1000) and s[-1] == 1
    np.testing.assert_allclose(measures.support("P@10"), np.arange(11) / 10)
    assert measures.support("nDCG@20") is None


@pytest.mark.parametrize("name, row", [("adhoc8_ap", 5), ("web2012_err20", 3), ("web2012_ndcg20", 8),
                                       ("adhoc6_p10", 4), ("adhoc6_rr", 6)])
def test_transformed_margin_has_the_target_mean_and_keeps_the_support(name, row):
    measure = name.partition("_")[2]
    m = simireff.fit_margin(fastrisk.data.datasets.trec_matrix(name).values[row], measure)
    done = 0
    for target in (m.mean - 0.03, m.mean + 0.01, m.mean + 0.1):
        t = m.transformed(target)
        if t is None:  # R's L-BFGS-B failed there (code 52): effTransform stops, the study skips
            continue
        done += 1
        assert abs(t.mean - target) <= 1e-5
        a, b = t.transform
        # from (1, 1) the search raises a (target above the mean) or b (below); under
        # L-BFGS-B 2.x's truncated subspace step the other shape may leave its bound slightly
        assert a >= 1 and b >= 1 and min(a, b) == pytest.approx(1, abs=0.01)
        assert (a > b) == (target > m.mean)
        np.testing.assert_array_equal(t.points, m.points)
        if m.continuous:
            assert t.cdf[0] == 0 and t.cdf[-1] == pytest.approx(1)
        else:  # support points with no mass keep none
            pm, pt = np.diff(np.r_[0, m.cdf]), np.diff(np.r_[0, t.cdf])
            assert ((pm > 0) >= (pt > 0)).all()
        # what is simulated has that mean: quantiles of a fine uniform grid
        u = (np.arange(200_000) + 0.5) / 200_000
        assert t.quantile(u).mean() == pytest.approx(target, abs=2e-4)
    assert done >= 2
    # an unreachable target: R's optimizer errs, fails, or converges where it stalls
    # (effTransform does not check the mean; we do, see SimMargin.transformed)
    assert m.transformed(1.2) is None and m.transformed(-0.1) is None


def test_a_target_beyond_the_support_fails_without_the_search(monkeypatch):
    """Every transformed margin's mean lies within its support: a target farther than UNREACHED
    outside it is None without R's optimizer (which searched there for seconds a transformation
    on ERR@20 before it stalled); a target within UNREACHED of the support is still searched."""
    m = simireff.fit_margin(fastrisk.data.datasets.trec_matrix("adhoc6_p10").values[4], "p10")
    inside = m.transformed(1.0 + simireff.UNREACHED / 2)  # searched (and reached within UNREACHED, or not)

    def no_search(*args, **kwargs):
        raise AssertionError("the optimizer ran for a target beyond the support")

    monkeypatch.setattr(simireff, "optim_lbfgsb", no_search)
    hi, lo = float(np.max(m.points)), float(np.min(m.points))
    for target in (hi + 2 * simireff.UNREACHED, 2.0, lo - 2 * simireff.UNREACHED, -1.0):
        assert m.transformed(target) is None
    with pytest.raises(AssertionError, match="the optimizer ran"):
        m.transformed(1.0 + simireff.UNREACHED / 2)
    assert inside is None or abs(inside.mean - (1.0 + simireff.UNREACHED / 2)) <= simireff.UNREACHED


# ------------------------------------------------------------------ runs kept, H1 pairs
def test_duplicate_and_bottom_ten_percent_runs_are_dropped():
    rng = np.random.default_rng(4)
    V = rng.random((21, 12))
    V[7] = V[2] + 5e-6  # a duplicate of run 2 within 1e-5
    V[15] = V[3]
    kept, removed = measures.kept_runs(V)
    r_kept, r_dup, r_bottom = ref.kept_runs(V)
    assert removed["duplicates"] == r_dup == [7, 15]
    assert kept.tolist() == r_kept and removed["bottom"] == r_bottom and len(r_bottom) == 2
    kept, removed = measures.kept_runs(fastrisk.data.datasets.trec_matrix("adhoc8_ap").values)
    assert (len(kept), len(removed["duplicates"]), len(removed["bottom"])) == (114, 2, 13)


def test_h1_pairs_follow_the_study(tiny, cache):
    fit = fits.fit_collections(tiny, "err20", cache=cache)["tiny"]
    mu = np.array([m.mean for m in fit.margins])
    pairs, failed = fit.h1_pairs(0.02)
    S = fit.n_runs
    top = set(np.argsort(-mu, kind="stable")[:round(S * 0.25)].tolist())
    assert set(pairs) <= set(range(S)) - top
    for b, partners in pairs.items():
        closest = [j for j in np.argsort(np.abs(mu - mu[b] - 0.02), kind="stable") if j != b][:10]
        assert [e for e, _ in partners] == [j for j in closest if j in {e for e, _ in partners}]
        for e, shapes in partners:
            assert abs(fit.margins[e].with_beta(*shapes).mean - (mu[b] + 0.02)) <= 1e-5
    # the failed ones are skipped and counted; here one, as in R: effTransform of run4's beta
    # (1, 7.0117) to run5's mean + 0.02 stops with "No successful transformation" (simIReff, R 4.2.2)
    tried = [(b, j) for b in set(range(S)) - top
             for j in [j for j in np.argsort(np.abs(mu - mu[b] - 0.02), kind="stable") if j != b][:10]]
    assert failed == sum(fit.margins[j].transformed(mu[b] + 0.02) is None for b, j in tried) == 1



@pytest.mark.slow  # two fits of ERR@20 and a study (~25 s)
def test_ties_seed_draws_other_ties_and_a_new_fit_version_does_not(tiny, cache, tmp_path, monkeypatch):
    """pobs' random tie-breaking is seeded from the scores, the measure and ``ties_seed``:
    another ``ties_seed`` re-draws the ties (other copulas where ERR@20's zeros tie, the same
    margins); a new FIT_VERSION changes the cache key, not the draw."""
    base = fits.fit_collections(tiny, "err20", cache=cache)["tiny"]
    other = fits.fit_collections(tiny, "err20", cache=tmp_path, ties_seed=1)["tiny"]
    assert base.ties_seed == 0 and other.ties_seed == 1 and other.hash != base.hash
    assert [(m.family, m.params) for m in other.margins] == [(m.family, m.params) for m in base.margins]
    assert set(other.copulas) == set(base.copulas) and other.copulas != base.copulas
    again = fits.fit_collections(tiny, "err20", cache=tmp_path, ties_seed=1)["tiny"]  # from the cache
    assert again.source.startswith("cache:") and again.copulas == other.copulas and again.ties_seed == 1
    V = tiny["tiny"].values
    seed, key = fits.ties_base_seed(V, "err20"), fits.matrix_hash(V, "err20")
    monkeypatch.setattr(fits, "FIT_VERSION", fits.FIT_VERSION + 1)
    assert fits.ties_base_seed(V, "err20") == seed and fits.matrix_hash(V, "err20") != key
    for bad in (-1, 1.5, True, 2**32):
        with pytest.raises(InputError, match="ties_seed"):
            fits.fit_collections(tiny, "err20", cache=tmp_path, ties_seed=bad)
    monkeypatch.undo()
    res = type1("err20", collections=tiny, topics=10, trials=20, replicates=0, rng=1, progress=False, cache=tmp_path,
                ties_seed=1, risk_nulls=False)
    assert json.loads(res.fits)["tiny"]["ties_seed"] == 1  # the study says which draw it used
    seen = {}
    monkeypatch.setattr(fits, "fit_collections", lambda names, **kw: seen.update(kw) or {})
    assert main(["simulate", "fit", "--collections", "web2013_err20", "--ties-seed", "3", "--cache", str(tmp_path),
                 "--quiet"]) == 0
    assert seen["ties_seed"] == 3


def test_transformations_are_the_same_on_any_executor(tiny, cache, tmp_path):
    """`prepare_h1` (one job per collection and delta) stores what `h1_pairs` computes in
    place, whatever runs the jobs, and writes it to the cache file."""
    from concurrent.futures import ThreadPoolExecutor

    serial = fits.fit_collections(tiny, "err20", cache=cache)["tiny"]
    want = {d: serial.h1_pairs(d) for d in (0.02, 0.05)}
    other = fits.fit_collections(tiny, "err20", cache=tmp_path)["tiny"]
    with ThreadPoolExecutor(2) as ex:
        fits.prepare_h1([other], [0.02, 0.05], executor=ex)
    assert {d: other.h1_pairs(d) for d in (0.02, 0.05)} == want
    again = fits.fit_collections(tiny, "err20", cache=tmp_path)["tiny"]
    assert set(again.h1) == {"0.02", "0.05"}


@pytest.mark.slow  # a fit of its own (~10 s)
def test_power_never_fails_when_some_targets_are_unreachable(tmp_path):
    """Baselines whose every partner's target is unreachable drop out of the power study, the
    others carry it; a delta no pair reaches is an InputError. On P@10 (13 runs, 11 kept: the
    fewest the H1 pairs allow), whose transformations take milliseconds: at delta 0.58 the
    targets mu_b + 0.58 of the 8 baselines run from 0.955 to 1.03, so the 5 highest baselines'
    targets lie beyond the scores' range (50 of the 80 transformations fail) and 3 keep their
    10 pairs. (On ERR@20 at delta 0.8 this took 3-4 minutes: R's optimizer searching for
    seconds a transformation before it stalls.)"""
    p10 = {"p10": _tiny("adhoc5_p10", runs=13)}
    res = power("p10", collections=p10, delta=[0.58], topics=10, trials=60, replicates=0, rng=2, progress=False,
                cache=tmp_path, risk_nulls=False)  # the study's H1 pairs only (the nulls' own: test_simulate_risk_null)
    assert 0 < json.loads(res.skipped)["0.58"] < 80
    assert np.isfinite(res.rate[0, 0]).all()
    with pytest.raises(InputError, match="no pair of runs reaches delta"):
        power("p10", collections=p10, delta=[2.0], topics=10, trials=10, replicates=0, rng=2, progress=False,
              cache=tmp_path, risk_nulls=False)


# ------------------------------------------------------------------ the battery of the study
def test_the_study_battery_matches_its_r_code():
    rng = np.random.default_rng(8)
    for c in (49, 50):  # wilcox.test: exact below 50 untied differences, else normal with correction
        V = rng.random((4, 2, c))
        res = battery(V, replicates=300, rng=5, protocol="urbano2019")
        d = V[:, 1] - V[:, 0]
        for k in range(4):
            method = "exact" if c < 50 else "approx"
            for tails, alt in (("two-sided", "two-sided"), ("greater", "greater")):
                sp = stats.wilcoxon(d[k], alternative=alt, method=method, correction=True).pvalue
                assert res.p("wilcoxon", tails)[k] == pytest.approx(round(sp, 6), abs=1.5e-6)
            ge, ab = ref.bootstrap_centred(list(d[k]), resolve_seed(res.seed).kernel, k, 300)
            assert res.p("bootstrap", "greater")[k] == pytest.approx(round(ge / 300, 6))
            assert res.p("bootstrap", "two-sided")[k] == pytest.approx(round(ab / 300, 6))
            ge, ab = ref.flips(list(d[k]), resolve_seed(res.seed).kernel, k, 300)
            assert res.p("permutation", "greater")[k] == pytest.approx(round(ge / 300, 6))
            assert res.p("permutation", "two-sided")[k] == pytest.approx(round(ab / 300, 6))
    # lattice-valued differences (P@10): flips equal to the observed mean count as rounding falls
    V = np.round(rng.integers(0, 11, (5, 2, 30)) / 10, 1)
    res = battery(V, replicates=400, rng=6, protocol="urbano2019")
    for k in range(5):
        ge, ab = ref.flips(list(V[k, 1] - V[k, 0]), resolve_seed(res.seed).kernel, k, 400)
        assert res.p("permutation", "greater")[k] == pytest.approx(round(ge / 400, 6))
        assert res.p("permutation", "two-sided")[k] == pytest.approx(round(ab / 400, 6))
    # the sign test: |d| <= 0.01 is a tie
    V = np.zeros((1, 2, 30))
    V[0, 1] = np.r_[np.full(10, 0.005), np.full(14, 0.2), np.full(6, -0.2)]
    res = battery(V, replicates=0, protocol="urbano2019")
    assert res.p("sign", "greater")[0] == pytest.approx(round(stats.binomtest(14, 20, alternative="greater").pvalue, 6))


# ------------------------------------------------------------------ studies and tables
def _small(fn, collections, cache, **kw):
    return fn("err20", collections=collections, topics=12, trials=120, replicates=50, rng=11, progress=False,
              cache=cache, **kw)


def test_type1_tables_follow_the_paper_and_do_not_depend_on_chunking(tiny, cache):
    # 7 runs kept: the study's type I pairs (any two runs); the risk nulls' pairs need 11 (their
    # headers: tests/test_simulate_risk_null.py)
    a = _small(type1, tiny, cache, chunk=40, risk_nulls=False)
    b = _small(type1, tiny, cache, chunk=120, risk_nulls=False)
    assert a.to_arrow().equals(b.to_arrow())
    (name, table), = a.tables().items()
    assert name == "type_1/type_1_err20_12"
    assert list(table.columns[:11]) == ["alpha", "t1", "w1", "s1", "b1", "p1", "t2", "w2", "s2", "b2", "p2"]
    assert list(table.columns[11:]) == ["zrisk_1 [same margins]", "georisk_1 [same margins]",
                                        "zrisk_2 [same margins]", "georisk_2 [same margins]"]
    np.testing.assert_allclose(table.alpha, ALPHAS)
    assert (np.diff(table[["t1", "w1", "s1", "b1", "p1"]].to_numpy(), axis=0) >= 0).all()
    long = a.to_pandas()
    assert {"study", "measure", "topics", "delta", "test", "tails", "significance", "rate", "n", "se"} <= set(long.columns)
    assert "<table>" in a._repr_html_()
    assert json.loads(a.fits)["tiny"]["runs"] == 7


def test_power_and_type3_tables(eleven, cache):
    p = _small(power, eleven, cache, delta=[0.02, 0.05], risk_nulls=False)
    t3 = _small(type3, eleven, cache, delta=[0.02, 0.05], risk_nulls=False)
    names = list(p.tables())
    assert "type_2_by_alpha/delta0.05/type_2_by_alpha_err20_12_delta0.05" in names
    assert "type_2_by_delta/alpha0.050/type_2_by_delta_err20_12_alpha0.050" in names
    by_delta = p.tables()["type_2_by_delta/alpha0.050/type_2_by_delta_err20_12_alpha0.050"]
    assert list(by_delta.delta) == [0.02, 0.05]
    tab3 = t3.tables()["type_3_by_alpha/delta0.05/type_3_by_alpha_err20_12_delta0.05"]
    assert list(tab3.columns[:6]) == ["alpha", "t2", "w2", "s2", "b2", "p2"]
    # same simulations: wrong-sign rejections are some of all two-sided rejections
    two = p.rate[:, 0, 1]
    assert (t3.rate[:, 0, 1] <= two + 1e-12).all()


def test_cli_measure_names_and_bad_combinations(capsys):
    assert resolve("nDCG@20") == ("ndcg20", fastrisk.simulate.MEASURES["ndcg20"])
    assert resolve("P@10")[0] == "p10" and resolve("RR")[0] == "rr" and resolve("ERR@20")[0] == "err20"
    assert resolve(None, ["web2012_err20"]) == ("err20", ("web2012_err20",))
    assert main(["simulate", "type1", "--collections", "web2012_err20", "--measure", "ap"]) != 0
    assert "hold err20, not 'ap'" in capsys.readouterr().err
    assert main(["simulate", "type1", "--replicates", str(10**9 + 1)]) != 0
    assert "--replicates must be in [0, 1e+09]" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("name", [names[0] for names in fastrisk.simulate.MEASURES.values()])
def test_the_power_study_never_fails_on_a_bundled_collection(name):
    """The study's H1 pairs at its largest effect (0.1: the hardest to reach) on one collection
    of each measure (each kind of margin), its kept runs' every other one (all 20 collections
    took five minutes of CI, all the runs of these five two; half the runs spread their means twice as
    far apart, so a partner's transformation moves its mean further, as at a larger delta)."""
    V = fastrisk.data.datasets.trec_matrix(name).values
    kept, removed = measures.kept_runs(V)
    kept = kept[::2]
    measure = name.partition("_")[2]
    margins = [simireff.fit_margin(V[k], measure) for k in kept]
    fit = fits.CollectionFit(name, measure, "", kept, removed, margins, {}, V[kept])
    pairs, failed = fit.h1_pairs(0.1)
    assert pairs and failed >= 0


class _LosingExecutor(cf.Executor):
    """Every job is lost with its worker (as a process pool broken by a crashed worker)."""

    def submit(self, fn, /, *args, **kwargs):
        f = cf.Future()
        f.set_exception(cf.BrokenExecutor("a worker died"))
        return f


def test_a_study_whose_jobs_are_all_lost_says_so(tiny, cache, tmp_path):
    with pytest.raises(InputError, match="fitting collection 'tiny': a job was lost with its worker"):
        _small(type1, tiny, tmp_path, executor=_LosingExecutor(), risk_nulls=False)
    fits.fit_collections(tiny, "err20", cache=cache)  # fitted here; the study's jobs are lost
    with pytest.warns(RuntimeWarning, match="lost"), \
            pytest.raises(InputError, match=r"job\(s\) were lost with their workers"):
        _small(type1, tiny, cache, executor=_LosingExecutor(), risk_nulls=False)


@pytest.mark.slow
def test_study_tables_are_identical_across_executors(tmp_path):
    from fastrisk.sweep import process_pool

    kw = dict(collections=["web2013_err20"], topics=20, trials=200, replicates=100, rng=5, progress=False,
              cache=tmp_path, risk_nulls=False)  # the calibrations share prepare_h1's executor path
    here = type1("err20", **kw)
    with process_pool(2) as pool:
        there = type1("err20", executor=pool, chunk=50, **kw)
    assert here.to_arrow().equals(there.to_arrow())


def test_figures_draw_the_curves_as_the_paper(tiny, eleven, cache, tmp_path):
    pytest.importorskip("matplotlib")
    from fastrisk.viz import plot

    t1 = _small(type1, tiny, cache, risk_nulls=False)
    p = _small(power, eleven, cache, delta=[0.02, 0.05], risk_nulls=False)
    ax = plot.simulation_rates(t1, tails="two-sided")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.lines) == 1 + len(t1.tests)  # the nominal diagonal and one line per test
    np.testing.assert_allclose(ax.lines[0].get_ydata(), ALPHAS)
    fig = plot.plot_studies([p], tmp_path / "power.svg")
    assert len([a for a in fig.axes if a.get_visible()]) == 4  # 2 tails x (by alpha, by delta)
    assert "Power" in (tmp_path / "power.svg").read_text()


def test_the_progress_bar_counts_trials_not_jobs(eleven, cache, monkeypatch):
    import fastrisk.sweep.run as run

    seen = {}

    class Recorder:
        def __init__(self, total, progress, desc, *, unit="it", initial=0, **kw):
            seen.update(total=total, unit=unit, done=initial)

        def update(self, n):
            seen["done"] += n

        def close(self):
            pass

    monkeypatch.setattr(run, "Progress", Recorder)
    power("err20", collections=eleven, delta=[0.02, 0.05], topics=10, trials=70, replicates=0, rng=2, progress=True,
          cache=cache, chunk=30, risk_nulls=False)
    # 70 trials x 2 deltas of the study's pairs (each risk null's group adds as many: test_simulate_risk_null.py)
    assert seen == {"total": 140, "unit": "trial", "done": 140}


# ------------------------------------------------------------------ against simIReff in R
# tests/data/simireff_margins_*.csv are written by R (tests/data/make_simireff_margins.R
# calling simIReff's effCont_norm / effCont_beta / effCont_nks / effTransform; see
# tests/data/README.md for the versions and the command). bde is not installed there, so the
# beta-kernel candidate is not in the files and selection is compared among the other three.
def _simireff(kind):
    import csv
    from pathlib import Path

    with open(Path(__file__).parent / "data" / f"simireff_margins_{kind}.csv", newline="") as f:
        return list(csv.DictReader(f))


def _num(v):
    return float(v) if v not in ("", "NA") else float("nan")


def _r_fits():
    out = {}
    for row in _simireff("fits"):
        out.setdefault(row["collection"], {}).setdefault(row["run"], {})[row["family"]] = row
    return out


def _x(collection, run_name):
    m = fastrisk.data.datasets.trec_matrix(collection)
    return m.values[list(m.systems).index(run_name)]


def _ours(collection, run_name):
    x = _x(collection, run_name)
    got = {}
    for fam in ("norm", "beta", "nks"):
        try:
            got[fam] = simireff._candidates("ap")[fam](x)
        except ValueError:
            pass
    return got


def test_kept_runs_are_the_r_scripts():
    for collection, runs in _r_fits().items():
        m = fastrisk.data.datasets.trec_matrix(collection)
        kept, _ = measures.kept_runs(m.values)
        assert [m.systems[k] for k in kept] == list(runs)


def _compare_margins(every):
    both_ok = norm_agree = n = sel_n = sel_agree = 0
    for collection, runs in _r_fits().items():
        for run_name in list(runs)[::every]:
            r, ours = runs[run_name], _ours(collection, run_name)
            n += 1
            for fam in ("beta", "nks"):  # deterministic fits: same parameters, df, AIC, mean, variance
                if fam not in r:  # failed in R (nks: qkde's findInterval on ks's FFT rounding noise)
                    assert fam == "beta" or fam not in ours, (collection, run_name, fam)
                    continue
                g, e = ours[fam], r[fam]
                p1 = g.params["shape1"] if fam == "beta" else g.params["h"]
                # nks: ks's binned estimate as R computes it (fastrisk.simulate._r.rks), equal to the
                # file's 10 printed digits
                assert p1 == pytest.approx(_num(e["p1"]), rel=2e-3 if fam == "beta" else 1e-9), (collection, run_name, fam)
                if fam == "beta":
                    assert g.params["shape2"] == pytest.approx(_num(e["p2"]), rel=2e-3)
                assert g.df == pytest.approx(_num(e["df"]), rel=5e-3 if fam == "beta" else 1e-9)
                tol = 0.05 + 2e-3 * abs(_num(e["aic"])) if fam == "beta" else 1e-6
                assert g.aic == pytest.approx(_num(e["aic"]), abs=tol)
                # nks: simIReff's mean and variance (R's integrals of the truncated qkde, SimMargin.moments)
                assert g.mean == pytest.approx(_num(e["mean"]), abs=1e-4 if fam == "beta" else 0, rel=0 if fam == "beta" else 1e-9)
                assert g.variance == pytest.approx(_num(e["var"]), rel=1e-3 if fam == "beta" else 1e-9, abs=2e-4 if fam == "beta" else 0)
            # the truncated normal: R's L-BFGS-B fails on the flat ridge mu -> -inf about half the
            # time; ours (R's objective and L-BFGS-B, rmath) on the same runs: R's other failures
            # are in effCont_norm's mean / variance integrals (integrate), after the fit
            norm_agree += ("norm" in r) == ("norm" in ours)
            if "norm" in r and "norm" in ours:
                both_ok += 1
                # effCont_norm's mean / variance (integrals or truncnorm's formulas, SimMargin.moments)
                assert ours["norm"].mean == pytest.approx(_num(r["norm"]["mean"]), rel=1e-8)
                assert ours["norm"].variance == pytest.approx(_num(r["norm"]["var"]), rel=1e-7)
            # selection (AIC) among the candidates R fitted
            sel = next(f for f, e in r.items() if e["selected"] == "TRUE")
            aic = {f: ours[f].aic for f in r if f in ours}
            if set(aic) == set(r):
                sel_n += 1
                sel_agree += min(aic, key=aic.get) == sel
    assert sel_agree == sel_n  # 125 of 125 on these two (nks as R computes it)
    assert norm_agree >= 0.95 * n  # 123 of 125 on these two
    return n, both_ok


def test_margins_agree_with_simireff_in_r():
    n, both_ok = _compare_margins(every=6)
    assert n >= 20 and both_ok >= 3


@pytest.mark.slow
def test_every_margin_agrees_with_simireff_in_r():
    n, both_ok = _compare_margins(every=1)
    assert n > 120 and both_ok >= 10


def test_eff_transform_agrees_with_simireff_in_r():
    rows = _simireff("transforms")
    assert any(r["ok"] == "TRUE" for r in rows)
    for r in rows:
        g = _ours(r["collection"], r["run"]).get(r["family"])
        if g is None:
            continue
        t = g.transformed(_num(r["target"]))
        if r["ok"] != "TRUE":  # R's effTransform stops: so does ours
            assert t is None
            continue
        assert t is not None
        # effTransform's objective on R's integrals of qeff(qbeta(p, a, b)): R's (a, b) (nks: to the
        # printed digits; beta: our shapes are R's to ~1e-3); the tabulated mean is within 1e-6 of R's
        assert t.transform == pytest.approx((_num(r["a"]), _num(r["b"])), rel=1e-8 if r["family"] == "nks" else 2e-6)
        assert t.mean == pytest.approx(_num(r["mean"]), abs=2e-6)
        assert t.variance == pytest.approx(_num(r["var"]), rel=0.03, abs=3e-4)
        up = _num(r["target"]) > _num(r["base_mean"])  # L-BFGS-B from (1, 1) moves a (up) or b (down)
        assert (t.transform[1] if up else t.transform[0]) == pytest.approx(1.0, abs=0.01)


# ------------------------------------------------------------------ discrete margins (P@10, RR)
# tests/data/simireff_discrete_bbinom.csv is written by R (tests/data/make_simireff_discrete.R
# calling simIReff's effDisc_bbinom; versions and command in tests/data/README.md). np (for
# effDisc_dks) is not installed there: its bandwidth is checked against a transcription of
# np's cv.ls objective (tests/reference/margins.py).
def _r_bbinom(every):
    import csv
    from pathlib import Path

    with open(Path(__file__).parent / "data" / "simireff_discrete_bbinom.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return rows[::every]


def _check_bbinom(rows):
    mats = {}
    for r in rows:
        if r["collection"] not in mats:
            mats[r["collection"]] = fastrisk.data.datasets.trec_matrix(r["collection"])
        m = mats[r["collection"]]
        x = m.values[list(m.systems).index(r["run"])]
        assert r["ok"] == "TRUE"
        g = simireff._bbinom(x, measures.support(r["collection"].split("_")[1]))
        ll = (4.0 - g.aic) / 2
        # the MLE: at least R's likelihood (R's L-BFGS-B stops within ~1e-5 of ours)
        assert ll >= _num(r["loglik"]) - 2e-5, (r["collection"], r["run"])
        assert g.params["alpha"] == pytest.approx(_num(r["shape1"]), rel=3e-3)
        assert g.params["beta"] == pytest.approx(_num(r["shape2"]), rel=3e-3)
        assert g.df == 2 and g.aic == pytest.approx(_num(r["aic"]), abs=5e-5)
        assert g.mean == pytest.approx(_num(r["mean"]), abs=5e-4)
        assert g.variance == pytest.approx(_num(r["var"]), rel=2e-3)


def test_beta_binomial_margins_agree_with_simireff_in_r():
    rows = _r_bbinom(every=25)
    assert {r["collection"].split("_")[1] for r in rows} == {"p10", "rr"}
    _check_bbinom(rows)


@pytest.mark.slow
def test_every_beta_binomial_margin_agrees_with_simireff_in_r():
    rows = _r_bbinom(every=1)
    assert len(rows) > 600
    _check_bbinom(rows)


def test_discrete_kernel_bandwidth_ignores_unobserved_categories():
    """The case the full-support integral got wrong: P@10 scores on 0, .1, .5 and .9 only."""
    obs = [0, 0, 1, 5, 5, 5, 5, 9, 9, 1, 0, 5]
    lam = simireff.lscv_bandwidth(obs, 11)
    coarse = np.linspace(0.0, 1.0, 1001)  # the grid's minimum, then the 1e-4 grid around it
    g0 = coarse[int(np.argmin([np_cv_ls(obs, g) for g in coarse]))]
    fine = np.round(np.arange(max(g0 - 2e-3, 0.0), min(g0 + 2e-3, 1.0) + 5e-5, 1e-4), 4)
    ref = fine[int(np.argmin([np_cv_ls(obs, g) for g in fine]))]
    assert lam == pytest.approx(ref, abs=2e-4)


def test_study_flips_on_reciprocal_rank_lattices_count_ties_as_rounding_falls():
    """RR differences (1/k - 1/m) repeat across topics, so many sign flips give the observed
    mean exactly or up to rounding: the study's comparison (no tolerance, R's mean)."""
    rng = np.random.default_rng(18)
    sup = measures.support("rr")[-6:]  # 1/5 .. 1
    V = sup[rng.integers(0, 6, (4, 2, 24))]
    V[:, 1, :8] = V[:, 0, :8]  # ties d = 0
    res = battery(V, replicates=500, rng=3, protocol="urbano2019")
    for k in range(4):
        ge, ab = ref.flips(list(V[k, 1] - V[k, 0]), resolve_seed(res.seed).kernel, k, 500)
        assert res.p("permutation", "greater")[k] == pytest.approx(round(ge / 500, 6))
        assert res.p("permutation", "two-sided")[k] == pytest.approx(round(ab / 500, 6))


def test_kept_discrete_runs_are_the_r_scripts():
    """P@10 means sit on the 10 % quantile exactly: R's colMeans (extended precision) keeps
    adhoc8_p10's run25 at 0.19 where a double sum gives 0.18999999999999997."""
    runs = {}
    for r in _r_bbinom(every=1):
        runs.setdefault(r["collection"], []).append(r["run"])
    assert len(runs) == 8 and "run25" in runs["adhoc8_p10"]
    for collection, names in runs.items():
        m = fastrisk.data.datasets.trec_matrix(collection)
        kept, _ = measures.kept_runs(m.values)
        assert [m.systems[k] for k in kept] == names, collection
    x = np.array([0.3, 0.1, 0.1, 0.7, 0.2, 0.2, 0.9])
    assert rmath.r_quantile7(x, 0.1) == pytest.approx(0.1) and rmath.r_quantile7(x, 0.5) == 0.2
    assert rmath.r_quantile7(x, 0.25) == 0.15000000000000002  # R 4.2.2: quantile(x, .25), 17 digits
