"""Fault suite, sweeps: a real Dask worker killed mid-sweep, corrupted checkpoint parts."""

from __future__ import annotations

import os
import signal
import sys
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fastrisk.sweep import (
    CheckpointWarning,
    Experiment,
    Grid,
    load_grid,
    local_client,
    register_kind,
    sweep,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_sweep import identical


def _kill_once_risk(matrix, *, marker, kill_baseline, baseline, **params):
    """The ``risk`` job, except that the first job on ``kill_baseline`` SIGKILLs its own worker
    process (once: the marker file records that it happened)."""
    from fastrisk.sweep.kinds import _risk_job

    if baseline == kill_baseline:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return _risk_job(matrix, baseline=baseline, **params)


def _killing_grid(marker) -> Grid:
    return Grid([Experiment("kill_once_risk", ["trec:web2012_err20", "trec:web2013_err20"],
                            {"alpha": [0, 1, 5], "marker": str(marker), "kill_baseline": "run3"},
                            {"baseline": ["mean", "max", "run1", "run2", "run3", "run4"]})], rng=4)


@pytest.fixture(scope="module")
def sweep_kinds():
    """This module's job kinds, pickled by value for Dask workers."""
    cloudpickle = pytest.importorskip("cloudpickle")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    register_kind("kill_once_risk", _kill_once_risk, replace=True)
    register_kind("compiling_risk", _compiling_risk, replace=True)
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.slow
def test_a_sweep_survives_a_killed_dask_worker(sweep_kinds, tmp_path):
    pytest.importorskip("distributed")
    marker = tmp_path / "killed"
    marker.touch()
    reference = sweep(_killing_grid(marker), progress=False)  # the marker exists: nobody is killed
    assert reference.complete and reference.n_failed == 0
    marker.unlink()
    with local_client(2, silence_logs=50) as client:
        before = set(client.run(os.getpid).values())
        result = sweep(_killing_grid(marker), executor=client, out=tmp_path / "r.parquet", progress=False,
                       batch_seconds=0, max_batch=1)
        after = set(client.run(os.getpid).values())
    assert marker.exists() and before - after, "a worker process was really killed"
    assert result.complete and result.n_failed == 0 and result.n_computed == 12
    assert identical(result.table, reference.table)
    assert identical(pq.read_table(tmp_path / "r.parquet"), reference.table)


# ---------------------------------------------------------------------- corrupted checkpoints
SMALL = {"sweep": {"seed": 5},
         "experiment": [{"kind": "risk", "data": ["trec:web2012_err20", "trec:web2013_err20"],
                         "params": {"alpha": [0, 5]}, "grid": {"baseline": ["mean", "max", "run1"]}}]}


class _Counting:
    """An in-process executor that counts the jobs it runs and can lose chosen submissions."""

    def __init__(self, lose=()):
        import concurrent.futures as cf

        self.cf, self.n, self.jobs, self.lose = cf, 0, 0, set(lose)

    def submit(self, fn, *args):
        self.n += 1
        f = self.cf.Future()
        if self.n in self.lose:
            f.set_exception(RuntimeError("worker killed"))
        else:
            f.set_result(fn(*args))
            self.jobs += len(args[2])
        return f


@pytest.fixture(scope="module")
def small_reference():
    return sweep(SMALL, progress=False).table


def _checkpointed(tmp_path):
    """An unfinished sweep: one part per job, job 5 lost; returns (out, parts)."""
    import concurrent.futures as cf

    class Lossy(_Counting, cf.Executor):
        pass

    out = tmp_path / "r.parquet"
    with pytest.warns(RuntimeWarning, match="was lost"):
        first = sweep(SMALL, executor=Lossy(lose={6}), out=out, progress=False, max_batch=1, checkpoint_seconds=0,
                      retries=0)
    assert first.n_missing == 1
    parts = sorted((tmp_path / "r.parquet.parts").glob("part-*.parquet"))
    assert len(parts) == 5 and all(p.with_name(p.name + ".sha256").exists() for p in parts)
    return out, parts


def _resume(out, small_reference, victim):
    import concurrent.futures as cf

    class Counter(_Counting, cf.Executor):
        pass

    counter = Counter()
    with pytest.warns(CheckpointWarning, match=f"checkpoint part {victim} is corrupt") as rec:
        result = sweep(SMALL, executor=counter, out=out, resume=True, progress=False)
    assert len([w for w in rec if issubclass(w.category, CheckpointWarning)]) == 1
    assert counter.jobs == 2 and (result.n_reused, result.n_computed) == (4, 2)  # the lost job and the corrupt one
    assert result.complete and identical(result.table, small_reference)
    assert identical(pq.read_table(out), small_reference)
    assert not victim.exists()


FLIPS = [0, 4, 0.2, 0.35, 0.5, 0.65, 0.8, -40, -12, -8, -4]


@pytest.mark.parametrize("where", FLIPS)
def test_flipped_bytes_in_a_part_are_detected_and_recomputed(tmp_path, small_reference, where):
    out, parts = _checkpointed(tmp_path)
    victim = parts[2]
    data = bytearray(victim.read_bytes())
    at = int(where * len(data)) if isinstance(where, float) else where % len(data)
    at = min(at, len(data) - 8)
    for i in range(at, at + 8):
        data[i] ^= 0x5A
    victim.write_bytes(bytes(data))
    _resume(out, small_reference, victim)


@pytest.mark.parametrize("damage", ["empty", "half", "minus-one", "garbage-tail", "no-sidecar", "bad-sidecar"])
def test_truncated_or_unvouched_parts_are_detected_and_recomputed(tmp_path, small_reference, damage):
    out, parts = _checkpointed(tmp_path)
    victim = parts[0]
    data = victim.read_bytes()
    sidecar = victim.with_name(victim.name + ".sha256")
    if damage == "empty":
        victim.write_bytes(b"")
    elif damage == "half":
        victim.write_bytes(data[: len(data) // 2])
    elif damage == "minus-one":
        victim.write_bytes(data[:-1])
    elif damage == "garbage-tail":
        victim.write_bytes(data + os.urandom(64))
    elif damage == "no-sidecar":
        sidecar.unlink()
    else:
        sidecar.write_bytes(b"\xff\xfe not a hash")
    _resume(out, small_reference, victim)
    assert victim.with_name(victim.name + ".corrupt").exists() or not (tmp_path / "r.parquet.parts").exists()


def test_a_corrupt_finished_result_is_not_reused(tmp_path, small_reference):
    out = tmp_path / "r.parquet"
    sweep(SMALL, out=out, progress=False)
    data = bytearray(out.read_bytes())
    for i in range(len(data) // 3, len(data) // 3 + 8):  # inside the first column chunks' pages
        data[i] ^= 0xFF
    out.write_bytes(bytes(data))
    with pytest.warns(CheckpointWarning, match="cannot be read back intact"):
        result = sweep(SMALL, out=out, resume=True, progress=False)
    assert result.n_reused == 0 and identical(result.table, small_reference)
    assert identical(pq.read_table(out), small_reference)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = sweep(SMALL, out=out, resume=True, progress=False)  # intact now: all reused, no warning
    assert again.n_reused == again.n_jobs


# ---------------------------------------------------------------------- broadcasts under dying workers
class _DyingScheduler:
    """A stand-in ``distributed.Client`` whose broadcasts fail as a real one does while a worker
    dies under them: first a closed comm, then the scheduler's ``replicate`` looking up the
    worker it has just removed (``KeyError: 'tcp://…'``), then success."""

    def __init__(self, failures):
        self.failures, self.calls = list(failures), 0

    def scheduler_info(self):
        return {"workers": {"tcp://127.0.0.1:1": {"nthreads": 1}}}

    def scatter(self, obj, **kwargs):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return ("scattered", obj)


def test_a_broadcast_is_retried_while_a_worker_dies_under_it(monkeypatch):
    from fastrisk.sweep import backends

    monkeypatch.setattr(backends.time, "sleep", lambda s: None)
    client = _DyingScheduler([ConnectionResetError("closed"), KeyError("tcp://127.0.0.1:35071")])
    dask = backends._Dask(client, worker_timeout=1)
    assert dask.put("m", [0.5], "data") == ("scattered", [0.5])
    assert client.calls == 3
    client = _DyingScheduler([KeyError("tcp://127.0.0.1:2")] * backends._SCATTER_TRIES)
    with pytest.raises(KeyError):  # a broadcast that never succeeds is not hidden
        backends._Dask(client, worker_timeout=1).put("m", [0.5], "data")
    client = _DyingScheduler([ValueError("not a worker loss")])
    with pytest.raises(ValueError):  # nor is any other error
        backends._Dask(client, worker_timeout=1).put("m", [0.5], "data")
    assert client.calls == 1


# ---------------------------------------------------------------------- numba's threads on workers
def _compiling_risk(matrix, **params):
    """The ``risk`` job after a fresh compile (numba re-reads $NUMBA_NUM_THREADS on every
    compile), as a first run on a cold cache does."""
    import numba  # the job runs on a worker

    from fastrisk.sweep.kinds import _risk_job

    assert numba.njit(cache=False)(lambda x: x + 1)(1) == 2
    return _risk_job(matrix, **params)


def _launch_then_change_the_environment(threads: str) -> tuple:
    """What a Dask nanny does when its worker imported numba before the nanny's ``env=``
    was set: numba's pool is launched at one size, then $NUMBA_NUM_THREADS says another."""
    import numba  # runs on a worker

    numba.set_num_threads(1)  # launches the pool at numba.config.NUMBA_NUM_THREADS threads
    launched = numba.config.NUMBA_NUM_THREADS
    os.environ["NUMBA_NUM_THREADS"] = threads if threads != str(launched) else str(launched + 1)
    return launched, os.environ["NUMBA_NUM_THREADS"]


@pytest.mark.slow
def test_a_dask_sweep_finishes_whatever_the_workers_numba_environment(sweep_kinds):
    """Issue 29 item 3: on ``local:2`` on a cold cache, every ``zrisk`` job failed with "Cannot set
    NUMBA_NUM_THREADS to a different value once the threads have been launched". Here each
    worker of a real LocalCluster (2 processes) has launched numba's pool and then seen
    $NUMBA_NUM_THREADS change; every job compiles; the results are the in-process ones."""
    pytest.importorskip("distributed")
    grid = Grid([Experiment("compiling_risk", "trec:web2012_err20", {"alpha": [0, 5]},
                            {"baseline": ["mean", "max"]})], rng=2)
    reference = sweep(grid, progress=False)
    assert reference.n_failed == 0
    with local_client(2, silence_logs=50) as client:
        changed = client.run(_launch_then_change_the_environment, "1")
        assert len(changed) == 2 and all(launched != int(now) for launched, now in changed.values())
        result = sweep(grid, executor=client, progress=False, batch_seconds=0, max_batch=1)
    assert result.n_failed == 0, result.errors().column("error").to_pylist()
    assert identical(result.table, reference.table)


@pytest.mark.slow
def test_the_cli_sweep_on_a_local_cluster_finishes_on_a_cold_cache(tmp_path):
    """The reproduction of issue 29 item 3, as a new user ran it: the ``fastrisk`` console
    script (a spawned Dask worker imports it, and numba with it, before the nanny sets its
    environment), a cold numba cache, ``--scheduler local:2``; then ``--resume`` of a finished
    sweep computes nothing and the numbers equal an in-process run's."""
    pytest.importorskip("distributed")
    import subprocess

    root = Path(__file__).resolve().parent.parent
    (tmp_path / "z.toml").write_text('[sweep]\nseed = 1\n[[experiment]]\nname = "zrisk-all"\nkind = "zrisk"\n'
                                     'data = "trec:web2012_err20"\n[experiment.params]\nalpha = [0, 5]\n'
                                     '[experiment.grid]\nconvention = ["classic", "minus"]\n')
    script = tmp_path / "fastrisk-script"  # what pip's console script holds
    script.write_text("import sys\nfrom fastrisk.cli import main\nif __name__ == '__main__':\n    sys.exit(main())\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"),
           "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)}
    env.pop("NUMBA_NUM_THREADS", None)
    proc = subprocess.run([sys.executable, str(script), "sweep", "z.toml", "--scheduler", "local:2", "--out",
                           "z.parquet"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "2 jobs (root seed 1): 2 computed, 0 reused from the checkpoint, 0 failed" in proc.stderr
    reference = sweep(load_grid(tmp_path / "z.toml"), progress=False)
    assert identical(pq.read_table(tmp_path / "z.parquet"), reference.table)
