"""The argument checks every public function's ``_<fn>_iv`` is built from (scipy's style).

Each check returns the normalised value or raises `InputError` with a
message that names the parameter and the rule, e.g. "`replicates` must be a positive integer,
got 0". Checks of domain objects (score matrices, baselines, value functions) live with those
objects (`fastrisk.data.matrix`, `fastrisk.core.baselines`, `fastrisk.core.values`).
"""

from __future__ import annotations

import numbers

import numpy as np

from fastrisk.errors import InputError


def positive_int(x, name: str) -> int:
    """``x`` as an int >= 1 (bools are not integers here)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 1:
        raise InputError(f"`{name}` must be a positive integer, got {x!r}")
    return int(x)


#: Most replicates one call draws (the Monte Carlo error of a p-value p is sqrt(p (1 - p) / B):
#: 10**6 replicates already resolve p = 0.05 to about 0.0002).
MAX_REPLICATES = 10**9


def replicates(x, name: str = "replicates") -> int:
    """``x`` as a positive int no larger than `MAX_REPLICATES` (every resampling path)."""
    B = positive_int(x, name)
    if B > MAX_REPLICATES:
        raise InputError(f"`{name}` must be at most {MAX_REPLICATES:,} (10**9), got {B:,}: the Monte Carlo "
                         "error of a p-value p is sqrt(p (1 - p) / B), so 10**6 replicates already resolve "
                         "p = 0.05 to about 0.0002")
    return B


def non_negative_number(x, name: str, unit: str = "") -> float:
    """``x`` as a float >= 0 (bools are not numbers here); ``unit`` names it in the message."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not x >= 0:
        raise InputError(f"`{name}` must be a non-negative number{' of ' + unit if unit else ''}, got {x!r}")
    return float(x)


def non_negative_int(x, name: str) -> int:
    """``x`` as an int >= 0 (bools are not integers here)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 0:
        raise InputError(f"`{name}` must be a non-negative integer, got {x!r}")
    return int(x)


def choice(x, name: str, options) -> str:
    """``x`` if it is one of ``options``."""
    if x not in options:
        raise InputError(f"`{name}` must be one of {', '.join(map(repr, options))}, got {x!r}")
    return x


def open_unit(x, name: str, what: str = "a number") -> float:
    """``x`` as a float strictly between 0 and 1 (a significance level, a persistence)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not 0.0 < float(x) < 1.0:
        raise InputError(f"`{name}` must be {what} strictly between 0 and 1, got {x!r}")
    return float(x)


def level(x, name: str = "significance") -> float:
    """A significance level in (0, 1)."""
    if type(x) is float and 0.0 < x < 1.0:  # the usual case, without the ABC check (small calls)
        return x
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not 0.0 < float(x) < 1.0:
        raise InputError(f"`{name}` must be a level in (0, 1), got {x!r}")
    return float(x)


def flag(x, name: str) -> bool:
    """``x`` if it is True or False."""
    if not isinstance(x, (bool, np.bool_)):
        raise InputError(f"`{name}` must be True or False, got {x!r}")
    return bool(x)


def float_array(x, name: str, *, ndim: tuple[int, ...] = (1, 2), finite: bool = True) -> np.ndarray:
    """``x`` as a C-contiguous float64 array of one of the dimensions ``ndim``, all finite."""
    try:
        arr = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be an array of numbers, got {type(x).__name__}") from None
    if arr.ndim not in ndim:
        raise InputError(f"`{name}` must have {' or '.join(map(str, ndim))} dimension(s), got shape {arr.shape}")
    if finite and not np.isfinite(arr).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise InputError(f"`{name}` must be finite: element {bad} is {arr[bad]}")
    return arr


def listing(items, limit: int = 10, fmt=str) -> str:
    """``items`` for a message: the first ``limit``, comma-separated, then "…" and the total
    when some were left out (a list that looks complete must be complete)."""
    items = list(items)
    shown = ", ".join(fmt(x) for x in items[:limit])
    return shown + (f", … ({len(items)} in all)" if len(items) > limit else "")


def not_a_regular_file(path) -> str | None:
    """What ``path`` is when it exists but is neither a regular file nor a directory (a FIFO,
    socket or device: "does not exist" would be wrong), else None."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "not a regular file"
    return f"{path} is {kind}: fastrisk reads its inputs more than once; write the stream to a file first"
