"""Sweeps: grids of experiments run in-process, in a process pool or on a Dask cluster.

A :class:`Grid` is a list of experiments; an experiment names a job kind (``risk``,
``bootstrap``, ...: see :data:`KINDS`), one or more data sources, fixed parameters and grid
axes. Its jobs are every combination of a data source and the axes' values, in order; each
job is one call of the public API and yields an Arrow table, and :func:`sweep` gathers them
into one table with the job's parameters as columns.

Determinism. Job ``j`` of experiment ``e`` gets the seed of
``numpy.random.SeedSequence(root, spawn_key=(e, j))`` (what ``SeedSequence(root).spawn``
gives, keyed by the job's grid position), recorded in the ``seed`` column; every job is
independent, so the same grid and root seed give bit-identical tables in-process, in a
process pool or on Dask, whatever the batching.

Execution. Jobs of one experiment and data source are batched so that a task does about
``batch_seconds`` of work (sized from the measured cost of earlier jobs). ``executor=None``
runs the batches in this process with numba's parallel kernels; any
``concurrent.futures.Executor`` or a ``dask.distributed.Client`` (or its ``get_executor()``)
runs them in workers, each job with one numba thread. Every job runs with one BLAS thread
(threadpoolctl), because OpenBLAS's sums depend on its thread count and the linear bootstrap
is a matrix product. Data sources are loaded once per worker (file sources) or scattered
once to the cluster (Dask).

Nothing lost. With ``out=`` finished batches are checkpointed as Parquet files in
``OUT.parts/``; a rerun with ``resume=True`` recomputes only the jobs missing there. A job
that raises is recorded (``status="error"`` and its message) and the sweep goes on; a batch
lost with its worker stays missing, so a resume recomputes it.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import fnmatch
import functools
import importlib
import itertools
import json
import math
import numbers
import os
import shutil
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from fastrisk.errors import InputError

__all__ = ["Experiment", "Grid", "Job", "JobKind", "KINDS", "SweepResult", "load_grid", "local_client", "process_pool",
           "register_kind", "sweep", "worker_env"]

#: Column names every sweep table starts with (then ``param_<name>`` per parameter).
JOB_COLUMNS = ("job", "experiment", "kind", "data", "seed", "status", "error", "warning", "params")
_META_KEY = b"fastrisk.sweep"


# ====================================================================== job kinds
@dataclass(frozen=True)
class JobKind:
    """A procedure a sweep can run: ``func(data, **params) -> pyarrow.Table``.

    ``data`` says what a data source must load to (``"matrix"``: a ScoreMatrix; ``"runs"``:
    a ``(RunSet, Qrels)`` pair); ``seed`` names the keyword that receives the job's seed
    (None: the procedure is not random); ``threads`` whether ``func`` accepts ``threads=``.
    """

    name: str
    func: Callable
    data: str = "matrix"
    seed: str | None = None
    threads: bool = True

    def __call__(self, data, params: Mapping, seed: int, threads: int | None) -> pa.Table:
        kwargs = dict(params)
        if self.seed is not None:
            kwargs[self.seed] = seed
        if self.threads:
            kwargs["threads"] = threads
        table = self.func(data, **kwargs)
        if not isinstance(table, pa.Table):
            table = table.to_arrow()
        return table


#: The registry of job kinds: name -> :class:`JobKind`.
KINDS: dict[str, JobKind] = {}


#: Job kinds registered by optional modules when a grid first names them (kind -> module).
PLUGIN_KINDS = {"simulate_errors": "fastrisk.simulate"}


def register_kind(name: str, func: Callable, *, data: str = "matrix", seed: str | None = None,
                  threads: bool = True, replace: bool = False) -> JobKind:
    """Add a job kind: ``func(data, **params)`` returning a pyarrow Table (or a result with
    ``to_arrow()``). ``func`` must be importable by name (a module-level function) for
    process and Dask workers to find it."""
    if data not in ("matrix", "runs"):
        raise InputError(f"`data` must be 'matrix' or 'runs', got {data!r}")
    if name in KINDS and not replace:
        raise InputError(f"job kind {name!r} is already registered (pass replace=True to replace it)")
    KINDS[name] = kind = JobKind(name, func, data, seed, threads)
    return kind


def _baseline_ref(baseline, matrix):
    """``"trec2012-web:indriCASP"`` -> the official per-topic baseline for the matrix's measure."""
    if isinstance(baseline, str) and baseline.lower() == "trec2012-web:indricasp":
        from fastrisk.datasets import trec2012_web

        measure = (matrix.measure or "err20").lower().replace("@", "")
        return dict(trec2012_web(measure)[1])
    return baseline


def _risk_job(matrix, *, baseline, **params) -> pa.Table:
    from fastrisk._risk import risk

    return risk(matrix, _baseline_ref(baseline, matrix), **params).to_arrow()


def _topic_risk_job(matrix, *, baseline, **params) -> pa.Table:
    from fastrisk._risk import topic_risk

    return topic_risk(matrix, _baseline_ref(baseline, matrix), **params).to_arrow()


def _pool_bias_job(data, **params) -> pa.Table:
    from fastrisk.pooling import pooling_experiment

    runs, qrels = data
    return pooling_experiment(runs, qrels, **params).mae_long()


def _bootstrap_job(matrix, *, baseline=None, **params) -> pa.Table:
    from fastrisk.resampling import bootstrap

    params.setdefault("keep_replicates", False)
    return bootstrap(matrix, _baseline_ref(baseline, matrix), progress=False, **params).to_arrow()


def _permutation_job(matrix, *, baseline=None, **params) -> pa.Table:
    from fastrisk.resampling import permutation_test

    params.setdefault("keep_replicates", False)
    return permutation_test(matrix, _baseline_ref(baseline, matrix), progress=False, **params).to_arrow()


def _zrisk_job(matrix, **params) -> pa.Table:
    from fastrisk._zrisk import zrisk

    return zrisk(matrix, **params).to_arrow()


def _table_job(matrix, *, baseline="all", **params) -> pa.Table:
    from fastrisk.tables import baseline_table

    return baseline_table(matrix, _baseline_ref(baseline, matrix), **params).to_arrow()


register_kind("risk", _risk_job)
register_kind("topic_risk", _topic_risk_job)
register_kind("bootstrap", _bootstrap_job, seed="rng")
register_kind("permutation", _permutation_job, seed="rng")
register_kind("pool_bias", _pool_bias_job, data="runs", seed="rng")
register_kind("zrisk", _zrisk_job)
register_kind("table", _table_job)


# ====================================================================== data sources
_TREC2012_MEASURES = ("err20", "ndcg20")


def _bundled_matrix_names() -> list[str]:
    from fastrisk.datasets import path

    return sorted(p.stem for p in path("trec-matrices").glob("*.csv"))


def _expand_source(spec, base_dir: Path | None) -> list:
    """A data source spec -> one or more concrete specs (glob patterns of bundled matrices),
    checked to exist: ``trec:NAME`` (``trec:web*`` patterns), ``trec2012-web:err20``,
    ``trec2012-web:runs``, or a file path (relative to the grid file)."""
    if not isinstance(spec, str):
        return [spec]
    if spec.startswith("trec:"):
        pattern = spec[5:]
        names = _bundled_matrix_names()
        found = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not found:
            raise InputError(f"data source {spec!r} matches no bundled matrix (known: {', '.join(names)})")
        return [f"trec:{n}" for n in found]
    if spec.startswith("trec2012-web:"):
        what = spec.partition(":")[2]
        if what not in _TREC2012_MEASURES + ("runs",):
            raise InputError(f"data source {spec!r}: expected trec2012-web:err20, trec2012-web:ndcg20 or "
                             "trec2012-web:runs")
        return [spec]
    p = Path(spec)
    if not p.is_absolute() and base_dir is not None and (base_dir / p).exists():
        p = base_dir / p
    if not p.exists():
        raise InputError(f"data source {spec!r} is not a bundled name (trec:NAME, trec2012-web:MEASURE) "
                         f"nor an existing file")
    return [str(p.resolve())]


def _source_kind(spec: str) -> str:
    return "runs" if spec == "trec2012-web:runs" or Path(spec).is_dir() else "matrix"


@dataclass(frozen=True)
class _Source:
    """A data source to be loaded where it is used (and cached there)."""

    spec: str
    what: str


def _load(spec: str, what: str):
    from fastrisk import datasets

    if what == "runs":
        return _load_runs(spec)
    if spec.startswith("trec:"):
        return datasets.trec_matrix(spec[5:])
    if spec.startswith("trec2012-web:"):
        return datasets.trec2012_web(spec.partition(":")[2])[0]
    from fastrisk.io import read_matrix

    return read_matrix(spec)


def _load_runs(spec: str):
    from fastrisk.runs import read_qrels, read_runs  # the runs module comes with pooling

    if spec == "trec2012-web:runs":
        from fastrisk.datasets import path

        return read_runs(sorted(path("trec2012-web/runs").glob("*.run*"))), read_qrels(
            path("trec2012-web/qrels.adhoc.txt"))
    p = Path(spec)
    if p.is_dir():
        qrels = sorted(p.glob("qrels*"))
        if len(qrels) != 1:
            raise InputError(f"a runs directory needs exactly one qrels* file; {p} has {len(qrels)}")
        runs = sorted(f for f in p.iterdir() if f.is_file() and f != qrels[0])
        return read_runs(runs), read_qrels(qrels[0])
    raise InputError(f"runs data source {spec!r} must be trec2012-web:runs or a directory of runs and one qrels")


@functools.lru_cache(maxsize=8)
def _load_cached(spec: str, what: str):
    return _load(spec, what)


def _materialise(data):
    return _load_cached(data.spec, data.what) if isinstance(data, _Source) else data


# ====================================================================== the grid
def _param_value(value, where: str):
    """Grid values must be TOML-like: numbers, strings, bools or lists of them."""
    if isinstance(value, (bool, str, numbers.Real)):
        return value
    if isinstance(value, (list, tuple)):
        return [_param_value(v, where) for v in value]
    raise InputError(f"{where}: parameter values must be numbers, strings, booleans or lists, got "
                     f"{type(value).__name__}")


@dataclass(frozen=True)
class Experiment:
    """One job kind over data sources x grid axes; ``params`` are passed to every job.

    ``data``: a source spec (``"trec:web2012_err20"``, ``"trec:adhoc*_ap"``,
    ``"trec2012-web:err20"``, a file path), an in-memory object (a ScoreMatrix), a list of
    them, or a mapping name -> spec/object. ``grid``: parameter name -> list of values, one
    job per combination (data outermost, then the axes in order).
    """

    kind: str
    data: object
    params: Mapping = field(default_factory=dict)
    grid: Mapping = field(default_factory=dict)
    name: str | None = None


@dataclass(frozen=True)
class Job:
    """One call: experiment ``experiment`` (index ``e``), position ``position`` in it."""

    job: int
    e: int
    position: int
    experiment: str
    kind: str
    data: str
    params: dict
    seed: int

    @property
    def params_json(self) -> str:
        return json.dumps(self.params, sort_keys=True)


_EXPERIMENT_KEYS = {"kind", "data", "params", "grid", "name"}
_RESERVED = {"threads", "progress", "rng", "seed"}


class Grid:
    """A declarative sweep: experiments and the root ``seed`` of the per-job seeds."""

    def __init__(self, experiments: Sequence[Experiment], seed: int | None = None, *,
                 base_dir: str | Path | None = None):
        if isinstance(seed, bool) or (seed is not None and not (isinstance(seed, numbers.Integral) and seed >= 0)):
            raise InputError(f"`seed` must be a non-negative integer, got {seed!r}")
        self.seed = None if seed is None else int(seed)
        self.base_dir = None if base_dir is None else Path(base_dir)
        if not experiments:
            raise InputError("a sweep grid needs at least one experiment")
        self.experiments = tuple(experiments)
        self._sources: dict[str, object] = {}   # data label -> spec string or in-memory object
        self._expanded = [self._expand(e, x) for e, x in enumerate(self.experiments)]

    # ------------------------------------------------------------ construction
    @classmethod
    def from_dict(cls, spec: Mapping, *, base_dir=None) -> "Grid":
        """From the TOML structure: ``[sweep] seed = ...`` and ``[[experiment]]`` tables."""
        if not isinstance(spec, Mapping):
            raise InputError("a sweep grid must be a table with [[experiment]] entries")
        unknown = set(spec) - {"sweep", "experiment"}
        if unknown:
            raise InputError(f"unknown top-level key(s) {', '.join(sorted(unknown))} in the grid; "
                             "expected [sweep] and [[experiment]]")
        head = spec.get("sweep", {})
        bad = set(head) - {"seed"}
        if bad:
            raise InputError(f"unknown key(s) {', '.join(sorted(bad))} in [sweep]; expected seed")
        exps = spec.get("experiment", [])
        if not isinstance(exps, list):
            raise InputError("`experiment` must be an array of tables ([[experiment]])")
        out = []
        for i, x in enumerate(exps):
            extra = set(x) - _EXPERIMENT_KEYS
            if extra:
                raise InputError(f"experiment {i + 1}: unknown key(s) {', '.join(sorted(extra))}; expected "
                                 f"{', '.join(sorted(_EXPERIMENT_KEYS))}")
            for key in ("kind", "data"):
                if key not in x:
                    raise InputError(f"experiment {i + 1}: missing `{key}`")
            out.append(Experiment(x["kind"], x["data"], x.get("params", {}), x.get("grid", {}), x.get("name")))
        return cls(out, head.get("seed"), base_dir=base_dir)

    @classmethod
    def from_toml(cls, path) -> "Grid":
        path = Path(path)
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        try:
            with open(path, "rb") as fh:
                spec = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{path}: {exc}") from None
        return cls.from_dict(spec, base_dir=path.parent)

    # ------------------------------------------------------------ expansion
    def _expand(self, e: int, x: Experiment):
        name = x.name or f"{x.kind}-{e + 1}"
        where = f"experiment {name!r}"
        if x.kind not in KINDS and x.kind in PLUGIN_KINDS:
            importlib.import_module(PLUGIN_KINDS[x.kind])  # registers the kind
        if x.kind not in KINDS:
            raise InputError(f"{where}: unknown job kind {x.kind!r}; known: {', '.join(sorted(KINDS))}")
        if not isinstance(x.params, Mapping) or not isinstance(x.grid, Mapping):
            raise InputError(f"{where}: `params` and `grid` must be tables (name = value)")
        params = {k: _param_value(v, f"{where}, parameter {k!r}") for k, v in x.params.items()}
        axes = {}
        for k, v in x.grid.items():
            if not isinstance(v, (list, tuple)) or not v:
                raise InputError(f"{where}: grid axis {k!r} must be a non-empty list, got {v!r}")
            axes[k] = [_param_value(u, f"{where}, grid axis {k!r}") for u in v]
        clash = (set(params) & set(axes)) | ((set(params) | set(axes)) & _RESERVED)
        if clash:
            raise InputError(f"{where}: parameter(s) {', '.join(sorted(clash))} given twice or reserved "
                             f"(the sweep sets {', '.join(sorted(_RESERVED))})")
        labels = []
        items = x.data.items() if isinstance(x.data, Mapping) else \
            [(None, d) for d in (x.data if isinstance(x.data, (list, tuple)) else [x.data])]
        for label, d in items:
            for spec in _expand_source(d, self.base_dir):
                if isinstance(spec, str) and KINDS[x.kind].data != _source_kind(spec):
                    raise InputError(f"{where}: job kind {x.kind!r} needs a {KINDS[x.kind].data} data source, "
                                     f"{d!r} is a {_source_kind(spec)} source")
                lab = label if label is not None else (spec if isinstance(spec, str) else f"data-{id(spec):x}")
                if lab in self._sources and self._sources[lab] is not spec and self._sources[lab] != spec:
                    raise InputError(f"{where}: data label {lab!r} names two different sources")
                self._sources[lab] = spec
                labels.append(lab)
        if not labels:
            raise InputError(f"{where}: `data` lists no source")
        return name, labels, params, axes

    def jobs(self, seed: int | None = None) -> list[Job]:
        """Every job, in grid order, with its seed spawned from ``seed`` (default: the grid's)."""
        root = self.seed if seed is None else seed
        if root is None:
            raise InputError("the grid has no root seed; set [sweep] seed = N (sweep() draws one if unset)")
        out = []
        n = 0
        for e, (name, labels, params, axes) in enumerate(self._expanded):
            kind = self.experiments[e].kind
            combos = itertools.product(labels, *axes.values())
            for j, combo in enumerate(combos):
                p = dict(params)
                p.update(zip(axes, combo[1:]))
                ss = np.random.SeedSequence(root, spawn_key=(e, j))
                seed = int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))
                out.append(Job(n, e, j, name, kind, combo[0], p, seed))
                n += 1
        return out

    def source(self, label: str):
        return self._sources[label]

    def __len__(self) -> int:
        return sum(len(labels) * math.prod(len(v) for v in axes.values())
                   for _, labels, _, axes in self._expanded)


def load_grid(grid) -> Grid:
    """A :class:`Grid` from a Grid, a TOML path or a mapping."""
    if isinstance(grid, Grid):
        return grid
    if isinstance(grid, (str, Path)):
        if not Path(grid).is_file():
            raise InputError(f"grid file {str(grid)!r} does not exist")
        return Grid.from_toml(grid)
    if isinstance(grid, Mapping):
        return Grid.from_dict(grid)
    raise InputError(f"`grid` must be a Grid, a TOML file path or a mapping, got {type(grid).__name__}")


# ====================================================================== the worker side
_KERNEL_LOCK = threading.Lock()  # numba's workqueue layer must not be entered by two threads at once


@functools.lru_cache(maxsize=1)
def _blas_controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ModuleNotFoundError:
        return None
    return ThreadpoolController()  # inspecting the loaded libraries once, not per batch


def _blas_limit(threads: int):
    controller = _blas_controller()
    if controller is None:
        return _nullcontext()
    return controller.limit(limits=threads, user_api="blas")


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _run_jobs(kind: JobKind, data, jobs: list, threads: int | None) -> list:
    """One ``(table | None, error | None, warning | None, seconds)`` per job; a job's
    exception becomes its error message, never the batch's."""
    from fastrisk._threads import limit_threads

    try:
        data = _materialise(data)
    except Exception as exc:  # noqa: BLE001 - a data source that cannot be loaded fails its jobs
        msg = f"loading the data failed: {type(exc).__name__}: {exc}"
        return [(None, msg, None, 0.0) for _ in jobs]
    out = []
    # one BLAS thread everywhere, in-process too: OpenBLAS's results depend on its thread count,
    # and the linear bootstrap is a matrix product (numba's parallel kernels do not have that issue)
    with _KERNEL_LOCK, limit_threads(threads), _blas_limit(1):
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
    with :func:`worker_env` (closing the client closes the cluster). Keyword arguments go to
    the cluster."""
    try:
        from distributed import Client
    except ModuleNotFoundError:
        raise InputError("a Dask cluster needs dask.distributed: pip install 'fastrisk[dask]'") from None
    env = dict(worker_env())
    here = str(Path(__file__).resolve().parent.parent)  # workers import this fastrisk
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
    :func:`worker_env` set before fastrisk is imported there; a worker exits within half a
    second of its parent's death (a kill -9 of the sweep leaves no worker behind)."""
    import multiprocessing

    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, numbers.Integral)
                                or workers < 1):
        raise InputError(f"`workers` must be a positive integer, got {workers!r}")
    ctx = multiprocessing.get_context("spawn")
    return cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker,
                                  initargs=(worker_env(), os.getpid()))


# ====================================================================== backends
class _Backend:
    """Submit batches and wait for them; ``concurrent.futures`` flavour."""

    threads: int | None = 1

    def __init__(self, executor):
        self.executor = executor
        self.workers = getattr(executor, "_max_workers", None) or os.cpu_count() or 1

    def put(self, label: str, spec, what: str, again: bool = False):
        return _Source(spec, what) if isinstance(spec, str) else spec

    def alive(self, handle) -> bool:
        """Whether a data handle from :meth:`put` still holds its data."""
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
        from distributed import wait

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


# ====================================================================== tables
def _param_types(jobs: list[Job]) -> dict:
    """One Arrow type per parameter name over the whole grid (stable across resumes)."""
    values: dict[str, list] = {}
    for j in jobs:
        for k, v in j.params.items():
            values.setdefault(k, []).append(v)
    types = {}
    for k, vs in values.items():
        if all(isinstance(v, bool) for v in vs):
            types[k] = pa.bool_()
        elif all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in vs):
            types[k] = pa.int64()
        elif all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in vs):
            types[k] = pa.float64()
        else:
            types[k] = pa.string()
    return types


def _param_cell(v, typ):
    if v is None:
        return None
    if typ == pa.string():
        return v if isinstance(v, str) else json.dumps(v)
    if typ == pa.float64():
        return float(v)
    return v


def _job_columns(jobs: list[Job], status, errors, warnings_, types: dict) -> dict:
    cols = {
        "job": pa.array([j.job for j in jobs], pa.int64()),
        "experiment": pa.array([j.experiment for j in jobs], pa.string()),
        "kind": pa.array([j.kind for j in jobs], pa.string()),
        "data": pa.array([j.data for j in jobs], pa.string()),
        "seed": pa.array([j.seed for j in jobs], pa.int64()),
        "status": pa.array(status, pa.string()),
        "error": pa.array(errors, pa.string()),
        "warning": pa.array(warnings_, pa.string()),
        "params": pa.array([j.params_json for j in jobs], pa.string()),
    }
    for k, typ in types.items():
        cols[f"param_{k}"] = pa.array([_param_cell(j.params.get(k), typ) for j in jobs], typ)
    return cols


def _assemble(jobs: list[Job], results: list, types: dict) -> pa.Table:
    """One table for a finished batch: job columns repeated over each job's result rows
    (a failed job is one row with null results)."""
    status = ["ok" if r[1] is None else "error" for r in results]
    head = pa.table(_job_columns(jobs, status, [r[1] for r in results], [r[2] for r in results], types))
    blank = pa.table({"_": [None]}).drop_columns(["_"])
    tables = [blank if r[0] is None else r[0] for r in results]
    counts = np.array([t.num_rows for t in tables], dtype=np.int64)
    body = _concat(tables)
    idx = pa.array(np.repeat(np.arange(len(jobs), dtype=np.int64), counts))
    cols = {name: head.column(name).take(idx) for name in head.column_names}
    for name in body.column_names:
        cols[name if name not in cols else f"result_{name}"] = body.column(name)
    return pa.table(cols)


def _concat(tables: list[pa.Table]) -> pa.Table:
    tables = [t for t in tables if t is not None]
    if not tables:
        return pa.table({})
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # the same result column with different types in different kinds: fall back to strings
        names = list(dict.fromkeys(n for t in tables for n in t.column_names))
        types = {}
        for n in names:
            seen = {t.schema.field(n).type for t in tables if n in t.column_names}
            types[n] = seen.pop() if len(seen) == 1 else pa.string()
        fixed = [t.cast(pa.schema([(n, types[n]) for n in t.column_names])) for t in tables]
        return pa.concat_tables(fixed, promote_options="permissive")


# ====================================================================== checkpoints
class CheckpointWarning(RuntimeWarning):
    """A checkpoint part failed its checksum or could not be read: its jobs are recomputed."""


def _sha256(data) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


class _Checkpoint:
    """Finished batches as Parquet files in ``OUT.parts/``, flushed every few seconds.

    Each part is written atomically (a temporary file renamed when complete) with Parquet page
    checksums and a ``.sha256`` sidecar, written before the part appears. On resume a part is
    reused only if its SHA-256 matches and it reads back with its page checksums verified; any
    other part is reported by name, moved aside (``.corrupt``) and its jobs are recomputed.
    """

    def __init__(self, out: Path | None, meta: dict, every: float):
        self.out = out
        self.dir = None if out is None else out.with_name(out.name + ".parts")
        self.meta = {_META_KEY: json.dumps(meta).encode()}
        self.every = every
        self.buffer: list[pa.Table] = []
        self.last = time.monotonic()
        self.count = 0
        self._loaded: list[pa.Table] | None = None

    # ------------------------------------------------------------ reading, verified
    def _parts(self) -> list[Path]:
        return sorted(self.dir.glob("part-*.parquet")) if self.dir is not None and self.dir.exists() else []

    @staticmethod
    def _read_verified(data: bytes) -> pa.Table:
        import pyarrow.parquet as pq

        return pq.read_table(pa.BufferReader(data), page_checksum_verification=True)

    def _check_part(self, p: Path) -> pa.Table:
        """The part's table, or an exception whose message says why it cannot be trusted."""
        sidecar = p.with_name(p.name + ".sha256")
        data = p.read_bytes()
        try:
            expected = sidecar.read_text(encoding="ascii").split()[0]
        except (OSError, UnicodeDecodeError, IndexError):
            raise ValueError(f"its checksum file {sidecar.name} is missing or unreadable") from None
        if _sha256(data) != expected:
            raise ValueError(f"its SHA-256 does not match {sidecar.name} (size {len(data)} bytes)")
        return self._read_verified(data)

    def _quarantine(self, p: Path, why: str) -> None:
        warnings.warn(f"checkpoint part {p} is corrupt ({why}); it is not reused and its jobs are "
                      f"recomputed (moved to {p.name}.corrupt)", CheckpointWarning, stacklevel=4)
        for q in (p, p.with_name(p.name + ".sha256")):
            with contextlib.suppress(OSError):
                os.replace(q, q.with_name(q.name + ".corrupt"))

    def existing(self) -> list[pa.Table]:
        """The verified tables of the finished result file and the parts (read once)."""
        if self._loaded is not None:
            return self._loaded
        tables = []
        if self.out is not None and self.out.exists():
            try:
                tables.append(self._read_verified(self.out.read_bytes()))
            except (pa.ArrowException, OSError, ValueError) as exc:
                warnings.warn(f"the previous result {self.out} cannot be read back intact ({_reason(exc)}); "
                              "it is not reused and will be replaced", CheckpointWarning, stacklevel=3)
        for p in self._parts():
            try:
                tables.append(self._check_part(p))
            except (pa.ArrowException, OSError, ValueError, EOFError) as exc:
                self._quarantine(p, _reason(exc))
        self._loaded = tables
        return tables

    def read_meta(self) -> dict | None:
        for t in self.existing():
            md = t.schema.metadata or {}
            if _META_KEY in md:
                try:
                    return json.loads(md[_META_KEY])
                except ValueError:
                    continue
        return None

    # ------------------------------------------------------------ writing, atomic
    def add(self, table: pa.Table) -> None:
        if self.dir is None:
            return
        self.buffer.append(table)
        if time.monotonic() - self.last >= self.every:
            self.flush()

    def _serialise(self, table: pa.Table) -> bytes:
        import pyarrow.parquet as pq

        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **self.meta})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, write_page_checksum=True)
        return sink.getvalue().to_pybytes()

    def flush(self) -> None:
        if self.dir is None or not self.buffer:
            return
        from fastrisk._atomic import write_bytes

        self.dir.mkdir(parents=True, exist_ok=True)
        data = self._serialise(_concat(self.buffer))
        name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:6]}.parquet"
        # the sidecar first: a part never exists without the checksum that vouches for it
        write_bytes(self.dir / (name + ".sha256"), f"{_sha256(data)}  {name}\n".encode("ascii"))
        write_bytes(self.dir / name, data)
        self.buffer.clear()
        self.last = time.monotonic()

    def finish(self, table: pa.Table) -> None:
        if self.out is None:
            return
        from fastrisk._atomic import write_bytes

        self.buffer.clear()
        write_bytes(self.out, self._serialise(table))
        if self.dir.exists():
            shutil.rmtree(self.dir)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# ====================================================================== progress
class _Progress:
    def __init__(self, total: int, initial: int, enabled: bool | None):
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.bar = None
        self.enabled = enabled
        if not enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ModuleNotFoundError:
            self.total, self.done, self.t0, self.last = total, initial, time.monotonic(), 0.0
            return
        self.bar = tqdm(total=total, initial=initial, unit="job", desc="sweep", file=sys.stderr,
                        dynamic_ncols=True)

    def update(self, n: int) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(n)
            return
        self.done += n
        now = time.monotonic()
        if now - self.last >= 1.0 or self.done == self.total:
            rate = self.done / max(now - self.t0, 1e-9)
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
            print(f"\rsweep: {self.done}/{self.total} jobs, ETA {eta:.0f} s", end="", file=sys.stderr, flush=True)
            self.last = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            print(file=sys.stderr)


# ====================================================================== the sweep
@dataclass(frozen=True)
class SweepResult:
    """The gathered table (one block of rows per job, in job order) and what happened.

    ``n_computed`` jobs ran now, ``n_reused`` came from the checkpoint, ``n_failed`` raised
    (``status == "error"``), ``n_missing`` were lost with their workers after every retry
    (rerun with resume); ``n_retried`` counts the jobs of resubmitted batches.
    """

    table: pa.Table
    seed: int
    n_jobs: int
    n_computed: int
    n_reused: int
    n_failed: int
    n_missing: int
    path: str | None
    n_retried: int = 0

    @property
    def complete(self) -> bool:
        return self.n_missing == 0

    def to_arrow(self) -> pa.Table:
        return self.table

    def to_pandas(self):
        return self.table.to_pandas()

    def errors(self) -> pa.Table:
        """The failed jobs: job, experiment, kind, data, params (JSON) and error."""
        import pyarrow.compute as pc

        if self.table.num_rows == 0:
            return self.table
        t = self.table.filter(pc.equal(self.table.column("status"), "error"))
        return t.select(["job", "experiment", "kind", "data", "params", "error"])


def _sweep_iv(executor, batch_seconds, max_batch, checkpoint_seconds, out, resume, retries):
    for name, v in (("batch_seconds", batch_seconds), ("checkpoint_seconds", checkpoint_seconds)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v >= 0:
            raise InputError(f"`{name}` must be a non-negative number of seconds, got {v!r}")
    if isinstance(max_batch, bool) or not isinstance(max_batch, numbers.Integral) or max_batch < 1:
        raise InputError(f"`max_batch` must be a positive integer, got {max_batch!r}")
    if isinstance(retries, bool) or not isinstance(retries, numbers.Integral) or retries < 0:
        raise InputError(f"`retries` must be a non-negative integer, got {retries!r}")
    if resume and out is None:
        raise InputError("`resume` needs `out`, the Parquet file the sweep checkpoints to")
    return _backend(executor)


def _reuse(checkpoint: _Checkpoint, jobs: list[Job], retry_errors: bool) -> tuple[list[pa.Table], set]:
    """Rows of the checkpoint to keep, and the ids of the jobs they cover (validated)."""
    import pyarrow.compute as pc

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
    from fastrisk._random import resolve_seed

    return resolve_seed(None)


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
          checkpoint_seconds: float = 2.0, retries: int = 2) -> SweepResult:
    """Run every job of ``grid`` and gather the results into one Arrow table.

    ``grid``: a :class:`Grid`, a TOML file (see ``bench_data/sweeps/``) or the equivalent
    mapping. ``executor``: None (in-process, numba's parallel kernels), any
    ``concurrent.futures.Executor`` (see :func:`process_pool`), or a ``dask.distributed``
    ``Client`` / ``client.get_executor()``. ``out``: a Parquet file; finished batches are
    checkpointed next to it (``OUT.parts/``) at most every ``checkpoint_seconds``, and the
    full table is written there at the end. ``resume``: reuse the checkpoint and compute only
    the jobs missing from it (with ``retry_errors`` also the jobs that failed). A job that
    raises is recorded with ``status="error"``; the sweep goes on. A batch lost with its
    worker (the worker died, its data was lost) is resubmitted up to ``retries`` times, then
    recorded as missing (``n_missing``; a resume computes it). A checkpoint part that fails
    its checksum is reported (:class:`CheckpointWarning`) and its jobs are recomputed.

    The table has the columns :data:`JOB_COLUMNS` (``seed``: the job's seed, spawned from
    the grid's root seed and the job's position), ``param_<name>`` per parameter, then the
    procedure's own columns (prefixed ``result_`` where a name clashes).
    """
    grid = load_grid(grid)
    out = None if out is None else Path(out)
    backend = _sweep_iv(executor, batch_seconds, max_batch, checkpoint_seconds, out, resume, retries)
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
    bar = _Progress(len(jobs), len(done), progress)
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
                bar.update(len(batch))
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
    import pyarrow.compute as pc

    ids = set()
    for t in tables:
        ids |= set(pc.unique(t.filter(pc.equal(t.column("status"), "error")).column("job")).to_pylist())
    return len(ids)


def _sort(table: pa.Table) -> pa.Table:
    """Job order; rows of one job keep their order (Arrow's sort is stable)."""
    if table.num_rows == 0:
        return table
    import pyarrow.compute as pc

    order = pc.sort_indices(table, sort_keys=[("job", "ascending")])
    return table.take(order).combine_chunks()
