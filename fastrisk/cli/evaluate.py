"""``fastrisk evaluate RUN... --qrels Q --measure AP --measure nDCG@20``: scores of TREC runs."""

from __future__ import annotations

import re
from pathlib import Path

from fastrisk.cli._output import add_format_options, write_table
from fastrisk.data.io import write_matrix
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
    measures = args.measure or ["nDCG@20", "ERR@20"]
    runs = read_runs(args.runs, pattern=args.pattern, threads=args.threads)
    result = evaluate(runs, args.qrels, measures, no_relevant=args.no_relevant, threads=args.threads)
    if args.matrix_out:
        several = len(result.measures) > 1
        for name in result.measures:
            write_matrix(result[name], matrix_path(args.matrix_out, name, several))
    write_table(result.to_arrow() if args.per_topic else result.means(), args.format, args.out)
