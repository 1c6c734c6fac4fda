"""Writing result tables: an aligned text table, CSV, JSON lines or Parquet.

A file given with ``--out`` is written atomically (:mod:`fastrisk._atomic`): a failure,
a full disk included, leaves the previous file as it was.
"""

from __future__ import annotations

import io
import json
import math
import sys

import pyarrow as pa

FORMATS = ("table", "csv", "json", "parquet")


def add_format_options(parser) -> None:
    """The ``--format`` and ``--out`` options every table-producing command shares."""
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--out", metavar="PATH", help="write to PATH instead of standard output")


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4f}"
    return str(value)


def format_text(table: pa.Table) -> str:
    """A fixed-width text table; floats to 4 decimals, numbers right-aligned."""
    names = table.column_names
    cols = [[_cell(v) for v in table.column(n).to_pylist()] for n in names]
    widths = [max([len(n)] + [len(v) for v in col]) for n, col in zip(names, cols)]
    numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) for t in table.schema.types]
    def fmt(vals):
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(vals, widths, numeric)).rstrip()
    lines = [fmt(names)]
    lines += [fmt(row) for row in zip(*cols)] if cols else []
    return "\n".join(lines) + "\n"


def write_table(table: pa.Table, fmt: str = "table", out: str | None = None) -> None:
    """Write ``table`` to ``out`` (a path) or standard output in format ``fmt``."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        if out is None:
            buf = io.BytesIO()
            pq.write_table(table, buf)
            sys.stdout.buffer.write(buf.getvalue())
            sys.stdout.flush()
        else:
            from fastrisk._atomic import write_parquet

            write_parquet(table, out)
        return
    if fmt == "table":
        text = format_text(table)
    elif fmt == "csv":
        from fastrisk.io import write_csv

        buf = io.BytesIO()
        write_csv(table, buf)
        text = buf.getvalue().decode()
    elif fmt == "json":
        text = "".join(json.dumps(_jsonable(row)) + "\n" for row in table.to_pylist())
    else:  # argparse restricts choices; a programming error otherwise
        raise ValueError(f"unknown format {fmt!r}")
    if out is None:
        sys.stdout.write(text)
    else:
        from fastrisk._atomic import write_text

        write_text(out, text)


def _jsonable(row: dict) -> dict:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
