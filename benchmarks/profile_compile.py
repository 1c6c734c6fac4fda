"""Which kernels compile on first use, and how long each takes (issue #20, "fast the first time").

Runs a Python script or a ``fastrisk`` CLI command in this process with numba's compile events
recorded, and prints one line per compiled (kernel, signature), slowest first. Run it with an
empty ``NUMBA_CACHE_DIR`` to see a fresh install's cost, and a second time on the same cache to
see which kernels never load from the cache (they compile again in every process).

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/profile_compile.py script.py
    NUMBA_CACHE_DIR=... python benchmarks/profile_compile.py -- table m.csv --alpha 5 --agreement
"""

from __future__ import annotations

import runpy
import sys
import time

from numba.core import event


class _Timer(event.Listener):
    """Seconds per compile, total and self (without the nested compiles of its callees)."""

    def __init__(self):
        self.stack: list = []
        self.rows: list = []

    def on_start(self, ev):
        self.stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        t0, nested = self.stack.pop()
        seconds = time.perf_counter() - t0
        if self.stack:
            self.stack[-1][1] += seconds
        data = ev.data or {}
        disp = data.get("dispatcher")
        func = getattr(disp, "py_func", None)
        name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', disp)}"
        self.rows.append((seconds - nested, seconds, name, str(data.get("args"))))


def main(argv: list[str]) -> None:
    timer = _Timer()
    event.register("numba:compile", timer)
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    try:
        if argv and argv[0] == "--":
            from fastrisk.cli import main as cli

            try:
                cli(argv[1:])
            except SystemExit:
                pass
        else:
            runpy.run_path(argv[0], run_name="__main__")
    finally:
        total = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
        print("    self    total", file=sys.stderr)
        for own, seconds, name, args in sorted(timer.rows, reverse=True):
            print(f"{own:8.2f} {seconds:8.2f}  {name}  {args[:120]}", file=sys.stderr)
        modules: dict = {}
        for own, _, name, _ in timer.rows:
            key = "numba internals" if name.startswith("numba.") else name.split(".<locals>")[0].rsplit(".", 1)[0]
            n, s = modules.get(key, (0, 0.0))
            modules[key] = (n + 1, s + own)
        print("by module: compiles, self seconds", file=sys.stderr)
        for key, (n, s) in sorted(modules.items(), key=lambda kv: -kv[1][1]):
            print(f"{n:6d} {s:8.2f}  {key}", file=sys.stderr)
        own_fastrisk = sum(r[0] for r in timer.rows if r[2].startswith("fastrisk."))
        print(f"self time in fastrisk kernels {own_fastrisk:.1f} s, in numba internals "
              f"{sum(r[0] for r in timer.rows) - own_fastrisk:.1f} s", file=sys.stderr)
        print(f"{len(timer.rows)} compiles; wall {total:.1f} s, CPU {cpu:.1f} s (this process; on a loaded "
              "machine the CPU seconds are the steadier figure)", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
