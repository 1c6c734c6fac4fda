"""Stacks of collections (fastrisk.core.batch): risk, t, ZRisk/GeoRisk, bootstrap and permutation tests of
K collections from the batched kernels, results with a leading ``batch`` axis."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import batch as ref
from scipy import stats

import fastrisk
from fastrisk.core import batch
from fastrisk.errors import InputError


def _stack(K=6, S=3, c=9, seed=0):
    return np.random.default_rng(seed).random((K, S, c))


def test_risk_matches_the_plain_reference_for_every_collection_system_and_alpha():
    V = _stack()
    alphas = [0.0, 1.0, 5.0]
    res = fastrisk.risk(V, 1, alpha=alphas)
    assert res.urisk.shape == (6, 3, 3)
    for k in range(6):
        for s in range(3):
            for a, alpha in enumerate(alphas):
                m, se, sej = ref.urisk_se(ref.risk_scores(V[k, s], V[k, 1], alpha))
                assert res.urisk[k, a, s] == pytest.approx(m, abs=1e-14)
                assert res.standard_error[k, a, s] == pytest.approx(se, abs=1e-14)
                assert res.se_jack[k, a, s] == pytest.approx(sej, abs=1e-12)
                if s != 1:
                    assert res.trisk[k, a, s] == pytest.approx(m / se, rel=1e-12)
    assert np.isnan(res.trisk[:, :, 1]).all()  # the baseline against itself: 0 / 0
    minus = fastrisk.risk(V, "s1", alpha=alphas, convention="minus")
    np.testing.assert_array_equal(minus.urisk, -res.urisk)
    np.testing.assert_array_equal(minus.trisk, -res.trisk)
    crit = stats.t.ppf(0.975, 8)
    assert res.critical_t == pytest.approx(crit)
    np.testing.assert_array_equal(res.at_risk, res.trisk < -crit)
    np.testing.assert_array_equal(minus.at_risk, res.at_risk)
    np.testing.assert_array_equal(minus.rewarding, res.rewarding)
    np.testing.assert_allclose(res.pvalue[:, :, 0], 2 * stats.t.sf(np.abs(res.trisk[:, :, 0]), 8))


def test_risk_long_form_has_the_batch_axis_first():
    res = fastrisk.risk(_stack(K=2, S=2, c=5), 0, alpha=[0, 5])
    t = res.to_arrow()
    assert t.column_names[:4] == ["batch", "alpha", "loss_weight", "system"]
    assert t.num_rows == 2 * 2 * 2
    assert "pvalue" in t.column_names


def test_is_stack_recognises_what_the_batch_functions_take():
    V = _stack(K=2, S=2, c=4)
    m = fastrisk.ScoreMatrix(V[0], ["a", "b"], list("wxyz"))
    assert batch.is_stack(V) and batch.is_stack([m, m]) and batch.is_stack(batch.stack(V))
    assert not batch.is_stack(V[0]) and not batch.is_stack(m) and not batch.is_stack([])


def test_a_sequence_of_score_matrices_is_the_same_stack():
    V = _stack(K=3, S=2, c=5)
    ms = [fastrisk.ScoreMatrix(V[k], ["a", "b"], [f"t{i}" for i in range(5)]) for k in range(3)]
    a = fastrisk.risk(ms, "a", alpha=1)
    b = fastrisk.risk(V, 0, alpha=1)
    np.testing.assert_array_equal(a.trisk, b.trisk)
    assert a.systems == ("a", "b")


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_t_test_is_scipy_ttest_rel(alternative):
    V = _stack(K=50, S=2, c=12, seed=3)
    res = fastrisk.t_test(V, 0, alpha=0, alternative=alternative)
    sp = stats.ttest_rel(V[:, 1], V[:, 0], axis=-1, alternative=alternative)
    np.testing.assert_allclose(res.statistic[:, 0, 1], sp.statistic, rtol=1e-10)
    np.testing.assert_allclose(res.pvalue[:, 0, 1], sp.pvalue, rtol=1e-10)


def test_zrisk_and_georisk_match_the_reference_per_collection():
    V = _stack(K=4, S=4, c=6, seed=5)
    V[0, :, 2] = 0.0  # a topic nobody scores on: e = 0 cells count 0
    res = fastrisk.zrisk(V, alpha=[0, 1, 5])
    for k in range(4):
        for a, alpha in enumerate([0, 1, 5]):
            expect = ref.zrisk_georisk(V[k].tolist(), 1 + alpha)
            for s in range(4):
                assert res.zrisk[k, a, s] == pytest.approx(expect[s][0], rel=1e-12, abs=1e-12)
                assert res.georisk[k, a, s] == pytest.approx(expect[s][1], rel=1e-12)
    minus = fastrisk.zrisk(V, alpha=[0, 1, 5], convention="minus")
    np.testing.assert_allclose(minus.zrisk, -res.zrisk)


def test_zrisk_of_one_collection_equals_fastrisk_zrisk():
    m = fastrisk.data.datasets.trec_matrix("web2012_err20")
    one = fastrisk.zrisk(m, alpha=[0, 5])
    res = fastrisk.zrisk(m.values[None], alpha=[0, 5])
    expect = np.asarray(one.zrisk)
    got = res.zrisk[0]
    np.testing.assert_allclose(got, expect.T if expect.shape == got.T.shape and expect.shape != got.shape else expect,
                               rtol=1e-10)


def test_bootstrap_counts_match_the_reference_streams():
    V = _stack(K=3, S=2, c=7, seed=7)
    B, seed = 200, 12345
    res = fastrisk.bootstrap(V, 0, alpha=[0, 2], replicates=B, rng=seed, alternative="greater", method=None)
    assert res.seed == seed  # the seed given, the one that reproduces the result
    s = fastrisk._runtime.rng.resolve_seed(seed).kernel
    for k in range(3):
        for a, alpha in enumerate([0, 2]):
            x = ref.risk_scores(V[k, 1], V[k, 0], alpha)
            ge, _, _ = ref.bootstrap_counts(x, s, k, B)
            assert res.pvalue[k, a, 1] == pytest.approx((ge + 1) / (B + 1))
    two = fastrisk.bootstrap(V, 0, alpha=[0, 2], replicates=B, rng=seed, method=None)
    x = ref.risk_scores(V[2, 1], V[2, 0], 2)
    assert two.pvalue[2, 1, 1] == pytest.approx((ref.bootstrap_counts(x, s, 2, B)[2] + 1) / (B + 1))
    assert two.standard_error[2, 1, 1] > 0


def test_resampling_is_identical_across_threads_and_chunks():
    V = _stack(K=9, S=2, c=8, seed=9)
    full = fastrisk.bootstrap(V, 0, replicates=300, rng=4, threads=2, method=None)
    one = fastrisk.bootstrap(V, 0, replicates=300, rng=4, threads=1, method=None)
    tail = fastrisk.bootstrap(batch.stack(V[5:], start=5), 0, replicates=300, rng=4, method=None)
    np.testing.assert_array_equal(full.pvalue, one.pvalue)
    np.testing.assert_array_equal(full.standard_error, one.standard_error)
    np.testing.assert_array_equal(full.pvalue[5:], tail.pvalue)
    V = _stack(K=9, S=2, c=40, seed=9)
    p1 = fastrisk.permutation_test(V, 0, alpha=0, replicates=300, rng=4, threads=2)
    p2 = fastrisk.permutation_test(batch.stack(V[4:], start=4), 0, alpha=0, replicates=300, rng=4, threads=1)
    np.testing.assert_array_equal(p1.pvalue[4:], p2.pvalue)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_exact_permutation_test_is_scipys(alternative):
    V = _stack(K=4, S=2, c=7, seed=11)
    with pytest.warns(fastrisk.AlphaInvariantWarning):  # as for one matrix
        res = fastrisk.permutation_test(V, 0, alpha=[0, 5], replicates=1000, alternative=alternative)
    assert res.exact and res.replicates == 128
    for k in range(4):
        d = V[k, 1] - V[k, 0]
        sp = stats.permutation_test((d,), np.mean, permutation_type="samples", alternative=alternative,
                                    n_resamples=np.inf)
        assert res.pvalue[k, 0, 1] == pytest.approx(sp.pvalue, rel=1e-12)
        assert res.pvalue[k, 1, 1] == res.pvalue[k, 0, 1]  # the same test at every alpha


def test_random_permutation_counts_match_the_reference():
    V = _stack(K=2, S=2, c=70, seed=13)
    B = 150
    res = fastrisk.permutation_test(V, 0, alpha=0, replicates=B, rng=3, alternative="less")
    for k in range(2):
        _, le = ref.sign_flip_counts(list(V[k, 1] - V[k, 0]), fastrisk._runtime.rng.resolve_seed(res.seed).kernel, k, B,
                                    exact=False)
        assert res.pvalue[k, 0, 1] == pytest.approx((le + 1) / (B + 1))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(st.floats(0, 1), min_size=6, max_size=6), st.lists(st.floats(0, 1), min_size=6, max_size=6))
def test_swapping_runs_negates_t_and_more_alpha_never_raises_urisk(x, y):
    V = np.array([[x, y]])
    r = fastrisk.risk(V, 0, alpha=[0, 1, 5])
    assert r.urisk[0, 0, 1] >= r.urisk[0, 1, 1] - 1e-15 >= r.urisk[0, 2, 1] - 2e-15
    t1 = fastrisk.t_test(V, 0, alpha=0).statistic[0, 0, 1]
    t2 = fastrisk.t_test(V[:, ::-1], 0, alpha=0).statistic[0, 0, 1]
    if np.isfinite(t1):
        assert t2 == pytest.approx(-t1, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("data, match", [
    (np.zeros((2, 3)), "3 dimensions"),
    (np.full((2, 2, 1), 0.5), "at least 2 topics"),
    (np.array([[[0.1, np.nan], [0.2, 0.3]]]), "system 0 on topic 1 of collection 0"),
    (np.array([[[0.1, 0.2], [0.2, 0.3]], [[0.1, 0.2], [np.inf, 0.3]]]), "system 1 on topic 0 of collection 1"),
    ("abc", "array of scores"),
])
def test_bad_stacks_are_named(data, match):
    with pytest.raises(InputError, match=match):
        batch.stack(data)
    if np.ndim(data) == 3:  # a stack: the entry points name the same cell (risk's kernel finds it)
        with pytest.raises(InputError, match=match):
            fastrisk.risk(data, 0)


def test_bad_arguments_are_named():
    V = _stack(K=2, S=2, c=4)
    with pytest.raises(InputError, match="`baseline`"):
        fastrisk.risk(V, 2)
    with pytest.raises(InputError, match="'zz'"):  # not a system of the stack: as for one matrix
        fastrisk.risk(V, "zz")
    with pytest.raises(InputError, match="`replicates`"):
        fastrisk.bootstrap(V, 0, replicates=0)
    with pytest.raises(InputError, match="`alternative`"):
        fastrisk.permutation_test(V, 0, alternative="both")
    with pytest.raises(InputError, match="`start`"):
        batch.stack(V, start=-1)
    with pytest.raises(InputError, match="non-negative"):
        fastrisk.zrisk(-V)
    with pytest.raises(InputError, match="`alpha`"):
        fastrisk.risk(V, 0, alpha=-1)
    with pytest.raises(InputError, match="`significance`"):
        fastrisk.risk(V, 0, significance=1.5)
    m1 = fastrisk.ScoreMatrix(V[0], ["a", "b"], list("wxyz"))
    m2 = fastrisk.ScoreMatrix(V[0, :, :3], ["a", "b"], list("wxy"))
    with pytest.raises(InputError, match="collection 1 has shape"):
        batch.stack([m1, m2])


def test_near_constant_differences_follow_the_one_variance_floor():
    # a system equal to its baseline plus 0.3, up to 1e-9 noise: TRisk about 2e9 by plain division,
    # +inf with a warning under the relative floor, in a batch exactly as for one matrix
    rng = np.random.default_rng(0)
    b = rng.random(50)
    one = np.stack([b, b + 0.3 + 1e-9 * rng.standard_normal(50), rng.random(50)])
    stack = np.stack([one, rng.random((3, 50))])
    with pytest.warns(fastrisk.ZeroVarianceWarning, match=r"systems of collection 0 against baseline 's0'"):
        got = fastrisk.risk(stack, 0, alpha=[0, 1])
    with pytest.warns(fastrisk.ZeroVarianceWarning):
        single = fastrisk.risk(one, 0, alpha=[0, 1])
    np.testing.assert_allclose(got.trisk[0], single.trisk, rtol=1e-12)  # inf and NaN where single has them
    np.testing.assert_allclose(got.standard_error[0], single.standard_error, rtol=1e-12)
    assert np.isposinf(got.trisk[0, :, 1]).all() and np.isfinite(got.trisk[1, :, 1:]).all()
    with pytest.warns(fastrisk.ZeroVarianceWarning):
        assert np.isposinf(fastrisk.t_test(stack, 0, alpha=0).statistic[0, 0, 1])
    from fastrisk import simulate

    bat = simulate.battery(one[None, :2], replicates=0, rng=1)
    assert np.isposinf(bat.statistic[0, 0])  # the t test of the battery, by the same rule


# ---------------------------------------------------------------------- today's numbers, one result class
def test_the_entry_points_give_the_batched_kernels_numbers_bit_for_bit():
    """A stack against a system of it (linear value function) is one call of the batched kernels
    (`fastrisk._kernels.batch`, unchanged): the numbers the former `fastrisk.batch` functions gave."""
    from scipy import special

    from fastrisk._kernels import batch as kb
    from fastrisk._runtime.rng import resolve_seed

    V = _stack(K=7, S=3, c=11, seed=21)
    a = np.array([0.0, 1.0, 5.0])
    fr, fk, u, se, sej, t, _, _ = kb.risk_batch(V, 1, a)
    res = fastrisk.risk(V, 1, alpha=a)
    for got, want in ((res.freward, fr), (res.frisk, fk), (res.urisk, u), (res.standard_error, se),
                      (res.se_jack, sej), (res.trisk, t)):
        np.testing.assert_array_equal(got, want)
    minus = fastrisk.risk(V, 1, alpha=a, convention="minus")
    np.testing.assert_array_equal(minus.trisk, -t)
    tt = fastrisk.t_test(V, 1, alpha=a, alternative="greater")
    np.testing.assert_array_equal(tt.statistic, t)
    np.testing.assert_array_equal(tt.pvalue, special.stdtr(10, -t))
    z, geo, eff = kb.zrisk_batch(V, 1.0 + a, -1.0)
    zr = fastrisk.zrisk(V, alpha=a, convention="minus")
    np.testing.assert_array_equal(zr.zrisk, z.transpose(0, 2, 1))
    np.testing.assert_array_equal(zr.georisk, geo.transpose(0, 2, 1))
    np.testing.assert_array_equal(zr.effectiveness, eff)
    B = 300
    seed = resolve_seed(5).kernel
    counts, moments = kb.bootstrap_batch(kb.batch_scores(V, 1, a), seed, 0, B)
    boot = fastrisk.bootstrap(V, 1, alpha=a, replicates=B, rng=5, method=None)
    p = ((counts[..., 2] + 1.0) / (B + 1.0)).reshape(7, 3, 3)
    p[:, :, 1] = np.nan
    np.testing.assert_array_equal(boot.pvalue, p)
    np.testing.assert_array_equal(boot.standard_error, moments[..., 1].reshape(7, 3, 3))
    np.testing.assert_array_equal(boot.urisk, u)
    assert boot.seed == 5 and boot.confidence_interval is None and boot.method is None
    W = _stack(K=4, S=3, c=40, seed=22)
    H = np.ascontiguousarray(W - W[:, 1:2])
    pc = kb.permutation_batch(H, seed, 0, B, False)
    perm = fastrisk.permutation_test(W, 1, alpha=0, replicates=B, rng=5, alternative="less")
    p = (pc[..., 1] + 1.0) / (B + 1.0)
    p[:, 1] = np.nan
    np.testing.assert_array_equal(perm.pvalue[:, 0], p)


def test_risk_of_a_stack_is_risk_of_each_collection_bit_for_bit():
    V = _stack(K=20, S=4, c=30, seed=23)
    res = fastrisk.risk(V, 0, alpha=[0, 1, 5])
    topics = [str(i) for i in range(30)]
    ones = [fastrisk.risk(fastrisk.ScoreMatrix(V[k], res.systems, topics), "s0", alpha=[0, 1, 5]) for k in range(20)]
    assert type(res) is type(ones[0])
    for name in type(res).array_dims():
        np.testing.assert_array_equal(getattr(res, name), np.stack([getattr(o, name) for o in ones]), err_msg=name)
    np.testing.assert_array_equal(res.row("s2")["trisk"], res.trisk[..., 2])


def test_a_stack_result_has_the_batch_axis_in_every_form():
    V = _stack(K=3, S=3, c=8, seed=24)
    res = fastrisk.risk(V, 0, alpha=[0, 5])
    assert res.batched and not fastrisk.risk(V[0], 0, alpha=[0, 5]).batched
    assert res.sizes() == {"batch": 3, "alpha": 2, "system": 3}
    assert all(d[0] == "batch" for d in res.array_dims().values())
    assert "batch" not in type(res).array_dims()["urisk"]  # the class declares one collection
    table = res.to_arrow()
    assert table.column_names[0] == "batch" and table.num_rows == 3 * 2 * 3
    np.testing.assert_array_equal(table["batch"].to_numpy(), np.repeat(np.arange(3), 6))
    np.testing.assert_array_equal(table["urisk"].to_numpy(), res.urisk.reshape(-1))
    assert res.to_pandas(("batch", "system"))["freward"].tolist() == res.freward.reshape(-1).tolist()
    assert "batch=3" in repr(res)
    one = fastrisk.risk(fastrisk.ScoreMatrix(V[2], res.systems, [str(i) for i in range(8)]), "s0", alpha=[0, 5])
    assert res.to_markdown(at={"batch": 2}) == one.to_markdown()
    boot = fastrisk.bootstrap(V, 0, alpha=0, replicates=100, rng=1, method=None)
    assert "ci_low" not in boot.to_arrow().column_names and boot.ci_low is None
    assert boot.to_arrow().column_names[:2] == ["batch", "alpha"]
    kept = fastrisk.bootstrap(V, 0, alpha=0, replicates=100, rng=1, keep_replicates=True)
    qq = kept.qq(10)  # per-collection quantiles get the batch axis, the shared plotting positions do not
    assert qq.array_dims()["sample"] == ("batch", "alpha", "system", "quantile")
    assert qq.array_dims()["probabilities"] == ("quantile",) and qq.to_arrow().num_rows == 3 * 1 * 3 * 10


def test_stacked_results_need_one_shape_and_one_parameter_value():
    m = fastrisk.ScoreMatrix(_stack(K=1, S=2, c=5)[0], ["a", "b"], list("vwxyz"))
    r1 = fastrisk.jackknife(m, "a", alpha=0)
    r2 = dataclasses.replace(r1, leave_one_out=r1.leave_one_out[..., :4])  # e.g. another topic dropped
    with pytest.raises(InputError, match="different shapes"):
        batch.stack_results([r1, r2])
    with pytest.raises(InputError, match="collection 1 of the stack gives `alpha`"):
        batch.stack_results([r1, fastrisk.jackknife(m, "a", alpha=1)])


@pytest.mark.parametrize("old, new", [("BatchRiskResult", "RiskResult"), ("BatchTTestResult", "TTestResult"),
                                      ("BatchZRiskResult", "ZRiskResult"), ("BatchBootstrapResult", "BootstrapResult"),
                                      ("BatchPermutationResult", "PermutationResult")])
def test_the_batch_result_classes_are_deprecated_aliases(old, new):
    with pytest.warns(DeprecationWarning, match=rf"fastrisk.batch.{old}` is deprecated .* 0\.2\.0; use `fastrisk.{new}`"):
        assert getattr(fastrisk.batch, old) is getattr(fastrisk, new)
    assert old not in batch.__all__


def test_the_batch_functions_are_deprecated_aliases_with_the_same_numbers():
    V = _stack(K=5, S=3, c=9, seed=25)
    calls = [("risk", lambda f: f(V, 1, alpha=[0, 2]), lambda: fastrisk.risk(V, 1, alpha=[0, 2])),
             ("t_test", lambda f: f(V, 1), lambda: fastrisk.t_test(V, 1, alpha=0)),
             ("zrisk", lambda f: f(V, alpha=1), lambda: fastrisk.zrisk(V, alpha=1)),
             ("bootstrap", lambda f: f(V[2:], replicates=200, rng=3, start=2),
              lambda: fastrisk.bootstrap(V, 0, replicates=200, rng=3, method=None)),
             ("permutation_test", lambda f: f(V[2:], alpha=0, replicates=200, rng=3, start=2),
              lambda: fastrisk.permutation_test(V, 0, alpha=0, replicates=200, rng=3))]
    for name, old, new in calls:
        with pytest.warns(DeprecationWarning, match=rf"`fastrisk.batch.{name}` is deprecated .*`fastrisk.{name}`"):
            got = old(getattr(batch, name))
        want = new()
        assert type(got) is type(want)
        arrays = [n for n in type(want).array_dims() if getattr(want, n) is not None]
        for n in arrays:
            w = getattr(want, n)
            np.testing.assert_array_equal(getattr(got, n), w[2:] if name in ("bootstrap", "permutation_test") else w)
