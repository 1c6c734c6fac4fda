"""The small-call paths of `zrisk`, `t_test` and `topic_risk` (issue #31): the blocked ZRisk
kernel against the scalar summation order it must reproduce bit for bit, the t test's
zero-variance accounting, and `topic_risk`'s fields computed on first access."""

from __future__ import annotations

import dataclasses
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.risk import topic_risk_ref

import fastrisk
from fastrisk import ScoreMatrix, ZeroVarianceWarning
from fastrisk.core.urisk import TopicRiskResult

LOSS_WEIGHTS = [1.0, 2.0, 6.0]


def zrisk_sequential(V, loss_weights):
    """ZRisk ``[alpha, system]`` in plain Python floats, every sum in the order of the scalar
    definition: topic totals over systems in row order, system totals over topics, the grand
    total over systems, then each system's positive and negative cells over topics (IEEE
    doubles: the compiled kernel must give these numbers exactly)."""
    S, c = V.shape
    topic = [0.0] * c
    system = []
    for k in range(S):
        acc = 0.0
        for i in range(c):
            topic[i] += float(V[k, i])
            acc += float(V[k, i])
        system.append(acc)
    grand = 0.0
    for k in range(S):
        grand += system[k]
    share = [t / grand if grand > 0.0 else 0.0 for t in topic]
    root = [math.sqrt(s) for s in share]
    out = np.empty((len(loss_weights), S))
    for k in range(S):
        p = n = 0.0
        rk = math.sqrt(system[k])
        for i in range(c):
            e = share[i] * system[k]
            if e > 0.0:
                z = (float(V[k, i]) - e) / (root[i] * rk)
                p += max(z, 0.0)
                n += min(z, 0.0)
        for a, w in enumerate(loss_weights):
            out[a, k] = p + w * n
    return out


@st.composite
def score_matrices(draw):
    S = draw(st.integers(1, 140))  # several blocks of 64 systems, and rows left over from fours
    c = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    V = rng.random((S, c))
    V[rng.random((S, c)) < draw(st.sampled_from([0.0, 0.3, 0.9]))] = 0.0  # zero cells, rows, topics
    return ScoreMatrix(V, [f"s{k}" for k in range(S)], [f"t{i}" for i in range(c)])


@settings(max_examples=40)
@given(score_matrices(), st.sampled_from([None, 2]))
def test_zrisk_kernel_reproduces_the_sequential_sums_bit_for_bit(matrix, threads):
    res = fastrisk.zrisk(matrix, loss_weight=LOSS_WEIGHTS, threads=threads)
    np.testing.assert_array_equal(res.zrisk, zrisk_sequential(matrix.values, LOSS_WEIGHTS))
    phi = 0.5 * np.vectorize(math.erfc)(-(res.zrisk / matrix.n_topics) / math.sqrt(2.0))
    np.testing.assert_allclose(res.georisk, np.sqrt(matrix.values.mean(axis=1) * phi), rtol=1e-14, atol=0)


def test_zrisk_reports_the_first_negative_cell_in_row_order():
    V = np.random.default_rng(3).random((70, 6))
    V[40, 5] = -0.5
    V[69, 0] = -0.25
    with pytest.raises(fastrisk.InputError, match=r"system 's40' scores -0.5 on topic 't5' \(2 negative"):
        fastrisk.zrisk(ScoreMatrix(V, [f"s{k}" for k in range(70)], [f"t{i}" for i in range(6)]))


# ---------------------------------------------------------------------- t test
def shifted_case():
    """s0 the baseline, s2 a shifted copy of it (zero standard error), s1 and s3 ordinary."""
    rng = np.random.default_rng(5)
    V = rng.random((4, 9))
    V[2] = V[0] + 0.1
    return ScoreMatrix(V, ["s0", "s1", "s2", "s3"], [f"t{i}" for i in range(9)])


@pytest.mark.parametrize("exclude_self", [False, True])
def test_t_test_warns_for_the_shifted_copy_and_never_for_the_baseline_itself(exclude_self):
    matrix = shifted_case()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fastrisk.t_test(matrix, "s0", alpha=[0.0, 2.0], exclude_self=exclude_self)
    messages = [str(w.message) for w in caught if issubclass(w.category, ZeroVarianceWarning)]
    assert len(messages) == 1 and "s2" in messages[0] and "s0," not in messages[0]
    assert res.systems == (("s1", "s2", "s3") if exclude_self else ("s0", "s1", "s2", "s3"))
    k = res.systems.index("s2")
    assert np.all(np.isinf(res.statistic[:, k])) and np.all(res.pvalue[:, k] == 0.0)
    if not exclude_self:
        assert np.all(np.isnan(res.statistic[:, 0])) and np.all(np.isnan(res.pvalue[:, 0]))


def test_t_test_against_itself_only_does_not_warn():
    matrix = shifted_case()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ZeroVarianceWarning)
        res = fastrisk.t_test(matrix.select(systems=["s0", "s1"]), "s0")
    assert np.all(np.isnan(res.statistic[:, 0])) and np.all(np.isfinite(res.statistic[:, 1]))


# ---------------------------------------------------------------------- topic_risk, jackknife fields
JACKKNIFE = ("tj", "influence", "pseudo_values")


def jackknife_case(seed=0, S=5, c=11):
    rng = np.random.default_rng(seed)
    V = rng.random((S, c))
    V[3] = V[0] + 0.05  # zero SE against s0: TR ±inf, TJ NaN
    return ScoreMatrix(V, [f"s{k}" for k in range(S)], [f"t{i}" for i in range(c)])


@pytest.mark.parametrize("convention", ["classic", "minus"])
def test_the_one_call_jackknife_fields_match_the_reference(convention):
    """TJ, the influences and the pseudo-values of the linear one-call path (computed with TR in
    `linear_topic_risk_table`) against plain leave-one-out means."""
    matrix = jackknife_case()
    alphas = [0.0, 1.0, 5.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        res = fastrisk.topic_risk(matrix, "s0", alpha=alphas, convention=convention)
    s = -1.0 if convention == "minus" else 1.0
    for a, alpha in enumerate(alphas):
        for k in (1, 2, 4):
            _, tj, pseudo = topic_risk_ref(matrix.values[k], matrix.values[0], alpha)
            np.testing.assert_allclose(res.tj[a, k], s * np.asarray(tj), rtol=1e-8, atol=1e-12)
            np.testing.assert_allclose(res.pseudo_values[a, k], s * np.asarray(pseudo), rtol=1e-9, atol=1e-12)
            c = matrix.n_topics
            theta = s * res.x[a, k].mean()
            loo = (c * theta - s * res.x[a, k]) / (c - 1)
            np.testing.assert_allclose(res.influence[a, k], s * (c - 1) * (theta - loo), rtol=1e-9, atol=1e-12)
    assert np.all(np.isnan(res.tj[:, 0])) and np.all(np.isnan(res.tj[:, 3]))  # self and the shifted copy


def test_the_one_call_result_equals_the_constructor_and_survives_pickle_replace_and_long_form():
    matrix = jackknife_case(1, S=4, c=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        res = fastrisk.topic_risk(matrix, "s1", alpha=[0.0, 2.0])
    eager = TopicRiskResult(**{f.name: getattr(res, f.name) for f in dataclasses.fields(res)})
    restored = pickle.loads(pickle.dumps(res))
    for name in JACKKNIFE:
        np.testing.assert_array_equal(getattr(restored, name), getattr(eager, name))
        np.testing.assert_array_equal(getattr(dataclasses.replace(res, significance=0.1), name),
                                      getattr(eager, name))
    assert res.to_arrow().to_pandas().equals(eager.to_arrow().to_pandas())  # (NaN where NaN)
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        res.nonexistent  # noqa: B018 - the attribute access is the test
