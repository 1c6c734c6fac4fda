"""The risk-null calibration (issue #28, `fastrisk.simulate.nulls`): cold, on a process pool.

A script, not a pytest-benchmark suite (a cold calibration of one collection is minutes):

    FASTRISK_CACHE=DIR fastrisk simulate fit --measure AP --no-risk-nulls --processes 2
    python benchmarks/bench_nulls.py --processes 2 DIR/simulate/*_ap-*.json

copies the fit files given into a temporary directory with their calibrations removed,
calibrates the three type-I nulls (URisk_1 = 0, URisk_5 = 0, E[s(d)] = 0) with
`fastrisk.simulate.fits.prepare_nulls` on a pool of ``--processes`` workers, and prints the
wall time, the CPU seconds of the parent and its workers, the load average before and after,
and the candidate pairs (calibrated + skipped). ``--baselines K`` calibrates only every k-th
baseline of each collection (K of them), for a sample when the machine is loaded.

Figures: docs/risk-tests.md, "Cost".
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from fastrisk.simulate import fits, nulls

RISK_NULLS = (nulls.RiskNull("urisk", 1.0), nulls.RiskNull("urisk", 5.0), nulls.RiskNull("smooth"))


def _cpu(who) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="fit files (fastrisk simulate fit writes them)")
    ap.add_argument("--processes", type=int, default=2, help="worker processes (0: in-process)")
    ap.add_argument("--baselines", type=int, default=0, help="a sample: K baselines of each collection")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-nulls-"))
    for f in args.files:
        doc = json.loads(Path(f).read_text(encoding="utf-8"))
        doc["nulls"] = {}
        doc["sha256"] = fits.fit_checksum(doc)
        (tmp / Path(f).name).write_text(json.dumps(doc), encoding="utf-8")
    loaded = [fits.load_fit(p) for p in sorted(tmp.glob("*.json"))]
    if args.baselines:
        real = nulls.protocol_baselines

        def sample(margins):
            base = real(margins)
            return base[::max(1, len(base) // args.baselines)][:args.baselines]

        nulls.protocol_baselines = fits.protocol_baselines = sample
    load0 = os.getloadavg()
    cpu0, wall0 = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    if args.processes:
        with cf.ProcessPoolExecutor(args.processes) as ex:
            fits.prepare_nulls(loaded, RISK_NULLS, [0.0], executor=ex)
    else:
        fits.prepare_nulls(loaded, RISK_NULLS, [0.0])
    wall = time.perf_counter() - wall0
    cpu = _cpu(resource.RUSAGE_SELF) - cpu0 + _cpu(resource.RUSAGE_CHILDREN)
    load1 = os.getloadavg()
    done = skipped = calls = 0
    for f in loaded:
        for key, doc in f.nulls.items():
            n = sum(len(v) for v in doc["pairs"].values())
            done, skipped, calls = done + n, skipped + doc["failed"], calls + doc["calls"]
            print(f"{f.name} {key}: {n} calibrated, {doc['failed']} skipped")
    n = done + skipped
    print(f"{len(loaded)} collection(s), {n} candidate pairs ({done} calibrated, {skipped} skipped, {calls} "
          f"effTransform calls): wall {wall:.1f} s, CPU {cpu:.1f} s ({1000 * cpu / max(n, 1):.1f} ms a pair), "
          f"load {load0[0]:.1f} -> {load1[0]:.1f}; calibrated fits in {tmp}")


if __name__ == "__main__":
    main()
