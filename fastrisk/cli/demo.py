"""``fastrisk demo``: the published TRisk tables from the bundled TREC 2012 Web data."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from fastrisk.cli._output import add_format_options, write_table
from fastrisk.cli.report import write_demo_report
from fastrisk.core.urisk import risk
from fastrisk.data.datasets import TREC2012_WEB_RUNS, trec2012_web
from fastrisk.data.tabular import format_text


def _risk_table(result, systems=None) -> pa.Table:
    table = result.to_arrow()
    cols = ["system", "alpha", "loss_weight", "urisk", "standard_error", "se_jack", "trisk", "pvalue"]
    if systems is not None:
        order = {s: i for i, s in enumerate(systems)}
        table = table.filter(pc.is_in(table.column("system"), pa.array(systems)))
        keys = np.array([order[s] for s in table.column("system").to_pylist()])
        table = table.take(np.argsort(keys, kind="stable"))
    return table.select(cols)


def _cmd_demo(args) -> None:
    if args.report:
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

    out.write(format_text(_risk_table(result, named)))
    out.write(f"\nAll other runs ({len(others)}):\n")
    out.write(format_text(_risk_table(result, others)))
    rmse = ", ".join(f"alpha={a:g}: {r:.3g}" for a, r in zip(result.alpha, result.se_rmse))
    out.write(f"\nRMSE(SE_x, SE_J) over all {matrix.n_systems} runs: {rmse}\n")


def register(sub) -> None:
    p = sub.add_parser("demo", help="the published TRisk tables from the bundled TREC 2012 Web data")
    p.add_argument("--threads", type=int, help="numba threads (default: all cores)")
    p.add_argument("--report", metavar="PATH", help="write the HTML (or .pdf) report of the demo data to PATH "
                                                    "instead (needs matplotlib: pip install fastrisk[plot])")
    add_format_options(p)
    p.set_defaults(func=_cmd_demo)
