"""Risk kernels and API against published values, the plain reference and invariants."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from reference.risk import smooth_ref, topic_risk_ref, urisk_ref
from scipy import special, stats

import fastrisk
from fastrisk import InputError, ScoreMatrix, ZeroVarianceWarning

# SPEC §2, Dinçer, Macdonald & Ounis (SIGIR 2014), Tables 1 and 2.
PUBLISHED = [
    ("uogTrA44xi", 0, 0.1185, 0.0528, 2.2440, 0.029),
    ("uogTrA44xi", 1, 0.0556, 0.0739, 0.7528, 0.455),
    ("uogTrA44xi", 5, -0.1959, 0.1755, -1.1163, 0.270),
    ("uogTrA44xi", 10, -0.5104, 0.3091, -1.6512, 0.105),
    ("srchvrs12c09", 0, 0.1102, 0.0479, 2.3034, 0.026),
    ("srchvrs12c09", 10, -0.3133, 0.2619, -1.1961, 0.237),
    ("qutwb", 1, -0.1342, 0.0791, -1.6956, 0.096),
    ("qutwb", 10, -1.0832, 0.3969, -2.7295, 0.009),
]


@pytest.fixture(scope="module")
def published(trec):
    matrix, baseline = trec
    return fastrisk.risk(matrix, baseline, alpha=[0, 1, 5, 10])


@pytest.mark.parametrize("run,alpha,urisk,se,trisk,p", PUBLISHED)
def test_published_trisk_tables(published, run, alpha, urisk, se, trisk, p):
    k = published.systems.index(run)
    a = list(published.alpha).index(alpha)
    assert round(published.urisk[a, k], 4) == pytest.approx(urisk, abs=1e-12)
    assert round(published.standard_error[a, k], 4) == pytest.approx(se, abs=1e-12)
    assert round(published.se_jack[a, k], 4) == pytest.approx(se, abs=1e-12)
    assert round(published.trisk[a, k], 4) == pytest.approx(trisk, abs=1e-12)
    assert round(published.pvalue[a, k], 3) == pytest.approx(p, abs=1e-12)


def test_se_agreement_diagnostic_is_zero_over_all_48_runs(published):
    assert published.se_rmse.shape == (4,)
    assert np.all(published.se_rmse < 1e-12)
    assert len(published.systems) == 48


def test_baseline_mean_matches_official_value(trec):
    assert np.mean(list(trec[1].values())) == pytest.approx(0.19466, abs=5e-6)


def random_case(seed, S=4, c=12):
    rng = np.random.default_rng(seed)
    R = rng.random((S, c))
    b = rng.random(c)
    return ScoreMatrix(R, [f"s{k}" for k in range(S)], [f"t{i}" for i in range(c)]), b


@pytest.mark.parametrize("seed", range(3))
def test_risk_matches_plain_reference(seed):
    matrix, b = random_case(seed)
    alphas = [0.0, 0.5, 2.0, 10.0]
    res = fastrisk.risk(matrix, b, alpha=alphas)
    for k in range(matrix.n_systems):
        for a, alpha in enumerate(alphas):
            ref = urisk_ref(matrix.values[k], b, alpha)
            assert res.urisk[a, k] == pytest.approx(ref["urisk"], rel=1e-12, abs=1e-14)
            assert res.standard_error[a, k] == pytest.approx(ref["se"], rel=1e-12)
            assert res.se_jack[a, k] == pytest.approx(ref["se_j"], rel=1e-10)
            assert res.trisk[a, k] == pytest.approx(ref["urisk"] / ref["se"], rel=1e-10)
        assert res.freward[k] == pytest.approx(ref["freward"])
        assert res.frisk[k] == pytest.approx(ref["frisk"])
        # URisk = UGain - alpha * FRisk (SPEC §1)
        assert res.urisk[:, k] == pytest.approx(res.ugain[k] - np.asarray(alphas) * res.frisk[k])


@pytest.mark.parametrize("seed", range(2))
def test_topic_risk_matches_plain_reference(seed):
    matrix, b = random_case(seed)
    res = fastrisk.topic_risk(matrix, b, alpha=[1.0, 5.0])
    for a, alpha in enumerate([1.0, 5.0]):
        for k in range(matrix.n_systems):
            tr, tj, pseudo = topic_risk_ref(matrix.values[k], b, alpha)
            np.testing.assert_allclose(res.tr[a, k], tr, rtol=1e-10)
            np.testing.assert_allclose(res.tj[a, k], tj, rtol=1e-8, atol=1e-12)
            np.testing.assert_allclose(res.pseudo_values[a, k], pseudo, rtol=1e-9, atol=1e-12)
            # the pseudo-values of a mean are the per-topic scores themselves; bias 0
            np.testing.assert_allclose(res.pseudo_values[a, k], res.x[a, k], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.bias, 0.0, atol=1e-12)
    assert ((res.tr < -res.critical_t) == res.loss).all()
    assert res.to_arrow().num_rows == 2 * matrix.n_systems * matrix.n_topics


def test_topic_risk_flags_significant_losses_on_real_data(trec):
    matrix, baseline = trec
    res = fastrisk.topic_risk(matrix, baseline, alpha=[0, 5])
    k = res.systems.index("qutwb")
    # TR_i and TJ_i agree in sign pattern on the big losses (the paper's Figure 2 message)
    big = np.abs(res.tr[1, k]) > 2
    assert big.any()
    assert (np.sign(res.tr[1, k][big]) == np.sign(res.tj[1, k][big])).all()
    assert res.critical_t == pytest.approx(stats.t.isf(0.025, 49))


def test_smooth_value_function_matches_reference():
    matrix, b = random_case(7)
    res = fastrisk.risk(matrix, b, value="smooth")
    for k in range(matrix.n_systems):
        x = [smooth_ref(r - bb) for r, bb in zip(matrix.values[k], b)]
        assert res.urisk[0, k] == pytest.approx(np.mean(x), rel=1e-12)
    assert res.value == "smooth" and np.isnan(res.alpha).all()


def test_user_value_function_plain_python_is_compiled():
    matrix, b = random_case(8)

    def doubled(d):
        return 2.0 * d

    res = fastrisk.risk(matrix, b, value=doubled)
    plain = fastrisk.risk(matrix, b, alpha=0)
    np.testing.assert_allclose(res.urisk[0], 2 * plain.urisk[0], rtol=1e-12)
    np.testing.assert_allclose(res.trisk[0], plain.trisk[0], rtol=1e-10)
    assert res.value == "doubled"


def test_uncompilable_value_function_is_a_clear_error():
    matrix, b = random_case(9)
    with pytest.raises(InputError, match="could not be compiled by numba"):
        fastrisk.risk(matrix, b, value=lambda d: {"a": d}["b"])


def test_minus_convention_negates_and_loss_weight_is_one_plus_alpha():
    matrix, b = random_case(10)
    classic = fastrisk.risk(matrix, b, alpha=[0, 1, 5])
    minus = fastrisk.risk(matrix, b, loss_weight=[1, 2, 6], convention="minus")
    np.testing.assert_allclose(minus.urisk, -classic.urisk, rtol=1e-14)
    np.testing.assert_allclose(minus.trisk, -classic.trisk, rtol=1e-14)
    np.testing.assert_array_equal(minus.at_risk, classic.at_risk)
    assert minus.given == "loss_weight" and classic.given == "alpha"
    assert minus.convention == "minus"
    table = minus.to_arrow()
    assert table.column("convention").to_pylist()[0] == "minus"
    S = matrix.n_systems
    assert table.column("loss_weight").to_pylist()[::S] == [1.0, 2.0, 6.0]  # alpha is the outer axis


finite = st.floats(0.0, 1.0, allow_nan=False, width=64)


@st.composite
def matrices(draw):
    S = draw(st.integers(1, 5))
    c = draw(st.integers(2, 30))
    R = draw(arrays(np.float64, (S, c), elements=finite))
    b = draw(arrays(np.float64, (c,), elements=finite))
    return ScoreMatrix(R, [f"s{k}" for k in range(S)], [f"t{i}" for i in range(c)]), b


@settings(max_examples=40, deadline=None)
@given(matrices(), st.lists(st.floats(0, 20), min_size=1, max_size=4))
def test_property_se_jackknife_equals_se_param_for_urisk(case, alphas):
    matrix, b = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        res = fastrisk.risk(matrix, b, alpha=alphas)
    np.testing.assert_allclose(res.se_jack, res.standard_error, rtol=1e-9, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(matrices())
def test_property_alpha_zero_is_mean_difference_and_paired_t(case):
    matrix, b = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fastrisk.risk(matrix, b, alpha=0)
        for k in range(matrix.n_systems):
            d = matrix.values[k] - b
            assert res.urisk[0, k] == pytest.approx(d.mean(), abs=1e-12)
            if res.standard_error[0, k] > 1e-9:
                t = stats.ttest_rel(matrix.values[k], b)
                assert res.trisk[0, k] == pytest.approx(t.statistic, rel=1e-7)
                assert res.pvalue[0, k] == pytest.approx(t.pvalue, rel=1e-6, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(matrices())
def test_property_urisk_non_increasing_in_alpha(case):
    matrix, b = case
    alphas = [0, 0.5, 1, 2, 5, 10, 20]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        res = fastrisk.risk(matrix, b, alpha=alphas)
    assert (np.diff(res.urisk, axis=0) <= 1e-12).all()


def test_results_do_not_depend_on_thread_count():
    rng = np.random.default_rng(3)
    matrix = ScoreMatrix(rng.random((64, 200)), [f"s{k}" for k in range(64)], range(200))
    one = fastrisk.risk(matrix, "s0", alpha=[0, 1, 5], threads=1)
    two = fastrisk.risk(matrix, "s0", alpha=[0, 1, 5], threads=2)
    for field in ("urisk", "standard_error", "se_jack", "trisk", "pvalue"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field))
    t1 = fastrisk.topic_risk(matrix, "s0", alpha=[1], threads=1)
    t2 = fastrisk.topic_risk(matrix, "s0", alpha=[1], threads=2)
    np.testing.assert_array_equal(t1.tj, t2.tj)


def test_threads_argument_restores_previous_count():
    import numba

    before = numba.get_num_threads()
    matrix, b = random_case(1)
    fastrisk.risk(matrix, b, alpha=1, threads=1)
    assert numba.get_num_threads() == before


def test_adaptive_weights_saro_and_faro():
    matrix, b = random_case(11, c=20)
    alpha = 5.0
    scores = fastrisk.risk_scores(matrix, b, alpha=alpha)
    tr = fastrisk.topic_risk(matrix, b, alpha=alpha).tr[0]
    expected_alpha = (1 - stats.norm.cdf(tr)) * alpha
    saro = fastrisk.adaptive_risk(matrix, b, alpha=alpha, method="saro")
    faro = fastrisk.adaptive_risk(matrix, b, alpha=alpha, method="faro")
    np.testing.assert_allclose(saro.adaptive_alpha[0], expected_alpha, rtol=1e-12)
    d = scores.d
    np.testing.assert_allclose(saro.weights[0], np.where(d < 0, 1 + expected_alpha, 1.0))
    np.testing.assert_allclose(faro.weights[0], 1 + expected_alpha)
    np.testing.assert_allclose(saro.urisk[0], (saro.weights[0] * d).mean(axis=1))
    # adaptive weights never exceed the fixed 1 + alpha, so SARO risk is between alpha=0 and alpha
    fixed = fastrisk.risk(matrix, b, alpha=[0, alpha]).urisk
    assert (saro.urisk[0] >= fixed[1] - 1e-12).all() and (saro.urisk[0] <= fixed[0] + 1e-12).all()


def test_baseline_in_matrix_gets_zero_risk_without_warning():
    matrix, _ = random_case(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fastrisk.risk(matrix, "s0", alpha=[1])
    assert res.urisk[0, 0] == 0 and math.isnan(res.trisk[0, 0])


def test_zero_standard_error_warns_and_gives_inf():
    matrix = ScoreMatrix([[0.5, 0.625, 0.75], [0.25, 0.375, 0.5]], ["a", "b"], ["1", "2", "3"])
    with pytest.warns(ZeroVarianceWarning, match="zero standard error for system"):
        res = fastrisk.risk(matrix, [0.125, 0.25, 0.375], alpha=0)
    assert np.isposinf(res.trisk).all() and (res.pvalue == 0).all()


@pytest.mark.parametrize("kwargs,match", [
    ({"alpha": -1}, r"`alpha` must be >= 0"),
    ({"loss_weight": 0.5}, r"`loss_weight` must be >= 1"),
    ({"alpha": 1, "loss_weight": 2}, r"either `alpha`.*not both"),
    ({"alpha": []}, r"`alpha` must not be empty"),
    ({"alpha": "x"}, r"`alpha` must be a number"),
    ({"alpha": float("nan")}, r"`alpha` must be finite"),
    ({"convention": "plus"}, r"`convention` must be one of 'classic', 'minus'"),
    ({"significance": 1.5}, r"`significance` must be a level in \(0, 1\)"),
    ({"value": "cubic"}, r"`value` must be 'linear', 'smooth' or a function"),
    ({"value": "smooth", "alpha": 1}, r"apply to the linear value function only"),
    ({"missing": "ignore"}, r"`missing` must be one of raise, drop, zero"),
    ({"threads": 0}, r"`threads` must be a positive integer"),
])
def test_bad_arguments_are_clear_errors(kwargs, match):
    matrix, b = random_case(4)
    with pytest.raises(InputError, match=match):
        fastrisk.risk(matrix, b, **kwargs)


def test_one_topic_is_a_clear_error():
    matrix = ScoreMatrix([[0.5], [0.6]], ["a", "b"], ["1"])
    with pytest.raises(InputError, match="at least 2 topics"):
        fastrisk.risk(matrix, "a", alpha=1)


def test_unknown_baseline_names_the_systems():
    matrix, _ = random_case(5)
    with pytest.raises(InputError, match=r"unknown baseline 'nope'.*s0, s1"):
        fastrisk.risk(matrix, "nope")


def test_baseline_missing_topics_policies():
    matrix, b = random_case(6, c=5)
    partial = dict(zip(matrix.topics[:4], b[:4]))
    with pytest.raises(InputError, match=r"baseline 'baseline' lacks topic\(s\) 't4'"):
        fastrisk.risk(matrix, partial, alpha=0)
    dropped = fastrisk.risk(matrix, partial, alpha=0, missing="drop")
    expect = (matrix.values[:, :4] - b[:4]).mean(axis=1)
    np.testing.assert_allclose(dropped.urisk[0], expect)
    zero = fastrisk.risk(matrix, partial, alpha=0, missing="zero")
    np.testing.assert_allclose(zero.urisk[0], (matrix.values - np.r_[b[:4], 0]).mean(axis=1))
    with pytest.raises(InputError, match="shares no topic"):
        fastrisk.risk(matrix, {"x": 1.0, "y": 2.0})


def test_result_exports():
    matrix, b = random_case(12)
    res = fastrisk.risk(matrix, b, alpha=[0, 1])
    table = res.to_arrow()
    assert table.column_names == ["alpha", "loss_weight", "system", "baseline", "convention", "value", "inference", "urisk",
                                  "standard_error", "se_jack", "trisk", "at_risk", "rewarding", "freward", "frisk", "ugain",
                                  "se_rmse", "pvalue"]
    row = table.to_pylist()[matrix.n_systems + 2]  # alpha = 1, third system
    assert row["system"] == matrix.systems[2] and row["alpha"] == 1.0
    assert row["trisk"] == res.trisk[1, 2] and row["pvalue"] == res.pvalue[1, 2] and row["frisk"] == res.frisk[2]
    assert table.num_rows == 2 * matrix.n_systems
    pytest.importorskip("pandas")
    assert res.to_pandas().shape[0] == 2 * matrix.n_systems
    assert res.statistic is res.trisk and res.standard_error is res.standard_error


def test_a_bare_array_and_a_row_index_are_a_matrix_and_a_baseline(trec):
    matrix, _ = trec
    named = fastrisk.risk(matrix, matrix.systems[3], alpha=[0, 5])
    bare = fastrisk.risk(np.array(matrix.values), 3, alpha=[0, 5])
    assert bare.systems == tuple(str(k) for k in range(matrix.n_systems)) and bare.baseline == "3"
    np.testing.assert_array_equal(bare.urisk, named.urisk)
    np.testing.assert_array_equal(bare.trisk, named.trisk)
    assert fastrisk.risk(matrix, -1).baseline == matrix.systems[-1]
    with pytest.raises(InputError, match="baseline index 48 is out of range for 48 systems"):
        fastrisk.risk(matrix, 48)
    with pytest.raises(InputError, match=r"2-D array \(systems x topics\).*of shape \(5,\)"):
        fastrisk.risk(np.ones(5), 0)
    with pytest.raises(InputError, match="system '1' on topic '0' is nan"):
        fastrisk.risk(np.array([[1.0, 2.0], [np.nan, 1.0]]), 0)


# ---------------------------------------------------------------------- Student-t p-values
T_GRID = np.concatenate([np.logspace(-8, 3, 120), np.linspace(0.0, 8.0, 81), [1.999999, 2.0, 2.000001, 1e5, 1e10,
                                                                          1e100, np.inf, np.nan]])


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 10, 29, 49, 50, 99, 100, 499, 1000])
def test_t_tails_match_scipy_stdtr(df):
    """The compiled Cephes stdtr (series for |t| <= 2, continued fraction beyond) against
    scipy.special.stdtr to 1e-12 relative wherever scipy's tail is a normal number; at df 1
    and 2 against the closed forms (Cauchy: atan(1/|t|)/pi; df 2: 1/(r (r + |t|)), r =
    sqrt(2 + t^2)), where scipy's Boost value for small |t| is itself off by up to ~1e-9."""

    from fastrisk._runtime.tstat import t_tails

    t = np.concatenate([T_GRID, -T_GRID])
    ours = t_tails(t, df)
    assert np.array_equal(np.isnan(ours), np.isnan(t))
    assert (ours[np.abs(t) == np.inf] == 0).all()
    a = np.abs(t)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if df == 1:
            want = np.where(a < 1, 0.5 - np.arctan(a) / np.pi, np.arctan(1 / a) / np.pi)
        elif df == 2:
            r = np.sqrt(2 + a * a)
            want = 1 / (r * (r + a))
        else:
            want = special.stdtr(df, -a)
    ok = (want > 1e-300) & np.isfinite(t)
    np.testing.assert_allclose(ours[ok], want[ok], rtol=1e-12, atol=0)


@given(arrays(np.float64, st.integers(1, 600), elements=st.floats(-50, 50)), st.integers(1, 1000),
       st.sampled_from(["two-sided", "less", "greater"]))
@settings(max_examples=40, deadline=None)
def test_t_pvalue_is_scipy_for_any_block(t, df, alternative):
    """Any length (several blocks of the kernel), any df the kernel serves, every alternative."""
    from fastrisk._runtime.tstat import t_pvalue

    # The reference: P(|T| > |t|) by the regularised incomplete beta function, from the side that
    # keeps its argument exact (x = t^2 / (df + t^2) below 1/2, else its complement). scipy's
    # stdtr is only ~1e-10 absolute near p = 1 (t(1).sf(1e-6) misses by 3.5e-11), which
    # made this test fail on a correct p-value.
    t2 = t * t
    two = np.where(t2 < df, special.betaincc(0.5, df / 2, t2 / (df + t2)), special.betainc(df / 2, 0.5, df / (df + t2)))
    if alternative == "two-sided":
        want = two
    else:
        toward = t > 0 if alternative == "greater" else t < 0  # t on the alternative's side: the smaller tail
        want = np.where(toward, 0.5 * two, 1.0 - 0.5 * two)
    got = t_pvalue(t, df, alternative)
    # scipy's incomplete beta loses digits at some tiny arguments (betaincc(0.5, 0.5, 1.2e-20) is 1.0,
    # not 1 - 7e-11: a derandomised example, t = 1.1e-10, df = 1): where the two disagree, the exact
    # value (mpmath, 40 digits) decides.
    for i in np.flatnonzero(~np.isclose(got, want, rtol=1e-11, atol=1e-13)):
        want[i] = _exact_t_pvalue(t[i], df, alternative)
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)


def _exact_t_pvalue(t: float, df: int, alternative: str) -> float:
    import mpmath

    with mpmath.workdps(40):
        t = mpmath.mpf(float(t))
        two = mpmath.betainc(mpmath.mpf(df) / 2, 0.5, 0, df / (df + t * t), regularized=True)
        if alternative == "two-sided":
            return float(two)
        toward = t > 0 if alternative == "greater" else t < 0
        return float(two / 2 if toward else 1 - two / 2)


def test_a_misspelt_alternative_of_t_pvalue_is_an_input_error():
    """``alternative="grater"`` returned the two-sided p (0.073 instead of 0.037 here)."""
    import fastrisk
    from fastrisk._runtime.tstat import t_pvalue

    assert fastrisk.batch.t_pvalue(2.0, 10, "greater") == pytest.approx(special.stdtr(10, -2.0))
    message = r"`alternative` must be one of 'two-sided', 'less', 'greater', got 'grater'"
    for f in (fastrisk.batch.t_pvalue, t_pvalue):
        with pytest.raises(InputError, match=message):
            f(2.0, 10, "grater")


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_t_test_small_path_equals_the_table_path(trec, alternative, monkeypatch):
    """The serial one-call small path of t_test (fused p-values) gives the numbers of the
    general path (risk's table kernel, then the p-values) bit for bit."""
    from fastrisk.inference.resampling import procedures

    matrix, baseline = trec
    small = fastrisk.t_test(matrix, baseline, alpha=[0, 1, 5], alternative=alternative)
    monkeypatch.setattr(procedures, "COMPILED_DF", 0)  # every call takes the general path
    big = fastrisk.t_test(matrix, baseline, alpha=[0, 1, 5], alternative=alternative)
    for name in ("statistic", "urisk", "pvalue"):
        np.testing.assert_array_equal(getattr(small, name), getattr(big, name))
    assert small.alternative == big.alternative == alternative


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 80), st.integers(2, 23), st.booleans(), st.integers(0, 2**32 - 1))
def test_block_risk_sums_are_the_one_system_sums_bit_for_bit(S, c, per_system, seed):
    """`risk_sums_rows` (blocks of systems, topic-major, vectorised) computes `risk_sums`'s seven
    sums with the same operations in the same order: the same numbers bit for bit, for a shared
    baseline row or one row per system, across block boundaries (S > ROWS)."""
    from fastrisk._kernels import risk as k

    rng = np.random.default_rng(seed)
    R = rng.random((S, c)) * rng.choice([1e-3, 1.0, 1e3])
    R[rng.random(S) < 0.2] = 0.5  # ties with the baseline, constant rows
    B = rng.random((S if per_system else 1, c))
    sums = np.empty((7, S))
    k.all_risk_sums(R, B, sums)
    for s in range(S):
        expect = k.risk_sums(R[s], B[s] if per_system else B[0])
        np.testing.assert_array_equal(sums[:, s], np.array(expect))


def test_resolved_alphas_are_cached_by_value_and_cannot_go_stale():
    """A loop of small calls validates its alphas once (`resolve_value` keeps the resolved
    linear value function by the alphas' bytes): the same object back, read-only arrays, and a
    changed array is a different key, never the stale result."""
    from fastrisk.core.values import resolve_value

    a = np.array([0.0, 2.0])
    first = resolve_value(alpha=a)
    assert resolve_value(alpha=a) is first and not first.alpha.flags.writeable
    np.testing.assert_array_equal(first.loss_weight, [1.0, 3.0])
    a[1] = 4.0
    np.testing.assert_array_equal(resolve_value(alpha=a).alpha, [0.0, 4.0])
    assert resolve_value(loss_weight=(1.0, 3.0)).given == "loss_weight"
    assert resolve_value().given == "none" and resolve_value(alpha=(0.0, 1.0, 5.0, 10.0)).given == "alpha"
    with pytest.raises(InputError, match="must be >= 0"):
        resolve_value(alpha=np.array([-1.0]))
    with pytest.raises(InputError, match="must be >= 0"):  # an error is never cached as a success
        resolve_value(alpha=np.array([-1.0]))


@given(arrays(np.float64, st.integers(2, 300), elements=st.floats(-40, 40)), st.integers(1, 1000))
@settings(max_examples=30, deadline=None)
def test_t_tail_of_a_value_does_not_depend_on_the_other_values_of_its_call(t, df):
    """The continued fraction advances a block of values together, but each value stops at its
    own convergence: its p-value is the one it gets alone, bit for bit (a subset of systems, a
    batch of another size, gives the same numbers)."""
    from fastrisk._runtime.tstat import t_tails

    together = t_tails(t, df)
    alone = np.array([t_tails(t[i:i + 1], df)[0] for i in range(t.size)])
    np.testing.assert_array_equal(together, alone)
