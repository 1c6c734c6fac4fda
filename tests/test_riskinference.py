"""Risk inferences (issue #37): the kernels against the plain reference, the exact test's level
under a worst-case-ish two-point null, monotonicity, thread invariance, the API and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import riskinference as ref

import fastrisk
from fastrisk import InputError, ScoreMatrix
from fastrisk._runtime.rng import resolve_seed
from fastrisk.core.inference import INFERENCES, pvalues, risk_pvalue, t_level_note

ALTS = ("two-sided", "greater", "less")
ANALYTIC = ("edgeworth", "johnson", "hall", "el-bartlett")


def _rows(seed=0):
    """Risk-reward scores of several shapes: skewed both ways, heavy losses, a constant row
    away from 0, μ0 outside the range (EL's hull), small n."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in (3, 5, 12, 25, 50):
        for alpha in (0.0, 1.0, 5.0):
            d = rng.uniform(-1, 1, n) * rng.uniform(0.05, 1.0)
            rows.append(d + alpha * np.minimum(d, 0))
    rows.append(np.full(10, 0.25))
    rows.append(rng.uniform(0.1, 0.9, 8))  # every x > 0: mu0 = 0 outside the hull
    rows.append(-rng.uniform(0.1, 0.9, 8))
    return rows


@pytest.mark.parametrize("name", ANALYTIC)
def test_analytic_inferences_match_reference(name):
    for x in _rows():
        want = getattr(ref, name.replace("-", "_"))(x)
        got = [risk_pvalue(x, inference=name, alternative=a) for a in ALTS]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=f"{name} {x}")


def test_bootstrap_t_symmetric_matches_reference():
    for x in _rows(1)[::4]:
        if len(x) < 3:
            continue
        want = ref.bootstrap_t_symmetric(x, resolve_seed(5).kernel, 60)
        got = [risk_pvalue(x, inference="bootstrap-t-symmetric", alternative=a, replicates=60, rng=5)
               for a in ALTS]
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_bootstrap_t_double_matches_reference():
    """Rows of 3 to 50 topics, one with heavy ties and constant first-level resamples in reach
    (mean differences within rounding of 0 are 0 in both), at R = C = 19 and 29, and the
    kernel at C ≠ R; the first level is the symmetric bootstrap-t's p-value, same streams."""
    rows = [x for x in _rows(1) if len(x) >= 3]
    rows.append(np.r_[np.full(11, 0.3), -2.0])  # x* of eleven 0.3s has no spread: T** = 0
    from fastrisk._kernels import riskinference as kernels

    seed = resolve_seed(5).kernel
    spec = INFERENCES["bootstrap-t-double"]
    for R in (19, 29):
        for row, x in enumerate(rows[::2]):
            want, first, _ = ref.bootstrap_t_double(x, seed, R, row=row, details=True)
            every = pvalues(np.asarray(x)[None], spec, alternative="all", replicates=R,
                            seed=seed, row0=row)[0]
            np.testing.assert_allclose(every, want, rtol=1e-12, err_msg=f"R={R} {x}")
            single = pvalues(np.asarray(x)[None], INFERENCES["bootstrap-t-symmetric"], alternative="all",
                             replicates=R, seed=seed, row0=row)[0]
            np.testing.assert_allclose(single, first, rtol=1e-12)
    stop, x = np.zeros(1, np.uint8), np.asarray(rows[5])[None]  # the kernel takes any C: 19 first-, 7 second-level
    out = np.empty((1, 3))
    kernels.bootstrap_t_double(x, 0.0, np.int64(19), np.int64(7), np.uint64(seed), np.int64(3), stop, out)
    np.testing.assert_allclose(out[0], ref.bootstrap_t_double(rows[5], seed, 19, row=3, C=7), rtol=1e-12)


def test_exact_matches_reference():
    for x in _rows(2)[::3]:
        if len(x) < 3 or len(x) > 25:
            continue
        want = ref.betting(x, -6.0, 1.0, resolve_seed(3).kernel, 7)
        got = [risk_pvalue(x, inference="exact", alternative=a, score_bounds=(-6, 1), replicates=7, rng=3)
               for a in ALTS]
        np.testing.assert_allclose(got, want, rtol=1e-9)


def test_bootstrap_t_double_does_not_depend_on_threads_or_chunks():
    x = np.stack([r for s in range(4) for r in _rows(s) if len(r) == 25])
    kw = dict(inference="bootstrap-t-double", replicates=21, rng=9)
    one = risk_pvalue(x, threads=1, **kw)
    two = risk_pvalue(x, threads=2, **kw)
    assert np.array_equal(one, two)
    spec, seed = INFERENCES["bootstrap-t-double"], resolve_seed(9).kernel
    part = pvalues(x[4:], spec, replicates=21, seed=seed, row0=4, threads=2)  # rows 4.. on their own streams
    assert np.array_equal(part, one[4:])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 30), alpha=st.sampled_from([0.0, 1.0, 5.0]),
       R=st.sampled_from([19, 24, 40]))
def test_bootstrap_t_double_pvalues_are_on_their_grid(seed, n, alpha, R):
    """p_adj ∈ {1, ..., R + 1} / (R + 1): in (0, 1], never below 1/(R + 1), ties and small n included."""
    d = np.round(np.random.default_rng(seed).uniform(-1, 1, n), 1)  # ties
    if not d.any():
        d[0] = 0.1
    x = d + alpha * np.minimum(d, 0)
    p = pvalues(x[None], INFERENCES["bootstrap-t-double"], alternative="all", replicates=R, seed=seed)[0]
    k = p * (R + 1)
    assert np.all((p > 0) & (p <= 1)) and np.allclose(k, np.round(k), atol=1e-9) and np.all(k >= 1 - 1e-9)


def test_bootstrap_t_double_is_monotone_in_a_shift():
    """A shift of x moves T only (the resamples are of x − x̄): p of 'greater' never rises, of
    'less' never falls (p_adj is monotone in p, p in T)."""
    x = np.random.default_rng(1).uniform(-1, 1, 30)
    x = x + 5 * np.minimum(x, 0)
    spec = INFERENCES["bootstrap-t-double"]
    P = np.stack([pvalues((x + s)[None], spec, alternative="all", replicates=39, seed=4)[0]  # one row's streams
                  for s in np.linspace(-3, 3, 25)])
    g, le = P[:, 1], P[:, 2]
    assert np.all(np.diff(g) <= 1e-12) and np.all(np.diff(le) >= -1e-12)
    assert g[0] - g[-1] > 0.8 and le[-1] - le[0] > 0.8  # and it moves: the check can fail


def test_bootstrap_t_double_holds_its_level_under_a_normal_null():
    """x ~ N(0, 1), n = 25, 1,000 rows, R = C = 99: the rate of p <= 0.05 within 3 binomial SE of
    0.05 for each alternative (the bootstrap-t is second-order accurate here; an adjustment that
    counted u* >= p, or dropped the + 1, would be far off)."""
    rows = 1000
    x = np.random.default_rng(11).normal(size=(rows, 25))
    se = np.sqrt(0.05 * 0.95 / rows)
    p = pvalues(x, INFERENCES["bootstrap-t-double"], alternative="all", replicates=99, seed=3)
    for k, alt in enumerate(ALTS):
        assert abs(np.mean(p[:, k] <= 0.05) - 0.05) <= 3 * se, alt


@pytest.mark.parametrize("name", ["exact", "bootstrap-t-symmetric"])
def test_random_inferences_do_not_depend_on_threads(name):
    x = np.stack([r for r in _rows(4) if len(r) == 25])
    one = risk_pvalue(x, inference=name, score_bounds=(-6, 1), replicates=50, rng=9, threads=1)
    two = risk_pvalue(x, inference=name, score_bounds=(-6, 1), replicates=50, rng=9, threads=2)
    assert np.array_equal(one, two)
    assert np.array_equal(one[2:], risk_pvalue(x[2:], inference=name, score_bounds=(-6, 1),
                                                        replicates=50, rng=9)) == (name == "bootstrap-t-symmetric")


@pytest.mark.parametrize("name", list(INFERENCES))
def test_all_alternatives_in_one_pass_are_each_alternative(name):
    from fastrisk.core.inference import ALTERNATIVES, pvalues
    x = np.stack([r for r in _rows(3) if len(r) == 25])
    every = pvalues(x, INFERENCES[name], bounds=(-6.0, 1.0), alternative="all", replicates=40, seed=5)
    assert every.shape == x.shape[:-1] + (3,)
    for k, alt in enumerate(ALTERNATIVES):
        one = pvalues(x, INFERENCES[name], bounds=(-6.0, 1.0), alternative=alt, replicates=40, seed=5)
        assert np.array_equal(every[..., k], one), alt


@settings(max_examples=8)
@given(alpha=st.sampled_from([1.0, 5.0, 10.0]), n=st.sampled_from([5, 10, 25, 50]),
       share=st.floats(0.02, 1.0), alternative=st.sampled_from(ALTS))
def test_exact_holds_its_level_under_a_two_point_null(alpha, n, share, alternative):
    """x ∈ {−(1 + α), a} with P(loss) = q and a = (1 + α) q / (1 − q) ≤ 1: E[x] = 0 exactly, rare
    large losses (the law that makes TRisk most liberal). Rate ≤ level + 3 Monte-Carlo SE."""
    q = share / (2.0 + alpha)  # a <= 1
    a = (1.0 + alpha) * q / (1.0 - q)
    rng = np.random.default_rng(int(alpha * 1000 + n + share * 1e6))
    trials = 1500
    x = np.where(rng.random((trials, n)) < q, -(1.0 + alpha), a)
    p = risk_pvalue(x, inference="exact", alternative=alternative, score_bounds=(-(1 + alpha), 1),
                             replicates=20, rng=1)
    rate = np.mean(p <= 0.05)
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / trials)


def test_t_is_liberal_where_exact_is_not():
    """The same two-point law breaks Student's t (a check that the validity test can fail)."""
    alpha, n, q = 5.0, 25, 0.02
    a = (1.0 + alpha) * q / (1.0 - q)
    x = np.where(np.random.default_rng(0).random((4000, n)) < q, -(1.0 + alpha), a)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_t = risk_pvalue(x, inference="t", alternative="greater")
    assert np.mean(p_t <= 0.05) > 0.2
    p_e = risk_pvalue(x, inference="exact", alternative="greater", score_bounds=(-6, 1), replicates=20, rng=1)
    assert np.mean(p_e <= 0.05) <= 0.05


@settings(max_examples=20)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 40), alpha=st.floats(0, 8))
def test_exact_pvalue_is_monotone_in_a_shift_of_the_differences(seed, n, alpha):
    """Shifting every d up (within [-1, 1]) never raises the p-value of E[x] > 0 nor lowers that
    of E[x] < 0."""
    d = np.random.default_rng(seed).uniform(-0.5, 0.5, n)
    shifts = np.linspace(-0.5, 0.5, 21)
    X = np.stack([np.clip(d + s, -1, 1) for s in shifts])
    X = X + alpha * np.minimum(X, 0)
    kw = dict(inference="exact", score_bounds=(-(1 + alpha), 1), replicates=10, rng=2)
    g = risk_pvalue(X, alternative="greater", **kw)
    le = risk_pvalue(X, alternative="less", **kw)
    assert np.all(np.diff(g) <= 1e-12) and np.all(np.diff(le) >= -1e-12)


@pytest.mark.parametrize("name", ["t", "hall", "el-bartlett"])
def test_monotone_inferences_in_a_shift(name):
    """t, Hall's transformation (dT/dS = √n(1 + γS/3)² ≥ 0) and EL are monotone in a shift of x
    (Johnson's t and the Edgeworth p-values are not, for large |t|: Hall 1992)."""
    x = np.random.default_rng(1).uniform(-1, 1, 30)
    x = x + 5 * np.minimum(x, 0)
    X = np.stack([x + s for s in np.linspace(-1, 1, 41)])
    g = risk_pvalue(X, inference=name, alternative="greater")
    assert np.all(np.diff(g) <= 1e-12)


def test_registry_entries():
    assert list(INFERENCES)[0] == "t"
    assert {r.name for r in INFERENCES.values() if r.exact} == {"exact"}
    for r in INFERENCES.values():
        assert r.citation and r.assumes and r.kernel.startswith("fastrisk._kernels")
        assert r.resampling == (r.default_replicates > 0)
        assert (r.inner_replicates(999) > 0) == (r.name == "bootstrap-t-double")
    spec = INFERENCES["bootstrap-t-double"]
    assert [spec.inner_replicates(R) for R in (19, 499)] == [19, 499] and INFERENCES["exact"].inner_replicates(9) == 0


def test_risk_inference_option(trec):
    m, b = trec
    t = fastrisk.risk(m, b, alpha=[1, 5])
    assert t.inference == "t"
    for name in INFERENCES:
        reps = dict(replicates=39) if name == "bootstrap-t-double" else {}  # default R² = 499²: seconds
        r = fastrisk.risk(m, b, alpha=[1, 5], inference=name, rng=1, **reps)
        assert r.inference == name
        np.testing.assert_array_equal(r.urisk, t.urisk)
        x = fastrisk.risk_scores(m, b, alpha=[1, 5]).x
        bounds = [(-2, 1), (-6, 1)]
        for a in range(2):
            want = risk_pvalue(x[a], inference=name, rng=1, **reps,
                                        score_bounds=bounds[a] if name == "exact" else None)
            np.testing.assert_allclose(r.pvalue[a], want, rtol=1e-12)
        sig = r.pvalue <= 0.05
        assert np.array_equal(r.at_risk, sig & (r.urisk < 0)) or name == "t"
        table = r.to_arrow()
        assert set(table.column("inference").to_pylist()) == {name}
        assert b'"inference": "%s"' % name.encode() in table.schema.metadata[b"fastrisk"]


def test_t_level_note():
    assert t_level_note([0, 1], 25) is None
    assert t_level_note([5], 100) is None
    from fastrisk.core.inference import _MEASURED_T

    note = t_level_note([0, 1, 5, 10], 50)  # the largest alpha's cell, and says it is the nearest
    assert f"{_MEASURED_T[(10, 50)][0]:.3f}" in note and "URisk_10 = 0" in note and "nearest" in note
    assert "docs/risk-tests.md" in note and "inference='exact'" in note
    exact = t_level_note([5], 25)
    assert f"{_MEASURED_T[(5, 25)][0]:.3f} on average" in exact and "nearest" not in exact
    assert "with 10 topics" in t_level_note([2], 4) and "with 50 topics" in t_level_note([3], 40)
    assert "URisk_2 = 0" in t_level_note([3], 40) and "URisk_5 = 0" in t_level_note([4], 25)


def test_bad_input():
    x = np.linspace(-1, 1, 10)
    with pytest.raises(InputError, match="`inference` must be one of"):
        risk_pvalue(x, inference="z")
    with pytest.raises(InputError, match="at least 3 topics"):
        risk_pvalue(x[:2], inference="hall")
    with pytest.raises(InputError, match="row 1 is 0 on every topic .identical runs, all d = 0."):
        risk_pvalue(np.stack([x, np.zeros(10)]), inference="edgeworth")
    with pytest.raises(InputError, match="needs `score_bounds`"):
        risk_pvalue(x, inference="exact")
    with pytest.raises(InputError, match=r"within score_bounds \[-0.5, 1\]; x 'row 0' scores -1.0 on topic 0"):
        risk_pvalue(x, inference="exact", score_bounds=(-0.5, 1))
    with pytest.raises(InputError, match="must contain 0"):
        risk_pvalue(np.full(5, 0.5), inference="exact", score_bounds=(0.1, 1))
    with pytest.raises(InputError, match="`alternative` must be one of"):
        risk_pvalue(x, inference="hall", alternative="up")
    with pytest.raises(InputError, match="`replicates` must be a positive integer"):
        risk_pvalue(x, inference="exact", score_bounds=(-1, 1), replicates=0)
    with pytest.raises(InputError, match=r"inference='bootstrap-t-double' needs `replicates` >= 19, got 18"):
        risk_pvalue(x, inference="bootstrap-t-double", replicates=18)
    with pytest.raises(InputError, match=r"needs `replicates` >= 19, got 3: its p-value is at least 1/\(replicates"):
        pvalues(x[None], INFERENCES["bootstrap-t-double"], replicates=3)
    with pytest.raises(InputError, match=r"needs `replicates` >= 19"):
        fastrisk.risk(*fastrisk.data.datasets.trec2012_web("err20"), inference="bootstrap-t-double", replicates=5)
    m = ScoreMatrix(np.array([[0.2, 0.5, 0.7, 0.1], [0.2, 0.5, 0.7, 0.1], [0.3, 0.4, 0.9, 0.0]]), ("a", "b", "c"),
                    ("q1", "q2", "q3", "q4"))
    with pytest.raises(InputError, match="system 'b' is identical to baseline 'a' on every topic"):
        fastrisk.risk(m, "a", inference="exact")
    with pytest.raises(InputError, match="needs at least 3 topics; the matrix has 2"):
        fastrisk.risk(ScoreMatrix(m.values[:, :2], m.systems, m.topics[:2]), "c", inference="hall")
    with pytest.raises(InputError, match="alpha"):
        fastrisk.risk(m, "c", alpha=-1, inference="exact")
    wide = ScoreMatrix(m.values * 2, m.systems, m.topics)
    with pytest.raises(InputError, match=r"score_bounds \[0, 1\]; system 'a' scores 1.4 on topic 'q3'"):
        fastrisk.risk(wide, "c", inference="exact")
    assert fastrisk.risk(wide, "c", inference="exact", score_bounds=(0, 2), rng=1).inference == "exact"
    with pytest.raises(InputError, match="linear value function"):
        fastrisk.risk(m, "c", value="smooth", inference="exact")


def test_report_names_its_inference():
    from fastrisk.viz.report import build_report

    rng = np.random.default_rng(5)
    m = ScoreMatrix(rng.uniform(size=(6, 30)), [f"s{k}" for k in range(6)], [f"q{i}" for i in range(30)], "P@10")
    _, params, _ = build_report(m, "s0", alpha=[0, 5])
    params = dict(params)
    assert params["inference"].startswith("t — Dinçer") and "URisk_5 = 0" in params["level of t"]
    sections, params, _ = build_report(m, "s0", alpha=[0, 5], inference="exact", rng=1)
    params = dict(params)
    assert params["inference"].startswith("exact — Waudby-Smith") and "level of t" not in params
    assert "not Student's t" in sections[0].caption


def test_sweep_kinds_take_the_inference():
    from fastrisk.sweep.kinds import KINDS

    m, b = fastrisk.data.datasets.trec2012_web("err20")
    table = KINDS["risk"](m, {"baseline": b, "alpha": [5], "inference": "hall"}, 0, None)
    assert set(table.column("inference").to_pylist()) == {"hall"}
    np.testing.assert_array_equal(table.column("pvalue").to_numpy(),
                                  fastrisk.risk(m, b, alpha=5, inference="hall").pvalue[0])
    small = m.select(systems=m.systems[:5])
    table = KINDS["table"](small, {"alpha": [1], "inference": "edgeworth"}, 0, None)
    assert set(table.column("inference").to_pylist()) == {"edgeworth"}


def test_corrected_table_same_bits_whatever_the_threads():
    rng = np.random.default_rng(1)
    m = ScoreMatrix(rng.beta(0.6, 2, (300, 120)), [f"s{k}" for k in range(300)], range(120))
    for name in ("edgeworth", "johnson", "hall"):
        two = fastrisk.baseline_table(m, alpha=[0, 5], inference=name, threads=2)
        one = fastrisk.baseline_table(m, alpha=[0, 5], inference=name, threads=1)
        assert np.array_equal(two.pvalue, one.pvalue, equal_nan=True)
        np.testing.assert_allclose(two.pvalue[:, :5, 7], fastrisk.risk(m.select(systems=m.systems[:5]), m.values[7],
                                                                          alpha=[0, 5], inference=name).pvalue,
                                   rtol=1e-10)


def test_pair_sums_higher_matches_reference():
    from fastrisk._kernels import tables as k

    rng = np.random.default_rng(3)
    V = rng.beta(0.6, 2, (13, 70))
    V.flags.writeable = False
    stop = np.zeros(1, np.uint8)
    want = ref.pair_higher_sums(V)
    iu = np.triu_indices(13, 1)
    for fourth in (True, False):
        sums, row, mag = k.pair_sums_higher_serial(V, 8, 16, fourth, stop)
        for j in range(7 if fourth else 5):
            np.testing.assert_allclose(sums[j][iu], want[j][iu], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(row, V.sum(axis=1), rtol=1e-13)
        np.testing.assert_allclose(mag, np.abs(V).sum(axis=1), rtol=1e-13)
        base = k.pair_sums_serial(V, 8, 16, stop)
        assert all(np.array_equal(base[j][iu], sums[j][iu]) for j in range(3))  # the table's sums, bit for bit


def test_the_pair_study_runs_the_double_bootstrap_only_when_named():
    """`simulate pair`'s default inferences leave out the double bootstrap (minutes a cell); named,
    it runs with its reduced `PAIR_REPLICATES` (R = C = 99) and its rates are the kernel's."""
    from fastrisk.simulate.pair import PAIR_OPT_IN, PAIR_REPLICATES, pair_study

    rng = np.random.default_rng(2)
    m = ScoreMatrix(rng.beta(2, 3, (2, 30)), ["base", "exp"], [f"q{i}" for i in range(30)], "P@10")
    kw = dict(alpha=5, topics=10, trials=12, deltas=[0.05], nulls=["empirical"], topic_grid=[5], seed=1)
    every = pair_study(m, "base", "exp", inferences=None, **kw)
    assert "bootstrap-t-double" in PAIR_OPT_IN and "bootstrap-t-double" not in every.inferences
    assert set(every.inferences) == set(INFERENCES) - set(PAIR_OPT_IN)
    r = pair_study(m, "base", "exp", inferences=["t", "bootstrap-t-double"], **kw)
    assert r.replicates.tolist() == [0, PAIR_REPLICATES["bootstrap-t-double"]] == [0, 99]
    assert np.isfinite(r.type1).all() and 0 <= r.type1[1, 0] <= 1
    with pytest.raises(InputError, match="needs `replicates` >= 19"):
        pair_study(m, "base", "exp", inferences=["bootstrap-t-double"], replicates=9, **kw)
