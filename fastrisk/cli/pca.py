"""``fastrisk pca``: a PCA map of the systems, with virtual baselines projected."""

from __future__ import annotations

import sys

from fastrisk.cli._args import add_matrix_arguments, load_matrix, parse_names
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.core.baselines import VIRTUAL, virtual_baseline
from fastrisk.core.pca import pca
from fastrisk.errors import InputError


def _cmd_pca(args) -> None:
    matrix = load_matrix(args)
    kinds = parse_names(args.baselines) if args.baselines else []
    unknown = [k for k in kinds if k.lower() not in VIRTUAL]
    if unknown:
        raise InputError(f"--baselines takes {', '.join(VIRTUAL)}; got {', '.join(unknown)}")
    result = pca(matrix, args.components, extra=[virtual_baseline(matrix, k) for k in kinds] or None,
                 center=not args.uncentred)
    ratios = ", ".join(f"PC{j + 1} {100 * r:.1f}%" for j, r in enumerate(result.explained_variance_ratio))
    print(f"fastrisk pca: explained variance {ratios}", file=sys.stderr)
    write_table(result.coordinates(), args.format, args.out)


def register(sub) -> None:
    p = sub.add_parser("pca", help="PCA map of systems, with virtual baselines projected",
                       description="Principal components of the systems x topics matrix (topics as variables, "
                                   "centred); one row per system and per projected virtual baseline with its "
                                   "coordinates pc1..pcN. The explained variance goes to stderr.")
    add_matrix_arguments(p)
    p.add_argument("--components", type=int, default=2, help="components to keep (default 2)")
    p.add_argument("--uncentred", action="store_true",
                   help="decompose the raw matrix, as Dinçer, Ounis & Macdonald (ECIR 2014) report it")
    p.add_argument("--baselines", metavar="mean,median,max", help="virtual baselines to project as extra points")
    add_format_options(p)
    p.set_defaults(func=_cmd_pca)
