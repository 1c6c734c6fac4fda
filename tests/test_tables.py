"""All-baseline table: published values, loop reference, antisymmetry, ranks, errors."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reference import multibase as ref

from fastrisk.core import tables as _tables
from fastrisk.core.tables import baseline_table
from fastrisk.core.urisk import risk
from fastrisk.errors import InputError, ZeroVarianceWarning

_matrix = ref.matrix_of


def _all_pairs(V, alphas, **kw):
    """URisk, SE and TRisk of the all-pairs kernels in the reference's layout [system, baseline, alpha]."""
    return tuple(np.moveaxis(a, 0, 2) for a in _tables._all_pairs(np.asarray(V, dtype=float), alphas, **kw)[:3])


@pytest.fixture(scope="module")
def web_table(web2012):
    with pytest.warns(ZeroVarianceWarning, match="2 pair"):  # run5 = run31 and run6 = run32
        return baseline_table(web2012, alpha=[0, 1, 5, 10])


def test_published_urisk_against_uogTrA44xi(web2012, web_table):
    b = web2012.system_index("uogTrA44xi")
    urisk = web_table.urisk[3, :, b]  # alpha = 10
    assert urisk[web2012.system_index("srchvrs12c09")] == pytest.approx(-1.027, abs=5e-4)
    assert urisk[web2012.system_index("qutwb")] == pytest.approx(-1.814, abs=5e-4)


def test_published_trisk_against_indriCASP(web2012, web_table):
    b = web2012.system_index("indriCASP")
    k = web2012.system_index("uogTrA44xi")
    np.testing.assert_allclose(web_table.trisk[:, k, b], [2.2440, 0.7528, -1.1163, -1.6512], atol=5e-4)
    np.testing.assert_allclose(web_table.pvalue[:, k, b], [0.029, 0.455, 0.270, 0.105], atol=5e-4)


def test_every_column_equals_single_baseline_risk(web2012, web_table):
    for name in ("indriCASP", "run7", "qutwb"):
        b = web2012.system_index(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ZeroVarianceWarning)
            r = risk(web2012, name, alpha=[0, 1, 5, 10])
        np.testing.assert_allclose(web_table.urisk[:, :, b], r.urisk, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(web_table.trisk[:, :, b], r.trisk, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(web_table.pvalue[:, :, b], r.pvalue, rtol=1e-9, atol=1e-12)


def test_diagonal(web_table):
    S = len(web_table.systems)
    diag = web_table.urisk[:, np.arange(S), np.arange(S)]
    assert (diag == 0).all()
    assert np.isnan(web_table.trisk[:, np.arange(S), np.arange(S)]).all()


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 7), st.integers(2, 9)),
                  elements=st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]) | st.floats(0, 1)),
       st.lists(st.floats(0, 20), min_size=1, max_size=4),
       st.integers(1, 4), st.integers(1, 5))
def test_kernel_matches_loop_reference(V, alphas, block, topic_block):
    U, E, T = ref.table(V.tolist(), alphas)
    U, E, T = np.asarray(U), np.asarray(E), np.asarray(T)
    u, se, t = _all_pairs(V, np.asarray(alphas), block=block, topic_block=topic_block)
    np.testing.assert_allclose(u, U, rtol=1e-9, atol=1e-12)
    # the SE comes from sufficient sums (one-pass variance): its relative error grows like
    # eps * (mean / sd)^2, so nearly constant differences (|TRisk| >~ 1e4) are compared loosely;
    # exactly constant ones must give SE = 0 (TRisk infinite), as the two-pass reference does
    np.testing.assert_allclose(se, E, rtol=1e-6, atol=1e-7)
    assert np.isinf(t[np.isinf(T)]).all()
    assert (np.abs(T[np.isinf(t)]) > 1e6).all()  # only rounding-level variances are called 0
    well = np.isfinite(T) & (E > 1e-6) & (np.abs(T) < 1e3)
    np.testing.assert_allclose(t[well], T[well], rtol=1e-6, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 6)), elements=st.floats(0, 1)))
def test_alpha_zero_is_antisymmetric(V):
    u, se, _ = _all_pairs(V, np.array([0.0]))
    np.testing.assert_allclose(u[:, :, 0], -u[:, :, 0].T, atol=1e-12)
    np.testing.assert_allclose(se, se.transpose(1, 0, 2), rtol=1e-6, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 5)),
                  elements=st.sampled_from([0.0, 0.2, 0.5, 1.0])),
       st.sampled_from(["average", "ordinal"]))
def test_ranks_match_reference(V, ties):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        t = baseline_table(_matrix(V), alpha=[0.0, 3.0], rank_ties=ties)
    S = V.shape[0]
    for b in range(S):
        for a in range(2):
            expect = ref.ranks_desc(t.urisk[a, :, b].tolist(), ordinal=ties == "ordinal")
            assert t.rank[a, :, b].tolist() == expect


def test_named_and_virtual_baselines(web2012, web_table):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        t = baseline_table(web2012, ["uogTrA44xi", "max"], alpha=[0, 1, 5, 10])
    assert t.baselines == ("uogTrA44xi", "MAX")
    b = web2012.system_index("uogTrA44xi")
    np.testing.assert_allclose(t.urisk[:, :, 0], web_table.urisk[:, :, b], atol=1e-14)
    np.testing.assert_array_equal(t.rank[:, :, 0], web_table.rank[:, :, b])
    assert (t.urisk[:, :, 1] <= 0).all()  # nobody beats the per-topic maximum


def test_minus_convention_and_arrow(web2012):
    small = web2012.select(systems=web2012.systems[:4])
    c = baseline_table(small, loss_weight=[1, 2])
    m = baseline_table(small, loss_weight=[1, 2], convention="minus")
    np.testing.assert_array_equal(m.urisk, -c.urisk)
    np.testing.assert_array_equal(m.rank, c.rank)  # rank 1 = best in both conventions
    tab = m.to_arrow()
    assert tab.column_names == ["alpha", "loss_weight", "system", "baseline", "convention", "value", "inference",
                                "urisk", "standard_error", "trisk", "rank", "pvalue"]
    assert tab.num_rows == 4 * 4 * 2
    row = tab.slice(4 * 4 + 4 * 2 + 3, 1).to_pylist()[0]  # alpha 1, system 2, baseline 3
    assert (row["system"], row["baseline"], row["alpha"]) == (small.systems[2], small.systems[3], 1.0)
    assert (row["urisk"], row["pvalue"], row["rank"]) == (m.urisk[1, 2, 3], m.pvalue[1, 2, 3], m.rank[1, 2, 3])
    assert row["convention"] == "minus"
    assert tab.slice(4 * 4 + 4 * 1 + 1, 1).to_pylist()[0]["urisk"] == 0.0  # alpha 1, the diagonal (1, 1)


def test_smooth_and_custom_value_functions(web2012):
    import numba

    @numba.njit
    def halved(x):
        return 0.5 * x if x < 0 else x

    small = web2012.select(systems=web2012.systems[:6] + ("indriCASP",))
    for value in ("smooth", halved):
        t = baseline_table(small, value=value)
        assert t.urisk.shape == (1, 7, 7) and np.isnan(t.alpha).all()
        for name in ("indriCASP", small.systems[2]):
            b = small.system_index(name)
            r = risk(small, name, value=value)
            np.testing.assert_allclose(t.urisk[:, :, b], r.urisk, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(t.trisk[:, :, b], r.trisk, rtol=1e-9)
        one = baseline_table(small, "indriCASP", value=value)
        np.testing.assert_allclose(one.urisk[:, :, 0], t.urisk[:, :, small.system_index("indriCASP")], atol=1e-15)
    assert t.value == "halved" and t.to_arrow().column("value")[0].as_py() == "halved"


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 7), st.integers(2, 9)),
                  elements=st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0, 1)),
       st.sampled_from(["average", "ordinal"]))
def test_exclude_self_ranks_the_other_systems_only(V, ties):
    """Dinçer, Ounis & Macdonald's Table 2: each baseline ranks the other S - 1 runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        t = baseline_table(_matrix(V), alpha=[0.0, 3.0], rank_ties=ties, exclude_self=True)
        full = baseline_table(_matrix(V), alpha=[0.0, 3.0], rank_ties=ties)
    assert t.exclude_self and not full.exclude_self
    np.testing.assert_array_equal(t.urisk, full.urisk)
    S = V.shape[0]
    for a in range(2):
        for b in range(S):
            expect = ref.ranks_desc_without(t.urisk[a, :, b].tolist(), b, ordinal=ties == "ordinal")
            np.testing.assert_array_equal(t.rank[a, :, b], expect)
    assert np.isnan(t.rank[:, np.arange(S), np.arange(S)]).all()
    off = ~np.eye(S, dtype=bool)
    assert np.nanmax(t.rank) <= S - 1 and np.all(t.rank[:, off] >= 1)


def test_exclude_self_with_listed_baselines(web2012):
    """A listed baseline that is a system is left out of its ranking; a virtual one is not."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        t = baseline_table(web2012, ["indriCASP", "mean"], alpha=[0, 5], exclude_self=True)
        full = baseline_table(web2012, ["indriCASP", "mean"], alpha=[0, 5])
    b = web2012.system_index("indriCASP")
    assert np.isnan(t.rank[:, b, 0]).all()
    for a in range(2):
        expect = ref.ranks_desc_without(t.urisk[a, :, 0].tolist(), b)
        np.testing.assert_array_equal(t.rank[a, :, 0], expect)
    np.testing.assert_array_equal(t.rank[:, :, 1], full.rank[:, :, 1])  # MEAN is not a system
    # a system ranked below the baseline moves up one place; one above it keeps its rank
    above = full.rank[0, :, 0] < full.rank[0, b, 0]
    below = full.rank[0, :, 0] > full.rank[0, b, 0]
    np.testing.assert_array_equal(t.rank[0, above, 0], full.rank[0, above, 0])
    np.testing.assert_array_equal(t.rank[0, below, 0], full.rank[0, below, 0] - 1)
    long = t.to_arrow()
    assert long.schema.metadata is not None and b'"exclude_self": true' in long.schema.metadata[b"fastrisk"]
    with pytest.raises(InputError, match="`exclude_self` must be"):
        baseline_table(web2012, "indriCASP", exclude_self="yes")


def test_errors(web2012):
    with pytest.raises(InputError, match="`rank_ties` must be 'average' or 'ordinal'"):
        baseline_table(web2012, rank_ties="dense")
    small = web2012.select(systems=web2012.systems[:4])
    assert baseline_table(small, rank_ties="ordinal").rank_ties == "ordinal"
    with pytest.raises(InputError, match="`convention` must be 'classic' or 'minus'"):
        baseline_table(web2012, convention="x")
    with pytest.raises(InputError, match="non-empty list"):
        baseline_table(web2012, [])
    with pytest.raises(InputError, match="at least 2 topics"):
        baseline_table(web2012.select(topics=web2012.topics[:1]))
    with pytest.raises(InputError, match="unknown baseline 'nope'"):
        baseline_table(web2012, "nope")
    with pytest.raises(InputError, match="`alpha` must be >= 0"):
        baseline_table(web2012, alpha=-1)


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(3, 7), st.integers(2, 11)), elements=st.floats(0, 1)),
       st.integers(0, 6), st.integers(1, 3))
def test_identical_systems_get_identical_rows(V, dup_at, block):
    """A system duplicated anywhere gets bit-identical URisk/SE against every baseline, so
    its ranks tie exactly, although one copy's sums come from the mirrored pairs."""
    V = np.insert(V, min(dup_at, V.shape[0]), V[0], axis=0)
    k = min(dup_at, V.shape[0] - 1) if dup_at else 1
    u, se, _ = _all_pairs(V, np.array([0.0, 2.0]), block=block, topic_block=8)
    others = [b for b in range(V.shape[0]) if b not in (0, k)]
    np.testing.assert_array_equal(u[0, others], u[k, others])
    np.testing.assert_array_equal(se[0, others], se[k, others])
    np.testing.assert_array_equal(u[others, 0], u[others, k])


def test_rank_agreement_across_baselines_matches_scipy():
    from scipy import stats

    import fastrisk

    m, _ = fastrisk.data.datasets.trec2012_web()
    m = m.select(systems=list(m.systems[:12]))
    t = fastrisk.baseline_table(m, alpha=[0, 5])
    agree = t.agreement(alpha=5)
    scores = t.urisk[1].T  # (baselines, systems)
    assert agree.alpha == 5.0
    assert agree.friedman.statistic == pytest.approx(stats.friedmanchisquare(*scores.T).statistic)
    tau = stats.kendalltau(scores[0], scores[3]).statistic
    assert agree.kendall.statistic[0, 3] == pytest.approx(tau)
    assert agree.rbo.ext.shape == (12, 12)
    minus = fastrisk.baseline_table(m, alpha=[5], convention="minus").agreement()
    np.testing.assert_allclose(minus.rbo.ext, agree.rbo.ext)  # same orderings whatever the sign
    with pytest.raises(fastrisk.InputError, match="not in the table"):
        t.agreement(alpha=3)


def test_near_constant_differences_keep_their_digits():
    """The one-pass SE cancels when differences are nearly constant (|TRisk| in the thousands);
    those cells are recomputed two-pass and agree with the plain two-pass reference to 1e-11
    (the one-pass sums alone are off by 5e-6 here)."""
    rng = np.random.default_rng(11)
    base = rng.random(40)
    V = np.vstack([base, base + 0.3 + 1e-6 * rng.standard_normal(40), base - 0.2 + 1e-4 * rng.random(40),
                   rng.random(40)])
    alphas = [0.0, 1.0, 5.0]
    U, E, T = (np.asarray(v) for v in ref.table(V.tolist(), alphas))
    u, se, t = _all_pairs(V, np.asarray(alphas))
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose(se[off], E[off], rtol=1e-11)
    np.testing.assert_allclose(t[off], T[off], rtol=1e-11)
    assert np.abs(t[1, 0, 0]) > 1e5  # the case that lost digits before


def test_small_tables_run_the_one_thread_twins_with_the_same_numbers():
    """baseline_table runs small tables on the kernels' one-thread twins: the numbers of the
    parallel drivers (``_all_pairs`` with its default kernels), bit for bit."""
    from fastrisk.core.tables import _Serial

    rng = np.random.default_rng(3)
    V = rng.random((9, 13))
    V[4] = V[2] + 0.25  # a constant difference: the refined cells too
    alphas = np.array([0.0, 1.0, 5.0])
    for a, b in zip(_tables._all_pairs(V, alphas), _tables._all_pairs(V, alphas, kernels=_Serial)):
        np.testing.assert_array_equal(a, b)


def _nearly_constant_pairs(seed=5, c=30):
    """Systems that differ from one another by nearly constant shifts (|TRisk| in the millions:
    the one-pass variance loses every digit there), plus two ordinary ones."""
    rng = np.random.default_rng(seed)
    base = rng.random(c)
    return np.vstack([base, base + 0.3 + 1e-9 * rng.standard_normal(c), base - 0.1 + 1e-7 * rng.random(c),
                      base + 0.2, rng.random(c), rng.random(c)])


@pytest.mark.parametrize("value", ["smooth", "cubed", "linear"])
def test_every_pair_equals_risk_on_nearly_constant_pairs(value):
    """baseline_table(value=v) and risk(value=v) compute the same numbers pair by pair where the
    one-pass sums cancel: those cells are recomputed as risk computes them (issue #27), bit for
    bit; elsewhere they agree to rounding."""
    import numba

    @numba.njit
    def cubed(x):
        return x * x * x

    V = _nearly_constant_pairs()
    m = _matrix(V)
    kw = {"alpha": [0.0, 1.0, 5.0]} if value == "linear" else {"value": cubed if value == "cubed" else value}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        t = baseline_table(m, **kw)
        refined = 0
        for b, name in enumerate(m.systems):
            r = risk(m, name, **kw)
            for a in range(V.shape[0]):
                if a == b:
                    continue
                for k in range(t.alpha.size):
                    cell = (t.urisk[k, a, b], t.standard_error[k, a, b], t.trisk[k, a, b])
                    ref_cell = (r.urisk[k, a], r.standard_error[k, a], r.trisk[k, a])
                    if abs(ref_cell[2]) > 1e4 or ref_cell[1] == 0:  # nearly constant: refined, bit for bit
                        assert cell == ref_cell, (a, b, k, cell, ref_cell)
                        refined += 1
                    else:
                        np.testing.assert_allclose(cell, ref_cell, rtol=1e-9, atol=1e-15)
    assert refined >= 12 * t.alpha.size  # the four shifted copies against one another, both ways


@pytest.mark.parametrize("scale", [1e-12, 1e-15, 1e-310])
def test_nearly_identical_systems_get_risks_trisk_not_row_sum_rounding(scale):
    """Two runs that differ by noise far below their scores' rounding (a rerun with another
    summation order; subnormal differences on unjudged topics, a case hypothesis found): the
    table's sum d is a difference of row sums, off by about c eps |scores|, so such cells are
    recomputed as `risk` computes them, and TRisk there is risk's, not the rounding's (a URisk
    of 0 and TRisk NaN before)."""
    rng = np.random.default_rng(3)
    base = 0.2 + 0.6 * rng.random(40)
    base[:10] = 0.0
    noisy = base + scale * rng.random(40) if scale > 1e-300 else base + np.r_[scale * rng.random(10), np.zeros(30)]
    V = np.vstack([base, noisy, rng.random(40)])
    m = _matrix(V)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        t = baseline_table(m, alpha=[0.0, 5.0])
        r = risk(m, "s0", alpha=[0.0, 5.0])
    assert (r.urisk[:, 1] > 0).all() and (r.trisk[:, 1] > 0).all()
    np.testing.assert_array_equal(t.urisk[:, 1, 0], r.urisk[:, 1])
    np.testing.assert_array_equal(t.trisk[:, 1, 0], r.trisk[:, 1])


def _linear_2(d):
    """The linear value function at alpha = 2, written out: d + 2 min(d, 0)."""
    return d + 2.0 * min(d, 0.0)


@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 12)),
                  elements=st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]) | st.floats(0, 1)))
def test_the_three_ways_to_the_urisk_moments_agree(V):
    """Issue #27: every path's moments come from the kernel `risk_at`, fed by the centred sums of
    `risk_sums` (risk with alpha; risk with any value function through `value_moments`) or by
    the table's one-pass pair sums (refined by `risk_sums` where they cancel): on any matrix,
    risk(alpha=2) equals risk(value=d + 2 min(d, 0)) to 1e-12, and the table equals both."""
    m = _matrix(V)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroVarianceWarning)
        table = baseline_table(m, alpha=[2.0])
        by_value = baseline_table(m, value=_linear_2)
        for b, name in enumerate(m.systems):
            linear = risk(m, name, alpha=[2.0])
            valued = risk(m, name, value=_linear_2)
            for got in (valued.urisk, table.urisk[:, :, b], by_value.urisk[:, :, b]):
                np.testing.assert_allclose(got, linear.urisk, rtol=1e-12, atol=1e-14)
            for got in (valued.standard_error, table.standard_error[:, :, b], by_value.standard_error[:, :, b]):
                np.testing.assert_allclose(got, linear.standard_error, rtol=1e-12, atol=1e-14)


# ---- one kernel body for the t table's sums and the corrected inferences' higher sums (issue #37)

def _kernel_sums_digest(sums) -> str:
    import hashlib

    S = sums[3].shape[0]
    iu = np.triu_indices(S, 1)
    return hashlib.sha256(b"".join(np.ascontiguousarray(a[iu]).tobytes() for a in sums[:3])
                          + sums[3].tobytes() + sums[4].tobytes()).hexdigest()[:16]


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1",
                    reason="the digest is of the compiled kernel's bits (LLVM's vectorised sums); plain Python adds "
                           "in another order")
def test_the_t_table_s_sums_are_the_same_bits_as_before_the_fold():
    """`pair_sums` (the t table's pass) after `_rows_h` was folded into `_rows`: the digest of its
    sums on a fixed matrix (tiles of 8 systems, 16-topic chunks and their 4 + 2 last topics),
    computed with the kernel of 4c232cb, before the fold."""
    from fastrisk._kernels import tables as k

    V = np.random.default_rng(37).beta(0.6, 2.0, size=(37, 70))
    stop = np.zeros(1, np.bool_)
    assert _kernel_sums_digest(k.pair_sums_serial(V, 8, 16, stop)) == "66959035f68f2928"
    assert _kernel_sums_digest(k.pair_sums(V, 8, 16, stop)) == "66959035f68f2928"


@pytest.mark.parametrize("fourth", [False, True])
def test_the_higher_sums_match_the_reference_and_do_not_depend_on_the_threads(fourth):
    import numba
    from reference import riskinference as ref_inf

    from fastrisk._kernels import tables as k

    V = np.random.default_rng(5).beta(0.6, 2.0, size=(37, 70))
    V.flags.writeable = False
    stop = np.zeros(1, np.bool_)
    serial = k.pair_sums_higher_serial(V, 8, 16, fourth, stop)
    before = numba.get_num_threads()
    try:
        runs = []
        for n in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(n)
            runs.append(k.pair_sums_higher(V, 8, 16, fourth, stop))
    finally:
        numba.set_num_threads(before)
    iu = np.triu_indices(37, 1)
    for run in runs:
        assert all(np.array_equal(a[:, iu[0], iu[1]] if a.ndim == 3 else a, b[:, iu[0], iu[1]] if b.ndim == 3 else b)
                   for a, b in zip(run, serial))
    sums, row, mag = serial
    assert sums.shape[0] == (7 if fourth else 5)
    want = ref_inf.pair_higher_sums(V)
    for j in range(sums.shape[0]):
        np.testing.assert_allclose(sums[j][iu], want[j][iu], rtol=1e-12, atol=1e-12)
    t = k.pair_sums_serial(V, 8, 16, stop)
    assert all(np.array_equal(t[j][iu], sums[j][iu]) for j in range(3))  # the t table's sums, bit for bit
