"""Plain-text tables and ``# key: value`` comment headers, shared by the library's readers and
writers and by the CLI: `format_text` (an aligned text table), `comment_header`
and its inverse `parse_comment_header` (what produced a CSV or text output, escaped one
line per entry). Data layer: imports nothing of fastrisk.
"""

from __future__ import annotations

import math

import pyarrow as pa

__all__ = ["comment_header", "format_text", "parse_comment_header", "text_chunks", "text_widths"]

#: Rows formatted at once by `text_chunks`: the Python strings of one slice are all the
#: aligned text table holds beyond its Arrow columns.
TEXT_SLICE_ROWS = 1 << 15


def comment_header(metadata: dict[str, str]) -> str:
    """``# key: value`` lines (newlines in a value escaped as ``\\n``)."""
    return "".join(f"# {k}: {v.replace(chr(92), chr(92) * 2).replace(chr(10), chr(92) + 'n')}\n"
                   for k, v in metadata.items())


def parse_comment_header(lines) -> dict[str, str]:
    """Inverse of `comment_header` for the leading ``#`` lines of a file."""
    out = {}
    for line in lines:
        body = line.rstrip("\r\n")[1:].strip()
        key, sep, value = body.partition(": ")
        if not sep:
            key, value = body.rstrip(":"), ""
        out[key] = _unescape(value)
    return out


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append("\n" if text[i + 1] == "n" else text[i + 1])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4f}"
    return str(value)


def _is_rank(name: str) -> bool:
    return name == "rank" or name.startswith("rank_") or name.endswith("_rank")


def _rank_cell(value) -> str:
    """A rank as it is: 2, or 2.5 for an averaged tie (never 2.0000)."""
    return "" if value is None else ("nan" if math.isnan(value) else f"{value:g}")


def _slices(table: pa.Table):
    cell = [_rank_cell if _is_rank(f.name) and pa.types.is_floating(f.type) else _cell for f in table.schema]
    for lo in range(0, table.num_rows, TEXT_SLICE_ROWS):
        piece = table.slice(lo, TEXT_SLICE_ROWS)
        yield [[c(v) for v in piece.column(n).to_pylist()] for c, n in zip(cell, table.column_names)]


def text_widths(table: pa.Table, widths=None) -> list[int]:
    """Column widths of `format_text` (the names' and every cell's), merged with ``widths``
    (those of earlier pieces of the same table); one slice of cells in memory at a time."""
    widths = list(widths) if widths is not None else [len(n) for n in table.column_names]
    for cols in _slices(table):
        widths = [max([w] + [len(v) for v in col]) for w, col in zip(widths, cols)]
    return widths


def text_chunks(table: pa.Table, widths, *, names: bool = True):
    """The lines of `format_text` with the given ``widths``, one string per slice of
    `TEXT_SLICE_ROWS` rows (the header line first when ``names``)."""
    numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) for t in table.schema.types]

    def fmt(vals):
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(vals, widths, numeric)).rstrip()

    if names:
        yield fmt(table.column_names) + "\n"
    for cols in _slices(table):
        yield "".join(fmt(row) + "\n" for row in zip(*cols))


def format_text(table: pa.Table) -> str:
    """A fixed-width text table; floats to 4 decimals (ranks as they are: 2, 2.5), numbers
    right-aligned."""
    return "".join(text_chunks(table, text_widths(table)))
