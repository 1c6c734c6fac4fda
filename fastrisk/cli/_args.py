"""Argument helpers shared by every command that reads a score matrix, a baseline or alphas.

A command module imports what it needs from here and stays a thin layer over the public API:
the helpers only parse options into the keyword arguments the library functions take.
"""

from __future__ import annotations

from fastrisk.cli._output import record
from fastrisk.core.baselines import VIRTUAL, resolve_baseline, virtual_baseline
from fastrisk.data.io import read_matrix
from fastrisk.errors import InputError
from fastrisk.measures.metrics import evaluate


def parse_floats(text: str, name: str) -> list[float]:
    """``"0,1,5,10"`` -> [0.0, 1.0, 5.0, 10.0] with a clear error naming the option."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{name} must be comma-separated numbers, got {text!r}") from None
    if not values:
        raise InputError(f"{name} must list at least one number")
    return values


def parse_names(text: str) -> list[str]:
    """``"a, b,c"`` -> ["a", "b", "c"]."""
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_topics(text: str | None):
    """``"151-200"`` or ``"a,b,c"`` -> topic ids (None passes through)."""
    if text is None:
        return None
    if "-" in text and "," not in text:
        lo, _, hi = text.partition("-")
        try:
            return [str(t) for t in range(int(lo), int(hi) + 1)]
        except ValueError:
            raise InputError(f"--topics must be FIRST-LAST or a comma-separated list, got {text!r}") from None
    return parse_names(text)


def add_matrix_arguments(parser) -> None:
    """FILE (one or more) and the options that say how to read it."""
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="score matrix: CSV (long system,topic,score or wide), Parquet, Arrow IPC, "
                             "trec_eval -q or ir_measures output (several files are combined)")
    parser.add_argument("--input-format", choices=("csv", "csv-long", "csv-wide", "parquet", "ipc", "trec_eval",
                                                   "ir_measures"), help="input format (default: guessed)")
    parser.add_argument("--measure", help="measure to read (trec_eval/ir_measures) or to label the matrix; with "
                                          "--qrels, the measure to score the runs with (an ir_measures name)")
    parser.add_argument("--qrels", metavar="QRELS",
                        help="FILE... are TREC runs (files or directories): score them against this qrels file "
                             "with --measure (e.g. AP, nDCG@20, ERR@20)")
    parser.add_argument("--topics", help="topic ids of a wide CSV's rows, e.g. 151-200 (default: 1..c)")
    parser.add_argument("--missing", choices=("raise", "drop", "zero"), default="raise",
                        help="missing (system, topic) scores: raise an error (default), drop the topics, "
                             "or score 0 as trec_eval -c")
    parser.add_argument("--threads", type=int, help="numba threads (default: all cores)")


def add_baseline_arguments(parser, *, required: bool = True) -> None:
    parser.add_argument("--baseline", required=required, metavar="NAME|FILE|best|mean|median|max",
                        help="a system of the matrix (case-insensitive when unambiguous), best (the system with "
                             "the highest mean), a per-topic file, or a virtual baseline")
    parser.add_argument("--baseline-column", metavar="COL", help="column of a baseline file with several")
    parser.add_argument("--leave-out", action="store_true",
                        help="with --baseline mean|median|max: build it from the other systems only "
                             "(an unbiased virtual baseline)")


def add_alpha_arguments(parser, default: str = "0,1,5,10") -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--alpha", help=f"risk sensitivity alpha >= 0, comma-separated (default: {default})")
    group.add_argument("--loss-weight", help="loss weight 1 + alpha >= 1, comma-separated")
    parser.add_argument("--value", default="linear", choices=("linear", "smooth"), help="value function")
    parser.add_argument("--convention", default="classic", choices=("classic", "minus"),
                        help="classic: larger is better; minus: URisk-, TRisk- (larger is riskier)")
    parser.set_defaults(alpha_default=default)


def alpha_kwargs(args) -> dict:
    """``alpha``/``loss_weight``/``value`` keyword arguments from the parsed options."""
    if args.value != "linear":
        if args.alpha is not None or args.loss_weight is not None:
            raise InputError(f"--alpha/--loss-weight apply to the linear value function, not --value {args.value}")
        return {"value": args.value}
    if args.loss_weight is not None:
        return {"loss_weight": parse_floats(args.loss_weight, "--loss-weight")}
    return {"alpha": parse_floats(args.alpha if args.alpha is not None else args.alpha_default, "--alpha")}


def load_matrix(args):
    """The command's ScoreMatrix (files, or runs with --qrels); its measure and size are recorded
    in every output of the command."""
    if getattr(args, "qrels", None):
        matrix = runs_to_matrix(args.files, args.qrels, args.measure, threads=getattr(args, "threads", None))
    else:
        matrix = read_matrix(args.files if len(args.files) > 1 else args.files[0], format=args.input_format,
                             measure=args.measure, topics=parse_topics(args.topics), missing=args.missing)
    record(measure=matrix.measure, n_systems=matrix.n_systems, n_topics=matrix.n_topics)
    return matrix


def runs_to_matrix(runs, qrels, measure, *, threads=None):
    """The ScoreMatrix of TREC runs (paths) scored against ``qrels`` with one measure."""
    if not measure:
        raise InputError("--qrels needs --measure, e.g. --measure AP or --measure nDCG@20")
    return evaluate(list(runs), qrels, [measure], threads=threads)[measure]


def load_matrix_and_baseline(args):
    """(matrix, baseline) as ``fastrisk.risk`` accepts them, from the parsed options."""
    matrix = load_matrix(args)
    baseline = args.baseline
    if getattr(args, "leave_out", False):
        if baseline.lower() not in VIRTUAL or baseline in matrix.systems:
            raise InputError(f"--leave-out applies to --baseline mean, median or max, not {baseline!r}")
        baseline = virtual_baseline(matrix, baseline, leave_out=True)
    return resolve_baseline(matrix, baseline, missing=args.missing, column=args.baseline_column)


def add_correction_argument(parser, over: str) -> None:
    """``--correction``: any statsmodels ``multipletests`` name or alias (validated by
    `fastrisk.inference.multiple.adjust_pvalues`, which names the option in its error)."""
    parser.add_argument("--correction", default="holm",
                        help=f"multiple-comparison correction over {over}: any statsmodels multipletests name or "
                             "alias (holm, hs, bonferroni, sidak, simes-hochberg, hommel, fdr_bh, fdr_by, fdr_tsbh, "
                             "fdr_tsbky, fdr_gbs) or none (default holm)")


def add_inference_arguments(parser) -> None:
    """``--inference`` (a name of `fastrisk.core.inference.INFERENCES`), ``--score-bounds``,
    ``--inference-replicates`` and ``--inference-seed``: how the risk p-values are formed."""
    from fastrisk.core.inference import INFERENCES  # the registry: its names are the choices

    parser.add_argument("--inference", choices=list(INFERENCES), default="t",
                        help="how the p-values test URisk = 0: t (default, the published TRisk), exact (valid for "
                             "every distribution and number of topics: Waudby-Smith & Ramdas' betting test), "
                             "edgeworth, johnson, hall, bootstrap-t-symmetric, el-bartlett, bootstrap-t-double")
    parser.add_argument("--score-bounds", type=float, nargs=2, default=(0.0, 1.0), metavar=("LOW", "HIGH"),
                        help="bounds of the scores that --inference exact assumes (default 0 1)")
    parser.add_argument("--inference-replicates", type=int, default=None,
                        help="orderings (exact, default 1000) or resamples (bootstrap-t-symmetric, default 2000; "
                             "bootstrap-t-double: R first-level resamples, each resampled R times, default 499)")
    parser.add_argument("--inference-seed", type=int, default=None,
                        help="seed of those draws (default: fresh; same seed, same p-values)")


def inference_kwargs(args) -> dict:
    """The keyword arguments of `add_inference_arguments` for `fastrisk.risk` / `baseline_table`."""
    return dict(inference=args.inference, score_bounds=tuple(args.score_bounds), replicates=args.inference_replicates,
                rng=args.inference_seed)
