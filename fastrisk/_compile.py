"""Compiling user functions (value functions, resampling statistics) with numba, checked once."""

from __future__ import annotations

import numbers

from fastrisk.errors import InputError


def compile_checked(func, probe, *, what: str, argument: str, hint: str = ""):
    """A numba dispatcher for ``func`` (compiled with ``numba.njit`` unless it already is one),
    called once on ``probe`` so that a typing error or a non-numeric result is a clear
    :class:`InputError` naming ``what``, never a numba traceback later inside a kernel."""
    import numba
    from numba.core.registry import CPUDispatcher

    name = getattr(func, "__name__", repr(func))
    try:
        dispatcher = func if isinstance(func, CPUDispatcher) else numba.njit(func)
    except TypeError:
        raise InputError(f"{what} {name!r} must be a Python function numba can compile; wrap library "
                         "functions, e.g. `lambda x: np.median(x)`") from None
    try:
        out = dispatcher(probe)
    except Exception as exc:  # numba raises many typing error classes
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{what} {name!r} could not be compiled by numba for {argument} ({first}){hint}") from None
    if not isinstance(out, numbers.Real):
        raise InputError(f"{what} {name!r} must return a number, returned {type(out).__name__}")
    return dispatcher
