"""``fastrisk test``: significance of every system against a baseline (or every pair), corrected."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from fastrisk._runtime.validation import level
from fastrisk.cli._args import add_correction_argument, alpha_kwargs, load_matrix
from fastrisk.cli._output import write_table
from fastrisk.cli._resampling import _common, _inputs, _progress, _science, announce_seed, run_seed
from fastrisk.errors import InputError
from fastrisk.inference.multiple import adjust_pvalues, correction_name, tukey_hsd
from fastrisk.inference.resampling import bootstrap, permutation_test, t_test


def _cmd_test(args) -> None:
    level(args.level, "--level")  # before any work: a level of 2 or nan would flag everything or nothing

    correction_name(args.correction, "--correction")  # refused before any work
    if args.method == "tukey":
        if args.baseline is not None:
            raise InputError("--method tukey compares every pair of systems; drop --baseline")
        matrix = load_matrix(args)
        seed = run_seed(args, "test")
        res = tukey_hsd(matrix, replicates=args.replicates, rng=seed, threads=args.threads)
        announce_seed(args, "test", seed)
        table = res.to_arrow()
        table = table.append_column("pvalue_adjusted", pa.array(res.pvalue))  # Tukey HSD is family-wise already
        table = table.append_column("family_size", pa.array(np.full(len(res.pvalue), len(res.pvalue))))
        table = table.append_column("significant", pa.array(res.pvalue <= args.level))
        write_table(table, args.format, args.out)
        return
    data, base, kw = _inputs(args)
    common = dict(alternative=args.alternative, **kw, **_science(args), **alpha_kwargs(args))
    seed = None if args.method == "t" else run_seed(args, "test")
    if args.method == "t":
        res = t_test(data, base, **common)
    elif args.method == "bootstrap":
        res = bootstrap(data, base, replicates=args.replicates, test="t", method="percentile", rng=seed,
                        keep_replicates=False, threads=args.threads, progress=_progress(args), **common)
    else:
        res = permutation_test(data, base, replicates=args.replicates, rng=seed, keep_replicates=False,
                               threads=args.threads, progress=_progress(args), **common)
    if seed is not None:
        announce_seed(args, "test", seed)
    p = res.pvalue.copy()  # [alpha, system]: adjusted over the systems at each alpha
    # NaN p-values (the baseline itself, zero variance) are no members of the family
    adjusted = adjust_pvalues(p, args.correction, axis=-1, level=args.level)
    family = np.broadcast_to(np.reshape(adjusted.m, (-1, 1)), p.shape)
    table = res.to_arrow().select(["system", "baseline", "alpha", "loss_weight", "urisk", "statistic", "pvalue"])
    table = table.append_column("pvalue_adjusted", pa.array(np.asarray(adjusted).reshape(-1)))
    table = table.append_column("family_size", pa.array(family.reshape(-1)))
    table = table.append_column("significant", pa.array(np.asarray(adjusted).reshape(-1) <= args.level))
    write_table(table, args.format, args.out)


def register(sub) -> None:
    p = sub.add_parser("test", help="significance of every system vs a baseline (or every pair), corrected",
                       description="Paired tests of URisk = 0 for every system against a baseline (or every "
                                   "pair), with p-values adjusted for multiple comparisons.")
    _common(p)
    p.add_argument("--method", choices=("t", "bootstrap", "permutation", "tukey"), default="t",
                   help="t: paired t (TRisk); bootstrap: studentised bootstrap test; permutation: randomisation "
                        "(sign flips); tukey: randomised Tukey HSD over all pairs (default t)")
    add_correction_argument(p, "the systems at each alpha")
    p.add_argument("--level", type=float, default=0.05, help="significance level (default 0.05)")
    p.set_defaults(func=_cmd_test)
