"""Sweeps: grids of experiments run in-process, in a process pool or on a Dask cluster.

A `Grid` is a list of experiments; an experiment names a job kind (``risk``,
``bootstrap``, ...: see `KINDS`), one or more data sources, fixed parameters and grid
axes. Its jobs are every combination of a data source and the axes' values, in order; each
job is one call of the public API and yields an Arrow table, and `sweep` gathers them
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

Modules, each importing only those above it: `kinds` (job kinds),
`data` (data sources), `grid` (experiments and
jobs), `table` (result columns), `checkpoint`,
`backends` (workers, process pools, Dask) and `run`
(`sweep` itself).
"""

from fastrisk.sweep.backends import local_client, process_pool, worker_env
from fastrisk.sweep.checkpoint import CheckpointWarning
from fastrisk.sweep.grid import Experiment, Grid, Job, load_grid
from fastrisk.sweep.kinds import KINDS, PLUGIN_KINDS, JobKind, register_kind
from fastrisk.sweep.run import SweepResult, sweep
from fastrisk.sweep.table import JOB_COLUMNS

__all__ = ["JOB_COLUMNS", "KINDS", "PLUGIN_KINDS", "CheckpointWarning", "Experiment", "Grid", "Job", "JobKind",
           "SweepResult", "load_grid", "local_client", "process_pool", "register_kind", "sweep", "worker_env"]
