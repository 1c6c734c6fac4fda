"""The single-collection API takes a stack of K collections and answers per collection."""

import numpy as np
import pytest

import fastrisk
from fastrisk import InputError, ScoreMatrix


def _stack(K=4, S=3, c=15, seed=2):
    return np.random.default_rng(seed).random((K, S, c))


def test_risk_of_a_stack_equals_risk_of_each_collection():
    X = _stack()
    res = fastrisk.risk(X, 0, alpha=[0, 5])
    assert res.trisk.shape == (4, 2, 3)
    for k in range(4):
        m = ScoreMatrix(X[k], ["s0", "s1", "s2"], [str(i) for i in range(15)])
        one = fastrisk.risk(m, "s0", alpha=[0, 5])
        np.testing.assert_allclose(res.urisk[k][:, 1:], one.urisk[:, 1:], rtol=1e-12)
        np.testing.assert_allclose(res.trisk[k][:, 1:], one.trisk[:, 1:], rtol=1e-10)


def test_t_test_and_zrisk_of_a_stack():
    X = _stack()
    t = fastrisk.t_test(X)
    for k in range(4):
        m = ScoreMatrix(X[k], ["s0", "s1", "s2"], [str(i) for i in range(15)])
        np.testing.assert_allclose(t.pvalue[k][:, 1:], fastrisk.t_test(m, "s0", alpha=0).pvalue[:, 1:], rtol=1e-9)
        np.testing.assert_allclose(fastrisk.zrisk(X, alpha=1).zrisk[k], fastrisk.zrisk(m, alpha=1).zrisk, rtol=1e-10)


def test_resampling_of_a_stack_is_the_batch_path():
    X = _stack()
    a = fastrisk.bootstrap(X, replicates=300, rng=3)
    b = fastrisk.core.batch.bootstrap(X, 0, replicates=300, rng=3)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    p = fastrisk.permutation_test(X, replicates=300, rng=3)
    np.testing.assert_array_equal(p.pvalue, fastrisk.core.batch.permutation_test(X, 0, replicates=300, rng=3).pvalue)


@pytest.mark.parametrize("call, match", [
    (lambda X: fastrisk.risk(X, 0, value="smooth"), "takes no `value='smooth'`"),
    (lambda X: fastrisk.bootstrap(X, statistic=np.median), "takes no `statistic="),
    (lambda X: fastrisk.permutation_test(X, pairs=True), "takes no `pairs=True`"),
    (lambda X: fastrisk.t_test(X, convention="minus"), "takes no `convention='minus'`"),
])
def test_options_a_stack_does_not_take_are_named(call, match):
    with pytest.raises(InputError, match=match):
        call(_stack())
