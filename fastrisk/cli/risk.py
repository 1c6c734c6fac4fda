"""``fastrisk demo``, ``fastrisk risk`` and ``fastrisk info``."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa

from fastrisk.cli._args import (
    add_alpha_arguments,
    add_baseline_arguments,
    add_matrix_arguments,
    alpha_kwargs,
    load_matrix,
    load_matrix_and_baseline,
)
from fastrisk.cli._output import add_format_options, write_table


# ---------------------------------------------------------------------- commands
def _risk_table(result, systems=None) -> pa.Table:
    table = result.to_arrow()
    cols = ["system", "alpha", "loss_weight", "urisk", "se_param", "se_jack", "trisk", "pvalue"]
    if systems is not None:
        import pyarrow.compute as pc

        order = {s: i for i, s in enumerate(systems)}
        table = table.filter(pc.is_in(table.column("system"), pa.array(systems)))
        keys = np.array([order[s] for s in table.column("system").to_pylist()])
        table = table.take(np.argsort(keys, kind="stable"))
    return table.select(cols)


def _cmd_risk(args) -> None:
    from fastrisk._risk import risk

    matrix, base = load_matrix_and_baseline(args)
    kwargs = dict(convention=args.convention, significance=args.significance, threads=args.threads,
                  **alpha_kwargs(args))
    if args.per_topic:  # [alpha, system, topic]: streamed in row groups, never materialised whole
        from fastrisk._long_pieces import alpha_steps, topic_risk_pieces
        from fastrisk._streaming import write_pieces
        from fastrisk.cli._output import stream_options

        columns = ["system", "topic", "alpha", "x", "tr", "tj"]
        rows = len(alpha_steps(alpha_kwargs(args))) * matrix.n_systems * matrix.n_topics
        write_pieces(topic_risk_pieces(matrix, base, columns, **kwargs), args.format, args.out, rows=rows,
                     columns=len(columns), **stream_options())
        return
    result = risk(matrix, base, **kwargs)
    table = result.to_arrow().select(["system", "alpha", "loss_weight", "urisk", "se_param", "se_jack",
                                      "trisk", "pvalue", "at_risk", "rewarding"])
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
    from fastrisk._risk import risk
    from fastrisk.datasets import TREC2012_WEB_RUNS, trec2012_web

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
