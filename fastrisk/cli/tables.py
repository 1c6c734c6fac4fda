"""``fastrisk table`` (URisk/TRisk against every baseline) and ``fastrisk zrisk`` (ZRisk/GeoRisk)."""

from __future__ import annotations

from fastrisk.cli._output import add_format_options, write_table
from fastrisk.cli.risk import (add_alpha_arguments, add_baseline_arguments, add_matrix_arguments, alpha_kwargs,
                               load_matrix, load_matrix_and_baseline)

TABLE_COLUMNS = ["system", "baseline", "alpha", "urisk", "trisk", "p_value", "rank"]
ZRISK_COLUMNS = ["system", "alpha", "loss_weight", "convention", "zrisk", "georisk"]


def _cmd_table(args) -> None:
    from fastrisk.tables import baseline_table

    kwargs = alpha_kwargs(args)
    if args.baseline is None or args.baseline == "all":
        matrix, baseline = load_matrix(args), "all"
    else:
        matrix, baseline = load_matrix_and_baseline(args)
    result = baseline_table(matrix, baseline, convention=args.convention, ties=args.ties, threads=args.threads,
                            **kwargs)
    write_table(result.to_arrow().select(TABLE_COLUMNS), args.format, args.out)


def _cmd_zrisk(args) -> None:
    from fastrisk.zrisk import zrisk

    result = zrisk(load_matrix(args), convention=args.convention, threads=args.threads, **alpha_kwargs(args))
    write_table(result.to_arrow().select(ZRISK_COLUMNS), args.format, args.out)


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
    add_format_options(p)
    p.set_defaults(func=_cmd_table)

    p = sub.add_parser("zrisk", help="ZRisk and GeoRisk of every system over the whole matrix",
                       description="ZRisk and GeoRisk (Dinçer, Macdonald & Ounis 2016) of every system, every "
                                   "system being a baseline of every other; scores must be non-negative. "
                                   "--convention minus gives ZRisk- = -ZRisk and GeoRisk- (Benham et al. 2019).")
    add_matrix_arguments(p)
    add_alpha_arguments(p)
    add_format_options(p)
    p.set_defaults(func=_cmd_zrisk)
