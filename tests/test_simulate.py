"""The simpler simulated collections (hurdle margins, exchangeable copulas, topic resampling);
the published protocol of the studies is pinned in test_simulate_protocol.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.margins import np_cv_ls
from scipy import stats

import fastrisk
from fastrisk.errors import InputError
from fastrisk.simulate import (
    CollectionModel,
    fit_hurdle_margin,
    resample_topics,
    simulate_pairs,
    type1,
)
from fastrisk.simulate.margins import BINS
from fastrisk.simulate.simireff import lscv_bandwidth


def _sample(margin, n, seed=0):
    from fastrisk._kernels.simulate import quantiles

    u = np.random.default_rng(seed).random(n)
    out = np.empty(n)
    quantiles(margin.cdf, margin.values, margin.continuous, u, out)
    return out


@pytest.mark.parametrize("name", ["web2012_err20", "adhoc8_ap"])
def test_continuous_margins_keep_each_systems_mean_and_quantiles_within_sampling_error(name):
    m = fastrisk.data.datasets.trec_matrix(name)
    for s in range(0, m.n_systems, max(1, m.n_systems // 6)):
        x = m.values[s]
        c = len(x)
        fit = fit_hurdle_margin(x)
        assert fit.continuous and len(fit.values) == BINS + 2
        sim = _sample(fit, 40000, seed=s)
        assert abs(sim.mean() - x.mean()) < 3 * x.std(ddof=1) / np.sqrt(c) + 1e-3
        # DKW: the empirical CDF of c scores is within 1.63 / sqrt(c) of the truth with 99% probability
        for q in np.quantile(x, [0.25, 0.5, 0.75]):
            assert abs(np.mean(sim <= q) - np.mean(x <= q)) < 1.63 / np.sqrt(c)
        assert np.mean(sim == 0) == pytest.approx(np.mean(x == 0), abs=0.01)  # the atom at 0 is kept


def test_discrete_margins_stay_on_the_support():
    p10 = fastrisk.data.datasets.trec_matrix("adhoc8_p10").values[3]
    fit = fit_hurdle_margin(p10)
    assert not fit.continuous and fit.family in ("betabinom", "empirical")
    sim = _sample(fit, 5000)
    np.testing.assert_allclose(sim * 10, np.rint(sim * 10), atol=1e-12)
    rr = fastrisk.data.datasets.trec_matrix("adhoc8_rr").values[3]
    fit = fit_hurdle_margin(rr)
    assert not fit.continuous
    assert set(np.unique(_sample(fit, 5000))) <= set(np.unique(rr))


def test_tilting_moves_the_mean_exactly_and_keeps_the_support():
    fit = fit_hurdle_margin(fastrisk.data.datasets.trec_matrix("web2012_ndcg20").values[5])
    for target in (fit.mean - 0.05, fit.mean + 0.1):
        t = fit.tilt(target)
        assert t.mean == pytest.approx(target, abs=1e-9)
        np.testing.assert_array_equal(t.values, fit.values)
        assert ((t.probs > 0) == (fit.probs > 0)).all()
    with pytest.raises(InputError, match="outside its support"):
        fit.tilt(1.5)


def test_the_copula_keeps_kendall_tau_between_runs():
    m = fastrisk.data.datasets.trec_matrix("adhoc8_ap")
    model = CollectionModel(m)
    for a, b in ((1, 2), (10, 40)):
        cop = model.copula(a, b)
        real_tau = stats.kendalltau(m.values[a], m.values[b])[0]
        # itau: the fitted copula's tau is the sample tau (up to the random breaking of ties)
        assert cop.tau == pytest.approx(real_tau, abs=0.05) or cop.family.name == "indep"
        sim = simulate_pairs(m, a, b, 50, 400, rng=1, model=model)
        sim_tau = stats.kendalltau(sim[:, 0].ravel(), sim[:, 1].ravel())[0]
        assert sim_tau == pytest.approx(cop.tau, abs=0.03)


def test_h0_pairs_share_a_margin_and_h1_pairs_differ_by_delta():
    m = fastrisk.data.datasets.trec_matrix("web2012_ndcg20")
    model = CollectionModel(m)
    h0 = simulate_pairs(m, 4, 9, 50, 2000, rng=3, model=model)
    d = (h0[:, 1] - h0[:, 0]).ravel()
    assert abs(d.mean()) < 4 * d.std() / np.sqrt(d.size)
    h1 = simulate_pairs(m, 4, 9, 50, 2000, rng=3, model=model, delta=0.03)
    d = (h1[:, 1] - h1[:, 0]).ravel()
    assert d.mean() == pytest.approx(0.03, abs=4 * d.std() / np.sqrt(d.size))
    assert ((h1 >= 0) & (h1 <= 1)).all()


def test_simulation_is_the_same_in_chunks():
    m = fastrisk.data.datasets.trec_matrix("web2012_ndcg20")
    model = CollectionModel(m)
    whole = simulate_pairs(m, 1, 2, 20, 30, rng=5, model=model)
    tail = simulate_pairs(m, 1, 2, 20, 10, rng=5, model=model, start=20)
    np.testing.assert_array_equal(whole[20:], tail)


def test_resample_topics_draws_whole_topics():
    m = fastrisk.data.datasets.trec_matrix("web2012_err20")
    boot = resample_topics(m, 30, 5, rng=1)
    assert boot.shape == (5, m.n_systems, 30)
    cols = {tuple(col) for col in m.values.T}
    assert all(tuple(boot[k, :, i]) in cols for k in range(5) for i in range(30))
    sub = resample_topics(m, 50, 3, replace=False, rng=1)
    assert all(len({tuple(sub[k, :, i]) for i in range(50)}) == len(cols) for k in range(3))
    with pytest.raises(InputError, match="`n_topics`"):
        resample_topics(m, 51, 2, replace=False)


def test_bad_study_arguments_are_named():
    with pytest.raises(InputError, match="unknown simulation measure"):
        type1("ndcg10")
    with pytest.raises(InputError, match="`topics`"):
        type1("ap", topics=1)
    with pytest.raises(InputError, match="`replicates`"):
        type1("ap", replicates=10**9 + 1)
    with pytest.raises(InputError, match="no bundled file"):
        type1(collections=["nope"])
    with pytest.raises(InputError, match="hold err20, not 'ap'"):
        type1("ap", collections=["web2012_err20"])
    with pytest.raises(InputError, match="`kind`"):
        fit_hurdle_margin([0.1, 0.2, 0.3], kind="weird")
    with pytest.raises(InputError, match="in \\[0, 1\\]"):
        fit_hurdle_margin([0.1, 2.0, 0.3])


# ------------------------------------------------------------------ discrete kernel smoother (simIReff dks)
@given(st.lists(st.integers(0, 10), min_size=3, max_size=25))
@settings(max_examples=25, deadline=None)
def test_discrete_kernel_bandwidth_minimises_nps_cv_ls(obs):
    """np's cv.ls integrates fhat^2 over the observed categories only, so the bandwidth does
    not depend on the support's size (P@10: 11 points, RR: 1001) and is the minimiser of
    np's objective on [0, 1]."""
    lam = lscv_bandwidth(obs, 11)
    assert lscv_bandwidth([v + 990 for v in obs], 1001) == pytest.approx(lam, abs=1e-6)  # search tolerance 1e-8
    grid = np.linspace(0.0, 1.0, 201)
    best = min(np_cv_ls(obs, g) for g in grid)
    assert np_cv_ls(obs, lam) <= best + 1e-12
    assert 0.0 <= lam <= 1.0
