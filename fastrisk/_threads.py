"""Thread count for numba's parallel kernels, changed only for the duration of a call."""

from __future__ import annotations

import contextlib
import numbers

from fastrisk.errors import InputError


#: Below this many element-operations a parallel launch costs more than it saves.
SMALL_WORK = 200_000


@contextlib.contextmanager
def limit_threads(n: int | None, work: int | None = None):
    """Run the block with ``n`` numba threads; restore the previous count afterwards.

    ``n=None`` leaves numba's count as is, except for small jobs (``work`` element-operations
    below :data:`SMALL_WORK`), which run on one thread: waking a thread pool costs more than
    such a job. Results never depend on the thread count.
    """
    if n is None:
        if work is None or work >= SMALL_WORK:
            yield
            return
        n = 1
    import numba

    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise InputError(f"`threads` must be a positive integer, got {n!r}")
    n = min(int(n), numba.config.NUMBA_NUM_THREADS)
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
