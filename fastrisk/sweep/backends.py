"""Where batches run: the worker side (thread limits, process pools, Dask clients) and the
backends that submit batches and wait for them."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import math
import multiprocessing
import os
import threading
import time
import uuid
import warnings
from pathlib import Path

from fastrisk._runtime.extras import require
from fastrisk._runtime.threads import blas_threads, limit_threads, settle_numba_threads
from fastrisk._runtime.validation import non_negative_number, positive_int
from fastrisk.errors import InputError, WorkerTimeoutError
from fastrisk.sweep.data import _load_cached, _materialise, _Source
from fastrisk.sweep.kinds import JobKind
from fastrisk.sweep.table import _assemble

_KERNEL_LOCK = threading.Lock()  # numba's workqueue layer must not be entered by two threads at once


def _run_jobs(kind: JobKind, data, jobs: list, threads: int | None) -> list:
    """One ``(table | None, error | None, warning | None, seconds)`` per job; a job's
    exception becomes its error message, never the batch's."""
    settle_numba_threads()  # a worker's environment may have changed since numba launched its threads
    try:
        data = _materialise(data)
    except Exception as exc:  # noqa: BLE001 - a data source that cannot be loaded fails its jobs
        msg = f"loading the data failed: {type(exc).__name__}: {exc}"
        return [(None, msg, None, 0.0) for _ in jobs]
    out = []
    # one BLAS thread everywhere, in-process too: OpenBLAS's results depend on its thread count,
    # and the linear bootstrap is a matrix product (numba's parallel kernels do not have that issue)
    with _KERNEL_LOCK, limit_threads(threads), blas_threads(1):
        for job in jobs:
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    table, error = kind(data, job.params, job.seed, threads), None
                except Exception as exc:  # noqa: BLE001
                    table, error = None, f"{type(exc).__name__}: {exc}"
            warning = "; ".join(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught)) or None
            out.append((table, error, warning, time.perf_counter() - t0))
    return out


def _run_batch(kind: JobKind, data, jobs: list, types: dict, threads: int | None):
    """Run ``jobs`` (of one kind, on one data source) where the batch lands and build their
    table there too, so the driver only gathers: ``(table, seconds of the ok jobs, n_failed)``."""
    results = _run_jobs(kind, data, jobs, threads)
    return (_assemble(jobs, results, types), [r[3] for r in results if r[1] is None],
            sum(r[1] is not None for r in results))


def worker_env() -> dict:
    """Environment for sweep workers: one BLAS/OpenMP thread per process.

    Pass it to a Dask cluster (``LocalCluster(env=worker_env())`` or the config
    ``distributed.nanny.pre-spawn-environ``) or export it before ``dask worker``. It holds no
    ``NUMBA_NUM_THREADS``: a Dask nanny sets ``env=`` after the worker may have launched numba's
    threads, and numba refuses to compile once that variable changes. Each batch runs on one
    numba thread through `numba.set_num_threads` instead, whatever the worker's settings
    (`fastrisk._runtime.threads.settle_numba_threads`).

    Returns
    -------
    dict
        Variable name -> value.
    """
    return {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", WORKER_ENV: "1"}


#: Set in sweep workers (`worker_env`): their standard error is closed at exit, where
#: third-party extensions print reports (nanobind's "leaked N instances", dozens of lines per
#: worker from pyvinecopulib) that say nothing about the sweep; FASTRISK_VERBOSE=1 keeps them.
WORKER_ENV = "FASTRISK_SWEEP_WORKER"
VERBOSE_ENV = "FASTRISK_VERBOSE"


def _quiet_at_exit() -> None:
    """In a sweep worker, point standard error at /dev/null once the interpreter starts to
    exit (atexit runs before the extension modules' teardown reports)."""
    import atexit

    def close_stderr():
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)

    atexit.register(close_stderr)


if os.environ.get(WORKER_ENV) and not os.environ.get(VERBOSE_ENV):  # imported in a worker, to run a batch
    _quiet_at_exit()


def local_client(n_workers: int | None = None, **kwargs):
    """A ``dask.distributed.Client`` on a new ``LocalCluster`` of one-thread worker processes
    with `worker_env` (closing the client closes the cluster).

    Parameters
    ----------
    n_workers : int, optional
        Worker processes (default: Dask's, one per core).
    **kwargs
        Further ``LocalCluster`` options (they override fastrisk's).

    Returns
    -------
    distributed.Client
    """
    Client = require("distributed", what="a Dask cluster").Client
    env = dict(worker_env())
    here = str(Path(__file__).resolve().parents[2])  # workers import this fastrisk
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
    options = dict(n_workers=n_workers, threads_per_worker=1, processes=True, env=env, dashboard_address=None,
                   silence_logs=40)
    options.update(kwargs)
    return Client(**options)


def _init_worker(env: dict, parent: int | None = None) -> None:
    os.environ.update(env)
    settle_numba_threads()  # numba read its settings when fastrisk was imported, before `env` was set
    if not os.environ.get(VERBOSE_ENV):
        _quiet_at_exit()
    if parent is not None:
        _exit_with_parent(parent)


def _exit_with_parent(parent: int, every: float = 0.5) -> None:
    """A daemon thread that ends this worker process as soon as its parent ``parent`` is gone
    (killed with SIGKILL, say), so that no pool worker outlives the sweep that started it."""
    def watch():
        while True:
            time.sleep(every)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="fastrisk-exit-with-parent", daemon=True).start()


def process_pool(workers: int | None = None) -> cf.ProcessPoolExecutor:
    """A process pool for sweeps: ``spawn``ed workers (no forked numba threads), each with
    `worker_env` set before fastrisk is imported there; a worker exits within half a
    second of its parent's death (a kill -9 of the sweep leaves no worker behind).

    Parameters
    ----------
    workers : int, optional
        Worker processes (default: one per core).

    Returns
    -------
    concurrent.futures.ProcessPoolExecutor
    """
    if workers is not None:
        positive_int(workers, "workers")
    ctx = multiprocessing.get_context("spawn")
    return cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                  initargs=(worker_env(), os.getpid()))




class _Backend:
    """Submit batches and wait for them; ``concurrent.futures`` flavour."""

    threads: int | None = 1

    def __init__(self, executor):
        self.executor = executor
        self.workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1

    def put(self, label: str, spec, what: str, again: bool = False):
        return _Source(spec, what) if isinstance(spec, str) else spec

    def alive(self, handle) -> bool:
        """Whether a data handle from `put` still holds its data."""
        return True

    def submit(self, fn, *args, key: str):
        return self.executor.submit(fn, *args)

    def wait(self, pending):
        done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
        return done

    def cancel(self, pending) -> None:
        for f in pending:
            f.cancel()


class _InProcess(_Backend):
    """Batches run at submission, in this process, with numba's parallel kernels."""

    threads = None

    def __init__(self):
        self.workers = 1

    def submit(self, fn, *args, key: str):
        f = cf.Future()
        try:
            f.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt must reach the loop
            if not isinstance(exc, Exception):
                raise
            f.set_exception(exc)
        return f


#: Broadcasts of a data source tried while workers die under it.
_SCATTER_TRIES = 6
#: Seconds a Dask sweep waits with no worker at all (none started, or every one lost) before
#: it stops with an error; ``worker_timeout=`` (``--worker-timeout``) or the environment
#: variable `WORKER_TIMEOUT_ENV` set another.
WORKER_TIMEOUT = 60.0
WORKER_TIMEOUT_ENV = "FASTRISK_WORKER_TIMEOUT"
#: Seconds between two looks at the cluster while waiting for batches.
_WAIT_POLL = 1.0


def worker_timeout_seconds(value: float | None = None) -> float:
    """The bounded wait for Dask workers: ``value``, else $FASTRISK_WORKER_TIMEOUT, else
    `WORKER_TIMEOUT`."""
    if value is not None:
        return non_negative_number(value, "worker_timeout", "seconds")
    text = os.environ.get(WORKER_TIMEOUT_ENV)
    if text is None:
        return WORKER_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not seconds >= 0:
        raise InputError(f"{WORKER_TIMEOUT_ENV} must be a non-negative number of seconds, got {text!r}")
    return seconds


class _Dask(_Backend):
    """A ``distributed.Client``: batches submitted with distinct keys; data scattered once to
    one worker, from which the others fetch it; if its worker dies the data is scattered again
    for the resubmission. Not ``broadcast=True``: the scheduler's replication loop
    (``Scheduler.replicate``, distributed 2026.8) fixes its set of workers when it starts and
    waits forever for a copy on a worker that died meanwhile (a sweep hung there).
    """

    def __init__(self, client, worker_timeout: float | None = None):
        self.client = client
        self.worker_timeout = worker_timeout_seconds(worker_timeout)
        self._await_workers()
        info = client.scheduler_info().get("workers", {})
        self.workers = max(1, sum(w.get("nthreads", 1) for w in info.values()))
        self.token = uuid.uuid4().hex[:12]
        self._scattered = {}

    def _has_workers(self) -> bool:
        return bool(self.client.scheduler_info().get("workers"))

    def _await_workers(self, since: float | None = None) -> None:
        """Return once the cluster has a worker; after `worker_timeout` seconds without
        one (since ``since``), raise `WorkerTimeoutError` (the sweep checkpoints what is done)."""
        start = time.monotonic() if since is None else since
        while not self._has_workers():
            waited = time.monotonic() - start
            if waited >= self.worker_timeout:
                raise WorkerTimeoutError(
                    f"no Dask worker for {waited:.0f} s (none was started, or every worker was lost): the sweep "
                    "stops; finished batches are checkpointed when it writes to --out (rerun with --resume once "
                    f"workers are up). Wait longer with --worker-timeout or {WORKER_TIMEOUT_ENV}")
            time.sleep(0.2)

    def put(self, label, spec, what, again: bool = False):
        if again or label not in self._scattered or not self.alive(self._scattered[label]):
            obj = _load_cached(spec, what) if isinstance(spec, str) else spec
            for attempt in range(_SCATTER_TRIES):
                self._await_workers()
                try:
                    self._scattered[label] = self.client.scatter(obj, hash=False, timeout=self.worker_timeout)
                    break
                except (OSError, KeyError):
                    # a worker died during the scatter: CommClosedError, or the scheduler's
                    # scatter looks up a worker it has just removed (KeyError: its address)
                    if attempt == _SCATTER_TRIES - 1:
                        raise
                    time.sleep(0.25 * (attempt + 1))
        return self._scattered[label]

    def alive(self, handle) -> bool:
        return getattr(handle, "status", "finished") == "finished"

    def submit(self, fn, *args, key: str):
        return self.client.submit(fn, *args, key=f"fastrisk-sweep-{self.token}-{key}", pure=False)

    def wait(self, pending):
        from distributed import wait  # optional (fastrisk[dask])

        alone = None  # since when the cluster has had no worker
        while True:
            try:
                return wait(list(pending), timeout=_WAIT_POLL, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                if self._has_workers():
                    alone = None
                    continue
                alone = time.monotonic() if alone is None else alone
                self._await_workers(since=alone)  # raises once worker_timeout has passed
            except Exception:  # noqa: BLE001 - CancelledError: a future lost its data with a worker
                break
        done = [f for f in pending if f.done()]
        if not done:
            time.sleep(0.05)
        return done

    def cancel(self, pending) -> None:
        if pending:
            self.client.cancel(list(pending))


def _backend(executor, worker_timeout: float | None = None) -> _Backend:
    if executor is None:
        return _InProcess()
    mod = type(executor).__module__ or ""
    if mod.startswith("distributed"):
        client = getattr(executor, "_client", executor)  # ClientExecutor wraps a Client
        if hasattr(client, "scatter") and hasattr(client, "submit"):
            return _Dask(client, worker_timeout)
    if isinstance(executor, cf.Executor):
        return _Backend(executor)
    raise InputError("`executor` must be None, a concurrent.futures.Executor or a dask.distributed Client, "
                     f"got {type(executor).__name__}")
