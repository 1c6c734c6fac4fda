"""``fastrisk compare RUN... --qrels Q --measure AP --baseline B --test t --correction holm``:
PyTerrier's ``pt.Experiment`` / ranx's ``compare`` table with URisk and TRisk at each α."""

from __future__ import annotations

from fastrisk._runtime.atomic import write_text
from fastrisk.cli._args import add_correction_argument, parse_floats, parse_names
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.cli.evaluate import MEASURE_HELP
from fastrisk.data.runs import read_runs
from fastrisk.inference.compare import TESTS, compare

VIEWS = ("experiment", "long", "perquery", "markdown", "latex")


def _baseline(values):
    if not values:
        return 0
    if any(v == "all" for v in values):
        return None
    out = [int(v) if v.lstrip("-").isdigit() else v for v in values]
    return out[0] if len(out) == 1 else out


def run(args) -> None:
    runs = read_runs(args.runs, pattern=args.pattern, threads=args.threads,
                     names=parse_names(args.names) if args.names else None)
    res = compare(runs, args.qrels, args.measure or ["nDCG@20", "ERR@20"], baseline=_baseline(args.baseline),
                  alpha=parse_floats(args.alpha, "--alpha"), test=args.test, correction=args.correction,
                  level=args.level, round=args.round, replicates=args.replicates, rng=args.seed,
                  no_relevant=args.no_relevant, threads=args.threads)
    if args.view in ("markdown", "latex"):
        text = res.to_markdown() if args.view == "markdown" else res.to_latex() + "\n"
        if args.out:
            write_text(args.out, text)
        else:
            print(text, end="")
        return
    table = {"experiment": res.table, "long": res.to_arrow, "perquery": res.perquery}[args.view]()
    write_table(table, args.format, args.out)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare", help="PyTerrier/ranx experiment table with URisk and TRisk (systems x measures vs a baseline)",
        description="Score TREC runs and compare every system with a baseline on each measure, as PyTerrier's "
                    "pt.Experiment and ranx's compare do: the mean (sum for NumRet, NumRel, NumQ), the topics "
                    "better (+) and worse (-) than the baseline, the paired test's p-value, the corrected p-value "
                    "and the rejection at --level, and URisk, TRisk and TRisk's p-value at each alpha.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files (plain or compressed) or directories")
    p.add_argument("--qrels", required=True, help="TREC qrels file, or an ir_datasets id in its local cache "
                                                  "(irds:antique/test)")
    p.add_argument("--measure", action="append", metavar="NAME", help=MEASURE_HELP + "; ranx's names too")
    p.add_argument("--baseline", action="append", metavar="SYSTEM",
                   help="baseline system, by name or position (repeatable: several baselines share the correction's "
                        "family; 'all': every system, ranx's all pairs; default: the first system)")
    p.add_argument("--alpha", default="0,1,5", help="risk sensitivities of the URisk/TRisk columns (default 0,1,5)")
    p.add_argument("--test", choices=TESTS, default="t",
                   help="paired test of the p-value columns (default t: Student's paired t = TRisk at alpha 0)")
    add_correction_argument(p, "a measure's comparisons")
    p.add_argument("--level", type=float, default=0.05, help="significance level of the reject column (default 0.05)")
    p.add_argument("--replicates", type=int, default=10000, help="bootstrap/permutation replicates (default 10000)")
    p.add_argument("--seed", type=int, help="seed of the bootstrap/permutation tests")
    p.add_argument("--names", help="comma-separated system names, one per run")
    p.add_argument("--round", type=int, help="digits of the means and per-topic values")
    p.add_argument("--no-relevant", choices=("skip", "keep"), default="skip",
                   help="topics judged without any relevant document: skip them (default) or score them")
    p.add_argument("--pattern", help="in run directories, read only files matching this glob")
    p.add_argument("--view", choices=VIEWS, default="experiment",
                   help="experiment: pt.Experiment's wide table (default); long: one row per measure, alpha, system, "
                        "baseline; perquery: name, qid, measure, value; markdown/latex: ranx's report")
    p.add_argument("--threads", type=int, help="numba threads (default: all cores)")
    add_format_options(p)
    p.set_defaults(func=run)
