"""Writing a long result table in pieces, so that it is never materialised whole.

`TableStream` takes the table as consecutive Arrow tables (row groups) and writes
each at once: Parquet row groups through one ``ParquetWriter``, CSV and JSON lines appended.
A file is written atomically (`fastrisk._runtime.atomic`): a failure part-way, a full disk or
Ctrl-C included, leaves the previous file as it was. The aligned text table, whose column
widths depend on every row, keeps its pieces as Arrow columns (about 16 bytes a cell), measures
the widths and then writes the lines a slice at a time (`fastrisk.data.tabular.text_chunks`),
so no more than one slice of Python strings is ever held; that memory is estimated first and a
table too large for the memory available is refused (with the formats that stream) before
anything is computed.

``metadata`` (``dict[str, str]``) is added to the Parquet schema's key-value metadata, as
``fastrisk.cli._output.write_table(..., metadata=)`` does for a materialised table.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys

import pyarrow as pa
import pyarrow.csv as pacsv

from fastrisk._runtime.atomic import atomic_open
from fastrisk._runtime.resources import check_memory
from fastrisk.data.tabular import TEXT_SLICE_ROWS, text_chunks, text_widths

__all__ = ["TableStream", "chunk_size", "text_table_bytes", "write_pieces"]

#: Rows per row group (and per piece the commands compute): Parquet's own default.
ROW_GROUP_ROWS = 1 << 20
#: Bytes a cell of the aligned text table costs while it is formatted (a Python str and its
#: slot in a list, then its share of the joined line): one slice of rows at a time.
_TEXT_CELL_BYTES = 128
#: Bytes a cell of the aligned text table costs while its pieces are held (Arrow columns:
#: 8-byte numbers, dictionary codes or short strings).
_HELD_CELL_BYTES = 16


def chunk_size(total_rows_per_unit: int, rows: int | None = None) -> int:
    """How many units (systems, say) of ``total_rows_per_unit`` rows each make one row group
    of ``rows`` (default `ROW_GROUP_ROWS`) rows."""
    return max(1, (ROW_GROUP_ROWS if rows is None else rows) // max(1, total_rows_per_unit))


def text_table_bytes(rows: int, columns: int) -> float:
    """Memory the aligned text table of ``rows`` x ``columns`` needs while it is formatted: its
    pieces as Arrow columns, and one slice of rows as Python strings."""
    return float(rows) * columns * _HELD_CELL_BYTES + float(min(rows, TEXT_SLICE_ROWS)) * columns * _TEXT_CELL_BYTES


class TableStream:
    """``with TableStream(fmt, out, rows=n, columns=k) as w: w.write(piece) ...``

    ``fmt`` is ``table``, ``csv``, ``json`` or ``parquet``; ``out`` a path or None (standard
    output). ``rows``/``columns`` (the whole table's size, when known) let the text table be
    refused before any piece is computed. ``metadata`` goes into the Parquet schema; ``header``
    (``# key: value`` lines) is written before a CSV or text table."""

    def __init__(self, fmt: str, out=None, *, metadata: dict[str, str] | None = None, rows: int | None = None,
                 columns: int | None = None, header: str = ""):
        if fmt not in ("table", "csv", "json", "parquet"):
            raise ValueError(f"unknown format {fmt!r}")
        self.fmt, self.out, self.metadata = fmt, out, dict(metadata or {})
        self.header = header if fmt in ("table", "csv") else ""
        if fmt == "table" and rows is not None and columns is not None:
            check_memory(text_table_bytes(rows, columns), f"an aligned text table of {rows:,} rows",
                         "write it with --format parquet, csv or json, which are streamed (--out FILE)")
        self._stack = contextlib.ExitStack()
        self._sink = None
        self._writer = None
        self._schema = None
        self._pieces: list[pa.Table] = []
        self.rows = 0

    # ------------------------------------------------------------------ context
    def __enter__(self) -> "TableStream":
        self._stack.__enter__()
        try:
            if self.out is None:
                self._sink = sys.stdout.buffer if self.fmt == "parquet" else None
            else:
                self._sink = self._stack.enter_context(atomic_open(self.out, "wb"))
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self._finish()
            else:
                self._abandon()
        except BaseException:
            if not self._stack.__exit__(*sys.exc_info()):
                raise
            return False
        return self._stack.__exit__(exc_type, exc, tb)

    # ------------------------------------------------------------------ writing
    def write(self, piece: pa.Table) -> None:
        """Append ``piece`` (the same columns and types as the first piece)."""
        if self._schema is None:
            meta = dict(piece.schema.metadata or {})
            meta.update({k.encode(): str(v).encode() for k, v in self.metadata.items()})
            self._schema = piece.schema.with_metadata(meta)
        piece = piece.replace_schema_metadata(self._schema.metadata)
        first = self.rows == 0
        if first and self.header and not self._pieces:
            self._emit(self.header.encode())
        self.rows += piece.num_rows
        if self.fmt == "table":
            self._pieces.append(piece)
        elif self.fmt == "parquet":
            import pyarrow.parquet as pq  # ~0.15 s to import, needed for Parquet only

            if self._writer is None:
                self._writer = pq.ParquetWriter(self._sink, self._schema)
            self._writer.write_table(piece, row_group_size=max(1, piece.num_rows))
        elif self.fmt == "csv":
            self._emit(_csv_bytes(piece, header=first))
        else:
            self._emit("".join(json.dumps(_jsonable(row)) + "\n" for row in piece.to_pylist()).encode())

    def _emit(self, data: bytes) -> None:
        if self._sink is None:
            sys.stdout.buffer.write(data)
        else:
            self._sink.write(data)

    def _abandon(self) -> None:
        """After a failure: close the Parquet writer while its sink is still open (the atomic
        write then discards the file). Left open, the writer's finaliser writes its footer to
        the closed sink later: "Exception ignored ... ValueError: write to closed file"."""
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()

    def _finish(self) -> None:
        if self.fmt == "parquet":
            if self._writer is None:  # no piece: an empty file with no columns is still a Parquet file
                import pyarrow.parquet as pq  # ~0.15 s to import, needed for Parquet only

                self._writer = pq.ParquetWriter(self._sink, self._schema or pa.schema([]))
            self._writer.close()
        elif self.fmt == "table":
            pieces, self._pieces = self._pieces or [pa.table({})], []
            widths = None
            for piece in pieces:
                widths = text_widths(piece, widths)
            for i, piece in enumerate(pieces):
                for chunk in text_chunks(piece, widths, names=i == 0):
                    self._emit(chunk.encode())
        if self._sink is None or self._sink is sys.stdout.buffer:
            sys.stdout.flush()


def _csv_bytes(table: pa.Table, *, header: bool) -> bytes:
    """CSV as `fastrisk.data.io.write_csv` writes it: quotes only where a value needs them."""

    for style in ("none", "needed"):  # "none" fails on a value with a comma, quote or newline
        try:
            buf = pa.BufferOutputStream()
            pacsv.write_csv(table, buf, pacsv.WriteOptions(include_header=header, quoting_style=style,
                                                           quoting_header=style))
            return buf.getvalue().to_pybytes()
        except pa.ArrowInvalid:
            continue
    raise ValueError("a value cannot be written as CSV")  # unreachable: "needed" quotes anything


def _jsonable(row: dict) -> dict:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}


def write_pieces(pieces, fmt: str, out=None, **kwargs) -> int:
    """Write every table of the iterable ``pieces`` through one `TableStream`; the rows written."""
    with TableStream(fmt, out, **kwargs) as stream:
        for piece in pieces:
            stream.write(piece)
    return stream.rows

