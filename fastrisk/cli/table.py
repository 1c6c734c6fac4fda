"""``fastrisk table``: URisk/TRisk of every system against every baseline."""

from __future__ import annotations

import pyarrow as pa

from fastrisk.cli._args import (
    add_alpha_arguments,
    add_baseline_arguments,
    add_inference_arguments,
    add_matrix_arguments,
    alpha_kwargs,
    inference_kwargs,
    load_matrix,
    load_matrix_and_baseline,
)
from fastrisk.cli._output import add_format_options, stream_options, write_table
from fastrisk.cli.risk import note_level
from fastrisk.core.long_forms import table_pieces
from fastrisk.core.tables import baseline_table
from fastrisk.data.streaming import write_pieces

TABLE_COLUMNS = ["system", "baseline", "alpha", "urisk", "trisk", "pvalue", "inference", "rank"]


def _cmd_table(args) -> None:
    kwargs = alpha_kwargs(args)
    if args.baseline is None or args.baseline == "all":
        matrix, baseline = load_matrix(args), "all"
    else:
        matrix, baseline = load_matrix_and_baseline(args)
    result = baseline_table(matrix, baseline, convention=args.convention, rank_ties=args.ties,
                            exclude_self=args.exclude_self, threads=args.threads, **kwargs, **inference_kwargs(args))
    del matrix, baseline  # the output needs only the result: free the scores before streaming it (peak memory)
    if args.agreement:
        write_table(_agreement_table(result, args.rbo_p), args.format, args.out)
        return
    note_level(result.inference, result.alpha, result.n_topics, args.format)
    _write_long(result, args.format, args.out)


def _write_long(result, fmt: str, out) -> None:
    """The table's long form ``[alpha, system, baseline]``, streamed a block of systems at a time."""
    rows = len(result.alpha) * len(result.systems) * len(result.baselines)
    write_pieces(table_pieces(result, TABLE_COLUMNS), fmt, out, rows=rows, columns=len(TABLE_COLUMNS),
                 **stream_options())


def _agreement_table(result, p: float):
    """One row per (alpha, pair of baselines): `RankAgreement.to_arrow` at every alpha."""
    return pa.concat_tables([result.agreement(alpha, p=p).to_arrow() for alpha in result.alpha])


def register(sub) -> None:
    p = sub.add_parser("table", help="URisk/TRisk of every system against every baseline",
                       description="URisk, TRisk, p-value and rank of every system against every system as "
                                   "the baseline (--baseline all, the default) or one baseline, at one or "
                                   "more alpha; one row per (system, baseline, alpha). The rank orders "
                                   "systems by URisk under each baseline and alpha (1 = best).")
    add_matrix_arguments(p)
    add_baseline_arguments(p, required=False)
    add_alpha_arguments(p)
    p.add_argument("--ties", choices=("average", "ordinal"), default="average",
                   help="ranks of tied systems: averaged (default) or in system order")
    p.add_argument("--exclude-self", action="store_true",
                   help="under each baseline that is a system, rank only the other systems (the baseline's "
                        "own rank is empty), as Dinçer, Ounis & Macdonald (ECIR 2014) Table 2 does")
    p.add_argument("--agreement", action="store_true",
                   help="instead of the table: how the rankings change across baselines (Kendall tau and "
                        "RBO for every pair of baselines, Friedman test and Kendall's W over all)")
    p.add_argument("--rbo-p", type=float, default=0.9, help="RBO persistence with --agreement (default 0.9)")
    add_inference_arguments(p)
    add_format_options(p)
    p.set_defaults(func=_cmd_table)
