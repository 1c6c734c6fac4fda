"""Thread count for numba's parallel kernels, changed only for the duration of a call."""

from __future__ import annotations

import contextlib
import functools

import numba
import threadpoolctl

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


def run(kernel, twin, work: float, threads: int | None, *args):
    """``kernel(*args)`` under `limit_threads`, or its one-thread twin (same body, see
    `fastrisk._kernels._jit.serial`) when the job is small and no thread count is given:
    a small call then pays neither a thread-count switch nor a thread-pool wake-up."""
    if threads is None and not parallel(work):
        return twin(*args)
    with limit_threads(threads, work):
        return kernel(*args)
