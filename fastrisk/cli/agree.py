"""``fastrisk agree``: how two scorings of the same systems agree on their ordering.

Three ways to give the two scorings:

- one table and two of its columns: ``fastrisk agree risk.csv --a urisk_linear --b urisk_smooth``
  (one row per system, systems named by ``--system``, default ``system``);
- two tables and one column: ``fastrisk agree base1.csv base2.csv --column urisk``;
- two score matrices (any format ``fastrisk risk`` reads): ``fastrisk agree err20.csv
  ndcg20.csv`` orders the systems by their mean score over topics in each.

Reported: Kendall's tau-b (and p-value) and RBO (ext, min, max, res; ``--p``, ``--ties``) of
the two orderings (higher score first unless ``--ascending``; equal scores are ties), or
with ``--prefixes`` the RBO over growing prefix depths (Benham et al. 2019, Figure 4).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from fastrisk.cli._args import parse_topics
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.data.io import read_matrix, read_table
from fastrisk.errors import InputError
from fastrisk.measures.agreement import kendall_tau, prefix_agreement, rbo_matrix


def _column_scores(path: str, table: pa.Table, column: str, system: str) -> dict:
    """{system: score} from one numeric column of a one-row-per-system table."""
    names = table.column_names
    for needed, what in ((column, "score column"), (system, "system column (--system)")):
        if needed not in names:
            raise InputError(f"{path}: no {what} {needed!r}; the columns are {', '.join(names)}")
    try:
        values = table.column(column).cast(pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise InputError(f"{path}: column {column!r} is not numeric") from None
    labels = [str(s) for s in table.column(system).to_pylist()]
    out: dict = {}
    for i, (s, v) in enumerate(zip(labels, values)):
        if s in out:
            raise InputError(f"{path}: system {s!r} appears more than once (data row {i + 1}); "
                             "give one row per system")
        if not np.isfinite(v):
            raise InputError(f"{path}: column {column!r} has no finite score for system {s!r} "
                             f"(data row {i + 1})")
        out[s] = float(v)
    if len(out) < 2:
        raise InputError(f"{path}: rank agreement needs at least 2 systems, got {len(out)}")
    return out


def _matrix_means(path: str, args) -> dict:
    m = read_matrix(path, format=args.input_format, measure=args.measure,
                    topics=parse_topics(args.topics), missing=args.missing)
    return dict(zip(m.systems, m.values.mean(axis=1).tolist()))


def _align(a: dict, b: dict, name_a: str, name_b: str, common: bool):
    if common:
        systems = [s for s in a if s in b]
        if len(systems) < 2:
            raise InputError(f"{name_a} and {name_b} share {len(systems)} systems; at least 2 are needed")
    else:
        only_a = [s for s in a if s not in b]
        only_b = [s for s in b if s not in a]
        if only_a or only_b:
            parts = []
            if only_a:
                parts.append(f"only in {name_a}: {', '.join(only_a[:5])}{' ...' if len(only_a) > 5 else ''}")
            if only_b:
                parts.append(f"only in {name_b}: {', '.join(only_b[:5])}{' ...' if len(only_b) > 5 else ''}")
            raise InputError(f"the two scorings must cover the same systems ({'; '.join(parts)}); "
                             "pass --common to compare the systems they share")
        systems = list(a)
    return systems, np.array([a[s] for s in systems]), np.array([b[s] for s in systems])


def _scorings(args):
    """(name_a, name_b, systems, scores_a, scores_b) from the parsed options."""
    files = args.files
    if len(files) > 2:
        raise InputError(f"give one file with --a/--b or two files, got {len(files)} files")
    if args.a is not None or args.b is not None:
        if args.a is None or args.b is None:
            raise InputError("--a and --b go together: the two score columns to compare")
        if len(files) != 1 or args.column is not None:
            raise InputError("--a/--b compare two columns of ONE file; for two files use --column")
        table = read_table(files[0], system=args.system)
        a = _column_scores(files[0], table, args.a, args.system)
        b = _column_scores(files[0], table, args.b, args.system)
        return (args.a, args.b) + _align(a, b, args.a, args.b, args.common)
    if len(files) != 2:
        raise InputError("give two score columns of one file (--a COL --b COL) or two files")
    if args.column is not None:
        a = _column_scores(files[0], read_table(files[0], system=args.system), args.column, args.system)
        b = _column_scores(files[1], read_table(files[1], system=args.system), args.column, args.system)
    else:
        a = _matrix_means(files[0], args)
        b = _matrix_means(files[1], args)
    return (files[0], files[1]) + _align(a, b, files[0], files[1], args.common)


def _parse_depths(text: str, n: int):
    if text == "all":
        return None
    try:
        depths = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--prefixes must be 'all' or comma-separated depths, got {text!r}") from None
    if not depths:
        raise InputError("--prefixes must list at least one depth")
    bad = [d for d in depths if not 1 <= d <= n]
    if bad:
        raise InputError(f"--prefixes depths must lie in 1..{n} (the number of systems), got {bad[0]}")
    return depths


def _cmd_agree(args) -> None:
    if not 0.0 < args.p < 1.0:
        raise InputError(f"--p (persistence) must be strictly between 0 and 1, got {args.p}")
    name_a, name_b, systems, xa, xb = _scorings(args)
    if args.ascending:
        xa, xb = -xa, -xb
    n = len(systems)
    if args.prefixes is not None:
        res = prefix_agreement(xa, xb, depths=_parse_depths(args.prefixes, n), p=args.p,
                               ties=args.ties, threads=args.threads)
        table = res.to_arrow()
        table = table.rename_columns([c if c not in ("ext", "min", "max", "res") else f"rbo_{c}"
                                      for c in table.column_names])
    else:
        tau = kendall_tau(xa, xb)
        r = rbo_matrix(np.vstack([xa, xb]), p=args.p, ties=args.ties, threads=args.threads)
        table = pa.table({
            "a": [name_a], "b": [name_b], "systems": pa.array([n], pa.int64()),
            "kendall_tau": [tau.statistic], "kendall_pvalue": [tau.pvalue],
            "p": [args.p], "ties": [args.ties],
            "rbo_ext": [float(r.ext[0, 1])], "rbo_min": [float(r.min[0, 1])],
            "rbo_max": [float(r.max[0, 1])], "rbo_res": [float(r.res[0, 1])],
        })
    write_table(table, args.format, args.out)


def register(sub) -> None:
    p = sub.add_parser(
        "agree", help="rank agreement (Kendall tau, RBO) of two scorings of the same systems",
        description="Kendall's tau-b and rank-biased overlap between the system orderings two scorings "
                    "induce: two columns of one table (--a, --b), one column of two tables (--column), "
                    "or two score matrices (systems ordered by mean score). Higher scores rank first; "
                    "equal scores are ties.")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="one table with --a/--b, or two tables (--column) or score matrices")
    p.add_argument("--a", metavar="COL", help="first score column of a one-row-per-system table")
    p.add_argument("--b", metavar="COL", help="second score column of the same table")
    p.add_argument("--column", metavar="COL", help="the score column of each of two tables")
    p.add_argument("--system", default="system", metavar="COL", help="system-name column (default: system)")
    p.add_argument("--common", action="store_true", help="compare only the systems both scorings cover")
    p.add_argument("--ascending", action="store_true",
                   help="lower scores rank first (e.g. minus-convention risk, where larger is riskier)")
    p.add_argument("--p", type=float, default=0.9, help="RBO persistence, 0 < p < 1 (default 0.9)")
    p.add_argument("--ties", choices=("a", "b", "w"), default="a",
                   help="RBO treatment of ties (Corsi & Urbano 2024): a = expected over random "
                        "tie-breaking (default), b = corrected for ties, w = ties share the rank")
    p.add_argument("--prefixes", nargs="?", const="all", metavar="DEPTHS",
                   help="RBO of the top-k prefixes for k = 1..n (or the given comma-separated depths)")
    p.add_argument("--input-format", choices=("csv", "csv-long", "csv-wide", "parquet", "ipc", "trec_eval",
                                              "ir_measures"), help="score-matrix format (default: guessed)")
    p.add_argument("--measure", help="measure to read from trec_eval/ir_measures score matrices")
    p.add_argument("--topics", help="topic ids of a wide CSV's rows, e.g. 151-200")
    p.add_argument("--missing", choices=("raise", "drop", "zero"), default="raise",
                   help="missing (system, topic) scores in a score matrix (default: raise)")
    p.add_argument("--threads", type=int, help="numba threads (default: all cores)")
    add_format_options(p)
    p.set_defaults(func=_cmd_agree)
