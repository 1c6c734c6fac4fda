"""``fastrisk pool-bias RUN... --qrels Q``: Webber & Park's pooling-bias experiment."""

from __future__ import annotations

from fastrisk.cli._args import parse_floats
from fastrisk.cli._output import add_format_options, write_table
from fastrisk.cli._resampling import announce_seed, run_seed
from fastrisk.errors import InputError
from fastrisk.measures.pooling import pooling_comparison


def _ints(text: str, name: str) -> list[int]:
    values = parse_floats(text, name)
    if any(v != int(v) for v in values):
        raise InputError(f"{name} must be comma-separated integers, got {text!r}")
    return [int(v) for v in values]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "pool-bias", help="pooling bias and score adjustment (Webber & Park 2009)",
        description="Resampling experiment: pool W random systems to --depth, score another one "
                    "unpooled, and report the mean absolute error of unadjusted, leave-one-out, "
                    "mixed and common-topic adjusted scores (the paper's Tables 1-4), or the "
                    "distribution of the unpooled bias per pool width (Figure 1). Several --measure "
                    "options score each measure on the same draws, e.g. AP beside bpref, infAP and "
                    "condensed-list AP(judged_only=True), measures built for incomplete judgments.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files (plain or .gz) or directories")
    p.add_argument("--qrels", required=True, help="TREC qrels file (the 'true' judgments)")
    p.add_argument("--measure", action="append", metavar="NAME",
                   help="measure, as ir_measures names it (default RBP(rel=1,p=0.8)@10); repeat it to compare "
                        "measures on the same draws, e.g. --measure AP --measure Bpref --measure infAP --measure "
                        "'AP(judged_only=True)': the tables then have a measure column")
    p.add_argument("--depth", type=int, default=10, help="pool depth (default 10)")
    p.add_argument("--widths", help="pool widths (default: 2,4,10,20,40, those below the number of systems)")
    p.add_argument("--repeats", type=int, default=100, help="system samples per width, I (default 100)")
    p.add_argument("--common-topics", help="common-topic sizes n (default: 10,20,40,100, those below the "
                                           "number of topics)")
    p.add_argument("--topic-repeats", type=int, default=200, help="topic samples per n, J (default 200)")
    p.add_argument("--mode", choices=("assumed", "condensed"), default="assumed",
                   help="unjudged documents assumed irrelevant (default) or removed (condensed)")
    p.add_argument("--pooled-unjudged", choices=("unjudged", "nonrelevant"), default="unjudged",
                   help="a pooled document the qrels do not grade: unjudged (default; the mode decides) or "
                        "judged non-relevant, Webber & Park's protocol (with --mode condensed)")
    p.add_argument("--ideal", choices=("pool", "full"), default="pool",
                   help="normaliser of nDCG/AP/R-prec/recall in unpooled scores: from the positive "
                        "judgments inside the pool (default) or from every judgment of the topic")
    p.add_argument("--report", choices=("mae", "mae-long", "bias"), default="mae",
                   help="mae: one row per width (Tables 1-4); mae-long: width,n,estimator,mae; "
                        "bias: unpooled bias mean and quartiles per width (Figure 1)")
    p.add_argument("--seed", type=int, help="random seed (default: fresh; printed to stderr)")
    p.add_argument("--threads", type=int, help="numba threads (default: all cores)")
    add_format_options(p)
    p.set_defaults(func=run)


def run(args) -> None:
    measures = args.measure or ["RBP(rel=1,p=0.8)@10"]
    seed = run_seed(args, "pool-bias")
    res = pooling_comparison(
        args.runs, args.qrels, measures, depth=args.depth, widths=args.widths and _ints(args.widths, "--widths"),
        repeats=args.repeats, common_topics=args.common_topics and _ints(args.common_topics, "--common-topics"),
        topic_repeats=args.topic_repeats, mode=args.mode, pooled_unjudged=args.pooled_unjudged, ideal=args.ideal,
        rng=seed, threads=args.threads)
    announce_seed(args, "pool-bias", seed)
    table = {"mae": res.mae_table, "mae-long": res.mae_long, "bias": res.bias_distribution}[args.report]()
    if len(measures) == 1:
        table = table.drop_columns(["measure"])
    write_table(table, args.format, args.out)
