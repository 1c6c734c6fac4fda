"""``fastrisk bootstrap`` and ``fastrisk test``: resampling every system of a matrix at once."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from fastrisk.cli._args import (
    add_alpha_arguments,
    add_baseline_arguments,
    add_matrix_arguments,
    alpha_kwargs,
    load_matrix,
    load_matrix_and_baseline,
)
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.errors import InputError


def _inputs(args):
    """(data, baseline, keyword arguments) for the resampling functions."""
    if args.pairs:
        if args.baseline is not None:
            raise InputError("--pairs compares every system with every other; drop --baseline")
        return load_matrix(args), None, {"pairs": True}
    if args.baseline is None:
        raise InputError("--baseline is required (or --pairs for all pairs of systems)")
    matrix, base = load_matrix_and_baseline(args)
    return matrix, base, {}


def _progress(args):
    return False if args.no_progress else None


def _cmd_bootstrap(args) -> None:
    from fastrisk.resampling import bootstrap

    data, base, kw = _inputs(args)
    res = bootstrap(data, base, replicates=args.replicates, method=args.method,
                    confidence_level=args.confidence_level, alternative=args.alternative, test=args.test,
                    rng=args.seed, keep_replicates=False, threads=args.threads, progress=_progress(args),
                    **kw, **_science(args), **alpha_kwargs(args))
    write_table(res.to_arrow(), args.format, args.out)


def _science(args) -> dict:
    """The options the library applies: the sign convention and leaving out the baseline itself."""
    return {"convention": args.convention, "exclude_self": not args.pairs}


def _cmd_test(args) -> None:
    from fastrisk._validation import level
    from fastrisk.multiple import adjust_pvalues, tukey_hsd
    from fastrisk.resampling import bootstrap, permutation_test, t_test

    level(args.level, "--level")  # before any work: a level of 2 or nan would flag everything or nothing

    if args.method == "tukey":
        if args.baseline is not None:
            raise InputError("--method tukey compares every pair of systems; drop --baseline")
        res = tukey_hsd(load_matrix(args), replicates=args.replicates, rng=args.seed, threads=args.threads)
        table = res.to_arrow()
        table = table.append_column("pvalue_adjusted", pa.array(res.pvalue))  # Tukey HSD is family-wise already
        table = table.append_column("family_size", pa.array(np.full(len(res.pvalue), len(res.pvalue))))
        table = table.append_column("significant", pa.array(res.pvalue <= args.level))
        write_table(table, args.format, args.out)
        return
    data, base, kw = _inputs(args)
    common = dict(alternative=args.alternative, **kw, **_science(args), **alpha_kwargs(args))
    if args.method == "t":
        res = t_test(data, base, **common)
    elif args.method == "bootstrap":
        res = bootstrap(data, base, replicates=args.replicates, test="t", method="percentile", rng=args.seed,
                        keep_replicates=False, threads=args.threads, progress=_progress(args), **common)
    else:
        res = permutation_test(data, base, replicates=args.replicates, rng=args.seed, keep_replicates=False,
                               threads=args.threads, progress=_progress(args), **common)
    p = res.pvalue.copy()  # [alpha, system]: adjusted over the systems at each alpha
    # NaN p-values (the baseline itself, zero variance) are no members of the family
    adjusted = adjust_pvalues(p, args.correction, axis=-1)
    family = np.broadcast_to(np.reshape(adjusted.m, (-1, 1)), p.shape)
    table = res.to_arrow()
    keep = ["system", "baseline", "alpha", "loss_weight", "statistic", "pvalue"]
    table = table.select(keep + (["t"] if "t" in table.column_names else []))
    table = table.append_column("pvalue_adjusted", pa.array(np.asarray(adjusted).reshape(-1)))
    table = table.append_column("family_size", pa.array(family.reshape(-1)))
    table = table.append_column("significant", pa.array(np.asarray(adjusted).reshape(-1) <= args.level))
    write_table(table, args.format, args.out)


def _common(p, default_method: str | None = None) -> None:
    add_matrix_arguments(p)
    add_baseline_arguments(p, required=False)
    add_alpha_arguments(p, default="0")
    p.add_argument("--pairs", action="store_true", help="every pair of systems instead of a baseline")
    p.add_argument("--replicates", type=int, default=10000, help="bootstrap/permutation replicates (default 10000)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: fresh; same seed, same numbers)")
    p.add_argument("--alternative", choices=("two-sided", "less", "greater"), default="two-sided")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_format_options(p)


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

    p = sub.add_parser("test", help="significance of every system vs a baseline (or every pair), corrected",
                       description="Paired tests of URisk = 0 for every system against a baseline (or every "
                                   "pair), with p-values adjusted for multiple comparisons.")
    _common(p)
    p.add_argument("--method", choices=("t", "bootstrap", "permutation", "tukey"), default="t",
                   help="t: paired t (TRisk); bootstrap: studentised bootstrap test; permutation: randomisation "
                        "(sign flips); tukey: randomised Tukey HSD over all pairs (default t)")
    p.add_argument("--correction", choices=("holm", "bonferroni", "bh", "none"), default="holm",
                   help="multiple-comparison adjustment per alpha (default holm)")
    p.add_argument("--level", type=float, default=0.05, help="significance level (default 0.05)")
    p.set_defaults(func=_cmd_test)
