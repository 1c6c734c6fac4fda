"""``fastrisk zrisk``: ZRisk and GeoRisk of every system over the whole matrix."""

from __future__ import annotations

from fastrisk.cli._args import add_alpha_arguments, add_matrix_arguments, alpha_kwargs, load_matrix
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.core.zrisk import zrisk

ZRISK_COLUMNS = ["system", "alpha", "loss_weight", "convention", "zrisk", "georisk"]


def _cmd_zrisk(args) -> None:
    result = zrisk(load_matrix(args), convention=args.convention, threads=args.threads, **alpha_kwargs(args))
    write_table(result.to_arrow().select(ZRISK_COLUMNS), args.format, args.out)


def register(sub) -> None:
    p = sub.add_parser("zrisk", help="ZRisk and GeoRisk of every system over the whole matrix",
                       description="ZRisk and GeoRisk (Dinçer, Macdonald & Ounis 2016) of every system, every "
                                   "system being a baseline of every other; scores must be non-negative. "
                                   "--convention minus gives ZRisk- = -ZRisk and GeoRisk- (Benham et al. 2019).")
    add_matrix_arguments(p)
    add_alpha_arguments(p)
    add_format_options(p)
    p.set_defaults(func=_cmd_zrisk)
