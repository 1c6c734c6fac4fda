"""Compiling user functions (value functions, resampling statistics) with numba, checked once.

User code runs inside fastrisk's kernels, where an out-of-range index would read or write
arbitrary memory (a wrong number or a crash). It is therefore always compiled with numba's
bounds checking: an out-of-range index raises ``IndexError`` instead. A function that fails
on the probe argument is refused with an `InputError` before any kernel runs.
"""

from __future__ import annotations

import numbers

import numba
from numba.core.registry import CPUDispatcher

from fastrisk.errors import InputError


def compile_checked(func, probe, *, what: str, argument: str, hint: str = ""):
    """A bounds-checked numba dispatcher for ``func`` (a Python function, or a numba
    dispatcher whose Python function is compiled again with ``boundscheck=True``), called
    once on ``probe`` so that a typing error, an out-of-range index or a non-numeric result
    is a clear `InputError` naming ``what``, never a numba traceback later inside a
    kernel."""

    name = getattr(func, "__name__", repr(func))
    try:
        if isinstance(func, CPUDispatcher):
            options = {k: v for k, v in func.targetoptions.items() if k in ("fastmath", "error_model", "nogil")}
            dispatcher = numba.njit(func.py_func, boundscheck=True, **options)
        else:
            dispatcher = numba.njit(func, boundscheck=True)
    except TypeError:
        raise InputError(f"{what} {name!r} must be a Python function numba can compile; wrap library "
                         "functions, e.g. `lambda x: np.median(x)`") from None
    try:
        out = dispatcher(probe)
    except IndexError as exc:
        size = getattr(probe, "size", 1)
        raise InputError(f"{what} {name!r} indexes out of range on {argument} of {size} value(s) ({exc}); "
                         "index relative to the length, e.g. `x[x.shape[0] - 1]`") from None
    except Exception as exc:  # noqa: BLE001 - numba raises many typing error classes
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{what} {name!r} could not be compiled by numba for {argument} ({first}){hint}") from None
    if not isinstance(out, numbers.Real):
        raise InputError(f"{what} {name!r} must return a number, returned {type(out).__name__}")
    return dispatcher
