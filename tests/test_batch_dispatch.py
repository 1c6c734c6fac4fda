"""Every entry point takes a stack of K collections wherever it takes a matrix, with every option
it takes for one matrix, and returns the same result class with a leading ``batch`` axis."""

import warnings

import numpy as np
import pytest

import fastrisk
from fastrisk import ScoreMatrix
from fastrisk._runtime.rng import resolve_seed
from fastrisk.core import batch

K, S, C = 3, 3, 8
SYSTEMS = ("s0", "s1", "s2")
TOPICS = tuple(str(i) for i in range(C))


def _stack(K=K, S=S, c=C, seed=2):
    return np.random.default_rng(seed).random((K, S, c))


def _median(x):  # a user statistic compiles the generic kernels for it: those cases are slow
    return np.median(x)


#: (entry point, options): every option of the one-matrix path (and the stack's own ways to it).
OPTIONS = {
    "risk": [dict(), dict(alpha=2.0), dict(loss_weight=[1.0, 3.0]), dict(value="smooth"), dict(convention="minus"),
             dict(significance=0.1), dict(missing="drop"), dict(threads=1), dict(baseline="mean"),
             dict(baseline="s2"), dict(baseline={t: 0.5 for t in TOPICS})],
    "zrisk": [dict(), dict(alpha=[0, 5]), dict(loss_weight=2.0), dict(value="smooth"), dict(convention="minus"),
              dict(threads=1)],
    "t_test": [dict(), dict(alpha=[0, 1]), dict(loss_weight=2.0), dict(value="smooth"), dict(pairs=True),
               dict(convention="minus", alternative="less"), dict(exclude_self=True), dict(alternative="greater"),
               dict(missing="zero"), dict(baseline="median"), dict(baseline=None)],
    "bootstrap": [dict(), dict(method=None), dict(method="percentile"), dict(method="basic"),
                  dict(method="studentized"), dict(method=None, convention="minus", alternative="less"),
                  dict(method=None, exclude_self=True), dict(confidence_level=0.9), dict(test="t"),
                  dict(statistic=_median, method="percentile"), dict(value="smooth"), dict(pairs=True),
                  dict(keep_replicates=True),
                  dict(method=None, keep_replicates=False, chunk_size=1024, progress=False, threads=1),
                  dict(missing="drop"), dict(baseline="mean"), dict(baseline=None)],
    "permutation_test": [dict(), dict(alternative="greater"), dict(convention="minus"), dict(exclude_self=True),
                         dict(value="smooth"), dict(pairs=True), dict(keep_replicates=True),
                         dict(keep_replicates=False, chunk_size=1024, progress=False, threads=1),
                         dict(missing="raise"), dict(baseline="max"), dict(baseline=None),
                         dict(replicates=64, alpha=[0, 1])],
    "jackknife": [dict(), dict(alpha=[0, 5]), dict(value="smooth"), dict(pairs=True), dict(convention="minus"),
                  dict(exclude_self=True), dict(statistic=_median), dict(missing="zero"), dict(threads=1),
                  dict(baseline=None)],
}
RESAMPLING = ("bootstrap", "permutation_test")
CASES = [(fn, opts) for fn, all_opts in OPTIONS.items() for opts in all_opts]


def _fast(fn, opts) -> bool:
    """Whether the stack takes the batched kernel (another stream of random numbers than one
    matrix's) for these options."""
    baseline = opts.get("baseline", 0)
    linear = opts.get("value") in (None, "linear")
    system = not opts.get("pairs") and (baseline == 0 or baseline in SYSTEMS)
    if fn == "bootstrap":
        return system and linear and "method" in opts and opts["method"] is None and "statistic" not in opts \
            and not opts.get("keep_replicates") and opts.get("test", "shift") == "shift"
    if fn == "permutation_test":
        return system and linear and not opts.get("keep_replicates")
    return False


def _call(fn, data, opts, rng=None):
    opts = dict(opts)
    baseline = opts.pop("baseline", None if opts.get("pairs") else 0)
    if fn in RESAMPLING:
        opts.setdefault("replicates", 200)
        if rng is not None:
            opts["rng"] = rng
    if fn == "zrisk":
        return getattr(fastrisk, fn)(data, **opts)
    return getattr(fastrisk, fn)(data, baseline, **opts)


def _one(X, k, opts):
    """Collection k as the one-matrix path takes it: named by the stack (plain per-topic scores
    without a baseline)."""
    if opts.get("baseline", 0) is None and not opts.get("pairs"):
        return X[k]
    return ScoreMatrix(X[k], SYSTEMS, TOPICS)


def _label(value) -> str:
    """An option's value in a test id: a function by its name (its repr holds its address, which
    differs between xdist workers)."""
    return getattr(value, "__name__", str(value))


@pytest.mark.parametrize("fn, opts", [pytest.param(fn, o, marks=[pytest.mark.slow] if "statistic" in o else [],
                                                   id=f"{fn}-{'-'.join(f'{k}={_label(v)}' for k, v in o.items()) or 'defaults'}")
                                      for fn, o in CASES])
def test_every_option_of_one_matrix_works_on_a_stack(fn, opts):
    X = _stack()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the alpha-invariance and zero-variance warnings of each path
        res = _call(fn, X, opts, rng=7)
        ones = [_call(fn, _one(X, k, opts), opts,
                      rng=batch.collection_seed(resolve_seed(7).kernel, k) if fn in RESAMPLING else None)
                for k in range(K)]
    assert type(res) is type(ones[0]), "a stack returns the class one matrix returns"
    assert res.batched and res.sizes()["batch"] == K
    for name, dims in type(res).array_dims().items():
        got, want = getattr(res, name), [getattr(o, name) for o in ones]
        if got is None:
            assert all(w is None for w in want) or _fast(fn, opts), name  # nothing kept on the kernel's path
            continue
        want = np.stack(want)
        assert got.shape == want.shape and res.array_dims()[name] == ("batch", *dims)
        random = fn in RESAMPLING and name in ("pvalue", "standard_error", "bias", "ci_low", "ci_high",
                                               "null_distribution", "bootstrap_distribution")
        if random and _fast(fn, opts):  # the batched kernel's streams (seed, k, b): its own test below
            continue
        kernel = _fast(fn, opts) or (fn in ("zrisk", "t_test") and not opts.get("value") and not opts.get("pairs")
                                     and opts.get("baseline", 0) in (0, "s2"))
        if kernel:  # the batched kernel and one matrix's: the same formula, rounded apart
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)  # the one-matrix path, collection by collection
    assert "batch" in res.to_arrow().column_names


@pytest.mark.parametrize("fn", RESAMPLING)
def test_the_kernel_path_of_a_resampling_test_is_its_batched_streams(fn):
    """On the batched kernel, collection k draws the streams (seed, start + k): chunks of a stack
    are the whole stack's numbers, the convention negates, exclude_self drops the column."""
    X = _stack(K=6)
    opts = {"method": None} if fn == "bootstrap" else {"alpha": 0}
    whole = _call(fn, X, opts, rng=3)
    part = _call(fn, batch.stack(X[2:], start=2), opts, rng=3)
    np.testing.assert_array_equal(whole.pvalue[2:], part.pvalue)
    minus = _call(fn, X, {**opts, "convention": "minus", "alternative": "less"}, rng=3)
    greater = _call(fn, X, {**opts, "alternative": "greater"}, rng=3)
    np.testing.assert_array_equal(minus.pvalue, greater.pvalue)
    np.testing.assert_array_equal(minus.statistic, -greater.statistic)
    assert minus.convention == "minus" and minus.alternative == "less"
    drop = _call(fn, X, {**opts, "exclude_self": True}, rng=3)
    assert drop.systems == ("s1", "s2")
    np.testing.assert_array_equal(drop.pvalue, whole.pvalue[..., 1:])


def test_stack_defaults_follow_one_matrix():
    """A stack takes the defaults of one matrix: t_test's alphas, the bootstrap's BCa interval,
    and ``baseline=None`` means per-topic scores as they are."""
    X = _stack()
    m = ScoreMatrix(X[0], SYSTEMS, TOPICS)
    assert np.array_equal(fastrisk.t_test(X, 0).alpha, fastrisk.t_test(m, 0).alpha)
    boot = fastrisk.bootstrap(X, 0, alpha=0, replicates=200, rng=1)
    assert boot.method == "bca" and boot.confidence_interval.low.shape == (K, 1, S)
    with pytest.raises(fastrisk.InputError, match="`baseline` is required"):
        fastrisk.bootstrap([m, m])  # a ScoreMatrix needs a baseline, in a stack as alone
