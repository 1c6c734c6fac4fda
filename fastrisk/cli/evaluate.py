"""``fastrisk evaluate RUN... --qrels Q --measure nDCG@20 --measure ERR@20``: per-topic scores."""

from __future__ import annotations

import re
from pathlib import Path

from fastrisk.cli._output import add_format_options, write_table


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate", help="per-topic scores of TREC runs (gdeval / ir_measures names)",
        description="Score TREC run files against a qrels file; long output system, topic, measure, value.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files (plain or .gz) or directories")
    p.add_argument("--qrels", required=True, help="TREC qrels file")
    p.add_argument("--measure", action="append", metavar="NAME",
                   help="measure, e.g. nDCG@20, ERR@20, P@10, 'RBP(rel=1,p=0.8)@10' (repeatable; "
                        "default nDCG@20 and ERR@20)")
    p.add_argument("--matrix-out", metavar="PATH",
                   help="also write each measure's ScoreMatrix (Parquet/IPC/CSV by suffix); with several "
                        "measures the measure name is added before the suffix")
    p.add_argument("--threads", type=int, help="numba threads (default: all cores)")
    add_format_options(p)
    p.set_defaults(func=run)


def matrix_path(path: str, measure: str, several: bool) -> Path:
    path = Path(path)
    if not several:
        return path
    tag = re.sub(r"[^A-Za-z0-9.@=_-]+", "_", measure).strip("_")
    return path.with_name(f"{path.stem}.{tag}{path.suffix}")


def run(args) -> None:
    from fastrisk.metrics import evaluate

    measures = args.measure or ["nDCG@20", "ERR@20"]
    result = evaluate(args.runs, args.qrels, measures, threads=args.threads)
    if args.matrix_out:
        several = len(result.measures) > 1
        for name in result.measures:
            result.matrices[name].write(matrix_path(args.matrix_out, name, several))
    write_table(result.to_arrow(), args.format, args.out)
