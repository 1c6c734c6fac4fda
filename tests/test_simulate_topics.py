"""Topic-set-size planning (`fastrisk.simulate.topics`, issue #28 part 3): on a Gaussian joint
law the simulated power curve of the t test is the noncentral-t power of the paired t test
(Sakai, "Topic set size design", Information Retrieval 19(3), 2016); the search; the band;
the validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from fastrisk.errors import InputError
from fastrisk.simulate import planning, simireff, studies, topics
from fastrisk.simulate.fits import CollectionFit

MU_B, SIGMA, RHO, DELTA = 0.45, 0.05, 0.5, 0.02
SD_D = SIGMA * np.sqrt(2 * (1 - RHO))  # sd of d = e - b: 0.05, so an effect size of 0.4


def nct_power(n, delta=DELTA, sd=SD_D, alpha=0.05):
    """Power of the two-sided paired t test at n topics when d ~ N(delta, sd^2): P(|T| > t_c),
    T noncentral t with n - 1 df and noncentrality delta sqrt(n) / sd (Sakai 2016, sec. 3)."""
    n = np.asarray(n, dtype=np.float64)
    tc = stats.t.ppf(1 - alpha / 2, n - 1)
    nc = delta * np.sqrt(n) / sd
    return stats.nct.sf(tc, n - 1, nc) + stats.nct.cdf(-tc, n - 1, nc)


@pytest.fixture
def gaussian(monkeypatch):
    """A collection of 11 runs (the fewest the study's H1 pairs allow: a baseline and its 10
    nearest runs) with the Gaussian joint law b ~ N(0.45, 0.05^2), e ~ N(0.47, 0.05^2),
    Gaussian copula rho = 0.5 between b and each e (normal margins far from 0 and 1, so the
    truncation to [0, 1] is below 1e-18): the H1 pairs at delta = 0.02 are b with each of the
    10 runs e, with the identity transformation (Beta(1, 1)), so every trial draws that law."""
    x = np.linspace(0.3, 0.6, 20)
    margins = [simireff._norm(x, params={"mu": MU_B, "sigma": SIGMA})]
    margins += [simireff._norm(x, params={"mu": MU_B + DELTA, "sigma": SIGMA}) for _ in range(10)]
    assert abs(margins[1].mean - margins[0].mean - DELTA) < 1e-12
    copulas = {f"0,{j}": {"family": "gaussian", "rotation": 0, "parameters": [RHO]} for j in range(1, 11)}
    fit = CollectionFit("gauss", "ap", "gauss-law", np.arange(11), {"duplicates": [], "bottom": []}, margins,
                        copulas, np.vstack([x] * 11),
                        h1={f"{DELTA:.10g}": {"pairs": {"0": [[j, 1.0, 1.0] for j in range(1, 11)]}, "failed": 0}})
    monkeypatch.setattr(studies, "fit_collections", lambda items, *a, **kw: {"gauss": fit})
    return {"gauss": np.vstack([x] * 11)}


def test_t_test_curve_is_the_noncentral_t_power(gaussian):
    trials = 2500
    res = topics(gaussian, measure="AP", test="t", delta=DELTA, power=0.8, trials=trials, rng=11, max_topics=128)
    ref = nct_power(res.n)
    se = np.sqrt(ref * (1 - ref) / trials)
    assert np.all(np.abs(res.power - ref) <= 4 * se + 1e-9), np.c_[res.n, res.power, ref]
    assert np.all(res.trials == trials) and res.replicates == 0
    # the answer is where the reference crosses 0.8, up to Monte-Carlo error
    n = res.topics
    slack = 4 * np.sqrt(0.8 * 0.2 / trials)
    assert nct_power(n) >= 0.8 - slack and nct_power(n - 1) <= 0.8 + slack
    exact = int(np.argmax(nct_power(np.arange(2, 200)) >= 0.8)) + 2
    assert exact == 52 and abs(n - exact) <= 4  # Sakai's effect size 0.4 at alpha .05, power .8
    # nested topic sets: every size uses the first n topics of the same draws: smooth curve
    assert np.all(np.diff(res.power) >= -3 * se[1:])
    assert res.power[0] < 0.1 and res.power[-1] > 0.8


def test_one_tailed_curve_is_the_one_sided_noncentral_t_power(gaussian):
    trials = 2000
    res = topics(gaussian, measure="AP", test="t", tails="one-tailed", delta=DELTA, power=0.9, trials=trials, rng=5,
                 max_topics=128)
    n = np.asarray(res.n, dtype=np.float64)
    ref = stats.nct.sf(stats.t.ppf(0.95, n - 1), n - 1, DELTA * np.sqrt(n) / SD_D)
    assert np.all(np.abs(res.power - ref) <= 4 * np.sqrt(ref * (1 - ref) / trials) + 1e-9)


def test_search_finds_the_smallest_size():
    calls = []

    def curve(n):
        calls.append(n)
        return min(1.0, n / 100)

    assert planning._search(curve, 0.8, 2, 1000) == 80
    assert len(calls) == len(set(calls)) and max(calls) <= 128
    assert planning._search(lambda n: n / 100, 0.8, 2, 50) is None
    assert planning._search(lambda n: 0.95, 0.8, 5, 50) == 5
    assert planning._search(lambda n: n / 100, 0.8, 2, 80) == 80


def _bisection(at, target, lo, hi):
    """The plain search: doubling from lo, then bisection (the sizes it evaluates)."""
    seen, below, n = [], None, lo
    while seen.append(n) or at(n) < target:
        if n >= hi:
            return None, seen
        below, n = n, min(2 * n, hi)
    while below is not None and n - below > 1:
        mid = (below + n) // 2
        seen.append(mid)
        below, n = (below, mid) if at(mid) >= target else (mid, n)
    return n, seen


@given(steps=st.lists(st.floats(0, 0.2), min_size=1, max_size=400), target=st.floats(0.05, 0.99),
       lo=st.integers(2, 30), span=st.integers(0, 400))
def test_search_is_the_smallest_size_on_any_non_decreasing_curve(steps, target, lo, span):
    curve = np.minimum(np.cumsum(steps), 1.0)
    hi = lo + span
    seen = []

    def at(n):
        seen.append(n)
        return float(curve[min(n - lo, len(curve) - 1)])

    want = next((n for n in range(lo, hi + 1) if at(n) >= target), None)
    seen.clear()
    assert planning._search(at, target, lo, hi) == want
    assert len(seen) == len(set(seen)) and all(lo <= n <= hi for n in seen)


def test_search_needs_fewer_topics_than_bisection_on_a_power_curve():
    # Sakai's noncentral-t power of the paired t test, an effect size of 0.12 (about 550 topics for 0.8)
    for target in (0.5, 0.8, 0.9):
        def at(n):
            return float(nct_power(n, delta=0.012, sd=0.1))

        ours, seen = [], []
        got = planning._search(lambda n: ours.append(n) or at(n), target, 2, 1000)
        want, seen = _bisection(at, target, 2, 1000)
        assert got == want == int(np.argmax(nct_power(np.arange(2, 1001), delta=0.012, sd=0.1) >= target)) + 2
        assert sum(ours) < 0.6 * sum(seen) and len(ours) < len(seen)  # the cost of a size grows with n


def test_wilson_band_is_scipys():
    p, n = np.array([0.0, 0.05, 0.5, 0.81, 1.0]), np.array([200, 1000, 10, 4000, 50])
    low, high = planning.wilson(p, n)
    for k in range(len(p)):
        ci = stats.binomtest(int(round(p[k] * n[k])), int(n[k])).proportion_ci(0.95, method="wilson")
        assert low[k] == pytest.approx(ci.low, abs=1e-12) and high[k] == pytest.approx(ci.high, abs=1e-12)


def test_needs_resamples_is_asked_of_the_battery():
    assert not planning.needs_resamples("t", (1.0,))
    assert not planning.needs_resamples("trisk@1", (1.0,))
    assert planning.needs_resamples("bootstrap", (1.0,)) and planning.needs_resamples("permutation", (1.0,))


@pytest.mark.parametrize("kw, match", [
    ({"test": "z"}, "`test` must be a test of the battery"),
    ({"test": "trisk@2"}, "trisk_alpha"),
    ({"tails": "less"}, "`tails`"),
    ({"significance": 1.5}, "`significance`"),
    ({"power": 1.0}, "`power`"),
    ({"delta": 0.0}, "`delta`"),
    ({"min_topics": 1}, "`min_topics`"),
    ({"min_topics": 50, "max_topics": 20}, "exceeds"),
    ({"trials": 0}, "`trials`"),
    ({"test": "bootstrap", "replicates": 0}, "needs resamples"),
])
def test_bad_arguments_are_named(kw, match):
    with pytest.raises(InputError, match=match):
        topics("adhoc5_ap", **kw)


def test_result_table_and_figure(gaussian, tmp_path):
    res = topics(gaussian, measure="AP", delta=DELTA, power=0.5, trials=300, rng=1, max_topics=64)
    t = res.to_arrow()
    assert t.column_names == ["n", "measure", "test", "tails", "power", "se", "low", "high", "trials"]
    assert t.column("n").to_pylist() == list(res.n) and res.reached
    assert "topics reach power 0.5" in res.summary()
    fig = res.plot(tmp_path / "topics.png")
    assert (tmp_path / "topics.png").stat().st_size > 1000
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "95 % Monte-Carlo band (Wilson)" in labels and f"{res.topics} topics" in labels


def test_only_the_planned_test_is_simulated(gaussian, monkeypatch):
    seen, real = [], studies._run
    monkeypatch.setattr(studies, "_run", lambda *a, **kw: (seen.append(kw["selection"].tests), real(*a, **kw))[1])
    res = topics(gaussian, measure="AP", test="wilcoxon", delta=DELTA, power=0.5, trials=200, rng=1, max_topics=16)
    assert seen and set(seen) == {("wilcoxon",)} and len(seen) == len(res.n)
