"""LambdaRank / URisk / SARO / FARO gradients: reference, finite differences, LightGBM, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import ltr as ref

from fastrisk.errors import InputError
from fastrisk.ltr import lightgbm_example, objective, synthetic_letor


@st.composite
def tiny_queries(draw):
    nq = draw(st.integers(1, 4))
    group = [draw(st.integers(1, 9)) for _ in range(nq)]
    n = sum(group)
    labels = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    # scores on a coarse grid so that ties happen
    scores = draw(st.lists(st.integers(-6, 6), min_size=n, max_size=n))
    base = draw(st.lists(st.floats(0, 1), min_size=nq, max_size=nq))
    return np.array(scores, float) / 2, np.array(labels), group, np.array(base)


def _kernel(kind, scores, labels, group, base, alpha, **kw):
    obj = objective(kind, alpha=alpha, baseline=np.zeros(len(labels)), **kw)
    obj.gradients(np.zeros(len(labels)), labels, group)  # set up (first iteration at constant scores)
    obj.baseline_measure = np.asarray(base, float)
    obj.alpha_q = np.full(len(group), float(alpha))
    obj.iteration = 2
    return obj.gradients(scores)


@settings(max_examples=60, deadline=None)
@given(tiny_queries(), st.sampled_from(["urisk", "faro"]), st.sampled_from([0.0, 1.0, 5.0]),
       st.booleans(), st.sampled_from([0, 2, 30]), st.sampled_from([1, 3, 10]))
def test_kernel_matches_reference(data, kind, alpha, norm, truncation, k):
    scores, labels, group, base = data
    grad, hess, m = _kernel(kind, scores, labels, group, base, alpha, norm=norm,
                            truncation_level=truncation or None, measure=f"nDCG@{k}")
    rg, rh, rm = ref.gradients(scores.tolist(), labels.tolist(), group, base=base.tolist(),
                               alpha=[alpha] * len(group), faro=kind == "faro", k=k, truncation=truncation,
                               norm=norm)
    np.testing.assert_allclose(m, rm, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, rg, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hess, rh, rtol=1e-9, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(tiny_queries())
def test_alpha_zero_is_plain_lambdarank(data):
    scores, labels, group, base = data
    plain = _kernel("lambdarank", scores, labels, group, base, 0.0)
    for kind in ("urisk", "saro", "faro"):
        risky = _kernel(kind, scores, labels, group, base, 0.0)
        np.testing.assert_array_equal(plain[0], risky[0])
        np.testing.assert_array_equal(plain[1], risky[1])


@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("kind, alpha", [("lambdarank", 0.0), ("urisk", 5.0), ("faro", 2.0)])
def test_gradients_are_derivatives_of_the_smoothed_objective(norm, kind, alpha):
    rng = np.random.default_rng(4)
    group = [5, 7, 2]
    labels = rng.integers(0, 4, sum(group))
    scores = rng.normal(size=sum(group))
    base = [0.9, 0.2, 0.5]
    grad, hess, _ = _kernel(kind, scores, labels, group, base, alpha, norm=norm)
    # freeze the pair weights at the current ranking: C(s) = Σ c log(1 + exp(−(s_h − s_l)))
    frozen = []
    for q, (a, b) in enumerate(ref.queries(group)):
        terms, factor, _ = ref.pair_terms(list(scores[a:b]), [int(v) for v in labels[a:b]], base=base[q],
                                          alpha=alpha, faro=kind == "faro", norm=norm)
        frozen += [(a + h, a + low, factor * c) for h, low, c in terms]
    eps = 1e-5
    for i in range(len(scores)):
        up, down = scores.copy(), scores.copy()
        up[i] += eps
        down[i] -= eps
        c_up, c0, c_down = (ref.smoothed_loss(v, frozen) for v in (up, scores, down))
        assert grad[i] == pytest.approx((c_up - c_down) / (2 * eps), rel=1e-6, abs=1e-9)
        h = 1e-4  # a wider step for the second difference (rounding error ~ 1e-16 / h²)
        up[i], down[i] = scores[i] + h, scores[i] - h
        c_up, c_down = ref.smoothed_loss(up, frozen), ref.smoothed_loss(down, frozen)
        assert hess[i] == pytest.approx((c_up - 2 * c0 + c_down) / h**2, rel=1e-4, abs=1e-7)


def test_risk_weight_cases():
    """The four cases of ΔT (Wang et al. 2012) on one query of two documents."""
    labels, group = np.array([1, 0]), [2]
    # the relevant document is ranked second: nDCG@10 = 1/log2(3) = 0.631; a swap raises it to 1
    scores = np.array([0.0, 1.0])
    plain = _kernel("urisk", scores, labels, group, [0.0], 0.0, norm=False)[0]
    m, alpha = 1 / np.log2(3), 4.0
    for base, weight in [(0.5, 1.0),                          # win stays a win
                         (1.0, 1 + alpha * (1 - m) / (1 - m)),  # loss stays a loss (d + ΔM = 0)
                         (0.8, 1 + alpha * (0.8 - m) / (1 - m))]:  # loss -> win
        risky = _kernel("urisk", scores, labels, group, [base], alpha, norm=False)[0]
        np.testing.assert_allclose(risky, weight * plain, rtol=1e-12)
    # correct order, swap would lower nDCG from 1 to 0.631: win -> loss when the baseline is 0.8
    scores = np.array([1.0, 0.0])
    plain = _kernel("urisk", scores, labels, group, [0.0], 0.0, norm=False)[0]
    risky = _kernel("urisk", scores, labels, group, [0.8], alpha, norm=False)[0]
    np.testing.assert_allclose(risky, (1 + alpha * (0.8 - m) / (1 - m)) * plain, rtol=1e-12)


def test_degenerate_queries_have_zero_gradients():
    labels = np.array([3, 2, 2, 2, 0, 0, 0])
    group = [1, 3, 3]  # one document; all grades equal (2); all grades 0
    grad, hess, m = _kernel("urisk", np.arange(7.0), labels, group, [0.5, 0.5, 0.5], 5.0)
    assert not grad.any() and not hess.any()
    np.testing.assert_array_equal(m, [1.0, 1.0, 1.0])


@pytest.mark.slow  # compiles the objective at two thread counts: ~11 s
def test_threads_do_not_change_numbers():
    d = synthetic_letor(300, (1, 40), 2, rng=5)
    scores = np.random.default_rng(1).normal(size=d.n_documents)
    base = d.features[:, 0]
    out = []
    for threads in (1, 2):
        obj = objective("saro", alpha=5, baseline=base, threads=threads)
        obj.gradients(np.zeros(d.n_documents), d.labels, d.group)
        out.append(obj.gradients(scores))
    for a, b in zip(out[0], out[1]):
        np.testing.assert_array_equal(a, b)


def test_saro_faro_weights_after_first_iteration():
    d = synthetic_letor(40, (5, 15), 4, rng=2)
    base = d.features[:, 0]
    alpha = 5.0
    for kind in ("saro", "faro"):
        obj = objective(kind, alpha=alpha, baseline=base)
        obj.gradients(np.zeros(d.n_documents), d.labels, d.group)
        assert obj.adaptive_alpha is None
        np.testing.assert_array_equal(obj.alpha_q, alpha)  # first iteration: URisk at alpha
        scores = d.features[:, 1] + d.labels * 0.3
        grad, _, model = obj.gradients(scores)
        base_ndcg = [ref.ndcg(list(base[a:b]), list(d.labels[a:b]), 10) for a, b in ref.queries(d.group)]
        expected = ref.adaptive_alpha(model, base_ndcg, alpha)
        np.testing.assert_allclose(obj.adaptive_alpha, expected, rtol=1e-10, atol=1e-12)
        # the second iteration's gradients already use alpha'_q
        rg = ref.gradients(scores.tolist(), d.labels.tolist(), d.group, base=base_ndcg, alpha=expected,
                           faro=kind == "faro")[0]
        np.testing.assert_allclose(grad, rg, rtol=1e-9, atol=1e-12)
        # weights stay fixed for later iterations; a constant score vector restarts
        obj.gradients(scores * 2)
        np.testing.assert_allclose(obj.adaptive_alpha, expected, rtol=1e-10, atol=1e-12)
        obj.gradients(np.zeros(d.n_documents))
        assert obj.adaptive_alpha is None


lgb = pytest.importorskip("lightgbm")


def _train(train, obj, rounds):
    params = dict(objective=obj, learning_rate=0.1, num_leaves=15, min_data_in_leaf=20, verbose=-1, seed=1,
                  deterministic=True, num_threads=1, force_row_wise=True)
    data = lgb.Dataset(train.features, train.labels, group=train.group)
    return lgb.train(params, data, num_boost_round=rounds)


def test_lambdarank_matches_lightgbm_builtin():
    train, test = lightgbm_example()
    one_b = _train(train, "lambdarank", 1).predict(test.features)
    one_c = _train(train, objective("lambdarank"), 1).predict(test.features)
    np.testing.assert_allclose(one_c, one_b, atol=1e-6)  # same first tree (float32 vs float64 lambdas)
    from fastrisk.ltr import query_ndcg
    from fastrisk.ltr.objective import DEFAULT_GAINS

    many_b = _train(train, "lambdarank", 20).predict(test.features)
    many_c = _train(train, objective("lambdarank"), 20).predict(test.features)
    nb, nc = (query_ndcg(p, test.labels, test.boundaries, [10], DEFAULT_GAINS).mean() for p in (many_b, many_c))
    assert abs(nb - nc) < 0.02
    assert nc > 0.65  # and it learns: the example's built-in model scores about 0.69-0.73


def test_training_is_deterministic():
    train, test = lightgbm_example()
    base = train.features[:, 0]
    a = _train(train, objective("faro", alpha=5, baseline=base), 5).predict(test.features)
    b = _train(train, objective("faro", alpha=5, baseline=base), 5).predict(test.features)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kwargs, message", [
    (dict(kind="lmart"), "`kind`"),
    (dict(kind="urisk", alpha=-1, baseline=[0.0]), "`alpha`"),
    (dict(kind="lambdarank", alpha=2), "`alpha` must be 0"),
    (dict(kind="urisk", alpha=1), "needs a `baseline`"),
    (dict(kind="urisk", alpha=1, baseline=[np.nan]), "`baseline` scores must be finite"),
    (dict(measure="P@10"), "`measure`"),
    (dict(truncation_level=-3), "`truncation_level`"),
    (dict(sigmoid=0), "`sigmoid`"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(InputError, match=message):
        objective(**kwargs)


def test_bad_data():
    obj = objective("urisk", alpha=1, baseline=np.zeros(3))
    with pytest.raises(InputError, match="3 scores but the training data has 4"):
        obj.gradients(np.zeros(4), np.array([0, 1, 0, 1]), [2, 2])
    with pytest.raises(InputError, match="query sizes"):
        obj.gradients(np.zeros(3), np.array([0, 1, 0]), [2, 2])
    with pytest.raises(InputError, match="no query groups"):
        obj.gradients(np.zeros(3), np.array([0, 1, 0]), None)
    with pytest.raises(InputError, match="integer grades"):
        obj.gradients(np.zeros(3), np.array([0, 1.5, 0]), [3])
    with pytest.raises(InputError, match="grade 40 has no gain"):
        obj.gradients(np.zeros(3), np.array([0, 40, 0]), [3])
    obj.gradients(np.zeros(3), np.array([0, 1, 0]), [3])
    with pytest.raises(InputError, match="`scores` must be finite"):
        obj.gradients(np.array([0, np.nan, 1]))
    with pytest.raises(InputError, match="one value per training document"):
        obj.gradients(np.zeros(5))
