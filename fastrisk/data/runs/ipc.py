"""Binary RunSet/Qrels files (Arrow IPC, memory-mapped on load).

A saved RunSet is one IPC file holding a single row whose columns are the arrays of the set
(``docs`` flattened, ``lengths``, ``doc_offsets``, ``best_rank`` and the concatenated
document vocabulary); shapes and labels live in the schema metadata. Loading maps the file
and views the arrays without copying them.

Every file written since format version 2 carries a SHA-256 of its metadata and arrays in the
schema metadata (``fastrisk.sha256``), verified on load; and every load checks the shapes and
bounds of each index array (document ids within their topic, offsets non-decreasing and
consistent with the vocabulary, qrels offsets covering the rows) before any kernel sees them.
A file that fails either check is an `InputError` naming it and what is wrong: no file can
make a kernel read out of bounds or change a number silently.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import ipc

from fastrisk._runtime.atomic import atomic_open
from fastrisk.errors import InputError

_KIND = b"fastrisk.kind"
_META = b"fastrisk.meta"
_SUM = b"fastrisk.sha256"
_MAGIC = b"ARROW1"
#: 2: the SHA-256 of the payload in the metadata (version-1 files load with the bounds checks only).
VERSION = 2
_RUN_COLUMNS = ("docs", "lengths", "doc_offsets", "best_rank")


def is_saved(obj) -> bool:
    """True if ``obj`` is one path to an Arrow IPC file."""
    if isinstance(obj, (list, tuple)) and len(obj) == 1:
        obj = obj[0]
    if not isinstance(obj, (str, os.PathLike)):
        return False
    p = Path(obj)
    if not p.is_file():
        return False
    with open(p, "rb") as fh:
        return fh.read(6) == _MAGIC


def _string_parts(arr: pa.Array) -> tuple:
    """The logical bytes of a (large_)string array: its offsets from 0 and its characters."""
    if len(arr) == 0:
        return b"", b""
    width = 8 if pa.types.is_large_string(arr.type) else 4
    offsets = np.frombuffer(arr.buffers()[1], np.int64 if width == 8 else np.int32)[arr.offset:arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    lo, hi = int(offsets[0]), int(offsets[-1])
    chars = memoryview(data)[lo:hi] if data is not None else b""
    return (offsets.astype(np.int64) - lo).tobytes(), chars


def _digest(meta_json: bytes, numeric: list, strings: list) -> str:
    """SHA-256 of the metadata JSON, the numeric arrays (dtype and bytes) and the string
    arrays (offsets and characters): the file's content, whatever its Arrow layout."""
    h = hashlib.sha256()
    h.update(meta_json)
    for a in numeric:
        a = np.ascontiguousarray(a)
        h.update(f"\0{a.dtype.str}:{a.size}\0".encode())
        h.update(a.data)
    for arr in strings:
        offs, chars = _string_parts(arr)
        h.update(f"\0str:{len(arr)}\0".encode())
        h.update(offs)
        h.update(chars)
    return h.hexdigest()


def _atomic_write(table: pa.Table, path) -> None:
    """Write ``table`` through the one atomic writer (`fastrisk._runtime.atomic`)."""
    with atomic_open(path, "wb", follow_symlinks=False) as fh, ipc.new_file(fh, table.schema) as writer:
        writer.write_table(table)


def _with_sum(table: pa.Table, kind: bytes, meta: dict, numeric: list, strings: list) -> pa.Table:
    meta_json = json.dumps(meta, sort_keys=True).encode()
    return table.replace_schema_metadata({_KIND: kind, _META: meta_json,
                                          _SUM: _digest(meta_json, numeric, strings).encode()})


def _one(values: np.ndarray) -> pa.Array:
    arr = pa.array(np.ascontiguousarray(values).reshape(-1))
    return pa.LargeListArray.from_arrays(pa.array([0, len(arr)], pa.int64()), arr)


def save_runs(runs, path) -> None:
    voc = runs.vocab
    if voc is None:
        vocab = pa.array([], pa.large_string())
    else:
        vocab = pa.concat_arrays([v.cast(pa.large_string()) for v in voc]) if voc else pa.array([], pa.large_string())
    table = pa.table({
        "docs": _one(runs.docs), "lengths": _one(runs.lengths), "doc_offsets": _one(runs.doc_offsets),
        "best_rank": _one(runs.best_rank),
        "vocab": pa.LargeListArray.from_arrays(pa.array([0, len(vocab)], pa.int64()), vocab),
    })
    meta = {"version": VERSION, "shape": list(runs.docs.shape), "systems": list(runs.systems),
            "topics": list(runs.topics), "sources": list(runs.sources), "has_vocab": voc is not None}
    numeric = [table.column(c).chunk(0).values.to_numpy() for c in _RUN_COLUMNS]
    _atomic_write(_with_sum(table, b"RunSet", meta, numeric, [vocab]), path)


def _bad(path, kind: bytes, what: str) -> InputError:
    return InputError(f"{path}: damaged saved fastrisk {kind.decode()} ({what}); save it again from its source")


def _open(path, kind: bytes):
    try:
        table = ipc.open_file(pa.memory_map(str(path), "r")).read_all()
        table.validate(full=False)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable fastrisk {kind.decode()} file ({exc})") from None
    md = table.schema.metadata or {}
    if md.get(_KIND) != kind:
        raise InputError(f"{path}: an Arrow file, but not a saved fastrisk {kind.decode()}")
    try:
        meta = json.loads(md[_META])
    except (KeyError, ValueError) as exc:
        raise _bad(path, kind, f"unreadable metadata: {exc}") from None
    if not isinstance(meta, dict) or meta.get("version") not in (1, VERSION):
        raise _bad(path, kind, f"unknown format version {meta.get('version') if isinstance(meta, dict) else meta!r}")
    if meta["version"] >= 2 and _SUM not in md:
        raise _bad(path, kind, "no checksum")
    return table, meta, md


def _check_sum(path, kind: bytes, md: dict, meta: dict, numeric: list, strings: list) -> None:
    if meta["version"] < 2:
        return  # written before checksums: the bounds checks still apply
    try:
        digest = _digest(md[_META], numeric, strings)
    except (ValueError, IndexError, pa.ArrowException) as exc:  # e.g. a string column's offsets buffer cut
        raise _bad(path, kind, f"its string columns cannot be read: {exc}") from None
    if digest.encode() != md[_SUM]:
        raise _bad(path, kind, "its SHA-256 does not match its content: the file was changed after it was saved")


def _column(table, name, path, kind, dtype) -> np.ndarray:
    try:
        col = table.column(name)
        if col.num_chunks != 1 or len(col) != 1:
            raise ValueError("not one row")
        values = col.chunk(0).values
        out = values if dtype is None else values.to_numpy(zero_copy_only=True)
    except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
        raise _bad(path, kind, f"column {name!r}: {exc}") from None
    if dtype is not None and out.dtype != dtype:
        raise _bad(path, kind, f"column {name!r} is {out.dtype}, not {np.dtype(dtype)}")
    return out


def _names(meta, key, n, path, kind) -> tuple:
    names = meta.get(key)
    if not isinstance(names, list) or not all(isinstance(x, str) for x in names) or (n is not None and len(names) != n):
        raise _bad(path, kind, f"{key!r} is not a list of {n if n is not None else ''} names".replace("  ", " "))
    return tuple(names)


def check_runs(path, S, T, D, docs, lengths, offsets, best_rank, n_vocab) -> None:
    """Refuse (`InputError` naming ``path``) index arrays a kernel could read out of bounds
    with: ``docs[s, t, :lengths[s, t]]`` in ``0 .. n_docs[t] - 1`` and -1 after,
    ``lengths`` in ``0 .. D``, ``doc_offsets`` from 0, non-decreasing, ending at the number
    of documents (``best_rank``'s and the vocabulary's length), ``best_rank`` in ``0 .. D - 1``."""
    kind = b"RunSet"
    if docs.size != S * T * D or lengths.size != S * T or offsets.size != T + 1:
        raise _bad(path, kind, f"arrays of {docs.size}, {lengths.size} and {offsets.size} values do not fit "
                               f"shape {(S, T, D)}")
    if offsets[0] != 0 or (np.diff(offsets) < 0).any():
        raise _bad(path, kind, "doc_offsets do not start at 0 and never decrease")
    n_total = int(offsets[-1])
    if best_rank.size != n_total or (n_vocab is not None and n_vocab != n_total):
        raise _bad(path, kind, f"doc_offsets end at {n_total}, but there are {best_rank.size} best ranks"
                               + ("" if n_vocab is None else f" and {n_vocab} document names"))
    if best_rank.size and (best_rank.min() < 0 or best_rank.max() >= max(D, 1)):
        raise _bad(path, kind, f"a best rank outside 0..{D - 1}")
    lengths = lengths.reshape(S, T)
    if lengths.size and (lengths.min() < 0 or lengths.max() > D):
        raise _bad(path, kind, f"a ranking length outside 0..{D}")
    n_docs = np.diff(offsets)
    cols = np.arange(D)
    docs = docs.reshape(S, T, D)
    for s in range(S):  # one system at a time: a (T, D) mask, not (S, T, D)
        inside = cols[None, :] < lengths[s][:, None]
        block = docs[s]
        if (np.where(inside, block, 0) < 0).any() or (np.where(inside, block, -1) >= n_docs[:, None]).any():
            raise _bad(path, kind, "a document id outside its topic's documents")
        if (block[~inside] != -1).any():
            raise _bad(path, kind, "a document id past the end of a ranking")


def runs_fields(path) -> tuple:
    """The `RunSet` constructor arguments of a saved file, checked (`check_runs`, and the
    checksum of a version-2 file)."""
    path = Path(path[0] if isinstance(path, (list, tuple)) else path)
    kind = b"RunSet"
    table, meta, md = _open(path, kind)
    try:
        S, T, D = (int(x) for x in meta["shape"])
        has_vocab = bool(meta["has_vocab"])
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad(path, kind, f"metadata without a shape: {exc}") from None
    if min(S, T, D) < 0:
        raise _bad(path, kind, f"negative shape {(S, T, D)}")
    systems, topics = _names(meta, "systems", S, path, kind), _names(meta, "topics", T, path, kind)
    sources = _names(meta, "sources", None, path, kind)
    docs, lengths = _column(table, "docs", path, kind, np.int32), _column(table, "lengths", path, kind, np.int32)
    offsets = _column(table, "doc_offsets", path, kind, np.int64)
    best_rank = _column(table, "best_rank", path, kind, np.int32)
    flat = _column(table, "vocab", path, kind, None)
    if not pa.types.is_large_string(flat.type) or flat.null_count:
        raise _bad(path, kind, "the vocabulary is not a list of strings")
    _check_sum(path, kind, md, meta, [docs, lengths, offsets, best_rank], [flat])
    if len(set(systems)) != S or len(set(topics)) != T:
        raise _bad(path, kind, "repeated system or topic names")
    check_runs(path, S, T, D, docs, lengths, offsets, best_rank, len(flat) if has_vocab else None)
    vocab = None
    if has_vocab:
        if flat.nbytes < 2**31 - 1:
            flat = flat.cast(pa.string())  # one copy; qrels alignment hashes against string arrays
        vocab = tuple(flat.slice(int(offsets[t]), int(offsets[t + 1] - offsets[t])) for t in range(T))
    return (systems, topics, docs.reshape(S, T, D), lengths.reshape(S, T), offsets, best_rank, vocab, sources)


def save_qrels(qrels, path) -> None:
    table = pa.table({"docid": qrels.docids.cast(pa.large_string()), "grade": pa.array(qrels.raw_grades)})
    meta = {"version": VERSION, "topics": list(qrels.topics), "offsets": qrels.topic_offsets.tolist(),
            "source": qrels.source}
    grades = table.column("grade").combine_chunks().to_numpy()
    _atomic_write(_with_sum(table, b"Qrels", meta, [grades], [table.column("docid").combine_chunks()]), path)


def qrels_fields(path) -> tuple:
    """The `Qrels` constructor arguments of a saved file, checked (offsets covering the rows,
    grades in -128..127, and the checksum of a version-2 file)."""
    kind = b"Qrels"
    table, meta, md = _open(path, kind)
    try:
        docids = table.column("docid").combine_chunks()
        raw = table.column("grade").combine_chunks().to_numpy(zero_copy_only=False)
    except (KeyError, pa.ArrowException) as exc:
        raise _bad(path, kind, f"missing column: {exc}") from None
    if not (pa.types.is_large_string(docids.type) or pa.types.is_string(docids.type)) or docids.null_count \
            or raw.dtype.kind != "i":
        raise _bad(path, kind, "columns of the wrong type")
    topics = _names(meta, "topics", None, path, kind)
    try:
        offsets = np.asarray(meta["offsets"], np.int64)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise _bad(path, kind, f"unreadable topic offsets: {exc}") from None
    source = meta.get("source")
    if source is not None and not isinstance(source, str):
        raise _bad(path, kind, "a source that is not a string")
    _check_sum(path, kind, md, meta, [raw], [docids])
    if offsets.shape != (len(topics) + 1,) or offsets[0] != 0 or (np.diff(offsets) < 0).any() \
            or offsets[-1] != len(raw) or len(docids) != len(raw) or len(set(topics)) != len(topics):
        raise _bad(path, kind, "topic offsets that do not cover its rows")
    if raw.size and (raw.min() < -128 or raw.max() > 127):
        raise _bad(path, kind, "a grade outside -128..127")
    return (topics, offsets, docids, np.maximum(raw, 0).astype(np.int8), raw, source or str(path))
