"""The single numba configuration point: every kernel is cached, none uses fastmath."""

from __future__ import annotations

import functools

import numba

#: Serial kernel: one unit of work.
njit = functools.partial(numba.njit, cache=True, fastmath=False, nogil=True)

#: Parallel driver: ``prange`` over the outermost independent axis.
pjit = functools.partial(numba.njit, cache=True, fastmath=False, nogil=True, parallel=True)

prange = numba.prange
