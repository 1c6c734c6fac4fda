"""``fastrisk info``: describe a score matrix."""

from __future__ import annotations

import numpy as np

from fastrisk.cli._args import add_matrix_arguments, load_matrix


def _measures(args) -> list:
    """The measures of a one-file long table with a ``measure`` column, when ``--measure`` does
    not pick one (``fastrisk evaluate --matrix-out`` writes one for several measures); else [None]."""
    if args.measure is not None or args.qrels or len(args.files) != 1:
        return [None]
    import pyarrow.parquet as pq  # only for a Parquet file's measure column

    path = args.files[0]
    try:
        if str(path).lower().endswith((".parquet", ".pq")) and "measure" in pq.read_schema(path).names:
            column = pq.read_table(path, columns=["measure"]).column("measure")
            return list(dict.fromkeys(column.cast("string").to_pylist()))
    except (OSError, ValueError):
        pass  # not a readable Parquet file: read_matrix says what is wrong
    return [None]


def _cmd_info(args) -> None:
    measures = _measures(args)
    for k, measure in enumerate(measures):
        if measure is not None:
            args.measure = measure
        if k:
            print()
        _describe(load_matrix(args))


def _describe(matrix) -> None:
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
