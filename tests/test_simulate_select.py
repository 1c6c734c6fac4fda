"""Running only some tests of a study (`tests=`, issue #28): a group of trials (the study's
own pairs, a risk null's calibrated pairs) runs only for one of its tests, only the tests asked
are resampled, only their risk nulls are calibrated, and every kept test's numbers are those
of the whole study with the same seed."""

from __future__ import annotations

import numpy as np
import pytest

import fastrisk
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import fits, power, studies, type1


def _matrix(rows, topics=30):
    m = fastrisk.data.datasets.trec_matrix("web2012_err20")
    return ScoreMatrix(m.values[rows][:, :topics], [m.systems[i] for i in rows], m.topics[:topics], m.measure)


def _same(part, whole):
    """Every test of ``part`` has the rates and counts of the same test in ``whole``."""
    assert part.tests and set(part.tests) <= set(whole.tests)
    for k, t in enumerate(part.tests):
        w = whole.tests.index(t)
        np.testing.assert_array_equal(part.rate[:, k], whole.rate[:, w], err_msg=t)
        np.testing.assert_array_equal(part.n[:, k], whole.n[:, w], err_msg=t)
        assert part.hypotheses[k] == whole.hypotheses[w]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("fits")


def test_study_pairs_keep_their_numbers_with_fewer_tests(cache):
    kw = dict(collections={"five": _matrix([0, 9, 18, 27, 36])}, topics=12, trials=300, replicates=40, rng=7,
              progress=False, cache=cache, risk_nulls=False)
    whole = type1("err20", **kw)
    part = type1("err20", tests=("bootstrap", "t", "zrisk"), **kw)
    assert part.tests == ("t", "bootstrap", "zrisk")  # in the battery's order
    _same(part, whole)
    assert np.isfinite(part.rate).all()


@pytest.mark.parametrize("tests, match", [
    ((), "empty"),
    (("t", "wilcox"), "'wilcox' is not a test"),
    (("trisk@2",), "'trisk@2' is not a test"),
    (("trisk@5",), "risk_nulls=False"),
])
def test_bad_tests_are_named(tests, match):
    with pytest.raises(InputError, match=match):
        type1("err20", collections=["web2012_err20"], trials=10, replicates=0, risk_nulls=False, tests=tests)


@pytest.mark.slow
def test_a_risk_test_alone_runs_and_calibrates_its_null_only(cache, monkeypatch):
    data = {"eleven": _matrix(list(range(0, 39, 3)))}  # 13 runs: 11 kept (two of the bottom 10 % dropped)
    kw = dict(collections=data, delta=[0.05], topics=10, trials=240, replicates=40, rng=3, trisk_alpha=[5.0],
              progress=False, cache=cache)
    asked, built = [], []
    real_nulls, real_h1 = studies.prepare_nulls, studies.prepare_h1
    monkeypatch.setattr(studies, "prepare_nulls", lambda f, nulls, targets, **k: (
        asked.append((tuple(n.name for n in nulls), tuple(targets))), real_nulls(f, nulls, targets, **k))[1])
    monkeypatch.setattr(studies, "prepare_h1", lambda f, deltas, **k: (built.append(1), real_h1(f, deltas, **k))[1])
    part = power("err20", tests=("trisk@5",), **kw)
    assert part.tests == ("trisk@5",) and part.hypotheses == ("URisk_5 = delta",)
    assert asked == [(("URisk_5",), (0.05,))] and not built  # no other null, no study pairs
    fit = fits.fit_collections(data, "err20", cache=cache)["eleven"]
    assert set(fit.nulls) == {studies.RiskNull("urisk", 5.0).key(0.05)} and not fit.h1
    whole = power("err20", **kw)
    assert {"t", "trisk@5", "bootstrap_risk@5", "trisk_smooth"} <= set(whole.tests)
    _same(part, whole)
    _same(power("err20", tests=("bootstrap_risk@5", "trisk_smooth", "t"), **kw), whole)
    assert np.isfinite(part.rate).all() and part.n[0, 0, 0, 0] > 0
