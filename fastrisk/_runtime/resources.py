"""Memory estimates checked before large allocations.

`check_memory` refuses, with a `ResourceError` that gives the
estimate, what is available and the option that avoids it, any request above the memory
available now: ``MemAvailable`` of ``/proc/meminfo`` and, in a container, the cgroup's
limit minus its usage; ``os.sysconf`` elsewhere; no check where neither is known.
"""

from __future__ import annotations

import math
import os
import sys
import time

from fastrisk.errors import ResourceError


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


#: Seconds a reading of the available memory is reused: the guards run on every call, and
#: users call fastrisk in loops; the estimates they compare with are rough anyway.
MEMORY_READING_TTL = 1.0
_reading: tuple[float, int | None] = (-math.inf, None)


def available_memory() -> int | None:
    """Bytes that can be allocated now without swapping, or None if unknown (read at most once
    every `MEMORY_READING_TTL` seconds)."""
    global _reading
    now = time.monotonic()
    if now - _reading[0] < MEMORY_READING_TTL:
        return _reading[1]
    _reading = (now, _read_available_memory())
    return _reading[1]


def _read_available_memory() -> int | None:
    found = []
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    limit, used = _read_int("/sys/fs/cgroup/memory.max"), _read_int("/sys/fs/cgroup/memory.current")
    if limit is not None and used is not None:
        found.append(max(limit - used, 0))
    return min(found) if found else None


#: The address space (``ulimit -v``) below which the command line refuses to start: loading
#: numba, SciPy (OpenBLAS and its threads) and pyarrow maps about 750 MiB on 2 cores (measured:
#: under 700 MiB an import fails, segfaults or OpenBLAS raises SIGINT; under 550 MiB it can hang).
MIN_ADDRESS_SPACE = 1 << 30


def address_space_limit() -> int | None:
    """The soft limit on this process's address space (``ulimit -v``, ``RLIMIT_AS``) in bytes,
    or None when there is none (or the platform has no such limit)."""
    if sys.platform == "win32":
        return None
    import resource  # Unix only: imported where it exists

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def address_space_problem(loading: BaseException | None = None) -> str | None:
    """What to tell a user whose address-space limit is too small for fastrisk to load its
    libraries (None if there is no limit, or, without ``loading``, when it is at least
    `MIN_ADDRESS_SPACE`). ``loading``: the error an import raised under the limit."""
    limit = address_space_limit()
    if limit is None or (loading is None and limit >= MIN_ADDRESS_SPACE):
        return None
    lines = str(loading).strip().splitlines() if loading is not None else []
    why = f" ({type(loading).__name__}: {lines[0] if lines else ''})" if loading is not None else ""
    floor = max(MIN_ADDRESS_SPACE, 2 * limit if limit >= MIN_ADDRESS_SPACE else 0)
    return (f"the memory limit (ulimit -v) is {format_bytes(limit)}, too small to load numba, SciPy and pyarrow"
            f"{why}: raise it to at least {format_bytes(floor)} (ulimit -v {floor // 1024}) or remove it "
            "(ulimit -v unlimited)")


def format_bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def check_memory(nbytes: float, what: str, avoid: str, *, available: int | None = None) -> None:
    """Raise `ResourceError` if ``nbytes`` exceed the available memory.

    ``what`` says what would be allocated (``"Tukey HSD with 10**12 replicates"``), ``avoid``
    the option that avoids it (``"use fewer replicates"``)."""
    free = available_memory() if available is None else available
    if free is not None and nbytes > free:
        raise ResourceError(f"{what} needs about {format_bytes(nbytes)} of memory, {format_bytes(free)} is "
                            f"available: {avoid}")
