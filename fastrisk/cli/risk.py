"""``fastrisk risk``: URisk/TRisk of every system against one baseline."""

from __future__ import annotations

import sys

from fastrisk.cli._args import (
    add_alpha_arguments,
    add_baseline_arguments,
    add_inference_arguments,
    add_matrix_arguments,
    alpha_kwargs,
    inference_kwargs,
    load_matrix_and_baseline,
)
from fastrisk.cli._output import add_format_options, record, stream_options, write_table
from fastrisk.core.inference import t_level_note
from fastrisk.core.long_forms import alpha_steps, topic_risk_pieces
from fastrisk.core.urisk import risk
from fastrisk.data.streaming import write_pieces


def _cmd_risk(args) -> None:
    matrix, base = load_matrix_and_baseline(args)
    kwargs = dict(convention=args.convention, significance=args.significance, threads=args.threads,
                  **alpha_kwargs(args))
    if args.per_topic:  # [alpha, system, topic]: streamed in row groups, never materialised whole

        columns = ["system", "topic", "alpha", "x", "tr", "tj"]
        rows = len(alpha_steps(alpha_kwargs(args))) * matrix.n_systems * matrix.n_topics
        write_pieces(topic_risk_pieces(matrix, base, columns, **kwargs), args.format, args.out, rows=rows,
                     columns=len(columns), **stream_options())
        return
    result = risk(matrix, base, **kwargs, **inference_kwargs(args))
    # alpha and the loss weight belong to the linear value function; another (--value smooth) is named instead
    params = ["alpha", "loss_weight"] if result.value == "linear" else ["value"]
    table = result.to_arrow().select(["system", *params, "urisk", "standard_error", "se_jack",
                                      "trisk", "pvalue", "at_risk", "rewarding", "inference"])
    note_level(result.inference, result.alpha, result.n_topics, args.format)
    write_table(table, args.format, args.out)


def note_level(inference: str, alphas, n_topics: int, fmt: str) -> None:
    """The one line a ``t`` table at α ≥ 2 with fewer than 100 topics carries
    (`fastrisk.core.inference.t_level_note`): recorded in the output's metadata (Parquet, the
    ``--header`` of CSV) and, for the text table, printed to stderr."""
    note = t_level_note(alphas, n_topics) if inference == "t" else None
    if note:
        record(level_note=note)
        if fmt == "table":
            print(f"note: {note}", file=sys.stderr)


def register(sub) -> None:
    p = sub.add_parser("risk", help="URisk/TRisk of every system against a baseline",
                       description="URisk, TRisk (parametric and jackknife SE) and p-values of every system "
                                   "against one baseline, at one or more alpha.")
    add_matrix_arguments(p)
    add_baseline_arguments(p)
    add_alpha_arguments(p)
    p.add_argument("--significance", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--per-topic", action="store_true", help="per-topic x_i, TR_i, TJ_i instead")
    add_inference_arguments(p)
    add_format_options(p)
    p.set_defaults(func=_cmd_risk)
