"""``fastrisk info``: describe a score matrix."""

from __future__ import annotations

import numpy as np

from fastrisk.cli._args import add_matrix_arguments, load_matrix


def _cmd_info(args) -> None:
    matrix = load_matrix(args)
    v = matrix.values
    means = v.mean(axis=1)
    lines = [
        f"{matrix!r}",
        f"measure:  {matrix.measure or '(unnamed)'}",
        f"systems:  {matrix.n_systems} ({', '.join(matrix.systems[:5])}{', ...' if matrix.n_systems > 5 else ''})",
        f"topics:   {matrix.n_topics} ({', '.join(matrix.topics[:5])}{', ...' if matrix.n_topics > 5 else ''})",
        f"scores:   min {v.min():.4f}, max {v.max():.4f}, mean {v.mean():.4f}",
        f"best system by mean: {matrix.systems[int(np.argmax(means))]} ({means.max():.4f})",
        f"negative scores: {'yes' if (v < 0).any() else 'no'}",
    ]
    print("\n".join(lines))


def register(sub) -> None:
    p = sub.add_parser("info", help="describe a score matrix")
    add_matrix_arguments(p)
    p.set_defaults(func=_cmd_info)
