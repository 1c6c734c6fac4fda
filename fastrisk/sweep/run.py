"""The sweep: batching, retries, checkpointing and progress of a grid's jobs (see `fastrisk.sweep`)."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk._runtime.atomic import Locked, file_lock
from fastrisk._runtime.progress import Progress
from fastrisk._runtime.rng import resolve_seed
from fastrisk._runtime.validation import non_negative_int, non_negative_number, positive_int
from fastrisk.data.results import Result, param
from fastrisk.errors import InputError
from fastrisk.sweep.backends import _backend, _run_batch
from fastrisk.sweep.checkpoint import _META_KEY, _Checkpoint, _reason
from fastrisk.sweep.grid import Grid, Job, load_grid
from fastrisk.sweep.kinds import KINDS
from fastrisk.sweep.table import _concat, _param_types


@dataclass(frozen=True, repr=False)
class SweepResult(Result):
    """The gathered table (one block of rows per job, in job order) and what happened.

    ``n_computed`` jobs ran now, ``n_reused`` came from the checkpoint, ``n_failed`` raised
    (``status == "error"``), ``n_missing`` were lost with their workers after every retry
    (rerun with resume); ``n_retried`` counts the jobs of resubmitted batches.
    """

    table: pa.Table = param(doc="The gathered table: one block of rows per job, in job order.")
    seed: int
    n_jobs: int = param(doc="Number of jobs of the grid.")
    n_computed: int = param(doc="Jobs that ran now.")
    n_reused: int = param(doc="Jobs read from the checkpoint.")
    n_failed: int = param(doc="Jobs that raised (``status == \"error\"``).")
    n_missing: int = param(doc="Jobs lost with their workers after every retry (rerun with resume).")
    path: str | None = param(doc="The checkpoint directory (None without one).")
    n_retried: int = param(0, doc="Jobs of resubmitted batches.")

    @property
    def complete(self) -> bool:
        return self.n_missing == 0

    def to_arrow(self, dims=None) -> pa.Table:
        """The gathered table (one block of rows per job)."""
        return self.table

    def errors(self) -> pa.Table:
        """The failed jobs: job, experiment, kind, data, params (JSON) and error."""
        if self.table.num_rows == 0:
            return self.table
        t = self.table.filter(pc.equal(self.table.column("status"), "error"))
        return t.select(["job", "experiment", "kind", "data", "params", "error"])


def _sweep_iv(executor, batch_seconds, max_batch, checkpoint_seconds, out, resume, retries, worker_timeout=None):
    non_negative_number(batch_seconds, "batch_seconds", "seconds")
    non_negative_number(checkpoint_seconds, "checkpoint_seconds", "seconds")
    positive_int(max_batch, "max_batch")
    non_negative_int(retries, "retries")
    if resume and out is None:
        raise InputError("`resume` needs `out`, the Parquet file the sweep checkpoints to")
    return _backend(executor, worker_timeout)


def _reuse(checkpoint: _Checkpoint, jobs: list[Job], retry_errors: bool) -> tuple[list[pa.Table], set]:
    """Rows of the checkpoint to keep, and the ids of the jobs they cover (validated)."""
    by_id = {j.job: j for j in jobs}
    kept, done = [], set()
    for t in checkpoint.existing():
        if t.num_rows == 0:
            continue
        if not {"job", "params", "status", "kind", "data"} <= set(t.column_names):
            raise InputError(f"the checkpoint of {checkpoint.out} is not a fastrisk sweep table")
        head = t.select(["job", "kind", "data", "params", "status"]).to_pylist()
        for row in {r["job"]: r for r in head}.values():
            j = by_id.get(row["job"])
            if j is None or (row["kind"], row["data"], row["params"]) != (j.kind, j.data, j.params_json):
                raise InputError(f"the checkpoint of {checkpoint.out} was written by a different grid: its job "
                                 f"{row['job']} is {row['kind']} on {row['data']} with {row['params']}; remove it "
                                 "or run without resume")
        ok = pc.equal(t.column("status"), "ok") if retry_errors else pc.is_valid(t.column("job"))
        ids = set(pc.unique(t.filter(ok).column("job")).to_pylist()) - done
        if not ids:
            continue
        kept.append(t.filter(pc.is_in(t.column("job"), pa.array(sorted(ids), pa.int64()))))
        done |= ids
    return kept, done


def _root_seed(grid: Grid, checkpoint: _Checkpoint, resume: bool) -> int:
    meta = checkpoint.read_meta() if resume else None
    if meta is not None and grid.seed is not None and meta.get("seed") != grid.seed:
        raise InputError(f"the checkpoint of {checkpoint.out} was written with root seed {meta.get('seed')}, "
                         f"the grid says {grid.seed}")
    if grid.seed is not None:
        return grid.seed
    if meta is not None:
        return int(meta["seed"])

    return resolve_seed(None).recorded


class _Sizer:
    """Batch sizes that give about ``target`` seconds of work, from measured job costs."""

    def __init__(self, target: float, max_batch: int):
        self.target, self.max_batch = target, max_batch
        self.costs: dict = {}

    def size(self, group) -> int:
        c = self.costs.get(group) or self.costs.get(group[0])
        if not c:
            return 1
        per_job = float(np.median(c[-64:]))
        return int(min(self.max_batch, max(1, self.target // per_job if per_job > 0 else self.max_batch)))

    def record(self, group, seconds: list) -> None:
        for key in (group, group[0]):
            self.costs.setdefault(key, []).extend(seconds)


def sweep(grid, *, executor=None, out=None, resume: bool = False, retry_errors: bool = False,
          progress: bool | None = None, batch_seconds: float = 0.2, max_batch: int = 1000,
          checkpoint_seconds: float = 2.0, retries: int = 2, worker_timeout: float | None = None,
          progress_unit: tuple | None = None) -> SweepResult:
    """Run every job of ``grid`` and gather the results into one Arrow table.

    A job that raises is recorded with ``status="error"``; the sweep goes on. A batch lost
    with its worker (the worker died, its data was lost) is resubmitted up to ``retries``
    times, then recorded as missing (``n_missing``; a resume computes it). A checkpoint part
    that fails its checksum is reported (`CheckpointWarning`) and its jobs are recomputed.

    The table has the columns `JOB_COLUMNS` (``seed``: the job's seed, spawned from the grid's
    root seed and the job's position), ``param_<name>`` per parameter, then the procedure's
    own columns (prefixed ``result_`` where a name clashes).

    Parameters
    ----------
    grid : Grid, str, path-like or mapping
        A `Grid`, a TOML file (see ``bench_data/sweeps/``) or the equivalent mapping.
    executor : optional
        None (in-process, numba's parallel kernels), any ``concurrent.futures.Executor`` (see
        `process_pool`), or a ``dask.distributed`` ``Client`` / ``client.get_executor()``.
    out : str or path-like, optional
        A Parquet file: finished batches are checkpointed next to it (``OUT.parts/``) and the
        full table is written there at the end. One sweep at a time writes it: another sweep
        into the same ``out`` (another process) is refused with `InputError` while this one
        runs (an advisory lock on ``.OUT.lock`` beside it, released when the sweep ends or its
        process dies).
    resume : bool
        Reuse the checkpoint and compute only the jobs missing from it.
    retry_errors : bool
        With ``resume``, also recompute the jobs that failed.
    progress : bool, optional
        A progress bar on standard error (default: on a terminal).
    batch_seconds : float
        Target run time of one batch of jobs sent to a worker.
    max_batch : int
        Most jobs in one batch.
    checkpoint_seconds : float
        Least time between two checkpoints.
    retries : int
        Resubmissions of a batch lost with its worker.
    worker_timeout : float, optional
        On a Dask cluster without any worker for this long (default 60 s, or
        $FASTRISK_WORKER_TIMEOUT) the sweep stops with a `WorkerTimeoutError`, its finished batches
        checkpointed for a resume.
    progress_unit : tuple, optional
        ``(unit, weight)``: count the progress bar in ``unit`` rather than jobs,
        ``weight(job)`` being a job's count of them (e.g. the trials of a simulation job).

    Returns
    -------
    SweepResult
        The table and the counts of computed, reused, failed and missing jobs.
    """
    grid = load_grid(grid)
    out = None if out is None else Path(out)
    backend = _sweep_iv(executor, batch_seconds, max_batch, checkpoint_seconds, out, resume, retries, worker_timeout)
    with contextlib.ExitStack() as stack:
        if out is not None:  # one sweep at a time into one OUT: another's cleanup would remove our parts
            out.parent.mkdir(parents=True, exist_ok=True)  # as the checkpoint's first flush did
            try:
                stack.enter_context(file_lock(out, wait=False))
            except Locked:
                raise InputError(f"another sweep is writing {out} (and its checkpoint {out}.parts) now: wait for "
                                 "it to finish, or give another out (--out)") from None
        return _sweep(grid, backend, out, resume, retry_errors, progress, batch_seconds, max_batch,
                      checkpoint_seconds, retries, progress_unit)


def _sweep(grid, backend, out, resume, retry_errors, progress, batch_seconds, max_batch, checkpoint_seconds,
           retries, progress_unit) -> SweepResult:
    """`sweep`, its checks done and its output locked."""
    ck = _Checkpoint(out, {}, float(checkpoint_seconds))
    if not resume and ck.dir is not None and ck.dir.exists():
        raise InputError(f"{ck.dir} holds the checkpoint of an unfinished sweep: resume it "
                         f"(resume=True, --resume) or delete it")
    root = _root_seed(grid, ck, resume)
    jobs = grid.jobs(root)
    types = _param_types(jobs)
    ck.meta = {_META_KEY: json.dumps({"seed": root, "n_jobs": len(jobs)}).encode()}
    kept, done = _reuse(ck, jobs, retry_errors) if resume else ([], set())

    todo = [j for j in jobs if j.job not in done]
    groups: dict = {}
    for j in todo:
        groups.setdefault((j.e, j.data), []).append(j)
    queue = list(groups.items())  # grid order
    sizer = _Sizer(float(batch_seconds), int(max_batch))
    unit, weight = progress_unit if progress_unit is not None else ("job", lambda job: 1)
    bar = Progress(sum(weight(j) for j in jobs), progress, "sweep", unit=unit,
                   initial=sum(weight(j) for j in jobs if j.job in done))
    new_tables: list[pa.Table] = []
    pending: dict = {}
    lost = failed = computed = resubmitted = 0
    handles: dict = {}
    limit = 2 * backend.workers
    batch_no = itertools.count()
    gi = 0

    def fill():
        nonlocal gi
        while len(pending) < limit and gi < len(queue):
            group, items = queue[gi]
            n = sizer.size(group)
            batch, queue[gi] = items[:n], (group, items[n:])
            if not queue[gi][1]:
                gi += 1
            if not submit(group, batch, 0):
                return

    def submit(group, batch, attempt) -> bool:
        kind = KINDS[grid.experiments[group[0]].kind]
        if group not in handles or (attempt and not backend.alive(handles[group])):
            handles[group] = backend.put(group[1], grid.source(group[1]), kind.data, again=group in handles)
        key = next(batch_no)
        try:
            f = backend.submit(_run_batch, kind, handles[group], batch, types, backend.threads, key=str(key))
        except cf.BrokenExecutor as exc:
            broken(len(batch), exc)
            return False
        pending[f] = (group, batch, attempt)
        return True

    def broken(n, exc):
        nonlocal gi, lost
        lost += n + sum(len(items) for _, items in queue[gi:])
        gi = len(queue)
        warnings.warn(f"the executor broke ({exc}); the remaining jobs are missing: resume the sweep",
                      RuntimeWarning, stacklevel=3)

    try:
        fill()
        while pending:
            for f in backend.wait(list(pending)):
                group, batch, attempt = pending.pop(f)
                try:
                    table, seconds, n_failed = f.result()
                except (Exception, cf.CancelledError) as exc:  # noqa: BLE001 - a lost worker or its data
                    # a job's own exception is caught in the worker: this is the infrastructure
                    if attempt < retries and not isinstance(exc, cf.BrokenExecutor):
                        resubmitted += len(batch)
                        submit(group, batch, attempt + 1)
                        continue
                    lost += len(batch)
                    warnings.warn(f"a batch of {len(batch)} job(s) was lost ({_reason(exc)}) after "
                                  f"{attempt + 1} attempt(s); they are missing from the results: resume the "
                                  "sweep to compute them", RuntimeWarning, stacklevel=2)
                    continue
                sizer.record(group, seconds)
                failed += n_failed
                computed += len(batch)
                new_tables.append(table)
                ck.add(table)
                bar.update(sum(weight(j) for j in batch))
            fill()
    except BaseException:
        backend.cancel(list(pending))
        ck.flush()
        raise
    finally:
        bar.close()
    ck.flush()
    table = _sort(_concat(kept + new_tables))
    if lost == 0:
        ck.finish(table)
    n_failed = failed + (_count_errors(kept) if kept else 0)
    return SweepResult(table, root, len(jobs), computed, len(done), n_failed, lost, None if out is None else str(out),
                       resubmitted)


def _count_errors(tables: list[pa.Table]) -> int:
    ids = set()
    for t in tables:
        ids |= set(pc.unique(t.filter(pc.equal(t.column("status"), "error")).column("job")).to_pylist())
    return len(ids)


def _sort(table: pa.Table) -> pa.Table:
    """Job order; rows of one job keep their order (Arrow's sort is stable)."""
    if table.num_rows == 0:
        return table

    order = pc.sort_indices(table, sort_keys=[("job", "ascending")])
    return table.take(order).combine_chunks()
