"""What ``fastrisk bootstrap`` and ``fastrisk test`` share: inputs, options and common arguments;
and the seed of every command that draws random numbers (`run_seed`)."""

from __future__ import annotations

import sys

from fastrisk._runtime.rng import resolve_seed
from fastrisk.cli._args import (
    add_alpha_arguments,
    add_baseline_arguments,
    add_matrix_arguments,
    load_matrix,
    load_matrix_and_baseline,
)
from fastrisk.cli._output import add_format_options, record
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


def run_seed(args, command: str) -> int:
    """The seed a command runs with, the one it prints: ``--seed``, or, without it, a fresh one,
    printed on standard error by `announce_seed` once the command's work succeeded
    (``fastrisk COMMAND: seed N (--seed N repeats this run)``; a refused input prints its one-line
    error only).
    Either way the command passes it as ``rng=`` and records it as ``seed`` in its outputs'
    metadata, so that ``--seed N`` with a printed N gives the same output, byte for byte. (The
    library's results record the same N: ``rng=N`` repeats them.)"""
    if args.seed is not None:
        if args.seed < 0:
            raise InputError(f"--seed must be a non-negative integer, got {args.seed}")
        seed = args.seed
    else:
        seed = resolve_seed(None).recorded
    record(seed=seed)
    return seed


def announce_seed(args, command: str, seed: int) -> None:
    """Print the seed `run_seed` drew (none when ``--seed`` was given) on standard error."""
    if args.seed is None:
        print(f"fastrisk {command}: seed {seed} (--seed {seed} repeats this run)", file=sys.stderr)


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
    p.add_argument("--seed", type=int, default=None, help="random seed (default: fresh, printed on stderr; the same seed gives the same numbers)")
    p.add_argument("--alternative", choices=("two-sided", "less", "greater"), default="two-sided")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_format_options(p)
