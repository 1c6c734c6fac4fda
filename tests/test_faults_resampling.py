"""Fault suite, resampling: memory estimated before allocating, replicates capped, user
statistics that fail inside a kernel, progress bars only on a terminal, Ctrl-C in a long
bootstrap from the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from interrupting import interrupt

from fastrisk._runtime import progress as _progress
from fastrisk.cli import main
from fastrisk.errors import InputError, ResourceError
from fastrisk.inference.resampling import _engine, _scores, bootstrap, jackknife, permutation_test, procedures

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "bench_data" / "trec-matrices" / "web2012_err20.csv"


@pytest.fixture
def scores():
    return np.random.default_rng(0).random((4, 30))


@pytest.fixture
def little_memory(monkeypatch):
    """The machine has 64 MiB available, as far as the memory checks know."""
    from fastrisk._runtime import resources as _resources

    monkeypatch.setattr(_resources, "available_memory", lambda: 64 * 2**20)


# ---------------------------------------------------------------------- replicates and memory
@pytest.mark.parametrize("run", [
    lambda d: bootstrap(d, replicates=10**12, rng=1),
    lambda d: permutation_test(d, replicates=10**10, rng=1),
])
def test_replicates_are_capped_with_a_reason(scores, run):
    with pytest.raises(InputError, match=r"`replicates` must be at most 1,000,000,000 \(10\*\*9\), got 1.*"
                                         r"Monte Carlo error"):
        run(scores)


def test_kept_replicates_beyond_memory_are_refused_with_the_way_out(scores, little_memory):
    # 4 columns x 10**7 replicates x 8 bytes = 305 MiB kept, a chunk's statistics and each thread's draws
    with pytest.raises(ResourceError, match=r"the bootstrap of 4 column\(s\) x 30 topics with 10,000,000 replicates "
                                            r"needs about 3\d\d\.\d MiB of memory, 64\.0 MiB is available: "
                                            r"keep_replicates=False streams"):
        bootstrap(scores, replicates=10**7, rng=1, keep_replicates=True)
    with pytest.raises(ResourceError, match=r"permutation test .* keep_replicates=False"):
        permutation_test(scores, replicates=10**7, rng=1, keep_replicates=True)


def test_without_kept_replicates_the_same_run_fits(scores, little_memory):
    res = bootstrap(scores, replicates=5000, rng=1, keep_replicates=False, method="percentile")
    assert res.bootstrap_distribution is None and np.isfinite(res.standard_error).all()


def test_all_pairs_beyond_memory_are_refused_before_the_differences_are_formed(little_memory):
    V = np.random.default_rng(1).random((400, 60))  # 79,800 pairs x 60 topics x 4 alphas: 146 MiB each array
    with pytest.raises(ResourceError, match=r"per-topic differences of 79,800 pairs of systems x 60 topics x 4 "
                                            r"alpha\(s\) needs about .* one baseline instead of every pair"):
        bootstrap(V, pairs=True, alpha=[0, 1, 5, 10], replicates=100, rng=1)


def test_the_jackknife_of_every_pair_beyond_memory_is_refused(little_memory):
    from fastrisk import jackknife

    V = np.random.default_rng(1).random((160, 60))  # 12,720 pairs x 60 topics x 4 alphas: 23 MiB an array
    with pytest.raises(ResourceError, match=r"the jackknife of 12,720 column\(s\) x 60 topics x 4 alpha\(s\) needs "
                                            r"about 69\.9 MiB .* one baseline instead of every pair"):
        jackknife(V, pairs=True, alpha=[0, 1, 5, 10])
    assert jackknife(V[:40], pairs=True, alpha=[0, 1, 5, 10]).leave_one_out.shape == (4, 780, 60)


def test_a_chunk_of_every_pair_beyond_memory_is_refused(monkeypatch):
    from fastrisk._runtime import resources as _resources

    V = np.random.default_rng(1).random((200, 20))  # 19,900 pairs x 4 alphas: a chunk of 1,024 replicates is 622 MiB
    monkeypatch.setattr(_resources, "available_memory", lambda: 100 * 2**20)
    with pytest.raises(ResourceError, match=r"the bootstrap of 79,600 column\(s\) .* fewer columns"):
        bootstrap(V, pairs=True, replicates=2000, rng=1, keep_replicates=False)


def test_cli_refuses_too_many_replicates_in_one_line(capsys):
    assert main(["bootstrap", str(MATRIX), "--baseline", "run1", "--replicates", str(10**12)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fastrisk bootstrap: error: `replicates` must be at most 1,000,000,000") and "\n" not in err


# ---------------------------------------------------------------------- user statistics
def _index_far(x):
    return x[int(x[0] * 1000)] if x.shape[0] > 3 else 0.0  # passes the 3-value probe


def _raises_on_large(x):
    if x[0] > 0.5:
        raise ValueError("first score above one half")
    return x.mean()


def _third(x):
    return x[2]


@pytest.mark.parametrize("run, detail", [
    (lambda d: bootstrap(d, statistic=_index_far, replicates=64, rng=1), "IndexError"),
    (lambda d: bootstrap(d, statistic=_raises_on_large, replicates=64, rng=1), "ValueError: first score above"),
    (lambda d: jackknife(d[:, :3], statistic=_third), "IndexError"),  # leave-one-out vectors of 2 values
    (lambda d: bootstrap(d[:, :2], statistic=_third, replicates=64, rng=1), "IndexError"),
])
def test_a_statistic_failing_inside_a_kernel_is_an_input_error_naming_it(scores, run, detail):
    with pytest.raises(InputError, match=r"`statistic` '_\w+' failed on the resampled topics \(" + detail):
        run(scores)


@pytest.mark.slow  # compiles a user statistic's generic path: ~13 s
def test_a_statistic_that_works_gives_the_same_numbers_whatever_the_chunks(scores, monkeypatch):
    import numba

    @numba.njit
    def median(x):
        return np.median(x)

    whole = bootstrap(scores, statistic=median, replicates=5000, rng=3, keep_replicates=True, method="percentile")
    monkeypatch.setattr(procedures, "CHUNK_WORK_STATISTIC", 1)  # one block of 1,024 replicates per chunk
    assert _engine._chunk_rows(5000, 8, None, 4 * 30, procedures.CHUNK_WORK_STATISTIC) == _engine.BLOCK
    chunked = bootstrap(scores, statistic=median, replicates=5000, rng=3, keep_replicates=True, method="percentile")
    assert np.array_equal(whole.bootstrap_distribution, chunked.bootstrap_distribution)
    assert np.array_equal(whole.confidence_interval.low, chunked.confidence_interval.low)


def test_chunks_bound_the_work_between_interrupt_checks():
    rows = _engine._chunk_rows(10**9, 8 * 51, None, 2000 * 50)  # 2,000 columns x 50 topics
    assert rows * 2000 * 50 <= _engine.CHUNK_WORK and rows % _engine.BLOCK == 0
    assert _engine._chunk_rows(10**9, 8, None, 10**9) == _engine.BLOCK  # never below one block


# ---------------------------------------------------------------------- progress
def test_no_progress_bar_into_a_file_or_pipe(scores, capsys, monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(_progress, "MIN_WORK", 0)  # a "long" run
    bootstrap(scores, replicates=2000, rng=1)  # progress=None: stderr is captured, not a terminal
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_progress, "stderr_is_terminal", lambda: True)
    bootstrap(scores, replicates=2000, rng=1, progress=None)
    # tqdm's delay of 2 s keeps a short run silent even on a terminal; asking for it shows it
    bootstrap(scores, replicates=2000, rng=1, progress=True)
    assert "bootstrap" in capsys.readouterr().err


# ---------------------------------------------------------------------- Ctrl-C
@pytest.mark.slow  # about 15 s of subprocesses, as the Tukey interrupt test
def test_a_long_bootstrap_is_interruptible_from_the_cli(tmp_path):

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "fastrisk", "bootstrap", str(MATRIX), "--baseline", "run1", "--seed", "1",
            "--method", "percentile", "--alpha", "0"]
    warm = subprocess.run(args + ["--replicates", "2000", "--format", "csv"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    assert warm.returncode == 0, warm.stderr
    status, waited, err = interrupt(args + ["--replicates", str(10**9)], cwd=tmp_path, env=env)  # minutes of work
    assert status == 130 and err == "fastrisk bootstrap: interrupted", err
    assert waited < 20  # a liveness bound for a loaded CI machine, not a speed claim: a chunk is under a second


# ---------------------------------------------------------------------- memory of the linear path
def test_centred_moments_by_blocks_are_those_of_the_whole(monkeypatch):
    V = np.random.default_rng(8).random((9, 40)) ** 3
    whole = bootstrap(V, replicates=3000, rng=5, method="bca", keep_replicates=False)
    monkeypatch.setattr(procedures, "_MOMENT_BLOCK_BYTES", 1)  # one row per block
    rows = bootstrap(V, replicates=3000, rng=5, method="bca", keep_replicates=False)
    for name in ("standard_error", "pvalue", "bias"):
        assert np.array_equal(getattr(whole, name), getattr(rows, name))
    assert np.array_equal(whole.confidence_interval.low, rows.confidence_interval.low)
    assert np.array_equal(whole.confidence_interval.high, rows.confidence_interval.high)


def test_the_callers_scores_are_never_scaled_in_place():
    V = np.random.default_rng(9).random((3, 20))
    before = V.copy()
    bootstrap(V, replicates=500, rng=1)
    bootstrap(V[0], replicates=500, rng=1)
    assert np.array_equal(V, before)


@pytest.mark.parametrize("value", ["2", "nan", "0", "-0.1"])
def test_cli_test_level_outside_zero_one_is_refused(capsys, value):
    assert main(["test", str(MATRIX), "--baseline", "run1", "--level", value]) == 2
    assert "`--level` must be a level in (0, 1)" in capsys.readouterr().err


def _nan_on_some(x):
    return np.nan if x[0] == x[1] else x.mean()  # NaN when a resample repeats a topic in the first two places


def test_nan_from_a_statistic_is_an_error_not_a_silent_quantile(scores):
    with pytest.raises(InputError, match=r"`statistic` '_nan_on_some' returned NaN on bootstrap replicate \d+ of "
                                         r"column \d"):
        bootstrap(scores, statistic=_nan_on_some, replicates=2000, rng=1)
    with pytest.raises(InputError, match=r"returned NaN on the scores of column 0 themselves"):
        bootstrap(scores, statistic=lambda x: np.nan, replicates=10, rng=1)


def test_scores_whose_squares_overflow_are_refused():
    huge = np.array([[1e200, -1e200, 3e200, 2e200]])
    with pytest.raises(InputError, match=r"column 0 are too large to resample: their sum or squares \(or cubes, "
                                         r"for BCa\) overflow float64"):
        bootstrap(huge, replicates=100, rng=1)
    res = bootstrap(huge / 1e190, replicates=100, rng=1)  # rescaled: fine
    assert np.isfinite(res.standard_error).all()


@pytest.mark.parametrize("run", [lambda d: bootstrap(d, replicates=10, progress="yes"),
                                 lambda d: permutation_test(d, replicates=10, progress=1)])
def test_progress_must_be_none_true_or_false(scores, run):
    with pytest.raises(InputError, match="`progress` must be None"):
        run(scores)


@pytest.mark.parametrize("shape, b", [((1, 5, 7), 0), ((1, 5, 7), 4), ((3, 5, 7), 2), ((4, 2, 3), 1)])
def test_a_system_is_dropped_in_place_as_by_indexing(shape, b):
    y = np.random.default_rng(0).random(shape)
    expected = y[:, np.arange(shape[1]) != b].copy()
    out = _scores._without_system(y, b)
    assert np.array_equal(out, expected) and out.flags.c_contiguous and np.shares_memory(out, y)


def test_excluding_the_baseline_leaves_the_other_columns_as_they_were():
    from fastrisk import ScoreMatrix

    V = np.random.default_rng(4).random((5, 12))
    m = ScoreMatrix(V, list("abcde"), [str(t) for t in range(12)])
    for fn, kw in ((bootstrap, dict(method="percentile")), (permutation_test, {})):
        every = fn(m, "c", alpha=[0, 2], replicates=400, rng=3, keep_replicates=True, **kw)
        others = fn(m, "c", alpha=[0, 2], replicates=400, rng=3, keep_replicates=True, exclude_self=True, **kw)
        assert others.systems == ("a", "b", "d", "e")
        assert np.array_equal(others.statistic, every.statistic[:, [0, 1, 3, 4]])
        assert np.array_equal(others.pvalue, every.pvalue[:, [0, 1, 3, 4]])
