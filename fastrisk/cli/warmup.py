"""``fastrisk warmup``: compile and cache every kernel the quickstarts use, ahead of first use."""

from __future__ import annotations

import sys
import time


def _cmd_warmup(args) -> None:
    from fastrisk.cli._warmup import warmup  # imported when the command runs: keeps `fastrisk --help` fast

    start = time.perf_counter()

    def report(group, seconds, ok):
        print(f"{group:<11} {seconds:6.1f} s{'' if ok else '  FAILED'}", file=sys.stderr, flush=True)

    warmup(args.jobs, groups=args.group or None, report=report)
    print(f"kernels compiled and cached in {time.perf_counter() - start:.1f} s", file=sys.stderr)


def register(sub) -> None:
    from fastrisk.cli._warmup import GROUPS  # imported when the command runs: keeps `fastrisk --help` fast

    p = sub.add_parser("warmup", help="compile and cache the kernels ahead of first use (once per install)",
                       description="Compile numba's kernels for the calls of the README quickstarts on the "
                                   "bundled data and cache them on disk, a group per process, so that the "
                                   "first real call of each procedure loads them instead of compiling.")
    p.add_argument("--jobs", type=int, default=None, help="processes at once (default: the number of cores)")
    p.add_argument("--group", action="append", choices=list(GROUPS),
                   help="warm only this group (repeatable; default: all)")
    p.set_defaults(func=_cmd_warmup)
