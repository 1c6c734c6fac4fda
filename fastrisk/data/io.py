"""Reading and writing score matrices: CSV (long or wide), Parquet, Arrow IPC, trec_eval -q and
ir_measures per-query output. Every parse error names the file and line."""

from __future__ import annotations

import contextlib
import json
import lzma
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from pyarrow import feather

from fastrisk._runtime import atomic as _atomic
from fastrisk._runtime.validation import not_a_regular_file
from fastrisk.data.matrix import (
    _META_TOPICS,
    ALIASES,
    ScoreMatrix,
    _apply_missing,
    _float_column,
    as_matrix,
    check_missing_policy,
    is_frame,
    label,
    long_columns,
    natural_key,
    pick_measure,
)
from fastrisk.data.tabular import parse_comment_header
from fastrisk.data.textfile import BOM, COMPRESSED_SUFFIXES, compression, open_binary, open_text
from fastrisk.errors import InputError

READ_FORMATS = ("csv", "csv-long", "csv-wide", "parquet", "ipc", "trec_eval", "ir_measures")
WRITE_FORMATS = ("parquet", "ipc", "csv", "csv-wide")
_SUFFIX_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".arrow": "ipc", ".ipc": "ipc", ".feather": "ipc",
                   ".jsonl": "ir_measures", ".csv": "csv"}
#: Suffixes whose content decides: tab-separated CSV, or trec_eval / ir_measures per-query output.
_SNIFFED = (".tsv", ".txt", ".tab")
#: Query id of the summary rows of trec_eval and ir_measures (not a topic).
SUMMARY_QID = "all"


def read_matrix(path, *, format: str | None = None, measure: str | None = None, topics=None,
                missing: str = "raise", system: str = "system", topic: str = "topic",
                score: str = "score") -> ScoreMatrix:
    """Read a `ScoreMatrix` from one file, or from several (one or more systems each).

    Formats (``format=None`` guesses from the suffix and the first lines):

    - ``csv``: long form if the header has ``system, topic, score`` (names configurable),
      else wide form (one column per system, one row per topic; topic ids from a ``topic``
      column, from ``topics=``, or ``"1".."c"`` by row order). ``.tsv`` is tab-separated.
    - ``parquet`` / ``ipc``: the native layout written by `write_matrix`, or long/wide.
    - ``trec_eval``: ``trec_eval -q`` output, ``measure qid value`` with any measure set
      (``-m all_trec``, ``-m official``; padded names); ``runid`` names the system (else the
      file name); ``measure=`` picks the measure (the error lists those available). Measures
      whose values are not numbers (``relstring``'s quoted strings) are skipped, and refused
      by name when asked for.
    - ``ir_measures``: per-query output ``query_id measure value`` (optionally a leading run
      column) as TSV, or JSON lines with ``query_id``, ``measure``, ``value`` (and ``run_id``).

    Summary rows (query id ``all``, as trec_eval and ``ir_measures -q`` write them) are
    skipped in every per-query format: they are not topics. A ``.tsv`` (or ``.txt``) file is
    read as per-query output when its rows look like it (3 or 4 fields, numeric last field,
    no header), else as a tab-separated CSV. Text may start with a UTF-8 byte-order mark.
    ``path`` may also be a pandas or polars DataFrame or an Arrow table (long or wide form,
    see `ScoreMatrix.from_arrow`), e.g. PyTerrier's per-query experiment frame
    (``name, qid, measure, value``) or ir_measures' ``iter_calc`` metrics with a run column
    (``run, query_id, measure, value``); ``measure=`` picks one measure of several.

    Parameters
    ----------
    path : str or os.PathLike or sequence of them, or MatrixLike
        One file, several files (their systems combined), or a DataFrame / Arrow table.
    format : {"csv", "csv-long", "csv-wide", "parquet", "ipc", "trec_eval", "ir_measures"}, optional
        The file format (default: guessed from the suffix and the first lines).
    measure : str, optional
        The measure to read from multi-measure output, or the label of the matrix.
    topics : sequence of str, optional
        Topic ids of a wide CSV's rows (default: a ``topic`` column, else "1".."c").
    missing : {"raise", "drop", "zero"}
        Missing (system, topic) scores: an error naming them, drop the topics, or score 0.
    system, topic, score : str
        Column names of the long form.

    Returns
    -------
    ScoreMatrix
        Systems × topics, with ``measure`` set when the input names it.

    References
    ----------
    Clarke, C. L. A., Craswell, N. & Voorhees, E. M. (2012). Overview of the TREC 2012 Web Track. TREC 2012.

    MacAvaney, S., Macdonald, C. & Ounis, I. (2022). Streamlining evaluation with ir-measures. ECIR 2022.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> m = fastrisk.read_matrix(datasets.path('trec-matrices/web2012_err20.csv'), measure='ERR@20')
    >>> m
    ScoreMatrix(48 systems x 50 topics, measure='ERR@20')
    >>> m.systems[:3]
    ('run1', 'run2', 'run3')
    """
    check_missing_policy(missing)
    if is_frame(path):
        if format is not None:
            raise InputError("`format` applies to files; a DataFrame or Arrow table is read as it is")
        return as_matrix(path, system=system, topic=topic, score=score, topics=topics, measure=measure,
                         missing=missing)
    if not isinstance(path, (str, Path, list, tuple)) and not hasattr(path, "__fspath__"):
        raise InputError(f"`path` must be a file path, a list of paths, a DataFrame or an Arrow table; "
                         f"got {type(path).__name__}")
    paths = [Path(p) for p in path] if isinstance(path, (list, tuple)) else [Path(path)]
    if not paths:
        raise InputError("no input files given")
    for p in paths:
        require_file(p)
    fmt = format or _guess_format(paths[0])
    if fmt not in READ_FORMATS:
        raise InputError(f"`format` must be one of {', '.join(READ_FORMATS)}; got {fmt!r}")
    if fmt in ("trec_eval", "ir_measures"):
        triples = [_read_per_query(p, fmt, measure) for p in paths]
        measures = {m for _, m in triples}
        names = [t[0] for t, _ in triples]
        flat = [np.concatenate([np.asarray(t[i], dtype=object if i < 2 else None) for t, _ in triples])
                for i in range(4)]
        source = str(paths[0]) if len(paths) == 1 else f"{len(paths)} files"
        return _from_triples(flat, names, measure or (measures.pop() if len(measures) == 1 else None),
                             missing, source)
    if len(paths) > 1:
        matrices = [read_matrix(p, format=format, measure=measure, topics=topics, missing=missing,
                                system=system, topic=topic, score=score) for p in paths]
        return _combine(matrices, missing)
    p = paths[0]
    if fmt in ("parquet", "ipc"):
        table = _read_arrow_file(p, fmt)
        matrix = _as_matrix(ScoreMatrix.from_arrow, p, table, system=system, topic=topic, score=score,
                            topics=topics, measure=measure, missing=missing)
        del table
        # decoding and checking freed their buffers, but Arrow's allocator (mimalloc) keeps the
        # pages (about the matrix's size again) for the rest of the process unless handed back
        pa.default_memory_pool().release_unused()
        return matrix
    skip = len(_comment_header(p))  # the `# key: value` lines --header writes (as read_table skips them)
    if fmt in ("csv", "csv-long"):
        streamed = _stream_long_csv(p, system, topic, score, measure, missing, skip)
        if streamed is not None:
            return streamed
    table = _read_csv(p, system, topic, skip_rows=skip)
    cols = long_columns(table.column_names, system, topic, score)
    if fmt == "csv-long" or (fmt == "csv" and cols is not None):
        if cols is None:
            raise InputError(f"{p}: a long-form CSV needs the columns {system}, {topic}, {score} (or run/qid/value); "
                             f"the header has {', '.join(table.column_names)}")
        table, measure = pick_measure(table, measure, str(p))
        return _long_csv(p, table, *cols, measure, missing)
    return ScoreMatrix.from_wide(table, topic=topic, topics=topics, measure=measure, missing=missing,
                                 source=str(p))


def read_table(path, *, system: str = "system") -> pa.Table:
    """Read a one-row-per-system table (CSV/TSV, Parquet or Arrow IPC) as an Arrow table.

    Such tables are what ``fastrisk risk --format csv`` and the other commands write: a system
    column (``system=``, read as strings) and one column per statistic. The ``# key: value``
    comment lines ``--header`` writes at the top of a CSV are skipped and returned as the
    table's schema metadata (as Parquet output carries them). Raises
    `InputError` naming the file when it is missing, unreadable, not a table (trec_eval
    or ir_measures output) or has no column ``system``.

    Parameters
    ----------
    path : str or os.PathLike
        A CSV/TSV, Parquet or Arrow IPC file.
    system : str
        The name of the system column (read as strings).

    Returns
    -------
    pyarrow.Table
        The rows as written; a CSV's comment header as schema metadata (key -> value).

    References
    ----------
    Apache Arrow (2016-). Columnar format specification, https://arrow.apache.org/docs/format/Columnar.html.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'risk.csv')
    >>> fastrisk.data.io.write_csv(fastrisk.risk(matrix, baseline, alpha=5).to_arrow(), path)
    >>> table = fastrisk.read_table(path)
    >>> table.num_rows, table.column_names[:3]
    (48, ['alpha', 'loss_weight', 'system'])
    """
    p = Path(path)
    require_file(p)
    header = _comment_header(p) if _SUFFIX_FORMATS.get(p.suffix.lower()) not in ("parquet", "ipc") else []
    fmt = "csv" if header else _guess_format(p)
    if fmt in ("parquet", "ipc"):
        table = _read_arrow_file(p, fmt)
    elif fmt == "csv":
        table = _read_csv(p, system, "topic", skip_rows=len(header))
        if header:
            meta = {k.encode(): v.encode() for k, v in parse_comment_header(header).items()}
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
    else:
        raise InputError(f"{p}: a one-row-per-system table must be CSV, Parquet or Arrow IPC, not {fmt} output")
    if system not in table.column_names:
        raise InputError(f"{p}: no system column {system!r}; the columns are {', '.join(table.column_names)}")
    return table


def write_matrix(matrix: ScoreMatrix, path, *, format: str | None = None) -> None:
    """Write ``matrix``: ``parquet``/``ipc`` (native layout, round-trips exactly), ``csv``
    (long form ``system,topic,score``) or ``csv-wide`` (topics as rows).

    Parameters
    ----------
    matrix : ScoreMatrix
        The matrix to write.
    path : str or os.PathLike
        The file (written atomically).
    format : {"parquet", "ipc", "csv", "csv-wide"}, optional
        Default: from the suffix (``.parquet``, ``.arrow``/``.ipc``), else ``csv``.

    References
    ----------
    Apache Arrow (2016-). Columnar format specification, https://arrow.apache.org/docs/format/Columnar.html.

    Examples
    --------
    >>> import fastrisk
    >>> from fastrisk.data import datasets
    >>> matrix, baseline = datasets.trec2012_web()
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'web2012.parquet')
    >>> fastrisk.write_matrix(matrix, path)
    >>> fastrisk.read_matrix(path) == matrix
    True
    """
    path = Path(path)
    fmt = format or {"parquet": "parquet", "ipc": "ipc"}.get(_SUFFIX_FORMATS.get(path.suffix.lower(), ""), "csv")
    if fmt not in WRITE_FORMATS:
        raise InputError(f"`format` must be one of {', '.join(WRITE_FORMATS)}; got {fmt!r}")
    if fmt == "parquet":
        _atomic.write_parquet(matrix.to_arrow(), path)
    elif fmt == "ipc":
        with _atomic.atomic_open(path, "wb") as fh:
            feather.write_feather(matrix.to_arrow(), fh, compression="uncompressed")
    else:
        if fmt == "csv":
            table = matrix.to_long()
        else:
            cols = {"topic": pa.array(matrix.topics, pa.string())}
            cols.update({s: pa.array(matrix.values[k]) for k, s in enumerate(matrix.systems)})
            table = pa.table(cols)
        write_csv(table, path)


def write_csv(table: pa.Table, sink) -> None:
    """CSV with quotes only where a value needs them (plain ``a,b`` headers and labels)."""

    data = None
    for style in ("none", "needed"):  # "none" fails on a value with a comma, quote or newline
        try:
            buf = pa.BufferOutputStream()
            pacsv.write_csv(table, buf, pacsv.WriteOptions(quoting_style=style, quoting_header=style))
            data = buf.getvalue().to_pybytes()
            break
        except pa.ArrowInvalid:
            continue
    if hasattr(sink, "write"):
        sink.write(data)
    else:
        _atomic.write_bytes(sink, data)


# ---------------------------------------------------------------------- helpers
def _guess_format(path: Path) -> str:
    suffixes = _format_suffixes(path)
    if suffixes and suffixes[-1] in _SUFFIX_FORMATS:
        return _SUFFIX_FORMATS[suffixes[-1]]
    first = [line for line in _first_lines(path, 50) if not line.startswith("#")]  # a --header comment
    if not first:
        raise InputError(f"{path}: the file is empty")
    if first[0].lstrip().startswith("{"):
        return "ir_measures"
    rows = [line.split() for line in first]
    _refuse_runs_and_qrels(path, rows)
    per_query = _per_query_kind(rows)
    if per_query is not None:
        return per_query
    if "," in first[0] or "\t" in first[0] or (suffixes and suffixes[-1] in _SNIFFED):
        return "csv"
    raise InputError(f"{path}: cannot tell the format from its first lines; pass --input-format (format= in the "
                     f"API), one of {', '.join(READ_FORMATS)}")


def require_file(p: Path) -> None:
    """Raise an `InputError` that says what ``p`` is when it is not a regular file: a
    directory (empty, or of TREC runs, which need qrels), a FIFO or other special file, or
    nothing at all."""
    if p.is_file():
        return
    if p.is_dir():
        if not any(not q.name.startswith(".") for q in p.iterdir()):
            raise InputError(f"directory {str(p)!r} holds no files")
        raise InputError(f"{p} is a directory, not a score matrix file: if it holds TREC runs, runs need --qrels "
                         "(the relevance judgments) and --measure to be scored (qrels=, measure= in the API)")
    raise InputError(not_a_regular_file(p) or f"{p}: no such file")


def _refuse_runs_and_qrels(path: Path, rows: list[list[str]]) -> None:
    """A TREC run or a qrels file given where a score matrix belongs: say what it is and how to
    pass it (the generic messages listed document ids as measure names)."""
    if len(rows) < 1 or any(len(r) != len(rows[0]) for r in rows):
        return
    if len(rows[0]) == 6 and all(r[1] in ("Q0", "0") and r[3].isdigit() and _is_number(r[4]) for r in rows):
        raise InputError(f"{path} looks like a TREC run (topic Q0 docid rank score tag), not a score matrix: runs "
                         "are scored against qrels, pass --qrels FILE and --measure (e.g. AP, nDCG@20); a score "
                         "matrix is CSV, Parquet or trec_eval output (--input-format)")
    if len(rows[0]) == 4 and all(r[1] in ("0", "Q0") and r[3].lstrip("-").isdigit() for r in rows):
        raise InputError(f"{path} looks like qrels (topic 0 docid grade), not a score matrix: pass it as --qrels "
                         f"with the runs, e.g. fastrisk evaluate RUNS --qrels {path} --measure AP")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _quoted(text: str) -> bool:
    """A quoted string value, as trec_eval prints ``relstring`` (``'0010000110'``)."""
    return len(text) >= 2 and text[0] == text[-1] == "'"


def _per_query_kind(rows: list[list[str]]) -> str | None:
    """``"trec_eval"`` (measure qid value), ``"ir_measures"`` (qid measure value, or run qid
    measure value) or None (not per-query output: e.g. a CSV header, or other field counts)."""
    if not rows or any(len(r) not in (3, 4) for r in rows) or len({len(r) for r in rows}) > 1:
        return None
    if not all(_is_number(r[-1]) or r[0] == "runid" or _quoted(r[-1]) for r in rows):
        return None  # a header line (or text values): a CSV
    if len(rows[0]) == 4:
        return "ir_measures"  # run qid measure value
    meas0, meas1 = [r[0] for r in rows], [r[1] for r in rows]
    # trec_eval: 'runid' line, 'all' in the qid column; ir_measures: 'all' in its qid column
    if "runid" in meas0 or SUMMARY_QID in meas1:
        return "trec_eval"
    if SUMMARY_QID in meas0:
        return "ir_measures"
    if any("@" in m or "(" in m for m in meas1):
        return "ir_measures"  # P@10, nDCG@10, RR(rel=2)
    if any("@" in m or "(" in m for m in meas0):
        return "trec_eval"
    numeric0, numeric1 = all(map(_is_number, meas0)), all(map(_is_number, meas1))
    if numeric1 and not numeric0:
        return "trec_eval"  # numeric query ids in the second column
    if numeric0 and not numeric1:
        return "ir_measures"
    known0 = sum(m.split("_")[0] in _TREC_EVAL_MEASURES for m in meas0)
    known1 = sum(m.split("_")[0] in _TREC_EVAL_MEASURES for m in meas1)
    if known0 != known1:
        return "trec_eval" if known0 > known1 else "ir_measures"
    # many topics per measure: the column with fewer distinct values holds the measures
    return "trec_eval" if len(set(meas0)) < len(set(meas1)) else "ir_measures"


#: trec_eval measure names (before any ``_cutoff`` suffix), to tell its columns apart.
_TREC_EVAL_MEASURES = {
    "runid", "num", "map", "gm", "Rprec", "bpref", "recip", "iprec", "P", "recall", "infAP", "Rndcg",
    "ndcg", "set", "success", "utility", "11pt", "binG", "G", "relstring", "err",
}


def _arrow_source(path: Path, stack: contextlib.ExitStack):
    """What Arrow's CSV reader is given: the path of a plain file (read in parallel), else a
    decompressing stream closed with ``stack`` (Arrow guesses compression from lowercase
    suffixes only and has no xz)."""
    if compression(path) is None and not path.name.lower().endswith(COMPRESSED_SUFFIXES):
        return path
    return stack.enter_context(contextlib.closing(open_binary(path)))


def _format_suffixes(path: Path) -> list[str]:
    """The lowercase suffixes of ``path`` without compression ones."""
    return [s.lower() for s in path.suffixes if s.lower() not in COMPRESSED_SUFFIXES]


def _text_lines(path: Path):
    """(line number, line) of a text file; decoding and decompression errors name the file."""

    lineno = 0
    try:
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                yield lineno, line
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason}, after line {lineno}); is it a binary file, "
                         "or text in another encoding (save it as UTF-8)?") from None
    except (EOFError, zlib.error, lzma.LZMAError, OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: cannot be read or decompressed ({_arrow_reason(exc)})") from None


def _first_lines(path: Path, n: int) -> list[str]:
    out = []
    for _, line in _text_lines(path):
        if line.strip():
            out.append(line.rstrip("\n"))
        if len(out) >= n:
            break
    return out


#: Values (scores) per batch when a native Parquet matrix is read in pieces.
NATIVE_BATCH_VALUES = 1 << 20


def _read_native_parquet(path: Path) -> pa.Table | None:
    """A matrix Parquet file in fastrisk's native layout (``system``, ``scores`` as
    ``fixed_size_list<double>[c]``, topics in the metadata), read a few systems at a time into
    one preallocated array: the peak is the matrix plus one batch, where reading the column
    whole (its nested levels and pages decoded at once) takes about four times the matrix.
    None for any other file (or one with nulls), which is then read whole."""
    import pyarrow.parquet as pq  # ~0.15 s to import, needed for Parquet only

    f = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
    schema = f.schema_arrow
    meta = schema.metadata or {}
    if _META_TOPICS not in meta or set(schema.names) != {"system", "scores"}:
        return None
    kind = schema.field("scores").type
    if not (pa.types.is_fixed_size_list(kind) and pa.types.is_float64(kind.value_type)):
        return None
    try:
        c = len(json.loads(meta[_META_TOPICS].decode()))
    except (ValueError, UnicodeDecodeError, TypeError):
        return None
    S = f.metadata.num_rows
    if c != kind.list_size or c == 0 or S == 0:
        return None
    values = np.empty((S, c))
    names = []
    row = 0
    for batch in f.iter_batches(batch_size=max(1, NATIVE_BATCH_VALUES // c), columns=["system", "scores"]):
        scores = batch.column("scores")
        if scores.null_count or scores.values.null_count or row + batch.num_rows > S:
            return None
        flat = scores.values.to_numpy(zero_copy_only=False)[scores.offset * c:(scores.offset + len(scores)) * c]
        values[row:row + batch.num_rows] = flat.reshape(batch.num_rows, c)
        names.append(batch.column("system"))
        row += batch.num_rows
    if row != S:
        return None
    systems = pa.chunked_array(names, type=schema.field("system").type)
    scores = pa.FixedSizeListArray.from_arrays(pa.array(values.reshape(-1)), c)
    return pa.table({"system": systems, "scores": scores}).replace_schema_metadata(meta)


def _read_arrow_file(path: Path, fmt: str) -> pa.Table:
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq  # ~0.15 s to import, needed for Parquet only

            native = _read_native_parquet(path)
            return native if native is not None else pq.read_table(path)
        return feather.read_table(path, memory_map=True)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:
        raise InputError(f"{path}: not a readable {fmt} file ({exc})") from None


def _comment_header(path: Path) -> list[str]:
    """The leading ``#`` lines of a text file (a comment header written by ``--header``); only
    those lines are decoded (what follows is the reader's to check)."""
    out = []
    try:
        with open_binary(path) as fh:
            for raw in fh:
                if not out and raw.startswith(BOM):
                    raw = raw[3:]
                if not raw.startswith(b"#"):
                    break
                out.append(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: comment line {len(out) + 1} is not UTF-8 text ({exc.reason})") from None
    except (EOFError, zlib.error, lzma.LZMAError, OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: cannot be read or decompressed ({_arrow_reason(exc)})") from None
    return out


def _delimiter(path: Path, skip_rows: int = 0) -> str:
    suffix = (_format_suffixes(path) or [""])[-1]
    if suffix == ".csv":
        return ","
    if suffix in _SNIFFED:
        return "\t"
    return "\t" if "\t" in (_first_lines(path, skip_rows + 1) or [""])[-1] else ","


#: Bytes of CSV text per block of the streaming reader.
STREAM_BLOCK_BYTES = 16 << 20


def _stream_long_csv(path: Path, system: str, topic: str, score: str, measure, missing,
                     skip_rows: int = 0) -> ScoreMatrix | None:
    """`_stream_long_csv_in` with the decompressing streams it opens closed after."""
    with contextlib.ExitStack() as stack:
        return _stream_long_csv_in(stack, path, system, topic, score, measure, missing, skip_rows)


def _stream_long_csv_in(stack, path: Path, system: str, topic: str, score: str, measure, missing, skip_rows):
    """A long CSV (system, topic, score; no ``measure`` column) read block by block with Arrow's
    streaming reader, keeping only integer codes and the scores (16 bytes a row) rather than the
    text table and its Python strings. Labels, first-appearance system order, natural topic order
    and the missing policy are those of `ScoreMatrix.from_long`. Returns None (the caller
    then reads the whole table, whose errors name the line) when the file is not such a table
    or has any irregular cell: an empty or blank label, a score that is not a finite number, a
    duplicate (system, topic)."""

    delimiter = _delimiter(path, skip_rows)
    try:
        reader = pacsv.open_csv(_arrow_source(path, stack), read_options=pacsv.ReadOptions(block_size=STREAM_BLOCK_BYTES, skip_rows=skip_rows),
                                parse_options=pacsv.ParseOptions(delimiter=delimiter))
        names = reader.schema.names
    except (pa.ArrowException, OSError, EOFError, UnicodeDecodeError):
        return None
    cols = long_columns(names, system, topic, score)
    if cols is None or "measure" in names:
        reader.close()
        return None
    reader.close()
    types = {cols[0]: pa.string(), cols[1]: pa.string(), cols[2]: pa.float64()}
    codes = ({}, {})  # label -> code, per system and topic, in order of first appearance
    parts = []
    try:
        reader = pacsv.open_csv(_arrow_source(path, stack), read_options=pacsv.ReadOptions(block_size=STREAM_BLOCK_BYTES, skip_rows=skip_rows),
                                parse_options=pacsv.ParseOptions(delimiter=delimiter),
                                convert_options=pacsv.ConvertOptions(include_columns=list(cols), column_types=types,
                                                                     null_values=[""], strings_can_be_null=True))
        for batch in reader:
            if any(batch.column(j).null_count for j in range(3)):
                return None
            found = []
            for j in range(2):
                encoded = pc.dictionary_encode(batch.column(j))
                lookup = np.empty(len(encoded.dictionary), np.int32)
                for k, raw in enumerate(encoded.dictionary.to_pylist()):
                    text = label(raw)
                    if not text:
                        return None
                    lookup[k] = codes[j].setdefault(text, len(codes[j]))
                found.append(lookup[encoded.indices.to_numpy(zero_copy_only=False)])
            values = batch.column(2).to_numpy(zero_copy_only=False)
            if not np.isfinite(values).all():
                return None
            parts.append((found[0], found[1], np.array(values, dtype=np.float64)))
    except (pa.ArrowException, OSError, EOFError, UnicodeDecodeError):
        return None
    if not parts:
        return None
    S, c = len(codes[0]), len(codes[1])
    top_order = sorted(codes[1], key=natural_key)
    position = np.empty(c, np.int64)  # code of first appearance -> column in natural order
    position[[codes[1][t] for t in top_order]] = np.arange(c)
    matrix = np.zeros((S, c))
    present = np.zeros((S, c), dtype=bool)
    n = 0
    for si, ti, values in parts:
        cols_ = position[ti]
        matrix[si, cols_] = values
        present[si, cols_] = True
        n += len(values)
    del parts
    if int(np.count_nonzero(present)) != n:  # a duplicate (system, topic): the full reader names its lines
        return None
    matrix, sys_order, top_order = _apply_missing(matrix, present, list(codes[0]), top_order, missing, str(path))
    return ScoreMatrix(matrix, sys_order, top_order, measure)


def _read_csv(path: Path, system: str, topic: str, *, skip_rows: int = 0) -> pa.Table:
    delimiter = _delimiter(path, skip_rows)
    stack = contextlib.ExitStack()
    try:
        table = pacsv.read_csv(
            _arrow_source(path, stack),
            read_options=pacsv.ReadOptions(skip_rows=skip_rows),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=pacsv.ConvertOptions(
                null_values=[""], strings_can_be_null=True,
                column_types={name: pa.string() for name in (system, topic, *ALIASES["system"],
                                                              *ALIASES["topic"], "measure")},
            ),
        )
    except pa.ArrowInvalid as exc:
        raise InputError(f"{path}: malformed CSV ({_arrow_reason(exc)})") from None
    except (pa.ArrowException, OSError, EOFError, lzma.LZMAError) as exc:
        raise InputError(f"{path}: cannot be read as CSV ({_arrow_reason(exc)})") from None
    finally:
        stack.close()
    try:
        table.column_names  # Arrow checks cell text but decodes the header names lazily
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: the header is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    binary = [f.name for f in table.schema if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
    if binary:  # Arrow reads a column with bytes that are not UTF-8 as binary
        raise InputError(f"{path}: column {binary[0]!r} is not UTF-8 text; is it a binary file, or text in another "
                         "encoding (save it as UTF-8)?")
    return table


def _arrow_reason(exc: Exception) -> str:
    """An error's text on one line, control and undecodable characters escaped (never binary)."""
    text = str(exc).replace("\n", " ").strip()
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def _as_matrix(ctor, path, table, **kwargs) -> ScoreMatrix:
    try:
        return ctor(table, **kwargs)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def _long_csv(path, table, system, topic, score, measure, missing) -> ScoreMatrix:
    vals, absent = _float_column(table, score, source=str(path), check=False)
    if absent.any():
        row = int(np.flatnonzero(absent)[0])
        raise InputError(f"{path}, line {row + 2}: empty score")
    for col in (system, topic):
        if table.column(col).null_count:
            row = int(np.flatnonzero(table.column(col).is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(f"{path}, line {row + 2}: empty {col}")
    lines = np.arange(2, table.num_rows + 2)
    return ScoreMatrix.from_long(table.column(system).to_pylist(), table.column(topic).to_pylist(), vals,
                                 measure=measure, missing=missing, source=str(path), lines=lines)


def _read_per_query(path: Path, fmt: str, measure: str | None):
    """Rows of one trec_eval -q / ir_measures file: ((systems, topics, scores, lines), measure)."""
    rows = []  # (run, qid, measure, value text, line number)
    run_name = None
    for lineno, line in _text_lines(path):
        if not line.strip():
            continue
        if fmt == "ir_measures" and line.lstrip().startswith("{"):
            try:
                rec = json.loads(line)
                row = (rec.get("run_id", rec.get("system")), str(rec["query_id"]), str(rec["measure"]),
                       rec["value"], lineno)
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise InputError(f"{path}, line {lineno}: not an ir_measures JSON record ({exc})") from None
            if row[1] != SUMMARY_QID:
                rows.append(row)
            continue
        parts = line.split()
        if fmt == "trec_eval":
            if len(parts) != 3:
                raise InputError(f"{path}, line {lineno}: expected 'measure qid value', got {line.strip()!r}")
            m, qid, value = parts
            if m == "runid":
                run_name = value
                continue
            if qid != SUMMARY_QID:
                rows.append((None, qid, m, value, lineno))
        else:
            if len(parts) == 3:
                row = (None, parts[0], parts[1], parts[2], lineno)
            elif len(parts) == 4:
                row = (parts[0], parts[1], parts[2], parts[3], lineno)
            else:
                raise InputError(f"{path}, line {lineno}: expected 'query_id measure value', got {line.strip()!r}")
            if row[1] != SUMMARY_QID:
                rows.append(row)
    if not rows:
        raise InputError(f"{path}: no per-query scores found")
    available = list(dict.fromkeys(r[2] for r in rows))
    # measures whose values are not numbers (trec_eval's relstring: '0010000110') are skipped
    # unless asked for, and then refused by name
    text = {}
    for r in rows:
        if r[2] not in text and not _numeric_value(r[3]):
            text[r[2]] = r
    numeric = [m for m in available if m not in text]
    skipped = f"; skipped as not numeric: {', '.join(text)}" if text else ""
    if measure is None:
        if len(numeric) != 1:
            raise InputError(f"{path} has {'several' if numeric else 'no numeric'} measures "
                             f"({', '.join(numeric[:60])}{' ...' if len(numeric) > 60 else ''}{skipped}); "
                             "pick one with `measure` (--measure)")
        measure = numeric[0]
    elif measure in text:
        r = text[measure]
        raise InputError(f"{path}, line {r[4]}: measure {measure!r} is not a number per topic (value {r[3]!r}); "
                         f"pick a numeric measure: {', '.join(numeric[:60])}{' ...' if len(numeric) > 60 else ''}")
    elif measure not in available:
        raise InputError(f"{path}: no measure {measure!r}; it has {', '.join(numeric[:60])}"
                         f"{' ...' if len(numeric) > 60 else ''}{skipped}")
    default = run_name or path.name.split(".")[0]
    picked = [r for r in rows if r[2] == measure]
    systems = [str(r[0]) if r[0] is not None else default for r in picked]
    values = [float(r[3]) for r in picked]
    return (systems, [r[1] for r in picked], values, [r[4] for r in picked]), measure


def _numeric_value(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _from_triples(flat, names: Sequence[str], measure, missing, source) -> ScoreMatrix:
    systems, topics, values, lines = flat
    return ScoreMatrix.from_long(systems, topics, values.astype(np.float64), measure=measure,
                                 missing=missing, source=source, lines=None if len(names) > 1 else lines)


def _combine(matrices: list[ScoreMatrix], missing: str) -> ScoreMatrix:
    systems, topics, scores = [], [], []
    for m in matrices:
        long = m.to_long()
        systems += long.column("system").to_pylist()
        topics += long.column("topic").to_pylist()
        scores.append(long.column("score").to_numpy())
    return ScoreMatrix.from_long(systems, topics, np.concatenate(scores), measure=matrices[0].measure,
                                 missing=missing)
