"""Peak memory (RSS) of the CLI on a large matrix, beside the matrix's own size.

Run as a script (not collected by pytest: each command runs in a fresh process, whose peak
RSS the operating system reports through ``getrusage(RUSAGE_CHILDREN)``)::

    python benchmarks/bench_memory.py                    # 2,000 systems x 20,000 topics
    python benchmarks/bench_memory.py --systems 500 --topics 5000 --commands risk-per-topic

The matrix (uniform scores, seed 2014) is written once as native Parquet; every command
writes Parquet to a file, so the output's row group (1 Mi rows) is what the writer holds.
Aim (issue 15): peak RSS within 4x the matrix plus the output's row group. The baseline
row is ``info``, which only reads the matrix (the interpreter, numpy, pyarrow and numba
imports included). Note the machine load: ``os.getloadavg()`` is printed before each run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

COMMANDS = {
    "info": ["info", "{m}"],
    "risk": ["risk", "{m}", "--baseline", "s0", "--format", "parquet", "--out", "{o}"],
    "risk-per-topic": ["risk", "{m}", "--baseline", "s0", "--per-topic", "--format", "parquet", "--out", "{o}"],
    "bootstrap": ["bootstrap", "{m}", "--baseline", "s0", "--replicates", "1000", "--seed", "1", "--format",
                  "parquet", "--out", "{o}"],
    "table": ["table", "{m}", "--alpha", "0,1,5,10", "--format", "parquet", "--out", "{o}"],
}


def _matrix(path: Path, systems: int, topics: int) -> int:
    from fastrisk import ScoreMatrix, write_matrix

    values = np.random.default_rng(2014).random((systems, topics))
    write_matrix(ScoreMatrix(values, [f"s{i}" for i in range(systems)], [str(t) for t in range(topics)], "AP"), path)
    return values.nbytes


def _peak_rss_of(argv: list[str]) -> tuple[int, float, int]:
    """(peak RSS in bytes, wall seconds, exit status) of ``python -m fastrisk argv`` in a new process."""
    code = ("import resource, subprocess, sys; "
            "r = subprocess.run([sys.executable, '-m', 'fastrisk'] + sys.argv[1:], stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, check=True)
    wall = time.perf_counter() - t0
    kib, status = out.stdout.split()
    return int(kib) * 1024, wall, int(status)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=2000)
    parser.add_argument("--topics", type=int, default=20000)
    parser.add_argument("--commands", default=",".join(COMMANDS), help=f"comma-separated of {', '.join(COMMANDS)}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        m = Path(tmp) / "matrix.parquet"
        nbytes = _matrix(m, args.systems, args.topics)
        print(f"matrix {args.systems:,} x {args.topics:,}: {nbytes / 2**20:,.0f} MiB of float64; "
              f"{os.cpu_count()} cores")
        print(f"{'command':<16} {'peak RSS':>10} {'x matrix':>9} {'wall s':>8} {'output':>10}  load (1 min)")
        for name in args.commands.split(","):
            o = Path(tmp) / f"{name}.parquet"
            load = os.getloadavg()[0]
            rss, wall, status = _peak_rss_of([a.format(m=m, o=o) for a in COMMANDS[name]])
            size = f"{o.stat().st_size / 2**20:,.0f} MiB" if o.exists() else "-"
            flag = "" if status == 0 else f"  (exit {status})"
            print(f"{name:<16} {rss / 2**20:>8,.0f} MiB {rss / nbytes:>8.2f}x {wall:>8.1f} {size:>10}  {load:.2f}{flag}",
                  flush=True)
            if o.exists():
                o.unlink()


if __name__ == "__main__":
    main()
