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


#: The published values the bundled data reproduce: Dinçer, Macdonald & Ounis, "Hypothesis
#: testing for the risk-sensitive evaluation of retrieval systems" (SIGIR 2014), Tables 1-2
#: (TREC 2012 Web, ERR@20, baseline indriCASP): (run, alpha) -> (URisk, SE_x = SE_J, TRisk, p),
#: rounded as published (4 decimals, p 3). The cells fastrisk does not record are left out.
PUBLISHED = {
    ("uogTrA44xi", 0.0): (0.1185, 0.0528, 2.2440, 0.029),
    ("uogTrA44xi", 1.0): (0.0556, 0.0739, 0.7528, 0.455),
    ("uogTrA44xi", 5.0): (-0.1959, 0.1755, -1.1163, 0.270),
    ("uogTrA44xi", 10.0): (-0.5104, 0.3091, -1.6512, 0.105),
    ("srchvrs12c09", 0.0): (0.1102, 0.0479, 2.3034, 0.026),
    ("srchvrs12c09", 10.0): (-0.3133, 0.2619, -1.1961, 0.237),
    ("qutwb", 1.0): (-0.1342, 0.0791, -1.6956, 0.096),
    ("qutwb", 10.0): (-1.0832, 0.3969, -2.7295, 0.009),
}
#: Half a unit of the published rounding: URisk, SE, TRisk (4 decimals), p (3).
_ROUNDING = (5e-5, 5e-5, 5e-5, 5e-4)
_NAMES = ("urisk", "standard_error", "trisk", "pvalue")
_LABELS = ("URisk", "SE", "TRisk", "p")


def _with_published(table: pa.Table) -> tuple[pa.Table, str]:
    """The named runs' table with each published value beside the computed one
    (``urisk_paper``, ...; empty where fastrisk does not record it), and a line giving the
    largest difference between the two for each quantity."""
    keys = list(zip(table.column("system").to_pylist(), table.column("alpha").to_pylist()))
    out = {c: table.column(c) for c in ("system", "alpha", "loss_weight")}
    gaps, within = [], True
    for k, name in enumerate(_NAMES):
        computed = np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=float)
        paper = np.array([PUBLISHED[key][k] if key in PUBLISHED else np.nan for key in keys])
        out[name] = table.column(name)
        out[f"{name}_paper"] = pa.array(paper, mask=np.isnan(paper))
        if name == "standard_error":
            out["se_jack"] = table.column("se_jack")
        gap = float(np.nanmax(np.abs(computed - paper)))
        within &= gap <= _ROUNDING[k]
        gaps.append(f"{_LABELS[k]} {gap:.2g}")
    verdict = "all within the published rounding (4 decimals; p 3)" if within else \
        "NOT all within the published rounding (4 decimals; p 3)"
    line = (f"Largest difference from the published values (the {len(PUBLISHED)} cells recorded, x_paper): "
            f"{', '.join(gaps)}: {verdict}\n")
    return pa.table(out), line


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

    table, line = _with_published(_risk_table(result, named))
    out.write(format_text(table))
    out.write(line)
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
