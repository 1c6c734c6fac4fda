"""``fastrisk bootstrap``: bootstrap CIs, SEs and p-values of every system at once."""

from __future__ import annotations

from fastrisk.cli._args import alpha_kwargs
from fastrisk.cli._output import write_table
from fastrisk.cli._resampling import _common, _inputs, _progress, _science, announce_seed, run_seed
from fastrisk.inference.resampling import bootstrap


def _cmd_bootstrap(args) -> None:
    data, base, kw = _inputs(args)
    seed = run_seed(args, "bootstrap")
    res = bootstrap(data, base, replicates=args.replicates, method=args.method,
                    confidence_level=args.confidence_level, alternative=args.alternative, test=args.test,
                    rng=seed, keep_replicates=False, threads=args.threads, progress=_progress(args),
                    **kw, **_science(args), **alpha_kwargs(args))
    announce_seed(args, "bootstrap", seed)
    if args.format == "table" and args.out is None:  # a reader of the text table sees what ci_low/ci_high are
        print(caption(res, seed))
    write_table(res.to_arrow(), args.format, args.out)


#: The intervals' names as their authors give them.
_METHODS = {"percentile": "percentile", "basic": "basic", "bca": "BCa", "studentized": "studentized (bootstrap-t)"}


def caption(res, seed: int) -> str:
    """The line above the text table: the interval's method and level, the test, the replicates
    and the seed given as ``rng=`` (``--seed``, the same as ``res.seed``)."""
    return (f"# ci_low, ci_high: {res.confidence_level:.4g} {_METHODS.get(res.method, res.method)} bootstrap "
            f"interval ({res.alternative}); pvalue: {res.test} test; {res.replicates:,} replicates, seed "
            f"{seed}")


def register(sub) -> None:
    p = sub.add_parser("bootstrap", help="bootstrap CIs, SEs and p-values of every system's URisk",
                       description="Bootstrap over topics of URisk (mean risk-reward score) of every system "
                                   "against a baseline (or every pair), at one or more alpha.")
    _common(p)
    p.add_argument("--method", choices=("percentile", "basic", "bca", "studentized"), default="bca",
                   help="confidence interval (default bca)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--test", choices=("shift", "t"), default="shift",
                   help="p-value: shifted replicates (shift) or shifted and studentised (t)")
    p.set_defaults(func=_cmd_bootstrap)
