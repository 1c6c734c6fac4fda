"""``fastrisk report``: the self-contained HTML (or PDF) risk report of a score matrix, and
`write_demo_report` for ``fastrisk demo --report`` (the bundled TREC 2012 Web data)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from fastrisk.cli._args import (
    add_alpha_arguments,
    add_baseline_arguments,
    add_inference_arguments,
    add_matrix_arguments,
    alpha_kwargs,
    inference_kwargs,
    load_matrix_and_baseline,
)
from fastrisk.core.baselines import Baseline
from fastrisk.data import datasets
from fastrisk.errors import InputError
from fastrisk.viz.report import file_provenance, write_report


def _provenance(args) -> dict:
    out = {}
    for k, f in enumerate(args.files):  # files, or directories of runs (with --qrels)
        kind = "input directory" if Path(f).is_dir() else "input file"
        out[kind if len(args.files) == 1 else f"{kind} {k + 1}"] = file_provenance(f)
    if getattr(args, "qrels", None):
        out["qrels file"] = file_provenance(args.qrels)
    if Path(args.baseline).is_file():
        out["baseline file"] = file_provenance(args.baseline)
    if args.baseline_column:
        out["baseline column"] = args.baseline_column
    argv = sys.argv[2:] if len(sys.argv) > 2 else []
    out["command"] = "fastrisk report " + " ".join(Path(a).name if Path(a).is_absolute() else a for a in argv)
    return out


def _systems(text):
    if text is None:
        return None
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise InputError("--systems must list at least one system name")
    return names


def _cmd_report(args) -> None:
    matrix, base = load_matrix_and_baseline(args)
    path = write_report(args.out, matrix, base, format=args.format, image_format=args.image_format,
                        convention=args.convention, significance=args.significance, systems=_systems(args.systems),
                        threads=args.threads, title=args.title, provenance=_provenance(args),
                        heatmap_alpha=args.heatmap_alpha, **alpha_kwargs(args), **inference_kwargs(args))
    print(f"wrote {path}", file=sys.stderr)


def write_demo_report(path, *, format: str | None = None, image_format: str = "svg", threads: int | None = None):
    """The report of the bundled TREC 2012 Web track data (ERR@20, 48 runs, 50 topics) against
    the official baseline indriCASP at alpha = 0, 1, 5, 10, highlighting the runs of Dinçer,
    Macdonald & Ounis (SIGIR 2014), Tables 1-2. Returns the path written."""
    matrix, baseline = datasets.trec2012_web("err20")
    base = Baseline("indriCASP", np.array([[baseline[t] for t in matrix.topics]]))
    provenance = {
        "data": "TREC 2012 Web track, ad hoc task: ERR@20 of the 48 submitted runs (anonymised run1..run48; "
                "run24 = uogTrA44xi, run22 = srchvrs12c09, run21 = qutwb) on topics 151-200, bundled with fastrisk",
        "score matrix": file_provenance(datasets.path("trec-matrices/web2012_err20.csv")),
        "baseline file": file_provenance(datasets.path("trec2012-web/baseline-indriCASP.csv")),
    }
    return write_report(path, matrix, base, format=format, image_format=image_format, alpha=[0, 1, 5, 10],
                        systems=list(datasets.TREC2012_WEB_RUNS.values()), threads=threads,
                        title="Risk-sensitive evaluation of the TREC 2012 Web track runs against indriCASP (ERR@20)",
                        provenance=provenance)


def register(sub) -> None:
    p = sub.add_parser("report", help="a self-contained HTML (or PDF) risk report with figures and tables",
                       description="Write one self-contained HTML page (figures inline, tables beside them, the "
                                   "parameters and input files' provenance at the top) or a PDF of the figures.")
    add_matrix_arguments(p)
    add_baseline_arguments(p)
    add_alpha_arguments(p)
    p.add_argument("--significance", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--systems", help="comma-separated systems to highlight (default: a spread of the risk distribution: the systems nearest the minimum, quartiles and maximum of TRisk at the largest --alpha, near-duplicates collapsed)")
    p.add_argument("--title", help="title of the report")
    p.add_argument("--heatmap-alpha", type=float, metavar="ALPHA",
                   help="alpha of the all-baseline heat map (default: the largest --alpha)")
    p.add_argument("--out", required=True, metavar="PATH", help="the report file to write")
    p.add_argument("--format", choices=("html", "pdf"), help="report format (default: from --out, else html)")
    p.add_argument("--image-format", choices=("svg", "png"), default="svg",
                   help="figures as inline SVG (default) or base64 PNG")
    add_inference_arguments(p)
    p.set_defaults(func=_cmd_report)
