"""Memory estimates checked before large allocations.

`check_memory` refuses, with a `ResourceError` that gives the
estimate, what is available and the option that avoids it, any request above the memory
available now: ``MemAvailable`` of ``/proc/meminfo`` and, in a container, the cgroup's
limit minus its usage; ``os.sysconf`` elsewhere; no check where neither is known.
"""

from __future__ import annotations

import math
import os
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
