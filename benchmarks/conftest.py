"""Shared fixtures for the pytest-benchmark suites."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import numpy as np
import pytest

BENCH_DATA = Path(__file__).resolve().parent.parent / "bench_data"


@pytest.fixture
def rng():
    return np.random.default_rng(20121)


def memory_budget_ok(nbytes: int, fraction: float = 0.25) -> bool:
    """True if an allocation of ``nbytes`` fits in ``fraction`` of the available memory."""
    try:
        import os

        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return True
    return nbytes <= fraction * avail


def load_average() -> tuple[float, float, float] | None:
    """The 1, 5 and 15 minute load averages (None where the platform has none)."""
    try:
        return tuple(round(x, 2) for x in os.getloadavg())
    except (OSError, AttributeError):
        return None


@pytest.fixture(autouse=True)
def _record_load(request):
    """Every benchmark records the machine's load average before and after it ran (extra_info)."""
    if "benchmark" not in request.fixturenames:
        yield
        return
    bench = request.getfixturevalue("benchmark")
    bench.extra_info["loadavg_before"] = load_average()
    yield
    bench.extra_info["loadavg_after"] = load_average()


def side_by_side(benchmark, ours, peers: dict, *, blocks: int = 21, block_seconds: float = 0.02,
                 aim: float | None = None) -> dict:
    """Time ``ours`` and every peer in alternating blocks in this one session, and record in
    ``benchmark.extra_info`` the median seconds per call of each, the ratio peer / ours of the
    medians, the ``aim`` and the load average; ``benchmark`` itself then times ``ours``.

    Alternating blocks (the order rotates every block) expose both sides to the same load, so
    the ratio stays meaningful on a busy machine where absolute times do not. Returns the ratios.
    """
    funcs = {"fastrisk": ours, **peers}
    number = {}
    for name, f in funcs.items():  # calibrate: calls per block of ~block_seconds
        f()
        t0 = time.perf_counter()
        f()
        number[name] = max(1, int(block_seconds / max(time.perf_counter() - t0, 1e-7)))
    times: dict[str, list[float]] = {name: [] for name in funcs}
    names = list(funcs)
    for b in range(blocks):
        for name in names[b % len(names):] + names[:b % len(names)]:
            f, n = funcs[name], number[name]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            times[name].append((time.perf_counter() - t0) / n)
    medians = {name: statistics.median(t) for name, t in times.items()}
    ratios = {name: medians[name] / medians["fastrisk"] for name in peers}
    benchmark.extra_info.update({
        "median_seconds": medians, "ratio_peer_over_fastrisk": ratios, "aim": aim, "loadavg": load_average()})
    benchmark(ours)
    return ratios
