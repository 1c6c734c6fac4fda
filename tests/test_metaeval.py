"""Meta-evaluation: discriminative power, swap rates, effect sizes and topic-set-size design
through the API, CLI, sweep kinds and figures; thread-count determinism. The kernels against the
plain references of tests/reference/metaeval.py are in tests/test_metaeval_kernels.py."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from reference import metaeval as ref

from fastrisk._runtime.rng import resolve_seed
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.inference.metaeval import discriminative_power, effect_size, swap_rates, topic_set_size


def _matrix(S=5, c=12, seed=0, lattice=False):
    g = np.random.default_rng(seed)
    X = g.integers(0, 11, (S, c)) / 10 if lattice else g.random((S, c))
    return ScoreMatrix.from_array(X)


@pytest.mark.parametrize("statistic", ["mean", "trisk", "urisk", "zrisk"])
def test_same_numbers_whatever_the_thread_count(statistic):
    m = _matrix(S=40, c=30, seed=1)
    one = discriminative_power(m, statistic=statistic, alpha=1.0 if statistic != "mean" else 0.0, replicates=300,
                               rng=4, threads=1)
    many = discriminative_power(m, statistic=statistic, alpha=1.0 if statistic != "mean" else 0.0,
                                replicates=300, rng=4, threads=min(4, numba.config.NUMBA_NUM_THREADS))
    for name in ("asl", "threshold", "difference_required", "observed", "estimate"):
        np.testing.assert_array_equal(getattr(one, name), getattr(many, name))


def test_asl_curve_and_more_topics_discriminate_more():
    g = np.random.default_rng(2)
    effects = np.linspace(0, 0.2, 12)[:, None]
    small = discriminative_power(0.4 + effects + 0.2 * g.standard_normal((12, 15)), replicates=300, rng=1)
    big = discriminative_power(0.4 + effects + 0.2 * g.standard_normal((12, 120)), replicates=300, rng=1)
    assert (np.diff(small.asl_curve) >= 0).all()
    assert big.discriminative_power > small.discriminative_power


@pytest.mark.parametrize("kwargs, match", [
    (dict(matrix=np.ones((1, 5))), "at least 2 systems"),
    (dict(matrix=np.ones((3, 1))), "at least 2 topics"),
    (dict(matrix=np.array([[0.1, np.nan], [0.2, 0.3]])), "must be finite: system 0, topic 1"),
    (dict(replicates=99), r"`replicates` must be an integer >= 100"),
    (dict(statistic="ap"), "`statistic` must be one of mean, urisk"),
    (dict(alpha=-1.0, statistic="urisk"), "`alpha` must be a finite number >= 0"),
    (dict(alpha=1.0), "`alpha` applies to the risk statistics"),
    (dict(level=1.5), "`level` must be a number strictly between 0 and 1"),
    (dict(level=0.004, replicates=100), r"`level` x `replicates` must be at least 1"),
])
def test_discriminative_power_bad_input(kwargs, match):
    args = dict(matrix=np.random.default_rng(0).random((3, 6)))
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        discriminative_power(args.pop("matrix"), **args)


def test_memory_is_checked_up_front(monkeypatch):
    from fastrisk._runtime import resources
    from fastrisk.errors import ResourceError

    monkeypatch.setattr(resources, "available_memory", lambda: 10_000)
    with pytest.raises(ResourceError, match="select fewer systems"):
        discriminative_power(np.random.default_rng(0).random((30, 10)), replicates=100, rng=0)


# ---------------------------------------------------------------------------- swap rates
def test_swap_rates_shape_and_extrapolation():
    """Voorhees & Buckley's shape on a Gaussian law: the error rate falls with the difference and
    with the topic-set size; the exponential fit reproduces the rates it was fitted to."""
    g = np.random.default_rng(0)
    X = 0.3 + np.linspace(0, 0.1, 20)[:, None] + 0.15 * g.standard_normal((20, 80))
    r = swap_rates(X, sizes=[5, 10, 20, 40], trials=300, bins=[0.0, 0.02, 0.04, 0.06], rng=1)
    assert (np.diff(r.rate[-1]) < 0).all()
    assert (np.diff(r.rate[:, 1]) < 0).all()
    q = 1
    pred = np.log(r.extrapolate(10)[q])
    assert pred == pytest.approx(r.fit_intercept[q] + 10 * r.fit_slope[q])
    assert r.fit_slope[q] < 0


def test_swap_rates_same_numbers_whatever_the_thread_count():
    m = _matrix(S=30, c=40, seed=2)
    a = swap_rates(m, trials=200, rng=3, threads=1)
    b = swap_rates(m, trials=200, rng=3, threads=min(4, numba.config.NUMBA_NUM_THREADS))
    np.testing.assert_array_equal(a.swaps, b.swaps)
    np.testing.assert_array_equal(a.total, b.total)


@pytest.mark.parametrize("kwargs, match", [
    (dict(sizes=[1]), "`sizes` must be integers n with 2 <= n <= 5"),
    (dict(sizes=[6]), "`sizes` must be integers n with 2 <= n <= 5"),
    (dict(statistic="trisk", relative=True), "`relative` .* applies to statistic='mean' only"),
    (dict(statistic="p10"), "`statistic` must be one of"),
    (dict(alpha=1.0), "`alpha` applies to the risk statistics"),
    (dict(trials=0), "`trials` must be an integer >= 1"),
    (dict(bins=[0.1, 0.05]), "`bins` edges must be finite, non-negative and increasing"),
    (dict(bins=0), "`bins` must be a positive number of bins"),
])
def test_swap_rates_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        swap_rates(np.random.default_rng(0).random((3, 10)), **kwargs)


def test_swap_rates_needs_four_topics():
    with pytest.raises(InputError, match="at least 4 topics"):
        swap_rates(np.random.default_rng(0).random((3, 3)))


# ---------------------------------------------------------------------------- effect size
def test_effect_size_matches_a_plain_bootstrap():
    m = _matrix(S=4, c=25, seed=6)
    r = effect_size(m, "0", ci=0.9, replicates=400, rng=5)
    C = ref.resample_counts(resolve_seed(r.seed).kernel, 400, 25)
    X = m.values
    for s in range(1, 4):
        d = X[s] - X[0]
        assert r.effect_size[s] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        boot = []
        for b in range(400):
            rs = np.repeat(d, C[b].astype(int))
            boot.append(rs.mean() / rs.std(ddof=1))
        lo, hi = np.quantile(boot, [0.05, 0.95])
        assert r.low[s] == pytest.approx(lo, rel=1e-9)
        assert r.high[s] == pytest.approx(hi, rel=1e-9)
    assert math.isnan(r.effect_size[0]) and math.isnan(r.low[0])


@pytest.mark.parametrize("kwargs, match", [
    (dict(baseline="nope"), "`baseline` must name a system"),
    (dict(ci=1.0), "`ci` must be a number strictly between 0 and 1"),
    (dict(replicates=10), "`replicates` must be an integer >= 100"),
])
def test_effect_size_bad_input(kwargs, match):
    args = dict(baseline="0")
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        effect_size(np.random.default_rng(0).random((3, 10)), args.pop("baseline"), **args)


# ---------------------------------------------------------------------------- topic set size
@pytest.mark.parametrize("md, var, a, b", [(0.05, 0.01, 0.05, 0.2), (0.1, 0.02, 0.01, 0.1), (0.02, 0.05, 0.05, 0.2)])
def test_paired_t_design_is_the_smallest_n_with_power(md, var, a, b):
    from scipy import stats

    r = topic_set_size(method="paired_t", alpha=a, beta=b, min_difference=md, variance=var)
    delta = md / math.sqrt(var)

    def exact(n):
        w = stats.t.ppf(1 - a / 2, n - 1)
        return stats.nct.sf(w, n - 1, math.sqrt(n) * delta) + stats.nct.cdf(-w, n - 1, math.sqrt(n) * delta)

    assert r.exact_power == pytest.approx(exact(r.n), rel=1e-9)
    assert r.power >= 1 - b
    # the normal approximation of the noncentral t is within a topic of the exact answer
    assert exact(r.n + 1) >= 1 - b and exact(r.n - 2) < 1 - b


def test_anova_design_against_ncf():
    from scipy import stats

    r = topic_set_size(method="anova", alpha=0.05, beta=0.2, min_difference=0.1, variance=0.01, systems=10)
    D = 0.1 ** 2 / (2 * 0.01)

    def power(n):
        w = stats.f.ppf(0.95, 9, 10 * (n - 1))
        return stats.ncf.sf(w, 9, 10 * (n - 1), n * D)

    assert power(r.n) >= 0.8 > power(r.n - 1)


def test_ci_design_expected_width():
    r = topic_set_size(method="ci", alpha=0.05, min_difference=0.1, variance=0.01)
    from scipy import stats

    def width(n):
        ev = math.exp(math.lgamma(n / 2) - math.lgamma((n - 1) / 2)) * math.sqrt(2 / (n - 1))
        return 2 * stats.t.ppf(0.975, n - 1) * math.sqrt(0.01 / n) * ev

    assert width(r.n) <= 0.1 < width(r.n - 1)


@pytest.mark.slow
def test_paired_t_design_by_simulation():
    """On a Gaussian law with the design's effect, the paired t test at the designed n rejects
    about 1 - β of the time (5,000 simulated collections)."""
    from scipy import stats

    r = topic_set_size(method="paired_t", alpha=0.05, beta=0.2, min_difference=0.05, variance=0.01)
    g = np.random.default_rng(12)
    d = 0.05 + 0.1 * g.standard_normal((5000, r.n))
    p = stats.ttest_1samp(d, 0.0, axis=1).pvalue
    assert abs(np.mean(p < 0.05) - r.exact_power) < 0.02


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="z"), "`method` must be one of paired_t, anova, ci"),
    (dict(alpha=0.0), "`alpha` must be a number strictly between 0 and 1"),
    (dict(min_difference=-1.0), "`min_difference` must be a positive number"),
    (dict(variance=0.0), "`variance` must be a positive number"),
    (dict(systems=1), "`systems` must be an integer >= 2"),
])
def test_topic_set_size_bad_input(kwargs, match):
    args = dict(min_difference=0.05, variance=0.01)
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        topic_set_size(**args)


# ---------------------------------------------------------------------------- CLI, sweep kinds, figures
def test_cli_meta_commands(capsys, tmp_path):
    from fastrisk.cli import main

    X = np.random.default_rng(0).random((4, 12))
    path = tmp_path / "m.csv"
    np.savetxt(path, X.T, delimiter=",", header="a,b,c,d", comments="")
    assert main(["meta", "power", str(path), "--statistic", "mean,trisk", "--alpha", "1", "--replicates", "100",
                 "--seed", "1", "--summary", "--format", "csv"]) in (0, None)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("statistic,alpha,pairs,discriminative_power") and len(out) == 3
    r = discriminative_power(ScoreMatrix(X, ["a", "b", "c", "d"], [str(i + 1) for i in range(12)]),
                             statistic="trisk", alpha=1.0, replicates=100, rng=1)
    assert out[2].split(",")[2] == str(len(r.asl))
    assert float(out[2].split(",")[3]) == pytest.approx(r.discriminative_power)
    assert main(["meta", "swap", str(path), "--sizes", "3,6", "--trials", "10", "--seed", "1", "--format",
                 "csv"]) in (0, None)
    assert capsys.readouterr().out.startswith("size,bin,total,swaps,rate")
    assert main(["meta", "effect", str(path), "--baseline", "A", "--replicates", "100", "--seed", "1"]) in (0, None)
    assert "effect_size" in capsys.readouterr().out
    assert main(["meta", "topics", "--min-difference", "0.05", "--variance", "0.01", "--format", "csv"]) in (0, None)
    assert capsys.readouterr().out.splitlines()[1].startswith("paired_t,0.05,0.2,34,")


def test_sweep_kinds(tmp_path):
    from fastrisk.sweep import sweep

    grid = {"sweep": {"seed": 3}, "experiment": [
        {"kind": "discriminative_power", "data": "trec:adhoc8_p10", "params": {"replicates": 100},
         "grid": {"statistic": ["urisk", "zrisk"], "alpha": [1, 5]}},
        {"kind": "swap_rates", "data": "trec:adhoc8_p10", "params": {"trials": 5, "sizes": [5, 10]}}]}
    t = sweep(grid, progress=False).to_pandas()
    power = t[t.kind == "discriminative_power"]
    assert len(power) == 4 and set(power.statistic) == {"urisk", "zrisk"} and (power.status == "ok").all()
    assert (t[t.kind == "swap_rates"]["size"].dropna().unique() == [5, 10]).all()


def test_figures_render():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from fastrisk.viz.metaeval import asl_curves, swap_rate_curves

    m = _matrix(S=6, c=20, seed=1)
    a = discriminative_power(m, replicates=100, rng=1)
    b = discriminative_power(m, statistic="urisk", alpha=1.0, replicates=100, rng=1)
    ax = asl_curves({"mean": a, "URisk": b})
    assert len(ax.lines) == 3  # two curves and the level
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), a.asl_curve)
    ax = swap_rate_curves(swap_rates(m, sizes=[3, 6, 10], trials=20, rng=1))
    assert len(ax.lines) == 3


