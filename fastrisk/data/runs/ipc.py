"""Binary RunSet/Qrels files (Arrow IPC, memory-mapped on load).

A saved RunSet is one IPC file holding a single row whose columns are the arrays of the set
(``docs`` flattened, ``lengths``, ``doc_offsets``, ``best_rank`` and the concatenated
document vocabulary); shapes and labels live in the schema metadata. Loading maps the file
and views the arrays without copying them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import ipc

from fastrisk.errors import InputError

_KIND = b"fastrisk.kind"
_META = b"fastrisk.meta"
_MAGIC = b"ARROW1"
VERSION = 1


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


def _atomic_write(table: pa.Table, path) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with ipc.new_file(str(tmp), table.schema) as writer:
            writer.write_table(table)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


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
    _atomic_write(table.replace_schema_metadata({_KIND: b"RunSet", _META: json.dumps(meta).encode()}), path)


def _open(path, kind: bytes):
    try:
        table = ipc.open_file(pa.memory_map(str(path), "r")).read_all()
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a readable fastrisk {kind.decode()} file ({exc})") from None
    md = table.schema.metadata or {}
    if md.get(_KIND) != kind:
        raise InputError(f"{path}: an Arrow file, but not a saved fastrisk {kind.decode()}")
    return table, json.loads(md[_META])


def _values(table, name) -> np.ndarray:
    return table.column(name).chunk(0).values.to_numpy(zero_copy_only=True)


def runs_fields(path) -> tuple:
    """The `RunSet` constructor arguments of a saved file."""
    path = Path(path[0] if isinstance(path, (list, tuple)) else path)
    table, meta = _open(path, b"RunSet")
    S, T, D = meta["shape"]
    offsets = _values(table, "doc_offsets")
    vocab = None
    if meta["has_vocab"]:
        flat = table.column("vocab").chunk(0).values
        if flat.nbytes < 2**31 - 1:
            flat = flat.cast(pa.string())  # one copy; qrels alignment hashes against string arrays
        vocab = tuple(flat.slice(int(offsets[t]), int(offsets[t + 1] - offsets[t])) for t in range(T))
    return (tuple(meta["systems"]), tuple(meta["topics"]), _values(table, "docs").reshape(S, T, D),
            _values(table, "lengths").reshape(S, T), offsets, _values(table, "best_rank"), vocab,
            tuple(meta["sources"]))


def save_qrels(qrels, path) -> None:
    table = pa.table({"docid": qrels.docids.cast(pa.large_string()), "grade": pa.array(qrels.raw_grades)})
    meta = {"version": VERSION, "topics": list(qrels.topics), "offsets": qrels.topic_offsets.tolist(),
            "source": qrels.source}
    _atomic_write(table.replace_schema_metadata({_KIND: b"Qrels", _META: json.dumps(meta).encode()}), path)


def qrels_fields(path) -> tuple:
    """The `Qrels` constructor arguments of a saved file."""
    table, meta = _open(path, b"Qrels")
    raw = table.column("grade").to_numpy()
    return (tuple(meta["topics"]), np.asarray(meta["offsets"], np.int64), table.column("docid").combine_chunks(),
            np.maximum(raw, 0).astype(np.int8), raw, meta["source"] or str(path))
