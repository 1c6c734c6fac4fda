"""The studies with shared resamples (common random numbers) and the grid at the paper's size:
reproducible numbers independent of the chunking, the same pairs as independent draws,
between-job standard errors, rates that agree with independent draws, the cost estimate, and
a grid killed mid-run that resumes to the tables of an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fastrisk.cli import main
from fastrisk.data.datasets import trec_matrix
from fastrisk.data.io import write_matrix
from fastrisk.data.matrix import ScoreMatrix
from fastrisk.errors import InputError
from fastrisk.simulate import studies, type1
from fastrisk.simulate.grid import (
    PAPER_REPLICATES,
    PAPER_TESTS,
    PAPER_TRIALS,
    estimate_grid,
    paper_counts,
    run_grid,
    trial_cost,
    trial_tests,
)

RESAMPLED = ("bootstrap", "permutation", "zrisk", "georisk")


@pytest.fixture(scope="module")
def web12(tmp_path_factory):
    """13 runs of the bundled TREC 2012 Web collection (nDCG@20) as a score-matrix file, fitted
    into a cache (a few seconds: 55 copulas): the study keeps 11, the fewest its H1 pairs allow."""
    d = tmp_path_factory.mktemp("web12")
    m = trec_matrix("web2012_ndcg20")
    file, cache = d / "web12.parquet", d / "cache"
    write_matrix(ScoreMatrix(m.values[::3][:13], m.systems[::3][:13], m.topics, m.measure), file)
    assert main(["simulate", "fit", str(file), "--cache", str(cache), "--format", "csv", "--out",
                 str(d / "fit.csv")]) in (0, None)
    return file, cache


def _type1(web12, **kw):
    file, cache = web12
    args = dict(collections=[str(file)], topics=12, trials=600, replicates=300, rng=3, cache=cache,
                significance=[0.05, 0.1], progress=False, risk_nulls=False)
    return type1(**{**args, **kw})


def test_shared_study_numbers_do_not_depend_on_the_chunking(web12):
    a = _type1(web12, shared_resamples=100, chunk=100)
    b = _type1(web12, shared_resamples=100, chunk=300)
    again = _type1(web12, shared_resamples=100, chunk=100)
    np.testing.assert_array_equal(a.rate, b.rate)
    np.testing.assert_array_equal(a.rate, again.rate)
    np.testing.assert_array_equal(a.se, again.se)
    assert np.isfinite(a.se[0, a.tests.index("bootstrap")]).all()  # 6 jobs of 100 trials: a between-job SE
    ind = _type1(web12, chunk=100)
    for k, t in enumerate(a.tests):
        if t in ("t", "wilcoxon", "sign"):  # the same pairs: the tests that do not resample agree exactly
            np.testing.assert_array_equal(a.rate[:, k], ind.rate[:, k])
    other = _type1(web12, shared_resamples=300, chunk=300)  # other blocks: other draws
    k = a.tests.index("bootstrap")
    assert not np.array_equal(a.rate[:, k], other.rate[:, k])


def test_a_shared_study_reports_the_between_job_se_stratified_by_collection(web12, tmp_path):
    file, cache = web12
    m = trec_matrix("web2012_ndcg20")
    other = tmp_path / "web12b.parquet"
    write_matrix(ScoreMatrix(m.values[1::4][:10], m.systems[1::4][:10], m.topics, m.measure), other)
    ck = tmp_path / "ck.parquet"
    res = _type1(web12, collections=[str(file), str(other)], shared_resamples=100, chunk=100, out=ck)
    jobs = pd.read_parquet(ck)
    for test in ("bootstrap", "t"):
        for j, alpha in enumerate((0.05, 0.1)):
            cell = jobs[(jobs.test == test) & (jobs.tails == "two-sided") & np.isclose(jobs.alpha, alpha)]
            h, v, g = (cell[c].to_numpy(float) for c in ("hits", "valid", "param_collection"))
            assert len(np.unique(g)) == 2 and res.se[0, res.tests.index(test), 1, j] == pytest.approx(
                _cluster_se(h, v, g), rel=1e-9)


def test_chunks_hold_whole_blocks_of_shared_resamples(web12):
    with pytest.raises(InputError, match="`chunk`.*multiple of 100"):
        _type1(web12, shared_resamples=100, chunk=150)
    with pytest.raises(InputError, match="`shared_resamples` must be"):
        _type1(web12, shared_resamples=-1)


def _cluster_se(h, v, g):
    """The stratified cluster SE of sum(h) / sum(v), written out (Cochran 1977, 6.4 and 6.11)."""
    r = h.sum() / v.sum()
    e = h - r * v
    total = 0.0
    for s in np.unique(g):
        es = e[g == s]
        total += len(es) / (len(es) - 1) * np.sum((es - es.mean()) ** 2)
    return np.sqrt(total) / v.sum()


def test_between_job_se_is_the_ratio_estimators_cluster_se():
    rng = np.random.default_rng(0)
    rows = []
    for delta in (0.0, 0.1, 0.2):
        for j in range(9):
            v = int(rng.integers(50, 100))
            g = j % 3 if delta < 0.2 else min(j, 1)  # delta 0.2: collection 0 has a single job
            rows.append(dict(param_delta=delta, param_collection=g, test="t", tails="two-sided", alpha=0.05,
                             hits=int(rng.integers(0, v // (1 + g))), valid=v, wrong=0, trials=v))
    df = pd.DataFrame(rows)
    idx = [(d, "t", "two-sided", 0.05) for d in (0.0, 0.1, 0.2)]
    se = studies._between_job_se(df, idx, "type1")
    for i, delta in enumerate((0.0, 0.1, 0.2)):
        cell = df[df.param_delta == delta]
        h, v, g = (cell[c].to_numpy(float) for c in ("hits", "valid", "param_collection"))
        want = _cluster_se(h, v, g if delta < 0.2 else np.zeros_like(g))  # a lone job: one stratum
        assert se[i] == pytest.approx(want, rel=1e-10)
    assert se[2] > 0 and np.isfinite(se).all()
    one = studies._between_job_se(df.iloc[:1], idx[:1], "type1")
    assert np.isnan(one).all()  # one job: no between-job variance


def test_paper_counts_and_the_estimate():
    assert paper_counts(True, None, None, None) == (PAPER_TRIALS["type1"], PAPER_TRIALS["h1"], PAPER_REPLICATES)
    assert paper_counts(True, 5, None, 7) == (5, PAPER_TRIALS["h1"], 7)
    assert paper_counts(False, None, None, None) == (10000, 10000, 1000)
    with pytest.raises(InputError, match="`paper_size`"):
        paper_counts("yes", None, None, None)
    est = estimate_grid(("type1", "power", "type3"), 5, (10,), 10, 1000, 100, 200, shared=100, workers=2)
    assert est["trials"] == 5 * (1000 + 100 * 10)
    assert est["battery_calls"] == 4 * est["trials"]  # the study's pairs and three risk nulls
    assert est["wall_seconds"] == pytest.approx(est["cpu_seconds"] / 2) and est["cpu_seconds"] > 0
    paper = estimate_grid(("type1",), 5, (10,), 10, 1000, 100, 200, shared=100, workers=2, tests=PAPER_TESTS)
    assert paper["battery_calls"] == paper["trials"] == 5 * 1000 and paper["groups"] == 1  # no risk nulls run


def test_the_paper_battery_is_the_study_pairs_five_tests():
    assert PAPER_TESTS == ("t", "wilcoxon", "sign", "bootstrap", "permutation")
    assert trial_tests(tests=PAPER_TESTS) == {"main": list(PAPER_TESTS)}
    assert trial_tests(tests=("bootstrap_risk@5", "t")) == {"main": ["t"], "urisk@5": ["bootstrap_risk@5"]}
    assert set(trial_tests()) == {"main", "urisk@1", "urisk@5", "smooth"}
    assert trial_tests(risk_nulls=False) == {"main": trial_tests()["main"]}
    cost = trial_cost(10, 300, shared=100, tests=PAPER_TESTS)
    assert set(cost) == {"main"} and cost["main"] > 0


def test_grid_runs_the_tests_asked_with_the_whole_battery_numbers(web12, tmp_path, capsys):
    """``tests=PAPER_TESTS``: the tables hold the paper's five tests, with the rates the whole
    battery gives them under the same seed (shared resamples), and the printed estimate says so."""
    file, _ = web12
    kw = dict(collections=[str(file)], topics=(10,), trials=200, replicates=100, rng=4, cache=web12[1],
              progress=False, chunk=100, shared_resamples=100, workers=1)
    # the study's pairs only (no risk null calibrated: the classic tests' numbers are the same with them)
    whole = run_grid(("type1",), tmp_path / "whole", risk_nulls=False, **kw)["type1"][0]
    capsys.readouterr()
    paper = run_grid(("type1",), tmp_path / "paper", tests=PAPER_TESTS, **kw)["type1"][0]
    err = capsys.readouterr().err
    assert "grid: 200 trials (200 battery calls; the paper's battery)" in err
    assert paper.tests == PAPER_TESTS
    for k, t in enumerate(paper.tests):
        np.testing.assert_array_equal(paper.rate[:, k], whole.rate[:, whole.tests.index(t)], err_msg=t)
    assert set(pd.read_parquet(tmp_path / "paper" / "type_1.parquet").test) == set(PAPER_TESTS)
    with pytest.raises(InputError, match="`tests`: 'foo'"):
        run_grid(("type1",), tmp_path / "bad", tests=["t", "foo"], **kw)


@pytest.mark.slow
def test_shared_rates_agree_with_independent_draws_within_monte_carlo_error(web12):
    """Type I rates of the resampling tests with shared resamples and with independent draws,
    on the same trials: they differ by Monte-Carlo error only (|diff| <= 4 SE of the difference,
    the SEs taken as independent: conservative, the two share their pairs)."""
    kw = dict(topics=25, trials=6000, replicates=1000, significance=[0.01, 0.05, 0.1], chunk=500)
    ind = _type1(web12, **kw)
    sh = _type1(web12, shared_resamples=500, **kw)
    for t in RESAMPLED:
        k = ind.tests.index(t)
        diff = np.abs(ind.rate[0, k] - sh.rate[0, k])
        se = np.sqrt(ind.se[0, k] ** 2 + sh.se[0, k] ** 2)
        assert (diff <= 4 * se).all(), (t, ind.rate[0, k], sh.rate[0, k], se)


def _grid_cmd(web12, out):
    file, cache = web12
    return [sys.executable, "-m", "fastrisk", "simulate", "grid", str(file), "--studies", "type1,power",
            "--topic-sizes", "10,20", "--delta", "0.05", "--trials", "400", "--replicates", "200", "--seed", "5",
            "--cache", str(cache), "--tables", str(out), "--shared-resamples", "100", "--no-risk-nulls", "--quiet"]


@pytest.mark.slow
def test_a_killed_grid_resumes_to_the_tables_of_an_uninterrupted_run(web12, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    full = tmp_path / "full"
    done = subprocess.run(_grid_cmd(web12, full), env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "grid: 1,600 trials" in done.stderr and "checkpoints under" in done.stderr
    cut = tmp_path / "cut"
    proc = subprocess.Popen(_grid_cmd(web12, cut), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    ck = cut / "checkpoints"
    while time.monotonic() < deadline and proc.poll() is None:
        if ck.exists() and (any(ck.glob("*.parts/*")) or any(ck.glob("*.parquet"))):  # a job checkpointed
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL  # killed mid-run, not finished
    assert not (cut / "type_1.parquet").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed = subprocess.run(_grid_cmd(web12, cut) + ["--resume"], env=env, capture_output=True, text=True,
                                 timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    for csv in sorted(full.rglob("*.csv")):
        pd.testing.assert_frame_equal(pd.read_csv(csv), pd.read_csv(cut / csv.relative_to(full)))


def test_cli_shared_resamples_and_paper_size_options(web12, tmp_path, capsys):
    file, cache = web12
    out = tmp_path / "t1.csv"
    args = ["simulate", "type1", str(file), "--topics", "12", "--trials", "600", "--replicates", "300", "--seed",
            "3", "--cache", str(cache), "--no-risk-nulls", "--quiet", "--format", "csv", "--out", str(out)]
    assert main(args + ["--shared-resamples", "300"]) == 2  # 1,000 trials a job: not whole blocks of 300
    assert "multiple of 300" in capsys.readouterr().err
    assert main(args + ["--shared-resamples"]) in (0, None)  # blocks of 1,000 trials: one job
    got = pd.read_csv(out)
    want = _type1(web12, shared_resamples=True, significance=studies.ALPHAS).to_pandas()
    boot = (got.test == "bootstrap") & (got.tails == "two-sided")
    np.testing.assert_allclose(np.sort(got.rate[boot]), np.sort(want.rate[(want.test == "bootstrap")
                                                                            & (want.tails == "two-sided")]))
    assert main(args + ["--paper-size"]) == 2
    assert "--paper-size is an option of simulate grid" in capsys.readouterr().err
    assert main(args + ["--paper-tests"]) == 2
    assert "--paper-tests" in capsys.readouterr().err


def test_cli_grid_paper_tests(web12, tmp_path, capsys, monkeypatch):
    """--paper-tests is --tests t,wilcoxon,sign,bootstrap,permutation; not both."""
    got = {}
    monkeypatch.setattr("fastrisk.simulate.grid.run_grid", lambda *a, **kw: got.update(kw))
    file, cache = web12
    args = ["simulate", "grid", str(file), "--trials", "100", "--replicates", "50", "--cache", str(cache),
            "--tables", str(tmp_path), "--quiet"]
    assert main(args + ["--paper-tests"]) in (0, None)
    assert got["selection"].tests == PAPER_TESTS
    assert main(args + ["--tests", "t, bootstrap"]) in (0, None)
    assert got["selection"].tests == ["t", "bootstrap"]
    assert main(args) in (0, None)
    assert got["selection"].tests is None
    assert main(args + ["--paper-tests", "--tests", "t"]) == 2
    assert "--paper-tests or --tests, not both" in capsys.readouterr().err
