"""``fastrisk demo``, ``fastrisk risk`` and ``fastrisk info``, and the argument helpers that
every command reading a matrix and a baseline shares."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa

from fastrisk.cli._output import add_format_options, write_table
from fastrisk.errors import InputError


# ---------------------------------------------------------------------- shared helpers
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
    parser.add_argument("--measure", help="measure to read (trec_eval/ir_measures) or to label the matrix")
    parser.add_argument("--topics", help="topic ids of a wide CSV's rows, e.g. 151-200 (default: 1..c)")
    parser.add_argument("--missing", choices=("raise", "drop", "zero"), default="raise",
                        help="missing (system, topic) scores: raise an error (default), drop the topics, "
                             "or score 0 as trec_eval -c")
    parser.add_argument("--threads", type=int, help="numba threads (default: all cores)")


def add_baseline_arguments(parser, *, required: bool = True) -> None:
    parser.add_argument("--baseline", required=required, metavar="NAME|FILE|mean|median|max",
                        help="a system of the matrix, a per-topic file, or a virtual baseline")
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
    from fastrisk.io import read_matrix

    return read_matrix(args.files if len(args.files) > 1 else args.files[0], format=args.input_format,
                       measure=args.measure, topics=parse_topics(args.topics), missing=args.missing)


def load_matrix_and_baseline(args):
    """(matrix, baseline) as ``fastrisk.risk`` accepts them, from the parsed options."""
    from fastrisk.baselines import VIRTUAL, resolve_baseline, virtual_baseline

    matrix = load_matrix(args)
    baseline = args.baseline
    if getattr(args, "leave_out", False):
        if baseline.lower() not in VIRTUAL or baseline in matrix.systems:
            raise InputError(f"--leave-out applies to --baseline mean, median or max, not {baseline!r}")
        baseline = virtual_baseline(matrix, baseline, leave_out=True)
    return resolve_baseline(matrix, baseline, missing=args.missing, column=args.baseline_column)


# ---------------------------------------------------------------------- commands
def _risk_table(result, systems=None) -> pa.Table:
    table = result.to_arrow()
    cols = ["system", "alpha", "loss_weight", "urisk", "se_param", "se_jack", "trisk", "p_value"]
    if systems is not None:
        import pyarrow.compute as pc

        order = {s: i for i, s in enumerate(systems)}
        table = table.filter(pc.is_in(table.column("system"), pa.array(systems)))
        keys = np.array([order[s] for s in table.column("system").to_pylist()])
        table = table.take(np.argsort(keys, kind="stable"))
    return table.select(cols)


def _cmd_risk(args) -> None:
    from fastrisk.risk import risk, topic_risk

    matrix, base = load_matrix_and_baseline(args)
    kwargs = dict(convention=args.convention, significance=args.significance, threads=args.threads,
                  **alpha_kwargs(args))
    if args.per_topic:
        table = topic_risk(matrix, base, **kwargs).to_arrow().select(["system", "topic", "alpha", "x", "tr", "tj"])
    else:
        result = risk(matrix, base, **kwargs)
        table = result.to_arrow().select(["system", "alpha", "loss_weight", "urisk", "se_param", "se_jack",
                                          "trisk", "p_value", "at_risk", "rewarding"])
    write_table(table, args.format, args.out)


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


def _cmd_demo(args) -> None:
    from fastrisk.datasets import TREC2012_WEB_RUNS, trec2012_web
    from fastrisk.risk import risk

    if args.report:
        from fastrisk.cli.report import write_demo_report

        write_demo_report(args.report, threads=args.threads)
        print(f"fastrisk demo: report written to {args.report}", file=sys.stderr)
        return
    matrix, baseline = trec2012_web("err20")
    result = risk(matrix, baseline, alpha=[0, 1, 5, 10], threads=args.threads)
    named = list(TREC2012_WEB_RUNS.values())
    others = [s for s in matrix.systems if s not in named]
    if args.format != "table":
        write_table(_risk_table(result, named + others), args.format, args.out)
        return
    out = sys.stdout
    out.write("TREC 2012 Web track, ERR@20, 50 topics (151-200), baseline indriCASP "
              f"(mean ERR@20 {np.mean(list(baseline.values())):.5f})\n"
              "URisk, TRisk with parametric (SE_x) and jackknife (SE_J) standard errors; "
              "Dinçer, Macdonald & Ounis (SIGIR 2014), Tables 1-2\n\n")
    out.write("Runs of the published tables:\n")
    from fastrisk.cli._output import format_text

    out.write(format_text(_risk_table(result, named)))
    out.write(f"\nAll other runs ({len(others)}):\n")
    out.write(format_text(_risk_table(result, others)))
    rmse = ", ".join(f"alpha={a:g}: {r:.3g}" for a, r in zip(result.alpha, result.se_rmse))
    out.write(f"\nRMSE(SE_x, SE_J) over all {matrix.n_systems} runs: {rmse}\n")


def register(sub) -> None:
    p = sub.add_parser("risk", help="URisk/TRisk of every system against a baseline",
                       description="URisk, TRisk (parametric and jackknife SE) and p-values of every system "
                                   "against one baseline, at one or more alpha.")
    add_matrix_arguments(p)
    add_baseline_arguments(p)
    add_alpha_arguments(p)
    p.add_argument("--significance", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--per-topic", action="store_true", help="per-topic x_i, TR_i, TJ_i instead")
    add_format_options(p)
    p.set_defaults(func=_cmd_risk)

    p = sub.add_parser("info", help="describe a score matrix")
    add_matrix_arguments(p)
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser("demo", help="the published TRisk tables from the bundled TREC 2012 Web data")
    p.add_argument("--threads", type=int, help="numba threads (default: all cores)")
    p.add_argument("--report", metavar="PATH", help="write the HTML (or .pdf) report of the demo data to PATH "
                                                    "instead (needs matplotlib: pip install fastrisk[plot])")
    add_format_options(p)
    p.set_defaults(func=_cmd_demo)
