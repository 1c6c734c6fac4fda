"""Shared resamples (common random numbers) in the battery: every pair's bootstrap and
sign-flip counts against the plain references drawn from the one shared stream, the one-pair
case against the independent battery, and invariance to threads, subsets and blocks."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import batch as ref
from reference import simulate as sref

from fastrisk._kernels import crn
from fastrisk._runtime.rng import resolve_seed
from fastrisk.errors import InputError
from fastrisk.simulate import battery
from fastrisk.simulate.battery import battery_test_names

KEY = 5
battery_module = importlib.import_module("fastrisk.simulate.battery")  # the module (the package exports the function)


def _pairs(K, c, seed):
    return np.random.default_rng(seed).random((K, 2, c))


@pytest.mark.parametrize(("c", "B"), [(7, 70), (40, 600), (65, 70)])
def test_every_pair_counts_the_shared_draws_as_the_plain_reference(c, B):
    """Each pair's counts are those of the plain references run on the draws of the one key
    (B past a block of `block_size` resamples; c odd, and past a 64-bit word of signs)."""
    V = _pairs(3, c, 40 + c)
    std = battery(V, replicates=B, rng=9, start=KEY, shared_resamples=True)
    urb = battery(V, replicates=B, rng=9, start=KEY, shared_resamples=True, protocol="urbano2019")
    for k in range(3):
        d = list(V[k, 1] - V[k, 0])
        sref.assert_resampled_p_values(std, urb, d, KEY, k, B)
        x = [v + 5.0 * min(v, 0.0) for v in d]  # bootstrap_risk@5: the same resamples of x
        ge, le, ab = ref.bootstrap_counts(x, resolve_seed(std.seed).kernel, KEY, B)
        np.testing.assert_allclose(std.p("bootstrap_risk@5", "two-sided")[k], (ab + 1) / (B + 1))


def test_count_and_sign_blocks_are_the_reference_draws():
    c, n = 9, 70
    C = np.empty((c, crn.block_size(c)))
    F = np.empty((c, crn.block_size(c)))
    base_b = ref.stream_state(3, 2 * KEY)
    base_f = ref.stream_state(3, 2 * KEY + 1)
    crn.count_block(np.uint64(base_b), 10, n, c, C)
    crn.sign_block(np.uint64(base_f), 10, n, c, False, F)
    for r in range(n):
        want = np.bincount(ref.Replicate(3, KEY, 0, 10 + r).topics(c), minlength=c)
        np.testing.assert_array_equal(C[:, r], want)
        np.testing.assert_array_equal(F[:, r], ref.Replicate(3, KEY, 1, 10 + r).signs(c))
    np.testing.assert_array_equal(crn.count_sums(np.uint64(base_b), 600, c)[:c].sum(), 600 * c)


@settings(max_examples=20, deadline=None)
@given(K=st.integers(1, 4), c=st.integers(2, 70), B=st.integers(1, 700), seed=st.integers(0, 2**32),
       protocol=st.sampled_from(["standard", "urbano2019"]))
def test_a_pair_among_others_gets_what_it_gets_alone_and_alone_what_the_independent_battery_gives(
        K, c, B, seed, protocol):
    """Shared draws of key s give pair k, among any others, the p-values that the independent
    battery gives a lone pair with key s (the same draws: only their summation order differs,
    topic order against draw order, which decides no comparison on continuous scores)."""
    V = _pairs(K, c, seed)
    res = battery(V, replicates=B, rng=seed, start=KEY, shared_resamples=True, protocol=protocol)
    for k in range(K):
        one = battery(V[k:k + 1], replicates=B, rng=seed, start=KEY, protocol=protocol)
        np.testing.assert_array_equal(res.pvalue[k], one.pvalue[0])
        np.testing.assert_array_equal(res.statistic[k], one.statistic[0])


def test_exact_enumeration_is_shared_as_it_is():
    """With 2^c <= B every pair's flips are the 2^c patterns anyway: the flip tests are the
    independent battery's."""
    V = _pairs(4, 7, 1)
    res = battery(V, replicates=200, start=KEY, shared_resamples=True)
    ind = battery(V, replicates=200)
    assert res.replicates == 128
    flips = [res.tests.index(t) for t in ("permutation", "zrisk", "georisk")]
    np.testing.assert_array_equal(res.pvalue[:, flips], ind.pvalue[:, flips])


def test_shared_counts_do_not_depend_on_threads_or_on_the_pairs_beside():
    V = _pairs(50, 30, 2)
    kw = dict(replicates=1100, rng=4, start=KEY, shared_resamples=True, protocol="urbano2019")
    one = battery(V, threads=1, **kw)
    two = battery(V, threads=2, **kw)
    part = battery(V[13:31], threads=2, **kw)
    np.testing.assert_array_equal(one.pvalue, two.pvalue)
    np.testing.assert_array_equal(one.pvalue[13:31], part.pvalue)
    other = battery(V, **{**kw, "start": KEY + 1})
    assert not np.array_equal(one.p("bootstrap"), other.p("bootstrap"))  # another key: other draws


@pytest.mark.parametrize("shared", [False, True])
def test_only_the_tests_asked_for_are_resampled_and_theirs_are_unchanged(shared):
    V = _pairs(6, 20, 3)
    kw = dict(replicates=300, rng=2, start=KEY, shared_resamples=shared, protocol="urbano2019")
    full = battery(V, **kw)
    names = battery_test_names((1.0, 5.0))
    for want in (["bootstrap"], ["permutation", "georisk"], ["bootstrap_risk@5", "t"], ["t"]):
        part = battery(V, tests=want, **kw)
        for j, name in enumerate(names):
            if name in want or name not in ("bootstrap", "permutation", "zrisk", "georisk", "bootstrap_risk@1",
                                            "bootstrap_risk@5"):
                np.testing.assert_array_equal(part.pvalue[:, j], full.pvalue[:, j])
            else:
                assert np.isnan(part.pvalue[:, j]).all(), (want, name)


def test_bad_shared_arguments_are_named():
    V = _pairs(2, 5, 0)
    with pytest.raises(InputError, match="`shared_resamples`.*`start`"):
        battery(V, replicates=10, shared_resamples=True, start=[1, 2])
    with pytest.raises(InputError, match="`shared_resamples` must be True or False"):
        battery(V, replicates=10, shared_resamples="yes")
    with pytest.raises(InputError, match="`tests`: no test foo"):
        battery(V, replicates=10, tests=["t", "foo"])


def _topic_order_product(M, A):
    """sum_i A[i, r] M[j, i] in topic order, one rounding per product and per add (plain NumPy:
    one vectorised add per topic)."""
    s = np.zeros((M.shape[0], A.shape[1]))
    for i in range(M.shape[1]):
        s = s + M[:, i, None] * A[None, i, :]
    return s


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 11), c=st.integers(1, 23), n=st.integers(1, 70), j0=st.integers(0, 3),
       seed=st.integers(0, 2**32), counts=st.booleans())
def test_product_is_the_topic_order_sum_bit_for_bit(rows, c, n, j0, seed, counts):
    """`_product` against the plain topic-order reference: rows and topics not multiples of the
    four-by-four register block (one row: T = 1), any replicates, a slice of rows, and
    continuous weights that would round differently in any other order."""
    g = np.random.default_rng(seed)
    M = g.standard_normal((j0 + rows, c)) * 10.0 ** g.integers(-3, 4, (j0 + rows, c))
    A = (g.integers(0, 4, (c, n + 3)) if counts else g.choice([-1.0, 1.0], (c, n + 3))).astype(float)
    out = np.full((rows, n + 3), np.nan)
    crn._product(M, j0, j0 + rows, A, n, out)
    want = _topic_order_product(M[j0:], A[:, :n])
    np.testing.assert_array_equal(out[:, :n], want)
    assert np.isnan(out[:, n:]).all()  # replicates past n untouched


def test_product_is_not_reassociated():
    """A sum whose value depends on the order: topic order gives 0 + 1 (the 1e16 cancels first),
    a pairwise or reversed order would give 0 or 2."""
    M = np.array([[1e16, -1e16, 1.0, 0.0, 0.0]] * 5)
    A = np.ones((5, 8))
    out = np.empty((5, 8))
    crn._product(M, 0, 5, A, 8, out)
    assert (out == 1.0).all()


@pytest.mark.parametrize(("items", "tile", "blocks"), [(1, 32, 1), (75, 32, 3), (1000, 16, 313), (5, 16, 100),
                                                        (3000, 32, 2)])
def test_layout_covers_every_item_and_block_once(items, tile, blocks):
    tiles, split, per = crn._layout(items, tile, blocks)
    assert (tiles - 1) * per < items <= tiles * per  # no empty tile, every item in one
    assert 1 <= split <= blocks
    assert tiles * split <= crn.UNITS + max(split, tiles)
    if blocks >= crn.UNITS:
        assert tiles == 1  # a block drawn once for all the items


def test_many_pairs_in_uneven_tiles_count_what_each_pair_counts_alone():
    """75 pairs over 3 blocks: tiles of 25 rows (sub-tiles and register blocks with tails) give
    each pair the p-values it gets alone (one tile of one row)."""
    c = 30
    B = 2 * crn.block_size(c) + 7
    V = _pairs(75, c, 8)
    kw = dict(replicates=B, rng=6, start=KEY, shared_resamples=True, protocol="urbano2019")
    res = battery(V, **kw)
    for k in (0, 24, 25, 49, 50, 74):
        np.testing.assert_array_equal(res.pvalue[k], battery(V[k:k + 1], **kw).pvalue[0])


def _rows(kind, K, c, g):
    """Differences of K pairs of c topics: continuous, lattice-valued (P@10's steps of 0.1, many
    flips and resamples tie a threshold), all zero, tiny, or one pair of each."""
    if kind == "continuous":
        V = g.random((K, 2, c))
    elif kind == "lattice":
        V = np.round(g.random((K, 2, c)) * 10) / 10
    elif kind == "zero":
        V = np.repeat(g.random((K, 1, c)), 2, axis=1)
    else:  # tiny: float32's subnormal range
        V = g.random((K, 2, c)) * 1e-41
    return V


def _single_and_double(V, B, seed, urbano, exact=False):
    """Bootstrap (d, x at alpha = 5, boot' centres) and sign-flip counts of the shared draws through
    the float32 filter and through the float64 products."""
    K, _, c = V.shape
    xmean = battery_module.r_mean(V[:, 1] - V[:, 0]) if urbano else np.empty(0)
    D, Q, total, tol, sc = crn.prepare(V, 0.01, xmean)
    X, xt, xtol, _ = crn.boot_rows(D, total, tol, np.array([5.0]), True, True)
    bb, bf = np.uint64(crn.stream_base(seed, KEY, 0)), np.uint64(crn.stream_base(seed, KEY, 1))
    rbar = np.full(len(X), np.nan)
    rbar[:K] = crn.centres(crn.count_sums(bb, B, c), D, total, B)
    stop = np.zeros(1, np.uint8)
    scale = np.abs(D).sum(axis=1)
    n_perm = (1 << c) if exact else B
    assert crn.boot_bounds(X, xt, xtol, rbar)[3].all() and crn.flip_bounds(D, total, tol, scale, sc)[2].all()
    return ((crn.boot_units32(X, xt, xtol, rbar, bb, B, c, stop), crn.boot_units(X, xt, xtol, rbar, bb, B, c, stop)),
            (crn.flip_units32(D, total, tol, scale, sc, bf, n_perm, exact, c, stop),
             crn.flip_units(D, 1, total, tol, sc, bf, n_perm, exact, False, c, stop)))


@settings(max_examples=30, deadline=None)
@given(K=st.integers(1, 40), c=st.integers(1, 130), B=st.integers(1, 1500), seed=st.integers(0, 2**32),
       kind=st.sampled_from(["continuous", "lattice", "zero", "tiny"]), urbano=st.booleans())
def test_float32_filter_counts_what_the_float64_products_count(K, c, B, seed, kind, urbano):
    """Every bootstrap and sign-flip count of the float32 products (each replicate decided from its
    float32 sum unless within the error bound of a threshold, then summed again in float64) is
    the float64 products' count, bit for bit: on continuous scores, on lattice-valued ones whose
    replicates tie the thresholds, on identical runs (d = 0) and in float32's subnormal range."""
    g = np.random.default_rng(seed)
    V = _rows(kind, K, c, g)
    (b32, b64), (f32, f64) = _single_and_double(V, B, seed, urbano)
    np.testing.assert_array_equal(b32, b64)
    np.testing.assert_array_equal(f32, f64)


def test_float32_filter_on_the_exact_enumeration():
    V = _rows("lattice", 5, 9, np.random.default_rng(1))
    (_, _), (f32, f64) = _single_and_double(V, 600, 3, True, exact=True)
    np.testing.assert_array_equal(f32, f64)


def test_lattice_scores_exercise_the_float64_path():
    """The lattice case of the test above is not vacuous: many of its replicates fall inside the
    intervals of `boot_bounds` / `flip_bounds` and are decided by their float64 sums."""
    c, B = 50, 4000
    V = _rows("lattice", 4, c, np.random.default_rng(2))
    xmean = battery_module.r_mean(V[:, 1] - V[:, 0])
    D, Q, total, tol, sc = crn.prepare(V, 0.01, xmean)
    F = np.empty((c, B), np.float32)
    crn.sign_block(np.uint64(crn.stream_base(3, KEY, 1)), 0, B, c, False, F)
    a = D.astype(np.float32) @ F
    L, H, _ = crn.flip_bounds(D, total, tol, np.abs(D).sum(axis=1), sc)
    inside = (a >= L[:, [0]]) & (a <= H[:, [0]]) | (np.abs(a) >= L[:, [1]]) & (np.abs(a) <= H[:, [1]])
    assert inside.mean() > 0.01
    (b32, b64), (f32, f64) = _single_and_double(V, B, 3, True)
    np.testing.assert_array_equal(f32, f64)
    np.testing.assert_array_equal(b32, b64)


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 20), c=st.integers(1, 130), n=st.integers(1, 70), j0=st.integers(0, 9),
       seed=st.integers(0, 2**32), counts=st.booleans())
def test_float32_product_is_within_its_error_bound(rows, c, n, j0, seed, counts):
    """`_product8` (eight rows a pass, then `_product`'s four and one) against the exact product
    (float64 of float32 inputs is exact here): within (c + 1) 2^-24 sum_i |A_ir M_ji| (Higham's
    bound, on which `_margin` rests), every row and replicate written, none beyond."""
    g = np.random.default_rng(seed)
    M = (g.standard_normal((j0 + rows, c)) * 10.0 ** g.integers(-3, 4, (j0 + rows, c))).astype(np.float32)
    A = (g.integers(0, 5, (c, n + 3)) if counts else g.choice([-1.0, 1.0], (c, n + 3))).astype(np.float32)
    out = np.full((rows, n + 3), np.nan, np.float32)
    crn._product8(M, j0, j0 + rows, A, n, out)
    M64, A64 = M[j0:].astype(np.float64), A[:, :n].astype(np.float64)
    exact = M64 @ A64
    bound = (c + 1) * 2.0 ** -24 * (np.abs(M64) @ np.abs(A64))
    assert (np.abs(out[:, :n] - exact) <= bound).all()
    assert np.isnan(out[:, n:]).all()


def test_large_scores_take_the_float64_products():
    """Scores beyond float32's range (c max |d| > SINGLE_MAX) fail the bounds' check, and the
    battery gives the numbers of the float64 products."""
    V = _pairs(3, 20, 4) * 1e35
    D, Q, total, tol, sc = crn.prepare(V, 0.0, np.empty(0))
    assert not crn.flip_bounds(D, total, tol, np.abs(D).sum(axis=1), sc)[2].all()
    kw = dict(replicates=500, rng=1, start=KEY, shared_resamples=True)
    res = battery(V, **kw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(battery_module, "SINGLE_PRODUCTS", False)
        ref64 = battery(V, **kw)
    np.testing.assert_array_equal(res.pvalue, ref64.pvalue)


def test_float32_units_stop_at_a_block_boundary_when_asked():
    """Ctrl-C: with the stop flag set (`fastrisk._kernels._interrupt`), the float32 units draw no
    block and count nothing; unset, they count every replicate."""
    V = _pairs(4, 20, 6)
    D, Q, total, tol, sc = crn.prepare(V, 0.0, np.empty(0))
    X, xt, xtol, _ = crn.boot_rows(D, total, tol, np.empty(0), True, False)
    rbar = np.full(len(X), np.nan)
    base = np.uint64(crn.stream_base(1, KEY, 0))
    scale = np.abs(D).sum(axis=1)
    for flag, want in ((1, 0), (0, 5000)):
        stop = np.full(1, flag, np.uint8)
        boot = crn.boot_units32(X, xt, xtol, rbar, base, 5000, 20, stop)
        flips = crn.flip_units32(D, total, tol, scale, sc, base, 5000, False, 20, stop)
        assert (boot[:, 0] + boot[:, 1] >= want).all() and (boot[:, :3].sum() == 0) == (want == 0)
        assert (flips[:, 0] + flips[:, 1] >= want).all() and (flips[:, :3].sum() == 0) == (want == 0)
