"""Issue 21: one extreme system never changes another's numbers (scaling is per system).

Reproduces the report: one cell of 1e308 in run1 of the TREC 2012 Web matrix gave every
other system SE 0, TRisk -inf and p 0 (the whole matrix was rescaled by 2^-1023, so the
other rows' squares underflowed), with a zero-variance warning that blamed constant scores.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastrisk
from fastrisk.errors import ZeroVarianceWarning

DATA = Path(fastrisk.__file__).resolve().parent / "bench_data" / "trec-matrices" / "web2012_err20.csv"


@pytest.fixture(scope="module")
def web2012():
    values = np.loadtxt(DATA, delimiter=",", skiprows=1).T
    return fastrisk.ScoreMatrix(values, [f"run{i + 1}" for i in range(values.shape[0])],
                                [str(t) for t in range(values.shape[1])], "ERR@20")


def _with_cell(m, system, topic, value):
    v = m.values.copy()
    v[system, topic] = value
    return fastrisk.ScoreMatrix(v, m.systems, m.topics, m.measure)


@pytest.mark.parametrize("spike", [1e155, 1e200, 1e308, -1e308, 1e-300])
def test_a_spike_in_run1_leaves_every_other_system_as_it_was(web2012, spike):
    spiked = _with_cell(web2012, 0, 0, spike)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ZeroVarianceWarning)  # no system is called constant
        r = fastrisk.risk(spiked, "run2", alpha=[0, 5])
    r0 = fastrisk.risk(web2012, "run2", alpha=[0, 5])
    others = [s for s in range(len(web2012.systems)) if s != 1]  # run2 is the baseline
    for name in ("urisk", "standard_error", "trisk", "pvalue"):
        assert np.array_equal(getattr(r, name)[:, others[1:]], getattr(r0, name)[:, others[1:]]), name
    assert np.isfinite(r.trisk[:, 0]).all() and (r.standard_error[:, 0] > 0).all()  # run1 itself: sensible


@pytest.mark.filterwarnings("ignore::fastrisk.errors.ZeroVarianceWarning")  # run5/run31 are shifted copies
@pytest.mark.parametrize("spike", [1e200, 1e308, 1e-300])
def test_a_spike_leaves_the_other_pairs_of_the_all_baseline_table(web2012, spike):
    t = fastrisk.baseline_table(_with_cell(web2012, 0, 0, spike), alpha=[0, 5])
    t0 = fastrisk.baseline_table(web2012, alpha=[0, 5])
    for name in ("urisk", "standard_error", "trisk", "pvalue"):
        a, b = getattr(t, name)[:, 1:, 1:], getattr(t0, name)[:, 1:, 1:]
        assert np.array_equal(a, b, equal_nan=True), name
    assert np.isfinite(t.trisk[:, 0, 1:]).all() and np.isfinite(t.trisk[:, 1:, 0]).all()


@settings(max_examples=40, deadline=None)
@given(row=st.integers(0, 5), k=st.integers(-300, 300), seed=st.integers(0, 2**16))
def test_multiplying_one_system_by_a_power_of_ten_leaves_the_others(row, k, seed):
    rng = np.random.default_rng(seed)
    v = rng.random((6, 25))
    names, topics = [f"s{i}" for i in range(6)], [str(t) for t in range(25)]
    base = 6 if row != 6 else 0
    v = np.vstack([v, rng.random((1, 25))])
    names.append("base")
    scaled = v.copy()
    scaled[row] *= 10.0 ** k
    r0 = fastrisk.risk(fastrisk.ScoreMatrix(v, names, topics, "AP"), names[base], alpha=[0, 5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        r = fastrisk.risk(fastrisk.ScoreMatrix(scaled, names, topics, "AP"), names[base], alpha=[0, 5])
        t = fastrisk.baseline_table(fastrisk.ScoreMatrix(scaled, names, topics, "AP"), alpha=[0, 5])
    t0 = fastrisk.baseline_table(fastrisk.ScoreMatrix(v, names, topics, "AP"), alpha=[0, 5])
    keep = [s for s in range(7) if s not in (row, base)]
    np.testing.assert_allclose(r.trisk[:, keep], r0.trisk[:, keep], rtol=1e-12, atol=0)
    np.testing.assert_allclose(r.pvalue[:, keep], r0.pvalue[:, keep], rtol=1e-12, atol=0)
    pairs = np.ix_(range(2), [s for s in range(7) if s != row], [s for s in range(7) if s != row])
    np.testing.assert_allclose(t.trisk[pairs], t0.trisk[pairs], rtol=1e-12, atol=0)
    np.testing.assert_allclose(t.pvalue[pairs], t0.pvalue[pairs], rtol=1e-12, atol=0)
