"""What ``fastrisk bootstrap`` and ``fastrisk test`` share: inputs, options and common arguments."""

from __future__ import annotations

from fastrisk.cli._args import (
    add_alpha_arguments,
    add_baseline_arguments,
    add_matrix_arguments,
    load_matrix,
    load_matrix_and_baseline,
)
from fastrisk.cli._output import add_format_options
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


def _science(args) -> dict:
    """The options the library applies: the sign convention and leaving out the baseline itself."""
    return {"convention": args.convention, "exclude_self": not args.pairs}


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
