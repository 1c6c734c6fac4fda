"""Writing result tables: an aligned text table, CSV, JSON lines, Parquet, LaTeX or Markdown.

Every output can record what produced it — baseline, measure, parameters, the command line —
as ``metadata`` (``dict[str, str]``): Parquet files always carry it as key-value metadata of
the schema; CSV and the text table carry it as ``# key: value`` comment lines at the top only
when asked (``header=True``, the ``--header`` option), because many CSV readers do not skip
comments. `fastrisk.data.io.read_table` reads such files back, comment header included, and
returns the header as the table's schema metadata.

Where the metadata comes from, later entries winning: the ``fastrisk`` parameters a result's
`to_arrow` put in the table's schema, the command line of the
running command (`invocation`, set by the CLI's ``main``), then ``metadata=``.

A file given with ``--out`` is written atomically (`fastrisk._runtime.atomic`): a failure,
a full disk included, leaves the previous file as it was.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import itertools
import json
import math
import shlex
import sys

import pyarrow as pa

from fastrisk._runtime.atomic import atomic_open, write_parquet, write_text
from fastrisk._version import __version__
from fastrisk.data.io import write_csv
from fastrisk.data.publication import arrow_to_latex, arrow_to_markdown
from fastrisk.data.tabular import comment_header, text_chunks, text_widths

FORMATS = ("table", "csv", "json", "parquet", "latex", "markdown")
#: Formats that can carry a ``#`` comment header (``header=True``).
HEADER_FORMATS = ("table", "csv")
#: Namespace entries never recorded: how and where to write, not what was computed.
_NOT_PARAMETERS = frozenset({"func", "format", "out", "header", "threads"})

_INVOCATION: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("fastrisk_invocation",
                                                                                   default=None)
_HEADER: contextvars.ContextVar[bool] = contextvars.ContextVar("fastrisk_header", default=False)


def add_format_options(parser) -> None:
    """The ``--format``, ``--out`` and ``--header`` options every table-producing command shares."""
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--out", metavar="PATH", help="write to PATH instead of standard output")
    parser.add_argument("--header", action="store_true",
                        help="start CSV and text output with '# key: value' lines recording the command, baseline, "
                             "measure and parameters (Parquet output always records them as metadata)")


def _text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, bool, int, float)) for v in value):
        return ",".join(str(v) for v in value)
    return None


def cli_metadata(args) -> dict[str, str]:
    """What a parsed command line says about an output: the command, every option that has a
    value (baseline, measure, alpha, seed, ...) and the fastrisk version, as strings."""
    out = {"fastrisk_version": __version__}
    command = getattr(args, "command", None)
    if command:
        out["command"] = str(command)
    for key, value in sorted(vars(args).items()):
        if key in _NOT_PARAMETERS or key.startswith("_") or key == "command":
            continue
        text = _text(value)
        if text is not None and value is not False:
            out[key] = text
    return out


@contextlib.contextmanager
def invocation(args, argv=None):
    """Within the block, `write_table` records ``cli_metadata(args)`` in every output and
    honours ``args.header``. The CLI's ``main`` wraps each command in it."""
    meta = cli_metadata(args)
    if argv is not None:
        meta["command_line"] = "fastrisk " + shlex.join(str(a) for a in argv)
    t1 = _INVOCATION.set(meta)
    t2 = _HEADER.set(bool(getattr(args, "header", False)))
    try:
        yield meta
    finally:
        _INVOCATION.reset(t1)
        _HEADER.reset(t2)


def record(**metadata) -> None:
    """Add ``key=value`` entries to what every output of the running command records, e.g.
    ``record(measure=matrix.measure)`` where a command learns the measure from its input file.
    None values are skipped; outside `invocation` this does nothing."""
    current = _INVOCATION.get()
    if current is None:
        return
    for key, value in metadata.items():
        text = _text(value)
        if text is not None:
            current[key] = text


def stream_options() -> dict:
    """``metadata`` and ``header`` for a streamed output (`fastrisk.data.streaming.TableStream`)
    of the running command: what `write_table` would record."""
    meta = dict(_INVOCATION.get() or {})
    return {"metadata": meta, "header": comment_header(meta) if _HEADER.get() else ""}


def table_metadata(table: pa.Table, metadata: dict[str, str] | None = None) -> dict[str, str]:
    """The key-value metadata an output of ``table`` records (see the module docstring)."""
    out: dict[str, str] = {}
    raw = (table.schema.metadata or {}).get(b"fastrisk")
    if raw is not None:
        try:
            params = json.loads(raw)
        except ValueError:
            params = {}
        for key, value in params.items() if isinstance(params, dict) else ():
            text = _text(value)
            if text is not None:
                out[key] = text
    out.update(_INVOCATION.get() or {})
    for key, value in (metadata or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"`metadata` must map str to str, got {key!r}: {value!r}")
        out[key] = value
    return out


def write_table(table: pa.Table, fmt: str = "table", out: str | None = None, *,
                metadata: dict[str, str] | None = None, header: bool | None = None) -> None:
    """Write ``table`` to ``out`` (a path) or standard output in format ``fmt``.

    Parameters
    ----------
    table : pyarrow.Table
        The rows to write.
    fmt : str
        One of `FORMATS`.
    out : str, optional
        A path (written atomically); standard output when None.
    metadata : dict[str, str], optional
        What produced the table (baseline, measure, parameters), merged over the table's own
        ``fastrisk`` parameters and the running command's options. Always stored in Parquet
        output; in CSV and text output only with ``header``.
    header : bool, optional
        Start CSV and text output with ``# key: value`` comment lines; default: the running
        command's ``--header`` option, else False.
    """
    meta = table_metadata(table, metadata)
    header = _HEADER.get() if header is None else bool(header)
    if fmt == "parquet":
        import pyarrow.parquet as pq  # ~0.15 s to import, needed for Parquet only

        schema_meta = dict(table.schema.metadata or {})
        schema_meta.update({k.encode(): v.encode() for k, v in meta.items()})
        table = table.replace_schema_metadata(schema_meta)
        if out is None:
            buf = io.BytesIO()
            pq.write_table(table, buf)
            sys.stdout.buffer.write(buf.getvalue())
            sys.stdout.flush()
        else:
            write_parquet(table, out)
        return
    if fmt == "table":  # written a slice of rows at a time, never one string of the whole table
        head = comment_header(meta) if header else ""
        chunks = itertools.chain([head], text_chunks(table, text_widths(table)))
        if out is None:
            for chunk in chunks:
                sys.stdout.write(chunk)
        else:
            with atomic_open(out, "w", newline="") as fh:
                fh.writelines(chunks)
        return
    if fmt == "csv":
        buf = io.BytesIO()
        write_csv(table, buf)
        text = buf.getvalue().decode()
    elif fmt == "json":
        text = "".join(json.dumps(_jsonable(row)) + "\n" for row in table.to_pylist())
    elif fmt in ("latex", "markdown"):
        text = (arrow_to_latex if fmt == "latex" else arrow_to_markdown)(table)
    else:  # argparse restricts choices; a programming error otherwise
        raise ValueError(f"unknown format {fmt!r}")
    if header and fmt in HEADER_FORMATS:
        text = comment_header(meta) + text
    if out is None:
        sys.stdout.write(text)
    else:
        write_text(out, text)


def _jsonable(row: dict) -> dict:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
