"""Thread count for numba's parallel kernels, changed only for the duration of a call."""

from __future__ import annotations

import contextlib
import numbers

from fastrisk.errors import InputError


@contextlib.contextmanager
def limit_threads(n: int | None):
    """Run the block with ``n`` numba threads (``None``: leave as is); restore afterwards."""
    if n is None:
        yield
        return
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
