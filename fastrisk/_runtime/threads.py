"""Thread count for numba's parallel kernels, changed only for the duration of a call."""

from __future__ import annotations

import contextlib
import functools
import os

import numba
import threadpoolctl
from numba.core import config as numba_config
from numba.np.ufunc import parallel as numba_parallel

from fastrisk._runtime.validation import positive_int

#: Below this many element-operations a parallel launch costs more than it saves (measured on
#: 2 shared cores). The one threshold of the package: callers give their work in these units.
SMALL_WORK = 200_000
#: Element-operations that one multiply-add of a BLAS product counts for: BLAS threads pay off
#: only for products of about 5e8 multiply-adds.
BLAS_FLOP_WORK = 1 / 2500
#: Element-operations that one pair-topic cell of the blocked all-pairs pass counts for (four
#: fused sums over cache-resident tiles): serial below about 1e6 cells.
PAIR_CELL_WORK = 1 / 5


def parallel(work: float) -> bool:
    """True when ``work`` element-operations are worth a parallel launch."""
    return work >= SMALL_WORK


def thread_count(work: float, threads: int | None = None) -> int:
    """Threads for a `fastrisk._kernels._jit.run_strided` driver, called inside
    ``limit_threads(threads)``: numba's current count when ``threads`` was given or ``work``
    element-operations are worth a parallel launch, else 1."""
    return numba.get_num_threads() if threads is not None or parallel(work) else 1


@functools.lru_cache(maxsize=1)
def _blas_controller() -> threadpoolctl.ThreadpoolController:
    return threadpoolctl.ThreadpoolController()  # inspects the loaded libraries: once per process


def blas_threads(n: int):
    """A context manager that runs the block with ``n`` BLAS threads (threadpoolctl). With
    one, every element of a product has one summation order, whatever the machine."""
    return _blas_controller().limit(limits=n, user_api="blas")


@contextlib.contextmanager
def limit_threads(n: int | None, work: int | None = None):
    """Run the block with ``n`` numba threads; restore the previous count afterwards.

    ``n=None`` leaves numba's count as is, except for small jobs (``work`` element-operations
    below `SMALL_WORK`), which run on one thread: waking a thread pool costs more than
    such a job. Results never depend on the thread count.
    """
    if n is None:
        if work is None or parallel(work):
            yield
            return
        n = 1

    n = min(positive_int(n, "threads"), numba.config.NUMBA_NUM_THREADS)
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def settle_numba_threads() -> None:
    """Make numba's thread settings and the environment agree, so that no compile can fail.

    numba launches its thread pool once, at `numba.config.NUMBA_NUM_THREADS` threads, and
    every compile re-reads ``$NUMBA_NUM_THREADS``; a value that changed after the launch makes
    the compile raise "Cannot set NUMBA_NUM_THREADS to a different value once the threads have
    been launched" (numba's ``config.reload_config``). A Dask nanny sets its ``env=`` in the
    worker after the worker may have imported numba, and a user's worker may export anything,
    so: before the pool is launched, the settings are re-read from the environment; after, the
    launched size is written back to the environment. The number of threads a kernel uses is
    then chosen with `numba.set_num_threads` (see `limit_threads`), the documented way to run
    on fewer threads than were launched.
    """
    if not getattr(numba_parallel, "_is_initialized", True):  # numba's own flag; unknown: treat as launched
        numba_config.reload_config()
        return
    text = os.environ.get("NUMBA_NUM_THREADS")
    try:
        wanted = int(text) if text else numba_config.NUMBA_DEFAULT_NUM_THREADS
    except ValueError:
        wanted = None
    if wanted != numba_config.NUMBA_NUM_THREADS:
        os.environ["NUMBA_NUM_THREADS"] = str(numba_config.NUMBA_NUM_THREADS)


def run(kernel, twin, work: float, threads: int | None, *args):
    """``kernel(*args)`` under `limit_threads`, or its one-thread twin (same body, see
    `fastrisk._kernels._jit.serial`) when the job is small and no thread count is given:
    a small call then pays neither a thread-count switch nor a thread-pool wake-up."""
    if threads is None and not parallel(work):
        return twin(*args)
    with limit_threads(threads, work):
        return kernel(*args)
