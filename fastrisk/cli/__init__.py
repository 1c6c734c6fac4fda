"""The ``fastrisk`` command. Each sub-command lives in its own module with a ``register``.

A module in ``_COMMANDS`` defines ``register(subparsers)``, which adds its parser and sets
``func`` (called with the parsed namespace; returns an exit status or None).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fastrisk.errors import InputError

_COMMANDS = ("risk", "tables", "resample", "evaluate", "pool_bias", "agree", "report", "sweep", "simulate", "ltr")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fastrisk",
        description="Risk-sensitive evaluation and meta-evaluation of retrieval systems.",
    )
    from fastrisk import __version__

    parser.add_argument("--version", action="version", version=f"fastrisk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMANDS:
        importlib.import_module(f"fastrisk.cli.{name}").register(sub)
    return parser


def main(argv=None) -> int:
    """Entry point; errors go to stderr with exit status 2 and no traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.func(args)
    except (InputError, OSError) as exc:
        print(f"fastrisk {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"fastrisk {args.command}: interrupted", file=sys.stderr)
        return 130
    return 0 if status is None else int(status)
