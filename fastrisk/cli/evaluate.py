"""``fastrisk evaluate RUN... --qrels Q --measure AP --measure nDCG@20``: scores of TREC runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa

from fastrisk._runtime import atomic
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.data.io import write_csv, write_matrix
from fastrisk.data.runs import read_runs
from fastrisk.measures.metrics import evaluate

MEASURE_HELP = (
    "measure, as ir_measures names it (repeatable; default nDCG@20 and ERR@20): trec_eval's P@k, R@k, "
    "AP, AP@k, RR, RR@k, Rprec, nDCG, nDCG@k (linear gain), Bpref, infAP, Success@k, SetP, SetR, SetF, "
    "SetAP, IPrec@r, NumRet, NumRel, NumQ; gdeval's nDCG(dcg='exp-log2')@k and ERR@k (the TREC Web "
    "track's); RBP(rel=1,p=0.8)@k; Judged@k; rel= sets the relevance threshold, e.g. P(rel=2)@10; "
    "judged_only=True drops unjudged documents first (trec_eval -J); trec_eval's names (map, P_10, bpref, "
    "set_F, ...) are read too")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate", help="scores of TREC runs against qrels (ir_measures names)",
        description="Score TREC run files against a qrels file. Prints each system's mean over the scored "
                    "topics (the sum for the counts NumRet, NumRel and NumQ, as trec_eval and ir_measures); "
                    "--per-topic prints the long table measure, system, topic, value. Rankings are "
                    "by score descending, ties by document id descending (trec_eval, gdeval); a system "
                    "without results for a topic scores 0 on it (trec_eval -c).")
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files (plain or compressed) or directories")
    p.add_argument("--qrels", required=True, help="TREC qrels file")
    p.add_argument("--measure", action="append", metavar="NAME", help=MEASURE_HELP)
    p.add_argument("--no-relevant", choices=("skip", "keep"), default="skip",
                   help="topics judged without any relevant document: skip them with a warning (default, as "
                        "gdeval) or score them (as trec_eval)")
    p.add_argument("--pattern", help="in run directories, read only files matching this glob (e.g. '*.gz')")
    p.add_argument("--per-topic", action="store_true", help="print every (measure, system, topic) score")
    p.add_argument("--matrix-out", metavar="PATH",
                   help="also write the scores to PATH (Parquet/IPC/CSV by suffix): one measure as its "
                        "ScoreMatrix; several as one long table system, topic, measure, score, read per "
                        "measure with --measure (fastrisk.read_matrix(PATH, measure=...))")
    p.add_argument("--threads", type=int, help="numba threads (default: all cores)")
    add_format_options(p)
    p.set_defaults(func=run)


def write_matrices(result, path) -> str:
    """Write the scores of ``result`` (an `fastrisk.Evaluation`) to the one file ``path``
    (Parquet, IPC or CSV by its suffix, as `fastrisk.write_matrix`): one measure as its
    `ScoreMatrix` (the native layout), several as one long table ``system, topic, measure,
    score`` that `fastrisk.read_matrix` reads per measure (``measure=``) and ``fastrisk info``
    describes. Returns what was written, for the user."""
    path = Path(path)
    measures = list(result.measures)
    first = result[measures[0]]
    size = f"{first.n_systems} systems x {first.n_topics} topics"
    if len(measures) == 1:
        write_matrix(first, path)
        return f"wrote {path}: {measures[0]}, {size}"
    parts = []
    for name in measures:
        long = result[name].to_long()
        parts.append(long.add_column(2, "measure", pa.array([name] * long.num_rows, pa.string())))
    table = pa.concat_tables(parts)
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        atomic.write_parquet(table, path)
    elif suffix in (".arrow", ".ipc", ".feather"):
        import pyarrow.feather as feather  # pyarrow's Feather writer: only for an IPC --matrix-out

        with atomic.atomic_open(path, "wb") as fh:
            feather.write_feather(table, fh, compression="uncompressed")
    else:
        write_csv(table, path)
    return (f"wrote {path}: {', '.join(measures)}, {size} each, as one long table (system, topic, measure, score): "
            f"read one measure with --measure, e.g. fastrisk info {path} --measure {measures[0]}")


def run(args) -> None:
    measures = args.measure or ["nDCG@20", "ERR@20"]
    runs = read_runs(args.runs, pattern=args.pattern, threads=args.threads)
    result = evaluate(runs, args.qrels, measures, no_relevant=args.no_relevant, threads=args.threads)
    if args.matrix_out:
        print(f"fastrisk evaluate: {write_matrices(result, args.matrix_out)}", file=sys.stderr)
    write_table(result.to_arrow() if args.per_topic else result.means(), args.format, args.out)
