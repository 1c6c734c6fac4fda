"""``fastrisk simulate type1|power|type3``: error-rate studies of paired tests on simulated
collections (Urbano, Lima & Hanjalic 2019), run on the sweep engine."""

from __future__ import annotations

from fastrisk.cli._output import add_format_options, write_table
from fastrisk.errors import InputError


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--{name} must be comma-separated numbers, got {text!r}") from None


def _cmd_simulate(args) -> int:
    from fastrisk import simulate
    from fastrisk.cli.sweep import _executor

    common = dict(topics=args.topics, trials=args.trials, replicates=args.replicates, rng=args.seed,
                  trisk_alpha=_floats(args.trisk_alpha, "trisk-alpha"), min_diff=args.min_diff,
                  collections=args.collections.split(",") if args.collections else None,
                  progress=False if args.quiet else None)
    executor, close = _executor(args)
    try:
        if args.study == "type1":
            table = simulate.type1(args.measure, executor=executor, **common)
        else:
            fn = simulate.power if args.study == "power" else simulate.type3
            table = fn(args.measure, delta=_floats(args.delta, "delta"), executor=executor, **common)
    finally:
        close()
    write_table(table, args.format, args.out)
    return 0


def register(sub) -> None:
    from fastrisk.simulate.studies import MEASURES

    p = sub.add_parser("simulate", help="type I / power / type III error rates of paired tests on simulated "
                                        "collections",
                       description="Error-rate study after Urbano, Lima & Hanjalic (SIGIR 2019): per trial, a "
                                   "bundled collection, two of its runs and n simulated topics; the battery (t, "
                                   "Wilcoxon, sign, bootstrap, permutation, TRisk, ZRisk, GeoRisk) at every level.")
    p.add_argument("study", choices=("type1", "power", "type3"))
    p.add_argument("--measure", choices=tuple(MEASURES), default="ap", help="bundled collections of this measure")
    p.add_argument("--collections", help="comma-separated bundled matrices instead (e.g. web2012_err20)")
    p.add_argument("--topics", type=int, default=50, help="topics per simulated collection (default 50)")
    p.add_argument("--trials", type=int, default=10000, help="simulated pairs (default 10000)")
    p.add_argument("--replicates", type=int, default=1000,
                   help="bootstrap / permutation resamples per trial (default 1000; 0 skips those tests)")
    p.add_argument("--delta", default="0.01,0.02,0.05,0.1", help="effect sizes for power / type3")
    p.add_argument("--trisk-alpha", default="1,5", help="alphas of the TRisk tests (default 1,5)")
    p.add_argument("--min-diff", type=float, default=0.0, help="sign test: |d| <= this is a tie")
    p.add_argument("--seed", type=int, default=None, help="study seed (default: fresh entropy)")
    p.add_argument("--processes", type=int, metavar="N", help="run the jobs in N worker processes")
    p.add_argument("--scheduler", metavar="ADDR", help="Dask scheduler (tcp://HOST:PORT, or local:N)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_format_options(p)
    p.set_defaults(func=_cmd_simulate)
