"""Sweeps: grid expansion and seeds, identical results in-process / process pool / Dask
LocalCluster whatever the batching, checkpoints and resume, failing jobs, the CLI."""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
from pathlib import Path

import numba
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from fastrisk.errors import InputError
from fastrisk.sweep import Experiment, Grid, local_client, sweep

ROOT = Path(__file__).resolve().parent.parent

GRID = {
    "sweep": {"seed": 11},
    "experiment": [
        {"name": "trisk", "kind": "risk", "data": ["trec:web2012_err20", "trec:web2013_err20"],
         "params": {"alpha": [0, 1, 5]}, "grid": {"baseline": ["mean", "max", "run1"]}},
        {"name": "pool", "kind": "pool_bias", "data": "trec2012-web:runs",
         "params": {"widths": [2, 4], "common_topics": [10], "topic_repeats": 20},
         "grid": {"repeats": [3, 5], "mode": ["assumed", "condensed"]}},
    ],
}
N_JOBS = 2 * 3 + 2 * 2


def identical(a, b) -> bool:
    """Same schema and bit-identical columns (NaN == NaN, unlike Table.equals)."""
    if not a.schema.remove_metadata().equals(b.schema.remove_metadata()) or a.num_rows != b.num_rows:
        return False
    for name in a.column_names:
        x, y = a.column(name).combine_chunks(), b.column(name).combine_chunks()
        if not x.is_null().equals(y.is_null()):
            return False
        if pa.types.is_floating(x.type):
            xv = x.fill_null(0.0).to_numpy(zero_copy_only=False)
            yv = y.fill_null(0.0).to_numpy(zero_copy_only=False)
            if not np.array_equal(xv.view(np.uint64), yv.view(np.uint64)):
                return False
        elif x.to_pylist() != y.to_pylist():
            return False
    return True


@pytest.fixture(scope="module")
def reference():
    """The in-process sweep every backend and batching must reproduce bit for bit."""
    result = sweep(GRID, progress=False)
    assert result.n_jobs == N_JOBS and result.n_failed == 0 and result.complete
    return result.table


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    with local_client(2, silence_logs=50) as c:
        yield c


# ---------------------------------------------------------------------- grid and seeds
def test_jobs_in_grid_order_with_spawned_seeds():
    jobs = Grid.from_dict(GRID).jobs()
    assert len(jobs) == N_JOBS == len(Grid.from_dict(GRID))
    assert [j.job for j in jobs] == list(range(N_JOBS))
    # data outermost, then the axes in order
    assert [(j.data, j.params["baseline"]) for j in jobs[:4]] == [
        ("trec:web2012_err20", "mean"), ("trec:web2012_err20", "max"), ("trec:web2012_err20", "run1"),
        ("trec:web2013_err20", "mean")]
    assert jobs[6].params == {"widths": [2, 4], "common_topics": [10], "topic_repeats": 20, "repeats": 3,
                              "mode": "assumed"}
    # seed of job j of experiment e = SeedSequence(root).spawn(E)[e].spawn(J)[j], as a 63-bit int
    for j in jobs:
        ss = np.random.SeedSequence(11).spawn(2)[j.e].spawn(j.position + 1)[j.position]
        assert j.seed == int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))
    assert len({j.seed for j in jobs}) == N_JOBS


def test_bundled_patterns_and_relative_paths(tmp_path):
    (tmp_path / "m.csv").write_text("topic,a,b\n1,0.1,0.2\n2,0.3,0.1\n3,0.2,0.2\n")
    (tmp_path / "g.toml").write_text('[sweep]\nseed = 1\n[[experiment]]\nkind = "risk"\n'
                                     'data = ["trec:adhoc*_ap", "m.csv"]\n[experiment.params]\nbaseline = "a"\n')
    grid = Grid.from_toml(tmp_path / "g.toml")
    assert [j.data for j in grid.jobs()][:4] == [f"trec:adhoc{k}_ap" for k in (5, 6, 7, 8)]
    assert grid.jobs()[-1].data == str((tmp_path / "m.csv").resolve())


@pytest.mark.parametrize("spec, message", [
    ({"experiment": [{"kind": "nope", "data": "trec:web2012_err20"}]}, "unknown job kind 'nope'"),
    ({"experiment": [{"kind": "risk"}]}, "missing `data`"),
    ({"experiment": [{"kind": "risk", "data": "trec:web2012_err20", "alpha": 1}]}, r"unknown key\(s\) alpha"),
    ({"experiment": [{"kind": "risk", "data": "trec:nosuch"}]}, "matches no bundled matrix"),
    ({"experiment": [{"kind": "risk", "data": "no/such/file.csv"}]}, "nor an existing file"),
    ({"experiment": [{"kind": "risk", "data": "trec2012-web:runs"}]}, "needs a matrix data source"),
    ({"experiment": [{"kind": "risk", "data": "trec:web2012_err20", "grid": {"alpha": 1}}]},
     "grid axis 'alpha' must be a non-empty list"),
    ({"experiment": [{"kind": "risk", "data": "trec:web2012_err20", "params": {"threads": 2}}]},
     "given twice or reserved"),
    ({"experiment": [{"kind": "risk", "data": "trec:web2012_err20", "params": {"a": 1},
                      "grid": {"a": [1]}}]}, "given twice or reserved"),
    ({"experiment": []}, "at least one experiment"),
    ({"sweep": {"seed": -1}, "experiment": [{"kind": "risk", "data": "trec:web2012_err20"}]},
     "`seed` must be a non-negative integer"),
    ({"sweep": {"sed": 1}, "experiment": []}, r"unknown key\(s\) sed in \[sweep\]"),
])
def test_bad_grids(spec, message):
    with pytest.raises(InputError, match=message):
        Grid.from_dict(spec)


def test_bad_arguments(tmp_path):
    with pytest.raises(InputError, match="`executor` must be None, a concurrent.futures.Executor"):
        sweep(GRID, executor=object())
    with pytest.raises(InputError, match="`resume` needs `out`"):
        sweep(GRID, resume=True)
    with pytest.raises(InputError, match="`max_batch` must be a positive integer"):
        sweep(GRID, max_batch=0)
    with pytest.raises(InputError, match="grid file 'nope.toml' does not exist"):
        sweep("nope.toml")


# ---------------------------------------------------------------------- results
def test_results_are_the_public_api_calls(reference):
    from fastrisk.core.urisk import risk
    from fastrisk.data.datasets import trec_matrix
    from fastrisk.measures.pooling import pooling_experiment
    from fastrisk.sweep.data import _load

    t = reference
    job1 = t.filter(pc.equal(t.column("job"), 1))
    direct = risk(trec_matrix("web2012_err20"), "max", alpha=[0, 1, 5]).to_arrow()
    assert identical(job1.select(direct.column_names), direct)
    assert set(job1.column("param_baseline").to_pylist()) == {"max"}
    runs, qrels = _load("trec2012-web:runs", "runs")
    for j in range(6, N_JOBS):
        rows = t.filter(pc.equal(t.column("job"), j))
        params = json.loads(rows.column("params")[0].as_py())
        seed = rows.column("seed")[0].as_py()
        direct = pooling_experiment(runs, qrels, rng=seed, **params).mae_long()
        assert identical(rows.select(direct.column_names), direct)


def test_batching_does_not_change_results(reference):
    assert identical(sweep(GRID, progress=False, batch_seconds=0, max_batch=1).table, reference)
    assert identical(sweep(GRID, progress=False, batch_seconds=100, max_batch=1000).table, reference)


def test_process_pool_gives_identical_results(reference):
    from fastrisk.sweep import process_pool

    with process_pool(2) as pool:
        result = sweep(GRID, executor=pool, progress=False, max_batch=2)
    assert identical(result.table, reference)


def _worker_numba_threads(_):
    import numba

    return os.environ.get("NUMBA_NUM_THREADS"), numba.config.NUMBA_NUM_THREADS


def test_process_pool_workers_run_numba_with_the_worker_environment():
    """numba's settings in a pool worker agree with the worker's environment: with a mismatch,
    the first compile after a cached parallel kernel had launched its threads failed ("Cannot
    set NUMBA_NUM_THREADS ..."). The worker environment sets no NUMBA_NUM_THREADS (batches
    run on one thread through numba.set_num_threads)."""
    from fastrisk.sweep import process_pool, worker_env

    assert "NUMBA_NUM_THREADS" not in worker_env()
    with process_pool(1) as pool:
        env, launched = pool.submit(_worker_numba_threads, 0).result()
    assert launched == (int(env) if env else numba.config.NUMBA_DEFAULT_NUM_THREADS)


def test_dask_local_cluster_gives_identical_results(client, reference):
    result = sweep(GRID, executor=client, progress=False)
    assert identical(result.table, reference)
    result = sweep(GRID, executor=client.get_executor(), progress=False, batch_seconds=0, max_batch=1)
    assert identical(result.table, reference)


def test_failing_job_is_recorded_with_its_parameters_and_the_sweep_goes_on(tmp_path):
    grid = Grid([Experiment("risk", "trec:web2012_err20", {"alpha": [0, 5]}, {"baseline": ["mean", "nope", "max"]})],
                rng=3)
    result = sweep(grid, out=tmp_path / "r.parquet", progress=False)
    assert result.n_failed == 1 and result.complete
    errors = result.errors().to_pylist()
    assert len(errors) == 1
    assert errors[0]["job"] == 1 and json.loads(errors[0]["params"]) == {"alpha": [0, 5], "baseline": "nope"}
    assert errors[0]["error"].startswith("InputError: unknown baseline 'nope'")
    t = pq.read_table(tmp_path / "r.parquet")
    assert t.filter(pc.equal(t.column("status"), "ok")).column("job").unique().to_pylist() == [0, 2]
    # a resume keeps the recorded error unless asked to retry it
    again = sweep(grid, out=tmp_path / "r.parquet", resume=True, progress=False)
    assert (again.n_computed, again.n_reused, again.n_failed) == (0, 3, 1)
    retry = sweep(grid, out=tmp_path / "r.parquet", resume=True, retry_errors=True, progress=False)
    assert (retry.n_computed, retry.n_reused, retry.n_failed) == (1, 2, 1)
    assert identical(retry.table, result.table)


# ---------------------------------------------------------------------- checkpoints and resume
class _Flaky(cf.Executor):
    """Runs batches at once; the ``lose``-th submissions come back failed (a killed worker),
    the ``interrupt``-th raises KeyboardInterrupt (Ctrl-C)."""

    def __init__(self, lose=(), interrupt=None):
        self.n, self.lose, self.interrupt, self.jobs = 0, set(lose), interrupt, 0

    def submit(self, fn, *args, **kwargs):
        self.n += 1
        if self.n == self.interrupt:
            raise KeyboardInterrupt
        f = cf.Future()
        if self.n in self.lose:
            f.set_exception(RuntimeError("worker killed"))
        else:
            f.set_result(fn(*args, **kwargs))
            self.jobs += len(args[2])
        return f


def test_lost_batches_stay_missing_and_resume_computes_only_them(tmp_path, reference):
    out = tmp_path / "res.parquet"
    with pytest.warns(RuntimeWarning, match="was lost"):
        first = sweep(GRID, executor=_Flaky(lose={3, 8}), out=out, progress=False, max_batch=1,
                      checkpoint_seconds=0, retries=0)
    assert (first.n_computed, first.n_missing) == (N_JOBS - 2, 2) and not first.complete
    assert not out.exists() and (tmp_path / "res.parquet.parts").is_dir()
    assert sorted(set(first.table.column("job").to_pylist())) == [j for j in range(N_JOBS) if j not in (2, 7)]
    counter = _Flaky()
    second = sweep(GRID, executor=counter, out=out, resume=True, progress=False)
    assert counter.jobs == 2 and (second.n_computed, second.n_reused) == (2, N_JOBS - 2)
    assert identical(second.complete and second.table, reference)
    assert out.exists() and not (tmp_path / "res.parquet.parts").exists()
    assert identical(pq.read_table(out), reference)


def test_lost_batches_are_resubmitted_a_bounded_number_of_times(tmp_path, reference):
    flaky = _Flaky(lose={3, 8})
    result = sweep(GRID, executor=flaky, out=tmp_path / "r.parquet", progress=False, max_batch=1)
    assert result.complete and result.n_retried == 2 and result.n_computed == N_JOBS
    assert identical(result.table, reference)
    # a batch that is lost at every attempt is given up after `retries` resubmissions
    always = _Flaky(lose=set(range(1, 1000)))
    with pytest.warns(RuntimeWarning, match=r"lost \(RuntimeError: worker killed\) after 3 attempt"):
        gone = sweep(GRID, executor=always, out=tmp_path / "g.parquet", progress=False, retries=2)
    assert gone.n_missing == N_JOBS and always.n == 3 * N_JOBS  # one-job batches (no cost measured), 3 attempts
    with pytest.raises(InputError, match="`retries` must be a non-negative integer"):
        sweep(GRID, retries=-1)


def test_interrupted_sweep_resumes_without_losing_or_repeating_work(tmp_path, reference):
    out = tmp_path / "res.parquet"
    with pytest.raises(KeyboardInterrupt):
        sweep(GRID, executor=_Flaky(interrupt=5), out=out, progress=False, max_batch=1, checkpoint_seconds=60)
    # the buffered batches were flushed on the way out
    parts = pa.concat_tables(pq.read_table(p) for p in sorted((tmp_path / "res.parquet.parts").glob("*.parquet")))
    assert sorted(set(parts.column("job").to_pylist())) == [0, 1, 2, 3]
    with pytest.raises(InputError, match="holds the checkpoint of an unfinished sweep"):
        sweep(GRID, out=out, progress=False)
    counter = _Flaky()
    result = sweep(GRID, executor=counter, out=out, resume=True, progress=False)
    assert counter.jobs == N_JOBS - 4 and result.n_reused == 4
    assert identical(result.table, reference)
    assert result.table.column("job").to_pylist() == sorted(result.table.column("job").to_pylist())


def test_resume_refuses_a_different_grid(tmp_path):
    out = tmp_path / "res.parquet"
    with pytest.warns(RuntimeWarning, match="was lost"):
        sweep(GRID, executor=_Flaky(lose={2}), out=out, progress=False, max_batch=1, checkpoint_seconds=0,
              retries=0)
    other = json.loads(json.dumps(GRID))
    other["experiment"][0]["params"]["alpha"] = [0, 2]
    with pytest.raises(InputError, match="written by a different grid"):
        sweep(other, out=out, resume=True, progress=False)
    other = json.loads(json.dumps(GRID))
    other["sweep"]["seed"] = 12
    with pytest.raises(InputError, match="root seed 11"):
        sweep(other, out=out, resume=True, progress=False)


def test_unseeded_grid_draws_a_root_seed_and_resume_reuses_it(tmp_path):
    spec = json.loads(json.dumps(GRID))
    del spec["sweep"]
    out = tmp_path / "res.parquet"
    with pytest.warns(RuntimeWarning):
        first = sweep(spec, executor=_Flaky(lose={9}), out=out, progress=False, max_batch=1, checkpoint_seconds=0,
                      retries=0)
    second = sweep(spec, out=out, resume=True, progress=False)
    assert second.seed == first.seed and second.n_computed == 1
    assert identical(second.table, sweep({**spec, "sweep": {"seed": first.seed}}, progress=False).table)


# ---------------------------------------------------------------------- CLI
def test_cli_sweep_writes_the_table_and_reports_failures(tmp_path, capsys):
    from fastrisk.cli import main

    grid = tmp_path / "g.toml"
    grid.write_text('[sweep]\nseed = 5\n\n[[experiment]]\nname = "t"\nkind = "risk"\n'
                    'data = "trec2012-web:err20"\n[experiment.params]\nbaseline = "trec2012-web:indriCASP"\n'
                    'alpha = [0, 1, 5, 10]\n[experiment.grid]\nconvention = ["classic", "minus"]\n')
    out = tmp_path / "r.parquet"
    assert main(["sweep", str(grid), "--out", str(out), "--quiet"]) == 0
    t = pq.read_table(out)
    row = t.filter(pc.and_(pc.equal(t.column("system"), "qutwb"),
                           pc.and_(pc.equal(t.column("alpha"), 10.0), pc.equal(t.column("job"), 0)))).to_pylist()
    assert len(row) == 1
    assert row[0]["urisk"] == pytest.approx(-1.0832, abs=5e-5)  # SPEC §2, Table 1-2
    assert row[0]["trisk"] == pytest.approx(-2.7295, abs=5e-5)
    assert main(["sweep", str(grid), "--out", str(out), "--quiet", "--resume"]) == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('[sweep]\nseed = 5\n[[experiment]]\nkind = "risk"\ndata = "trec:web2012_err20"\n'
                   '[experiment.grid]\nbaseline = ["mean", "nope"]\n')
    capsys.readouterr()
    assert main(["sweep", str(bad), "--out", str(tmp_path / "b.parquet"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "1 job(s) failed" in err and '"baseline": "nope"' in err and "unknown baseline 'nope'" in err
    assert "rerun with --resume --retry-errors" in err
    # issue 29: --resume with a failed job says how to compute it again
    assert main(["sweep", str(bad), "--out", str(tmp_path / "b.parquet"), "--quiet", "--resume"]) == 1
    err = capsys.readouterr().err
    assert "1 job(s) failed" in err and "rerun with --resume --retry-errors" in err
    assert main(["sweep", str(tmp_path / "missing.toml")]) == 2


PUBLISHED = [  # SPEC §2: run, alpha, URisk, SE_x = SE_J, TRisk, p (TREC 2012 Web, ERR@20, indriCASP)
    ("uogTrA44xi", 0, 0.1185, 0.0528, 2.2440, 0.029), ("uogTrA44xi", 1, 0.0556, 0.0739, 0.7528, 0.455),
    ("uogTrA44xi", 5, -0.1959, 0.1755, -1.1163, 0.270), ("uogTrA44xi", 10, -0.5104, 0.3091, -1.6512, 0.105),
    ("srchvrs12c09", 0, 0.1102, 0.0479, 2.3034, 0.026), ("srchvrs12c09", 10, -0.3133, 0.2619, -1.1961, 0.237),
    ("qutwb", 1, -0.1342, 0.0791, -1.6956, 0.096), ("qutwb", 10, -1.0832, 0.3969, -2.7295, 0.009),
]


def test_example_grid_reproduces_the_published_tables():
    from fastrisk.core.urisk import risk
    from fastrisk.core.zrisk import zrisk
    from fastrisk.data.datasets import trec_matrix

    result = sweep(ROOT / "bench_data" / "sweeps" / "published.toml", progress=False)
    assert result.n_failed == 0 and result.complete
    t = result.table
    web2012 = t.filter(pc.and_(pc.equal(t.column("experiment"), "trisk-web2012"),
                               pc.equal(t.column("data"), "trec2012-web:err20")))
    rows = {(r["system"], r["alpha"]): r for r in web2012.to_pylist()}
    for run, alpha, urisk, se, trisk, p in PUBLISHED:
        r = rows[(run, float(alpha))]
        assert (round(r["urisk"], 4), round(r["standard_error"], 4), round(r["se_jack"], 4)) == (urisk, se, se)
        assert (round(r["trisk"], 4), round(r["pvalue"], 3)) == (trisk, p)
    # every bundled web and ad hoc matrix, against each virtual baseline, in both conventions
    every = t.filter(pc.equal(t.column("experiment"), "trisk-all"))
    assert len(set(every.column("data").to_pylist())) == 20
    one = every.filter(pc.and_(pc.equal(every.column("data"), "trec:adhoc8_ap"),
                               pc.and_(pc.equal(every.column("param_baseline"), "median"),
                                       pc.equal(every.column("param_convention"), "minus"))))
    direct = risk(trec_matrix("adhoc8_ap"), "median", alpha=[0, 1, 5, 10], convention="minus").to_arrow()
    assert identical(one.select(direct.column_names), direct)
    # SPEC §3: ZRisk/GeoRisk of every matrix, as zrisk() gives them
    z = t.filter(pc.equal(t.column("experiment"), "zrisk-all"))
    assert len(set(z.column("data").to_pylist())) == 20
    one = z.filter(pc.and_(pc.equal(z.column("data"), "trec:web2011_ndcg20"),
                           pc.equal(z.column("param_convention"), "classic")))
    direct = zrisk(trec_matrix("web2011_ndcg20"), alpha=[0, 1, 5, 10]).to_arrow()
    assert identical(one.select(direct.column_names), direct)
    assert t.filter(pc.equal(t.column("experiment"), "all-baselines-web2012")).num_rows == 48 * 48 * 4


def test_cli_sweep_on_a_dask_scheduler_address(client, tmp_path, reference):
    from fastrisk.cli import main

    grid = tmp_path / "g.toml"
    lines = ["[sweep]", "seed = 11"]
    for x in GRID["experiment"]:
        lines += ["[[experiment]]", f"name = {json.dumps(x['name'])}", f"kind = {json.dumps(x['kind'])}",
                  f"data = {json.dumps(x['data'])}", "[experiment.params]"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in x["params"].items()]
        lines += ["[experiment.grid]"] + [f"{k} = {json.dumps(v)}" for k, v in x["grid"].items()]
    grid.write_text("\n".join(lines) + "\n")
    out = tmp_path / "r.parquet"
    address = client.scheduler_info()["address"]
    assert main(["sweep", str(grid), "--scheduler", address, "--out", str(out), "--quiet"]) == 0
    assert identical(pq.read_table(out), reference)


def test_bootstrap_sweep_is_seeded_per_job_and_identical_on_dask(client):
    from fastrisk.data.datasets import trec_matrix
    from fastrisk.inference.resampling import bootstrap

    grid = {"sweep": {"seed": 99}, "experiment": [
        {"kind": "bootstrap", "data": ["trec:web2012_err20", "trec:adhoc8_p10"],
         "params": {"replicates": 400, "method": "percentile"}, "grid": {"baseline": ["mean", "max"], "alpha": [0, 5]}},
        {"kind": "permutation", "data": "trec2012-web:err20",
         "params": {"replicates": 400, "baseline": "trec2012-web:indriCASP"}}]}
    local = sweep(grid, progress=False)
    assert local.n_failed == 0 and len(set(local.table.column("seed").to_pylist())) == 9
    assert identical(sweep(grid, executor=client, progress=False, max_batch=1).table, local.table)
    rows = local.table.filter(pc.equal(local.table.column("job"), 7))
    direct = bootstrap(trec_matrix("adhoc8_p10"), "max", alpha=5, replicates=400, method="percentile",
                       rng=rows.column("seed")[0].as_py(), keep_replicates=False)
    assert identical(rows.select(direct.to_arrow().column_names), direct.to_arrow())


def test_progress_counts_the_unit_the_caller_weighs_jobs_by(monkeypatch):
    import fastrisk.sweep.run as run

    seen = {}

    class Recorder:
        def __init__(self, total, progress, desc, *, unit="it", initial=0, **kw):
            seen.update(total=total, unit=unit, initial=initial, done=initial)

        def update(self, n):
            seen["done"] += n

        def close(self):
            pass

    monkeypatch.setattr(run, "Progress", Recorder)
    grid = Grid([Experiment("risk", "trec:web2012_err20", {}, {"alpha": [0, 1, 5]})], rng=3)
    sweep(grid, progress=True, progress_unit=("trial", lambda job: 10 * (job.position + 1)))
    assert seen == {"total": 60, "unit": "trial", "initial": 0, "done": 60}
    sweep(grid, progress=True)
    assert seen == {"total": 3, "unit": "job", "initial": 0, "done": 3}


def test_the_bundled_sweeps_cite_papers_not_a_file_the_repository_lacks():
    """Issue 29 item 7: published.toml cited "SPEC §2", a file a clone does not have."""
    for path in sorted((ROOT / "fastrisk" / "bench_data" / "sweeps").iterdir()):
        if path.suffix in (".toml", ".md"):
            assert "SPEC" not in path.read_text(encoding="utf-8"), path.name
    assert "SIGIR 2014" in (ROOT / "fastrisk" / "bench_data" / "sweeps" / "published.toml").read_text(encoding="utf-8")
