"""Where batches run: the worker side (thread limits, process pools, Dask clients) and the
backends that submit batches and wait for them."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import threading
import time
import uuid
import warnings
from pathlib import Path

from fastrisk._threads import blas_threads, limit_threads
from fastrisk._validation import positive_int
from fastrisk.errors import InputError
from fastrisk.sweep.data import _load_cached, _materialise, _Source
from fastrisk.sweep.kinds import JobKind
from fastrisk.sweep.table import _assemble

_KERNEL_LOCK = threading.Lock()  # numba's workqueue layer must not be entered by two threads at once


def _run_jobs(kind: JobKind, data, jobs: list, threads: int | None) -> list:
    """One ``(table | None, error | None, warning | None, seconds)`` per job; a job's
    exception becomes its error message, never the batch's."""
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
    """Environment for sweep workers: one numba thread and one BLAS thread per process.

    Pass it to a Dask cluster (``LocalCluster(env=worker_env())`` or the config
    ``distributed.nanny.pre-spawn-environ``) or export it before ``dask worker``.
    """
    return {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1"}


def local_client(n_workers: int | None = None, **kwargs):
    """A ``dask.distributed.Client`` on a new ``LocalCluster`` of one-thread worker processes
    with `worker_env` (closing the client closes the cluster). Keyword arguments go to
    the cluster."""
    try:
        from distributed import Client  # optional (fastrisk[dask])
    except ModuleNotFoundError:
        raise InputError("a Dask cluster needs dask.distributed: pip install 'fastrisk[dask]'") from None
    env = dict(worker_env())
    here = str(Path(__file__).resolve().parents[2])  # workers import this fastrisk
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
    options = dict(n_workers=n_workers, threads_per_worker=1, processes=True, env=env, dashboard_address=None,
                   silence_logs=40)
    options.update(kwargs)
    return Client(**options)


def _init_worker(env: dict, parent: int | None = None) -> None:
    os.environ.update(env)
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
    second of its parent's death (a kill -9 of the sweep leaves no worker behind)."""
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


class _Dask(_Backend):
    """A ``distributed.Client``: batches submitted with distinct keys; data scattered once and
    replicated on every worker (``broadcast=True``), so a dead worker loses no data the
    others do not hold; if every copy is lost the data is scattered again for the resubmission.
    """

    def __init__(self, client):
        self.client = client
        info = client.scheduler_info().get("workers", {})
        self.workers = max(1, sum(w.get("nthreads", 1) for w in info.values()))
        self.token = uuid.uuid4().hex[:12]
        self._scattered = {}

    def put(self, label, spec, what, again: bool = False):
        if again or label not in self._scattered or not self.alive(self._scattered[label]):
            obj = _load_cached(spec, what) if isinstance(spec, str) else spec
            for attempt in range(_SCATTER_TRIES):
                try:
                    self._scattered[label] = self.client.scatter(obj, hash=False, broadcast=True)
                    break
                except OSError:  # CommClosedError: a worker died during the broadcast; the scheduler drops it
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

        try:
            return wait(list(pending), return_when="FIRST_COMPLETED").done
        except Exception:  # noqa: BLE001 - CancelledError: a future lost its data with a worker
            done = [f for f in pending if f.done()]
            if not done:
                time.sleep(0.05)
            return done

    def cancel(self, pending) -> None:
        if pending:
            self.client.cancel(list(pending))


def _backend(executor) -> _Backend:
    if executor is None:
        return _InProcess()
    mod = type(executor).__module__ or ""
    if mod.startswith("distributed"):
        client = getattr(executor, "_client", executor)  # ClientExecutor wraps a Client
        if hasattr(client, "scatter") and hasattr(client, "submit"):
            return _Dask(client)
    if isinstance(executor, cf.Executor):
        return _Backend(executor)
    raise InputError("`executor` must be None, a concurrent.futures.Executor or a dask.distributed Client, "
                     f"got {type(executor).__name__}")
